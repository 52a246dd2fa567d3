"""AF by simulation: the class simulator's configuration, replications with confidence intervals, a trace."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as st

from qosbound.analytic.cbwfq import allocate
from qosbound.errors import ScenarioError
from qosbound.results import Interval, Result
from qosbound.systems.af.inputs import ClassInput, metric_kind
from qosbound.systems.af.queue_inputs import profile
from qosbound.systems.af.schema import Scenario
from qosbound.validation.af_sim import Config, replicate, trace_table
from qosbound.validation.droppers import MODES
from qosbound.validation.markers import KINDS, new_state

__all__ = ["sim_config", "simulated", "simulate_trace"]


def sim_config(scn: Scenario, load: float = 1.0):
    """The simulator's arrays for this scenario (offered loads scaled by ``load``)."""
    names = list(scn.classes)
    profs = [profile(scn.classes[n], n) for n in names]
    src = []
    for i, n in enumerate(names):
        t = scn.traffic.get(n)
        if t is None or t.rate <= 0:
            continue
        pps = load * t.rate / (8.0 * t.size)
        if t.marker is not None:
            m = t.marker
            second = m.pir if m.kind == "trtcm" else (m.ebs or 0.0)
            depth2 = m.pbs if m.kind == "trtcm" else 0.0
            st = new_state(m.kind, m.cir, m.cbs, second, depth2 or 0.0)
            pre = m.precolour
            if m.aware:  # one source per pre-colour
                for c in range(3):
                    if pre[c] > 0:
                        src.append((i, c, pps * pre[c], t, KINDS[m.kind], True, st.copy()))
            else:
                src.append((i, 0, pps, t, KINDS[m.kind], False, st))
        else:
            mix = t.mix if t.mix is not None else [1.0, 0.0, 0.0]
            for c in range(3):
                if mix[c] > 0:
                    src.append((i, c, pps * mix[c], t, -1, False, np.zeros(7)))
    if not src:
        raise ScenarioError("no class has traffic to simulate", field="traffic")
    dedicated = None
    if scn.service == "guaranteed":
        active = [1.0 if (n in scn.traffic and scn.traffic[n].rate > 0) else 0.0 for n in names]
        dedicated = allocate(scn.link.rate, [scn.classes[n].bandwidth for n in names], active)
        # Idle classes never send; give them a positive rate so the kernel's arrays stay well defined.
        dedicated = np.where(dedicated > 0, dedicated, scn.link.rate)
    return Config(
        C=scn.link.rate, w=np.array([max(scn.classes[n].bandwidth, 1e-9) for n in names]),
        K=np.array([scn.classes[n].buffer for n in names]),
        min_th=np.array([p.min_th for p in profs]), max_th=np.array([p.max_th for p in profs]),
        max_p=np.array([p.max_p for p in profs]), mode=np.array([MODES[p.mode] for p in profs]),
        gentle=np.array([p.gentle for p in profs]), alpha=np.array([p.alpha for p in profs]),
        src_cls=np.array([s[0] for s in src]), src_colour=np.array([s[1] for s in src]),
        src_rate=np.array([s[2] for s in src]), src_size=np.array([s[3].size for s in src]),
        src_expsize=np.array([s[3].sizes == "exponential" for s in src]),
        src_cbr=np.array([s[3].arrivals == "cbr" for s in src]), src_marker=np.array([s[4] for s in src]),
        src_aware=np.array([s[5] for s in src]), marker_state=np.array([s[6] for s in src]), dedicated=dedicated)


