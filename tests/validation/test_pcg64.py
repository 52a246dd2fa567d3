"""The compiled PCG64 is NumPy's: seeded from a child's state words it holds NumPy's state, gives its raw outputs, and
draws ``random()`` and ``exponential(scale)`` bit for bit as ``Generator(PCG64(child))`` does -- the ziggurat's rare
branches (its wedges and its tail) included, over many draws."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from qosbound.validation import pcg64
from qosbound.validation.stats import generator_of, seed_sequences, spawned_words


@njit(cache=True)
def _raw(st, n):
    out = np.empty(n, np.uint64)
    for i in range(n):
        out[i] = pcg64.next_uint64(st)
    return out


@njit(cache=True)
def _draws(st, kinds, scales):
    out = np.empty(kinds.shape[0])
    for i in range(kinds.shape[0]):
        out[i] = pcg64.random(st) if kinds[i] == 0 else pcg64.exponential(st, scales[i])
    return out


@njit(cache=True)
def _via_class(words, kinds, scales):
    rng = pcg64.PCG64(pcg64.seeded(words))
    out = np.empty(kinds.shape[0])
    for i in range(kinds.shape[0]):
        out[i] = rng.random() if kinds[i] == 0 else rng.exponential(scales[i])
    return out


def _numpy(g, kinds, scales):
    return np.array([g.random() if k == 0 else g.exponential(s) for k, s in zip(kinds, scales)])


@pytest.mark.parametrize("seed", [0, 1, 2 ** 40 + 3, 2 ** 64 - 1])
def test_the_seeded_state_and_raw_outputs_are_numpys(seed):
    """For each spawned child: the 128-bit state and increment NumPy's PCG64 holds after seeding, then 10,000 raw
    64-bit outputs."""
    words = spawned_words(seed_sequences(seed, 1)[0], 20)
    for w in words:
        g = generator_of(w)
        st = pcg64.seeded(w)
        s = g.bit_generator.state["state"]
        assert (int(st[0]) << 64 | int(st[1]), int(st[2]) << 64 | int(st[3])) == (s["state"], s["inc"])
        np.testing.assert_array_equal(_raw(st, 10_000), g.bit_generator.random_raw(10_000))


def test_random_and_exponential_interleaved_are_the_generators_draws():
    """200,000 draws, uniform and exponential of various scales interleaved at random, from each of 5 children:
    equal to the Generator's; and 100,000 standard exponentials equal too, among whose raw draws some hundreds miss the
    ziggurat's rectangles (the slow branches: wedges, and the tail from layer 0)."""
    pick = np.random.default_rng(7)
    for w in spawned_words(seed_sequences(3, 1)[0], 5):
        kinds = pick.integers(0, 2, 200_000)
        scales = pick.choice([1.0, 0.02, 1e-4, 350.0], 200_000)
        mine = _draws(pcg64.seeded(w), kinds, scales)
        np.testing.assert_array_equal(mine, _numpy(generator_of(w), kinds, scales))
        np.testing.assert_array_equal(_via_class(w, kinds, scales), mine)
    # the rare branches: the raw draws that miss the ziggurat's rectangles, counted the Generator's way
    st = pcg64.seeded(spawned_words(seed_sequences(4, 1)[0], 1)[0])
    ri = _raw(st, 100_000) >> np.uint64(3)
    idx = (ri & np.uint64(0xFF)).astype(np.int64)
    missed = (ri >> np.uint64(8)) >= pcg64._KE[idx]
    assert missed.sum() > 500 and np.any(missed & (idx == 0))
    g = generator_of(spawned_words(seed_sequences(4, 1)[0], 1)[0])
    st = pcg64.seeded(spawned_words(seed_sequences(4, 1)[0], 1)[0])
    np.testing.assert_array_equal(_draws(st, np.ones(100_000, np.int64), np.ones(100_000)),
                                  g.standard_exponential(100_000))
