"""Closed-form results for the EF priority queue + transmission queue system (Ferrari, Pau & Raffaelli 2001).

Three closed forms, all with method ``closed-form``:

* ``EF.delay.worst_case_mean`` -- Ferrari, Pau & Raffaelli 2001, eq. (7), with
  ``k`` the largest number of units a packet fills (``Params.k_max``). The
  semantic gap: eq. (5) puts the *maximum* residual service time ``k T_u`` into
  Cobham's mean-wait formula, while in the model an EF packet waits for the TxQ
  occupancy to drop below ``Q_t`` (a mean residual, sometimes more than one
  departure); eq. (6) charges ``Q_t + k - 1`` full units of TxQ wait while the
  TxQ seen at admission holds fewer than ``Q_t`` units, some of them partly
  filled or EF. It is a worst case of the mean: reported as an upper bound on
  ``EF.delay.mean`` (which the agreement checks test against the model and the
  simulator), not a bound on any quantile or on the maximum delay.
* ``EF.delay.max`` -- :mod:`qosbound.analytic.ef_bound`: the maximum delay of an
  accepted EF packet for token-bucket-conformant EF of depth ``Params.burst``
  (for Poisson / Bernoulli EF the default depth is the PQ capacity, which
  bounds every accepted packet whatever the arrivals). It is an upper bound on
  the maximum delay, hence on every quantile and on the mean, only when it
  applies (CBR EF, or the PQ capacity binding the burst); for a token bucket the
  arrivals do not conform to, it is reported as an approximation that neglects
  the bursts beyond the bucket.
* ``EF.delay.cobham_mean`` -- an approximation: Cobham's mean EF wait
  ``W_1 = R/(1-rho)`` (:mod:`qosbound.analytic.priority`) with the line kept
  busy by saturated best effort, plus the mean time ``T`` an EF packet spends in
  the TxQ after its admission (its own transmission included). ``T`` solves the
  fixed point ``T = U (f S_EF/k_EF + (1-f) b) + S_EF``, ``f = lambda T k_EF / Q_t``:
  the packet waits behind ``U = Q_t - 1 - (E[k^2]/E[k] - 1)/2`` units (the
  occupancy left just after the departure that admits it: ``Q_t - 1`` less the
  mean renewal undershoot of BE units, exact for fixed ``k``-unit BE when ``k``
  divides ``Q_t - 1`` or ``Q_t``), a fraction ``f`` of them EF (Little's law:
  ``lambda T`` EF packets sit in the TxQ, ``k_EF`` units each, of about ``Q_t``
  occupied) and the rest best effort at ``b = 8 E[L] / (E[k] C)`` seconds per
  unit. Against an event-driven replay of the semantics on the example
  (Q_t = 5, 300 kbit/s Poisson EF) it is within 1 % for BE of 1, 2, 3 units and
  the example mix. It ignores the PQ capacity and is not a bound; with
  ``Q_t = 1`` it is the M/G/1 non-preemptive priority mean exactly. Reported as
  an approximation that ``estimates`` ``EF.delay.mean``.

Best effort with a load (``Params.be_rate``: Poisson BE packets of the size mix,
an unbounded BE queue; the line may idle):

* ``EF.delay.max`` is unchanged: its derivation (:mod:`qosbound.analytic.ef_bound`)
  holds whatever BE does -- the TxQ work bound of step 1 needs only the fill
  rule, and from an EF arrival to its admission the PQ is non-empty, so no BE
  enters the TxQ and the line is busy.
* ``EF.delay.worst_case_mean`` (eq. 7) stays an upper bound on the mean, by an
  argument that does not use saturation. An EF packet arriving at ``t`` leaves
  at ``t + U(t-) + S_EF`` with ``U = W + n S_EF`` (TxQ work plus the EF work in
  the PQ). If the PQ is empty, ``U = W <= V`` (step 1 of the max bound,
  ``V = (Q_t-1) phi T_u + 8 L_max/C <= (Q_t+k-1) T_u``). Otherwise let ``s`` be the
  arrival that began the current PQ backlog: on ``[s, t)`` only EF enters the
  TxQ and the line is busy, so ``U(t-) = W(s-) + A(s,t) - (t-s) <= V + Z(t)``,
  ``A`` the accepted EF work arrived in ``[s, t)`` and ``Z(t) = sup_s (A - (t-s))``
  the workload of an infinite FIFO queue fed by all EF arrivals (Reich's
  formula). For Poisson EF, PASTA gives ``E[Z] = lambda S_EF^2/(2(1-rho))`` (the
  Pollaczek-Khinchine wait of the M/D/1 queue); hence
  ``E[D] <= V + S_EF (1 - rho/2)/(1 - rho) <= (Q_t+k-1) T_u + k T_u/(1-rho)``,
  which is eq. (7), since ``S_EF <= k T_u``. For CBR EF, ``Z = 0`` at arrivals
  (the period exceeds ``S_EF``); Bernoulli EF is its slotted counterpart, whose
  per-slot arrival variance ``p(1-p)`` is below Poisson's. Caveats: the mean is
  over *accepted* packets; ``Z`` counts every arrival, and acceptance (fewer than
  ``pq_cap`` EF packets found) selects arrivals that find less EF work, so
  ``E[Z | accepted] <= E[Z]`` is assumed (it is exact for an unbounded PQ). The
  same argument makes eq. (7) a bound with saturated best effort; it needs no
  ordering between saturated and loaded BE.
* ``EF.delay.cobham_mean`` is Cobham's EF wait of the M/G/1 queue with two
  non-preemptive priority classes, EF and BE at their loads,
  ``W_1 = (lambda E[S_EF^2] + lambda_BE E[S_BE^2]) / (2 (1 - rho))`` (exact for
  ``Q_t = 1`` with an unbounded PQ), plus the TxQ term of the saturated case with
  ``U`` replaced by ``E[min(U, X)] = m (1 - exp(-U/m))``: the BE units queued
  ahead of EF cannot exceed the BE backlog ``X`` (in units), taken exponential
  with mean ``m = E[k] L_BE``, ``L_BE = lambda_BE W_2`` Cobham's mean BE queue
  length, ``W_2 = R / ((1-rho)(1-rho-rho_BE))``. It tends to the
  M/D/1 mean ``W_PK + S_EF`` of EF alone as the BE load goes to 0 and to the
  saturated form as the total load goes to 1; in between it is an approximation
  (the TxQ lets queued BE overtake EF that arrives later, which Cobham's BE
  queue ignores), reported as such.

EF aggregates (Ferrari et al. 2001, section V; ``Params.ef_streams``): what holds of each form for a
superposition of streams of one packet size.

* ``EF.aggregation_degree`` -- eq. (1), ``A = 1 - l_max/L_BA`` with ``l_max`` the largest stream rate and
  ``L_BA`` their sum, evaluated in rational arithmetic from the scenario's rates: exact (``1 - 1/N`` for
  ``N`` identical calls).
* Eq. (7) depends on the EF traffic only through ``rho``: the aggregate's rate gives it, with the same reading
  (a worst case of the mean) and kind as for one stream.
* The max-delay bound needs a token bucket the aggregate conforms to. ``N`` CBR streams of ``L`` bytes and
  rates ``r_i`` send at most ``L + r_i t/8`` bytes in any window of ``t`` seconds whatever their phases, so the
  aggregate conforms to ``(sigma, r) = (N L, sum r_i)`` and the bound with ``sigma = N L`` is an upper bound
  (with random phases the ``N`` packets coincide with probability zero, so it is approached, not reached, by
  the simulator). A Poisson stream in the mix conforms to no bucket: then only the PQ-capacity branch holds,
  as for a single Poisson stream.
* Cobham's mean treats the aggregate as one Poisson stream (an approximation; superposed CBR streams with
  independent phases are smoother than Poisson).
* ``EF.loss.cbr_bound`` -- for identical CBR calls with random phases, an upper bound on ``EF.loss``
  (:mod:`qosbound.analytic.cbr_loss`: a union of binomial tails of the calls' arrivals in a PQ backlog against
  the EF packets the TxQ has surely admitted by then); reported under its own name with ``bounds``
  ``EF.loss``, so the agreement checks hold it above the simulated loss and a proof may decide a loss SLO.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy as sp

from qosbound.analytic import ef_bound, ferrari, priority
from qosbound.errors import ScenarioError

__all__ = ["check_range", "WorstCaseMean", "worst_case_mean", "MaxDelay", "max_delay", "max_bound_applies",
           "BEMoments", "be_moments", "CobhamMean", "cobham_mean", "cobham_mean_loaded", "aggregation_degree_exact",
           "txq_units_expr", "txq_fixed_point", "txq_wait_expr", "txq_wait", "txq_wait_loaded"]

_Q = sp.Symbol("Q_t", positive=True, integer=True)  # units
_k1 = sp.Symbol("Ek", positive=True)  # units, E[k] of BE packets
_k2 = sp.Symbol("Ek2", positive=True)  # units^2, E[k^2] of BE packets
_L = sp.Symbol("EL", positive=True)  # bytes, E[L] of BE packets
_C = sp.Symbol("C", positive=True)  # bit/s
_lam = sp.Symbol("lambda", positive=True)  # EF packets/s
_Lef = sp.Symbol("L_EF", positive=True)  # bytes, EF packet
_kef = sp.Symbol("k_EF", positive=True, integer=True)  # units, EF packet
_T = sp.Symbol("T", positive=True)  # s, EF time in the TxQ after admission


def _solve_linear(eq: sp.Eq, x: sp.Symbol) -> sp.Expr:
    """The solution of ``eq`` for ``x`` where its right side is ``a x + b`` and its left side ``x``: ``b / (1 - a)``,
    factored. Factored, it is the very expression ``sympy.solve`` returns for the two fixed points here (the same
    tree, so the same floating-point evaluation: tests/analytic/test_pq_txq.py), at a twentieth of its cost
    (``solve`` took a third of a second at every import)."""
    assert eq.lhs == x
    a = sp.diff(eq.rhs, x)
    if a.has(x):
        raise ValueError(f"not linear in {x}: {eq}")
    return sp.factor(eq.rhs.subs(x, 0) / (1 - a))


#: Units left in the TxQ just after the departure that admits an EF packet (approximation, see module doc).
txq_units_expr = sp.Max(0, _Q - 1 - (_k2 / _k1 - 1) / 2)
_b = 8 * _L / (_k1 * _C)  # s per BE unit
_S = 8 * _Lef / _C  # s, EF transmission
_f = _lam * _T * _kef / _Q  # fraction of TxQ units held by EF (Little's law)
#: Fixed point for the mean time an EF packet spends in the TxQ after admission, its transmission included.
txq_fixed_point = sp.Eq(_T, txq_units_expr * (_f * _S / _kef + (1 - _f) * _b) + _S)
#: Its solution (linear in T), s.
txq_wait_expr = _solve_linear(txq_fixed_point, _T)

_U = sp.Symbol("U", nonnegative=True)  # units ahead of an admitted EF packet
_Lbe = sp.Symbol("L_BE", nonnegative=True)  # packets, mean BE queue length (Cobham)
#: Units ahead of an admitted EF packet with a BE load: ``E[min(U, X)]`` for a BE backlog ``X`` of units taken
#: exponential with Cobham's mean ``m = E[k] L_BE`` (approximation; see the module docstring).
_m = _k1 * _Lbe
txq_units_loaded_expr = sp.Piecewise((0, sp.Eq(_m, 0)), (_m * (1 - sp.exp(-txq_units_expr / _m)), True))
#: The TxQ fixed point with ``U`` units ahead, solved for ``T``, s.
txq_wait_units_expr = _solve_linear(sp.Eq(_T, _U * (_f * _S / _kef + (1 - _f) * _b) + _S), _T)


@lru_cache(maxsize=1)
def _txq_wait_fn():
    return sp.lambdify((_Q, _k1, _k2, _L, _C, _lam, _Lef, _kef), txq_wait_expr, "numpy")


@lru_cache(maxsize=1)
def _txq_wait_loaded_fn():
    expr = txq_wait_units_expr.subs(_U, txq_units_loaded_expr)
    return sp.lambdify((_Q, _k1, _k2, _L, _C, _lam, _Lef, _kef, _Lbe), expr, "numpy")


def txq_wait(Q_t, Ek, Ek2, EL, C, lam, L_ef, k_ef) -> float:
    """:data:`txq_wait_expr`, the mean time in the TxQ after admission (saturated best effort), s."""
    return float(_txq_wait_fn()(Q_t, Ek, Ek2, EL, C, lam, L_ef, k_ef))


def txq_wait_loaded(Q_t, Ek, Ek2, EL, C, lam, L_ef, k_ef, L_be) -> float:
    """The same with a BE load whose mean queue is ``L_be`` packets (:data:`txq_units_loaded_expr`), s."""
    return float(_txq_wait_loaded_fn()(Q_t, Ek, Ek2, EL, C, lam, L_ef, k_ef, L_be))


def check_range(p) -> None:
    """Transmission times and their squares must be normal floating-point numbers, or the formulas over- or
    underflow (e.g. a 1e-300 bit/s link); a ScenarioError names the line rate ``C``."""
    times = {"EF": p.ef_size * 8.0 / p.C, "BE": float(np.max(p.be_sizes)) * 8.0 / p.C,
             "unit": p.unit * 8.0 / p.C, "smallest BE": float(np.min(p.be_sizes)) * 8.0 / p.C}
    for what, t in times.items():
        if not (math.isfinite(t) and math.isfinite(t * t) and t * t > 1e-300 and t < 1e100):
            raise ScenarioError(f"a line rate of {p.C:g} bit/s gives {what} packets a transmission time of {t:g} s, "
                                "outside the range the closed forms can evaluate in floating point", field="C")


@dataclass(frozen=True)
class WorstCaseMean:
    """Ferrari, Pau & Raffaelli 2001, eq. (7), and its two terms (eqs. 5 and 6), s; ``k`` units."""

    W: float
    W_pq: float
    W_t: float
    k: int


def worst_case_mean(p) -> WorstCaseMean:
    """Eq. (7) for ``p`` (a PQ + TxQ port reduced to SI numbers), ``k`` the largest number of units a packet fills:
    a worst case of the mean EF delay (module docstring: an upper bound on the mean, with or without a BE load)."""
    T_u, rho, k = p.T_u, p.rho, p.k_max
    W_pq = ferrari.w_pq(k, rho, T_u)
    W_t = ferrari.w_t(k, p.Q_t, T_u)
    return WorstCaseMean(W=ferrari.w(k, rho, p.Q_t, T_u), W_pq=W_pq, W_t=W_t, k=k)


@dataclass(frozen=True)
class MaxDelay:
    """The maximum delay of an accepted EF packet (:mod:`qosbound.analytic.ef_bound`), s, with its inputs: the
    fill fraction ``phi``, the largest packet ``L_max`` (bytes), the TxQ work bound ``txq_work`` (s), whether it
    is an upper bound for ``p``'s arrivals (:func:`max_bound_applies`) and the number of CBR streams."""

    D: float
    phi: float
    L_max: float
    txq_work: float
    applies: bool
    cbr_streams: int


