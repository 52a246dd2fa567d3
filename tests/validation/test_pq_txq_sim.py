"""Tests of qosbound.validation.pq_txq_sim: the PQ + TxQ packet simulator (Ferrari et al. 2001 semantics)."""

from __future__ import annotations

import dataclasses
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from scipy import stats

from qosbound.analytic.priority import cobham_wait, cobham_wait_saturated, pk_wait
from qosbound.errors import ScenarioError
from qosbound.results import Result
from qosbound.systems import pq_txq
from qosbound.systems.pq_txq import SimOptions
from qosbound.systems.pq_txq.closed_form import closed_form_results
from qosbound.systems.pq_txq.params import Params
from qosbound.systems.pq_txq.simulated import simulated_results
from qosbound.validation import pq_txq_sim as sim
from qosbound.validation.pq_txq_kernels import SS_ARRIVALS, SS_DELAYS, SS_LOST, SS_SUM
from qosbound.validation.pq_txq_reference import reference_departures
from qosbound.validation.stats import batch_means, hist_ccdf, hist_quantile, t_interval
from qosbound.validation.trace import read_trace, write_trace
from tests.pq_txq_helpers import aggregate_scenario, columns, ef_streams, loaded_params, mean_delay


def params(C=2e6, Q_t=5, unit=512.0, pq_cap=10, ef_size=128.0, ef_rate=300e3, arrivals="poisson",
           be=(1500.0,), probs=(1.0,)) -> Params:
    return Params(C=C, Q_t=Q_t, unit=unit, pq_cap=pq_cap, ef_size=ef_size, ef_rate=ef_rate,
                  lam=ef_rate / (8.0 * ef_size), arrivals=arrivals, be_sizes=np.array(be, dtype=float),
                  be_probs=np.array(probs, dtype=float), burst=pq_cap * ef_size)


class Counter:
    """A progress object recording the advances it receives."""

    def __init__(self):
        self.total = None
        self.done = 0

    def task(self, desc, total=None):
        self.total = total

        def advance(n=1):
            self.done += n

        return advance


# ------------------------------------------------------------------------------------------ mechanics

@pytest.mark.parametrize("arrivals", ["poisson", "cbr", "bernoulli"])
def test_delay_is_function_of_state_found(arrivals):
    """Every EF delay equals the TxQ work found at arrival plus (packets ahead in the PQ + 1) EF transmissions."""
    p = params(arrivals=arrivals, be=(1500.0, 64.0, 576.0), probs=(0.5, 0.3, 0.2), ef_rate=600e3)
    table, state = sim.simulate_trace(p, 30_000, 11, with_state=True)
    is_ef, size, arr, dep, drop = columns(table)
    ok = is_ef & ~drop
    assert ok.sum() > 1000
    if arrivals != "cbr":
        assert (is_ef & drop).sum() > 0  # the PQ does fill up here
    predicted = state["work"] + (state["ahead"] + 1) * p.ef_size * 8.0 / p.C
    np.testing.assert_allclose((dep - arr)[ok], predicted[ok], rtol=1e-9, atol=1e-12)
    # A lost packet found the PQ full.
    assert np.all(state["ahead"][is_ef & drop] == p.pq_cap)


@pytest.mark.parametrize("arrivals", ["poisson", "bernoulli"])
def test_matches_plain_python_event_loop(arrivals):
    """Given the same EF arrival times and BE size sequence, a plain-Python event loop gives the same departures."""
    p = params(arrivals=arrivals, Q_t=4, pq_cap=3, ef_rate=700e3, be=(1500.0, 300.0), probs=(0.6, 0.4))
    table = sim.simulate_trace(p, 5000, 5)
    is_ef, size, arr, dep, drop = columns(table)
    be_order = np.lexsort((np.arange(arr.size), arr))  # BE rows are already in TxQ entry order
    be_sizes = size[be_order][~is_ef[be_order]]
    ef_dep, ef_drop, be_dep = reference_departures(p, arr[is_ef], be_sizes)
    assert np.array_equal(ef_drop, drop[is_ef])
    np.testing.assert_allclose(ef_dep[~ef_drop], dep[is_ef & ~drop], rtol=0, atol=1e-9)
    np.testing.assert_allclose(be_dep, dep[~is_ef], rtol=0, atol=1e-9)


def test_trace_schema_and_parquet_round_trip(tmp_path):
    """The trace uses the one trace schema, is sorted by arrival, and survives Parquet."""
    p = params()
    table = sim.simulate_trace(p, 2000, 1)
    assert table.num_rows == 2000
    assert set(table["cls"].to_pylist()) == {"EF", "BE"}
    is_ef, size, arr, dep, drop = columns(table)
    assert np.all(np.diff(arr) >= 0)
    assert set(size[is_ef]) == {128} and set(size[~is_ef]) == {1500}
    assert np.all(dep[~drop] > arr[~drop])
    write_trace(table, tmp_path / "t.parquet")
    back = read_trace(tmp_path / "t.parquet")
    assert back.equals(table)


