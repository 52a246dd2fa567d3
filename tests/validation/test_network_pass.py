"""The compiled replication of the chained simulator: a port's arrival order (merge and buckets) is the stable sort
by time, and whole runs equal, bit for bit, a plain NumPy chaining of the port kernel written from the module's
semantics (per flow arrays, a stable argsort per port, NumPy Generators from the spawned seed sequences) -- on the
WAN examples, a mesh, lossy tandems, RED droppers, saturated flows (two at one port), exponential sizes."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from qosbound.scenario import build, load
from qosbound.systems.network import network
from qosbound.systems.network.generate import random_network, tandem
from qosbound.systems.network.simulated import network_config
from qosbound.validation.network_pass import bucket_order, merge
from qosbound.validation.network_sim import _port_trace, _source, simulate
from qosbound.validation.stats import seed_sequences, spawned_generators
from tests.helpers import example


def _segments(rng, counts, grid=4.0):
    """Segments in time order with many equal times within and across them."""
    segs = [np.sort(np.round(rng.random(n) * 20.0 * grid) / grid) for n in counts]
    t = np.concatenate(segs) if segs else np.zeros(0)
    start = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64) if counts else np.zeros(0, np.int64)
    return t, start, np.asarray(counts, np.int64)


@pytest.mark.parametrize("counts", [[0, 50, 1, 200, 37], [300], [5, 5], [0, 0], list(range(1, 40)),
                                    [1000, 3, 0, 700, 1, 1, 250, 90]])
@pytest.mark.parametrize("grid", [4.0, 1e6])
def test_merge_and_buckets_give_the_stable_sort(counts, grid):
    """Both orders of segments (times on a coarse grid: ties within and across segments; or nearly distinct)
    equal NumPy's stable argsort of the concatenation: index, segment and time."""
    rng = np.random.default_rng(len(counts))
    t, start, n = _segments(rng, counts, grid)
    want = np.argsort(t, kind="stable")
    seg = np.repeat(np.arange(len(counts)), counts)
    for order in (lambda *a: merge(*a), lambda *a: bucket_order(*a, np.empty(t.shape[0] + 2, np.int64))):
        idx, sg, tt = np.empty(t.shape[0], np.int64), np.empty(t.shape[0], np.int64), np.empty(t.shape[0])
        assert order(t, start, n, idx, sg, tt) == t.shape[0]
        np.testing.assert_array_equal(idx, want)
        np.testing.assert_array_equal(sg, seg[want])
        np.testing.assert_array_equal(tt, t[want])


def test_segments_out_of_order_still_give_the_stable_sort():
    """A segment out of time order: the merge falls back to the stable sort, the buckets need no order."""
    rng = np.random.default_rng(2)
    t, start, n = _segments(rng, [40, 60, 30])
    t[45:100] = rng.permutation(t[45:100])
    want = np.argsort(t, kind="stable")
    idx, sg, tt = np.empty(130, np.int64), np.empty(130, np.int64), np.empty(130)
    merge(t, start, n, idx, sg, tt)
    np.testing.assert_array_equal(idx, want)
    bucket_order(t, start, n, idx, sg, tt, np.empty(132, np.int64))
    np.testing.assert_array_equal(idx, want)


