"""The ``closed-form`` results of a ``pq_txq`` scenario: the formulas of :mod:`qosbound.analytic.pq_txq` (eq. (7),
the maximum-delay bound, Cobham's mean, eq. (1)) and of :mod:`qosbound.analytic.cbr_loss`, named as metrics with
their kinds, notes and provenance. What each number is (a bound, an approximation, exact) and why is derived in
:mod:`qosbound.analytic.pq_txq`.
"""

from __future__ import annotations

import numpy as np

from qosbound.analytic import cbr_loss, ef_bound, ferrari
from qosbound.analytic import pq_txq as formulas
from qosbound.errors import ScenarioError
from qosbound.results import Interval, Result
from qosbound.systems.pq_txq.params import FORMULA_FIELDS, Params, scenario_fields

__all__ = ["check_range", "closed_form_results", "worst_case_mean_result", "max_delay_result", "cobham_result",
           "aggregation_result"]


def check_range(p: Params) -> None:
    """:func:`qosbound.analytic.pq_txq.check_range`, its error naming the scenario's field."""
    with scenario_fields():
        formulas.check_range(p)


def closed_form_results(p: Params) -> list[Result]:
    """Every closed-form EF delay metric for one :class:`~qosbound.systems.pq_txq.params.Params`.

    Domain errors of the analytic modules (named by their own parameters, e.g. ``m2[0]``) are reported
    against the scenario field they come from."""
    check_range(p)
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            return _results(p)
    except ScenarioError as e:
        base = (e.field or "").split("[")[0]
        field = FORMULA_FIELDS.get(base)
        if field is None:
            raise
        raise ScenarioError(f"{e.problem} ({e.field} of the closed form)", field=field) from None
    except (OverflowError, ZeroDivisionError, FloatingPointError) as e:
        raise ScenarioError(f"the closed forms cannot be evaluated for these rates and sizes ({e})",
                            field="link.rate") from None


def _aggregate(p: Params) -> str:
    """How an aggregate of several EF streams enters the formulas ('' for one stream)."""
    streams = tuple(getattr(p, "ef_streams", ()))
    return f"an aggregate of {len(streams)} EF streams, at their total rate" if len(streams) > 1 else ""


def _results(p: Params) -> list[Result]:
    out = [worst_case_mean_result(p)]
    md = formulas.max_delay(p)
    out.append(max_delay_result(p, md))
    if cbr_loss.applies(p):
        out.append(cbr_loss.loss_result(p, md.txq_work))
    out.append(cobham_result(p))
    if getattr(p, "be_rate", None) is None and _aggregate(p):
        out[-1].provenance["aggregate"] = _aggregate(p) + ", treated as one Poisson stream"
    if getattr(p, "be_rate", None) is None and tuple(getattr(p, "ef_streams", ())):
        out.append(aggregation_result(p))
    return out


def worst_case_mean_result(p: Params) -> Result:
    """``EF.delay.worst_case_mean``: eq. (7), an upper bound on ``EF.delay.mean``."""
    wc = formulas.worst_case_mean(p)
    aggregate = _aggregate(p)
    loaded = getattr(p, "be_rate", None) is not None
    be_note = ("; with the BE load it still bounds the mean: EF delay <= V + Z + S_EF with Z the FIFO workload of EF "
               "alone (module docstring), whatever BE does" if loaded else "")
    return Result(
        "EF.delay.worst_case_mean", "closed-form", wc.W, "s",
        Interval.upper_bound(wc.W, note="Ferrari et al.'s worst case of the mean EF delay: the maximum residual "
                                        "service k*T_u in Cobham's formula and Q_t+k-1 full TxQ units"),
        {"formula": ferrari.eq7_text, "source": "Ferrari et al. 2001, eq. (7)",
         "W_pq": wc.W_pq, "W_t": wc.W_t, "k": wc.k, "rho": p.rho, "Q_t": p.Q_t, "T_u": p.T_u,
         **({"aggregate": aggregate + ": eq. (7) depends on EF only through rho"} if aggregate else {}),
         "note": "worst case of the mean: eq. (5) uses the maximum residual k*T_u in Cobham's formula and "
                 "eq. (6) Q_t+k-1 full units of TxQ; not a bound on the maximum delay" + be_note},
        bounds=("EF.delay.mean",),
    )