def test_cbr_single_be_size_hand_derived():
    """CBR period 7 s, EF 1 s, BE 2 s, Q_t = 2 units: every EF delay equals 3 - (first arrival mod 2) s.

    Derivation: the TxQ holds one BE packet (2 units) at a time; an EF arrival at phase a waits for
    the BE packet on the wire to finish, 2 - (a mod 2) s, then takes 1 s. After an EF packet the BE
    departures restart 1 s later; the next arrival comes 7 s after the last, 7 - D after that EF
    departure, so it again finds 2 - (7 - D mod 2) = 2 - (a mod 2) s of work left: a fixed point.
    """
    C = 512 * 8.0  # 512 B take 1 s
    p = params(C=C, Q_t=2, unit=512.0, ef_size=512.0, ef_rate=512 * 8 / 7.0, arrivals="cbr", be=(1024.0,))
    phases = []
    for seed in range(40):
        is_ef, size, arr, dep, drop = columns(sim.simulate_trace(p, 200, seed))
        a = arr[is_ef]
        phases.append(a[0])
        np.testing.assert_allclose(np.diff(a), 7.0, rtol=1e-12)
        np.testing.assert_allclose(dep[is_ef] - a, 3.0 - np.mod(a[0], 2.0), rtol=1e-9)
    # The first arrival's phase is uniform on one period.
    assert stats.kstest(phases, stats.uniform(0, 7).cdf).pvalue > 1e-3


# ------------------------------------------------------------------------------------------ arrivals

def test_poisson_arrival_rate():
    """Poisson EF arrivals: exponential gaps with mean 1/lambda (KS test) and a count consistent with lambda*T."""
    p = params(ef_rate=200e3)
    is_ef, size, arr, dep, drop = columns(sim.simulate_trace(p, 40_000, 2))
    a = arr[is_ef]
    gaps = np.diff(a)
    assert stats.kstest(gaps, stats.expon(scale=1 / p.lam).cdf).pvalue > 1e-3
    n, T = a.size - 1, a[-1] - a[0]
    # Count in a fixed window is Poisson(lambda T); here, two-sided 99.9 % band on the estimated rate.
    z = (n - p.lam * T) / math.sqrt(p.lam * T)
    assert abs(z) < 3.3


def test_bernoulli_arrivals_are_slotted_with_right_probability():
    """Bernoulli EF arrivals fall on multiples of tau = g*8/C and occur in a slot with probability lambda*tau."""
    p = params(arrivals="bernoulli", ef_rate=400e3, be=(1500.0, 1000.0), probs=(0.5, 0.5))
    tau = 4 * 8.0 / p.C  # gcd(128, 1500, 1000) = 4 bytes
    is_ef, size, arr, dep, drop = columns(sim.simulate_trace(p, 40_000, 3))
    slots = arr[is_ef] / tau
    assert np.allclose(slots, np.round(slots), atol=1e-6)
    k = np.round(slots).astype(np.int64)
    assert np.all(np.diff(k) >= 1)
    n_slots, n_arr = int(k[-1]), int(k.size)
    assert stats.binomtest(n_arr, n_slots, p.lam * tau).pvalue > 1e-3
    # Gaps are geometric: compare their mean with 1/(lambda tau) by a z test.
    g = np.diff(k)
    assert abs(g.mean() - 1 / (p.lam * tau)) < 4 * g.std(ddof=1) / math.sqrt(g.size)


def test_bernoulli_slot_probability():
    """The Bernoulli slot probability is lambda*tau = rho*g/L_EF, below one whenever rho < 1 (g <= L_EF)."""
    p = params(arrivals="bernoulli", ef_rate=1.9e6, ef_size=1000.0, be=(1500.0, 2000.0), probs=(0.5, 0.5))
    s = sim.setup(p)
    assert s.p_slot == pytest.approx(p.rho * 500 / 1000)
    assert s.tick == pytest.approx(500 * 8 / p.C)


def test_unstable_regime_is_an_error():
    """EF utilisation at or above one is an error, not a number."""
    with pytest.raises(ScenarioError):
        sim.setup(params(ef_rate=2e6))


# ------------------------------------------------------------------------------------------ theory checks

