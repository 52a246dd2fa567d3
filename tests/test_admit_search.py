"""The admission search's bracketing walk (qosbound.admit_search.Search._walk): the pair of points a walk of
single doublings or halvings finds, found in logarithmically many judgements."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

from qosbound.admit_search import WALK_SINGLE, Search


def _judge(search, stop_at, judged):
    """A monotone judgement along the walk: x stops from the threshold on (x >= stop_at, walking up); every new
    point costs one evaluation, as Search.point counts them."""
    def stops(x):
        if x not in judged:
            judged.add(x)
            search.evals += 1
        return x >= stop_at
    return stops


def _single_steps(start, move, stops, search):
    """The walk as the search took it before: one step at a time while the budget lasts."""
    b = move(start)
    if stops(b):
        return start, b
    a = start
    while search.evals < search.max_evals // 2:
        a, b = b, move(b)
        if stops(b):
            break
    return a, b


def test_the_walk_finds_the_single_step_walks_pair_in_logarithmically_many_judgements():
    double = lambda x: x * 2.0  # noqa: E731
    for start, k, spent, max_evals in itertools.product([3e5, 0.7, 1.0], range(1, 45), [1, 5, 30], [80, 24]):
        stop_at = start * 2.0 ** k  # the first point that stops is step k
        old = SimpleNamespace(max_evals=max_evals, evals=spent)
        want = _single_steps(start, double, _judge(old, stop_at, set()), old)
        new = SimpleNamespace(max_evals=max_evals, evals=spent)
        judged = set()
        got = Search._walk(new, start, double, _judge(new, stop_at, judged))
        assert got == want, (start, k, spent, max_evals)
        steps = min(k, max(1, max_evals // 2 - spent))  # how far the single-step walk goes
        if steps > WALK_SINGLE:
            assert len(judged) <= WALK_SINGLE + 2 * steps.bit_length(), (k, len(judged))
        assert len(judged) <= max(steps, 1) + 1


def test_halving_down_to_a_far_feasible_value_gives_the_same_floats():
    """Halving is exact in binary floating point, so the points the walk judges are the single-step walk's."""
    halve = lambda x: x / 2.0  # noqa: E731
    start = 300e3
    for k in range(1, 40):
        target = start
        for _ in range(k):
            target /= 2.0
        s1 = SimpleNamespace(max_evals=80, evals=1)
        stops1 = lambda x: (setattr(s1, "evals", s1.evals + 1), x <= target)[1]  # noqa: E731
        s2 = SimpleNamespace(max_evals=80, evals=1)
        stops2 = lambda x: (setattr(s2, "evals", s2.evals + 1), x <= target)[1]  # noqa: E731
        assert Search._walk(s2, start, halve, stops2) == _single_steps(start, halve, stops1, s1)


def test_a_noisy_judgement_still_gives_adjacent_points_on_either_side_of_a_stop():
    """Where stopping is not monotone (a simulated margin near its limit), the pair is still a bracket: two
    consecutive points of the walk, the first not stopping, the second stopping."""
    double = lambda x: x * 2.0  # noqa: E731
    for pattern in itertools.product([False, True], repeat=10):
        stopping = {2.0 ** (i + 1) for i, s in enumerate(pattern) if s}
        s = SimpleNamespace(max_evals=80, evals=1)
        a, b = Search._walk(s, 1.0, double, lambda x: x in stopping)
        if b in stopping:
            assert b == 2 * a and (a == 1.0 or a not in stopping)
        else:  # nothing judged stops: the walk's end
            assert b == 2 * a
