"""The PQ + TxQ DTMC (models/pq_txq.py) against an independent SciPy solution, exact arithmetic and eq. (7)."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from hypothesis import HealthCheck, given, settings, strategies as st

from qosbound.systems.pq_txq.closed_form import closed_form_results
from qosbound.models.pq_txq import delay_distribution, render
from qosbound.scenario import build, load
from qosbound.systems.pq_txq import ModelOptions, params
from tests.helpers import ROOT

EXAMPLE = ROOT / "examples" / "ferrari2001.yaml"


def scenario(QT=2, PQ=2, be=((512, 1.0),), rate="300 kbit/s", arrivals="bernoulli", ef=128, link="2 Mbps"):
    raw = {"name": "t", "system": "pq_txq", "link": {"rate": link}, "txq": {"units": QT, "unit_size": "512 B"},
           "pq": {"capacity": PQ},
           "traffic": {"EF": {"rate": rate, "size": f"{ef} B", "arrivals": arrivals},
                       "BE": {"saturated": True, "sizes": [{"size": f"{s} B", "p": p} for s, p in be]}}}
    return build(raw)


# ---------------------------------------------------------------------------------------------------------
# An independent implementation of the semantics: the chain observed at slot starts, built in Python.
# ---------------------------------------------------------------------------------------------------------

def direct_chain(p, granule):
    """Enumerate the slot-start chain of DESIGN.md's semantics and solve it with SciPy's sparse LU.

    State: (pq, txq, r) with txq a tuple of packet kinds ('E' or a BE index) in FIFO order and r the head's
    remaining granules. Returns the stationary distribution over states and the list of states.
    """
    ef_g = math.ceil(p.ef_size / granule)
    ef_u = math.ceil(p.ef_size / p.unit)
    be_g = [math.ceil(s / granule) for s in p.be_sizes]
    be_u = [math.ceil(s / p.unit) for s in p.be_sizes]
    a = p.lam * granule * 8 / p.C
    if p.arrivals == "bernoulli":
        arr = [(0, 1 - a), (1, a)]
    else:
        arr = [(k, math.exp(-a) * a ** k / math.factorial(k)) for k in range(p.pq_cap)]
        arr.append((p.pq_cap, 1 - sum(x for _, x in arr)))

    def units(k):
        return ef_u if k == "E" else be_u[k]

    def gran(k):
        return ef_g if k == "E" else be_g[k]

    def fill(pq, txq, r):
        """All (probability, state) outcomes of the scheduler's refill."""
        out = []
        stack = [(1.0, pq, txq, r)]
        while stack:
            pr, q, t, rr = stack.pop()
            if sum(units(k) for k in t) >= p.Q_t:
                out.append((pr, (q, t, rr)))
                continue
            if q > 0:
                stack.append((pr, q - 1, t + ("E",), rr if t else ef_g))
            else:
                for i, pb in enumerate(p.be_probs):
                    stack.append((pr * pb, q, t + (i,), rr if t else be_g[i]))
        return out

    start = fill(0, (), 0)
    index, states, rows, cols, vals = {}, [], [], [], []

    def idx(s):
        if s not in index:
            index[s] = len(states)
            states.append(s)
        return index[s]

    frontier = [s for _, s in start]
    for s in frontier:
        idx(s)
    k = 0
    while k < len(states):
        pq, txq, r = states[k]
        if r > 1:
            t2, r2 = txq, r - 1
        else:
            t2 = txq[1:]
            r2 = gran(t2[0]) if t2 else 0
        for n_arr, pa in arr:
            q2 = min(p.pq_cap, pq + n_arr)
            for pf, s2 in fill(q2, t2, r2):
                rows.append(k)
                cols.append(idx(s2))
                vals.append(pa * pf)
        k += 1
    n = len(states)
    P = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    # Solve pi (P - I) = 0 with sum(pi) = 1 (replace one equation).
    A = (P.T - sp.identity(n)).tolil()
    A[0, :] = 1.0
    b = np.zeros(n)
    b[0] = 1.0
    pi = spla.spsolve(A.tocsc(), b)
    return pi, states, ef_g, gran, a


def direct_bernoulli_mean_and_loss(p, granule):
    pi, states, ef_g, gran, a = direct_chain(p, granule)
    w = np.array([r + sum(gran(k) for k in t[1:]) for _, t, r in states])
    n = np.array([q for q, _, _ in states])
    ok = n < p.pq_cap
    mean_slots = np.sum(pi[ok] * (w[ok] - 1 + (n[ok] + 1) * ef_g)) / np.sum(pi[ok])
    loss = np.sum(pi[~ok])
    return mean_slots * granule * 8 / p.C, loss, len(states)