def test_littles_law_and_pasta():
    """Mean EF in system seen by Poisson arrivals (PASTA: the time average) equals accepted rate x mean delay."""
    p = params(ef_rate=500e3, pq_cap=4)
    is_ef, size, arr, dep, drop = columns(sim.simulate_trace(p, 200_000, 4))
    a_all = arr[is_ef]
    acc = is_ef & ~drop
    a, d = arr[acc], dep[acc]  # EF is FIFO: departures are sorted like arrivals
    assert np.all(np.diff(d) > 0)
    n_seen = np.searchsorted(a, a_all, side="left") - np.searchsorted(d, a_all, side="right")
    T = a_all[-1] - a_all[0]
    lam_acc = acc.sum() / T
    W = np.mean(d - a)
    est = batch_means(n_seen, batches=20)
    assert abs(est.mean - lam_acc * W) < 4.5 * est.std_error + 0.01 * lam_acc * W
    # The time average of N(t) over the window agrees too (a sample-path identity up to edge effects).
    inside = (a >= a_all[0]) & (d <= a_all[-1])
    area = np.sum((d - a)[inside])
    assert area / T == pytest.approx(lam_acc * W, rel=0.01)


def test_no_loss_with_large_pq_and_light_load():
    """With a PQ far larger than any backlog and light EF load no EF packet is lost."""
    p = params(pq_cap=200, ef_rate=100e3)
    r = sim.run_replications(p, 20_000, 2, seed=5)
    assert r.stats[:, sim.S_LOST].sum() == 0
    assert np.all(r.stats[:, sim.S_ARRIVALS] == 20_000 - int(0.01 * 20_000))


def _residual_work_cdf(p):
    """CDF of the TxQ's remaining work at a random time in the BE-only system, built by enumerating its states.

    Between departures the TxQ holds a sequence of BE packets; at a departure the head leaves and BE packets
    are drawn until Q_t units are occupied. The embedded chain's stationary law pi, weighted by the head's
    transmission time, gives the time-stationary state; within the head's transmission the residual is uniform.
    """
    sizes, probs = list(p.be_sizes), list(p.be_probs)
    k = [math.ceil(s / p.unit - 1e-12) for s in sizes]

    def fill(seq):
        """All ways of refilling ``seq`` (a tuple of size indices) with their probabilities."""
        if sum(k[i] for i in seq) >= p.Q_t:
            return [(seq, 1.0)]
        out = []
        for j, pj in enumerate(probs):
            out += [(s, pj * q) for s, q in fill(seq + (j,))]
        return out

    states, index, trans = [], {}, {}
    todo = [s for s, _ in fill(())]
    while todo:
        s = todo.pop()
        if s in index:
            continue
        index[s] = len(states)
        states.append(s)
        trans[s] = fill(s[1:])
        todo += [t for t, _ in trans[s]]
    n = len(states)
    P = np.zeros((n, n))
    for s in states:
        for t, q in trans[s]:
            P[index[s], index[t]] += q
    w, v = np.linalg.eig(P.T)
    pi = np.real(v[:, np.argmin(np.abs(w - 1))])
    pi /= pi.sum()
    tx = [s * 8.0 / p.C for s in sizes]
    head = np.array([tx[s[0]] for s in states])
    rest = np.array([sum(tx[i] for i in s[1:]) for s in states])
    weight = pi * head / np.sum(pi * head)

    def cdf(x):
        x = np.asarray(x, dtype=float)[..., None]
        return np.sum(weight * np.clip((x - rest) / head, 0.0, 1.0), axis=-1)

    return cdf


def test_light_load_delay_is_residual_work_plus_transmission():
    """As rho -> 0 an EF packet's delay is the TxQ residual work of the BE-only system plus its own transmission."""
    p = params(ef_rate=2e3, Q_t=3, be=(1500.0, 300.0), probs=(0.3, 0.7))
    cdf = _residual_work_cdf(p)
    is_ef, size, arr, dep, drop = columns(sim.simulate_trace(p, 150_000, 8))
    delays = (dep - arr)[is_ef & ~drop] - p.ef_size * 8.0 / p.C
    assert delays.size > 500
    assert stats.kstest(delays, cdf).pvalue > 1e-3
    # The same reference is far from the delay distribution of a heavier load (the test has power).
    heavy = params(ef_rate=900e3, Q_t=3, be=(1500.0, 300.0), probs=(0.3, 0.7))
    is_ef, size, arr, dep, drop = columns(sim.simulate_trace(heavy, 60_000, 8))
    d2 = (dep - arr)[is_ef & ~drop] - p.ef_size * 8.0 / p.C
    assert stats.kstest(d2[:2000], cdf).pvalue < 1e-6


@pytest.mark.parametrize("rho", [0.1, 0.4])
def test_single_unit_txq_matches_cobham(rho):
    """With Q_t = 1 the TxQ holds only the packet on the wire: an M/G/1 non-preemptive priority queue over
    saturated BE, whose mean EF delay is Cobham's W_1 plus the EF transmission (Bertsekas & Gallager 3.5.3)."""
    sizes, probs = np.array([1500.0, 576.0]), np.array([0.4, 0.6])
    p = params(Q_t=1, pq_cap=500, ef_rate=rho * 2e6, be=tuple(sizes), probs=tuple(probs))
    x = p.ef_size * 8 / p.C
    b = sizes * 8 / p.C
    W = cobham_wait_saturated([p.lam], [x], [x * x], float(probs @ b), float(probs @ b**2))[0]
    ref = float(W) + x
    r = sim.run_replications(p, 100_000, 8, seed=21)
    assert r.stats[:, sim.S_LOST].sum() == 0
    est = t_interval(r.stats[:, sim.S_SUM] / r.stats[:, sim.S_DELAYS])
    assert abs(est.mean - ref) < 4.5 * est.std_error
    assert abs(est.mean - ref) < 0.01 * ref


