"""Storm glue for the TSQ models: per-hint delay/drop (DTMC) and the hint-choosing MDP.

``models/tsq_hint.prism`` (DTMC) and ``models/tsq.prism`` (MDP) share a slotted
abstraction of the bottleneck (see their headers): slot = one packet's
transmission time, two Bernoulli sources of hint-2^n packets, a proportional
AQM ``pb(k) = p_lo + (p_hi - p_lo) k / N``. :func:`abstraction` maps a TSQ
scenario's operating point onto it: ``pb`` passes through the equilibrium drop
``p*`` at the PI target ``q_ref`` and the arrival probability makes the drift
zero there, so the chain centres on ``q_ref`` as PI does. The number of hints is
``2^bits`` with ``bits`` the scenario's ``tsq.hint_bits`` (the models' constant
``nbits``).

PRISM: ``models/tsq_hint.prism`` needs ``-gs`` (:data:`PRISM_OPTIONS`; its header
says why). ``models/tsq.props`` holds what both engines check; the long-run-average
properties are Storm-only and live in ``models/tsq.storm.props`` (PRISM checks the
MDP's optimum as a renewal-reward ratio of ``models/tsq.props`` instead);
:func:`mdp_properties` reads both for Storm.

The MDP: ``models/tsq.prism`` writes the hint choice as n binary choices, one
file for every n. Storm's long-run-average solver takes 6 to 15 times longer on
it than on the same MDP with one action per hint (benchmarks/bench_tsq_mdp.py),
so :func:`no_gain` checks :func:`flat_mdp_text` (one action per hint, generated
for the scenario's 2^n hints from the same formulas); tests check that the two
agree, and both against a direct solve (:func:`best_policy_direct`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from qosbound.analytic.tsq import adjusted_drop, throughput
from qosbound.errors import ModelError
from qosbound.markov import stationary_dtmc
from qosbound.models import engine
from qosbound.models.budget import STORM_BYTES_PER_STATE, STORM_BYTES_PER_TRANSITION, Estimate

__all__ = ["HINT_MODEL", "HINT_PROPS", "MDP_MODEL", "MDP_PROPS", "MDP_STORM_PROPS", "mdp_properties", "PRISM_OPTIONS",
           "MDP_STORM_ONLY", "Abstraction",
           "abstraction", "hint_values", "hint_distribution", "no_gain", "transition_matrix", "stationary_scipy",
           "best_policy_direct", "flat_mdp_text", "estimate"]

HINT_MODEL = engine.MODELS_DIR / "tsq_hint.prism"
HINT_PROPS = engine.MODELS_DIR / "tsq_hint.props"
MDP_MODEL = engine.MODELS_DIR / "tsq.prism"
MDP_PROPS = engine.MODELS_DIR / "tsq.props"
#: The Storm-only (long-run average) properties of models/tsq.prism: PRISM has no LRA rewards for MDPs.
MDP_STORM_PROPS = engine.MODELS_DIR / "tsq.storm.props"

#: Options PRISM's default engine needs on models/tsq_hint.prism: Jacobi (its default for steady states)
#: iterates the chain without self-loops, which is periodic here, and never converges; Gauss-Seidel does, in
#: 67 890 iterations at N = 800 (above PRISM's default limit of 10 000). ``-epsilon 1e-12`` tightens PRISM's
#: relative stopping criterion so that its values agree with Storm's to about 1e-10.
PRISM_OPTIONS = ("-gs", "-maxiters", "1000000", "-epsilon", "1e-12")
#: Names of the properties of models/tsq.storm.props (no long-run average rewards for MDPs in PRISM).
MDP_STORM_ONLY = ("max_sqrt_law", "min_sqrt_law", "fifo_law", "max_goodput", "fifo_goodput")


def mdp_properties() -> list[tuple[str, str]]:
    """Every named property of models/tsq.prism for Storm: models/tsq.props (both engines), then
    models/tsq.storm.props (Storm only)."""
    return [*engine.parse_props_text(MDP_PROPS.read_text(encoding="utf-8")),
            *engine.parse_props_text(MDP_STORM_PROPS.read_text(encoding="utf-8"))]


@dataclass(frozen=True)
class Abstraction:
    """Constants of the slotted models (slots, probabilities) and the slot length in seconds."""

    N: int
    lam: float
    p_lo: float
    p_hi: float
    l: float  # slots
    slot: float  # s
    bits: int = 4  # hint bits n: hints 1..2^n
    k0: int | None = None  # the MDP's regeneration state (default N // 2; abstraction() uses q_ref)

    @property
    def H(self) -> int:
        """Number of hints, 2^n."""
        return 2 ** int(self.bits)

    def constants(self) -> dict:
        """Constants of models/tsq_hint.prism (all but the hint d)."""
        return {"N": int(self.N), "lam": float(self.lam), "p_lo": float(self.p_lo), "p_hi": float(self.p_hi),
                "l": float(self.l), "nbits": int(self.bits)}

    def mdp_constants(self) -> dict:
        """Constants of models/tsq.prism."""
        return {**self.constants(), "k0": int(self.N // 2 if self.k0 is None else self.k0)}

    def mdp_states(self) -> int:
        """States of models/tsq.prism: (N + 2) (2^(n+1) - 1)."""
        return (int(self.N) + 2) * (2 ** (int(self.bits) + 1) - 1)


def estimate(ab: Abstraction, mdp: bool = True) -> Estimate:
    """What model checking the abstraction builds, from its constants alone (the largest of its models).

    The per-hint DTMC (models/tsq_hint.prism) has the N + 1 queue lengths as states and at most three successors
    each (k - 1, k, k + 1: one slot's departures and two sources' arrivals), so at most 3 (N + 1) transitions; the
    flat MDP (:func:`flat_mdp_text`) has the same states with one action per hint, at most 3 H (N + 1)
    transitions; the direct solves in NumPy (:func:`transition_matrix`, sparse, and :func:`best_policy_direct`)
    hold a few vectors of N + 1 values. Models are built one after the other, so the peak is the largest."""
    n = float(ab.N) + 1.0
    transitions = 3.0 * n * (ab.H if mdp else 1)
    what = (f"the TSQ hint MDP ({ab.H} actions per state, models/tsq.py flat_mdp_text)" if mdp
            else "the TSQ per-hint DTMC (models/tsq_hint.prism)")
    memory = STORM_BYTES_PER_STATE * n + STORM_BYTES_PER_TRANSITION * transitions + 16 * 8 * n
    return Estimate(what, n, transitions, memory)


def abstraction(capacity: float, size: float, q_max: int, q_ref: float, p_star: float, latency: float, *,
                bits: int, p_floor_ratio: float = 0.1) -> Abstraction:
    """Slotted abstraction centred on (q_ref, p*): pb(q_ref) = p*, drift 2 lam (1 - p*) - 1 = 0 there.

    ``bits`` is the scenario's ``tsq.hint_bits`` (hints 1..2^bits).
    """
    if not 0 < p_star < 0.5:
        raise ModelError(f"the equilibrium AQM drop probability {p_star:.4g} is outside (0, 0.5): two Bernoulli "
                         "sources cannot hold the slotted TSQ models at q_ref (the link is overloaded); reduce the "
                         "load or use the closed-form or simulated method")
    if not 1 <= int(bits) <= 8:
        raise ModelError(f"{bits} hint bits: the TSQ models support 1..8")
    slot = size * 8.0 / capacity
    p_lo = p_star * p_floor_ratio
    p_hi = min(1.0, p_lo + (p_star - p_lo) * q_max / q_ref)
    lam = 1.0 / (2.0 * (1.0 - p_star))
    return Abstraction(int(q_max), lam, p_lo, p_hi, latency / slot, slot, int(bits), int(round(q_ref)))


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
    if not w.sum() > 0:
        raise ModelError(f"no hint-{hint} packet is accepted (p' = 1 in every state): its delay is undefined")
    delays = np.unique(qprime)
    probs = np.array([w[qprime == x].sum() for x in delays]) / w.sum()
    return delays, probs, built


def _qp(ab: Abstraction, k: np.ndarray, hint):
    """q' and p' of the models' formulas (kept beside the models for the cross-engine check)."""
    qprime = np.minimum(k, np.ceil(np.asarray(hint, dtype=float) * k / ab.H))
    pb = ab.p_lo + (ab.p_hi - ab.p_lo) * k / ab.N
    return qprime, adjusted_drop(k, qprime, pb, ab.l)


