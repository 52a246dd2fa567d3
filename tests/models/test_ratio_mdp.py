"""Certified ratio bounds on an MDP with post-decision choices (models/ratio_mdp.py): never below the ratio of any
policy (all deterministic policies enumerated on a small random process), within a hair of the best one, and
equal to the chain's own ratio where there is no choice; the certificate is what proves, whatever h it is given."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from qosbound.models.ratio_mdp import ChoiceMDP


def _process(seed, choice=True):
    """3 labels of 2 kinds, n in 0..1, 2 draws; choice sets of 2 labels (1 without choice)."""
    rng = np.random.default_rng(seed)
    kind = np.array([0, 1, 1])
    T = []
    for _ in range(2):
        t = rng.random((2, 2, 2))
        T.append(t / t.sum(axis=(1, 2), keepdims=True))
    post = []
    for _ in range(2):
        if choice:
            sets = [sorted(rng.choice(3, 2, replace=False)) for _ in range(3)]
        else:
            sets = [[int(rng.integers(3))] for _ in range(3)]
        indptr = np.cumsum([0] + [len(s) for s in sets])
        post.append((indptr, np.concatenate(sets)))
    N, D = rng.random((3, 2)), 0.5 + rng.random((3, 2))
    return ChoiceMDP(kind, post, T), N, D


def _policy_ratios(mdp, N, D, width=2):
    """x.N / x.D of every deterministic policy choosing by (label, draw, n') among ``width`` labels."""
    out = []
    slots = [(a, i, m) for a in range(2) for i in range(3) for m in range(2)]
    for pick in itertools.product(range(width), repeat=len(slots)):
        pol = [np.zeros((3, 2), dtype=np.int64) for _ in range(2)]
        for (a, i, m), c in zip(slots, pick):
            pol[a][i, m] = c
        P = mdp._matrix(pol).toarray()
        beta = 1.0 - 1e-10  # Abel limits from every start state: the long-run frequencies of the class reached
        X = (1.0 - beta) * np.linalg.inv(np.eye(P.shape[0]) - beta * P)
        out += [float(x @ N.ravel() / (x @ D.ravel())) for x in X]
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_bound_is_at_least_every_policy_and_close_to_the_best(seed):
    mdp, N, D = _process(seed)
    ratios = _policy_ratios(mdp, N, D)
    rho, _ = mdp.lp_bound(N, D)
    assert rho >= max(ratios) - 1e-7  # (the Abel limits are within 1e-8 of the long-run ratios)
    assert rho <= max(ratios) + 1e-7


@pytest.mark.parametrize("seed", [4, 5])
def test_without_choice_the_bound_and_the_interval_are_the_chains_ratio(seed):
    mdp, N, D = _process(seed, choice=False)
    ratios = _policy_ratios(mdp, N, D, width=1)
    r = ratios[0]
    assert max(ratios) - min(ratios) < 1e-7  # one chain (unichain here)
    lo, hi = mdp.ratio_interval(N, D)
    assert lo - 1e-7 <= r <= hi + 1e-7 and hi - lo < 1e-9
    assert mdp.lp_bound(N, D)[0] == pytest.approx(r, rel=1e-6)


def test_the_certificate_of_any_h_is_a_bound_and_a_poor_h_gives_a_poor_one():
    """With h = 0 the certificate is the largest reward (a true but loose bound on the average)."""
    mdp, N, _ = _process(7)
    assert mdp.certificate(np.zeros((3, 2)), N) == pytest.approx(N.max())
    g_best = max(_policy_ratios(mdp, N, np.ones_like(N)))
    assert g_best <= mdp.lp_bound(N, np.ones_like(N))[0] + 1e-7 <= N.max() + 1e-12


def _larger_process(seed, labels=12, levels=6):
    """``labels`` labels of 2 kinds, n in 0 .. levels - 1, 2 draws, choice sets of 1-3 labels, a constraint of
    both signs: a process whose policy iteration factorises many policies."""
    rng = np.random.default_rng(seed)
    kind = rng.integers(0, 2, labels)
    T = []
    for _ in range(2):
        t = rng.random((levels, 2, levels)) * (rng.random((levels, 2, levels)) < 0.5)
        t[:, :, 0] += 1e-3  # every row has mass
        T.append(t / t.sum(axis=(1, 2), keepdims=True))
    post = []
    for _ in range(2):
        sets = [sorted(rng.choice(labels, int(rng.integers(1, 4)), replace=False)) for _ in range(labels)]
        post.append((np.cumsum([0] + [len(s) for s in sets]), np.concatenate(sets)))
    N, D = rng.random((labels, levels)), 0.5 + rng.random((labels, levels))
    C = rng.random((labels, levels)) - 0.5
    return (kind, post, T), N, D, C


@pytest.mark.parametrize("seed", [1, 2])
def test_the_system_built_for_a_policy_is_one_minus_p_with_the_column_of_ones_in_any_column_order(seed):
    """_system: [1 | (I - (1 - r) P) without column 0] (unknowns gain, h_1 .. h_last), its column j at position
    perm[j] when a permutation is given; P (_matrix) a stochastic matrix choosing the policy's labels."""
    args, *_ = _larger_process(seed)
    mdp = ChoiceMDP(*args)
    rng = np.random.default_rng(seed)
    pol = [rng.integers(0, np.diff(indptr)[:, None], size=(mdp.N, mdp.nn)) for indptr, _ in mdp.post]
    P = mdp._matrix(pol).toarray()
    assert np.allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    for r in (0.0, 1e-3):
        want = np.eye(mdp.size) - (1.0 - r) * P
        want[:, 0] = 1.0
        perm = rng.permutation(mdp.size)
        # (equal up to the rounding of sums: a state reached by both draws is summed before or after scaling)
        assert np.max(np.abs(mdp._system(pol, r).toarray() - want)) <= 4e-16
        assert np.max(np.abs(mdp._system(pol, r, perm).toarray()[:, perm] - want)) <= 4e-16


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_reusing_one_column_order_gives_the_bounds_of_an_order_per_policy(seed):
    """The factorisations in a reused column order (ChoiceMDP._factor, reuse_order) against one fill-reducing
    order computed for every policy (the plain policy iteration): the same certified bounds, with and without
    the constraint, at most a rounding apart, and the reuse did take place (fewer orders than factorisations).
    On the 3-label process, both are at least every deterministic policy's ratio."""
    args, N, D, C = _larger_process(seed)
    got = {}
    for reuse in (False, True):
        mdp = ChoiceMDP(*args)
        mdp.reuse_order = reuse
        got[reuse] = (mdp.lagrange_bound(N, D), mdp.lagrange_bound(N, D, C))
        assert mdp.factorisations >= 3
        assert (mdp.orderings < mdp.factorisations) if reuse else (mdp.orderings == mdp.factorisations)
    for plain, reused in zip(got[False], got[True]):
        assert reused[0] == pytest.approx(plain[0], rel=1e-9)
        assert reused[1] == pytest.approx(plain[1], rel=1e-6, abs=1e-9)  # the multiplier of the smallest bound
    assert got[True][1][0] <= got[True][0][0] + 1e-9  # the constraint only lowers the bound
    mdp, n, d = _process(seed)
    ratios = _policy_ratios(mdp, n, d)
    for reuse in (False, True):
        mdp, n, d = _process(seed)
        mdp.reuse_order = reuse
        assert mdp.lagrange_bound(n, d)[0] >= max(ratios) - 1e-7


def test_a_policy_with_two_closed_classes_is_solved_restarted_and_its_factorisation_kept():
    """Two labels, each keeping itself (the choice sets allow either): two closed classes, the system without the
    restart is singular; the evaluation restarts to state 0 (gain and frequencies of state 0's class), and a
    second evaluation of the same policy reuses that factorisation."""
    mdp = ChoiceMDP(np.array([0, 0]), [(np.array([0, 2, 4]), np.array([0, 1, 1, 0]))], [np.ones((1, 1, 1))])
    pol = [np.zeros((2, 1), dtype=np.int64)]
    for R in (np.array([[0.3], [0.9]]), np.array([[0.7], [0.1]])):
        g, h, x = mdp.evaluate(pol, R)
        assert g == pytest.approx(R[0, 0], abs=1e-8) and np.allclose(x.ravel(), [1.0, 0.0], atol=1e-8)
        assert np.all(np.isfinite(h))
        assert mdp.factorisations == 1 and mdp.evaluations in (1, 2)
