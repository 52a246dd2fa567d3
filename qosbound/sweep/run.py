"""A sweep from end to end: the grid, the cache, the executor, the table, the plots and the summary."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from qosbound import interrupts
from qosbound.errors import Interrupted, ScenarioError
from qosbound.progress import progress
from qosbound.sweep.cache import Cache, point_key
from qosbound.sweep.execute import run_dask, run_serial, with_seed
from qosbound.sweep.grid import Axis, parse_vary, points, set_param
from qosbound.units import display_scale

__all__ = ["Sweep", "prepare", "run", "table_rows", "document", "COLUMNS"]

#: Columns after the parameters' columns.
COLUMNS = ["metric", "method", "value", "unit", "low", "high", "kind", "slo", "agreement", "status", "reason"]


@dataclass
class Sweep:
    scenario: object  # the base scenario (validated)
    axes: list[Axis]
    methods: list[str]
    points: list[tuple]
    raws: list[dict]  # each point's scenario mapping (parameters and seed set)
    keys: list[str]
    records: dict[str, dict] = field(default_factory=dict)
    from_cache: int = 0
    computed: int = 0
    seconds: float = 0.0
    executor: str = "serial"


def prepare(scn, vary: list[str], methods: list[str] | None = None) -> Sweep:
    """The grid of ``vary`` over the scenario ``scn``, each point's scenario mapping and its cache key."""
    from qosbound.systems import get_system

    if not vary:
        raise ScenarioError("give at least one parameter to vary", field="--vary")
    raw = scn.raw
    axes = [parse_vary(raw, text) for text in vary]
    grid = points(axes)
    methods = list(methods or get_system(scn.system).default_methods(scn))
    if not methods:
        raise ScenarioError("no method is enabled", field="--methods")
    raws, keys = [], []
    for values in grid:
        r = raw
        for a, v in zip(axes, values):
            r = set_param(r, a.path, v)
        r = with_seed(r, {a.path: v for a, v in zip(axes, values)}, methods)
        raws.append(r)
        keys.append(point_key(r, methods))
    return Sweep(scn, axes, methods, grid, raws, keys)


def run(sw: Sweep, *, cache: Cache, workers: int = 1, scheduler: str | None = None, dask: bool | None = None,
        show_progress: bool | None = None, client=None) -> Sweep:
    """Fill ``sw.records``: cache hits first, then the missing points (each unique key once) on the executor.

    ``dask`` None: a Dask cluster when ``scheduler`` is given or ``workers`` > 1 and distributed is installed;
    True forces it (e.g. one Dask worker, for a benchmark). ``client``: an open distributed client to use."""
    t0 = time.perf_counter()
    todo: dict[str, dict] = {}
    for key, raw in zip(sw.keys, sw.raws):
        if key in sw.records or key in todo:
            continue
        rec = cache.get(key)
        if rec is not None:
            sw.records[key] = rec
            sw.from_cache += 1
        else:
            todo[key] = raw
    if dask is None:
        dask = bool(scheduler) or workers > 1 or client is not None
        if dask and not scheduler and client is None:
            try:
                import distributed  # noqa: F401
            except ImportError:
                print("qosbound: note: Dask's distributed is not installed; running the points one after another",
                      file=sys.stderr)
                dask = False
    sw.executor = (f"the Dask cluster at {scheduler}" if scheduler else
                   f"{workers} Dask worker{'s' if workers != 1 else ''}" if dask else "this process")
    tasks = list(todo.items())
    if tasks:
        with progress(False if show_progress is False else None) as prog:
            try:
                if dask:
                    got = run_dask(tasks, sw.scenario.path, sw.methods, cache, prog, workers=workers,
                                   scheduler=scheduler, client=client)
                else:
                    got = run_serial(tasks, sw.scenario.path, sw.methods, cache, prog)
            except (Interrupted, interrupts.Stopped) as e:
                # the points that finished are kept (and cached): a rerun resumes from them
                done = getattr(e, "partial", None) or prog.partial_value or {}
                sw.records.update(done)
                sw.computed += len(done)
                sw.seconds = time.perf_counter() - t0
                if isinstance(e, Interrupted):
                    raise
                raise interrupts.stopped("the sweep") from None
        sw.records.update(got)
        sw.computed += len(got)
    sw.seconds = time.perf_counter() - t0
    return sw


