"""Statistics for simulated and measured output: THE one place for confidence intervals, family-wise
(Bonferroni) quantiles and the seeding of replications. Every simulator, trace comparison and agreement
check uses these functions; none re-types a quantile or derives seeds its own way.

The public surface is small:

* :func:`t_quantile` -- Student-t (or normal, for unknown degrees of freedom) quantile;
* :func:`two_sided_t` -- the multiplier of a two-sided interval at a confidence level;
* :func:`bonferroni` -- per-check probabilities that hold a family of checks at a family-wise level;
* :func:`seed_sequences`, :func:`replication_rngs`, :func:`replication_seeds` -- independent
  replications derived from one scenario seed by ``numpy.random.SeedSequence(seed).spawn(n)``
  (an optional ``stream`` key separates independent experiments of one scenario, e.g. one per flow);
  :func:`spawned_generators` -- the generators of ``seq.spawn(n)`` computed for all ``n`` children at once
  (:func:`spawned_words`, their state words; :func:`generator_of`, one generator from its words);
* :func:`t_interval` -- Student-t interval for the mean of independent replications, at the
  scenario's confidence level;
* :func:`batch_means` -- the same for one long correlated run, cut into batches;
* :class:`Estimate` -- a point estimate with its standard error and interval,
  convertible to a :class:`qosbound.results.Interval`;
* :func:`proportion_interval` -- Clopper-Pearson interval for a binomial proportion
  (a floor for rare events, where replications may all see zero);
* :class:`Welch`, :func:`welch`, :func:`welch_samples` -- Welch's test of two means from summary
  statistics (mean, standard error, replications each) or from the samples: p-values and one-sided
  bounds on the difference. Without spread there is no test: the p-value is 1 when the means are
  equal and 0 when they differ (never NaN), and a bound's half-width is 0;
* :func:`ci_kind` -- the interval label, ``0.95 -> "95% CI"``;
* :func:`nice_bin_width` -- a round bin width (1, 2 or 5 times a power of ten);
* :class:`Histogram` -- fixed-width bins streamed from chunks, with per-bin
  minimum and maximum so quantiles are exact on atoms and interpolated inside a
  bin otherwise; :func:`hist_quantile` and :func:`hist_ccdf` work on the raw arrays
  (for numba kernels that fill them directly).

Quantiles use the definition ``Q(q) = inf{x : F(x) >= q}``; the CCDF is
``P(X > d)``. Estimates from a histogram are accurate to one bin.

References: Law & Kelton, *Simulation Modeling and Analysis*, 3rd ed., sections
9.4 (independent replications) and 9.5.3 (batch means).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from qosbound.results import Interval

__all__ = ["Estimate", "t_interval", "batch_means", "proportion_interval", "ci_kind", "nice_bin_width", "Histogram",
           "hist_quantile", "hist_ccdf", "t_quantile", "two_sided_t", "bonferroni", "seed_sequences",
           "replication_rngs", "replication_seeds", "spawned_generators", "spawned_words", "generator_of", "proportion_se", "Welch", "welch",
           "welch_samples"]

_MASK64 = 0xFFFFFFFFFFFFFFFF


def t_quantile(p: float, dof: int | None) -> float:
    """The ``p``-quantile of Student's t with ``dof`` degrees of freedom (the normal one when ``dof`` is None)."""
    from scipy import stats

    if not 0.0 < p < 1.0:
        raise ValueError(f"probability {p!r} is not in (0, 1)")
    if dof is None:
        return float(stats.norm.ppf(p))
    if dof < 1:
        raise ValueError("a Student-t quantile needs at least one degree of freedom")
    return float(stats.t.ppf(p, dof))


