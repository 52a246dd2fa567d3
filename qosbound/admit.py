"""Admission control: the largest (or smallest) value of one scenario parameter for which every SLO holds.

The scenario is re-validated for each trial value; a value that makes the scenario invalid (e.g. utilisation
>= 1) counts as infeasible. The search assumes feasibility is monotone in the parameter.

How a trial value is judged (:func:`judge_point`): every SLO first by the proved bounds the results carry
(kind ``upper bound`` / ``lower bound``, of the SLO's metric or one they bound, e.g. the closed-form maximum
delay bounds every delay quantile): an upper bound at or below a ``max`` limit proves the SLO holds, a lower
bound above it proves it fails (mirrored for ``min``). Only an SLO no bound decides is judged on the search
method's own value; for a confidence interval, "decided" means the interval lies on one side of the limit.

How the search spends its time (a 1 Gbit/s port with thousands of calls answers in a minute):

1. **Bounds first.** The closed forms cost milliseconds. Where they carry a bound for every SLO's metric, the
   search first finds, on them alone, the largest (smallest) value at which bounds prove every SLO: the
   *bound-decided answer* (``AdmitResult.bound_value``). It is sound -- every SLO holds there whatever the
   other methods say -- hence never beyond the true boundary. Every later trial value is also judged on the
   closed forms first, and the search method runs only where they leave an SLO undecided.
2. **Simulation near the boundary only, with sequential stopping.** A simulated trial spends at most what
   one ``plan`` simulation spends (``packets x replications``), split into 16 times as many replications of
   a sixteenth of the packets (:func:`sim_design`: for CBR calls a replication's loss depends on the phases
   it draws, so many short replications estimate the mean over phases better than a few long ones). It runs
   16 replications, then 32, 64, ... up to that cap, and stops at the first look at which every SLO no bound
   decides is decided by its interval at the scenario's confidence (a loss seen fewer than 5 times decides
   "holds" only with a tenfold margin: losses come in bursts and in rare replications, :func:`_decided`). The
   simulator keeps the replications it ran, so a look adds replications rather than repeating them (same
   seeds as one run of that many). At the cap an undecided SLO is judged by the point estimate, as
   ``verify`` judges it, and the answer says so. Each look's interval is at the chosen confidence; over
   ``L`` looks the chance that some look decides wrongly is at most ``L`` times one look's.
3. **Bracket, then refine.** From the bound-decided answer (else the scenario's value) the search doubles
   (halves) until a value is infeasible, then refines: on a simulated search by bisection on feasibility
   down to ``sim_rtol`` (0.5 % of the value, or one unit of an integer parameter: finer would resolve only
   the simulation's noise); otherwise with SciPy's ``brentq`` on the smallest normalised SLO margin where
   it changes sign, and by bisection on feasibility where it does not (e.g. an SLO held with equality over a
   stretch), to ``rtol``.

The answer says what decided it (``decided_by``): ``bound`` when bounds prove every SLO at the answer, else the
search method, with the binding SLO's estimate and interval at the answer (``estimate``). While the search
runs it reports the value being tried, the bracket so far and an ETA (:mod:`qosbound.progress`); if a signal
stops it, the bracket found so far is what it reports (``partial``), marked incomplete.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field

from qosbound.errors import SKIPPABLE, ScenarioError
from qosbound.progress import QUIET, report_partial, report_status
from qosbound.results import Kind
from qosbound.scenario import build, get_path, in_form, parameter_kind, set_path, value_text
from qosbound.systems import get_system
from qosbound.units import SI_UNIT, format_quantity, parse_quantity
from qosbound.verdicts import judge_slo

__all__ = ["AdmitResult", "admit", "normalised_margin", "search_range", "worst_margin", "judge_point",
           "bracket_text", "SIM_RTOL"]

#: Relative tolerance of a search on the simulator (its noise is larger than this near a boundary).
SIM_RTOL = 0.005


@dataclass
class AdmitResult:
    parameter: str
    direction: str
    value: float | None  # SI, None when no value is feasible
    unit: str
    method: str
    binding: str  # the SLO that stops the search
    evaluations: int
    history: list[tuple[float, float]] = field(default_factory=list)  # (x, margin)
    message: str = ""
    notes: list[str] = field(default_factory=list)  # e.g. a method skipped on its budget, and the one used
    decided_by: str = ""  # 'bound' when proved bounds decide every SLO at the answer, else the search method
    estimate: dict | None = None  # the binding SLO's value and interval at the answer (see judge_point)
    bound_value: float | None = None  # the value up to which bounds prove every SLO (None: none found)
    bound_proofs: dict = field(default_factory=dict)  # SLO -> the bound that proves it at bound_value
    infeasible: float | None = None  # the nearest value found infeasible beyond the answer
    bound_evaluations: int = 0  # evaluations on the closed forms alone


_KIND_OF_UNIT = {"rate": "bit/s", "time": "s", "size": "B", "probability": "1", "count": "1"}


def _kind_of(value, raw: dict | None = None, path: str | None = None) -> str:
    """The parameter's kind: from the scenario's schema when ``raw`` and ``path`` name it (a rate stays a rate
    when the file gives it as a bare number), else guessed from the value."""
    if isinstance(value, bool):
        raise ScenarioError("cannot vary a yes/no parameter")
    kind = parameter_kind(raw, path) if raw is not None and path is not None else None
    if kind is not None:
        return kind
    if isinstance(value, (int, float)):
        return "count"
    for kind in ("rate", "time", "size", "probability"):
        try:
            parse_quantity(value, kind)
            return kind
        except ScenarioError:
            continue
    raise ScenarioError(f"cannot vary '{value}': not a number or a quantity with units")


def _parse_bound(text, kind: str, flag: str) -> float:
    if kind == "count":
        try:
            x = float(text)
        except (TypeError, ValueError):
            raise ScenarioError(f"cannot read {text!r} as a number", field=flag) from None
        if not math.isfinite(x):
            raise ScenarioError(f"{text!r} is not a finite number", field=flag)
        return x
    return parse_quantity(text, kind, field=flag, bare_si=False)  # a bare time, rate or size is refused


def normalised_margin(margin: float, limit: float | None) -> float:
    """An SLO's slack relative to its limit (the slack itself when the limit is 0): comparable across SLOs."""
    return margin / abs(limit) if limit else margin