def max_delay(p) -> MaxDelay:
    """:class:`MaxDelay` for ``p``, the largest packet and the fill fraction taken over the BE sizes and EF's."""
    sizes = np.concatenate([p.be_sizes, [p.ef_size]])
    phi = ef_bound.fill_fraction(sizes, p.unit)
    L_max = float(sizes.max())
    D = ef_bound.ef_delay_bound(p.Q_t, p.unit, p.C, L_max, p.ef_size, p.burst, p.pq_cap, phi=phi)
    applies = max_bound_applies(p)
    n_cbr = p.cbr_streams if hasattr(p, "cbr_streams") else int(p.arrivals == "cbr")
    return MaxDelay(D=D, phi=phi, L_max=L_max, txq_work=ef_bound.txq_work(p.Q_t, p.unit, p.C, L_max, phi),
                    applies=applies, cbr_streams=n_cbr)


@dataclass(frozen=True)
class BEMoments:
    """The transmission-time moments Cobham's formula takes: EF's ``s_ef`` (s), BE's ``m1_be``, ``m2_be`` (s, s^2),
    and BE's units ``Ek``, ``Ek2`` and bytes ``EL`` per packet on average."""

    s_ef: float
    m1_be: float
    m2_be: float
    Ek: float
    Ek2: float
    EL: float


