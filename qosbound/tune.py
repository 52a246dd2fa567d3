"""``qosbound tune``: the best setting of several scenario parameters with every SLO as a constraint.

The objective is a scenario parameter ("the largest EF rate": ``--maximise
traffic.EF.rate``) or a metric by one method ("the fewest dropped AF11 packets":
``--minimise AF1.drop.AF11 --method closed-form``). A point is feasible when its
scenario is valid and every SLO holds; the constraint is each SLO's normalised
margin (:func:`qosbound.admit.worst_margin`, the margin ``admit`` searches on).

The search has two stages:

1. **Grid.** Every axis given as a grid (``LO..HI:N``, a list, or an integer
   parameter's ``LO..HI``: every integer) and every continuous axis (a real
   parameter's ``LO..HI`` without N: ``--coarse`` points) spans a grid evaluated
   by :mod:`qosbound.sweep` (its executor, Dask workers and on-disk cache). The
   best feasible grid point is the incumbent; this is the whole search where
   the metric is not smooth (integer thresholds, buffer sizes, counts).
2. **SciPy refinement** (continuous axes only): SLSQP
   (:func:`scipy.optimize.minimize`) from the incumbent over the continuous
   axes' box, the other axes held at the incumbent's values, with one
   inequality constraint per SLO (its normalised margin >= 0). An invalid
   scenario counts as every margin -1 so the solver steps back. The answer is
   the best feasible point evaluated in either stage.

Both stages search locally: the answer is the best point found, not a proof that
no better point exists between grid points.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from qosbound.admit import UNIT_OF_KIND, bisect_root, value_kind, worst_margin
from qosbound.commands.common import engine_output_to_stderr
from qosbound.commands.context import RunContext
from qosbound.errors import ScenarioError
from qosbound.parameter_path import get_path
from qosbound.scenario import build, value_text
from qosbound.sweep import Cache, prepare, run
from qosbound.sweep.execute import evaluate_point
from qosbound.sweep.grid import Axis, MAX_POINTS, parse_vary, set_param
from qosbound.systems import get_system
from qosbound.units import SI_UNIT, format_quantity

__all__ = ["Objective", "Point", "TuneResult", "lines", "parse_axis", "parse_slo", "to_json", "tune"]

FLAG = "--vary"
#: Normalised margin under which an SLO counts as binding at the optimum.
BINDING_TOL = 1e-3


@dataclass(frozen=True)
class Objective:
    """What to optimise: a scenario parameter or a metric by one method, and whether to minimise or maximise."""

    target: str
    sense: str  # "minimise" | "maximise"
    is_parameter: bool
    method: str | None  # the method whose result is the objective (metrics only)
    unit: str

    def better(self, a: float, b: float) -> bool:
        return a < b if self.sense == "minimise" else a > b


@dataclass
class Point:
    """One evaluated setting: the axes' values (SI), whether it is feasible, and why not."""

    values: tuple
    status: str  # "feasible" | "violated" | "invalid" | "error"
    objective: float | None = None
    interval: dict | None = None  # the objective's interval (kind, label, low, high) for a metric
    margins: dict = field(default_factory=dict)  # SLO name -> smallest normalised margin over methods
    worst: float = -math.inf
    reason: str = ""  # the failing SLOs, or why the scenario is invalid


@dataclass
class TuneResult:
    scenario: str
    axes: list
    continuous: list  # per axis: True when SciPy refines it
    objective: Objective
    best: Point | None
    binding: list  # SLO names with a margin within BINDING_TOL at the optimum
    limiting: list  # SLOs that fail at the better neighbours of the optimum (grid)
    rejected: dict  # reason -> count
    neighbours: list  # the rejected points nearest the optimum
    evaluations: int
    grid_points: int
    refined: str = ""  # what the SciPy stage did
    from_cache: int = 0  # grid points read from the sweep's cache


_SLO_RE = re.compile(r"^\s*([A-Za-z0-9_.@*-]+?)\s*(<=|>=)\s*(.+?)\s*$")