def two_sided_t(confidence: float, dof: int | None) -> float:
    """The multiplier ``t`` of a two-sided interval ``mean +- t * se`` at ``confidence``."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")
    return t_quantile(0.5 + confidence / 2.0, dof)


def bonferroni(family_confidence: float, checks: int) -> tuple[float, float]:
    """Per-check quantile probabilities (two-sided, one-sided) that hold ``checks`` checks at a family-wise
    confidence ``family_confidence`` (Bonferroni: each check gets error ``(1 - family_confidence) / checks``)."""
    if not 0.0 < family_confidence < 1.0:
        raise ValueError("family_confidence must be in (0, 1)")
    alpha = (1.0 - family_confidence) / max(int(checks), 1)
    return 1.0 - alpha / 2.0, 1.0 - alpha


def seed_sequences(seed: int, replications: int, stream: tuple[int, ...] = ()) -> list:
    """``replications`` independent seed sequences spawned from the scenario seed (and a ``stream`` key
    that separates independent experiments of one scenario, e.g. the k-th flow: ``stream=(k,)``)."""
    if replications < 1:
        raise ValueError("at least one replication")
    root = np.random.SeedSequence(int(seed) & _MASK64, spawn_key=tuple(int(k) for k in stream))
    return root.spawn(int(replications))


def replication_rngs(seed: int, replications: int, stream: tuple[int, ...] = ()) -> list:
    """One NumPy generator per replication (see :func:`seed_sequences`)."""
    return [np.random.default_rng(ss) for ss in seed_sequences(seed, replications, stream)]


def replication_seeds(seed: int, replications: int, stream: tuple[int, ...] = ()) -> np.ndarray:
    """One 32-bit integer seed per replication (for numba kernels, which seed their own generator), drawn
    from the same spawned sequences as :func:`replication_rngs`."""
    return np.array([ss.generate_state(1, np.uint32)[0] for ss in seed_sequences(seed, replications, stream)],
                    dtype=np.int64)


# NumPy's SeedSequence hash (numpy/random/bit_generator.pyx, after M. O'Neill's seed_seq_fe): its constants
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R, _XSHIFT, _MASK32 = np.uint32(0xCA01F9DD), np.uint32(0x4973F715), np.uint32(16), 0xFFFFFFFF


def _hashmix(v: np.ndarray, h: int) -> tuple[np.ndarray, int]:
    """SeedSequence's ``hashmix`` on a column of words (uint32, wrapping), the hash constant ``h`` advanced."""
    v = v ^ np.uint32(h)
    h = (h * _MULT_A) & _MASK32
    v = v * np.uint32(h)
    return v ^ (v >> _XSHIFT), h


def _mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    r = _MIX_L * x - _MIX_R * y
    return r ^ (r >> _XSHIFT)


class _Words(np.random.bit_generator.ISeedSequence):
    """A seed sequence whose state words are already known (those of one spawned child)."""

    __slots__ = ("words",)

    def __init__(self, words: np.ndarray):
        self.words = words

    def generate_state(self, n_words, dtype=np.uint32):
        if np.dtype(dtype) != np.uint64 or n_words != self.words.shape[0]:
            raise ValueError("these words seed a 64-bit generator of their own size only")
        return self.words.copy()