def be_moments(p) -> BEMoments:
    """:class:`BEMoments` of ``p``'s size mix at its line rate."""
    s_be = p.be_sizes * 8.0 / p.C
    m1_be = float(np.dot(p.be_probs, s_be))
    m2_be = float(np.dot(p.be_probs, s_be ** 2))
    s_ef = p.ef_size * 8.0 / p.C
    kb = p.k_be.astype(float)
    Ek, Ek2 = float(np.dot(p.be_probs, kb)), float(np.dot(p.be_probs, kb ** 2))
    EL = float(np.dot(p.be_probs, p.be_sizes))
    return BEMoments(s_ef=s_ef, m1_be=m1_be, m2_be=m2_be, Ek=Ek, Ek2=Ek2, EL=EL)


@dataclass(frozen=True)
class CobhamMean:
    """Cobham's mean EF wait ``W1`` plus the mean time ``T`` in the TxQ after admission: ``M = W1 + T``, s. With a
    BE load also BE's Cobham wait ``W2`` (s), its mean queue ``L_be`` (packets) and packet rate ``lam_be`` (1/s)."""

    M: float
    W1: float
    T: float
    W2: float | None = None
    L_be: float | None = None
    lam_be: float | None = None


def cobham_mean(p, m: BEMoments) -> CobhamMean:
    """The approximate mean EF delay with saturated best effort (module docstring), s."""
    W1 = float(priority.cobham_wait_saturated([p.lam], [m.s_ef], [m.s_ef ** 2], m.m1_be, m.m2_be)[0])
    T = txq_wait(p.Q_t, m.Ek, m.Ek2, m.EL, p.C, p.lam, p.ef_size, p.k_ef)
    return CobhamMean(M=W1 + T, W1=W1, T=T)