def no_gain(ab: Abstraction, precision: float = 1e-10, goodput: bool = False) -> dict:
    """Storm on the MDP (:func:`flat_mdp_text`): the best square-root-law throughput over hint policies, versus FIFO.

    The FIFO value is policy-independent: it is the same long-run average on the background chain,
    computed from Storm's steady state of the DTMC and the square-root law of analytic/tsq.py (one MDP
    LRA query is the expensive part). ``goodput=True`` also checks the accepted-fraction rewards.
    """
    props = [("max_sqrt_law", 'R{"sqrt_law"}max=? [ LRA ]'), ("p_capped", 'Pmax=? [ F "capped" ]')]
    if goodput:
        props += [("max_goodput", 'R{"goodput"}max=? [ LRA ]'), ("goodput_fifo", 'R{"goodput_fifo"}min=? [ LRA ]')]
    consts = {k: v for k, v in ab.constants().items() if k != "nbits"}
    r = engine.check(flat_mdp_text(ab.bits), props, consts, precision=precision)
    vals, pi, _ = engine.steady_state(HINT_MODEL, {**ab.constants(), "d": ab.H}, ["k"])
    k = vals["k"].astype(float)
    pb = ab.p_lo + (ab.p_hi - ab.p_lo) * k / ab.N
    fifo = float(np.dot(pi, throughput(k, pb, ab.l, 1.0)))
    out = {"max": r.values["max_sqrt_law"], "fifo": fifo, "gain": r.values["max_sqrt_law"] / fifo - 1.0,
           "capped_reachable": r.values["p_capped"] > 0.5, "states": r.states, "transitions": r.transitions,
           "seconds": r.seconds, "precision": r.precision}
    # a-posteriori check of Storm's long-run-average value iteration against the direct solve
    direct = best_policy_direct(ab)
    out["direct_max"] = direct
    out["solver_rel_error"] = abs(out["max"] - direct) / abs(direct)
    if goodput:
        out["max_goodput"] = r.values["max_goodput"]
        out["goodput_fifo"] = r.values["goodput_fifo"]
    return out