def _int_words(x) -> list[int]:
    """A non-negative integer as SeedSequence reads it: 32-bit words, lowest first (0: one zero word)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)) or x < 0:
        raise ArithmeticError("entropy other than a non-negative integer: NumPy's own spawning")
    x = int(x)
    words = [x & _MASK32]
    while x > _MASK32:
        x >>= 32
        words.append(x & _MASK32)
    return words


def _child_words(seq: np.random.SeedSequence, n: int) -> np.ndarray:
    """The four 64-bit state words (``generate_state(4, np.uint64)``) of each of ``seq.spawn(n)``'s children, all
    children at once: child ``i`` is the sequence of ``seq``'s entropy with the spawn key ``seq.spawn_key + (j,)``,
    ``j = seq.n_children_spawned + i``, its assembled entropy the parent's words then ``j`` (one word below 2^32);
    the pool mixing and the state generation are SeedSequence's, run on a column per child."""
    j0, pool = seq.n_children_spawned, seq.pool_size
    run = _int_words(seq.entropy)
    spawn = [w for k in seq.spawn_key for w in _int_words(k)]
    ent = run + [0] * max(0, pool - len(run)) + spawn  # the run's words padded to the pool (a spawned child's)
    L = len(ent) + 1
    cols = [np.full(n, w, np.uint32) for w in ent] + [np.arange(j0, j0 + n, dtype=np.uint64).astype(np.uint32)]
    h = _INIT_A
    mixer = []
    for i in range(pool):
        v, h = _hashmix(cols[i] if i < L else np.zeros(n, np.uint32), h)
        mixer.append(v)
    for src in range(pool):
        for dst in range(pool):
            if src != dst:
                v, h = _hashmix(mixer[src], h)
                mixer[dst] = _mix(mixer[dst], v)
    for src in range(pool, L):
        for dst in range(pool):
            v, h = _hashmix(cols[src], h)
            mixer[dst] = _mix(mixer[dst], v)
    h = _INIT_B
    out = np.empty((n, 8), np.uint32)
    for k in range(8):  # 4 uint64 words = 8 uint32 words, cycling over the pool
        v = mixer[k % pool] ^ np.uint32(h)
        h = (h * _MULT_B) & _MASK32
        v = v * np.uint32(h)
        out[:, k] = v ^ (v >> _XSHIFT)
    words = out.astype("<u4").view("<u8").astype(np.uint64)
    first = np.random.SeedSequence(seq.entropy, spawn_key=tuple(seq.spawn_key) + (j0,), pool_size=pool)
    if not np.array_equal(words[0], first.generate_state(4, np.uint64)):
        raise ArithmeticError("SeedSequence's hash is not the one transcribed here")
    return words


def spawned_words(seq: np.random.SeedSequence, n: int) -> np.ndarray:
    """The state words ``child.generate_state(4, np.uint64)`` of each of ``seq.spawn(n)``'s children, as an
    ``(n, 4)`` array, without building ``n`` SeedSequence objects (their hashing costs more than the draws of a short
    replication): computed together (:func:`_child_words`, checked against NumPy's own for the first child; when the
    entropy is not an integer, or if NumPy's hash ever differs, the children are spawned as usual). ``seq`` is not
    advanced (its ``n_children_spawned`` is unchanged); a child index must stay below 2^32. ``PCG64`` seeded by
    child ``i`` is :func:`generator_of` of row ``i`` (or the compiled one of :mod:`qosbound.validation.pcg64`)."""
    if n < 1:
        return np.zeros((0, 4), np.uint64)
    if seq.n_children_spawned + n > 2 ** 32:
        raise ValueError("at most 2^32 children")
    try:
        return _child_words(seq, n)
    except ArithmeticError:  # entropy not an integer, or a NumPy whose SeedSequence hashes otherwise
        kids = np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key, pool_size=seq.pool_size,
                                      n_children_spawned=seq.n_children_spawned).spawn(n)
        return np.array([k.generate_state(4, np.uint64) for k in kids], np.uint64).reshape(n, 4)


def generator_of(words: np.ndarray) -> np.random.Generator:
    """``Generator(PCG64(child))`` for the child whose ``generate_state(4, np.uint64)`` is ``words``."""
    return np.random.Generator(np.random.PCG64(_Words(words)))


def spawned_generators(seq: np.random.SeedSequence, n: int) -> list:
    """``[Generator(PCG64(child)) for child in seq.spawn(n)]`` -- the same generators, bit for bit -- from
    :func:`spawned_words`; ``seq`` is not advanced."""
    return [generator_of(w) for w in spawned_words(seq, n)]


def proportion_se(successes: int, trials: int) -> float:
    """A floor for the standard error of a proportion: the binomial one at ``(k+1)/(n+2)``, so that rare
    events seen zero (or every) time still get a positive standard error."""
    k, n = int(successes), int(trials)
    if n < 1:
        raise ValueError("trials must be >= 1")
    pt = (k + 1.0) / (n + 2.0)
    return math.sqrt(pt * (1.0 - pt) / n)