def _field(v, name: str):
    return v[name] if isinstance(v, dict) else getattr(v, name)


def worst_margin(verdicts, methods, path=None) -> tuple[float, str]:
    """The smallest normalised margin over the SLO verdicts (objects or their JSON dicts) and the SLO that has it
    (+inf and '' when there is none); an SLO no method in ``methods`` can judge is bad input."""
    worst, name = math.inf, ""
    for v in verdicts:
        if _field(v, "status") == "missing":
            raise ScenarioError(f"SLO '{_field(v, 'name')}' cannot be judged by method(s) {', '.join(methods)}",
                                file=path)
        m = normalised_margin(_field(v, "margin"), _field(v, "limit"))
        if m < worst:
            worst, name = m, _field(v, "name")
    return worst, name


def search_range(scn, parameter: str, lo_text, hi_text, direction: str = "largest") -> tuple[float | None, float | None]:
    """Read ``--min`` / ``--max`` in the units of the varied parameter ("100 kbit/s", "5 ms"; a bare number only
    for a count or a probability) and check the range: finite, ``min < max``, inside the parameter's domain."""
    current = value_text(get_path(scn.raw, parameter))
    kind = _kind_of(current, scn.raw, parameter)
    lo = _parse_bound(lo_text, kind, "--min") if lo_text is not None else None
    hi = _parse_bound(hi_text, kind, "--max") if hi_text is not None else None
    positive = kind in ("rate", "time", "size")
    for x, flag in ((lo, "--min"), (hi, "--max")):
        if x is None:
            continue
        if positive and x <= 0:
            raise ScenarioError(f"must be positive: {parameter} is a {kind}, got {x:g} {_KIND_OF_UNIT[kind]}",
                                field=flag)
        if kind == "probability" and not 0 <= x <= 1:
            raise ScenarioError(f"must lie in [0, 1]: {parameter} is a probability, got {x:g}", field=flag)
    if lo is not None and hi is not None and not lo < hi:
        raise ScenarioError(f"the search range is empty: --min ({lo:g}) must be below --max ({hi:g})",
                            field="--min")
    return lo, hi


# ---- judging one trial value -------------------------------------------------------------------------------

def _proof(slo, limit: float, results):
    """(True, result) when a proved bound shows the SLO holds, (False, result) when one shows it fails, else
    None. A bound counts when its kind is ``upper bound`` / ``lower bound`` and it bounds the SLO's metric
    (:meth:`qosbound.results.Result.bounds_metric`); an SLO restricted to a method takes that method's only."""
    cands = [r for r in results if r.interval is not None and r.interval.is_bound and r.bounds_metric(slo.metric)
             and (slo.method is None or r.method == slo.method)]
    upper = [r for r in cands if r.interval.kind is Kind.UPPER_BOUND]
    lower = [r for r in cands if r.interval.kind is Kind.LOWER_BOUND]
    if slo.bound == "max":
        against = [r for r in lower if r.value > limit]
        if against:
            return False, max(against, key=lambda r: r.value)
        proving = [r for r in upper if r.value <= limit]
        if proving:
            return True, min(proving, key=lambda r: r.value)
    else:
        against = [r for r in upper if r.value < limit]
        if against:
            return False, min(against, key=lambda r: r.value)
        proving = [r for r in lower if r.value >= limit]
        if proving:
            return True, max(proving, key=lambda r: r.value)
    return None