def parse_slo(text: str) -> dict:
    """``--slo 'METRIC<=LIMIT'`` (or ``>=``): an SLO mapping as in the scenario file, the limit a quantity with
    its unit ('30 ms'), bare only for a probability or a count (as in the scenario file)."""
    m = _SLO_RE.match(text or "")
    if not m:
        raise ScenarioError(f"'{text}': expected METRIC<=LIMIT or METRIC>=LIMIT, e.g. AF1.drop.AF11<=0.001",
                            field="--slo")
    metric, op, limit = m.groups()
    try:
        value = float(limit)
    except ValueError:
        value = limit  # a quantity with its unit ("30 ms"): the scenario's SLO parser reads it
    return {"metric": metric, "max" if op == "<=" else "min": value}


def parse_axis(raw: dict, text: str) -> tuple[Axis, bool]:
    """One ``--vary PARAM=SPEC`` and whether SciPy refines it: ``LO..HI`` without N on a real parameter is
    continuous; on an integer parameter it is every integer from LO to HI; anything else is a sweep grid
    (:func:`qosbound.sweep.grid.parse_vary`)."""
    if "=" in text:
        path, spec = (s.strip() for s in text.split("=", 1))
        if ".." in spec and ":" not in spec:
            ends = parse_vary(raw, f"{path}={spec}:2")  # the two ends, read and checked in the parameter's units
            lo, hi = ends.values
            if not lo < hi:
                raise ScenarioError(f"'{spec}': the range of {path} is empty (LO must be below HI)", field=FLAG)
            if isinstance(lo, int):
                n = hi - lo + 1
                if n > MAX_POINTS:
                    raise ScenarioError(f"{path}: {n} integers, above the limit of {MAX_POINTS}", field=FLAG)
                return Axis(path, ends.kind, tuple(range(lo, hi + 1))), False
            return ends, True
    return parse_vary(raw, text), False


def _coarse(axis: Axis, n: int) -> Axis:
    lo, hi = axis.values
    return Axis(axis.path, axis.kind, tuple([lo + (hi - lo) * k / (n - 1) for k in range(n - 1)] + [hi]))


def _objective(scn, system, target: str, sense: str, method: str | None, methods: list[str]) -> Objective:
    try:
        get_path(scn.raw, target)
        is_param = True
    except ScenarioError:
        is_param = False
    if is_param:
        kind = value_kind(value_text(get_path(scn.raw, target)), scn.raw, target)
        return Objective(target, sense, True, None, UNIT_OF_KIND[kind])
    if target not in system.metric_names(scn):
        raise ScenarioError(f"'{target}' is neither a parameter of the scenario nor one of its metrics "
                            f"({', '.join(system.metric_names(scn)[:6])}, ...)", field=f"--{sense}")

    return Objective(target, sense, False, method, SI_UNIT.get(system.metric_kind(target), "1"))


def _score(rec: dict, values: tuple, axes: list[Axis], obj: Objective, methods: list[str], path) -> Point:
    """A sweep record (:func:`qosbound.sweep.execute.evaluate_point`) judged as a tuning point."""
    param = next((v for a, v in zip(axes, values) if a.path == obj.target), None) if obj.is_parameter else None
    if rec["status"] != "ok":
        return Point(values, rec["status"], param, reason=rec["reason"])
    worst, _ = worst_margin(rec["slos"], methods, path)
    margins: dict[str, float] = {}
    for v in rec["slos"]:
        m, _ = worst_margin([v], methods, path)
        margins[v["name"]] = min(m, margins.get(v["name"], math.inf))
    failing = [n for n, m in margins.items() if m < 0]
    interval = None
    if obj.is_parameter:
        objective = param
    else:
        r = next((r for r in rec["results"] if r["metric"] == obj.target and r["method"] == obj.method), None)
        if r is None:
            return Point(values, "invalid", margins=margins, worst=worst,
                         reason=f"{obj.method} gives no {obj.target} here")
        objective, interval = r["value"], r.get("interval")
    status = "violated" if failing else "feasible"
    reason = "; ".join(f"SLO {n} fails" for n in failing)
    return Point(values, status, objective, interval, margins, worst if margins else math.inf, reason)