@dataclass(frozen=True)
class Welch:
    """Welch's comparison of two means: the difference ``m1 - m2``, its standard error and the
    Welch-Satterthwaite degrees of freedom (``n - 1`` when one side has no spread)."""

    diff: float
    se: float
    dof: float

    @property
    def spread(self) -> bool:
        return self.se > 0

    def p_value(self, alternative: str = "two-sided") -> float:
        """p-value of equal means against ``alternative`` ('two-sided', 'greater': m1 > m2, 'less'). Without
        spread: 1 when the means are equal (to rounding), else 0 for the two-sided test and the side the
        difference lies on (1 for the other side)."""
        from scipy import stats as _st

        if alternative not in ("two-sided", "greater", "less"):
            raise ValueError("alternative is 'two-sided', 'greater' or 'less'")
        if not self.spread:
            if math.isclose(self.diff, 0.0, abs_tol=1e-12):
                return 1.0
            if alternative == "two-sided":
                return 0.0
            return 0.0 if (self.diff > 0) == (alternative == "greater") else 1.0
        t = self.diff / self.se
        if alternative == "two-sided":
            return float(2.0 * _st.t.sf(abs(t), self.dof))
        return float(_st.t.sf(t, self.dof) if alternative == "greater" else _st.t.cdf(t, self.dof))

    def half_width(self, level: float) -> float:
        """Half-width of the one-sided ``level`` bound on the difference: ``t_level(dof) * se`` (0 without
        spread). A two-sided interval at confidence c is ``half_width((1 + c) / 2)``."""
        if not self.spread:
            return 0.0
        return t_quantile(level, self.dof) * self.se


def welch(m1: float, se1: float, n1: int, m2: float, se2: float, n2: int) -> Welch:
    """Welch's comparison from summary statistics: means, standard errors of the means, replications."""
    if n1 < 1 or n2 < 1:
        raise ValueError("each side needs at least one replication")
    var = float(se1) ** 2 + float(se2) ** 2
    if var > 0 and n1 > 1 and n2 > 1:
        dof = var ** 2 / (float(se1) ** 4 / (n1 - 1) + float(se2) ** 4 / (n2 - 1))
    else:
        dof = float(max(n1, n2) - 1)
    if not var > 0 or n1 < 2 or n2 < 2:
        var = 0.0
    return Welch(float(m1) - float(m2), math.sqrt(var), max(dof, 1.0))


def welch_samples(a, b) -> Welch:
    """:func:`welch` from two samples of independent replications."""
    a, b = np.asarray(a, float).ravel(), np.asarray(b, float).ravel()
    if a.size < 1 or b.size < 1:
        raise ValueError("each side needs at least one sample")

    def se(x):
        return float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else 0.0

    return welch(float(a.mean()), se(a), int(a.size), float(b.mean()), se(b), int(b.size))


def ci_kind(confidence: float) -> str:
    """The interval label for a confidence level: 0.95 -> '95% CI', 0.975 -> '97.5% CI'."""
    pct = f"{confidence * 100:.6f}".rstrip("0").rstrip(".")
    return f"{pct}% CI"


@dataclass(frozen=True)
class Estimate:
    """A mean of ``n`` independent observations with its standard error and Student-t interval."""

    mean: float
    std_error: float
    low: float
    high: float
    n: int
    confidence: float

    @property
    def half_width(self) -> float:
        return 0.5 * (self.high - self.low)

    @property
    def dof(self) -> int:
        return self.n - 1

    def interval(self, note: str = ""):
        """This estimate's interval as a :class:`qosbound.results.Interval` (a confidence interval carrying its
        standard error and degrees of freedom, so agreement checks can rebuild it family-wise)."""
        return Interval.ci(self.low, self.high, self.confidence, se=self.std_error, dof=self.dof, note=note)