def best_policy_direct(ab: Abstraction) -> float:
    """The MDP's best long-run square-root-law throughput by a direct SciPy solve, for checking Storm.

    The tagged flow's choice does not change the queue (it has negligible rate), so the chain is the same under
    every policy and the best policy picks, in every state, the hint with the largest reward:
    max LRA = sum_k pi(k) max_h T'(k, h) (every hint 1..2^n is tried; nothing assumes which one wins).
    """
    pi = stationary_scipy(transition_matrix(ab))
    k = np.arange(ab.N + 1, dtype=float)
    best = np.full(k.shape, -np.inf)
    for h in range(1, ab.H + 1):
        qp, pp = _qp(ab, k, h)
        best = np.maximum(best, throughput(qp, pp, ab.l, 1.0))
    return float(pi @ best)


def flat_mdp_text(bits: int) -> str:
    """models/tsq.prism with one action per hint instead of n binary choices (the same MDP, generated for 2^bits
    hints): [h1] .. [hH] each take one slot; the rewards need no steps-per-slot factor."""
    H = 2 ** int(bits)
    slot = ("(1 - acc) * (1 - acc) : (k' = max(0, k - 1)) + 2 * acc * (1 - acc) : (k' = min(N, k)) "
            "+ acc * acc : (k' = min(N, k + 1))")
    q = "min(k, ceil({h} * k / H))"
    pp = "min(1, pow((l + k) / (l + {q}), 2) * pb)"
    lines = [f"// models/tsq.prism with one action per hint, generated by qosbound (models/tsq.py) for {H} hints.",
             "mdp",
             "const int N; const double lam; const double p_lo; const double p_hi; const double l;",
             f"const int nbits = {int(bits)};",
             "const int H = pow(2, nbits);",
             "formula pb = p_lo + (p_hi - p_lo) * k / N;",
             "formula acc = lam * (1 - pb);",
             f"formula p1 = {pp.format(q=q.format(h=1))};",
             "module queue",
             "  k : [0..N] init 0;"]
    lines += [f"  [h{h}] true -> {slot};" for h in range(1, H + 1)]
    lines += ["endmodule", 'label "capped" = p1 >= 1;', 'rewards "sqrt_law"']
    for h in range(1, H + 1):
        qh = q.format(h=h)
        lines.append(f"  [h{h}] true : 1 / ((l + {qh}) * pow({pp.format(q=qh)}, 0.5));")
    lines += ["endrewards", 'rewards "fifo"', "  true : 1 / ((l + k) * pow(pb, 0.5));", "endrewards",
              'rewards "goodput"']
    lines += [f"  [h{h}] true : 1 - {pp.format(q=q.format(h=h))};" for h in range(1, H + 1)]
    lines += ["endrewards", 'rewards "goodput_fifo"', "  true : 1 - pb;", "endrewards", ""]
    return "\n".join(lines)


def transition_matrix(ab: Abstraction) -> sp.csr_matrix:
    """The background chain written directly in NumPy, as a sparse matrix of at most 3 (N + 1) entries (for the
    cross-engine check with SciPy; a dense one would need 8 (N + 1)^2 bytes)."""
    N = ab.N
    k = np.arange(N + 1)
    pb = ab.p_lo + (ab.p_hi - ab.p_lo) * k / N
    a = ab.lam * (1 - pb)
    rows, cols, vals = [], [], []
    for accepted, prob in ((0, (1 - a) ** 2), (1, 2 * a * (1 - a)), (2, a * a)):
        rows.append(k)
        cols.append(np.minimum(N, np.maximum(0, k + accepted - 1)))
        vals.append(prob)
    P = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(N + 1, N + 1))
    P.sum_duplicates()
    return P


def stationary_scipy(P) -> np.ndarray:
    """Stationary vector of a finite irreducible chain by a direct solve of pi (P - I) = 0, sum 1
    (:func:`qosbound.markov.stationary_dtmc`, the one solve for chains built in NumPy)."""
    return stationary_dtmc(P)
