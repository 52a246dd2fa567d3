"""Tests of qosbound.validation.stats: intervals, batch means, streamed histograms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from scipy.signal import lfilter

from qosbound.validation.stats import (Estimate, Histogram, batch_means, ci_kind, generator_of, hist_ccdf,
                                       hist_quantile, nice_bin_width, proportion_interval, seed_sequences,
                                       spawned_generators, spawned_words, t_interval)


def test_ci_kind_labels():
    """Interval labels read as percentages without trailing zeros."""
    assert ci_kind(0.95) == "95% CI"
    assert ci_kind(0.975) == "97.5% CI"
    assert ci_kind(0.99) == "99% CI"


def test_t_interval_matches_textbook_formula():
    """The interval is mean +- t_{n-1, (1+c)/2} * s / sqrt(n)."""
    x = np.array([1.0, 2.0, 4.0, 7.0])
    e = t_interval(x, 0.9)
    s = x.std(ddof=1) / 2.0
    t = sps.t.ppf(0.95, 3)
    assert e.mean == pytest.approx(3.5)
    assert e.std_error == pytest.approx(s)
    assert (e.low, e.high) == pytest.approx((3.5 - t * s, 3.5 + t * s))
    iv = e.interval()
    assert iv.label() == "90% CI" and iv.low == e.low and iv.high == e.high
    # the interval carries what an agreement check needs to rebuild it family-wise
    assert iv.se == pytest.approx(s) and iv.dof == 3 and iv.level == 0.9


def test_t_interval_refuses_bad_input():
    """One sample, non-finite samples or a confidence outside (0, 1) are errors."""
    with pytest.raises(ValueError):
        t_interval([1.0])
    with pytest.raises(ValueError):
        t_interval([1.0, math.nan])
    with pytest.raises(ValueError):
        t_interval([1.0, 2.0], 1.0)


def test_t_interval_coverage():
    """Over many independent experiments a 95 % interval covers the true mean about 95 % of the time."""
    rng = np.random.default_rng(7)
    trials = 2000
    x = rng.exponential(2.0, size=(trials, 30))
    ests = [t_interval(row) for row in x]
    cover = sum(e.low <= 2.0 <= e.high for e in ests)
    # Skewed exponential samples of 30 undercover slightly (about 0.93); the band is about +-3.5 binomial sd.
    assert 0.91 <= cover / trials <= 0.955


def test_batch_means_covers_ar1_mean():
    """Batch means gives a valid interval for a positively correlated AR(1) series with known mean."""
    rng = np.random.default_rng(3)
    hits = 0
    runs = 200
    for _ in range(runs):
        y = lfilter([1.0], [1.0, -0.8], rng.normal(size=20_000))  # y_i = 0.8 y_{i-1} + e_i
        est = batch_means(y + 5.0, batches=20)
        hits += est.low <= 5.0 <= est.high
    assert 0.88 <= hits / runs <= 0.995


def test_batch_means_refuses_too_few():
    """Fewer observations than batches is an error."""
    with pytest.raises(ValueError):
        batch_means([1.0, 2.0], batches=5)


@given(st.floats(1e-9, 1e3), st.integers(1, 10**6))
def test_nice_bin_width_is_round_and_fits(span, max_bins):
    """The width is 1, 2 or 5 times a power of ten and gives at most max_bins bins (and not 2.5x fewer)."""
    w = nice_bin_width(span, max_bins)
    assert span / w <= max_bins * (1 + 1e-9)
    assert span / w > max_bins / 2.5 * (1 - 1e-9)
    m = w / 10 ** math.floor(math.log10(w) + 1e-12)
    assert min(abs(m - 1), abs(m - 2), abs(m - 5)) < 1e-9


def test_histogram_quantile_exact_on_atoms():
    """A lattice distribution whose values sit alone in their bins gets exact quantiles."""
    h = Histogram(0.0, 0.1, 100)
    vals = np.repeat([0.25, 0.55, 1.05], [50, 30, 20])
    h.add(vals)
    assert h.quantile(0.5) == 0.25
    assert h.quantile(0.51) == 0.55
    assert h.quantile(0.8) == 0.55
    assert h.quantile(0.81) == 1.05
    assert h.ccdf(0.25) == pytest.approx(0.5)
    assert h.ccdf(0.5) == pytest.approx(0.5)
    assert h.ccdf(1.05) == 0.0
    assert h.mean == pytest.approx(vals.mean())


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from([0.01, 0.1, 0.5, 0.9, 0.99]))
def test_histogram_quantile_within_one_bin(seed, q):
    """Histogram quantiles and CCDF values are within one bin of the empirical ones."""
    rng = np.random.default_rng(seed)
    x = rng.gamma(2.0, 1.0, size=5000)
    width = 0.05
    h = Histogram(0.0, width, int(np.ceil(x.max() / width)) + 1)
    for chunk in np.array_split(x, 7):
        h.add(chunk)
    emp = np.quantile(x, q, method="inverted_cdf")
    assert abs(h.quantile(q) - emp) <= width
    d = float(np.quantile(x, q))
    lo, hi = np.mean(x > d + width), np.mean(x > d - width)
    assert lo - 1e-12 <= h.ccdf(d) <= hi + 1e-12


def test_histogram_merge_equals_single_fill():
    """Merging histograms of two halves equals filling one with everything."""
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 1, 1000)
    a, b, c = Histogram(0, 0.01, 100), Histogram(0, 0.01, 100), Histogram(0, 0.01, 100)
    a.add(x[:400])
    b.add(x[400:])
    c.add(x)
    a.merge(b)
    assert np.array_equal(a.counts, c.counts)
    assert a.quantile(0.3) == pytest.approx(c.quantile(0.3))
    assert a.count == 1000 and a.max == x.max()


def test_histogram_refuses_clipped_quantiles():
    """Observations outside the bins are counted and make quantiles an error instead of a wrong number."""
    h = Histogram(0.0, 1.0, 10)
    h.add([0.5, 11.0])
    assert h.overflow == 1
    with pytest.raises(ValueError):
        h.quantile(0.5)


def test_raw_array_helpers_agree_with_class():
    """hist_quantile / hist_ccdf on raw arrays give what the class gives."""
    h = Histogram(0.0, 0.5, 20)
    h.add([0.1, 0.2, 1.3, 4.4, 4.45, 9.0])
    assert hist_quantile(h.counts, 0.0, 0.5, 0.5, h.bin_min, h.bin_max) == h.quantile(0.5)
    assert hist_ccdf(h.counts, 0.0, 0.5, 4.42, h.bin_min, h.bin_max) == h.ccdf(4.42)
    # Without per-bin extremes the answer stays inside the bin.
    v = hist_quantile(h.counts, 0.0, 0.5, 0.5)
    assert 1.0 <= v <= 1.5


def test_estimate_half_width():
    """half_width is half the interval length."""
    e = Estimate(1.0, 0.1, 0.8, 1.2, 5, 0.95)
    assert e.half_width == pytest.approx(0.2)


def test_proportion_interval_zero_successes_and_coverage():
    """Clopper-Pearson gives (0, 1 - (alpha/2)^(1/n)) for no successes and covers at least nominally."""
    lo, hi = proportion_interval(0, 1000, 0.95)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 1000))
    assert proportion_interval(5, 5)[1] == 1.0
    rng = np.random.default_rng(5)
    k = rng.binomial(200, 0.03, size=2000)
    iv = {int(x): proportion_interval(int(x), 200) for x in np.unique(k)}
    cover = np.mean([iv[int(x)][0] <= 0.03 <= iv[int(x)][1] for x in k])
    assert cover >= 0.94  # conservative by construction; 0.94 allows sampling noise of 2000 trials
    with pytest.raises(ValueError):
        proportion_interval(3, 2)


@pytest.mark.parametrize("seed", [0, 1, 2 ** 32, 2 ** 40 + 7, 2 ** 64 - 1])
@pytest.mark.parametrize("stream", [(), (3,), (1, 2 ** 33)])
def test_spawned_generators_are_the_generators_of_the_spawned_children(seed, stream):
    """The children's generators computed together are NumPy's own for ``seq.spawn(n)``, state for state and draw
    for draw, and ``seq`` is not advanced (a later spawn gives the same children)."""
    for seq in seed_sequences(seed, 2, stream):
        mine = spawned_generators(seq, 70)
        assert seq.n_children_spawned == 0
        theirs = [np.random.Generator(np.random.PCG64(k)) for k in seq.spawn(70)]
        assert [g.bit_generator.state for g in mine] == [g.bit_generator.state for g in theirs]
        for a, b in zip(mine, theirs):
            np.testing.assert_array_equal(a.random(5), b.random(5))
            np.testing.assert_array_equal(a.exponential(2.0, 5), b.exponential(2.0, 5))


def test_spawned_generators_continue_after_children_spawned_and_take_any_entropy():
    """After children were spawned the next ones are computed; entropy that is not one integer (a list) is spawned
    by NumPy itself -- the same generators either way."""
    seq = np.random.SeedSequence(5, spawn_key=(2,))
    seq.spawn(3)
    mine = spawned_generators(seq, 4)
    assert [g.bit_generator.state for g in mine] == [np.random.Generator(np.random.PCG64(k)).bit_generator.state
                                                     for k in seq.spawn(4)]
    seq = np.random.SeedSequence([1, 2, 3])
    mine = spawned_generators(seq, 3)
    assert [g.random() for g in mine] == [np.random.Generator(np.random.PCG64(k)).random() for k in seq.spawn(3)]
    assert spawned_generators(seq, 0) == []


def test_spawned_words_are_the_childrens_state_words_either_way():
    """The state words computed together, and those of entropy NumPy spawns itself (a list), are each child's
    ``generate_state(4, np.uint64)``; none for no child; ``generator_of`` a row is the child's generator."""
    for seq in (np.random.SeedSequence(9, spawn_key=(1,)), np.random.SeedSequence([4, 5])):
        words = spawned_words(seq, 6)
        kids = seq.spawn(6)
        np.testing.assert_array_equal(words, np.array([k.generate_state(4, np.uint64) for k in kids]))
        assert generator_of(words[3]).bit_generator.state == np.random.PCG64(kids[3]).state
    assert spawned_words(np.random.SeedSequence(1), 0).shape == (0, 4)
