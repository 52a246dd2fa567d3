"""AF checks the generic agreement rule cannot express: drop-precedence ordering (RFC 2597) with a load sweep,
and Storm against the direct SciPy solution of the same chain."""

from __future__ import annotations

from qosbound.analytic.red_queue import solve
from qosbound.results import Result, Verdict
from qosbound.systems.af.inputs import approximation
from qosbound.systems.af.queue_inputs import class_inputs
from qosbound.systems.af.schema import Scenario

__all__ = ["ordering_sweep", "agreements"]


def _ordering_values(results: list[Result], cls: str, method: str):
    by = {r.metric: r for r in results if r.method == method}
    rs = [by.get(f"{cls}.drop.{cls}{k}") for k in (1, 2, 3)]
    return rs if all(r is not None for r in rs) else None


def ordering_sweep(scn: Scenario, cls: str, loads: list[float]) -> tuple[float | None, list[tuple[float, list]]]:
    """Per-precedence drop probabilities (closed form) at multiples of the offered load of ``cls``.

    Returns the first load multiple where drop(X3) >= drop(X2) >= drop(X1) fails (None if it never does)
    and the sweep. RIO and n-RED with a buffer over 40 packets use the fixed-average approximation here.
    """
    ci = next(c for c in class_inputs(scn) if c.name == cls)
    approx = approximation(scn, ci)
    if approx == "instantaneous" and ci.profile.mode != "wred" and ci.K > 40:
        approx = "fixed-average"
    first = None
    sweep = []
    for x in loads:
        sol = solve(ci.lam * x, ci.mu, ci.K, ci.profile, approx)
        d = sol.drop
        sweep.append((x, [float(v) for v in d]))
        if first is None and not (d[2] >= d[1] - 1e-9 and d[1] >= d[0] - 1e-9):
            first = x
    return first, sweep


def agreements(scn: Scenario, results: list[Result]) -> list[Verdict]:
    """Checks the generic agreement rule cannot express: the drop-precedence ordering per class and method
    (with the closed form's load sweep), and Storm against the direct SciPy solution of the same chain."""
    out: list[Verdict] = []
    methods = sorted({r.method for r in results})
    for cls in scn.classes:
        for method in methods:
            rs = _ordering_values(results, cls, method)
            if rs is None:
                continue
            d = [r.value for r in rs]
            slack = 1e-9
            if method in ("simulated", "ns-3", "trace"):
                se = [float(r.provenance.get("std_error", 0.0)) for r in rs]
                slack = 3.0 * max(se)
            ok = d[2] >= d[1] - slack and d[1] >= d[0] - slack
            margin = min(d[2] - d[1], d[1] - d[0])
            detail = ""
            if method == "closed-form" and scn.ordering.enabled:
                first, _ = ordering_sweep(scn, cls, scn.ordering.loads)
                detail = (f"load sweep x{scn.ordering.loads[0]:g}..x{scn.ordering.loads[-1]:g}: "
                          + ("ordering holds at every load" if first is None else f"first breaks at x{first:g} load"))
            # RFC 2597 requires the drop precedences to be honoured: a property of the configuration judged on
            # each method's results, so it is an objective (kind "slo": a violation exits 1), not an agreement.
            out.append(Verdict("slo", f"{cls}: drop({cls}3) >= drop({cls}2) >= drop({cls}1) (RFC 2597)",
                               f"{cls}.drop", method, "holds" if ok else "violated",
                               d[2], d[0], "1", margin,
                               (detail + ("; " if detail and not ok else "")
                                + ("" if ok else f"drops {d[0]:.4g}, {d[1]:.4g}, {d[2]:.4g}")).strip()))
    # Storm against the direct SciPy solution of the same chain, one verdict per class.
    for cls in scn.classes:
        rs = [r for r in results if r.method == "model-checked" and r.metric.startswith(f"{cls}.drop.")
              and "direct_solution" in r.provenance]
        if not rs:
            continue
        diffs = [abs(r.value - r.provenance["direct_solution"]["drop"][int(r.metric[-1]) - 1]) for r in rs]
        worst = max(diffs)
        tol = 1e-5  # the engine's float route: errors up to ~2e-6 absolute measured on these chains
        ok = worst <= tol
        out.append(Verdict("agreement", f"{cls}: Storm equals the direct SciPy solution of the same chain",
                           f"{cls}.drop", "model-checked vs SciPy", "agree" if ok else "disagree", worst, tol, "1",
                           tol - worst, f"largest difference over the three drop probabilities: {worst:.3g}"))
    # Simulated vs model-checked (and every other pair of methods) is the generic rule's
    # (qosbound.agreement.agreements), driven by each result's kind.
    return out
