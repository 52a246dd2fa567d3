"""TSQ checks the generic agreement rule cannot express."""

from __future__ import annotations

from qosbound.results import Result, Verdict
from qosbound.systems.tsq.metrics import GAIN_TOLERANCE
from qosbound.systems.tsq.schema import Scenario

__all__ = ["agreements"]


def agreements(scn: Scenario, results: list[Result]) -> list[Verdict]:
    """The TSQ checks the generic rule (qosbound.agreement) cannot express.

    * The model's insertion point against the closed form's ``q' = d q/2^n``: in the model a hint-d packet
      finding k packets gets ``q' = ceil(d k/2^n)`` slots, so its mean satisfies
      ``d/2^n <= E[q']/E[k] < d/2^n + 1/E[k]`` exactly (the ceiling adds less than one slot). A model built
      for another number of hints than the scenario's fails this.
    * The aging bound against the simulated maximum delay (an upper bound against an observed maximum, a
      lower bound: the generic rule compares bounds with estimates only).
    * The MDP's throughput gain occurs only where the cap ``p' = 1`` is reachable (Claypool, Kinicki & Kumar eq. (5)).
    """
    by = {(r.metric, r.method): r for r in results}
    out: list[Verdict] = []
    H = 2 ** scn.tsq.hint_bits
    for (metric, method), r in sorted(by.items()):
        if method != "model-checked" or not metric.endswith(".delay.mean") or not scn.tsq.enabled:
            continue
        cf = by.get((metric, "closed-form"))
        pv = r.provenance
        tail, ins, d = pv.get("mean_tail_slots"), pv.get("mean_qdelay_slots"), pv.get("hint")
        if cf is None or tail is None or ins is None or d is None or tail <= 0:
            continue
        ratio, lo, hi = ins / tail, d / H, d / H + 1.0 / tail
        slack = 1e-9 * max(1.0, hi)
        ok = lo - slack <= ratio < hi + slack
        detail = (f"model E[q']/E[k] = {ins:.6g}/{tail:.6g} slots = {ratio:.6g}; closed form q'/q = d/2^n = "
                  f"{d}/{H}; the model's rounding (ceil, < 1 slot) allows [{lo:.6g}, {hi:.6g})")
        if not ok:
            detail += f" -- the model inserts as if with {pv.get('hints')} hints, the scenario has {H}"
        out.append(Verdict("agreement", f"insertion point q'/q = d/2^n ({metric[: -len('.delay.mean')]})", metric,
                           "closed-form vs model-checked", "agree" if ok else "disagree", ratio, d / H, "1",
                           min(ratio - lo, hi - ratio), detail))
    for (metric, method), r in sorted(by.items()):
        if method != "simulated" or not metric.endswith(".delay.max"):
            continue
        b = by.get((metric[: -len(".max")] + ".bound", "closed-form"))
        if b is None:
            continue
        ok = r.value <= b.value * (1 + 1e-9)
        out.append(Verdict("agreement", f"aging bound >= simulated maximum ({metric[:-10]})", metric,
                           "closed-form vs simulated", "agree" if ok else "disagree", r.value, b.value, "s",
                           b.value - r.value, "closed-form upper bound against the largest simulated delay"))
    g = by.get(("tsq.gain", "model-checked"))
    if g is not None:
        gain = g.value > GAIN_TOLERANCE
        capped = bool(g.provenance.get("capped_reachable"))
        ok = (not gain) or capped
        out.append(Verdict("agreement", "a throughput gain occurs only where the cap p' = 1 is reachable",
                           "tsq.gain", "model-checked vs closed-form", "agree" if ok else "disagree", g.value,
                           GAIN_TOLERANCE, "1", GAIN_TOLERANCE - g.value if not capped else None,
                           "" if ok else "the MDP finds a gain outside the closed-form cap region"))
    return out