def tune(scn, vary: list[str], *, maximise: str | None = None, minimise: str | None = None,
         method: str | None = None, slos: list[str] = (), coarse: int = 5, cache=None, workers: int = 1,
         scheduler: str | None = None, show_progress: bool | None = False, max_evals: int = 60,
         context: RunContext | None = None) -> TuneResult:
    """The best feasible setting of the ``vary`` axes for the objective (see the module docstring). ``context``:
    the command's run context (the memory limit of the engine work's children; default: none)."""
    context = context or RunContext()
    if (maximise is None) == (minimise is None):
        raise ScenarioError("give one objective: --maximise TARGET or --minimise TARGET", field="--maximise")
    if not vary:
        raise ScenarioError("give at least one parameter to vary", field=FLAG)
    if not 2 <= coarse <= 1000:
        raise ScenarioError(f"must be between 2 and 1000, got {coarse}", field="--coarse")
    scn = with_slos(scn, slos)
    system = get_system(scn.system)
    method, methods = _methods(scn, system, method)
    sense = "maximise" if maximise is not None else "minimise"
    parsed = [parse_axis(scn.raw, t) for t in vary]
    obj = _objective(scn, system, maximise or minimise, sense, method, methods)
    axes = [a for a, _ in parsed]
    continuous = [c for _, c in parsed]
    if obj.is_parameter and obj.target not in [a.path for a in axes]:
        raise ScenarioError(f"the objective {obj.target} is a parameter that is not varied: it is constant",
                            field=f"--{sense}")
    # Stage 1: the grid, on the sweep's executor and cache.
    sw, seen = _grid(scn, parsed, axes, obj, methods, coarse, cache, workers, scheduler, show_progress, context)
    grid_points = len(sw.points)
    best = _best_of(seen.values(), obj)
    refined = ""
    evals = 0
    if best is not None and any(continuous):  # Stage 2: SciPy from the best grid point
        with engine_output_to_stderr():  # engine work in a child, as plan and admit run it
            refined, evals, added = context.isolated(_refine, scn, axes, continuous, best, obj, methods, dict(seen),
                                                     max_evals, what="the SciPy refinement of tune")
        seen.update(added)
        best = _best_of(seen.values(), obj)
    res = _report(scn, axes, continuous, obj, best, seen, grid_points + evals, grid_points, refined)
    res.from_cache = sw.from_cache
    return res


def with_slos(scn, slos: list[str]):
    """The scenario with the ``--slo`` constraints: each replaces the scenario's SLO on the same metric and side (a
    tighter or looser limit); refused when no SLO is left to constrain the search."""
    if slos:
        raw = dict(scn.raw)
        extra = [parse_slo(s) for s in slos]
        # an --slo replaces the scenario's SLO on the same metric and side (a tighter or looser limit)
        sides = {(e["metric"], "max" in e) for e in extra}
        kept = [d for d in (raw.get("slos") or [])
                if not (isinstance(d, dict) and (d.get("metric"), "max" in d) in sides and d.get("method") is None)]
        raw["slos"] = kept + extra
        scn = build(raw, scn.path)
    if not scn.slos:
        raise ScenarioError("the scenario has no SLOs to constrain the search (add some, or --slo)",
                            file=scn.path, field="slos")
    return scn


def _methods(scn, system, method: str | None) -> tuple[str, list[str]]:
    """(the search's method: the one asked for, else the closed form when enabled, else the first enabled; the
    methods evaluated: it, and the closed form for the SLOs it cannot judge)."""
    enabled = system.default_methods(scn)
    if method is None:
        method = "closed-form" if "closed-form" in enabled else (enabled[0] if enabled else None)
    if method is None:
        raise ScenarioError("no method is enabled", file=scn.path, field="methods")
    if method not in enabled:
        raise ScenarioError(f"method '{method}' is not enabled in the scenario ({', '.join(enabled)})",
                            field="--method")
    return method, [method] + (["closed-form"] if method != "closed-form" and "closed-form" in enabled else [])


def _grid(scn, parsed, axes, obj: Objective, methods, coarse: int, cache, workers: int, scheduler,
          show_progress, context: RunContext):
    """Stage 1: every grid point on the sweep's executor and cache; (the sweep, {values: Point})."""
    grid_axes = [_coarse(a, coarse) if c else a for a, c in parsed]
    # the grid in SI with its unit (exact: the shortest repr of each value reads back as itself)
    specs = [f"{a.path}={','.join(repr(v) + ('' if a.unit == '1' else ' ' + a.unit) for v in a.values)}"
             for a in grid_axes]
    sw = prepare(scn, specs, methods)
    run(sw, cache=cache if cache is not None else Cache(None), workers=workers, scheduler=scheduler,
        show_progress=show_progress, context=context)
    seen: dict[tuple, Point] = {}
    for values, key in zip(sw.points, sw.keys):
        seen[tuple(values)] = _score(sw.records[key], tuple(values), axes, obj, methods, scn.path)
    return sw, seen