def _reference(net, H, R, seed, warmup=0.05, cooldown=0.05):
    """The chained simulator's semantics in plain NumPy: per replication, generators ``SeedSequence.spawn`` (flow
    k's sources child k, port p child F + p); per port in order, its members' live packets in the stable order of
    their arrival times, the port kernel run on them (``_port_trace``, its meters' buckets full at the start), each
    saturated flow starting there taking its class's admitted rows; drops counted per hop, delays per hop within the
    counted window."""
    net.check()
    F, P = len(net.flows), len(net.ports)
    lo, hi = warmup * H, (1.0 - cooldown) * H
    out = [dict(delays=[], sent=[], lost=[], bytes=[], hop_max=[], hop_lost=[]) for _ in range(F)]
    hops = 0
    for seq in seed_sequences(seed, R):
        rngs = spawned_generators(seq, F + P)
        t_first, size, t_cur, alive = [None] * F, [None] * F, [None] * F, [None] * F
        for k, f in enumerate(net.flows):
            if not f.saturated:
                t_first[k], size[k] = _source(rngs[k], f, H)
                t_cur[k], alive[k] = t_first[k].copy(), np.ones(t_first[k].shape[0], np.bool_)
        hmax = [np.zeros(len(f.ports)) for f in net.flows]
        hlost = [np.zeros(len(f.ports)) for f in net.flows]
        for p, configured in enumerate(net.ports):  # meters and policers with full buckets in every replication
            cfg = replace(configured, mk_state=configured.mk_state.copy(), po_state=configured.po_state.copy())
            members = [(k, h) for k, h in net.members[p] if not (net.flows[k].saturated and h == 0)]
            sat = [(k, f.classes[0]) for k, f in enumerate(net.flows) if f.saturated and f.ports[0] == p]
            parts = []
            for k, h in members:
                idx = np.flatnonzero(alive[k])
                parts.append((k, h, idx, t_cur[k][idx], size[k][idx]))
            t = np.concatenate([x[3] for x in parts]) if parts else np.zeros(0)
            z = np.concatenate([x[4] for x in parts]) if parts else np.zeros(0)
            c = np.concatenate([np.full(x[2].shape[0], net.flows[x[0]].classes[x[1]]) for x in parts]).astype(
                np.int64) if parts else np.zeros(0, np.int64)
            pr = np.concatenate([np.full(x[2].shape[0], net.flows[x[0]].precs[x[1]]) for x in parts]).astype(
                np.int64) if parts else np.zeros(0, np.int64)
            o = np.argsort(t, kind="stable")
            extra = 0
            if sat:
                smallest = min(min(s.sizes) if not s.exponential else 1.0 for k, _ in sat
                               for s in net.flows[k].sources)
                extra = int(H * cfg.C / 8.0 / smallest) + cfg.Q_t + 16
            tr, rows = _port_trace(rngs[F + p], cfg, t[o], c[o], z[o], pr[o], H, extra)
            n = t.shape[0]
            hops += rows
            dep = np.empty(n)
            dep[o] = np.where(tr[5][:n], np.nan, tr[4][:n] * cfg.tick)
            a = 0
            for k, h, idx, arr, _ in parts:
                d = dep[a:a + idx.shape[0]]
                a += idx.shape[0]
                ok = ~np.isnan(d)
                counted = (t_first[k][idx] >= lo) & (t_first[k][idx] < hi)
                hlost[k][h] += np.count_nonzero(counted & ~ok)
                if np.any(counted & ok):
                    hmax[k][h] = max(hmax[k][h], float(np.max(d[counted & ok] - arr[counted & ok])))
                alive[k][idx[~ok]] = False
                t_cur[k][idx[ok]] = d[ok] + net.prop[p]
            for k, cls in sat:
                mine = np.flatnonzero(tr[0][n:rows] == cls) + n
                d = tr[4][mine] * cfg.tick
                t_first[k], size[k] = tr[3][mine] * cfg.tick, tr[2][mine].copy()
                alive[k] = ~np.isnan(d)
                t_cur[k] = np.where(alive[k], d + net.prop[p], np.nan)
        for k in range(F):
            counted = (t_first[k] >= lo) & (t_first[k] < hi) if t_first[k] is not None else np.zeros(0, np.bool_)
            ok = counted & alive[k] if t_first[k] is not None else counted
            s = out[k]
            s["sent"].append(float(counted.sum()))
            s["lost"].append(float((counted & ~ok).sum()))
            s["bytes"].append(float(size[k][ok].sum()) if t_first[k] is not None else 0.0)
            s["delays"].append(t_cur[k][ok] - t_first[k][ok] if t_first[k] is not None else np.zeros(0))
            s["hop_max"].append(hmax[k])
            s["hop_lost"].append(hlost[k])
    return out, hops