# ------------------------------------------------------------------------------------------ properties

configs = st.fixed_dictionaries({
    "Q_t": st.integers(1, 6),
    "pq_cap": st.integers(1, 12),
    "ef_size": st.sampled_from([64.0, 128.0, 200.0, 512.0, 1000.0]),
    "rho": st.floats(0.01, 0.95),
    "arrivals": st.sampled_from(["poisson", "cbr", "bernoulli"]),
    "be": st.lists(st.sampled_from([40.0, 128.0, 576.0, 1000.0, 1500.0]), min_size=1, max_size=3, unique=True),
    "seed": st.integers(0, 2**31 - 1),
})


def _from(cfg) -> Params:
    n = len(cfg["be"])
    return params(C=1e6, Q_t=cfg["Q_t"], pq_cap=cfg["pq_cap"], ef_size=cfg["ef_size"],
                  ef_rate=cfg["rho"] * 1e6, arrivals=cfg["arrivals"], be=cfg["be"], probs=[1.0 / n] * n)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs)
def test_delays_within_physical_bounds(cfg):
    """Every EF delay is at least its own transmission time and at most the max-delay bound; loss in [0, 1]."""
    p = _from(cfg)
    is_ef, size, arr, dep, drop = columns(sim.simulate_trace(p, 3000, cfg["seed"]))
    d = (dep - arr)[is_ef & ~drop]
    x = p.ef_size * 8.0 / p.C
    assert np.all(d >= x * (1 - 1e-9))
    assert np.all(d <= sim.max_delay_bound(p) * (1 + 1e-9))
    r = sim.run_replications(p, 2000, 2, cfg["seed"], ccdf=[x, 2 * x])
    loss = r.stats[:, sim.S_LOST] / r.stats[:, sim.S_ARRIVALS]
    assert np.all((loss >= 0) & (loss <= 1))
    assert np.all(r.stats[:, sim.S_MAX] <= sim.max_delay_bound(p) * (1 + 1e-9))
    assert r.counts.sum() == r.stats[:, sim.S_DELAYS].sum()  # nothing outside the bins


# ------------------------------------------------------------------------------------------ replications

def test_seeds_reproduce_and_thread_count_does_not_matter():
    """The same seed gives identical output on 1 or 2 threads; another seed gives different output."""
    p = params()
    a = sim.run_replications(p, 5000, 4, seed=9, n_threads=1)
    b = sim.run_replications(p, 5000, 4, seed=9, n_threads=2)
    c = sim.run_replications(p, 5000, 4, seed=10)
    assert np.array_equal(a.stats, b.stats) and np.array_equal(a.counts, b.counts)
    assert not np.array_equal(a.stats[:, sim.S_SUM], c.stats[:, sim.S_SUM])
    t1 = sim.simulate_trace(p, 1000, 3)
    assert t1.equals(sim.simulate_trace(p, 1000, 3))


def test_standard_error_shrinks_as_one_over_sqrt_n():
    """Four times the packets halve the standard error of the mean delay (F test on the replication variances)."""
    p = params(ef_rate=400e3)
    R = 40
    small = sim.run_replications(p, 5000, R, seed=30)
    big = sim.run_replications(p, 20000, R, seed=31)
    m1 = small.stats[:, sim.S_SUM] / small.stats[:, sim.S_DELAYS]
    m4 = big.stats[:, sim.S_SUM] / big.stats[:, sim.S_DELAYS]
    f = np.var(m1, ddof=1) / (4.0 * np.var(m4, ddof=1))  # ~ F(R-1, R-1) when variance scales as 1/n
    pval = 2 * min(stats.f.cdf(f, R - 1, R - 1), stats.f.sf(f, R - 1, R - 1))
    assert pval > 1e-3
    # And it is not constant: the ratio of variances is far from 1.
    assert np.var(m1, ddof=1) / np.var(m4, ddof=1) > 1.8


# ------------------------------------------------------------------------------------------ the interface

