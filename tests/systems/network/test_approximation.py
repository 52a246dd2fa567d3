"""The end-to-end approximation (qosbound.systems.network.approximation): exact where its parts are (one M/M/1 hop,
the convolution of independent hops, a port fed by one pacer), capped by the proved maximum, reported as an
approximation with its measured range, and within that range of the chained simulator on the WAN, a tandem and a
random mesh."""

from __future__ import annotations

import math

import numpy as np
import pytest

from qosbound.analytic.priority import pk_wait
from qosbound.results import Kind
from qosbound.scenario import build, load
from qosbound.systems.network import network
from qosbound.systems.network.approximation import (GRID_CELLS, MEASURED_RATIO, NEGLECTS, FlowApprox, HopApprox,
                                                    approximate)
from qosbound.systems.network.bounds import analyse
from qosbound.systems.network.closed_form import closed_form
from qosbound.systems.network.generate import random_network, tandem
from qosbound.systems.network.simulated import network_config
from qosbound.validation.network_sim import simulate
from tests.helpers import example


def one_port(rate_bit_s: float, sizes, ring=None) -> dict:
    """One port of 10 Mbit/s without a ring, one Poisson flow in class-default."""
    port = {"link": {"rate": "10 Mbit/s", "delay": "1 ms"},
            "classes": [{"name": "class-default", "bandwidth": "remaining 100 %", "queue_limit": 100000}],
            **({"txq": ring} if ring else {})}
    return {"name": "one", "system": "network", "ports": {"a->b": port},
            "flows": [{"name": "d", "class": "class-default", "path": ["a", "b"],
                       "traffic": {"rate": f"{rate_bit_s:g} bit/s", "arrivals": "poisson", **sizes}}]}


def _hop(wait: float, busy: float) -> HopApprox:
    return HopApprox("a->b", "c", 0.0, 0.0, 0.0, wait, busy, busy, 1.0, 0.0)


def test_one_fifo_hop_is_the_m_g_1_queue():
    """One class alone at a port without a ring: the mean wait is Pollaczek-Khinchine's, waiting with probability
    the utilisation, plus the packet's transmission and the link."""
    sizes = [(40.0, 0.5), (1500.0, 0.5)]
    fa = approximate(network(build(one_port(6e6, {"sizes": [{"size": f"{s:g} B", "p": p} for s, p in sizes]}))))["d"]
    (h,) = fa.hops
    m1 = sum(8 * s / 10e6 * p for s, p in sizes)
    m2 = sum((8 * s / 10e6) ** 2 * p for s, p in sizes)
    lam = 6e6 / (8 * sum(s * p for s, p in sizes))
    assert h.wait == pytest.approx(float(pk_wait(lam, m1, m2)), rel=1e-12)
    assert h.busy == pytest.approx(0.6, rel=1e-12) and h.queueing == 1.0
    assert h.transmission == pytest.approx(m1, rel=1e-12) and h.ring == h.transmission
    assert fa.mean == pytest.approx(m1 + h.wait + 1e-3, rel=1e-4)


def test_with_exponential_sizes_the_wait_is_the_m_m_1_law():
    """Exponential sizes: the atom 1 - rho and the exponential tail of rate mu - lambda are the M/M/1 waiting time
    exactly, so each quantile less the fixed part is ln(rho / (1 - q)) / (mu - lambda), within a grid cell."""
    fa = approximate(network(build(one_port(8e6, {"size": "500 B", "sizes": "exponential"}))))["d"]
    mu, lam = 10e6 / 4000.0, 8e6 / 4000.0
    qs = [0.5, 0.9, 0.99, 0.999]
    _, cell = fa.law()
    for q, got in zip(qs, fa.quantiles(qs)):
        want = math.log(0.8 / (1 - q)) / (mu - lam)
        assert got - fa.fixed == pytest.approx(want, abs=2 * cell)


def test_independent_hops_are_convolved():
    """Two hops with the same atom-and-exponential wait: the sum's law is 2 pi (1 - pi) e^{-a t} +
    pi^2 e^{-a t} (1 + a t) above t, a = pi / w; the grid's quantiles are within two cells of its."""
    pi, w = 0.7, 2e-3
    fa = FlowApprox("f", (_hop(w, pi), _hop(w, pi)))
    a = pi / w
    t = np.linspace(0, 0.05, 200001)
    ccdf = 2 * pi * (1 - pi) * np.exp(-a * t) + pi ** 2 * np.exp(-a * t) * (1 + a * t)
    _, cell = fa.law()
    assert cell == pytest.approx(40 * 2 * w / pi / GRID_CELLS)
    for q, got in zip([0.5, 0.99, 0.999], fa.quantiles([0.5, 0.99, 0.999])):
        want = t[np.argmax(ccdf <= 1 - q)]
        assert got == pytest.approx(want, abs=2 * cell + 1e-6)
    assert fa.mean == pytest.approx(2 * w, rel=1e-3)