def _two_saturated():
    cls = [{"name": "voice", "dscp": ["EF"], "priority": 1, "queue_limit": 64},
           {"name": "bulk", "dscp": ["CS1"], "bandwidth": "remaining 30 %", "queue_limit": 32},
           {"name": "class-default", "bandwidth": "remaining 70 %", "queue_limit": 32}]
    nodes = ["a", "b", "c", "d"]
    ports = {f"{x}->{y}": {"link": {"rate": r, "delay": "1 ms"}, "classes": cls}
             for x, y, r in zip(nodes, nodes[1:], ["10 Mbit/s", "8 Mbit/s", "10 Mbit/s"])}
    flows = [{"name": "s1", "class": "bulk", "path": nodes,
              "traffic": {"saturated": True, "sizes": [{"size": "1500 B", "p": 0.7}, {"size": "300 B", "p": 0.3}]}},
             {"name": "s2", "class": "class-default", "path": nodes,
              "traffic": {"saturated": True, "size": "500 B", "sizes": "exponential"}},
             {"name": "v", "dscp": "EF", "path": nodes[1:],
              "traffic": {"calls": 20, "call": {"rate": "80 kbit/s", "size": "200 B", "arrivals": "cbr"}}}]
    return build({"name": "t", "system": "network", "ports": ports, "flows": flows})


def _red():
    raw = tandem(3, ring=4, calls=5, cross_calls=3, cross_data="7 Mbit/s")
    for p in raw["ports"].values():
        p["classes"] = [dict(p["classes"][0]), dict(p["classes"][1], queue_limit=40, dropper={
            "mode": "wred", "exponent": 3, "thresholds": {"default": {"min_th": 4, "max_th": 20, "P_d": 3}}})]
    raw["flows"].append({"name": "ex", "class": "class-default", "path": ["r0", "r1", "r2", "r3"],
                         "traffic": {"rate": "2 Mbit/s", "size": "600 B", "sizes": "exponential",
                                     "arrivals": "on-off", "on": "30 ms", "off": "20 ms"}})
    return build(raw)


def _lossy_tandem():
    raw = tandem(3, ring=0, calls=10, cross_calls=1)
    raw["ports"]["r1->r2"]["link"]["rate"] = "2 Mbit/s"
    raw["flows"][0] = dict(raw["flows"][0], **{"class": "class-default",
                                               "traffic": {"rate": "3 Mbit/s", "arrivals": "poisson",
                                                           "size": "500 B"}})
    return build(raw)


CASES = {"wan": lambda: load(example("network_wan")), "wan-sites": lambda: load(example("network_wan_sites")),
         "mesh": lambda: build(random_network(4, 4, 80, seed=3, rates=(10e6, 100e6))),
         "lossy mesh, saturated": lambda: build(random_network(4, 3, 40, seed=8, load=1.2, saturated=2,
                                                               rates=(10e6, 100e6))),
         "lossy tandem": _lossy_tandem, "red": _red, "two saturated at one port": _two_saturated}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_run_is_the_plain_numpy_chaining_bit_for_bit(case):
    """Every delay of every flow and replication, the counts, bytes, per-hop maxima and losses, and the
    packet-hops: equal to the plain NumPy chaining's."""
    net = network_config(network(CASES[case]()))
    H = 1.5
    want, hops = _reference(net, H, 2, 7)
    got, got_hops = simulate(net, H, 2, 7)
    assert got_hops == hops
    for k, (g, w) in enumerate(zip(got, want)):
        for r in range(2):
            np.testing.assert_array_equal(g.delays[r], w["delays"][r])
        for f in ("sent", "lost", "bytes", "hop_max", "hop_lost"):
            np.testing.assert_array_equal(getattr(g, f), np.array(w[f]), err_msg=f"flow {k} {f}")
    if case == "two saturated at one port":  # each saturated flow is sent its own class's share: 30 % and 70 %
        s1, s2 = got[0], got[1]  # of 10 Mbit/s, in packets of 1140 B and 500 B on average
        assert math.isclose(float(np.mean(8 * 1140.0 * s1.sent / s1.window)), 3e6, rel_tol=0.1)
        assert math.isclose(float(np.mean(8 * 500.0 * s2.sent / s2.window)), 7e6, rel_tol=0.1)
    if case in ("lossy tandem", "red", "lossy mesh, saturated"):
        assert sum(float(s.lost.sum()) for s in got) > 0