def test_simulated_results_interface():
    """simulated_results returns every metric, finite, with CIs, provenance and progress advances."""
    p = params(ef_rate=500e3, pq_cap=3)
    opts = SimOptions(packets=20_000, replications=4, seed=3)
    prog = Counter()
    res = simulated_results(p, opts, [5e-3, 10e-3], [0.5, 0.99], prog)
    by = {r.metric: r for r in res}
    assert set(by) == {"EF.delay.mean", "EF.delay.p50", "EF.delay.p99", "EF.delay.ccdf@5ms",
                       "EF.delay.ccdf@10ms", "EF.delay.max", "EF.loss"}
    assert prog.total == 4 and prog.done == 4
    for r in res:
        assert isinstance(r, Result) and r.method == "simulated" and math.isfinite(r.value)
        assert r.provenance["replications"] == 4 and r.provenance["seed"] == 3
        if r.metric != "EF.delay.max":
            assert r.interval.label() == "95% CI" and r.interval.low <= r.value <= r.interval.high
            assert r.provenance["std_error"] >= 0
            assert r.interval.se == r.provenance["std_error"] and r.interval.dof == 3
    # the largest delay observed is a lower bound on the true maximum
    assert by["EF.delay.max"].interval.kind.value == "lower bound"
    assert by["EF.delay.p50"].value < by["EF.delay.p99"].value <= by["EF.delay.max"].value
    assert by["EF.delay.ccdf@5ms"].value >= by["EF.delay.ccdf@10ms"].value
    assert 0 < by["EF.loss"].value < 1
    assert by["EF.delay.p99"].provenance["bin_width"] > 0
    assert by["EF.delay.mean"].unit == "s" and by["EF.loss"].unit == "1"


def test_rare_event_seen_zero_times_keeps_an_interval():
    """A fraction never observed gets value 0 with a Clopper-Pearson upper limit and a nonzero standard error."""
    p = params(ef_rate=50e3, pq_cap=50)
    opts = SimOptions(packets=5000, replications=3, seed=1)
    by = {r.metric: r for r in simulated_results(p, opts, [1.0], [0.5], Counter())}
    for m in ("EF.loss", "EF.delay.ccdf@1s"):
        r = by[m]
        n = r.provenance["trials"]
        assert r.value == 0.0 and r.interval.low == 0.0
        assert r.interval.high == pytest.approx(1 - 0.025 ** (1 / n))
        assert r.provenance["std_error"] > 0


def test_quantile_matches_trace_within_a_bin():
    """The histogram quantile agrees with the empirical quantile of the pooled delays to within a bin (plus noise)."""
    p = params(arrivals="bernoulli", ef_rate=500e3)
    r = sim.run_replications(p, 50_000, 2, seed=12, ccdf=[4e-3, 8e-3])
    s = r.setup
    q = [hist_quantile(r.counts[i], 0.0, s.bin_width, 0.9, r.bin_min[i], r.bin_max[i]) for i in range(2)]
    # Bernoulli delays lie on the tick lattice and bins are finer than a tick: quantiles are lattice points.
    ticks = np.array(q) / s.tick
    assert np.allclose(ticks, np.round(ticks), atol=1e-6)
    # The exact CCDF counts are consistent with the histogram within the bin holding d.
    for i in range(2):
        for j, d in enumerate(r.ccdf):
            h = hist_ccdf(r.counts[i], 0.0, s.bin_width, d, r.bin_min[i], r.bin_max[i])
            assert h == pytest.approx(r.above[i, j] / r.stats[i, sim.S_DELAYS], abs=1e-12)


@pytest.mark.parametrize("arrivals", ["poisson", "cbr"])
def test_departures_on_tick_lattice(arrivals):
    """With whole-byte sizes every departure is a whole number of ticks g*8/C, so an EF delay is the time to the
    next tick after its arrival plus whole ticks (a CBR phase only matters through its offset in a tick)."""
    p = params(arrivals=arrivals, be=(512.0, 1024.0, 1536.0), probs=(0.5, 0.3, 0.2))
    tick = sim.setup(p).tick
    assert tick == pytest.approx(128 * 8 / p.C)
    is_ef, size, arr, dep, drop = columns(sim.simulate_trace(p, 20_000, 6))
    k = dep[~drop] / tick
    assert np.allclose(k, np.round(k), atol=1e-6)
    a, d = arr[is_ef & ~drop], dep[is_ef & ~drop]
    rest = (d - np.ceil(a / tick - 1e-9) * tick) / tick
    assert np.allclose(rest, np.round(rest), atol=1e-6) and np.all(np.round(rest) >= 1)


