"""Checks across a port's results that the generic agreement rule (:mod:`qosbound.agreement`) cannot express.

* Drop precedence (RFC 2597, as ``af`` judges it): in a class whose DSCPs are AF codepoints of increasing drop
  precedence under a RED-family dropper, each method's drop probabilities must not decrease with the
  precedence. A property of the configuration, so a verdict of kind ``slo`` (a violation exits 1).
* Storm against the direct SciPy solution of the same dropper chain, per weighted class (a check of the
  engines, kind ``agreement``).

Everything else -- a bound against every estimate of a metric it bounds, an estimate against another within
the intervals their kinds give, per class -- is the generic rule's, driven by each result's kind.
"""

from __future__ import annotations

from qosbound.results import Result, Verdict
from qosbound import dscp
from qosbound.systems.port.elements import Port

__all__ = ["agreements", "ordered_precedences"]


def ordered_precedences(c) -> list[str] | None:
    """The class's DSCPs if they are AF codepoints of one AF class in increasing drop precedence (and there are
    two or more) under a RED-family dropper, else None."""
    if not c.dropper.red or len(c.precedences) < 2:
        return None
    levels = [dscp.af_drop_precedence(p) for p in c.precedences]
    if None in levels or levels != sorted(levels) or len(set(levels)) != len(levels):
        return None
    if len({p[:3] for p in c.precedences}) != 1:
        return None
    return list(c.precedences)


def _ordering(port: Port, results: list[Result]) -> list[Verdict]:
    out = []
    methods = sorted({r.method for r in results})
    for c in port.active:
        prec = ordered_precedences(c)
        if prec is None:
            continue
        for method in methods:
            by = {r.metric: r for r in results if r.method == method}
            rs = [by.get(f"{c.name}.drop.{p}") for p in prec]
            if any(r is None for r in rs):
                continue
            d = [r.value for r in rs]
            slack = 1e-9
            if method in ("simulated", "ns-3", "trace"):
                slack = 3.0 * max(float(r.provenance.get("std_error", 0.0)) for r in rs)
            ok = all(d[k + 1] >= d[k] - slack for k in range(len(d) - 1))
            margin = min(d[k + 1] - d[k] for k in range(len(d) - 1))
            out.append(Verdict("slo", f"{c.name}: drop({') >= drop('.join(reversed(prec))}) (RFC 2597)",
                               f"{c.name}.drop", method, "holds" if ok else "violated", d[-1], d[0], "1", margin,
                               "" if ok else "drops " + ", ".join(f"{x:.4g}" for x in d)))
    return out


def _storm_vs_scipy(port: Port, results: list[Result]) -> list[Verdict]:
    out = []
    for c in port.weighted:
        rs = [r for r in results if r.method == "model-checked" and r.metric.startswith(f"{c.name}.drop.")
              and "direct_solution" in r.provenance]
        if not rs:
            continue
        diffs = []
        for r in rs:
            sol = r.provenance["direct_solution"]
            k = sol["precedences"].index(r.metric[len(f"{c.name}.drop."):])
            diffs.append(abs(r.value - sol["drop"][k]))
        worst = max(diffs)
        tol = 1e-5  # the engine's float route: errors up to ~2e-6 absolute measured on these chains (as af)
        ok = worst <= tol
        out.append(Verdict("agreement", f"{c.name}: Storm equals the direct SciPy solution of the same chain",
                           f"{c.name}.drop", "model-checked vs SciPy", "agree" if ok else "disagree", worst, tol, "1",
                           tol - worst, f"largest difference over the drop probabilities: {worst:.3g}"))
    return out


def agreements(port: Port, results: list[Result]) -> list[Verdict]:
    """The port's own checks (module docstring)."""
    return _ordering(port, results) + _storm_vs_scipy(port, results)
