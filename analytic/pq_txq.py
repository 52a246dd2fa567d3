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
from functools import lru_cache

import numpy as np
import sympy as sp

from qosbound.analytic import cbr_loss, ef_bound, ferrari, priority
from qosbound.errors import ScenarioError
from qosbound.results import Interval, Result

__all__ = ["closed_form_results", "max_bound_applies", "aggregation_degree_exact", "check_range", "txq_units_expr",
           "txq_fixed_point", "txq_wait_expr", "txq_wait", "txq_wait_loaded"]

_Q = sp.Symbol("Q_t", positive=True, integer=True)  # units
_k1 = sp.Symbol("Ek", positive=True)  # units, E[k] of BE packets
_k2 = sp.Symbol("Ek2", positive=True)  # units^2, E[k^2] of BE packets
_L = sp.Symbol("EL", positive=True)  # bytes, E[L] of BE packets
_C = sp.Symbol("C", positive=True)  # bit/s
_lam = sp.Symbol("lambda", positive=True)  # EF packets/s
_Lef = sp.Symbol("L_EF", positive=True)  # bytes, EF packet
_kef = sp.Symbol("k_EF", positive=True, integer=True)  # units, EF packet
_T = sp.Symbol("T", positive=True)  # s, EF time in the TxQ after admission

#: Units left in the TxQ just after the departure that admits an EF packet (approximation, see module doc).
txq_units_expr = sp.Max(0, _Q - 1 - (_k2 / _k1 - 1) / 2)
_b = 8 * _L / (_k1 * _C)  # s per BE unit
_S = 8 * _Lef / _C  # s, EF transmission
_f = _lam * _T * _kef / _Q  # fraction of TxQ units held by EF (Little's law)
#: Fixed point for the mean time an EF packet spends in the TxQ after admission, its transmission included.
txq_fixed_point = sp.Eq(_T, txq_units_expr * (_f * _S / _kef + (1 - _f) * _b) + _S)
#: Its solution (linear in T), s.
txq_wait_expr = sp.solve(txq_fixed_point, _T)[0]

_U = sp.Symbol("U", nonnegative=True)  # units ahead of an admitted EF packet
_Lbe = sp.Symbol("L_BE", nonnegative=True)  # packets, mean BE queue length (Cobham)
#: Units ahead of an admitted EF packet with a BE load: ``E[min(U, X)]`` for a BE backlog ``X`` of units taken
#: exponential with Cobham's mean ``m = E[k] L_BE`` (approximation; see the module docstring).
_m = _k1 * _Lbe
txq_units_loaded_expr = sp.Piecewise((0, sp.Eq(_m, 0)), (_m * (1 - sp.exp(-txq_units_expr / _m)), True))
#: The TxQ fixed point with ``U`` units ahead, solved for ``T``, s.
txq_wait_units_expr = sp.solve(sp.Eq(_T, _U * (_f * _S / _kef + (1 - _f) * _b) + _S), _T)[0]


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


#: Parameter names of the analytic modules -> the scenario fields they come from.
_FIELDS = {"lam": "traffic.EF.rate", "m1": "traffic.BE.sizes", "m2": "traffic.BE.sizes", "r": "traffic.EF.rate",
           "L_max": "traffic.BE.sizes", "rho": "traffic.EF.rate", "T_u": "link.rate", "Q_t": "txq.units",
           "k": "txq.unit_size", "phi": "txq.unit_size", "sigma": "traffic.EF.burst",
           "lam_be": "traffic.BE.rate"}


def check_range(p) -> None:
    """Transmission times and their squares must be normal floating-point numbers, or the formulas over- or
    underflow (e.g. a 1e-300 bit/s link)."""
    times = {"EF": p.ef_size * 8.0 / p.C, "BE": float(np.max(p.be_sizes)) * 8.0 / p.C,
             "unit": p.unit * 8.0 / p.C, "smallest BE": float(np.min(p.be_sizes)) * 8.0 / p.C}
    for what, t in times.items():
        if not (math.isfinite(t) and math.isfinite(t * t) and t * t > 1e-300 and t < 1e100):
            raise ScenarioError(f"a line rate of {p.C:g} bit/s gives {what} packets a transmission time of {t:g} s, "
                                "outside the range the closed forms can evaluate in floating point",
                                field="link.rate")


def closed_form_results(p) -> list[Result]:
    """Every closed-form EF delay metric for one :class:`qosbound.params.Params`.

    Domain errors of the analytic modules (named by their own parameters, e.g. ``m2[0]``) are reported
    against the scenario field they come from."""
    check_range(p)
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            return _closed_form_results(p)
    except ScenarioError as e:
        base = (e.field or "").split("[")[0]
        field = _FIELDS.get(base)
        if field is None:
            raise
        raise ScenarioError(f"{e.problem} ({e.field} of the closed form)", field=field) from None
    except (OverflowError, ZeroDivisionError, FloatingPointError) as e:
        raise ScenarioError(f"the closed forms cannot be evaluated for these rates and sizes ({e})",
                            field="link.rate") from None