def t_interval(samples, confidence: float = 0.95) -> Estimate:
    """Student-t confidence interval for the mean of independent, identically distributed samples.

    Needs at least two finite samples. When all samples are equal the interval
    has zero width.
    """
    x = np.asarray(samples, dtype=np.float64).ravel()
    if x.size < 2:
        raise ValueError("a confidence interval needs at least 2 samples")
    if not np.all(np.isfinite(x)):
        raise ValueError("samples must be finite")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")
    n = int(x.size)
    mean = float(x.mean())
    se = float(x.std(ddof=1) / math.sqrt(n))
    t = two_sided_t(confidence, n - 1)
    return Estimate(mean, se, mean - t * se, mean + t * se, n, confidence)


def batch_means(x, batches: int = 20, confidence: float = 0.95) -> Estimate:
    """Confidence interval for the mean of one long (correlated) series by the method of batch means.

    The series is cut into ``batches`` contiguous batches of equal length (the
    remainder at the end is dropped); their means are treated as independent.
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    if batches < 2:
        raise ValueError("batch means needs at least 2 batches")
    m = x.size // batches
    if m < 1:
        raise ValueError(f"{x.size} observations cannot fill {batches} batches")
    means = x[: m * batches].reshape(batches, m).mean(axis=1)
    return t_interval(means, confidence)


def proportion_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson (exact binomial) interval for a proportion; ``(0, 1 - (alpha/2)^(1/n))`` for no successes."""
    from scipy import stats

    k, n = int(successes), int(trials)
    if n < 1 or not 0 <= k <= n:
        raise ValueError("need 0 <= successes <= trials and trials >= 1")
    alpha = 1.0 - confidence
    low = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def nice_bin_width(span: float, max_bins: int) -> float:
    """The smallest width of the form {1, 2, 5} * 10^k with ``span / width <= max_bins``."""
    if not (span > 0 and math.isfinite(span)) or max_bins < 1:
        raise ValueError("span must be positive and finite, max_bins >= 1")
    target = span / max_bins
    e = math.floor(math.log10(target))
    for k in (e - 1, e, e + 1):
        for m in (1.0, 2.0, 5.0):
            w = m * 10.0 ** k
            if w >= target * (1 - 1e-12):
                return w
    return 10.0 ** (e + 2)  # not reached


def hist_quantile(counts, low: float, width: float, q: float, bin_min=None, bin_max=None) -> float:
    """The q-quantile ``inf{x : F(x) >= q}`` from fixed-width bin counts starting at ``low``.

    With per-bin observed minima and maxima the value is interpolated between
    them (exact when a bin holds a single value, e.g. an atom of a lattice
    distribution); without them, between the bin's edges.
    """
    c = np.asarray(counts, dtype=np.int64)
    n = int(c.sum())
    if n == 0:
        raise ValueError("empty histogram")
    if not 0.0 < q < 1.0:
        raise ValueError("q must be in (0, 1)")
    cum = np.cumsum(c)
    target = q * n
    i = int(np.searchsorted(cum, target - 1e-9 * n, side="left"))
    i = min(i, c.size - 1)
    before = float(cum[i - 1]) if i > 0 else 0.0
    frac = min(max((target - before) / c[i], 0.0), 1.0)
    if bin_min is not None and bin_max is not None:
        a, b = float(bin_min[i]), float(bin_max[i])
    else:
        a, b = low + i * width, low + (i + 1) * width
    return a + (b - a) * frac