def _best_of(points, obj: Objective) -> Point | None:
    """The best feasible point for the objective (ties: the larger worst margin); None when none is feasible."""
    best = None
    for p in points:
        if p.status != "feasible":
            continue
        if best is None or obj.better(p.objective, best.objective) or (
                p.objective == best.objective and p.worst > best.worst):
            best = p
    return best


def _refine(scn, axes, continuous, start: Point, obj: Objective, methods, seen: dict,
            max_evals: int) -> tuple[str, int, dict]:
    """SLSQP over the continuous axes (scaled to [0, 1]) from ``start``: what it did, how many points it evaluated
    and those points ({values: Point})."""
    from scipy.optimize import minimize  # costly (SciPy's optimisers): only when tune refines

    added: dict[tuple, Point] = {}
    free = [i for i, c in enumerate(continuous) if c]
    lo = np.array([axes[i].values[0] for i in free], dtype=float)
    hi = np.array([axes[i].values[1] for i in free], dtype=float)
    names = list(start.margins)
    count = {"n": 0}

    def point(u) -> Point:
        u = np.clip(np.asarray(u, dtype=float), 0.0, 1.0)
        values = list(start.values)
        for i, x in zip(free, lo + u * (hi - lo)):
            values[i] = float(x)
        values = tuple(values)
        if values not in seen:
            raw = scn.raw
            for a, v in zip(axes, values):
                raw = set_param(raw, a.path, v)
            count["n"] += 1
            seen[values] = added[values] = _score(evaluate_point(raw, scn.path, methods), values, axes, obj,
                                                  methods, scn.path)
        return seen[values]

    scale = abs(start.objective) or 1.0
    sign = 1.0 if obj.sense == "minimise" else -1.0

    def f(u):
        p = point(u)
        return sign * (p.objective if p.objective is not None else start.objective) / scale

    def g(u):
        p = point(u)
        if p.status == "invalid" or p.status == "error":
            return np.full(len(names), -1.0)
        return np.array([max(p.margins.get(n, -1.0), -1e6) for n in names])

    u0 = (np.array([start.values[i] for i in free], dtype=float) - lo) / (hi - lo)
    res = minimize(f, u0, method="SLSQP", bounds=[(0.0, 1.0)] * len(free),
                   constraints=[{"type": "ineq", "fun": g}],
                   options={"maxiter": max_evals, "eps": 1e-6, "ftol": 1e-9})
    point(res.x)
    slsqp = count["n"]
    segments = _polish(axes, free, obj, seen, point, lo, hi)
    return (f"SLSQP over {', '.join(axes[i].path for i in free)}: {res.message.strip()} ({res.nit} iterations, "
            f"{slsqp} evaluations); then the feasibility boundary towards {segments} rejected better neighbour(s) "
            f"({count['n'] - slsqp} evaluations)"), count["n"], added


def _polish(axes, free, obj: Objective, seen: dict, point, lo, hi, xtol: float = 1e-5) -> int:
    """From the best feasible point, find the feasibility boundary on the segment to each rejected point that is
    better on the objective and differs only in continuous axes (brentq on the smallest normalised margin where
    it is finite at both ends, as ``admit`` does; bisection on feasibility otherwise). The number of segments."""
    from scipy.optimize import brentq  # costly, as in _refine

    feasible = [p for p in seen.values() if p.status == "feasible"]
    if not feasible:
        return 0
    best = feasible[0]
    for p in feasible[1:]:
        if obj.better(p.objective, best.objective):
            best = p
    fixed = [i for i in range(len(axes)) if i not in free]
    targets = [p for p in seen.values() if p.status != "feasible"
               and all(p.values[i] == best.values[i] for i in fixed)
               and (p.objective is None or obj.better(p.objective, best.objective))]
    targets.sort(key=lambda p: _distance(axes, p.values, best.values))
    u_best = (np.array([best.values[i] for i in free]) - lo) / (hi - lo)
    done = 0
    for q in targets[:len(free)]:
        u_q = (np.array([q.values[i] for i in free]) - lo) / (hi - lo)

        def margin(t):
            p = point(u_best + t * (u_q - u_best))
            # an invalid scenario is a finite "fails" (-1, as in the SLSQP stage): brentq keeps its bracket
            return p.worst if p.status in ("feasible", "violated") else -1.0

        done += 1
        if q.status == "violated" and math.isfinite(q.worst) and best.worst > 0:
            try:
                t = brentq(margin, 0.0, 1.0, xtol=xtol)
                if margin(t) < 0:
                    t = max(0.0, t - 2 * xtol)
                    if margin(t) < 0:
                        bisect_root(margin, 0.0, t, xtol, 40)
                continue
            except (ValueError, RuntimeError):
                pass
        bisect_root(margin, 0.0, 1.0, xtol, 40)
    return done