#: A simulated fraction (a loss) counted fewer events than this ...
FEW_EVENTS = 5
#: ... decides a 'max' SLO only when its interval's upper end is this many times below the limit.
FEW_EVENTS_MARGIN = 10.0


def _decided(result, limit: float, bound: str) -> bool:
    """Whether a value settles the SLO: always, except a confidence interval that straddles the limit, and a
    simulated fraction with fewer than :data:`FEW_EVENTS` events that would hold. Such an interval rests on the
    pooled Clopper-Pearson floor, which takes the packets as independent trials; losses come in bursts (a PQ
    overflow drops several packets) and, for CBR calls, mostly in the few replications whose phases line up
    (near the 1 Gbit/s voice port's boundary 73 % of 125,000-packet replications lose nothing), so a handful
    of loss-free replications says less than it seems: it decides only with a tenfold margin."""
    iv = result.interval
    if iv is None or iv.kind is not Kind.CI:
        return True
    if bound == "max":
        events = (result.provenance or {}).get("events")
        if iv.high <= limit and events is not None and events < FEW_EVENTS:
            return iv.high * FEW_EVENTS_MARGIN <= limit
        return iv.high <= limit or iv.low > limit
    return iv.low >= limit or iv.high < limit


def _estimate(result, slo_name: str, limit: float, by: str) -> dict:
    iv = result.interval
    out = {"slo": slo_name, "metric": result.metric, "method": result.method, "value": result.value,
           "unit": result.unit, "limit": limit, "by": by, "kind": iv.label() if iv is not None else ""}
    if iv is not None and iv.kind is Kind.CI:
        out.update(low=iv.low, high=iv.high, level=iv.level)
    prov = result.provenance or {}
    for key in ("replications", "packets_per_replication"):
        if prov.get(key) is not None:
            out[key] = prov[key]
    return out


def judge_point(system, trial, results, path=None, *, bounds_only: bool = False) -> dict:
    """Every SLO of ``trial`` judged on ``results`` (see the module docstring): a dict with ``feasible``,
    ``margin`` (the smallest normalised margin), ``binding`` (the SLO that has it), ``by`` ('bound' when proofs
    decide every SLO), ``decided`` (no SLO left to an interval that straddles its limit) and ``slos`` (per SLO:
    ``holds``, ``margin``, ``decided``, ``by`` and its ``estimate``). With ``bounds_only`` an SLO no bound decides
    makes the point undecided (``feasible`` False, ``proved`` False)."""
    calls = {}
    for slo in trial.slos:
        limit = system.slo_limit(trial, slo)
        name = slo.title()
        pr = _proof(slo, limit, results)
        if pr is not None:
            holds, r = pr
            margin = (limit - r.value) if slo.bound == "max" else (r.value - limit)
            calls[name] = {"holds": holds, "margin": normalised_margin(margin, limit), "decided": True,
                           "by": "bound", "estimate": _estimate(r, name, limit, "bound")}
            continue
        if bounds_only:
            covered = any(r.interval is not None and r.interval.is_bound and r.bounds_metric(slo.metric)
                          for r in results)
            calls[name] = {"holds": False, "margin": -math.inf, "decided": False, "by": "", "estimate": None,
                           "covered": covered}
            continue
        try:
            unit = SI_UNIT.get(system.metric_kind(slo.metric), "")
        except ScenarioError:
            unit = ""
        verdicts = [v for v in judge_slo(slo, limit, results, unit) if v.status != "missing"]
        if not verdicts:
            methods = sorted({r.method for r in results})
            raise ScenarioError(f"SLO '{name}' cannot be judged by method(s) {', '.join(methods)}", file=path)
        worst = min(verdicts, key=lambda v: normalised_margin(v.margin, v.limit))
        r = next(x for x in results if x.metric == slo.metric and x.method == worst.method)
        calls[name] = {"holds": worst.margin >= 0, "margin": normalised_margin(worst.margin, worst.limit),
                       "decided": all(_decided(x, limit, slo.bound) for x in results
                                      if x.metric == slo.metric and (slo.method is None or x.method == slo.method)),
                       "by": worst.method, "estimate": _estimate(r, name, limit, worst.method)}
    if not calls:
        return {"feasible": True, "margin": math.inf, "binding": "", "by": "bound", "decided": True,
                "proved": True, "disproved": False, "slos": {}}
    by_bound = [n for n, c in calls.items() if c["by"] == "bound"]
    disproved = any(not calls[n]["holds"] for n in by_bound)
    # a value a bound rules out is judged on the bounds that decide it (finite margins, for the root finder)
    pool = by_bound if disproved and bounds_only else list(calls)
    binding = min(pool, key=lambda n: calls[n]["margin"])
    proved = len(by_bound) == len(calls)
    return {"feasible": all(c["holds"] for c in calls.values()), "margin": calls[binding]["margin"],
            "binding": binding, "by": "bound" if proved or disproved else next(
                c["by"] for c in calls.values() if c["by"] != "bound"),
            "decided": all(c["decided"] for c in calls.values()) or disproved,
            "proved": proved and not disproved, "disproved": disproved,
            "covered": all(c.get("covered", True) for c in calls.values()), "slos": calls}