def test_a_port_fed_by_one_pacer_no_faster_queues_nothing_but_the_packet_in_service():
    """The tandem's flow alone at its second port (no cross traffic there): its only input is the first port, of
    the same rate, so the load that queues is nil and the wait is the residual service R = lambda E[S^2] / 2. At
    the first port the one cross call (one CBR stream) is a group of its own: its load does not queue."""
    raw = tandem(2, ring=0, cross_calls=1, cross_data="3 Mbit/s")
    raw["flows"] = [f for f in raw["flows"] if f["name"] != "xv1" and f["name"] != "xd1"]
    net = network(build(raw))
    fa = approximate(net)["v"]
    first, second = fa.hops
    assert first.queueing == pytest.approx((first.load - 80e3 / 10e6) / first.load, rel=1e-12)
    assert second.queueing < 1e-6
    S = 8 * 200 / 10e6
    lam = 10 * 80e3 / 1600.0
    assert second.wait == pytest.approx(lam * S * S / 2, rel=1e-6)


def test_a_capped_part_keeps_its_mass_and_its_capped_mean():
    """A ring part capped at the most the ring holds: the law's mass is 1 before normalising, and its mean is
    E[min(X, c)], the integral of the capped CCDF (within a cell)."""
    hop = HopApprox("a->b", "c", 1e-4, 1e-4 + 7e-3, 18e-3, 0.5e-3, 0.9, 0.9, 1.0, 0.0)
    fa = FlowApprox("f", (hop,))
    pmf, cell = fa.law()
    grid_mean = float(pmf @ (np.arange(pmf.shape[0]) + 0.5)) * cell
    assert grid_mean == pytest.approx(fa.mean - fa.fixed, abs=2 * cell)
    assert fa.mean - fa.fixed == pytest.approx(7e-3 * (1 - math.exp(-18 / 7)) + 0.5e-3, rel=1e-12)
    assert fa.quantiles([0.9999])[0] <= fa.fixed + 18e-3 + 0.5e-3 * math.log(0.9 / 1e-4) / 0.9 + 2 * cell


def test_quantiles_never_exceed_the_proved_maximum():
    fa = FlowApprox("f", (_hop(5e-3, 1.0),), cap=4e-3)
    assert fa.quantiles([0.5, 0.99]) == [pytest.approx(3.466e-3, rel=1e-2), 4e-3]


def test_the_closed_forms_report_it_as_an_approximation_with_its_measured_range():
    net = network(load(example("network_wan")))
    res = {(r.metric, r.interval.kind): r for r in closed_form(net, quantiles=[0.99, 0.999])}
    lo, hi = MEASURED_RATIO
    for m in ("voip-ab.delay.mean", "voip-ab.delay.p99", "voip-ab.delay.p99.9", "core-web.delay.p99"):
        r = res[(m, Kind.APPROXIMATION)]
        assert r.method == "closed-form" and r.interval.neglects == NEGLECTS
        assert r.interval.low == pytest.approx(r.value / hi) and r.interval.high == pytest.approx(r.value / lo)
        assert [h["port"] for h in r.provenance["hops"]] == [h.port for h in net.flow(m.split(".")[0]).hops]
    assert res[("voip-ab.delay.p99.9", Kind.APPROXIMATION)].value <= res[("voip-ab.delay.max", Kind.UPPER_BOUND)].value


def test_a_port_overloaded_by_the_load_that_queues_gives_no_approximation_and_says_why():
    raw = one_port(11e6, {"size": "500 B"})
    net = network(build(raw))
    fa = approximate(net)["d"]
    assert fa.why.startswith("a->b: the load that queues") and not fa.hops
    res = closed_form(net, quantiles=[0.99])
    assert not any(r.interval.kind is Kind.APPROXIMATION for r in res)


CASES = {"wan": lambda: load(example("network_wan")), "tandem": lambda: build(tandem(4)),
         "mesh": lambda: build(random_network(4, 3, 60, seed=5, rates=(10e6, 100e6), load=0.8))}


@pytest.mark.parametrize("case", list(CASES))
def test_the_simulation_lies_within_the_measured_range(case):
    """Mean, p99 and p99.9 of every flow: approximation / simulated within MEASURED_RATIO, on the runs that measured
    it (benchmarks/bench_network.py --approximation: 4 x 10 s, seed 1)."""
    net = network(CASES[case]())
    ap = approximate(net, {n: fb.best for n, fb in analyse(net).flows.items()})
    samples, _ = simulate(network_config(net), 10.0, 4, 1)
    lo, hi = MEASURED_RATIO
    checked = 0
    for k, f in enumerate(net.flows):
        d = samples[k].delays
        if f.saturated or min(x.shape[0] for x in d) < 500:  # as the benchmark: 500 packets per replication
            continue
        sim = [np.mean([x.mean() for x in d])] + [np.mean([np.quantile(x, q) for x in d]) for q in (0.99, 0.999)]
        app = [ap[f.name].mean] + ap[f.name].quantiles([0.99, 0.999])
        for a, s in zip(app, sim):
            assert lo <= a / s <= hi, (f.name, a, s)
        checked += 1
    assert checked == {"wan": 3, "tandem": 9, "mesh": 60}[case]