def simulated(scn: Scenario, inputs: list[ClassInput], progress) -> list[Result]:
    o = scn.methods.simulated
    cfg = sim_config(scn)
    warm = int(o.warmup * o.packets)
    adv = progress.task("simulating", o.replications)
    reps = []
    for r in range(o.replications):
        reps += replicate(cfg, o.packets, 1, o.seed + 7919 * r, warm)
        adv(1)
    names = list(scn.classes)
    level = float(o.confidence)
    out: list[Result] = []
    service = "own server at the guaranteed share" if scn.service == "guaranteed" else "WFQ virtual time"
    for ci in inputs:
        i = names.index(ci.name)
        n = ci.name

        def est(vals, metric, unit, extra=None, trials=None):
            v = np.asarray(vals, dtype=float)
            v = v[np.isfinite(v)]
            if len(v) < 2:
                return
            m = float(v.mean())
            dof = len(v) - 1
            se = float(v.std(ddof=1) / math.sqrt(len(v)))
            if trials:
                # A proportion over ``trials`` packets in all: its standard error is at least the binomial one
                # (drops cluster, they do not spread out more evenly than coin flips); with no event seen the
                # floor takes one event, so a rare-event estimate of 0 does not get a zero-width interval.
                p = min(max(m, 1.0 / trials), 1.0)
                se = max(se, math.sqrt(p * (1.0 - p) / trials))
            half = float(st.t.ppf(0.5 + level / 2.0, dof)) * se
            prov = {"source": f"qosbound.validation.af_sim (float EWMA, {service})", "seed": o.seed,
                    "packets": o.packets, "replications": int(len(v)), "std_error": se,
                    "alpha": ci.profile.alpha, "dropper": ci.profile.mode}
            if extra:
                prov.update(extra)
            lo, hi = m - half, m + half
            if metric_kind(metric) == "probability":  # only probabilities live in [0, 1]
                lo, hi = max(0.0, lo), min(1.0, hi)
            elif unit in ("s", "bit/s") or metric.endswith(".queue.mean"):  # non-negative quantities
                lo = max(0.0, lo)
            out.append(Result(metric, "simulated", m, unit, Interval.ci(lo, hi, level, se=se, dof=dof), prov))

        for k in range(3):
            if any(rp.arrivals[i, k] > 0 for rp in reps):
                est([rp.drops[i, k] / rp.arrivals[i, k] if rp.arrivals[i, k] > 0 else np.nan for rp in reps],
                    f"{n}.drop.{n}{k + 1}", "1", trials=float(sum(rp.arrivals[i, k] for rp in reps)))
        est([rp.drops[i].sum() / rp.arrivals[i].sum() for rp in reps], f"{n}.drop", "1",
            trials=float(sum(rp.arrivals[i].sum() for rp in reps)))
        est([rp.delay_sum[i].sum() / rp.delivered[i].sum() if rp.delivered[i].sum() > 0 else np.nan for rp in reps],
            f"{n}.delay.mean", "s")
        for k in range(3):
            if ci.lam[k] > 0 or any(rp.delivered[i, k] > 0 for rp in reps):
                est([rp.delay_sum[i, k] / rp.delivered[i, k] if rp.delivered[i, k] > 0 else np.nan for rp in reps],
                    f"{n}.delay.{n}{k + 1}", "s")
        est([rp.queue_area[i] / rp.duration for rp in reps], f"{n}.queue.mean", "1",
            {"mean_ewma_average": float(np.mean([rp.avg_sum[i, 2] / max(rp.arrivals[i].sum(), 1) for rp in reps]))})
        est([rp.bits[i] / rp.duration for rp in reps], f"{n}.throughput", "bit/s")
        for k in range(3):
            est([rp.arrivals[i, k] / rp.arrivals[i].sum() for rp in reps], f"{n}.colour.{n}{k + 1}", "1",
                {"fraction": "packets"})
            est([rp.arrival_bytes[i, k] / rp.arrival_bytes[i].sum() for rp in reps], f"{n}.colour.{n}{k + 1}.bytes",
                "1", {"fraction": "bytes"})
    return out


def simulate_trace(scn: Scenario, packets: int, seed: int):
    """One simulated run as a per-packet trace (``qosbound validate --simulate``): the class simulator's own
    trace writer, flows named by class."""
    return trace_table(sim_config(scn), packets, seed, list(scn.classes))
