"""The admission search itself (:class:`Search`): the bound-decided phase on the closed forms, then bracketing
along the direction and refining by root finding or bisection, with sequential stopping on the simulator
(:func:`sim_design`) and the progress it reports as it goes. The method is :mod:`qosbound.admit`'s docstring."""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field

from qosbound.admit_parameter import UNIT_OF_KIND, value_kind
from qosbound.admit_point import judge_point
from qosbound.errors import SKIPPABLE, ScenarioError
from qosbound.parameter_path import get_path, set_path
from qosbound.progress import report_partial, report_status
from qosbound.scenario import build, in_form, value_text
from qosbound.units import format_quantity, parse_quantity

__all__ = ["AdmitResult", "Search", "SIM_RTOL", "SPLIT", "MIN_PACKETS", "MIN_LOOK", "sim_design", "bracket_text",
           "bisect_root", "WALK_SINGLE"]

#: Relative tolerance of a search on the simulator (its noise is larger than this near a boundary).
SIM_RTOL = 0.005
#: Steps (doublings or halvings) the bracketing walk takes one at a time before its stride doubles (Search._walk).
WALK_SINGLE = 3


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



class Search:
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
        self.kind = value_kind(current, self.raw, parameter)
        self.unit = UNIT_OF_KIND[self.kind]
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
        found = self._bracket()
        if isinstance(found, AdmitResult):  # no SLO binds in the range, or no value meets them all
            return found
        return self._final(self._refine(*found), "")

    def _bracket(self) -> AdmitResult | tuple[float, float, float, float]:
        """(feasible a, infeasible b, their margins) from the best known feasible value along the direction, or
        the answer when the range's end is feasible or no value in it is."""
        start = self.bound_value if self.bound_value is not None else self.x0
        fa = self.margin(start)
        limit = self._limit()
        if fa >= 0:
            a = start
            if limit is None:
                a, b = self._walk(start, self._step, lambda x: self.margin(x) < 0)
                fa, fb = self.margin(a), self.margin(b)  # judged already (kept in self.points)
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
                # Stop where the scenario itself becomes invalid (e.g. min_th >= max_th): no smaller value helps.
                b, a = self._walk(start, self._back,
                                  lambda x: self.margin(x) >= 0 or x in self.invalid or abs(x) <= 1e-300)
                fb, fa = self.margin(b), self.margin(a)
            else:
                fa = self.margin(a)
            if fa < 0:
                why = "no value in the search range meets every SLO"
                if a in self.invalid:
                    why += (f"; at {self.parameter} = {a:g}{' ' + self.unit if self.unit != '1' else ''} the scenario "
                            f"is invalid ({self.invalid[a]})")
                return self._result(None, self.points[a]["binding"] if a in self.points else "", why)
        return a, b, fa, fb

    def _walk(self, start: float, move, stops) -> tuple[float, float]:
        """The point where the walk ``start, move(start), move(move(start)), ...`` first ``stops`` (judging it),
        with the point before it: ``(previous, stopping)``; where no point stops before the walk's budget ends
        (``max_evals // 2`` evaluations in all, counted as a walk of single steps would spend them), the last
        two points of that walk.

        The first :data:`WALK_SINGLE` steps are taken one at a time (most answers lie within a factor 8 of the
        start); then the stride doubles (2, 4, 8, ... steps) until a point stops, and bisection on the step
        count finds the first point that does. Where stopping is monotone along the walk (once a point stops,
        every later one does: the premise of any bracket), this is exactly the pair a walk of single steps
        finds -- the same floats, since doubling and halving are exact in binary floating point -- in
        ``O(log k)`` judgements instead of ``k``: an SLO no value meets is reported after about a dozen
        evaluations instead of forty. Where it is not monotone (a simulated margin's noise), the pair is still
        adjacent points on either side of the stop, so a valid bracket."""
        xs = [start]

        def at(k: int) -> float:
            while len(xs) <= k:
                xs.append(move(xs[-1]))
            return xs[k]

        if stops(at(1)):
            return start, at(1)
        end = max(1, self.max_evals // 2 - self.evals + 1)  # the last step a walk of single steps would judge
        lo, stride = 1, 1
        while lo < end:
            hi = min(end, lo + stride)
            if stops(at(hi)):
                break
            lo = hi
            if lo >= WALK_SINGLE:
                stride *= 2
        else:
            return at(end - 1), at(end)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if stops(at(mid)):
                hi = mid
            else:
                lo = mid
        return at(hi - 1), at(hi)

    def _refine(self, a: float, b: float, fa: float, fb: float) -> float:
        """The boundary between feasible ``a`` and infeasible ``b``: bisection for an integer parameter or the
        simulator, else SciPy's ``brentq`` on the margin where it changes sign."""
        sign = 1.0 if self.direction == "largest" else -1.0
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
            from scipy.optimize import brentq  # costly (SciPy's root finders): only on a bracket to refine

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
        return best

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
        return bisect_root(self.margin, a, b, rtol(a), self.max_evals)

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


def bisect_root(f, a, b, rtol, max_evals):
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
