"""Admission control: the largest (or smallest) value of one scenario parameter for which every SLO holds.

The scenario is re-validated for each trial value; a value that makes the
scenario invalid (e.g. utilisation >= 1) counts as infeasible. The feasible
region is bracketed by doubling (or halving) from the current value, then the
boundary is found with SciPy's ``brentq`` on the smallest normalised SLO margin
where that margin is continuous and changes sign, and by bisection on
feasibility otherwise (e.g. when an SLO holds with equality over a stretch).
The search assumes feasibility is monotone in the parameter over the bracket.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from qosbound.errors import SKIPPABLE, ScenarioError
from qosbound.scenario import build, get_path, in_form, parameter_kind, set_path, value_text
from qosbound.systems import get_system
from qosbound.units import parse_quantity
from qosbound.verdicts import judge_slos

__all__ = ["AdmitResult", "admit", "normalised_margin", "search_range", "worst_margin"]


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


def admit(scn, parameter: str, *, direction: str | None = None, method: str | None = None,
          lo: float | None = None, hi: float | None = None, rtol: float = 1e-4, max_evals: int = 80,
          progress=None) -> AdmitResult:
    """The largest (``direction="largest"``, the default) or smallest value of ``parameter`` meeting every SLO.

    The system's ``admit`` hook answers first (TSQ's hint selection); where it returns None the generic
    search below varies the parameter.
    """
    system = get_system(scn.system)
    own = system.admit(scn, parameter, direction=direction, method=method, lo=lo, hi=hi, progress=progress)
    if own is not None:
        return own
    direction = direction or "largest"
    if direction not in ("largest", "smallest"):
        raise ScenarioError(f"unknown direction '{direction}': largest or smallest", field="--direction")
    if not scn.slos:
        raise ScenarioError("the scenario has no SLOs to admit against", file=scn.path, field="slos")
    raw = scn.raw
    written = get_path(raw, parameter)
    current = value_text(written)
    kind = _kind_of(current, raw, parameter)
    x0 = parse_quantity(current, kind) if kind != "count" else float(current)
    integer = isinstance(current, int) and not isinstance(current, bool) and kind == "count"
    methods = system.default_methods(scn)
    auto = method is None
    if method is None:
        method = next((m for m in ("model-checked", "closed-form") if m in methods), methods[0] if methods else None)
    if method is None:
        raise ScenarioError("no method is enabled", file=scn.path, field="methods")

    def with_closed_form(m: str) -> list[str]:
        # SLOs the chosen method cannot judge (e.g. a worst-case bound) are judged by the closed form (cheap).
        return [m] + (["closed-form"] if m != "closed-form" and "closed-form" in methods else [])

    used = with_closed_form(method)
    skipped: list[str] = []
    evals = 0
    history: list[tuple[float, float]] = []
    binding = {"name": ""}
    worst_name: dict[float, str] = {}
    invalid: dict[float, str] = {}  # trial value -> why the scenario is invalid there

    def done(res: AdmitResult) -> AdmitResult:
        res.notes = list(skipped)
        return res

    def evaluate(trial):
        """The trial by the search's methods; a method chosen by default that exceeds its resource budget (a
        model above ``max_states``) or does not cover the trial (a BE load) gives way to the simulator (else the
        closed form), with a note."""
        nonlocal method, used
        from qosbound.progress import QUIET

        try:
            return system.evaluate(trial, used, progress or QUIET)
        except SKIPPABLE as e:
            fallback = next((m for m in ("simulated", "closed-form") if m in methods and m != method), None)
            if not auto or fallback is None:
                raise
            skipped.append(f"{method} skipped: {e.problem}; searching with {fallback}")
            method, used = fallback, with_closed_form(fallback)
            return system.evaluate(trial, used, progress or QUIET)

    def margin(x: float) -> float:
        nonlocal evals
        evals += 1
        val = int(round(x)) if integer else x
        try:
            trial = build(set_path(raw, parameter, in_form(written, val)), scn.path)
        except ScenarioError as e:
            history.append((x, -math.inf))
            invalid[x] = f"{e.field + ': ' if e.field else ''}{e.problem}"
            return -math.inf
        results = evaluate(trial)
        worst, name = worst_margin(judge_slos(system, trial, results), used, scn.path)
        if name:
            binding["name"] = name
        history.append((x, worst))
        worst_name[x] = binding["name"]
        return worst

    sign = 1.0 if direction == "largest" else -1.0
    step = 2.0
    f0 = margin(x0)
    # Bracket: find a feasible a and an infeasible b along the search direction.
    if f0 >= 0:
        a, fa = x0, f0
        b = hi if (hi is not None and direction == "largest") else (lo if (lo is not None and direction == "smallest") else None)
        if b is None:
            b = x0 * step if sign > 0 else x0 / step
            if x0 == 0:
                b = 1.0 if sign > 0 else -1.0
            fb = margin(b)
            while fb >= 0 and evals < max_evals // 2:
                a, fa = b, fb
                b = b * step if sign > 0 else b / step
                fb = margin(b)
            if fb >= 0:  # no SLO binds: name the tightest at the end, not as a binding SLO
                return done(AdmitResult(parameter, direction, b, _KIND_OF_UNIT[kind], method, "", evals, history,
                                        _unbound("every SLO still holds at the end of the search range", b, fb,
                                                 worst_name)))
        else:
            fb = margin(b)
            if fb >= 0:
                return done(AdmitResult(parameter, direction, b, _KIND_OF_UNIT[kind], method, "", evals, history,
                                        _unbound("every SLO holds up to the given limit", b, fb, worst_name)))
    else:
        b, fb = x0, f0
        a = lo if (lo is not None and direction == "largest") else (hi if (hi is not None and direction == "smallest") else None)
        if a is None:
            a = x0 / step if sign > 0 else x0 * step
            fa = margin(a)
            # Stop where the scenario itself becomes invalid (e.g. min_th >= max_th): no smaller value can help.
            while fa < 0 and a not in invalid and evals < max_evals // 2 and abs(a) > 1e-300:
                b, fb = a, fa
                a = a / step if sign > 0 else a * step
                fa = margin(a)
        else:
            fa = margin(a)
        if fa < 0:
            why = "no value in the search range meets every SLO"
            if a in invalid:
                unit = _KIND_OF_UNIT[kind]
                why += (f"; at {parameter} = {a:g}{' ' + unit if unit != '1' else ''} the scenario is invalid "
                        f"({invalid[a]})")
            return done(AdmitResult(parameter, direction, None, _KIND_OF_UNIT[kind], method, binding["name"], evals,
                               history, why))
    # Refine between feasible a and infeasible b.
    if integer:
        a, b = int(math.floor(a)) if sign > 0 else int(math.ceil(a)), int(round(b))
        while abs(b - a) > 1 and evals < max_evals:
            mid = (a + b) // 2
            if margin(mid) >= 0:
                a = mid
            else:
                b = mid
        best = float(a)
    elif math.isfinite(fb) and fa > 0:
        # brentq needs a sign change; where the margin is exactly 0 over a stretch (an SLO met with equality,
        # e.g. gTFRC's rate pinned at its target) it would stop at the bracket's end, so bisect on feasibility.
        from scipy.optimize import brentq

        try:
            best = brentq(margin, a, b, rtol=rtol, maxiter=max_evals)
            if margin(best) < 0:
                # brentq stops within rtol * |best| of the root, possibly on the infeasible side: step back by
                # twice that towards the feasible end, or bisect on feasibility when even that fails
                back = best + math.copysign(2.0 * rtol * abs(best) + 1e-12, a - best)
                if (back - a) * (best - a) > 0 and margin(back) >= 0:
                    best = back
                else:
                    best = _bisect(margin, a, best, rtol, max_evals)
        except (ValueError, RuntimeError):
            best = _bisect(margin, a, b, rtol, max_evals)
    else:
        best = _bisect(margin, a, b, rtol, max_evals)
    # The binding SLO is the one that fails at the nearest infeasible point evaluated beyond the answer.
    beyond = [(abs(x - best), x) for x, m in history if m < 0 and (x - best) * sign > 0]
    message = ""
    if beyond and min(beyond)[1] in invalid:
        # The boundary is where the scenario stops being valid, not where an SLO fails: say so.
        x = min(beyond)[1]
        unit = _KIND_OF_UNIT[kind]
        message = f"beyond it the scenario is invalid (at {x:g}{' ' + unit if unit != '1' else ''}: {invalid[x]})"
        name = ""
    else:
        name = worst_name[min(beyond)[1]] if beyond else binding["name"]
    return done(AdmitResult(parameter, direction, best, _KIND_OF_UNIT[kind], method, name, evals, history, message))


def _unbound(message: str, x: float, margin: float, names: dict) -> str:
    """The answer at the end of the range, where no SLO binds: the message and the tightest SLO there."""
    name = names.get(x, "")
    return f"{message}; the tightest there: {name} ({100 * margin:.3g} % of its limit to spare)" if name else message


def _bisect(f, a, b, rtol, max_evals):
    for _ in range(max_evals):
        if abs(b - a) <= rtol * max(abs(a), abs(b)):
            break
        mid = 0.5 * (a + b)
        if f(mid) >= 0:
            a = mid
        else:
            b = mid
    return a