@pytest.mark.parametrize("QT,PQ,be", [
    (2, 2, ((512, 1.0),)),
    (3, 4, ((512, 0.5), (1536, 0.5))),
    (5, 3, ((512, 0.5), (1024, 0.3), (1536, 0.2))),
])
def test_storm_equals_direct_scipy_solution_bernoulli(QT, PQ, be):
    """Storm's stationary distribution gives the same mean delay and loss as an independent SciPy solution."""
    scn = scenario(QT=QT, PQ=PQ, be=be, rate="900 kbit/s")
    p = params(scn)
    r = render(p, ModelOptions())
    dd, built = delay_distribution(r)
    mean, loss, n_states = direct_bernoulli_mean_and_loss(p, r.granule)
    assert dd.mean() == pytest.approx(mean, rel=1e-7)
    assert dd.loss == pytest.approx(loss, rel=1e-6, abs=1e-12)
    # The DTMC's tick states are the slot-start states of the direct chain.
    assert int(np.count_nonzero(dd.pi > 0)) <= n_states


def test_storm_equals_direct_scipy_solution_poisson_loss():
    """With Poisson arrivals the loss probability equals the direct solution's expected excess arrivals."""
    from qosbound.models.pq_txq import poisson_excess

    scn = scenario(QT=3, PQ=3, be=((512, 0.5), (1536, 0.5)), rate="1200 kbit/s", arrivals="poisson")
    p = params(scn)
    r = render(p, ModelOptions())
    dd, _ = delay_distribution(r)
    pi, states, *_ , a = direct_chain(p, r.granule)
    n = np.array([q for q, _, _ in states])
    lost = sum(pi[n == k].sum() * poisson_excess(a, p.pq_cap - k) for k in range(p.pq_cap + 1))
    assert dd.loss == pytest.approx(lost / a, rel=1e-6)


def test_example_state_and_transition_counts():
    """The example instance (PQ 10, Q_t 5, 3 BE sizes) has a fixed size; assert it before any value."""
    scn = load(EXAMPLE)
    r = render(params(scn), scn.methods.model_checked, scn.name)
    dd, built = delay_distribution(r)
    assert (built.states, built.transitions) == (6580, 37431)
    assert r.granule == 128 and r.slot == pytest.approx(512e-6)


def test_committed_rendering_is_current():
    """models/pq_txq.prism is the rendering of examples/ferrari2001.yaml (it opens in PRISM as is)."""
    scn = load(EXAMPLE)
    r = render(params(scn), scn.methods.model_checked, scn.name)
    assert (ROOT / "models" / "pq_txq.prism").read_text() == r.text


def test_tagged_arrival_mean_equals_littles_law_exactly():
    """In exact arithmetic the tagged-arrival mean and Little's law agree to the last digit."""
    scn = scenario(QT=2, PQ=2, be=((512, 0.5), (1024, 0.5)), rate="600 kbit/s", arrivals="bernoulli")
    r = render(params(scn), ModelOptions())
    dd, built = delay_distribution(r, exact=True)
    assert dd.mean() == pytest.approx(dd.little_mean(), rel=1e-14)


@pytest.mark.parametrize("arrivals", ["poisson", "bernoulli", "cbr"])
def test_floating_mean_satisfies_littles_law(arrivals):
    """For every arrival process the delay distribution's mean matches Little's law on the same chain."""
    scn = scenario(QT=5, PQ=10, be=((512, 0.5), (1024, 0.3), (1536, 0.2)), arrivals=arrivals)
    dd, _ = delay_distribution(render(params(scn), ModelOptions()))
    assert dd.mean() == pytest.approx(dd.little_mean(), rel=1e-6)


def test_max_occupancy_is_qt_plus_k_minus_1():
    """A 5-unit TxQ with 1536-byte BE packets holds at most 7 units (Ferrari et al. 2001, section II)."""
    from qosbound.models.engine import steady_state

    scn = scenario(QT=5, PQ=2, be=((1536, 1.0),), arrivals="bernoulli")
    r = render(params(scn), ModelOptions())
    vals, pi, _ = steady_state(r.text)
    units = r.kinds_units[np.stack([vals[f"s{i}"] for i in range(1, 6)], axis=1)].sum(axis=1)
    assert units.max() == 5 + 3 - 1


def test_ccdf_is_a_survival_function():
    """P(D > t) falls from 1 to 0, and the quantile inverts it."""
    dd, _ = delay_distribution(render(params(load(EXAMPLE)), ModelOptions()))
    ts = np.linspace(0, 0.03, 61)
    c = np.array([dd.ccdf(t) for t in ts])
    assert c[0] == pytest.approx(1.0) and c[-1] == 0.0
    assert np.all(np.diff(c) <= 1e-15)
    q99 = dd.quantile(0.99)
    assert dd.ccdf(q99) == pytest.approx(0.01, abs=1e-9)


def test_granule_rounding_is_reported():
    """Sizes with a tiny gcd are rounded up to a coarser granule, and the model says so."""
    scn = scenario(QT=3, PQ=2, be=((577, 0.5), (1499, 0.5)))
    r = render(params(scn), ModelOptions())
    assert r.rounded and "rounded UP" in r.text
    assert max(r.be_gran) <= 64


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(QT=st.integers(1, 4), k=st.integers(1, 3), rho=st.floats(0.02, 0.6), PQ=st.integers(1, 6),
       arrivals=st.sampled_from(["poisson", "bernoulli"]))
