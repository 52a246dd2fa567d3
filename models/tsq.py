"""Storm glue for the TSQ models: per-hint delay/drop (DTMC) and the hint-choosing MDP.

``models/tsq_hint.prism`` (DTMC) and ``models/tsq.prism`` (MDP) share a slotted
abstraction of the bottleneck (see their headers): slot = one packet's
transmission time, two Bernoulli sources of hint-2^n packets, a proportional
AQM ``pb(k) = p_lo + (p_hi - p_lo) k / N``. :func:`abstraction` maps a TSQ
scenario's operating point onto it: ``pb`` passes through the equilibrium drop
``p*`` at the PI target ``q_ref`` and the arrival probability makes the drift
zero there, so the chain centres on ``q_ref`` as PI does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qosbound.models import engine

__all__ = ["HINT_MODEL", "HINT_PROPS", "MDP_MODEL", "MDP_PROPS", "Abstraction", "abstraction", "hint_values",
           "hint_distribution", "no_gain", "transition_matrix", "stationary_scipy"]

HINT_MODEL = engine.MODELS_DIR / "tsq_hint.prism"
HINT_PROPS = engine.MODELS_DIR / "tsq_hint.props"
MDP_MODEL = engine.MODELS_DIR / "tsq.prism"
MDP_PROPS = engine.MODELS_DIR / "tsq.props"


@dataclass(frozen=True)
class Abstraction:
    """Constants of the slotted models (slots, probabilities) and the slot length in seconds."""

    N: int
    lam: float
    p_lo: float
    p_hi: float
    l: float  # slots
    slot: float  # s

    def constants(self) -> dict:
        return {"N": int(self.N), "lam": float(self.lam), "p_lo": float(self.p_lo), "p_hi": float(self.p_hi),
                "l": float(self.l)}


def abstraction(capacity: float, size: float, q_max: int, q_ref: float, p_star: float, latency: float,
                p_floor_ratio: float = 0.1) -> Abstraction:
    """Slotted abstraction centred on (q_ref, p*): pb(q_ref) = p*, drift 2 lam (1 - p*) - 1 = 0 there."""
    if not 0 < p_star < 0.5:
        raise ValueError(f"equilibrium drop probability {p_star:.4g} is outside (0, 0.5): no abstraction")
    slot = size * 8.0 / capacity
    p_lo = p_star * p_floor_ratio
    p_hi = min(1.0, p_lo + (p_star - p_lo) * q_max / q_ref)
    lam = 1.0 / (2.0 * (1.0 - p_star))
    return Abstraction(int(q_max), lam, p_lo, p_hi, latency / slot, slot)


def hint_values(ab: Abstraction, hint: int, precision: float = 1e-10):
    """Storm: the DTMC's long-run properties for one hint (values in slots / probabilities)."""
    return engine.check(HINT_MODEL, HINT_PROPS, {**ab.constants(), "d": int(hint)}, precision=precision)


def hint_distribution(ab: Abstraction, hint: int):
    """Queueing-delay distribution (slots) of an accepted hint-d packet: Storm's steady state pushed through q'.

    Returns ``(delays, probabilities, built)``; the probabilities are weighted by acceptance 1 - p'.
    """
    vals, pi, built = engine.steady_state(HINT_MODEL, {**ab.constants(), "d": int(hint)}, ["k"])
    k = vals["k"].astype(float)
    qprime, pprime = _qp(ab, k, hint)
    w = pi * (1.0 - pprime)
    delays = np.unique(qprime)
    probs = np.array([w[qprime == x].sum() for x in delays]) / w.sum()
    return delays, probs, built


def _qp(ab: Abstraction, k: np.ndarray, hint: int, H: int = 16):
    """q' and p' of the models' formulas (kept beside the models for the cross-engine check)."""
    from qosbound.analytic.tsq import adjusted_drop

    qprime = np.minimum(k, np.ceil(hint * k / H))
    pb = ab.p_lo + (ab.p_hi - ab.p_lo) * k / ab.N
    return qprime, adjusted_drop(k, qprime, pb, ab.l)


def no_gain(ab: Abstraction, precision: float = 1e-10, goodput: bool = False) -> dict:
    """Storm on the MDP: the best square-root-law throughput over hint policies, versus FIFO.

    The FIFO value is policy-independent: it is the same long-run average on the background chain,
    computed from Storm's steady state of the DTMC and the square-root law of analytic/tsq.py (one MDP
    LRA query is the expensive part). ``goodput=True`` also checks the accepted-fraction rewards.
    """
    from qosbound.analytic.tsq import throughput

    props = [("max_sqrt_law", 'R{"sqrt_law"}max=? [ LRA ]'), ("p_capped", 'Pmax=? [ F "capped" ]')]
    if goodput:
        props += [("max_goodput", 'R{"goodput"}max=? [ LRA ]'), ("goodput_fifo", 'R{"goodput_fifo"}min=? [ LRA ]')]
    r = engine.check(MDP_MODEL, props, ab.constants(), precision=precision)
    vals, pi, _ = engine.steady_state(HINT_MODEL, {**ab.constants(), "d": 16}, ["k"])
    k = vals["k"].astype(float)
    pb = ab.p_lo + (ab.p_hi - ab.p_lo) * k / ab.N
    fifo = float(np.dot(pi, throughput(k, pb, ab.l, 1.0)))
    out = {"max": r.values["max_sqrt_law"], "fifo": fifo, "gain": r.values["max_sqrt_law"] / fifo - 1.0,
           "capped_reachable": r.values["p_capped"] > 0.5, "states": r.states, "transitions": r.transitions,
           "seconds": r.seconds, "precision": r.precision}
    if goodput:
        out["max_goodput"] = r.values["max_goodput"]
        out["goodput_fifo"] = r.values["goodput_fifo"]
    return out


def transition_matrix(ab: Abstraction) -> np.ndarray:
    """The background chain written directly in NumPy (for the cross-engine check with SciPy)."""
    N = ab.N
    P = np.zeros((N + 1, N + 1))
    for k in range(N + 1):
        pb = ab.p_lo + (ab.p_hi - ab.p_lo) * k / N
        a = ab.lam * (1 - pb)
        for accepted, prob in ((0, (1 - a) ** 2), (1, 2 * a * (1 - a)), (2, a * a)):
            P[k, min(N, max(0, k + accepted - 1))] += prob
    return P


def stationary_scipy(P: np.ndarray) -> np.ndarray:
    """Stationary vector of a finite irreducible chain by a direct SciPy solve of pi (P - I) = 0, sum 1."""
    from scipy import linalg

    n = P.shape[0]
    M = (P - np.eye(n)).T
    M[-1, :] = 1.0
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    return linalg.solve(M, rhs)