def cobham_mean_loaded(p, m: BEMoments) -> CobhamMean:
    """The approximate mean EF delay with a BE load ``p.be_rate``: Cobham's two-class EF wait plus the TxQ term with
    the units ahead ``E[min(U, X)]``, ``X`` exponential with Cobham's mean BE queue in units (module docstring), s."""
    lam_be = float(p.be_rate) / (8.0 * m.EL)
    W1, W2 = (float(w) for w in priority.cobham_wait([p.lam, lam_be], [m.s_ef, m.m1_be], [m.s_ef ** 2, m.m2_be]))
    L_be = lam_be * W2
    T = txq_wait_loaded(p.Q_t, m.Ek, m.Ek2, m.EL, p.C, p.lam, p.ef_size, p.k_ef, L_be)
    return CobhamMean(M=W1 + T, W1=W1, T=T, W2=W2, L_be=L_be, lam_be=lam_be)


def aggregation_degree_exact(rates) -> tuple[sp.Rational, str]:
    """Eq. (1) for streams of the given rates (bit/s), in rational arithmetic: (A, A as a fraction).

    Each rate is read as the shortest decimal that prints as the same float (``80000.0`` -> 80000), so A of
    ``N`` equal rates is exactly ``1 - 1/N``."""
    rs = [sp.Rational(repr(float(r))) for r in rates]
    if not rs or min(rs) <= 0:
        raise ScenarioError("every stream rate must be positive", field="r")
    A = sp.nsimplify(ferrari.A_expr.subs({ferrari.l_max: max(rs), ferrari.L_BA: sum(rs)}))
    return A, str(A)


def max_bound_applies(p) -> bool:
    """Whether the max-delay bound holds for every accepted EF packet: CBR EF (its own token bucket), or a
    token-bucket depth no smaller than the PQ capacity (which then bounds any burst)."""
    n_cbr = p.cbr_streams if hasattr(p, "cbr_streams") else int(p.arrivals == "cbr")
    return (n_cbr >= 1 and p.burst >= n_cbr * p.ef_size) or p.burst >= p.pq_cap * p.ef_size
