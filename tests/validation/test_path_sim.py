"""Tests of the path simulator (qosbound.validation.path_sim): the PQ + TxQ port with FIFO hops around it."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.errors import ScenarioError
from qosbound.validation.path_sim import Hop, PreTraffic, fifo, path_trace, rows_for, run_path


def _params(K: int = 2, arrivals: str = "cbr"):
    from qosbound.scenario import build
    from qosbound.systems.pq_txq import params

    raw = {"name": "path", "system": "pq_txq", "link": {"rate": 2e6}, "txq": {"units": 5, "unit_size": 512},
           "pq": {"capacity": 10},
           "traffic": {"EF": {"rate": 300000, "size": 128, "arrivals": arrivals},
                       "BE": {"saturated": True, "size": K * 512}}}
    return params(build(raw))


def test_fifo_by_hand():
    """Lindley through one hop: waits behind the packet ahead, idles when empty, then adds the latency."""
    arr = np.array([0.0, 1.0, 1.5, 10.0])
    bits = np.array([4.0, 2.0, 2.0, 1.0])
    out = fifo(arr, bits, 2.0, 0.25)  # service 2, 1, 1, 0.5 s
    assert out.tolist() == [2.25, 3.25, 4.25, 10.75]


def test_path_of_one_hop_is_the_single_port_simulator():
    """With no hop and no latency, the path's EF delays are the port trace's, packet by packet."""
    from qosbound.validation.pq_txq_sim import simulate_trace

    p = _params(2, "poisson")
    tr = path_trace(p, 3000, 11)
    t = simulate_trace(p, 3000, 11)
    cls = np.asarray(t.column("cls").to_pylist())
    dep = t.column("departure").to_numpy(zero_copy_only=False)
    arr = t.column("arrival").to_numpy()
    ok = (cls == "EF") & ~t.column("dropped").to_numpy(zero_copy_only=False)
    assert tr["delay"].shape[0] == int(ok.sum()) > 500
    assert np.array_equal(tr["delay"], dep[ok] - arr[ok]) and np.array_equal(tr["port"], tr["delay"])
    assert not tr["pre"].any() and not tr["post"].any()


def test_path_mean_matches_the_replication_simulator():
    """run_path with no hop and the single-port simulator's replications estimate the same mean (95 % CIs
    overlap), and both cover the exact chain's mean for K = 1 CBR (7338.67 us)."""
    from qosbound.validation.pq_txq_kernels import S_DELAYS, S_SUM
    from qosbound.validation.pq_txq_sim import run_replications

    p = _params(1, "cbr")
    e = run_path(p, 4000, 12, 5)
    rep = run_replications(p, 4000, 12, 6)
    m = rep.stats[:, S_SUM] / rep.stats[:, S_DELAYS]
    h = 2.201 * m.std(ddof=1) / np.sqrt(12)  # t(0.975, 11)
    assert e.low <= m.mean() + h and m.mean() - h <= e.high
    assert e.low - 1e-5 <= 7338.67e-6 <= e.high + 1e-5


def test_same_rate_fifo_hops_add_the_largest_packet_time():
    """Deterministic: the saturated port sends back to back, so at a store-and-forward hop of the port's rate a
    packet leaves M/C after it left the port, M the largest packet sent before it in the busy period (Lindley by
    induction): every EF packet is held a 3-unit BE packet's 6.144 ms per such hop, not its own 0.512 ms. A hop
    twenty times faster holds it only for its own serialisation (the spacing at the port is never shorter). Each
    hop's latency adds once."""
    p = _params(3, "cbr")
    lat = 1e-4
    tr = path_trace(p, 4000, 3, post=(Hop(2e6, lat), Hop(2e6, lat)))
    assert tr["delay"].shape[0] > 1000
    assert np.allclose(tr["post"], 2 * (3 * 512 * 8 / 2e6 + lat), rtol=0, atol=1e-9)
    assert (tr["prev_bits"] == 128 * 8).mean() > 0.2  # many EF packets follow another EF packet, yet wait as long
    fast = path_trace(p, 4000, 3, post=(Hop(40e6, lat),), port_latency=2 * lat)
    assert np.allclose(fast["post"], 128 * 8 / 40e6 + 3 * lat, rtol=0, atol=1e-9)
    assert np.array_equal(fast["port"], tr["port"])


def test_pre_hop_without_cross_traffic_adds_serialisation_and_latency():
    """Alone on a pre-hop (CBR EF, never two packets together) an EF packet is delayed by its serialisation plus
    the latency; with bursty best effort it waits, more with larger bursts at the same load."""
    p = _params(2, "cbr")
    tr = path_trace(p, 3000, 4, pre=(Hop(10e6, 5e-5),))
    assert np.allclose(tr["pre"], 128 * 8 / 10e6 + 5e-5, rtol=0, atol=1e-12)
    one = run_path(p, 3000, 4, 8, pre=(Hop(10e6),), pre_traffic=PreTraffic(2.4e6, 1)).components["pre"]
    many = run_path(p, 3000, 4, 8, pre=(Hop(10e6),), pre_traffic=PreTraffic(2.4e6, 20)).components["pre"]
    assert 128 * 8 / 10e6 < one[0] and one[2] < many[1]


def test_littles_law_on_the_post_hops():
    """Little's law over the hops after the port: the time-average number of packets on them (counted from the
    arrival and departure events) equals the throughput times the mean time spent there."""
    p = _params(2, "poisson")
    tr = path_trace(p, 20000, 9, post=(Hop(2e6, 1e-3), Hop(4e6, 2e-3)))
    a, d = tr["post_arrival"], tr["post_departure"]
    assert np.all(d > a)
    t0, t1 = a[0], d[-1]
    times = np.concatenate([a, d])
    steps = np.concatenate([np.ones_like(a), -np.ones_like(d)])
    order = np.argsort(times, kind="stable")
    n = np.cumsum(steps[order])
    area = float(np.sum(n[:-1] * np.diff(times[order])))
    L = area / (t1 - t0)
    lam = a.shape[0] / (t1 - t0)
    W = float(np.mean(d - a))
    assert L == pytest.approx(lam * W, rel=1e-9)
    assert W > 3e-3  # at least the two latencies


def test_rows_for_gives_about_the_ef_count():
    p = _params(1, "cbr")
    tr = path_trace(p, rows_for(p, 2000), 1)
    assert 1950 <= tr["delay"].shape[0] <= 2150


def test_bad_hops_are_scenario_errors():
    p = _params()
    with pytest.raises(ScenarioError):
        path_trace(p, 100, 1, post=(Hop(0.0),))
    with pytest.raises(ScenarioError):
        path_trace(p, 100, 1, pre=(Hop(1e6, -1.0),))
    with pytest.raises(ScenarioError):
        run_path(p, 100, 1, 1)
