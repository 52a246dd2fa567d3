"""Verdicts of observed estimates (a trace, ns-3 or the simulator) against the reference results of a run."""

from __future__ import annotations

from qosbound.agreement import agreements
from qosbound.results import Result, Verdict

__all__ = ["compare"]


def compare(reference: list[Result], observed: list[Result], *, family_confidence: float = 0.99) -> list[Verdict]:
    """Verdicts of the observed estimates (one method: trace, ns-3 or simulated) against the reference results.

    This is :func:`qosbound.agreement.agreements` on both lists together (family-wise over every statistical
    check of the run), keeping the verdicts that involve the observed method.
    """
    methods = {r.method for r in observed}
    out = agreements(list(reference) + list(observed), family_confidence=family_confidence)
    return [v for v in out if any(m in v.method.split(" vs ") for m in methods)]