def test_streamed_statistics_equal_trace_statistics():
    """Replication 0 and the trace with the same seed draw the same numbers, so the streamed statistics of the
    first n EF arrivals equal those computed from the trace's rows (sum, max, losses, CCDF counts, histogram)."""
    p = params(ef_rate=700e3, pq_cap=4, be=(1500.0, 300.0), probs=(0.5, 0.5))
    n = 3000
    r = sim.run_replications(p, n, 1, seed=17, warmup=0.0, ccdf=[6e-3])
    is_ef, size, arr, dep, drop = columns(sim.simulate_trace(p, 4 * n, 17))
    assert is_ef.sum() > n
    first = np.flatnonzero(is_ef)[:n]
    d = (dep - arr)[first][~drop[first]]
    assert r.stats[0, sim.S_ARRIVALS] == n
    assert r.stats[0, sim.S_LOST] == drop[first].sum() > 0
    assert r.stats[0, sim.S_DELAYS] == d.size
    assert r.stats[0, sim.S_SUM] == pytest.approx(d.sum(), rel=1e-12)
    assert r.stats[0, sim.S_MAX] == pytest.approx(d.max(), rel=1e-12)
    assert r.above[0, 0] == np.sum(d > 6e-3)
    w = r.setup.bin_width
    assert np.array_equal(np.flatnonzero(r.counts[0]), np.unique(np.floor(d / w + 1e-9).astype(int)))


# EF aggregates of the PQ + TxQ system (Ferrari, Pau & Raffaelli 2001, section V): the simulator's superposition of
# streams and its per-stream statistics.


def test_superposition_trace_matches_the_reference_loop_and_the_periods():
    """The kernel's aggregate: each stream's packets are exactly one period apart (from its given phase), and
    the departures are those of the plain-Python loop of the same semantics fed the same arrivals."""
    phases = ["0.1 ms", "2 ms", "5.5 ms"]
    p = pq_txq.params(aggregate_scenario(ef_streams(100, 50, 150, phases=phases), pq=3))
    table = sim.simulate_trace(p, 6000, 9)
    flow = np.array(table["flow"].to_pylist())
    cls = np.array(table["cls"].to_pylist())
    arr = table["arrival"].to_numpy()
    dep = table["departure"].to_numpy(zero_copy_only=False).astype(float)
    drop = table["dropped"].to_numpy(zero_copy_only=False)
    size = table["size"].to_numpy()
    for i, (rate, ph) in enumerate(zip((100e3, 50e3, 150e3), (0.1e-3, 2e-3, 5.5e-3))):
        a = arr[flow == f"EF.s{i + 1}"]
        assert a.size > 20
        np.testing.assert_allclose(a, ph + np.arange(a.size) * 1024 / rate, rtol=0, atol=1e-9)
    is_ef = cls == "EF"
    be_order = np.lexsort((np.arange(arr.size), arr))
    ef_dep, ef_drop, be_dep = reference_departures(p, arr[is_ef], size[be_order][~is_ef[be_order]])
    assert np.array_equal(ef_drop, drop[is_ef])
    np.testing.assert_allclose(ef_dep[~ef_drop], dep[is_ef & ~drop], rtol=0, atol=1e-9)


def test_per_stream_counts_add_up_and_follow_the_rates():
    p = pq_txq.params(aggregate_scenario(ef_streams(50, 100, 150)))
    rep = sim.run_replications(p, 30000, 4, 2)
    ss = rep.sstats
    for col, s in ((SS_ARRIVALS, sim.S_ARRIVALS), (SS_LOST, sim.S_LOST), (SS_DELAYS, sim.S_DELAYS)):
        np.testing.assert_array_equal(ss[:, :, col].sum(axis=1), rep.stats[:, s])
    np.testing.assert_allclose(ss[:, :, SS_SUM].sum(axis=1), rep.stats[:, sim.S_SUM], rtol=1e-9)
    share = ss[:, :, SS_ARRIVALS].sum(axis=0) / ss[:, :, SS_ARRIVALS].sum()
    np.testing.assert_allclose(share, [1 / 6, 2 / 6, 3 / 6], atol=2e-3)  # CBR: exact up to one packet each


def test_one_stream_through_the_aggregate_kernel_is_the_single_cbr_stream():
    """Kind 'aggregate' with one random-phase CBR stream draws the same numbers as kind 'cbr': same output."""
    p = pq_txq.params(aggregate_scenario({"rate": "300 kbit/s", "size": "128 B", "arrivals": "cbr"}))
    pa = dataclasses.replace(p, arrivals="aggregate", ef_streams=((300e3, "cbr", -1.0),))
    a, b = sim.run_replications(p, 5000, 2, 4), sim.run_replications(pa, 5000, 2, 4)
    np.testing.assert_array_equal(a.stats, b.stats)
    np.testing.assert_array_equal(a.counts, b.counts)