def hist_ccdf(counts, low: float, width: float, d: float, bin_min=None, bin_max=None) -> float:
    """``P(X > d)`` from fixed-width bin counts, interpolating linearly inside the bin holding ``d``.

    With per-bin observed minima and maxima, the bin holding ``d`` counts fully
    when its minimum exceeds ``d``, not at all when its maximum is at most ``d``,
    and is interpolated between them otherwise.
    """
    c = np.asarray(counts, dtype=np.int64)
    n = int(c.sum())
    if n == 0:
        raise ValueError("empty histogram")
    pos = (d - low) / width
    if pos < 0:
        return 1.0
    i = int(math.floor(pos))
    if i >= c.size:
        return 0.0
    if bin_min is not None and bin_max is not None and c[i] > 0:
        a, b = float(bin_min[i]), float(bin_max[i])
        part = 1.0 if a > d else 0.0 if b <= d else (b - d) / (b - a)
    else:
        part = 1.0 - (pos - i)
    above = float(c[i + 1:].sum()) + c[i] * part
    return above / n


class Histogram:
    """Fixed-width bins on ``[low, low + bins * width)``, filled from chunks of observations.

    Observations outside the range are counted in ``underflow`` / ``overflow``
    (and still enter ``count``, ``total``, ``min`` and ``max``); the quantile and
    CCDF methods refuse to answer when any were clipped.
    """

    def __init__(self, low: float, width: float, bins: int):
        if not (width > 0 and bins >= 1):
            raise ValueError("width must be positive and bins >= 1")
        self.low, self.width, self.bins = float(low), float(width), int(bins)
        self.counts = np.zeros(self.bins, dtype=np.int64)
        self.bin_min = np.full(self.bins, np.inf)
        self.bin_max = np.full(self.bins, -np.inf)
        self.underflow = 0
        self.overflow = 0
        self.count = 0
        self.total = 0.0
        self.total_sq = 0.0
        self.min = math.inf
        self.max = -math.inf

    def add(self, x) -> None:
        """Add a chunk of observations (any array-like of finite numbers)."""
        x = np.asarray(x, dtype=np.float64).ravel()
        if x.size == 0:
            return
        if not np.all(np.isfinite(x)):
            raise ValueError("observations must be finite")
        self.count += int(x.size)
        self.total += float(x.sum())
        self.total_sq += float(np.dot(x, x))
        self.min = min(self.min, float(x.min()))
        self.max = max(self.max, float(x.max()))
        idx = np.floor((x - self.low) / self.width).astype(np.int64)
        self.underflow += int((idx < 0).sum())
        self.overflow += int((idx >= self.bins).sum())
        ok = (idx >= 0) & (idx < self.bins)
        idx, x = idx[ok], x[ok]
        self.counts += np.bincount(idx, minlength=self.bins)
        np.minimum.at(self.bin_min, idx, x)
        np.maximum.at(self.bin_max, idx, x)

    def merge(self, other: "Histogram") -> None:
        """Add another histogram with the same bins into this one."""
        if (other.low, other.width, other.bins) != (self.low, self.width, self.bins):
            raise ValueError("histograms have different bins")
        self.counts += other.counts
        self.bin_min = np.minimum(self.bin_min, other.bin_min)
        self.bin_max = np.maximum(self.bin_max, other.bin_max)
        self.underflow += other.underflow
        self.overflow += other.overflow
        self.count += other.count
        self.total += other.total
        self.total_sq += other.total_sq
        self.min = min(self.min, other.min)
        self.max = max(self.max, other.max)

    @property
    def mean(self) -> float:
        if self.count == 0:
            raise ValueError("empty histogram")
        return self.total / self.count

    def _check(self):
        if self.underflow or self.overflow:
            raise ValueError(f"{self.underflow} observation(s) below and {self.overflow} above the bins")

    def quantile(self, q: float) -> float:
        """The q-quantile, accurate to one bin (exact on a bin holding a single value)."""
        self._check()
        return hist_quantile(self.counts, self.low, self.width, q, self.bin_min, self.bin_max)

    def ccdf(self, d: float) -> float:
        """``P(X > d)``, accurate to the mass of the bin holding ``d``."""
        self._check()
        return hist_ccdf(self.counts, self.low, self.width, d, self.bin_min, self.bin_max)
