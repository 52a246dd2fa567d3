"""``qosbound validate SCENARIO (--simulate | --ns3 | --trace FILE)``: models and bounds against a packet trace.

The reference results come from the scenario's system (``evaluate`` with the
closed-form and model-checked methods it enables); the trace comes from
qosbound's simulator, from ns-3, or from a file (a trace in Parquet/CSV, a
timestamp CSV, or an ``INGRESS,EGRESS`` pcap/pcapng pair). The trace is
reduced to the same metric names with batch-means intervals and compared:
an estimate must agree with the model-checked (or closed-form) value, and
must not exceed a closed-form bound. Output: a table of model / bound / trace
values with intervals and a verdict per metric, plots (PNG and SVG) in
``--out``, or ``--json``. Exit codes as everywhere (:mod:`qosbound.verdicts`):
0 when every check holds, 1 when an SLO fails on the trace, 3 when the trace
disagrees with a model or exceeds a bound.

The command asks the system for what it can do, never for its name, through
the hooks of :class:`qosbound.systems.System`: ``plot_delays(scn)`` (the delay
range worth plotting, or None), ``simulate_trace(scn, packets, seed)`` and
``ns3_trace(scn, ef_packets)`` (each raises a ScenarioError naming what to use
instead where the system has no such capability). A system whose ns-3 counterpart
runs replications (a network) returns its estimates in the info (``results``) with
the methods to judge them against (``compare_with``: the simulation); those
estimates replace the trace's batch means, and the methods named join the reference.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import numpy as np
from rich.markup import escape
from rich.table import Table

from qosbound.commands.common import engine_output_to_stderr, understood
from qosbound.errors import QosboundError, TraceError
from qosbound.progress import QUIET, progress
from qosbound.report import console, fmt_interval, slo_summary
from qosbound.results import Kind, Result, Verdict
from qosbound.scenario import build, load
from qosbound.systems import get_system
from qosbound.systems.base import ccdf_name, parse_quantile_name
from qosbound.trace_verdicts import compare
from qosbound.units import format_quantity, parse_quantity
from qosbound.validation import plots
from qosbound.validation.compare import colour_index, arrays, delays, trace_results
from qosbound.validation.csv_import import read_timestamps_csv
from qosbound.validation.pcap import import_pair
from qosbound.validation.trace import read_trace
from qosbound.verdicts import exit_code, judge_slos

__all__ = ["run", "load_trace", "validate"]

#: Extra CCDF points (s) asked of the model for the plot, besides the scenario's own.
_PLOT_GRID = 12
#: EF packets an ns-3 run aims for (ns-3 moves about 1e5 packets/s).
NS3_EF_PACKETS = 20_000


def load_trace(spec: str):
    """A trace from a file spec: ``a.parquet``, ``a.csv`` (schema or timestamps), or ``in.pcap,out.pcap``.

    Returns (table, info dict).
    """
    if "," in spec:
        ing, eg = (s.strip() for s in spec.split(",", 1))
        table, rep = import_pair(ing, eg)
        return table, {"kind": "pcap pair", "ingress": ing, "egress": eg, "match": rep.to_json()}
    p = Path(spec)
    if p.suffix in (".pcap", ".pcapng", ".cap"):
        raise TraceError(f"{spec}: a capture needs its pair: give --trace INGRESS,EGRESS")
    if p.suffix == ".csv":
        try:
            return read_trace(p), {"kind": "trace csv", "file": spec}
        except TraceError as e:
            if "missing column" not in str(e):
                raise

            return read_timestamps_csv(p), {"kind": "timestamp csv", "file": spec}
    return read_trace(p), {"kind": "trace", "file": spec}


def _with_plot_grid(scn, system):
    """The scenario with extra CCDF points for the plot (when its schema has ``metrics.ccdf_at`` and the system
    says which delay range is worth plotting)."""
    bound = system.plot_delays(scn)  # a system that returns a range has ``metrics.ccdf_at`` and an EF class
    if not bound:
        return scn, []

    own = list(scn.metrics.ccdf_at)
    grid = [float(x) for x in np.linspace(bound / _PLOT_GRID, bound, _PLOT_GRID, endpoint=False)]
    grid = [g for g in grid if all(abs(g - o) > 1e-9 for o in own)]
    raw = scn.raw
    raw.setdefault("metrics", {})
    raw["metrics"]["ccdf_at"] = own + grid
    return build(raw, scn.path), [ccdf_name("EF.delay", g) for g in grid]


def _reference(scn, system, progress, notes: list[str]):
    methods = [m for m in system.default_methods(scn) if m in ("closed-form", "model-checked")]
    scn_eval, grid = _with_plot_grid(scn, system)
    out: list[Result] = []
    for m in methods:
        try:
            out += system.evaluate(scn_eval, [m], progress)
        except (QosboundError, ImportError) as e:
            notes.append(f"{m} unavailable: {e}")
    return out, grid


def _simulation_options(scn):
    """The scenario's simulation options; a schema that leaves them unset (``tfrc``: the method is off unless
    asked for) gets its defaults, as ``plan --methods simulated`` does."""
    if scn.methods.simulated is None:
        annotation = type(scn.methods).model_fields["simulated"].annotation
        scn.methods.simulated = next(a for a in get_args(annotation) if a is not type(None))()
    return scn.methods.simulated


def _simulate(scn, system, progress):
    opts = _simulation_options(scn)  # every system's schema has one: packet runs (``packets``) or timed runs
    packets = int(getattr(opts, "packets", 1_000_000))
    seed = int(opts.seed)
    table = system.simulate_trace(scn, packets, seed)
    return table, {"kind": "simulated", "simulator": f"qosbound.validation.{scn.system}_sim", "packets": packets,
                   "seed": seed}


def _ns3(scn, system):
    return system.ns3_trace(scn, NS3_EF_PACKETS)


def _metric_names(scn, system, reference: list[Result]) -> list[str]:
    names: list[str] = list(system.metric_names(scn))
    names += [s.metric for s in scn.slos]
    names += [r.metric for r in reference]
    out = []
    for n in names:
        if n not in out:
            out.append(n)
    return out


def validate(scn, source: str, trace_spec: str | None = None, progress=None):
    """Reference results, trace results, verdicts, and context for a report (no printing, no plots)."""
    progress = progress or QUIET
    system = get_system(scn.system)
    notes: list[str] = []
    reference, grid = _reference(scn, system, progress, notes)
    if source == "simulate":
        table, info = _simulate(scn, system, progress)
        opts = scn.methods.simulated
        warmup = float(opts.warmup)
        if getattr(opts, "duration", None):  # timed runs: warm-up is seconds, the trace wants a fraction
            warmup = warmup / float(opts.duration)
        method = "simulated"
    elif source == "ns3":
        table, info = _ns3(scn, system)
        method, warmup = "ns-3", 0.01
    else:
        table, info = load_trace(trace_spec)
        method, warmup = "trace", 0.0
    replicated = info.pop("results", None)
    if replicated is not None:
        # ns-3 ran the scenario's replications (a network): its own estimates, judged against the methods named
        # (the chained simulation of the same replications and duration) besides the closed forms
        for m in info.pop("compare_with", []):
            reference += system.evaluate(scn, [m], progress)
    t = arrays(table, warmup)
    # the model's plot-only CCDF points are not part of the report
    ref_report = [r for r in reference if r.metric not in grid]
    names = _metric_names(scn, system, ref_report)
    if replicated is None:
        observed = trace_results(t, names + grid, method, source=info.get("kind", method), warmup=warmup)
    else:
        observed = list(replicated)
    obs_plot = [r for r in observed if r.metric in grid and r.metric not in names]
    observed = [r for r in observed if r.metric in names]
    verdicts = compare(ref_report, observed)
    slo = [v for v in judge_slos(system, scn, observed) if v.status != "missing"]
    # no module objects here: the dict crosses the process boundary of qosbound.isolate (pickled)
    return {"reference": ref_report, "reference_all": reference, "observed": observed,
            "verdicts": verdicts, "slo_verdicts": slo, "trace": t, "info": info, "method": method,
            "observed_plot": obs_plot,
            "notes": notes, "grid": grid, "metrics": names}


def _rows(ctx) -> list[dict]:
    """One row per metric: reference estimate, bounds, observed value and a verdict."""
    ref = ctx["reference"]
    obs = {r.metric: r for r in ctx["observed"]}
    rows = []
    for name in ctx["metrics"]:
        estimates = [r for r in ref if (r.estimates or r.metric) == name and r.interval is not None
                     and not r.interval.is_bound]
        model = next((r for r in estimates if r.method == "model-checked"), None) or next(
            (r for r in estimates if r.kind in (Kind.EXACT, Kind.NUMERICAL)), None) or next(
            (r for r in estimates if r.method == "simulated"), None)
        bounds = [r for r in ref if r.bounds_metric(name)]
        o = obs.get(name)
        vs = [v for v in ctx["verdicts"] if v.metric == name]
        if o is None and model is None and not bounds:
            continue
        if not vs:
            verdict = "no reference" if o is not None else "not in trace"
        elif any(v.status == "disagree" for v in vs):
            verdict = ("exceeds bound" if any(v.status == "disagree" and "bound" in v.result_kind for v in vs)
                       else "disagree")
        elif any(v.status == "agree" and "bound" not in v.result_kind for v in vs):
            verdict = "agrees"
        elif any(v.status == "agree" for v in vs):
            verdict = "within bound"
        else:
            verdict = "approximate"
        rows.append({"metric": name, "model": model, "bounds": bounds, "observed": o, "verdict": verdict})
    return rows


def _slo_marks(scn, system, cls: str) -> list[tuple[str, float | None, float | None]]:
    """The scenario's SLOs on one class's delay, as plot marks (label, delay limit, probability)."""
    out = []
    for slo in scn.slos:
        parts = slo.metric.split(".", 2)
        if len(parts) < 3 or parts[0] != cls or parts[1] != "delay" or slo.bound != "max":
            continue
        stat = parts[2]
        try:
            limit = system.slo_limit(scn, slo)
        except QosboundError:
            continue
        q = parse_quantile_name(stat)
        if q is not None:
            out.append((f"{stat} <= {format_quantity(limit, 's')}", limit, 1.0 - q))
        elif stat.startswith("ccdf@"):
            d = parse_quantity(stat[5:], "time")
            out.append((f"P(delay > {format_quantity(d, 's')}) <= {limit:.3g}", d, limit))
        elif system.metric_kind(slo.metric) == "time":  # a mean, a maximum, a bound: a delay limit
            out.append((f"{stat} <= {format_quantity(limit, 's')}", limit, None))
    return out


def _plots(ctx, scn, out_dir) -> list[str]:
    t = ctx["trace"]
    system = get_system(scn.system)
    paths: list[str] = []
    classes = []
    for r in ctx["reference_all"] + ctx["observed"]:
        parts = r.metric.split(".")
        if len(parts) >= 3 and parts[1] == "delay" and parts[0] not in classes:
            classes.append(parts[0])
    mc = getattr(getattr(scn, "methods", None), "model_checked", None)
    floor = float(getattr(mc, "precision", 1e-10))
    for c in classes:
        d = delays(t, c)
        if len(d) == 0:
            continue
        pts, model_kinds = [], []
        for r in ctx["reference_all"]:
            if r.method == "model-checked" and r.metric.startswith(f"{c}.delay.ccdf@"):
                pts.append((parse_quantity(r.metric.split("@", 1)[1], "time"), r.value))
                if r.interval is not None and r.interval.label() not in model_kinds:
                    model_kinds.append(r.interval.label())
        tpts = []
        for r in ctx["observed"] + ctx["observed_plot"]:
            if r.metric.startswith(f"{c}.delay.ccdf@") and r.interval is not None:
                tpts.append((parse_quantity(r.metric.split("@", 1)[1], "time"), r.value, r.interval.low,
                             r.interval.high))
        # upper bounds on this class's delays (the closed-form maximum, the worst case of the mean)
        bounds = {r.metric.split(".", 2)[-1]: r.value for r in ctx["reference"]
                  if r.metric.startswith(f"{c}.delay.") and r.interval is not None and r.interval.is_bound
                  and r.method != "model-checked" and r.interval.kind.value == "upper bound"}
        paths += plots.delay_ccdf(d, out_dir, cls=c, trace_label=ctx["method"], model_points=pts,
                                  trace_points=tpts, bounds=bounds, slos=_slo_marks(scn, system, c),
                                  model_floor=floor, title=f"{scn.name}: {c} delay CCDF",
                                  model_kind=" / ".join(model_kinds))
    ref, obs, kinds = [], [], {}
    for r in ctx["reference"]:
        parts = r.metric.split(".")
        if r.method in ("model-checked", "closed-form") and len(parts) >= 2 and parts[1] in ("loss", "drop"):
            col = colour_index(parts[0], parts[2]) if len(parts) == 3 else None
            if len(parts) == 3 and col is None:
                continue
            ref.append((parts[0], None if col in (None, -1) else col, r.method, r.value))
            if r.interval is not None:
                label = r.interval.label()
                have = kinds.get(r.method, "")
                kinds[r.method] = have if label in have.split(" / ") else " / ".join(x for x in (have, label) if x)
    for r in ctx["observed"]:
        parts = r.metric.split(".")
        if len(parts) >= 2 and parts[1] in ("loss", "drop") and r.interval is not None:
            col = colour_index(parts[0], parts[2]) if len(parts) == 3 else None
            if len(parts) == 3 and col is None:
                continue
            obs.append((parts[0], None if col in (None, -1) else col, r.value, r.interval.low, r.interval.high))
    if obs or ref:
        paths += plots.drop_by_colour(obs, ref, out_dir, trace_label=ctx["method"], kinds=kinds,
                                      title=f"{scn.name}: drop probability per drop precedence")
    return paths


def _fmt(r: Result | None) -> tuple[str, str]:
    if r is None:
        return "-", ""
    return format_quantity(r.value, r.unit), fmt_interval(r)


def run(args, context) -> int:
    """Entry point of ``qosbound validate``. ``context``: the run's :class:`~qosbound.commands.context.RunContext`."""
    scn = load(args.scenario)
    inputs = understood(scn)
    if not args.json:  # the inputs as understood, before the trace is made or read
        console().print(escape("\n".join(inputs.lines())), highlight=False)
    source = "simulate" if args.simulate else "ns3" if args.ns3 else "trace"
    with progress(None if not args.quiet else False) as prog, engine_output_to_stderr():
        # in a child (qosbound.isolate): a signal stops the simulator's threads or ns-3 at once
        ctx = context.isolated(validate, scn, source, args.trace, what=f"validating {scn.name}", progress=prog)
    rows = _rows(ctx)
    plot_paths = _plots(ctx, scn, args.out) if args.out else []
    verdicts: list[Verdict] = ctx["verdicts"] + ctx["slo_verdicts"]
    code = exit_code(verdicts)
    if args.json:
        doc = {"scenario": scn.name, "file": args.scenario, "system": scn.system, "inputs": inputs.to_json(),
               "source": ctx["info"],
               "method": ctx["method"], "ok": code == 0,
               "rows": [{"metric": r["metric"], "verdict": r["verdict"],
                         "model": r["model"].to_json() if r["model"] else None,
                         "bounds": [b.to_json() for b in r["bounds"]],
                         "observed": r["observed"].to_json() if r["observed"] else None} for r in rows],
               "metrics": [r.to_json() for r in ctx["reference"] + ctx["observed"]],
               "verdicts": [v.to_json() for v in verdicts], "plots": plot_paths, "notes": ctx["notes"]}
        print(json.dumps(doc, indent=2, allow_nan=False, default=_json_default))
        return code

    c = console()
    info = ctx["info"]
    t = Table(title=f"qosbound validate: {scn.name} against {ctx['method']} ({info.get('kind', '')})",
              title_justify="left")
    for col in ("metric", "model", "model interval", "bound", ctx["method"], "interval", "verdict"):
        t.add_column(col, justify="right" if col in ("model", "bound", ctx["method"]) else "left")
    style = {"agrees": "green", "within bound": "green", "disagree": "bold red", "exceeds bound": "bold red"}
    for r in rows:
        mv, mi = _fmt(r["model"])
        if r["model"] is not None and r["model"].method != "model-checked":
            mi = f"{mi} ({r['model'].method})".strip()
        ov, oi = _fmt(r["observed"])
        b = ", ".join(format_quantity(x.value, x.unit) for x in r["bounds"]) or "-"
        t.add_row(r["metric"], mv, mi, b, ov, oi, f"[{style.get(r['verdict'], 'yellow')}]{r['verdict']}[/]")
    c.print(t)
    for v in ctx["slo_verdicts"]:
        c.print(f"SLO {v.name} on {v.method}: {v.status}", highlight=False)
    for v in ctx["verdicts"]:
        if v.disagrees:
            c.print(f"[bold red]DISAGREE[/] {escape(v.name)} ({v.method}): {escape(v.detail)}", highlight=False)
    if "match" in info:
        m = info["match"]
        c.print(f"captures: {m['ingress']} ingress, {m['egress']} egress, {m['matched']} matched, {m['lost']} lost, "
                f"{m['unmatched_egress']} egress packets not seen at the ingress", highlight=False)
    if "semantics" in info:
        c.print(f"ns-3: {info['semantics']}", highlight=False)
    for n in ctx["notes"]:
        c.print(f"[yellow]note[/] {n}", highlight=False)
    if plot_paths:
        c.print(f"plots: {', '.join(plot_paths)}", highlight=False)
    nd = sum(v.disagrees for v in ctx["verdicts"])
    c.print(f"{scn.name}: {slo_summary(ctx['slo_verdicts'])} on the {ctx['method']} trace; "
            f"against the models: {len(ctx['verdicts']) - nd} checks agree or are approximate, {nd} disagree",
            highlight=False)
    return code


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(type(o).__name__)