def _distance(axes, a: tuple, b: tuple) -> float:
    """Distance between two settings with every axis scaled to its span (grid steps for a list)."""
    d = 0.0
    for ax, x, y in zip(axes, a, b):
        span = (max(ax.values) - min(ax.values)) or 1.0
        d += ((x - y) / span) ** 2
    return math.sqrt(d)


_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")


def _shape(reason: str) -> str:
    """A reason with its numbers replaced by '#', so points rejected for the same cause count together."""
    return _NUMBER.sub("#", reason)


def _report(scn, axes, continuous, obj, best, seen, evaluations, grid_points, refined) -> TuneResult:
    rejected: dict[str, int] = {}
    for p in seen.values():
        if p.status == "violated":
            for n, m in p.margins.items():
                if m < 0:
                    key = f"SLO {n} fails"
                    rejected[key] = rejected.get(key, 0) + 1
        elif p.status != "feasible":
            key = f"{p.status}: {_shape(p.reason)}"
            rejected[key] = rejected.get(key, 0) + 1
    bad = [p for p in seen.values() if p.status != "feasible"]
    binding: list = []
    limiting: list = []
    if best is not None:
        binding = [n for n, m in best.margins.items() if m <= BINDING_TOL]
        bad.sort(key=lambda p: _distance(axes, p.values, best.values))
        # The better settings next to the optimum that were rejected, and why: what stops the search there.
        for p in bad[:2 * len(axes)]:
            if p.objective is None or not obj.better(p.objective, best.objective):
                continue  # not better, or unknown (an invalid point's metric)
            for n, m in p.margins.items():
                if m < 0 and n not in limiting:
                    limiting.append(n)
            if p.status in ("invalid", "error") and _shape(p.reason) not in limiting:
                limiting.append(_shape(p.reason))
    else:
        bad.sort(key=lambda p: -p.worst)  # the nearest to feasible first
    return TuneResult(scn.name, axes, continuous, obj, best, binding, limiting,
                      dict(sorted(rejected.items(), key=lambda kv: -kv[1])), bad[:3], evaluations, grid_points,
                      refined)


# ---------------------------------------------------------------------------------------------------- the command


def _fmt(v, unit: str) -> str:
    if isinstance(v, int):
        return f"{v}" + (f" {unit}" if unit != "1" else "")
    return format_quantity(v, unit, digits=6) if unit != "1" else f"{v:.6g}"


def _percent(x: float) -> str:
    """A shortfall relative to the limit: '256 %', or '4.83e+05 times' when it is large."""
    return f"{100 * x:.3g} %" if x < 10 else f"{x:.3g} times"


def _at(axes, values) -> str:
    return ", ".join(f"{a.path} = {_fmt(v, a.unit)}" for a, v in zip(axes, values))


