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