def bracket_text(direction: str, feasible: float | None, infeasible: float | None, unit: str) -> str:
    """'feasible at >= 3200, infeasible at <= 12800' (the largest value), mirrored for the smallest; a side not
    found yet is left out."""
    ge, le = (">=", "<=") if direction == "largest" else ("<=", ">=")
    parts = []
    if feasible is not None:
        parts.append(f"feasible at {ge} {_fmt(feasible, unit)}")
    if infeasible is not None:
        parts.append(f"infeasible at {le} {_fmt(infeasible, unit)}")
    return ", ".join(parts) or "no value judged yet"


def _fmt(x: float, unit: str) -> str:
    if unit in ("1", "") and float(x).is_integer():
        return f"{int(x)}"
    return format_quantity(x, unit, digits=6)


#: A simulated trial's cap splits the scenario's packets x replications into this many times more replications.
SPLIT = 16
#: ... but no replication shorter than this many packets (or the scenario's own count, when smaller).
MIN_PACKETS = 20_000
#: The first look of a simulated trial: no fewer replications than this (nor than the scenario's).
MIN_LOOK = 16


def sim_design(packets: int, replications: int, split: int = SPLIT) -> tuple[int, list[int]]:
    """(packets per replication, the looks: replication counts) of a sequential simulated trial.

    The cap spends what one ``plan`` simulation spends (``packets x replications`` packets), split into ``split``
    times as many replications of ``packets / split`` packets; the looks double from ``MIN_LOOK`` (or the
    scenario's replications, when more) to the cap. Shorter, more numerous replications estimate a mean over
    what each replication draws once (the phases of CBR calls: a replication's loss depends strongly on them;
    near an admission boundary most draws lose nothing and a few lose much) better than a few long ones, at
    equal cost; the first look is large enough that a run of loss-free draws rarely decides a value near the
    boundary on its own (with 73 % of draws loss-free there, 16 in a row happen 0.6 % of the time)."""
    per = max(packets // max(1, split), min(packets, MIN_PACKETS))
    cap = max(replications, (packets * replications) // per)
    looks, r = [], min(cap, max(replications, MIN_LOOK))
    while r < cap:
        looks.append(r)
        r *= 2
    return per, looks + [cap]


def _with_design(raw: dict, packets: int, replications: int) -> dict:
    """``raw`` with ``methods.simulated.packets`` and ``.replications`` set (the section created when absent)."""
    out = copy.deepcopy(raw)
    methods = out.setdefault("methods", {})
    sim = methods.get("simulated")
    methods["simulated"] = dict(sim or {}, packets=int(packets), replications=int(replications))
    return out


# ---- the search ----------------------------------------------------------------------------------------------

def admit(scn, parameter: str, *, direction: str | None = None, method: str | None = None,
          lo: float | None = None, hi: float | None = None, rtol: float = 1e-4, max_evals: int = 80,
          sim_rtol: float = SIM_RTOL, split: int = SPLIT, progress=None) -> AdmitResult:
    """The largest (``direction="largest"``, the default) or smallest value of ``parameter`` meeting every SLO.

    ``rtol``: the relative tolerance of a search on a deterministic method; ``sim_rtol`` on the simulator;
    ``split``: the simulated trials' design (:func:`sim_design`). The system's ``admit`` hook answers first
    (TSQ's hint selection); where it returns None the search of the module docstring varies the parameter.
    """
    system = get_system(scn.system)
    own = system.admit(scn, parameter, direction=direction, method=method, lo=lo, hi=hi, progress=progress)
    if own is not None:
        return own
    search = _Search(scn, system, parameter, direction, method, lo, hi, rtol, max_evals, sim_rtol,
                     progress or QUIET)
    search.split = split
    return search.run()


class _Search:
    """One admission search (see the module docstring); :meth:`run` returns its :class:`AdmitResult`."""

    def __init__(self, scn, system, parameter, direction, method, lo, hi, rtol, max_evals, sim_rtol, progress):
        direction = direction or "largest"
        if direction not in ("largest", "smallest"):
            raise ScenarioError(f"unknown direction '{direction}': largest or smallest", field="--direction")
        if not scn.slos:
            raise ScenarioError("the scenario has no SLOs to admit against", file=scn.path, field="slos")
        self.scn, self.system, self.parameter, self.direction = scn, system, parameter, direction
        self.lo, self.hi, self.rtol, self.max_evals, self.sim_rtol = lo, hi, rtol, max_evals, sim_rtol
        self.progress = progress
        self.raw = scn.raw
        self.written = get_path(self.raw, parameter)
        current = value_text(self.written)
        self.kind = _kind_of(current, self.raw, parameter)
        self.unit = _KIND_OF_UNIT[self.kind]
        self.x0 = parse_quantity(current, self.kind) if self.kind != "count" else float(current)
        self.integer = isinstance(current, int) and not isinstance(current, bool) and self.kind == "count"
        self.methods = system.default_methods(scn)
        self.auto = method is None
        if method is None:
            method = next((m for m in ("model-checked", "closed-form") if m in self.methods),
                          self.methods[0] if self.methods else None)
        if method is None:
            raise ScenarioError("no method is enabled", file=scn.path, field="methods")
        self.method = method
        self.bound_methods = ["closed-form"] if "closed-form" in self.methods else []
        self.skipped: list[str] = []
        self.evals = 0
        self.bound_evals = 0
        self.history: list[tuple[float, float]] = []
        self.points: dict[float, dict] = {}  # x -> judged point (by the search method, or by bounds alone)
        self.bound_points: dict[float, dict] = {}  # x -> judged on the closed forms alone
        self.cf: dict[float, list] = {}  # x -> closed-form results
        self.invalid: dict[float, str] = {}
        self.feasible: float | None = None
        self.infeasible: float | None = None
        self.bound_value: float | None = None
        self.method_seconds: list[float] = []
        self.split = SPLIT
        self.t0 = time.monotonic()

    # ---- evaluating ------------------------------------------------------------------------------------------
    def _trial(self, x: float):
        val = int(round(x)) if self.integer else x
        try:
            return build(set_path(self.raw, self.parameter, in_form(self.written, val)), self.scn.path)
        except ScenarioError as e:
            self.invalid[x] = f"{e.field + ': ' if e.field else ''}{e.problem}"
            return None

    def _evaluate(self, trial, methods: list[str]) -> list:
        return self.system.evaluate(trial, methods, self.progress)

    def _closed_forms(self, x: float, trial) -> list:
        if x not in self.cf:
            self.cf[x] = self._evaluate(trial, self.bound_methods) if self.bound_methods else []
        return self.cf[x]

    def _method_results(self, trial, cf: list, x: float) -> tuple[list, int | None]:
        """The search method's results on ``trial`` (with sequential stopping on the simulator), and the
        replications used. A method chosen by default that exceeds its resource budget (a model above
        ``max_states``) or does not cover the trial gives way to the simulator (else the closed form), with a
        note."""
        try:
            return self._run_method(trial, cf)
        except SKIPPABLE as e:
            fallback = next((m for m in ("simulated", "closed-form") if m in self.methods and m != self.method),
                            None)
            if not self.auto or fallback is None:
                raise
            self.skipped.append(f"{self.method} skipped: {e.problem}; searching with {fallback}")
            self.method = fallback
            self._status(x)
            return self._run_method(trial, cf)

    def _run_method(self, trial, cf: list) -> tuple[list, int | None]:
        if self.method == "closed-form":  # the closed forms (evaluated already, when enabled)
            return ([] if self.bound_methods else self._evaluate(trial, ["closed-form"])), None
        sim = getattr(getattr(trial, "methods", None), "simulated", None)
        packets, reps = getattr(sim, "packets", None), getattr(sim, "replications", None)
        if self.method != "simulated" or not isinstance(packets, int) or not isinstance(reps, int):
            return self._evaluate(trial, [self.method]), reps if self.method == "simulated" else None
        per, looks = sim_design(packets, reps, self.split)
        res, used = [], None
        for r in looks:
            t = build(_with_design(trial.raw, per, r), trial.path)
            res, used = self._evaluate(t, ["simulated"]), r
            if judge_point(self.system, trial, cf + res, self.scn.path)["decided"]:
                break
        return res, used

    def point(self, x: float) -> dict:
        """``x`` judged by bounds first, then the search method (cached)."""
        if x in self.points:
            return self.points[x]
        self.evals += 1
        trial = self._trial(x)
        if trial is None:
            pt = {"feasible": False, "margin": -math.inf, "binding": "", "by": "invalid", "decided": True,
                  "slos": {}, "proved": False}
        else:
            cf = self._closed_forms(x, trial)
            pt = judge_point(self.system, trial, cf, self.scn.path, bounds_only=True) if cf else None
            if pt is None or not (pt["proved"] or pt["disproved"]):
                t = time.monotonic()
                self._status(x)
                res, reps = self._method_results(trial, cf, x)
                self.method_seconds.append(time.monotonic() - t)
                pt = judge_point(self.system, trial, cf + res, self.scn.path)
                pt["replications"] = reps
        self.points[x] = pt
        self.history.append((x, pt["margin"]))
        self._record(x, pt["feasible"])
        return pt

    def bound_point(self, x: float) -> dict | None:
        """``x`` judged on the closed forms alone (cached; None for an invalid value)."""
        if x in self.bound_points:
            return self.bound_points[x]
        self.bound_evals += 1
        trial = self._trial(x)
        pt = None
        if trial is not None:
            pt = judge_point(self.system, trial, self._closed_forms(x, trial), self.scn.path, bounds_only=True)
        self.bound_points[x] = pt
        return pt

    def margin(self, x: float) -> float:
        return self.point(x)["margin"]

    # ---- reporting as it goes -----------------------------------------------------------------------------------
    def _beyond(self, x: float, y: float) -> bool:
        """Whether ``x`` lies beyond ``y`` in the search direction."""
        return x > y if self.direction == "largest" else x < y

    def _record(self, x: float, ok: bool) -> None:
        if ok and (self.feasible is None or self._beyond(x, self.feasible)):
            self.feasible = x
        if not ok and (self.infeasible is None or self._beyond(self.infeasible, x)):
            self.infeasible = x
        report_partial(self.progress, self.partial())

    def partial(self) -> dict:
        """The search so far (what an interrupted ``admit`` reports)."""
        return {"parameter": self.parameter, "direction": self.direction, "unit": self.unit, "method": self.method,
                "feasible": self.feasible, "infeasible": self.infeasible, "bound_value": self.bound_value,
                "evaluations": self.evals, "bound_evaluations": self.bound_evals,
                "history": list(self.history), "notes": list(self.skipped)}

    def _remaining(self) -> int | None:
        """Evaluations left, when the bracket is closed: the halvings down to the tolerance."""
        a, b = self.feasible, self.infeasible
        if a is None or b is None:
            return None
        tol = self._tolerance(a)
        width = abs(b - a)
        return max(0, math.ceil(math.log2(width / tol))) if width > tol > 0 else 0

    def _status(self, x: float) -> None:
        left = self._remaining()
        eta = None
        if left is not None and self.method_seconds:
            eta = left * sum(self.method_seconds) / len(self.method_seconds)
        bracket = bracket_text(self.direction, self.feasible, self.infeasible, self.unit)
        report_status(self.progress, f"admit {self.parameter} = {_fmt(x, self.unit)} ({self.method}, evaluation "
                                     f"{self.evals}); {bracket}", eta)

    def _tolerance(self, a: float) -> float:
        if self.method == "simulated":
            tol = self.sim_rtol * abs(a)
            return max(1.0, math.ceil(tol)) if self.integer else tol
        return 1.0 if self.integer else self.rtol * abs(a)

    # ---- the phases ------------------------------------------------------------------------------------------
    def _step(self, x: float) -> float:
        if x == 0:
            return 1.0 if self.direction == "largest" else -1.0
        return x * 2.0 if self.direction == "largest" else x / 2.0

    def _back(self, x: float) -> float:
        return x / 2.0 if self.direction == "largest" else x * 2.0

    def _limit(self) -> float | None:
        return self.hi if self.direction == "largest" else self.lo

    def _start(self) -> float | None:
        return self.lo if self.direction == "largest" else self.hi

    def bound_search(self) -> None:
        """Phase 1: the value up to which the closed forms prove every SLO (``self.bound_value``)."""
        if not self.bound_methods or self.method == "closed-form":
            return
        first = self.bound_point(self.x0)
        if first is None or not first["covered"]:  # an SLO no bound covers: bounds cannot decide the search
            return
        budget = self.max_evals // 2
        limit = self._limit()
        if first["proved"]:
            a, b = self.x0, None
            x = self._step(self.x0)
            while self.bound_evals < budget:
                if limit is not None and not self._beyond(limit, x):
                    x = limit
                pt = self.bound_point(x)
                if pt is not None and pt["proved"]:
                    a = x
                    if x == limit:
                        break
                    x = self._step(x)
                else:
                    b = x
                    break
        else:
            a, b = None, self.x0
            x = self._back(self.x0)
            start = self._start()
            while self.bound_evals < budget and abs(x) > 1e-300:
                if start is not None and self._beyond(start, x):
                    break
                pt = self.bound_point(x)
                if pt is not None and pt["proved"]:
                    a = x
                    break
                if pt is None:
                    break
                b = x
                x = self._back(x)
        if a is None:
            return
        if b is not None:
            while self.bound_evals < budget:
                if self.integer:
                    lo_, hi_ = (a, b) if a < b else (b, a)
                    if hi_ - lo_ <= 1:
                        break
                    mid = float((int(lo_) + int(hi_)) // 2)
                else:
                    if abs(b - a) <= self.rtol * max(abs(a), abs(b)):
                        break
                    mid = 0.5 * (a + b)
                pt = self.bound_point(mid)
                if pt is not None and pt["proved"]:
                    a = mid
                else:
                    b = mid
        self.bound_value = a
        self.bound_proofs = {n: f"{c['estimate']['method']} {c['estimate']['metric']} {c['estimate']['kind']} "
                                f"{_fmt(c['estimate']['value'], c['estimate']['unit'])}"
                             for n, c in self.bound_points[a]["slos"].items()}
        # the bound-decided value is feasible: the search method needs no evaluation there
        self.points[a] = self.bound_points[a]
        self.history.append((a, self.bound_points[a]["margin"]))
        self._record(a, True)

    def run(self) -> AdmitResult:
        self.bound_proofs = {}
        self.bound_search()
        res = self._search()
        res.notes = list(self.skipped)
        res.bound_value, res.bound_proofs = self.bound_value, dict(self.bound_proofs)
        res.bound_evaluations = self.bound_evals
        return res

    def _result(self, value, binding, message, **kw) -> AdmitResult:
        return AdmitResult(self.parameter, self.direction, value, self.unit, self.method, binding, self.evals,
                           list(self.history), message, **kw)

    def _search(self) -> AdmitResult:
        """Phase 2: bracket along the direction from the best known feasible value, then refine."""
        sign = 1.0 if self.direction == "largest" else -1.0
        start = self.bound_value if self.bound_value is not None else self.x0
        fa = self.margin(start)
        limit = self._limit()
        if fa >= 0:
            a = start
            if limit is None:
                b = self._step(a)
                fb = self.margin(b)
                while fb >= 0 and self.evals < self.max_evals // 2:
                    a, fa = b, fb
                    b = self._step(b)
                    fb = self.margin(b)
                if fb >= 0:  # no SLO binds: name the tightest at the end, not as a binding SLO
                    return self._final(b, self._unbound("every SLO still holds at the end of the search range", b),
                                       edge=True)
            else:
                b = limit
                fb = self.margin(b)
                if fb >= 0:
                    return self._final(b, self._unbound("every SLO holds up to the given limit", b), edge=True)
        else:
            b, fb = start, fa
            a = self._start()
            if a is None:
                a = self._back(start)
                fa = self.margin(a)
                # Stop where the scenario itself becomes invalid (e.g. min_th >= max_th): no smaller value helps.
                while fa < 0 and a not in self.invalid and self.evals < self.max_evals // 2 and abs(a) > 1e-300:
                    b, fb = a, fa
                    a = self._back(a)
                    fa = self.margin(a)
            else:
                fa = self.margin(a)
            if fa < 0:
                why = "no value in the search range meets every SLO"
                if a in self.invalid:
                    why += (f"; at {self.parameter} = {a:g}{' ' + self.unit if self.unit != '1' else ''} the scenario "
                            f"is invalid ({self.invalid[a]})")
                return self._result(None, self.points[a]["binding"] if a in self.points else "", why)
        # Refine between feasible a and infeasible b.
        if self.integer:
            a, b = int(math.floor(a)) if sign > 0 else int(math.ceil(a)), int(round(b))
            while abs(b - a) > self._tolerance(a) and self.evals < self.max_evals:
                mid = (a + b) // 2
                if self.margin(float(mid)) >= 0:
                    a = mid
                else:
                    b = mid
            best = float(a)
        elif self.method == "simulated":
            best = self._bisect(a, b, lambda v: self.sim_rtol)
        elif math.isfinite(fb) and fa > 0:
            # brentq needs a sign change; where the margin is exactly 0 over a stretch (an SLO met with equality,
            # e.g. gTFRC's rate pinned at its target) it would stop at the bracket's end, so bisect on feasibility.
            from scipy.optimize import brentq

            try:
                best = brentq(self.margin, a, b, rtol=self.rtol, maxiter=self.max_evals)
                if self.margin(best) < 0:
                    # brentq stops within rtol * |best| of the root, possibly on the infeasible side: step back by
                    # twice that towards the feasible end, or bisect on feasibility when even that fails
                    back = best + math.copysign(2.0 * self.rtol * abs(best) + 1e-12, a - best)
                    if (back - a) * (best - a) > 0 and self.margin(back) >= 0:
                        best = back
                    else:
                        best = self._bisect(a, best, lambda v: self.rtol)
            except (ValueError, RuntimeError):
                best = self._bisect(a, b, lambda v: self.rtol)
        else:
            best = self._bisect(a, b, lambda v: self.rtol)
        return self._final(best, "")

    def _last_valid(self, best: float, invalid: float) -> float:
        """Where the boundary is the scenario's own validity (e.g. utilisation 1), not an SLO, it is found
        exactly: bisection on validity alone (building the scenario, no evaluation) to one unit of an integer
        parameter (``rtol`` otherwise), then the last valid value is judged; the answer if it is feasible."""
        a, b = best, invalid
        step = 1.0 if self.integer else self.rtol * max(abs(a), abs(b))
        while abs(b - a) > step and self.evals < self.max_evals:
            mid = float((int(a) + int(b)) // 2) if self.integer else 0.5 * (a + b)
            if mid in (a, b):
                break
            if self._trial(mid) is None:
                self.history.append((mid, -math.inf))
                b = mid
            else:
                a = mid
        if a != best and self.margin(a) >= 0:
            return a
        return best

    def _unbound(self, message: str, x: float) -> str:
        """The answer at the end of the range, where no SLO binds: the message and the tightest SLO there."""
        pt = self.points.get(x) or {}
        name, margin = pt.get("binding", ""), pt.get("margin", math.nan)
        if not name or not math.isfinite(margin):
            return message
        return f"{message}; the tightest there: {name} ({100 * margin:.3g} % of its limit to spare)"

    def _bisect(self, a, b, rtol) -> float:
        return _bisect(self.margin, a, b, rtol(a), self.max_evals)

    def _final(self, best: float, message: str, edge: bool = False) -> AdmitResult:
        """The answer at ``best``: the binding SLO (the one that fails at the nearest infeasible value evaluated
        beyond it), what decided it, and that SLO's estimate there."""
        sign = 1.0 if self.direction == "largest" else -1.0
        beyond = [(abs(x - best), x) for x, m in self.history if m < 0 and (x - best) * sign > 0]
        nearest = min(beyond)[1] if beyond else None
        if nearest is not None and nearest in self.invalid:
            best = self._last_valid(best, nearest)
            beyond = [(abs(x - best), x) for x, m in self.history if m < 0 and (x - best) * sign > 0]
            nearest = min(beyond)[1] if beyond else None
        name = ""
        if nearest is not None and nearest in self.invalid:
            # The boundary is where the scenario stops being valid, not where an SLO fails: say so.
            unit = self.unit
            message = (f"beyond it the scenario is invalid (at {nearest:g}{' ' + unit if unit != '1' else ''}: "
                       f"{self.invalid[nearest]})")
        elif nearest is not None:
            name = self.points[nearest]["binding"]
        elif not edge:
            name = self.points[best]["binding"] if best in self.points else ""
        at = self.points.get(best)
        if at is None:  # pragma: no cover - the answer is always an evaluated value
            at = self.point(best)
        estimate = None
        if name and name in at["slos"]:
            estimate = at["slos"][name]["estimate"]
        elif at["slos"]:
            estimate = at["slos"][at["binding"]]["estimate"]
        decided = "bound" if at.get("proved") else at["by"]
        if decided != "bound" and at["slos"] and not at.get("decided", True):
            message = "; ".join(x for x in (message, "at the answer an SLO's interval still straddles its limit at "
                                            "the replication cap: judged by the point estimate") if x)
        return self._result(best, name, message, decided_by=decided, estimate=estimate,
                            infeasible=nearest if nearest is not None else None)


def _bisect(f, a, b, rtol, max_evals):
    """Bisection on feasibility (``f(x) >= 0``) between a feasible ``a`` and an infeasible ``b``, down to ``rtol``
    relative; the last feasible point."""
    for _ in range(max_evals):
        if abs(b - a) <= rtol * max(abs(a), abs(b)):
            break
        mid = 0.5 * (a + b)
        if f(mid) >= 0:
            a = mid
        else:
            b = mid
    return a