def to_json(res: TuneResult) -> dict:
    """The ``--json`` form (finite numbers only)."""

    def num(x):
        return x if x is None or math.isfinite(x) else None

    def pt(p: Point) -> dict:
        return {"values": {a.path: v for a, v in zip(res.axes, p.values)}, "status": p.status,
                "objective": num(p.objective), "reason": p.reason,
                "margins": {n: num(m) for n, m in p.margins.items()}}

    best = res.best
    return {
        "scenario": res.scenario,
        "objective": {"target": res.objective.target, "sense": res.objective.sense,
                      "parameter": res.objective.is_parameter, "method": res.objective.method,
                      "unit": res.objective.unit},
        "axes": [{"parameter": a.path, "unit": a.unit, "continuous": c,
                  **({"low": a.values[0], "high": a.values[1]} if c else {"values": list(a.values)})}
                 for a, c in zip(res.axes, res.continuous)],
        "found": best is not None,
        "optimum": None if best is None else {
            "parameters": [{"parameter": a.path, "value": v, "unit": a.unit} for a, v in zip(res.axes, best.values)],
            "objective": {"value": best.objective, "unit": res.objective.unit,
                          "kind": (best.interval or {}).get("kind", "exact" if res.objective.is_parameter else None),
                          "interval": best.interval},
            "margins": {n: num(m) for n, m in best.margins.items()}},
        "binding_slos": res.binding,
        "limiting": res.limiting,
        "rejected": res.rejected,
        "nearest_rejected": [pt(p) for p in res.neighbours],
        "closest_infeasible": (pt(next((p for p in res.neighbours if p.status == "violated"), None))
                               if best is None and any(p.status == "violated" for p in res.neighbours) else None),
        "evaluations": res.evaluations,
        "grid_points": res.grid_points,
        "refinement": res.refined,
        "from_cache": res.from_cache,
    }


def lines(res: TuneResult) -> list[str]:
    """The text report."""
    o = res.objective
    what = o.target + (f" by {o.method}" if not o.is_parameter else "")
    out = [f"{res.scenario}: {o.sense} {what} over {', '.join(a.path for a in res.axes)}; "
           f"{res.evaluations} points evaluated ({res.grid_points} on the grid"
           + (f", {res.from_cache} of them from the cache" if res.from_cache else "") + ")"]
    for a, c in zip(res.axes, res.continuous):
        out.append(f"  {a.path} ({a.kind}): " + (f"{_fmt(a.values[0], a.unit)} .. {_fmt(a.values[1], a.unit)}, "
                                                  "refined by SciPy" if c else a.describe().split(": ", 1)[1]))
    if res.refined:
        out.append(f"  refinement: {res.refined}")
    b = res.best
    if b is None:
        out.append(f"no feasible point: each of the {res.evaluations} points evaluated fails an SLO or is invalid; "
                   "no value is proposed")
        close = next((p for p in res.neighbours if p.status == "violated"), None)
        if close is not None:  # the best infeasible point: how far each failing SLO is from its limit
            out.append(f"closest to feasible: {_at(res.axes, close.values)}")
            for n, m in sorted(close.margins.items(), key=lambda kv: kv[1]):
                if m < 0:
                    out.append(f"  SLO {n} fails: misses its limit by {_percent(-m)} of the limit")
            if close.objective is not None and not o.is_parameter:
                out.append(f"  objective there: {o.target} = {_fmt(close.objective, o.unit)} by {o.method}")
        elif res.neighbours:
            out.append(f"every point is invalid, e.g. {_at(res.axes, res.neighbours[0].values)}: "
                       f"{res.neighbours[0].reason}")
    else:
        out.append("optimum:")
        for a, v in zip(res.axes, b.values):
            out.append(f"  {a.path} = {_fmt(v, a.unit)}")
        kind = (b.interval or {}).get("label", "exact" if o.is_parameter else "")
        iv = b.interval or {}
        span = (f" [{_fmt(iv['low'], o.unit)}, {_fmt(iv['high'], o.unit)}]"
                if iv.get("low") is not None and iv.get("low") != iv.get("high") else "")
        if o.is_parameter:
            out.append(f"  objective: {o.target} (a parameter, exact)")
        else:
            out.append(f"  objective: {o.target} = {_fmt(b.objective, o.unit)} by {o.method} ({kind}{span})")
        out.append("  SLO margins (normalised): " + ", ".join(f"{n} {m:+.3g}" for n, m in b.margins.items()))
        out.append(f"binding SLOs (margin <= {BINDING_TOL:g}): {', '.join(res.binding) or 'none'}")
        out.append(f"what stops a better neighbour: {'; '.join(res.limiting) or 'nothing (an end of the range)'}")
    if res.rejected:
        out.append(f"rejected points: " + "; ".join(f"{k}: {n}" for k, n in res.rejected.items()))
        for p in res.neighbours:
            out.append(f"  nearest rejected: {_at(res.axes, p.values)}: {p.reason}")
    return out