def test_poisson_streams_simulated_apart_agree_with_one_merged_stream():
    """Three Poisson streams, each with its own clock in the kernel, against one Poisson stream of the total rate
    (a different random path): the means agree within their confidence intervals."""
    p3 = pq_txq.params(aggregate_scenario(ef_streams(50, 100, 150, arrivals="poisson")))
    p1 = dataclasses.replace(p3, ef_streams=())
    assert sim.setup(p3).arrivals == 3 and sim.setup(p1).arrivals == 0
    m3 = [r.stats[:, sim.S_SUM] / r.stats[:, sim.S_DELAYS] for r in [sim.run_replications(p3, 40000, 16, 5)]][0]
    m1 = [r.stats[:, sim.S_SUM] / r.stats[:, sim.S_DELAYS] for r in [sim.run_replications(p1, 40000, 16, 6)]][0]
    e3, e1 = t_interval(m3, 0.99), t_interval(m1, 0.99)
    se = np.hypot(e3.std_error, e1.std_error)
    assert abs(e3.mean - e1.mean) < 4 * se, (e3.mean, e1.mean, se)


# Best effort with a load in the PQ + TxQ system: the simulator against the plain-Python event loop, the line's
# utilisation, and the limits of a vanishing and of a saturating load.
#
# Semantics (qosbound.systems.pq_txq): Poisson BE packets of the size mix wait in an unbounded FIFO BE queue; the
# scheduler refills the TxQ from the PQ, else from the BE queue; with both empty the line idles.


@pytest.mark.parametrize("be_rate", [0.2e6, 1.2e6])
def test_matches_plain_python_event_loop_with_a_load(be_rate):
    """Given the EF arrivals and the BE packets (each arriving at its TxQ entry, which leaves the dynamics
    unchanged: it found no room before), the plain-Python event loop gives the same departures, idle periods
    included."""
    p = loaded_params(Q_t=4, pq_cap=3, ef_rate=500e3, be=(1500.0, 300.0), probs=(0.6, 0.4), be_rate=be_rate)
    table = sim.simulate_trace(p, 6000, 5)
    is_ef, size, arr, dep, drop = columns(table)
    be = ~is_ef
    ef_dep, ef_drop, be_dep = reference_departures(p, arr[is_ef], size[be], be_arrivals=arr[be])
    assert np.array_equal(ef_drop, drop[is_ef])
    np.testing.assert_allclose(ef_dep[~ef_drop], dep[is_ef & ~drop], rtol=0, atol=1e-9)
    np.testing.assert_allclose(be_dep, dep[be], rtol=0, atol=1e-9)
    # the line did idle: some packet started later than the previous departure
    order = np.argsort(dep[~np.isnan(dep)])
    d = dep[~np.isnan(dep)][order]
    tx = (np.where(is_ef, p.ef_size, size)[~np.isnan(dep)][order]) * 8.0 / p.C
    assert np.sum(d[1:] - tx[1:] > d[:-1] + 1e-9) > 10


def test_reference_saturated_path_unchanged():
    """Without BE arrival times the reference is the saturated loop: the line never idles."""
    p = loaded_params(Q_t=2, be=(512.0,), probs=(1.0,))
    ef_dep, ef_drop, be_dep = reference_departures(p, [0.0001], [512.0] * 5)
    S_be, S_ef = 512 * 8 / p.C, 128 * 8 / p.C
    # two BE packets fill Q_t = 2 at t = 0; the EF arrival joins after the first departure
    assert ef_dep[0] == pytest.approx(2 * S_be + S_ef)
    assert be_dep[0] == pytest.approx(S_be) and be_dep[2] == pytest.approx(2 * S_be + S_ef + S_be)


def test_delay_is_function_of_state_found_with_a_load():
    """Every EF delay is the TxQ work found plus (EF ahead + 1) transmissions, also when it found the line idle
    (work 0) -- the identity behind the maximum-delay bound holds whatever BE does."""
    p = loaded_params(ef_rate=600e3, be_rate=0.8e6, pq_cap=4)
    table, state = sim.simulate_trace(p, 30_000, 11, with_state=True)
    is_ef, size, arr, dep, drop = columns(table)
    ok = is_ef & ~drop
    predicted = state["work"] + (state["ahead"] + 1) * p.ef_size * 8.0 / p.C
    np.testing.assert_allclose((dep - arr)[ok], predicted[ok], rtol=1e-9, atol=1e-12)
    assert np.sum(state["work"][ok] == 0) > 100  # many arrivals found the line idle
    assert np.all((dep - arr)[ok] <= sim.max_delay_bound(p) * (1 + 1e-12))


def test_line_utilisation_is_the_offered_load():
    """The fraction of time the line is busy is rho_EF + rho_BE (BE arrivals at rate be_rate / (8 E[L]))."""
    p = loaded_params(be_rate=0.9e6)
    table = sim.simulate_trace(p, 200_000, 2)
    is_ef, size, arr, dep, drop = columns(table)
    ok = ~np.isnan(dep)
    busy = float(np.sum(np.where(is_ef, p.ef_size, size)[ok])) * 8.0 / p.C
    span = float(np.nanmax(dep))
    assert busy / span == pytest.approx(p.rho + 0.9e6 / p.C, rel=0.02)