def _worst(statuses: list[str]) -> str:
    for s in ("disagree", "approximate", "agree"):
        if s in statuses:
            return s
    return ""


def table_rows(sw: Sweep) -> list[dict]:
    """One row per (point, metric, method); an invalid or failed point is one row with its reason."""
    rows = []
    for values, key in zip(sw.points, sw.keys):
        params = {a.column: v for a, v in zip(sw.axes, values)}
        rec = sw.records[key]
        blank = dict.fromkeys(COLUMNS, None)
        if rec["status"] != "ok":
            rows.append({**params, **blank, "status": rec["status"], "reason": rec["reason"]})
            continue
        for r in rec["results"]:
            iv = r.get("interval") or {}
            slo = "; ".join(f"{v['name']}: {v['status']}" for v in rec["slos"]
                            if v["metric"] == r["metric"] and v["method"] == r["method"])
            agree = _worst([v["status"] for v in rec["agreements"]
                            if v["metric"] in (r["metric"], r.get("estimates"))
                            and r["method"] in v["method"].split(" vs ")])
            rows.append({**params, "metric": r["metric"], "method": r["method"], "value": r["value"],
                         "unit": r["unit"], "low": iv.get("low", r["value"]), "high": iv.get("high", r["value"]),
                         "kind": iv.get("label", ""), "slo": slo, "agreement": agree, "status": "ok", "reason": ""})
        for v in rec["slos"]:
            if v["status"] == "missing":
                rows.append({**params, **blank, "metric": v["metric"], "method": v["method"], "unit": v["unit"],
                             "slo": f"{v['name']}: missing ({v['detail']})", "status": "ok", "reason": ""})
    return rows


