"""Each formula and numerical routine is defined once: the places that use it agree with the one definition.

Each test would fail if a use diverged from its definition (a re-typed copy edited on one side only).
"""

from __future__ import annotations

import importlib
import inspect
import itertools

import numpy as np
import pytest
import scipy.sparse as sparse
import sympy as sp

from qosbound import markov
from qosbound.analytic import markers, red_queue as rq, tfrc as TF, wred
from qosbound.models import tsq as MT
from qosbound.validation import droppers, tfrc_sender, tsq_sim


# ---- pi Q = 0 ----------------------------------------------------------------------------------------------

def _birth_death(lam, mu, K):
    Q = np.zeros((K + 1, K + 1))
    for n in range(K):
        Q[n, n + 1] = lam
        Q[n + 1, n] = mu
    return Q - np.diag(Q.sum(axis=1))


@pytest.mark.parametrize("r,K", [(0.5, 5), (1.0, 7), (2.5, 12)])
def test_stationary_solve_is_the_mm1k_law_dense_and_sparse(r, K):
    """The shared solve of pi Q = 0 gives the M/M/1/K law of analytic.red_queue, dense and sparse alike."""
    Q = _birth_death(r, 1.0, K)
    ref = rq.mm1k_distribution(r, K)
    for M in (Q, sparse.csr_matrix(Q)):
        pi = markov.stationary(M)
        assert pi.sum() == pytest.approx(1.0, rel=1e-14)
        np.testing.assert_allclose(pi, ref, rtol=1e-11, atol=1e-15)


def test_stationary_dtmc_solves_pi_P_equals_pi():
    """stationary_dtmc(P) is the fixed point pi P = pi of a random stochastic matrix (dense and sparse)."""
    rng = np.random.default_rng(12)
    P = rng.random((30, 30))
    P /= P.sum(axis=1, keepdims=True)
    for M in (P, sparse.csr_matrix(P)):
        pi = markov.stationary_dtmc(M)
        np.testing.assert_allclose(pi @ P, pi, rtol=1e-12, atol=1e-15)
        assert pi.min() > 0 and pi.sum() == pytest.approx(1.0, rel=1e-14)


def test_stationary_puts_no_mass_on_transient_states():
    """A transient start state (left for good) gets 0; the bottom component gets its own stationary law."""
    Q = _birth_death(0.5, 1.0, 4)
    big = np.zeros((6, 6))
    big[1:, 1:] = Q
    big[0, 1] = 2.0
    big[0, 0] = -2.0
    pi = markov.stationary(big)
    assert pi[0] == 0.0
    np.testing.assert_allclose(pi[1:], rq.mm1k_distribution(0.5, 4), rtol=1e-12)


def test_stationary_refuses_two_bottom_components():
    """Two closed classes: the long-run law depends on the start, so the solve raises EngineError."""
    from qosbound.errors import EngineError

    P = np.eye(3)
    P[0] = (0.0, 0.5, 0.5)
    with pytest.raises(EngineError, match="2 bottom strongly connected components"):
        markov.stationary_dtmc(P)


def test_stationary_regrounds_away_from_a_state_of_negligible_mass():
    """Deep trTCM buckets fed below CIR: the first grounded state (both buckets empty) has mass ~1e-27; the
    solve re-grounds and the vector satisfies pi P = pi to rounding (grounded there it was off by 0.017)."""
    f, T, pi = markers.slotted_trtcm(0.5, 3, 2, 120, 120, 4, return_chain=True)
    assert np.abs(pi @ T - pi).max() < 1e-15
    assert f[2] < 1e-6


def test_chains_use_the_shared_solve():
    """The RED composition chain, the slotted trTCM chain and the TSQ background chain are solved by
    qosbound.markov: their returned vectors equal the shared solve of their own matrices."""
    prof = wred.Profile(min_th=(4.0, 3.0, 2.0), max_th=(8.0, 7.0, 6.0), P_d=(3.0, 3.0, 3.0), mode="nred")
    _, _, Q, pi = rq.composition_chain(np.array([0.3, 0.3, 0.3]), 1.0, 9, prof, return_chain=True)
    np.testing.assert_array_equal(pi, markov.stationary(Q))
    _, T, pi = markers.slotted_trtcm(0.3, 2, 1, 12, 10, 4, return_chain=True)
    np.testing.assert_array_equal(pi, markov.stationary_dtmc(T))
    P = MT.transition_matrix(MT.abstraction(1e6, 1000.0, 40, 20.0, 0.05, 0.02, bits=3))
    np.testing.assert_array_equal(MT.stationary_scipy(P), markov.stationary_dtmc(P))


