"""Tests for the AF PRISM models (models/wred.prism, wred_ewma.prism, marker.prism) and models/af.py.

State and transition counts are asserted before values; values are compared with a direct SciPy
solution of the same chain.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import sparse
from scipy.sparse.linalg import spsolve

from qosbound.analytic import red_queue as rq
from qosbound.analytic.markers import slotted_trtcm
from qosbound.analytic.wred import Profile
from qosbound.models import af
from tests.helpers import example

LAM = np.array([3.0, 2.0, 4.0])
MU = 8.0
P = Profile(min_th=(6, 4, 2), max_th=(12, 10, 8), P_d=(3, 3, 3))

#: Relative tolerance against SciPy's own solution of the same chain (an independent implementation). The
#: engine's long-run values come from a direct sparse solve with TRUE brackets (checked against exact
#: rationals below); the SciPy reference itself is a floating-point solve.
RTOL = 1e-9

#: (mode, states, transitions) of wred.prism at K = 14 with LAM, MU and P.
COUNTS = [("wred", 13, 24), ("rio", 107, 341), ("nred", 600, 2544)]


@pytest.mark.parametrize("mode,states,transitions", COUNTS)
def test_wred_model_equals_direct_solution(mode, states, transitions):
    """Storm's steady-state drops and mean queue equal SciPy's solution of the same CTMC."""
    prof = dataclasses.replace(P, mode=mode)
    v = af.check_wred(LAM, MU, 14, prof)
    assert (v.states, v.transitions) == (states, transitions)
    ref = rq.instantaneous(LAM, MU, 14, prof)
    np.testing.assert_allclose(v.drop, ref.drop, rtol=RTOL, atol=1e-10)
    assert v.mean_queue == pytest.approx(ref.mean_queue, rel=RTOL)
    np.testing.assert_allclose(v.delay, ref.delay, rtol=RTOL)


def test_wred_model_exact_mode_matches_float():
    """Storm's exact engine equals the product form to 1e-12; its float engine is within RTOL."""
    a = af.check_wred(LAM, MU, 14, P, ordering=False)
    b = af.check_wred(LAM, MU, 14, P, exact=True, ordering=False)
    np.testing.assert_allclose(a.drop, b.drop, rtol=RTOL)
    np.testing.assert_allclose(b.drop, rq.instantaneous(LAM, MU, 14, P).drop, rtol=1e-12)


def test_ordering_property_holds_for_nested_thresholds():
    """No reachable state has drop(AFx3) < drop(AFx2) or drop(AFx2) < drop(AFx1) with nested thresholds."""
    assert af.check_wred(LAM, MU, 14, P).misordered == 0.0


def test_ordering_property_detects_crossed_thresholds():
    """With green thresholds below red ones some state is misordered, and the property finds it."""
    bad = Profile(min_th=(2, 4, 6), max_th=(8, 10, 12), P_d=(3, 3, 3))
    assert af.check_wred(LAM, MU, 14, bad).misordered == 1.0


