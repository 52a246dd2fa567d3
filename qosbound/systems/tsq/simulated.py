"""TSQ by simulation: independent replications of validation/tsq_sim.py, Student-t intervals, and a trace."""

from __future__ import annotations

import math

import numpy as np

from qosbound.analytic.quality import quality
from qosbound.results import Interval, Result
from qosbound.systems.tsq.metrics import add_group, app_assumption
from qosbound.systems.tsq.schema import Scenario, SimOptions
from qosbound.validation.pi_aqm import PIParams
from qosbound.validation.stats import t_interval
from qosbound.validation.tsq_sim import Flow, SimConfig, check_budget, flow_stats, simulate, to_trace

__all__ = ["simulated", "simulate_trace"]


def _sim_flows(scn: Scenario, override: tuple[str, int] | None = None):
    flows, groups = [], []
    for name, f in scn.flows.items():
        hint = f.hint if override is None or override[0] != name else override[1]
        for i in range(f.count):
            flows.append(Flow(f"{name}{i}" if f.count > 1 else name, f.kind, f.rate, int(round(f.size)), hint, f.rtt))
            groups.append(name)
    return tuple(flows), np.asarray(groups)


def sim_group_stats(scn, out, groups, name, warmup) -> dict:
    f = scn.flows[name]
    idx = np.flatnonzero(groups == name)
    st = [flow_stats(out, int(i), warmup) for i in idx]
    sel = np.isin(out.flow, idx) & ~out.dropped & np.isfinite(out.departure) & (out.arrival >= warmup)
    delivered = np.bincount(out.flow[sel], minlength=len(out.names))[idx]
    # delays are over delivered packets: a flow that delivered nothing has no delay (NaN, not 0 s)
    delay = float(np.mean([s["delay_mean"] for s, n in zip(st, delivered) if n])) if delivered.any() else math.nan
    waits = out.departure[sel] - out.arrival[sel] - out.size[sel] * 8.0 / out.capacity
    p99 = float(np.quantile(waits, 0.99)) if waits.size else math.nan
    rate = float(np.mean([s["throughput"] for s in st]))
    drop = float(np.mean([s["drop"] for s in st]))
    dmax = float(np.max([s["delay_max"] for s, n in zip(st, delivered) if n])) if delivered.any() else math.nan
    one_way = f.one_way if f.one_way is not None else f.rtt / 2
    size_bits = (f.file_size or 1.25e6) * 8.0
    q = float(quality(f.app, one_way + (delay if delivered.any() else 0.0) + f.size * 8.0 / scn.link.rate, rate,
                      size_bits if f.app == "file" else None))  # nothing delivered: throughput quality 0
    return {"delay": delay, "rate": rate, "drop": drop, "quality": q, "delay_max": dmax, "p99": p99}


def _sim_config(scn: Scenario, flows):
    """The simulator's configuration; refuses (ScenarioError naming the duration) a run too large to record."""
    a, opts = scn.aqm, scn.methods.simulated
    cfg = SimConfig(scn.link.rate, flows, opts.duration, PIParams(a.a, a.b, a.sampling, a.q_ref, a.q_max),
                    scn.tsq.latency, scn.tsq.hint_bits, scn.tsq.enabled)
    check_budget(cfg, field="methods.simulated.duration")
    return cfg


def _run_reps(scn: Scenario, opts: SimOptions, override, names, tick):
    flows, groups = _sim_flows(scn, override)
    cfg = _sim_config(scn, flows)
    per = {n: [] for n in names}
    pbar = []
    npk = 0
    for r in range(opts.replications):
        out = simulate(cfg, seed=opts.seed + 7919 * r + (override[1] if override else 0) * 104729)
        npk += len(out.arrival)
        for n in names:
            per[n].append(sim_group_stats(scn, out, groups, n, opts.warmup))
        k0 = int(len(out.p_trace) * opts.warmup / opts.duration)
        pbar.append(float(out.p_trace[k0:].mean()) if len(out.p_trace) > k0 else 0.0)
        tick()
    return per, pbar, npk


def summarise(per_list: list[dict], confidence: float):
    """Means over replications with their Student-t estimates (validation/stats.py) at ``confidence``."""
    vals, ci = {}, {}
    for key in ("delay", "rate", "drop", "quality", "p99"):
        x = [d[key] for d in per_list if math.isfinite(d[key])]
        if len(x) < len(per_list):
            continue  # some replication delivered nothing: no delay estimate over all replications
        e = t_interval(x, confidence)
        vals[key], ci[key] = e.mean, e
    dmax = [d["delay_max"] for d in per_list if math.isfinite(d["delay_max"])]
    if dmax:
        vals["delay_max"] = max(dmax)
    return vals, ci


def simulated(scn: Scenario, opts: SimOptions, progress) -> list[Result]:
    out: list[Result] = []
    names = list(scn.flows)
    hints = scn.hints() if scn.metrics.sweep else []
    tick = progress.task("simulating TSQ + PI", opts.replications * (1 + len(hints)))
    per, pbar, npk = _run_reps(scn, opts, None, names, tick)
    prov = {"source": "validation/tsq_sim.py (treap TSQ over PI, TFRC and CBR senders)", "seed": opts.seed,
            "packets": npk, "duration_s": opts.duration, "warmup_s": opts.warmup}

    e = t_interval(pbar, opts.confidence)
    out.append(Result("tsq.aqm_drop", "simulated", e.mean, "1",
                      Interval.ci(e.low, e.high, e.confidence, se=e.std_error, dof=e.n - 1),
                      {**prov, "replications": e.n}))
    for n in names:
        vals, ci = summarise(per[n], opts.confidence)
        add_group(out, n, "simulated", vals, {**prov, **app_assumption(scn.flows[n].app)}, ci=ci)
    if hints:
        name = scn.metrics.sweep
        quals = []
        for h in hints:
            if h == scn.flows[name].hint:
                p1 = per[name]
            else:
                p1 = _run_reps(scn, opts, (name, h), [name], tick)[0][name]
            vals, ci = summarise(p1, opts.confidence)
            quals.append(vals["quality"])
            add_group(out, f"{name}@h{h}", "simulated", vals, {**prov, "hint": h, **app_assumption(scn.flows[name].app)},
                      ci=ci)
        best = hints[int(np.argmax(np.asarray(quals) - 1e-9 * np.arange(len(hints))))]
        out.append(Result(f"{name}.best_hint", "simulated", float(best), "1",
                          Interval.approximation(float(best), neglects="sampling error: the argmax of the "
                                                                       "estimated mean qualities"),
                          {**prov, "formula": "argmax over hints of the mean quality min(Q_d, Q_t)"}))
    return out


def simulate_trace(scn: Scenario, packets: int, seed: int):
    """One simulated run as a per-packet trace for ``qosbound validate --simulate``.

    The run lasts ``methods.simulated.duration`` (``packets`` is not used: TSQ runs are timed). Flow names are
    the scenario's flow groups (``bulk`` for ``bulk0..bulk98``), so trace metrics match the scenario's. Trace
    delays are sojourn times (arrival to last bit); the scenario's delay metrics are queueing delays, smaller
    by one packet transmission time.
    """
    import pyarrow as pa

    flows, groups = _sim_flows(scn)
    cfg = _sim_config(scn, flows)
    out = simulate(cfg, seed=seed)
    table = to_trace(out)
    group_of = np.asarray(groups, dtype=object)[out.flow]
    return table.set_column(table.schema.get_field_index("flow"), "flow", pa.array(group_of.astype(str)))