# ---- M/M/1/K at rho = 1 -------------------------------------------------------------------------------------

@pytest.mark.parametrize("K", [1, 2, 5, 17])
def test_mm1k_balanced_load_is_the_limit_of_the_closed_forms(K):
    """mm1k_mean / mm1k_distribution at r = 1 are SymPy's limits of L_MM1K and PI_MM1K as rho -> 1."""
    L = sp.limit(rq.L_MM1K.subs(rq.K_sym, K), rq.rho, 1)
    assert rq.mm1k_mean(1.0, K) == float(L)
    pis = [float(sp.limit(rq.PI_MM1K.subs({rq.K_sym: K, rq.n_sym: n}), rq.rho, 1)) for n in range(K + 1)]
    np.testing.assert_allclose(rq.mm1k_distribution(1.0, K), pis, rtol=1e-15)


@pytest.mark.parametrize("K", [1, 10, 300, 1_000_000])
@pytest.mark.parametrize("d", [0.5, 0.1, 0.05, 1e-4, 1e-8, 2e-9, 1e-13])
def test_mm1k_mean_near_balanced_load_is_accurate(K, d):
    """mm1k_mean agrees with L_MM1K evaluated in 60 digits on both sides of rho = 1 (the double-precision
    closed form cancels there: it gave -1 for K = 1 at rho = 1 + 2e-9), and stays within [0, K]."""
    for r in (1.0 + d, 1.0 - d):
        ref = float(rq.L_MM1K.subs({rq.rho: sp.Float(r, 60), rq.K_sym: K}).evalf(60))
        got = rq.mm1k_mean(r, K)
        assert 0.0 <= got <= K
        assert got == pytest.approx(ref, rel=1e-13)


# ---- the WRED / gentle-RED curve ----------------------------------------------------------------------------

def test_simulator_drop_curve_equals_the_sympy_curve_on_a_grid():
    """droppers.red_drop_prob equals analytic.wred.drop_prob (max_p = 1/P_d) on a grid that hits every
    threshold exactly (min_th, max_th, 2 max_th) and the points between, WRED and gentle."""
    for lo, hi, pd, gentle in itertools.product((0.0, 5.0, 24.0), (30.0, 48.0), (1.0, 3.0, 10.0), (False, True)):
        avgs = np.unique(np.r_[np.linspace(0, 2.5 * hi, 301), lo, hi, 2 * hi, np.nextafter(hi, 0),
                               np.nextafter(2 * hi, 0)])
        ref = wred.drop_prob(avgs, lo, hi, pd, gentle)
        got = np.array([droppers.red_drop_prob(a, lo, hi, 1.0 / pd, gentle) for a in avgs])
        np.testing.assert_allclose(got, ref, rtol=1e-14, atol=1e-15)


def test_colour_drop_prob_reads_the_sympy_curve():
    """colour_drop_prob (used by the AF and QSTP simulators) is the SymPy curve of the average the mode names."""
    prof = wred.TAKEO_TABLE_I
    avgs = np.array([10.0, 30.0, 45.0])
    for mode, idx in (("wred", (2, 2, 2)), ("rio", (0, 2, 2)), ("nred", (0, 1, 2))):
        for c in range(3):
            got = droppers.colour_drop_prob(avgs, c, np.array(prof.min_th), np.array(prof.max_th), prof.max_p,
                                            droppers.MODES[mode], False)
            assert got == pytest.approx(float(prof.prob(c, avgs[idx[c]])), rel=1e-14, abs=1e-15)


# ---- gTFRC clamp and RFC 5348 loss-interval weights ---------------------------------------------------------