def _closed_form_results(p) -> list[Result]:
    T_u, rho = p.T_u, p.rho
    k = p.k_max
    streams = tuple(getattr(p, "ef_streams", ()))
    aggregate = f"an aggregate of {len(streams)} EF streams, at their total rate" if len(streams) > 1 else ""
    W_pq = ferrari.w_pq(k, rho, T_u)
    W_t = ferrari.w_t(k, p.Q_t, T_u)
    W = ferrari.w(k, rho, p.Q_t, T_u)
    loaded = getattr(p, "be_rate", None) is not None
    be_note = ("; with the BE load it still bounds the mean: EF delay <= V + Z + S_EF with Z the FIFO workload of EF "
               "alone (module docstring), whatever BE does" if loaded else "")
    out = [Result(
        "EF.delay.worst_case_mean", "closed-form", W, "s",
        Interval.upper_bound(W, note="Ferrari et al.'s worst case of the mean EF delay: the maximum residual "
                                     "service k*T_u in Cobham's formula and Q_t+k-1 full TxQ units"),
        {"formula": ferrari.eq7_text, "source": "Ferrari et al. 2001, eq. (7)",
         "W_pq": W_pq, "W_t": W_t, "k": k, "rho": rho, "Q_t": p.Q_t, "T_u": T_u,
         **({"aggregate": aggregate + ": eq. (7) depends on EF only through rho"} if aggregate else {}),
         "note": "worst case of the mean: eq. (5) uses the maximum residual k*T_u in Cobham's formula and "
                 "eq. (6) Q_t+k-1 full units of TxQ; not a bound on the maximum delay" + be_note},
        bounds=("EF.delay.mean",),
    )]

    sizes = np.concatenate([p.be_sizes, [p.ef_size]])
    phi = ef_bound.fill_fraction(sizes, p.unit)
    L_max = float(sizes.max())
    D = ef_bound.ef_delay_bound(p.Q_t, p.unit, p.C, L_max, p.ef_size, p.burst, p.pq_cap, phi=phi)
    applies = max_bound_applies(p)
    n_cbr = p.cbr_streams if hasattr(p, "cbr_streams") else int(p.arrivals == "cbr")
    if n_cbr > 1 and applies:
        assumption = (f"{n_cbr} CBR EF streams of {p.ef_size:g} B conform together to a token bucket of {n_cbr} "
                      f"packets ({n_cbr * p.ef_size:g} B) at {p.ef_rate:g} bit/s whatever their phases; the bound "
                      "holds for every accepted EF packet")
    elif p.arrivals == "cbr":
        assumption = (f"CBR EF conforms to a token bucket of one packet ({p.ef_size:g} B) at "
                      f"{p.ef_rate:g} bit/s; the bound holds for every EF packet")
    elif applies:
        assumption = (f"{p.arrivals} EF is not token-bucket constrained; the PQ capacity ({p.pq_cap} packets) "
                      "bounds the burst, so the bound holds for every accepted EF packet")
    else:
        assumption = (f"assumes EF conforms to a token bucket of {p.burst:g} B at {p.ef_rate:g} bit/s; "
                      f"{p.arrivals} arrivals do not, so only the PQ-capacity bound "
                      f"({p.pq_cap} packets) holds for them")
    if applies:
        iv, also = Interval.upper_bound(D, note=assumption), ("EF.delay.p*", "EF.delay.mean", "EF.s*.delay.mean")
    else:
        iv, also = Interval.approximation(
            D, neglects=f"{p.arrivals} EF bursts beyond the {p.burst:g} B token bucket (not a bound for these "
                        "arrivals)", note=assumption), ()
    out.append(Result(
        "EF.delay.max", "closed-form", D, "s", iv,
        {"formula": ef_bound.bound_text, "source": "qosbound.analytic.ef_bound (derivation in its docstring)",
         "assumption": assumption, "sigma": p.burst, "pq_cap": p.pq_cap, "L_max": L_max, "L_EF": p.ef_size,
         "phi": phi, "Q_t": p.Q_t, "T_u": T_u,
         "txq_work": ef_bound.txq_work(p.Q_t, p.unit, p.C, L_max, phi)},
        bounds=also,
    ))

    if cbr_loss.applies(p):
        out.append(cbr_loss.loss_result(p, ef_bound.txq_work(p.Q_t, p.unit, p.C, L_max, phi)))

    s_be = p.be_sizes * 8.0 / p.C
    m1_be = float(np.dot(p.be_probs, s_be))
    m2_be = float(np.dot(p.be_probs, s_be ** 2))
    s_ef = p.ef_size * 8.0 / p.C
    kb = p.k_be.astype(float)
    Ek, Ek2 = float(np.dot(p.be_probs, kb)), float(np.dot(p.be_probs, kb ** 2))
    EL = float(np.dot(p.be_probs, p.be_sizes))
    if loaded:
        return out + [_cobham_loaded(p, s_ef, m1_be, m2_be, Ek, Ek2, EL)]
    W1 = float(priority.cobham_wait_saturated([p.lam], [s_ef], [s_ef ** 2], m1_be, m2_be)[0])
    T = txq_wait(p.Q_t, Ek, Ek2, EL, p.C, p.lam, p.ef_size, p.k_ef)
    M = W1 + T
    out.append(Result(
        "EF.delay.cobham_mean", "closed-form", M, "s",
        Interval.approximation(M, neglects="the TxQ dynamics beyond a mean-value fixed point for the time in the "
                                           "TxQ, and the PQ capacity (exact only for Q_t = 1)"),
        {"formula": "W_1 + T, W_1 = R/(1-rho) (Cobham, BE saturated), T = U*(f*S_EF/k_EF + (1-f)*b) + S_EF, "
                    "f = lambda*T*k_EF/Q_t, U = max(0, Q_t-1-(E[k^2]/E[k]-1)/2), b = 8*E[L]/(E[k]*C)",
         "source": "Bertsekas & Gallager, Data Networks, sec. 3.5.3 (Cobham); TxQ term approximate",
         "approximation": "Cobham's formula ignores the TxQ, added as an approximate mean time T in it; "
                          "ignores the PQ capacity; exact only for Q_t = 1",
         "W_1": W1, "T_txq": T, "S_EF": s_ef, "residual_BE": m2_be / (2 * m1_be)},
        estimates="EF.delay.mean",
    ))
    if aggregate:
        out[-1].provenance["aggregate"] = aggregate + ", treated as one Poisson stream"
    if streams:
        A, text = aggregation_degree_exact([r for r, _, _ in streams])
        out.append(Result(
            "EF.aggregation_degree", "closed-form", float(A), "1",
            Interval.exact(float(A), note=f"A = {text} in rational arithmetic from the streams' rates"),
            {"formula": "A = 1 - l_max/L_BA", "source": "Ferrari et al. 2001, eq. (1)", "A": text,
             "l_max": max(r for r, _, _ in streams), "L_BA": p.ef_rate, "streams": len(streams)}))
    return out