def test_saturated_runs_unchanged_by_a_zero_load_field():
    """be_rate None is the saturated kernel path: the same seed gives identical statistics whether the field is
    left at its default or set explicitly."""
    a = sim.run_replications(loaded_params(), 20_000, 2, 9)
    b = sim.run_replications(loaded_params(be_rate=None), 20_000, 2, 9)
    assert np.array_equal(a.stats, b.stats) and np.array_equal(a.counts, b.counts)


def test_vanishing_be_load_is_md1_for_ef_alone():
    """As the BE load goes to 0 the EF mean delay tends to the M/D/1 mean W_PK + S_EF (EF alone; the TxQ adds
    nothing to a FIFO of EF packets)."""
    p = loaded_params(be_rate=20.0, pq_cap=200)
    s = p.ef_size * 8.0 / p.C
    target = pk_wait(p.lam, s, s * s) + s
    m, se, _ = mean_delay(p)
    assert abs(m - target) <= 4 * se + 0.002 * target


def test_one_unit_txq_is_mg1_nonpreemptive_priority():
    """With Q_t = 1 the system is the M/G/1 queue with two non-preemptive priority classes: the simulated EF
    mean matches Cobham's W_1 + S_EF, and so does the closed-form cobham_mean."""
    p = loaded_params(Q_t=1, pq_cap=10_000, be_rate=1.2e6)
    s_ef = p.ef_size * 8.0 / p.C
    s_be = p.be_sizes * 8.0 / p.C
    W1 = cobham_wait([p.lam, p.be_lam], [s_ef, float(p.be_probs @ s_be)], [s_ef ** 2, float(p.be_probs @ s_be ** 2)])[0]
    m, se, _ = mean_delay(p, packets=60_000, replications=8)
    assert abs(m - (W1 + s_ef)) <= 4 * se
    cm = {r.metric: r for r in closed_form_results(p)}["EF.delay.cobham_mean"]
    assert cm.value == pytest.approx(W1 + s_ef, rel=1e-12)


def test_high_be_load_approaches_saturated():
    """As the total load goes to 1 the EF mean tends to the saturated one: the gap shrinks and is within 2 %
    at 99.9 % of the spare capacity."""
    sat, se_sat, _ = mean_delay(loaded_params())
    gaps = []
    for frac in (0.9, 0.999):
        p = loaded_params(be_rate=frac * (1 - 0.15) * 2e6)
        m, se, _ = mean_delay(p)
        gaps.append((sat - m, np.hypot(se, se_sat)))
    assert gaps[1][0] < gaps[0][0] - 3 * (gaps[0][1] + gaps[1][1])
    assert abs(gaps[1][0]) <= 0.02 * sat + 4 * gaps[1][1]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    q_t=st.integers(1, 8),
    cap=st.integers(2, 40),
    rho=st.floats(0.05, 0.6),
    ef_size=st.sampled_from([64.0, 128.0, 200.0, 512.0]),
    be=st.lists(st.tuples(st.sampled_from([40.0, 256.0, 576.0, 1024.0, 1500.0]), st.floats(0.1, 1.0)),
                min_size=1, max_size=3),
    frac=st.floats(0.02, 0.98),
    arrivals=st.sampled_from(["poisson", "cbr"]),
)
def test_saturated_be_is_the_worst_case_of_the_mean(q_t, cap, rho, ef_size, be, frac, arrivals):
    """Same EF, same sizes: the simulated mean EF delay with saturated best effort is at least the one at any BE
    load (a one-sided test at 4 standard errors of the difference); with the load, eq. (7) still bounds the
    mean and no delay exceeds the maximum-delay bound."""
    sizes = np.array([s for s, _ in be])
    probs = np.array([w for _, w in be]) / sum(w for _, w in be)
    C = 2e6
    base = dict(C=C, Q_t=q_t, pq_cap=cap, ef_size=ef_size, ef_rate=rho * C, arrivals=arrivals,
                be=tuple(sizes), probs=tuple(probs))
    sat, se_sat, _ = mean_delay(loaded_params(**base), packets=15_000, replications=4, seed=1)
    p = loaded_params(**base, be_rate=frac * (1 - rho) * C)
    m, se, rep = mean_delay(p, packets=15_000, replications=4, seed=2)
    assert sat >= m - 4 * np.hypot(se, se_sat)
    res = {r.metric: r.value for r in closed_form_results(p)}
    assert res["EF.delay.worst_case_mean"] >= m - 4 * se
    assert float(rep.stats[:, sim.S_MAX].max()) <= res["EF.delay.max"] * (1 + 1e-9)


def test_stability_checked_below_the_system_layer():
    """The simulator refuses a total utilisation >= 1 on its own parameter."""
    with pytest.raises(ScenarioError) as e:
        sim.setup(loaded_params(be_rate=1.8e6))
    assert e.value.field == "be_rate" and ">= 1" in e.value.problem