@pytest.mark.parametrize("target", [None, 2e4, 2e5, 5e6])
@pytest.mark.parametrize("p", [1e-4, 0.01, 0.3])
@pytest.mark.parametrize("x_recv", [10.0, 3e4, 1e7])
def test_sender_rate_after_feedback_is_the_analytic_clamp(target, p, x_recv):
    """The simulated (g)TFRC sender's rate after a feedback with p > 0 is max(min(max(X_calc, g), 2 X_recv),
    s/64) of analytic.tfrc (TFRC: g absent), on a grid where each of the three limits binds somewhere."""
    Q, _ = tfrc_sender.new_state([1000.0], [target or 0.0], [np.inf], [0.1], ["receiver"])
    tfrc_sender.start(Q, 0, 0.0)
    tfrc_sender.on_feedback(Q, 0, 0.1, 0.0, 0.0, x_recv, p)
    R = Q[0, tfrc_sender.R]
    if target is None:
        xc = float(TF.tfrc_rate(1000.0, R, p))
        ref = max(min(xc, 2 * x_recv), 1000.0 / 64)
    else:
        ref = float(TF.gtfrc_rate(1000.0, R, p, target, x_recv))
    assert Q[0, tfrc_sender.X] == pytest.approx(ref, rel=1e-13)


def test_sender_clamp_expressions_share_the_rfc_5348_update():
    """tfrc_sender_expr is gtfrc_expr with no target (g -> 0): one RFC 5348 section 4.3 update for both."""
    assert sp.simplify(TF.gtfrc_expr.subs(TF.g, 0) - TF.tfrc_sender_expr) == 0


def test_tfrc_loss_rate_kernel_is_the_mean_loss_interval():
    """The TFRC kernels' loss event rate (the one both the dumbbell and the TSQ simulator use) is 1 / I_mean of
    RFC 5348 section 5.4 (analytic.tfrc.mean_loss_interval) for every history length 0..8."""
    rng = np.random.default_rng(5348)
    for _ in range(20):
        hist = rng.uniform(1.0, 500.0, 8)
        open_count = int(rng.integers(0, 600))
        for nh in range(9):
            ref = 1.0 if nh == 0 else min(1.0, 1.0 / max(tfrc_sender.mean_loss_interval(open_count, hist[:nh]), 1.0))
            assert tfrc_sender.loss_rate(hist, nh, open_count) == pytest.approx(ref, rel=1e-14)


def test_tsq_simulator_runs_the_shared_tfrc_sender():
    """The TSQ simulator has no TFRC sender of its own: its kernel calls the shared one (no equation, loss history
    or rate rule is written in validation/tsq_sim.py)."""
    src = inspect.getsource(tsq_sim)
    assert "F_.rate_due" in src and "F_.on_drop" in src and "F_.rtt_sample" in src
    assert "tfrc_expr" not in src and "mean_loss_interval" not in src and "lambdify" not in src


def test_loss_interval_weights_are_defined_once():
    """The sender's WEIGHTS and T_MBI are analytic.tfrc's."""
    assert tfrc_sender.WEIGHTS is TF.LOSS_WEIGHTS
    assert tfrc_sender.T_MBI == int(TF.T_MBI)


# ---- __all__ is true ----------------------------------------------------------------------------------------

_OWNED = ["qosbound.analytic." + m for m in ("cbwfq", "ef_bound", "ferrari", "markers", "pq_txq", "priority",
                                             "quality", "red_queue", "tfrc", "tsq", "wred", "curves", "drr", "port",
                                             "network_curves")]
_OWNED += ["qosbound.markov", "qosbound.models.tsq", "qosbound.models.af", "qosbound.models.stationary"]
_OWNED += ["qosbound.validation." + m for m in ("droppers", "tfrc_sender", "tsq_sim", "qstp_sim", "af_sim", "stats",
                                               "port_kernels", "port_sim", "network_sim")]


@pytest.mark.parametrize("name", _OWNED)
def test_all_names_exist_and_cover_the_public_functions(name):
    """Every name in a module's __all__ exists, and every public function or class defined there is listed."""
    mod = importlib.import_module(name)
    assert all(hasattr(mod, n) for n in mod.__all__)
    defined = [n for n, v in vars(mod).items() if not n.startswith("_")
               and (inspect.isfunction(v) or inspect.isclass(v) or type(v).__name__ == "CPUDispatcher")
               and getattr(v, "__module__", None) == name]
    assert sorted(set(defined) - set(mod.__all__)) == []