def _ewma_chain(lam, mu, K, prof):
    """wred_ewma.prism's CTMC built directly: state (n, a), unbiased rounding of the updated average."""
    idx = {(n, a): n * (K + 1) + a for n in range(K + 1) for a in range(K + 1)}
    N = len(idx)
    rows, cols, vals = [], [], []
    drop_rate = np.zeros((3, N))
    for (n, a), i in idx.items():
        t = (1 - prof.alpha) * a + prof.alpha * n
        dn = min(K - 1, math.floor(t))
        fr = max(0.0, min(1.0, t - dn))
        for c in range(3):
            for av, w in ((dn, 1 - fr), (dn + 1, fr)):
                p = float(prof.prob(c, av)) if n < K else 1.0
                if w * (1 - p) > 0:
                    rows.append(i); cols.append(idx[(n + 1, av)]); vals.append(lam[c] * w * (1 - p))
                if w * p > 0 and (n, av) != (n, a):
                    rows.append(i); cols.append(idx[(n, av)]); vals.append(lam[c] * w * p)
                drop_rate[c, i] += w * p
        if n > 0:
            rows.append(i); cols.append(idx[(n - 1, a)]); vals.append(mu)
    Q = sparse.csr_matrix((vals, (rows, cols)), shape=(N, N))
    Q = (Q - sparse.diags(np.asarray(Q.sum(axis=1)).ravel())).tocsr()
    # Restrict to the states reachable from (0, 0).
    reach = {0}
    frontier = [0]
    while frontier:
        s = frontier.pop()
        for j in Q.indices[Q.indptr[s]:Q.indptr[s + 1]]:
            if j not in reach and Q[s, j] > 0:
                reach.add(j)
                frontier.append(j)
    keep = np.array(sorted(reach))
    Qr = Q[keep][:, keep]
    A = Qr.T.tolil()
    A[-1, :] = 1.0
    b = np.zeros(len(keep))
    b[-1] = 1.0
    pi = spsolve(A.tocsc(), b)
    nvec = np.array([k // (K + 1) for k in keep])
    return pi @ drop_rate[:, keep].T, float(pi @ nvec), len(keep)


def test_ewma_model_equals_direct_solution():
    """wred_ewma.prism (alpha = 1/2) equals a direct SciPy solution of the same discretised-EWMA chain."""
    prof = dataclasses.replace(P, alpha=0.5)
    v = af.check_wred_ewma(LAM, MU, 14, prof)
    assert (v.states, v.transitions) == (130, 467)
    drop, L, n = _ewma_chain(LAM, MU, 14, prof)
    assert n == v.states
    np.testing.assert_allclose(v.drop, drop, rtol=RTOL)
    assert v.mean_queue == pytest.approx(L, rel=RTOL)


def test_ewma_model_with_alpha_one_is_the_instantaneous_chain():
    """With alpha = 1 the discretised average is the queue itself: same drops as wred.prism."""
    v = af.check_wred_ewma(LAM, MU, 14, dataclasses.replace(P, alpha=1.0))
    ref = rq.instantaneous(LAM, MU, 14, P)
    np.testing.assert_allclose(v.drop, ref.drop, rtol=RTOL, atol=1e-10)


def test_marker_model_equals_slotted_chain():
    """marker.prism's P(green), P(yellow), P(red) equal the SciPy solution of the slotted trTCM chain."""
    frac, res = af.check_marker(0.5, 2, 1, 12, 8, 4)
    assert (res.states, res.transitions) == (74, 148)
    np.testing.assert_allclose(frac, slotted_trtcm(0.5, 2, 1, 12, 8, 4), rtol=1e-9)
    assert frac.sum() == pytest.approx(1.0)


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=5, deadline=None)
@given(mode=st.sampled_from(["wred", "rio", "nred"]), load=st.floats(0.3, 2.5), K=st.integers(8, 10),
       gentle=st.booleans())
def test_model_equals_direct_solution_on_random_small_instances(mode, load, K, gentle):
    """On random small instances Storm's float route is within 1e-5 absolute of the SciPy solution of the
    same chain (its error is not tied to the requested precision; exact mode is checked on WRED above)."""
    prof = dataclasses.replace(P, mode=mode, gentle=gentle, min_th=(5, 3, 1), max_th=(8, 7, 6))
    ref = rq.instantaneous(LAM * load, MU, K, prof)
    v = af.check_wred(LAM * load, MU, K, prof, ordering=False)
    np.testing.assert_allclose(v.drop, ref.drop, atol=1e-5)


@pytest.mark.parametrize("mode,K", [("wred", 14), ("rio", 14), ("nred", 9)])
def test_model_intervals_contain_the_exact_values(mode, K):
    """Every interval of check_wred (drops, mean queue, delays, overall drop, throughput) contains Storm's
    exact (rational) result and is narrow: the float route's error is bounded, not assumed. (Storm's own
    iterative long-run route was 4e-7 relative off on drop0 of the takeo2003 AF1 class at 'precision 1e-10',
    outside such an interval.)"""
    prof = dataclasses.replace(P, mode=mode)
    fl = af.check_wred(LAM, MU, K, prof, ordering=False)
    ex = af.check_wred(LAM, MU, K, prof, exact=True, ordering=False)
    assert ex.intervals == {}
    iv = fl.intervals
    for c in range(3):
        lo, hi = iv[f"drop{c}"]
        assert lo <= ex.drop[c] <= hi and hi - lo <= 1e-12 + 1e-9 * ex.drop[c]
        lo, hi = iv[f"delay{c}"]
        assert lo * (1 - 1e-15) <= ex.delay[c] <= hi * (1 + 1e-15)  # ex.delay: rationals rounded, then divided
    lo, hi = iv["queue"]
    assert lo <= ex.mean_queue <= hi and hi - lo <= 1e-9 * ex.mean_queue


def test_model_checked_results_are_numerical_intervals():
    """systems/af.py's model-checked Results carry the engine's true bound (they were labelled 'precision 1e-10'
    while 1e-5 wide): Interval.numerical where the chain is the scenario, and where it is not (qstp2008's RIO
    averages with alpha = 2^-9, the chain takes alpha = 1) an approximation naming what it neglects, with the
    model's own bracket in its note."""
    from qosbound.progress import QUIET
    from qosbound.results import Kind
    from qosbound.scenario import load
    from qosbound.systems.af import class_inputs
    from qosbound.systems.af.model_checked import model_checked

    scn = load(example("qstp2008"))
    res = model_checked(scn, class_inputs(scn), QUIET)
    assert res
    for r in res:
        if r.interval.kind == Kind.APPROXIMATION:
            assert "EWMA averaging" in r.interval.neglects and "the model's own value lies in" in r.interval.note, r
            continue
        assert r.interval.kind == Kind.NUMERICAL, r
        assert r.interval.high - r.interval.low <= 1e-9 * max(abs(r.value), 1e-6), r
    assert any(r.interval.kind == Kind.APPROXIMATION for r in res)


def test_loading_a_ctmc_prints_no_storm_warning(capfd):
    """Storm's 'input model is a CTMC, but uses probabilistic commands' warning (four per AF run) is gone."""
    from qosbound.models.engine import load_program
    capfd.readouterr()
    load_program(af.WRED_MODEL)
    out = capfd.readouterr()
    assert "input model is a CTMC" not in out.out + out.err