def write_table(sw: Sweep, out: Path) -> list[Path]:
    """``sweep.csv`` always, ``sweep.parquet`` when pyarrow is installed; the paths written."""
    import csv

    rows = table_rows(sw)
    cols = [a.column for a in sw.axes] + COLUMNS
    written = []
    with open(out / "sweep.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for row in rows:
            w.writerow({c: ("" if row[c] is None else repr(row[c]) if isinstance(row[c], float) else row[c])
                        for c in cols})
    written.append(out / "sweep.csv")
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return written
    data = {c: [row[c] for row in rows] for c in cols}
    types = {a.column: (pa.int64() if all(isinstance(v, int) for v in a.values) else pa.float64())
             for a in sw.axes}
    types.update({"value": pa.float64(), "low": pa.float64(), "high": pa.float64()})
    table = pa.table({c: pa.array(data[c], type=types.get(c, pa.string())) for c in cols})
    pq.write_table(table, out / "sweep.parquet")
    written.append(out / "sweep.parquet")
    return written


def _fname(metric: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "._-@" else "_" for ch in metric)


#: How a result's kind is drawn: a bound as a dashed line with a triangle pointing to where the truth lies, an
#: approximation dotted, an estimate or an exact value solid (an interval as a band around it).
_STYLE = {"upper bound": ("--", "v"), "lower bound": ("--", "^"), "approximation": (":", "s")}


def _kinds_label(kinds: list[str]) -> str:
    """The legend's name for the kinds of one line: 'upper bound', '95% CI (band)', 'approximation'."""
    out = []
    for k in kinds:
        out.append(f"{k} (band)" if k.endswith("CI") else k)
    return " / ".join(out) if out else "kind unknown"


def _log_axis(system, metric: str, values: list[float]) -> bool:
    """Loss and tail probabilities (a drop, a loss, a CCDF point) go on a log axis, and any probability whose
    positive values span more than two decades: 1e-12 must not sit on zero."""
    try:
        kind = system.metric_kind(metric)
    except Exception:  # noqa: BLE001 - a metric the system does not name (e.g. an approximation's own name)
        kind = None
    pos = [v for v in values if v > 0]
    if kind != "probability" or not pos:
        return False
    tail = any(w in metric for w in ("loss", "drop", "ccdf@"))
    return tail or max(pos) / min(pos) > 100


def write_plots(sw: Sweep, out: Path) -> list[str]:
    """One figure per metric (PNG and SVG): the first parameter on x, a line per method and kind (and per value
    of the other parameters) named by its method and its kind -- bound, approximation, exact, numerical or a
    confidence interval drawn as a band --, each SLO's limit dashed black; loss and tail probabilities on a log
    axis, where points at exactly 0 cannot be drawn and the title says how many there are. The metrics drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from qosbound.systems import get_system
    from qosbound.validation.plots import save

    system = get_system(sw.scenario.system)
    x_axis = sw.axes[0]
    rows = [r for r in table_rows(sw) if r["status"] == "ok"]
    metrics = sorted({r["metric"] for r in rows if r["value"] is not None})
    drawn = []
    for metric in metrics:
        fig, ax = plt.subplots(figsize=(7, 4.2))
        lines: dict[tuple, list] = {}
        kinds: dict[tuple, list] = {}
        unit = ""
        for r in rows:
            if r["metric"] == metric and r["value"] is not None:
                rest = tuple((a.path, r[a.column]) for a in sw.axes[1:])
                key = (r["method"], r["kind"] or "", rest)
                lines.setdefault(key, []).append((r[x_axis.column], r["value"], r["low"], r["high"]))
                unit = r["unit"]
        x_div, x_unit = display_scale([p[0] for pts in lines.values() for p in pts], x_axis.unit)
        y_div, y_unit = display_scale([p[1] for pts in lines.values() for p in pts], unit)
        log_y = _log_axis(system, metric, [p[1] for pts in lines.values() for p in pts])
        positive = [p[1] for pts in lines.values() for p in pts if p[1] > 0]
        floor = min(positive) / 10 if positive else 0.0
        zeros = 0
        for (method, kind, rest), pts in sorted(lines.items()):
            pts.sort()
            xs, ys, lo, hi = (list(t) for t in zip(*pts))
            xs = [x / x_div for x in xs]
            ys, lo, hi = ([v / y_div for v in seq] for seq in (ys, lo, hi))
            if log_y:  # a zero cannot be drawn on a log axis: leave the point out (and say so), clip the band
                zeros += sum(y <= 0 for y in ys)
                ys = [y if y > 0 else float("nan") for y in ys]
                lo = [max(v, floor) for v in lo]
                hi = [max(v, floor) for v in hi]
            style, marker = _STYLE.get(kind, ("-", "o"))
            label = f"{method}: {_kinds_label([kind] if kind else [])}" + "".join(f", {p} = {v:g}" for p, v in rest)
            (ln,) = ax.plot(xs, ys, linestyle=style, marker=marker, ms=4, label=label)
            if any(h > l_ for l_, h in zip(lo, hi)):
                ax.fill_between(xs, lo, hi, color=ln.get_color(), alpha=0.2, linewidth=0)
        limits: dict[str, list] = {}
        for values, key in zip(sw.points, sw.keys):
            rec = sw.records[key]
            for v in rec.get("slos", []):
                if v["metric"] == metric and v["limit"] is not None:
                    limits.setdefault(v["name"], []).append((values[0], v["limit"]))
        for name, pts in sorted(limits.items()):
            pts = sorted(set(pts))
            ax.plot([p[0] / x_div for p in pts], [p[1] / y_div for p in pts], "k--", lw=1, label=f"SLO {name}")
        if x_axis.log:
            ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel(f"{x_axis.path} [{x_unit}]" if x_unit and x_unit != "1" else x_axis.path)
        ax.set_ylabel((f"{metric} [{y_unit}]" if y_unit and y_unit != "1" else metric) + (" (log)" if log_y else ""))
        ax.set_title(f"{sw.scenario.name}: {metric}"
                     + (f" ({zeros} point{'s' if zeros != 1 else ''} at 0 not drawn on the log axis)" if zeros else ""),
                     fontsize=10)
        ax.grid(True, alpha=0.3, which="both" if log_y else "major")
        ax.legend(fontsize=7)
        fig.tight_layout()
        save(fig, out, _fname(metric))
        drawn.append(metric)
    return drawn


def exit_code(sw: Sweep) -> int:
    """The most serious outcome over every point: an engine error's code, else 1 when an SLO fails somewhere
    (an invalid point counts as failing when the scenario has SLOs), else 3 when methods disagree, else 0."""
    from qosbound.verdicts import EXIT_DISAGREE, EXIT_OK, EXIT_SLO

    recs = [sw.records[k] for k in sw.keys]
    errors = [r for r in recs if r["status"] == "error"]
    if errors:
        return int(errors[0].get("exit_code", 2))
    if any(v["status"] in ("violated", "missing") for r in recs for v in r.get("slos", [])):
        return EXIT_SLO
    if sw.scenario.slos and any(r["status"] == "invalid" for r in recs):
        return EXIT_SLO
    if any(v["status"] == "disagree" for r in recs for v in r.get("agreements", [])):
        return EXIT_DISAGREE
    return EXIT_OK


def summary(sw: Sweep) -> list[str]:
    """The lines printed on stdout."""
    from qosbound.units import format_quantity

    def at(values) -> str:
        return ", ".join(f"{a.path} = {format_quantity(v, a.unit) if a.unit != '1' else f'{v:g}'}"
                         for a, v in zip(sw.axes, values))

    recs = [(values, sw.records[k]) for values, k in zip(sw.points, sw.keys)]
    n = len(recs)
    valid = [(p, r) for p, r in recs if r["status"] == "ok"]
    invalid = [(p, r) for p, r in recs if r["status"] == "invalid"]
    errors = [(p, r) for p, r in recs if r["status"] == "error"]
    lines = [f"{sw.scenario.name}: {n} points, {sw.from_cache} from cache, {sw.computed} computed on {sw.executor} "
             f"in {sw.seconds:.1f} s; {len(valid)} valid, {len(invalid)} invalid"
             + (f", {len(errors)} failed" if errors else "")]
    for p, r in invalid[:3]:
        lines.append(f"  invalid at {at(p)}: {r['reason']}")
    if len(invalid) > 3:
        lines.append(f"  ... and {len(invalid) - 3} more invalid points (see the table's 'reason' column)")
    for p, r in errors[:3]:
        lines.append(f"  failed at {at(p)}: {r['reason']}")
    names = []
    for _, r in valid:
        for v in r["slos"]:
            if v["name"] not in names:
                names.append(v["name"])
    for name in names:
        bad = [p for p, r in valid if any(v["name"] == name and v["status"] in ("violated", "missing")
                                          for v in r["slos"])]
        unjudged = [p for p, r in valid if any(v["name"] == name for v in r["slos"])
                    and all(v["status"] == "missing" for v in r["slos"] if v["name"] == name)]
        text = f"SLO {name}: holds at {len(valid) - len(bad)} of {len(valid)} valid points"
        if bad:
            text += f", fails at {len(bad)} (first at {at(bad[0])})"
        if unjudged:
            text += (f"; {'all' if len(unjudged) == len(bad) else len(unjudged)} of them not judged: no requested "
                     "method gives its metric")
        lines.append(text)
    dis = [p for p, r in valid if any(v["status"] == "disagree" for v in r["agreements"])]
    checks = sum(len(r["agreements"]) for _, r in valid)
    if checks:
        lines.append(f"methods: {checks} agreement checks, disagreement at {len(dis)} point(s)"
                     + (f" (first at {at(dis[0])})" if dis else ""))
    return lines


def document(sw: Sweep, inputs=None) -> dict:
    """The sweep's ``--json`` document: the scenario, its inputs as understood, the axes (SI values), the methods
    and one entry per grid point -- its parameter values, status (ok, invalid, error), the reason, and for a
    valid point its metrics, SLO verdicts and agreement verdicts as ``plan --json`` has them --, the exit code
    and the run's figures."""
    points = []
    for values, key in zip(sw.points, sw.keys):
        rec = sw.records[key]
        entry = {"values": {a.path: v for a, v in zip(sw.axes, values)}, "status": rec["status"],
                 "reason": rec.get("reason", "")}
        if rec["status"] == "ok":
            entry.update(metrics=rec["results"], slo_verdicts=rec["slos"], agreement_verdicts=rec["agreements"])
        points.append(entry)
    return {"scenario": sw.scenario.name, "system": sw.scenario.system, "file": sw.scenario.path,
            "inputs": inputs.to_json() if inputs is not None else None,
            "axes": [{"parameter": a.path, "kind": a.kind, "unit": a.unit, "values": list(a.values), "log": a.log}
                     for a in sw.axes],
            "methods": list(sw.methods), "points": points, "exit_code": exit_code(sw),
            "from_cache": sw.from_cache, "computed": sw.computed, "seconds": round(sw.seconds, 3),
            "executor": sw.executor}