def test_worst_case_mean_eq7_bounds_the_model_mean(QT, k, rho, PQ, arrivals):
    """Ferrari eq. (7) with saturated BE of k units bounds the exact mean EF delay (Ferrari et al. 2001, section VI)."""
    rate = f"{rho * 2e6:.6f} bit/s"
    scn = scenario(QT=QT, PQ=PQ, be=((512 * k, 1.0),), rate=rate, arrivals=arrivals)
    p = params(scn)
    dd, _ = delay_distribution(render(p, ModelOptions()))
    W = {r.metric: r for r in closed_form_results(p)}["EF.delay.worst_case_mean"].value
    assert dd.mean() <= W


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(QT=st.integers(1, 4), k=st.integers(1, 3), rho=st.floats(0.02, 0.6), PQ=st.integers(1, 6),
       arrivals=st.sampled_from(["poisson", "bernoulli", "cbr"]))
def test_max_delay_bound_dominates_the_model_support(QT, k, rho, PQ, arrivals):
    """No accepted EF packet in the model waits longer than the closed-form maximum-delay bound."""
    rate = f"{round(rho * 40) / 40 * 2e6:.0f} bit/s" if arrivals == "cbr" else f"{rho * 2e6:.6f} bit/s"
    if arrivals == "cbr" and rate.startswith("0 "):
        rate = "50000 bit/s"
    scn = scenario(QT=QT, PQ=PQ, be=((512 * k, 1.0),), rate=rate, arrivals=arrivals)
    p = params(scn)
    dd, _ = delay_distribution(render(p, ModelOptions()))
    bound = {r.metric: r for r in closed_form_results(p)}["EF.delay.max"].value
    if arrivals == "cbr" or p.burst >= p.pq_cap * p.ef_size:
        assert dd.ccdf(bound * (1 + 1e-9)) == 0.0


def test_property_file_values_match_exact_arithmetic():
    """The .props long-run values on a small instance equal Storm's exact (rational) results."""
    from qosbound.models.engine import check
    from qosbound.models.pq_txq import PROPS_TEXT

    scn = scenario(QT=2, PQ=2, be=((512, 0.5), (1024, 0.5)), rate="600 kbit/s", arrivals="bernoulli")
    text = render(params(scn), ModelOptions()).text
    fl = check(text, PROPS_TEXT)
    ex = check(text, PROPS_TEXT, exact=True)
    assert (fl.states, fl.transitions) == (ex.states, ex.transitions)
    for name, v in ex.values.items():
        assert fl.values[name] == pytest.approx(v, rel=1e-9, abs=1e-15), name
    assert all(isinstance(v, Fraction) for v in ex.exact_values.values())


@pytest.mark.slow
def test_reported_interval_contains_the_exact_value_on_a_hard_instance():
    """Where Storm's floating stationary vector is least accurate (heavy loss), the a-posteriori interval of
    the model-checked mean still contains the exact (rational) value."""
    from qosbound.systems.pq_txq.model_checked import model_results
    from qosbound.progress import QUIET

    scn = scenario(QT=5, PQ=3, be=((512, 0.5), (1024, 0.3), (1536, 0.2)), rate="1200 kbit/s", arrivals="poisson")
    p = params(scn)
    fl = {r.metric: r for r in model_results(p, ModelOptions(), [0.01], [0.99], QUIET)}
    ex = {r.metric: r for r in model_results(p, ModelOptions(exact=True), [0.01], [0.99], QUIET)}
    for metric in ("EF.delay.mean", "EF.loss", "EF.delay.ccdf@10ms"):
        iv = fl[metric].interval
        assert iv.low <= ex[metric].value <= iv.high, (metric, iv, ex[metric].value)


@pytest.mark.parametrize("arrivals,rate", [("bernoulli", "600 kbit/s"), ("cbr", "600 kbit/s"), ("poisson", "900 kbit/s")])
def test_every_model_checked_interval_is_numerical_and_contains_the_exact_value(arrivals, rate):
    """Every model-checked metric (mean, quantiles, CCDF, loss) carries Interval.numerical with a TRUE bound
    (direct solve + a-posteriori brackets) that contains the exact (rational) result, and is narrow."""
    from qosbound.systems.pq_txq.model_checked import model_results
    from qosbound.progress import QUIET
    from qosbound.results import Kind

    scn = scenario(QT=2, PQ=3, be=((512, 0.5), (1024, 0.5)), rate=rate, arrivals=arrivals)
    p = params(scn)
    fl = {r.metric: r for r in model_results(p, ModelOptions(), [0.004, 0.008], [0.5, 0.99], QUIET)}
    ex = {r.metric: r for r in model_results(p, ModelOptions(exact=True), [0.004, 0.008], [0.5, 0.99], QUIET)}
    assert set(fl) == set(ex)
    for metric, r in fl.items():
        iv = r.interval
        assert iv.kind == Kind.NUMERICAL and "a-posteriori" in iv.note, (metric, iv)
        assert iv.low <= ex[metric].value <= iv.high, (metric, iv, ex[metric].value)
        assert iv.high - iv.low <= 1e-8 * max(abs(r.value), 1e-3), (metric, iv)