def _max_delay_assumption(p: Params, md: formulas.MaxDelay) -> str:
    """What the maximum-delay bound assumes of ``p``'s EF arrivals, and whether they meet it."""
    n_cbr, applies = md.cbr_streams, md.applies
    if n_cbr > 1 and applies:
        return (f"{n_cbr} CBR EF streams of {p.ef_size:g} B conform together to a token bucket of {n_cbr} "
                f"packets ({n_cbr * p.ef_size:g} B) at {p.ef_rate:g} bit/s whatever their phases; the bound "
                "holds for every accepted EF packet")
    if p.arrivals == "cbr":
        return (f"CBR EF conforms to a token bucket of one packet ({p.ef_size:g} B) at "
                f"{p.ef_rate:g} bit/s; the bound holds for every EF packet")
    if applies:
        return (f"{p.arrivals} EF is not token-bucket constrained; the PQ capacity ({p.pq_cap} packets) "
                "bounds the burst, so the bound holds for every accepted EF packet")
    return (f"assumes EF conforms to a token bucket of {p.burst:g} B at {p.ef_rate:g} bit/s; "
            f"{p.arrivals} arrivals do not, so only the PQ-capacity bound "
            f"({p.pq_cap} packets) holds for them")


def max_delay_result(p: Params, md: formulas.MaxDelay) -> Result:
    """``EF.delay.max``: an upper bound on the maximum, every quantile and the mean where it applies, else an
    approximation that neglects the bursts beyond the token bucket."""
    assumption = _max_delay_assumption(p, md)
    D = md.D
    if md.applies:
        iv, also = Interval.upper_bound(D, note=assumption), ("EF.delay.p*", "EF.delay.mean", "EF.s*.delay.mean")
    else:
        iv, also = Interval.approximation(
            D, neglects=f"{p.arrivals} EF bursts beyond the {p.burst:g} B token bucket (not a bound for these "
                        "arrivals)", note=assumption), ()
    return Result(
        "EF.delay.max", "closed-form", D, "s", iv,
        {"formula": ef_bound.bound_text, "source": "qosbound.analytic.ef_bound (derivation in its docstring)",
         "assumption": assumption, "sigma": p.burst, "pq_cap": p.pq_cap, "L_max": md.L_max, "L_EF": p.ef_size,
         "phi": md.phi, "Q_t": p.Q_t, "T_u": p.T_u, "txq_work": md.txq_work},
        bounds=also,
    )


def cobham_result(p: Params) -> Result:
    """``EF.delay.cobham_mean``: Cobham's mean plus the TxQ term, an approximation that estimates
    ``EF.delay.mean`` (saturated best effort, or with a BE load)."""
    m = formulas.be_moments(p)
    if getattr(p, "be_rate", None) is not None:
        return _cobham_loaded_result(p, m, formulas.cobham_mean_loaded(p, m))
    c = formulas.cobham_mean(p, m)
    return Result(
        "EF.delay.cobham_mean", "closed-form", c.M, "s",
        Interval.approximation(c.M, neglects="the TxQ dynamics beyond a mean-value fixed point for the time in the "
                                             "TxQ, and the PQ capacity (exact only for Q_t = 1)"),
        {"formula": "W_1 + T, W_1 = R/(1-rho) (Cobham, BE saturated), T = U*(f*S_EF/k_EF + (1-f)*b) + S_EF, "
                    "f = lambda*T*k_EF/Q_t, U = max(0, Q_t-1-(E[k^2]/E[k]-1)/2), b = 8*E[L]/(E[k]*C)",
         "source": "Bertsekas & Gallager, Data Networks, sec. 3.5.3 (Cobham); TxQ term approximate",
         "approximation": "Cobham's formula ignores the TxQ, added as an approximate mean time T in it; "
                          "ignores the PQ capacity; exact only for Q_t = 1",
         "W_1": c.W1, "T_txq": c.T, "S_EF": m.s_ef, "residual_BE": m.m2_be / (2 * m.m1_be)},
        estimates="EF.delay.mean",
    )


def _cobham_loaded_result(p: Params, m: formulas.BEMoments, c: formulas.CobhamMean) -> Result:
    return Result(
        "EF.delay.cobham_mean", "closed-form", c.M, "s",
        Interval.approximation(c.M, neglects="the law of the BE backlog (taken exponential with Cobham's mean), the "
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
         "W_1": c.W1, "W_2_BE": c.W2, "L_BE": c.L_be, "lambda_BE": c.lam_be, "rho_BE": float(p.be_rate) / p.C,
         "T_txq": c.T, "S_EF": m.s_ef},
        estimates="EF.delay.mean",
    )


def aggregation_result(p: Params) -> Result:
    """``EF.aggregation_degree``: eq. (1) of the streams' rates, exact (rational arithmetic)."""
    streams = tuple(p.ef_streams)
    A, text = formulas.aggregation_degree_exact([r for r, _, _ in streams])
    return Result(
        "EF.aggregation_degree", "closed-form", float(A), "1",
        Interval.exact(float(A), note=f"A = {text} in rational arithmetic from the streams' rates"),
        {"formula": "A = 1 - l_max/L_BA", "source": "Ferrari et al. 2001, eq. (1)", "A": text,
         "l_max": max(r for r, _, _ in streams), "L_BA": p.ef_rate, "streams": len(streams)})