def _cobham_loaded(p, s_ef, m1_be, m2_be, Ek, Ek2, EL) -> Result:
    """``EF.delay.cobham_mean`` with a BE load: Cobham's two-class EF wait plus the TxQ term with the units ahead
    ``E[min(U, X)]``, ``X`` exponential with Cobham's mean BE queue in units (module docstring)."""
    lam_be = float(p.be_rate) / (8.0 * EL)
    W1, W2 = (float(w) for w in priority.cobham_wait([p.lam, lam_be], [s_ef, m1_be], [s_ef ** 2, m2_be]))
    L_be = lam_be * W2
    T = txq_wait_loaded(p.Q_t, Ek, Ek2, EL, p.C, p.lam, p.ef_size, p.k_ef, L_be)
    M = W1 + T
    return Result(
        "EF.delay.cobham_mean", "closed-form", M, "s",
        Interval.approximation(M, neglects="the law of the BE backlog (taken exponential with Cobham's mean), the "
                                           "TxQ dynamics beyond a mean-value fixed point, and the PQ capacity "
                                           "(exact only for Q_t = 1)"),
        {"formula": "W_1 + T, W_1 = R/(1-rho), R = (lambda*E[S_EF^2] + lambda_BE*E[S_BE^2])/2 (Cobham, two classes), "
                    "T = U*(f*S_EF/k_EF + (1-f)*b) + S_EF, U = m*(1-exp(-U_sat/m)), "
                    "U_sat = max(0, Q_t-1-(E[k^2]/E[k]-1)/2), m = E[k]*L_BE, L_BE = lambda_BE*W_2, "
                    "f = lambda*T*k_EF/Q_t, b = 8*E[L]/(E[k]*C)",
         "source": "Bertsekas & Gallager, Data Networks, sec. 3.5.3 (Cobham); TxQ term approximate",
         "approximation": "M/G/1 non-preemptive priority with the BE load, plus an approximate mean time T in the "
                          "TxQ whose BE units are E[min(U_sat, X)], X exponential with Cobham's mean BE queue (in "
                          "units); exact only for Q_t = 1",
         "W_1": W1, "W_2_BE": W2, "L_BE": L_be, "lambda_BE": lam_be, "rho_BE": float(p.be_rate) / p.C,
         "T_txq": T, "S_EF": s_ef},
        estimates="EF.delay.mean",
    )


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
