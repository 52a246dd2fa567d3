"""The port simulator (qosbound.validation.port_kernels, port_sim, qosbound.systems.port.simulated): each rule of
its semantics against a result known exactly -- M/M/1/K, Cobham's non-preemptive priority means, the token
buckets' long-run colours, the instantaneous WRED chain -- and its bookkeeping (seeds, threads, traces)."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.analytic.markers import cbr_fractions
from qosbound.analytic.priority import cobham_wait_saturated
from qosbound.analytic.red_queue import instantaneous, mm1k_distribution, mm1k_mean
from qosbound.analytic.wred import Profile
from qosbound.progress import QUIET
from qosbound.scenario import build
from qosbound.systems import get_system
from qosbound.systems.port.elements import port_of
from qosbound.systems.port.simulated import config
from qosbound.validation.port_kernels import CS_ARRIVALS, CS_POLICE
from qosbound.validation.markers import KINDS, mark, new_state
from qosbound.validation.port_sim import run_replications, simulate_trace


def port(classes, rate="1 Mbit/s", txq=None, **extra):
    raw = {"name": "t", "system": "port", "link": {"rate": rate}, "classes": classes, **extra}
    if txq:
        raw["txq"] = txq
    return build(raw)


def simulated(scn, packets=300_000, replications=6, seed=11):
    raw = scn.raw
    raw["methods"] = {"simulated": {"packets": packets, "replications": replications, "seed": seed}}
    res = get_system("port").evaluate(build(raw), ["simulated"], QUIET)
    return {r.metric: r for r in res}


def within(r, value, k=1.0):
    """The estimate's interval, widened by a factor k around its mean, contains ``value``."""
    half = max(r.value - r.interval.low, r.interval.high - r.value)
    return abs(r.value - value) <= k * half + 1e-15


def test_one_class_without_a_ring_is_mm1k():
    """Poisson, exponential sizes, queue limit 5 counting the packet on the wire: loss and mean delay of the
    M/M/1/K queue at rho = 0.9."""
    scn = port([{"name": "d", "dscp": ["AF11"], "bandwidth": "100 %", "queue_limit": 5,
                 "traffic": {"rate": "900 kbit/s", "size": "1000 B", "sizes": "exponential"}}])
    r = simulated(scn)
    pi = mm1k_distribution(0.9, 5)
    lam = 0.9e6 / 8000
    assert within(r["d.loss"], pi[-1], 1.5)
    assert within(r["d.delay.mean"], mm1k_mean(0.9, 5) / (lam * (1 - pi[-1])), 1.5)


def test_priority_levels_without_a_ring_are_cobham_s_non_preemptive_queue():
    """Two Poisson priority levels over a saturated weighted class, no ring, queues never full: each level's
    mean delay is Cobham's wait with the saturated class as the lowest plus its own transmission."""
    scn = port([{"name": "hi", "dscp": ["EF"], "priority": 1, "queue_limit": 10_000,
                 "traffic": {"rate": "200 kbit/s", "size": "200 B"}},
                {"name": "mid", "dscp": ["CS4"], "priority": 2, "queue_limit": 10_000,
                 "traffic": {"rate": "300 kbit/s", "size": "1000 B", "sizes": "exponential"}},
                {"name": "class-default", "traffic": {"saturated": True, "size": "1500 B"}}])
    r = simulated(scn, packets=400_000, replications=8)
    C = 1e6
    s1, s2, s3 = 1600 / C, 8000 / C, 12000 / C
    w = cobham_wait_saturated([0.2e6 / 1600, 0.3e6 / 8000], [s1, s2], [s1 ** 2, 2 * s2 ** 2], s3, s3 ** 2)
    assert within(r["hi.delay.mean"], w[0] + s1, 2.0)
    assert within(r["mid.delay.mean"], w[1] + s2, 2.0)


def test_classes_of_one_level_are_served_fifo():
    """Two classes at one priority level share a FIFO: alike traffic gets the same mean delay, and the level
    gets the mean of one class of their total rate."""
    two = port([{"name": "a", "dscp": ["EF"], "priority": 1, "traffic": {"rate": "150 kbit/s", "size": "200 B"}},
                {"name": "b", "dscp": ["CS5"], "priority": 1, "traffic": {"rate": "150 kbit/s", "size": "200 B"}},
                {"name": "class-default", "traffic": {"saturated": True, "size": "1000 B"}}], txq={"units": 3})
    one = port([{"name": "a", "dscp": ["EF"], "priority": 1, "traffic": {"rate": "300 kbit/s", "size": "200 B"}},
                {"name": "class-default", "traffic": {"saturated": True, "size": "1000 B"}}], txq={"units": 3})
    r2, r1 = simulated(two), simulated(one)
    a, b, s = r2["a.delay.mean"], r2["b.delay.mean"], r1["a.delay.mean"]
    assert abs(a.value - b.value) <= 2 * np.hypot(a.provenance["std_error"], b.provenance["std_error"]) * 1.5
    assert abs(a.value - s.value) <= 3 * np.hypot(a.provenance["std_error"], s.provenance["std_error"])


def test_unused_shares_go_to_the_backlogged_classes():
    """A light class takes only its load; two saturated classes share the rest in proportion to their
    bandwidths (DRR is work-conserving)."""
    scn = port([{"name": "light", "dscp": ["AF11"], "bandwidth": "60 %", "traffic": {"rate": "100 kbit/s",
                                                                                     "size": "500 B"}},
                {"name": "x", "dscp": ["AF21"], "bandwidth": "30 %", "traffic": {"saturated": True, "size": 1000}},
                {"name": "y", "dscp": ["AF31"], "bandwidth": "10 %", "traffic": {"saturated": True, "size": 1000}}],
               rate="10 Mbit/s")
    r = simulated(scn, packets=200_000, replications=4)
    assert within(r["light.throughput"], 1e5, 2.0)
    assert r["x.throughput"].value / r["y.throughput"].value == pytest.approx(3.0, rel=0.01)
    assert r["x.throughput"].value + r["y.throughput"].value == pytest.approx(9.9e6, rel=0.005)


def test_a_policer_drops_what_its_bucket_does_not_cover():
    """CBR at 2 Mbit/s into a two-colour policer of 1 Mbit/s: half the packets exceed (RFC 2697's long run);
    with 'set-dscp AF12' they are kept and counted under AF12 instead."""
    cls = {"name": "d", "dscp": ["AF11", "AF12"], "bandwidth": "100 %", "queue_limit": 1000,
           "police": {"cir": "1 Mbit/s", "cbs": "3000 B"}, "traffic": {"rate": "2 Mbit/s", "size": 500,
                                                                       "arrivals": "cbr"}}
    scn = port([cls], rate="10 Mbit/s")
    rep = run_replications(config(port_of(scn)), 100_000, 2, 3, 0.0, n_threads=1)
    g, _, _ = cbr_fractions("two-colour", 2e6, 1e6)
    police = rep.cst[:, 0, CS_POLICE].sum() / rep.cst[:, 0, CS_ARRIVALS].sum()
    assert police == pytest.approx(1 - g, abs=2e-3)
    cls["police"]["exceed"] = "set-dscp AF12"
    rep = run_replications(config(port_of(port([cls], rate="10 Mbit/s"))), 100_000, 2, 3, 0.0, n_threads=1)
    assert rep.cst[:, 0, CS_POLICE].sum() == 0
    by_prec = rep.pst[:, 0, :2, 0].sum(axis=0)
    assert by_prec / by_prec.sum() == pytest.approx([g, 1 - g], abs=2e-3)


def test_a_conditional_policer_meters_only_while_the_ring_is_full():
    """The same overload policed conditionally: with nothing else on the port the ring is never full and no
    packet is dropped by the policer; behind a saturated class the ring is always full and it polices."""
    voice = {"name": "v", "dscp": ["EF"], "priority": 1, "queue_limit": 1000,
             "police": {"cir": "1 Mbit/s", "cbs": "2000 B", "conditional": True},
             "traffic": {"rate": "2 Mbit/s", "size": 500, "arrivals": "cbr"}}
    alone = port([voice], rate="10 Mbit/s", txq={"units": 4})
    rep = run_replications(config(port_of(alone)), 50_000, 2, 3, 0.0, n_threads=1)
    assert rep.cst[:, 0, CS_POLICE].sum() == 0
    busy = port([voice, {"name": "class-default", "traffic": {"saturated": True, "size": 1500}}], rate="10 Mbit/s",
                txq={"units": 4})
    rep = run_replications(config(port_of(busy)), 50_000, 2, 3, 0.0, n_threads=1)
    assert rep.cst[:, 0, CS_POLICE].sum() / rep.cst[:, 0, CS_ARRIVALS].sum() == pytest.approx(0.5, abs=5e-3)


def test_a_trtcm_marker_colours_cbr_as_rfc_2698_says():
    """Colour-blind trTCM on CBR: green min(1, CIR/r), yellow min(1, PIR/r) - green, red the rest, by the
    precedences the packets reach the queue with."""
    scn = port([{"name": "d", "dscp": ["AF31", "AF32", "AF33"], "bandwidth": "100 %", "queue_limit": 1000,
                 "marker": {"kind": "trtcm", "cir": "1 Mbit/s", "cbs": 3000, "pir": "2 Mbit/s", "pbs": 3000},
                 "traffic": {"rate": "4 Mbit/s", "size": 500, "arrivals": "cbr"}}], rate="10 Mbit/s")
    rep = run_replications(config(port_of(scn)), 100_000, 2, 3, 0.0, n_threads=1)
    by_prec = rep.pst[:, 0, :, 0].sum(axis=0)
    assert by_prec / by_prec.sum() == pytest.approx(cbr_fractions("trtcm", 4e6, 1e6, 2e6), abs=2e-3)


def test_wred_without_averaging_is_the_instantaneous_chain():
    """WRED with alpha = 1 (the average is the queue), Poisson, exponential sizes, no ring: the per-precedence
    drops of the product-form chain (Takeo & Tasaka's P(avr) with Kleinrock's birth-death solution)."""
    th = {"AF11": {"min_th": 6, "max_th": 12, "P_d": 3}, "AF12": {"min_th": 3, "max_th": 9, "P_d": 3}}
    scn = port([{"name": "d", "dscp": ["AF11", "AF12"], "bandwidth": "100 %", "queue_limit": 14,
                 "dropper": {"mode": "wred", "alpha": 1.0, "thresholds": th},
                 "traffic": {"rate": "950 kbit/s", "size": "1000 B", "sizes": "exponential", "mix": [0.5, 0.5]}}])
    r = simulated(scn, packets=400_000, replications=6)
    prof = Profile(min_th=(6.0, 3.0, 3.0), max_th=(12.0, 9.0, 9.0), P_d=(3.0, 3.0, 3.0), alpha=1.0)
    lam = 0.95e6 / 8000 * np.array([0.5, 0.5, 0.0])
    sol = instantaneous(lam, 1e6 / 8000, 14, prof)
    assert within(r["d.drop.AF11"], sol.drop[0], 1.5)
    assert within(r["d.drop.AF12"], sol.drop[1], 1.5)


def test_on_off_sources_send_their_mean_rate():
    scn = port([{"name": "d", "dscp": ["AF11"], "bandwidth": "100 %", "queue_limit": 1000,
                 "traffic": {"rate": "2 Mbit/s", "size": 500, "arrivals": "on-off", "on": "2 ms", "off": "6 ms"}}],
               rate="20 Mbit/s")
    r = simulated(scn, packets=200_000, replications=6)
    assert within(r["d.throughput"], 2e6, 1.5)


def test_replications_are_seeded_and_do_not_depend_on_the_thread_count():
    scn = port([{"name": "v", "dscp": ["EF"], "priority": 1, "traffic": {"calls": 10, "call": {
                "rate": "80 kbit/s", "size": 200, "arrivals": "cbr"}}},
                {"name": "d", "dscp": ["AF11"], "bandwidth": "10 %", "traffic": {"rate": "300 kbit/s", "size": 500}},
                {"name": "class-default", "traffic": {"saturated": True, "size": 1500}}], txq={"units": 4})
    cfg = config(port_of(scn))
    a = run_replications(cfg, 20_000, 3, 5, n_threads=1)
    b = run_replications(cfg, 20_000, 3, 5, n_threads=2)
    c = run_replications(cfg, 20_000, 3, 6, n_threads=1)
    assert np.array_equal(a.cst, b.cst) and np.array_equal(a.hist, b.hist)
    assert not np.array_equal(a.cst, c.cst)
    assert len({tuple(a.cst[r, 0]) for r in range(3)}) == 3  # each replication its own phases and draws


def test_a_trace_holds_every_packet_once_in_the_port_s_order():
    """Every row is dropped or departs after it arrives; a class's packets leave in arrival order (its queue and
    the ring are FIFO); the line never serves two packets at once."""
    scn = port([{"name": "v", "dscp": ["EF"], "priority": 1, "queue_limit": 3,
                 "traffic": {"rate": "300 kbit/s", "size": 200}},
                {"name": "d", "dscp": ["AF11"], "bandwidth": "50 %", "queue_limit": 4,
                 "traffic": {"rate": "500 kbit/s", "size": 500}},
                {"name": "class-default", "traffic": {"saturated": True, "size": 1500}}], txq={"units": 3})
    tr = simulate_trace(config(port_of(scn)), 20_000, 4)
    assert len(tr["cls"]) == 20_000
    gone = ~tr["dropped"]
    assert np.all(tr["departure"][gone] >= tr["arrival"][gone]) and np.all(np.isnan(tr["departure"][~gone]))
    for c in (0, 1):
        sel = gone & (tr["cls"] == c)
        assert np.all(np.diff(tr["departure"][sel]) > 0)
    dep = np.sort(tr["departure"][gone])
    size = tr["size"][gone][np.argsort(tr["departure"][gone])]
    assert np.all(np.diff(dep) >= size[1:] * 8 / 1e6 * (1 - 1e-9))
    assert tr["dropped"][tr["cls"] == 0].any()  # a 3-packet queue overflows at 30 % load with bursts


def replay(port, tr):
    """The port's semantics written again, plainly, and run on the kernel's own arrivals (and the sizes its
    saturated classes drew): departure times and tail drops of every packet (no meters, no RED: nothing else is
    random). Times in seconds; a packet of L bytes is on the wire 8 L / C (8 L / C_line under a parent shaper,
    whose bucket of bc bytes refills at C and passes the scheduler's packet when it holds min(L, bc) bytes)."""
    from collections import deque

    C = port.rate
    C_line = port.line_rate or C
    bc = port.shaper_burst  # 0: no shaper
    shaper = {"tokens": bc, "at": 0.0, "next": float("inf")}
    Qt = port.Q_t
    cls = port.classes
    sat_sizes = {c.index: deque(tr["size"][tr["cls"] == c.index]) for c in cls if c.saturated}
    arrivals = deque(i for i in range(len(tr["cls"])) if not cls[tr["cls"][i]].saturated)
    queues = {c.index: deque() for c in cls}
    held = {c.index: 0 for c in cls}
    weighted = [c.index for c in port.weighted]
    quanta = dict(zip(weighted, port.quanta()))
    order = deque(i for i in weighted if cls[i].saturated)
    deficit = {i: 0.0 for i in weighted}
    started = {i: False for i in weighted}
    pend = {}
    ring, occ, head_start = deque(), 0, 0.0
    dep, drop, sat_times = {}, {}, {c.index: [] for c in cls if c.saturated}
    meters = {}

    def units(size):
        return port.units_of(size)

    def pick():
        for k in port.levels:
            heads = [(queues[c.index][0][1], c.index) for c in port.level(k) if queues[c.index]]
            if heads:
                return min(heads)[1]
        while order:
            i = order[0]
            if not started[i]:
                deficit[i] += quanta[i]
                started[i] = True
            if cls[i].saturated:
                if i not in pend:
                    if not sat_sizes[i]:  # the trace's end: the class stops (the kernel's drain)
                        order.popleft()
                        continue
                    pend[i] = sat_sizes[i].popleft()
                size = pend[i]
            else:
                size = tr["size"][queues[i][0][0]]
            if size <= deficit[i] + 1e-9:
                return i  # its deficit is charged once the packet enters the ring
            started[i] = False
            order.rotate(-1)
        return None

    def size_of(i):
        return pend[i] if cls[i].saturated else tr["size"][queues[i][0][0]]

    def shaper_passes(i, now):
        """The bucket holds the packet's tokens (then takes them), or the shaper waits until it will."""
        if not bc:
            return True
        size = size_of(i)
        need = min(size, bc)
        tokens = min(bc, shaper["tokens"] + (now - shaper["at"]) * C / 8)
        if tokens < need - 1e-6:
            shaper["next"] = now + 8 * (need - tokens) / C
            return False
        shaper["tokens"], shaper["at"] = max(tokens, need) - size, now
        return True

    def refill(now):
        nonlocal occ, head_start
        shaper["next"] = float("inf")
        while occ < Qt:
            i = pick()
            if i is None or not shaper_passes(i, now):
                return
            if i in weighted:
                deficit[i] -= size_of(i)
            if cls[i].saturated:
                size = pend.pop(i)
                row, arr = None, now
                sat_times[i].append(now)
            else:
                row, arr = queues[i].popleft()
                size = tr["size"][row]
                if port.ring is not None:
                    held[i] -= 1
                if i in weighted and not queues[i]:
                    order.popleft()
                    deficit[i], started[i] = 0.0, False
            if not ring:
                head_start = now
            ring.append((size, units(size), i, row))
            occ += units(size)

    refill(0.0)
    while arrivals or ring:
        t_dep = head_start + 8 * ring[0][0] / C_line if ring else float("inf")
        t_arr = tr["arrival"][arrivals[0]] if arrivals else float("inf")
        if shaper["next"] < t_dep and shaper["next"] < t_arr:  # the shaper releases the packet it held back
            refill(shaper["next"])
        elif t_dep <= t_arr + 1e-12 * t_arr:  # a departure first at one instant
            size, u, i, row = ring.popleft()
            occ -= u
            if row is not None:
                dep[row] = t_dep
                if port.ring is None:
                    held[i] -= 1
            head_start = t_dep
            refill(t_dep)
        else:
            row = arrivals.popleft()
            i = int(tr["cls"][row])
            pol = cls[i].police
            congested = occ >= Qt or shaper["next"] < float("inf")  # ring full, or the shaper holding back
            if pol is not None and (not pol.conditional or congested):  # metered only under congestion
                if i not in meters:
                    meters[i] = new_state(pol.kind, pol.cir, pol.cbs, pol.second_rate or pol.second_depth,
                                          pol.second_depth)
                colour = mark(meters[i], KINDS[pol.kind], t_arr, float(tr["size"][row]), 0, False)
                if pol.actions[colour] == "drop":
                    drop[row] = True
                    continue
            if held[i] >= cls[i].queue_limit:
                drop[row] = True
                continue
            if i in weighted and not queues[i] and i not in order:
                order.append(i)
                deficit[i], started[i] = 0.0, False
            queues[i].append((row, t_arr))
            held[i] += 1
            if occ < Qt:
                refill(t_arr)
        if not arrivals and all(not q for q in queues.values()) and all(r[3] is None for r in ring):
            break
    return dep, drop, sat_times


REPLAYED = [{"name": "a", "dscp": ["EF"], "priority": 1, "queue_limit": 3,
             "traffic": {"rate": "150 kbit/s", "size": 200, "arrivals": "poisson"}},
            {"name": "b", "dscp": ["CS5"], "priority": 1, "queue_limit": 2,
             "traffic": {"calls": 3, "call": {"rate": "40 kbit/s", "size": 120, "arrivals": "cbr"}}},
            {"name": "v", "dscp": ["AF41"], "priority": 2, "queue_limit": 4,
             "police": {"cir": "150 kbit/s", "cbs": "2600 B", "conditional": True},
             "traffic": {"rate": "200 kbit/s", "sizes": [{"size": 700, "p": 0.5}, {"size": 1300, "p": 0.5}]}},
            {"name": "d", "dscp": ["AF11"], "bandwidth": "40 %", "queue_limit": 5,
             "police": {"cir": "200 kbit/s", "cbs": "3000 B", "ebs": "1500 B"},
             "traffic": {"rate": "250 kbit/s", "sizes": [{"size": 64, "p": 0.5}, {"size": 1500, "p": 0.5}]}},
            {"name": "class-default", "bandwidth": "20 %",
             "traffic": {"saturated": True, "sizes": [{"size": 40, "p": 0.6}, {"size": 1000, "p": 0.4}]}}]


def assert_replayed(ring, shaper=None):
    """The kernel's trace of the REPLAYED port and the plain replay agree on every drop and departure."""
    extra = {"shaper": shaper} if shaper else {}
    scn = port(REPLAYED, rate="2 Mbit/s", txq=ring, scheduler={"quantum": "300 B"}, **extra)
    p = port_of(scn)
    tr = simulate_trace(config(p), 6000, 9)
    dep, drop, sat_times = replay(p, tr)
    rows = [i for i in range(len(tr["cls"])) if not p.classes[tr["cls"][i]].saturated]
    assert any(tr["dropped"][rows]) and not all(tr["dropped"][rows])
    end = tr["arrival"].max()  # compared up to the last generated packet (the drains differ after it)
    compared = 0
    for i in rows:
        assert bool(tr["dropped"][i]) == drop.get(i, False), i
        if not tr["dropped"][i] and tr["departure"][i] < end:
            assert dep[i] == pytest.approx(tr["departure"][i], rel=1e-9), i
            compared += 1
    assert compared > 1000
    # the saturated class's packets entered when the replay admits them
    got = tr["arrival"][tr["cls"] == 4]
    assert np.allclose(got[: len(sat_times[4])], sat_times[4][: len(got)], rtol=1e-9)
    return tr


@pytest.mark.parametrize("ring", [None, {"units": 6, "unit_size": "512 B"}, {"units": 3}])
def test_the_kernel_is_the_semantics_packet_by_packet(ring):
    """Two priority levels (two classes at the first), two weighted classes (one saturated), small queue
    limits, multi-unit packets, a conditional policer and an srTCM one: replaying the kernel's arrivals through
    the rules written plainly gives every departure time and every drop of the kernel's trace."""
    assert_replayed(ring)


@pytest.mark.parametrize("ring, shaper", [
    (None, {"bc": "4000 B", "interface_rate": "10 Mbit/s"}),
    ({"units": 6, "unit_size": "512 B"}, {"bc": "1000 B", "interface_rate": "5 Mbit/s"}),
    ({"units": 3}, {"tc": "2 ms"}),
])
def test_the_shaped_kernel_is_the_semantics_packet_by_packet(ring, shaper):
    """The same port under a parent shaper (a bucket above and below the largest packet -- 1000 B leaves it in
    debt after 1300 B and 1500 B packets --, an interface 5x and 2.5x faster than the shaper, or as fast as
    it): the kernel's trace is the plain replay's, packet by packet, and the shaper does hold packets back."""
    tr = assert_replayed(ring, shaper)
    # the shaped port's departures differ from the unshaped port's on the same seed
    plain = simulate_trace(config(port_of(port(REPLAYED, rate="2 Mbit/s", txq=ring,
                                                scheduler={"quantum": "300 B"}))), 6000, 9)
    assert not np.array_equal(np.nan_to_num(plain["departure"]), np.nan_to_num(tr["departure"]))


def test_every_replication_starts_with_full_meter_buckets_whatever_ran_before():
    """The meters' states are the kernel's to advance: each run gets its own copy. Before, the configuration's
    arrays were shared, so a second run of one seed started from the first run's drained buckets and parallel
    replications drained one bucket together -- the same seed gave other police drops."""
    scn = port([{"name": "voice", "dscp": ["EF"], "priority": 1,
                 "police": {"cir": "200 kbit/s", "cbs": "3000 B"},
                 "traffic": {"rate": "600 kbit/s", "size": "200 B", "arrivals": "poisson"}},
                {"name": "class-default", "bandwidth": "remaining 100 %",
                 "traffic": {"saturated": True, "sizes": [{"size": "1500 B", "p": 1}]}}])
    cfg = config(port_of(scn))
    before = (cfg.po_state.copy(), cfg.mk_state.copy())
    serial = [run_replications(cfg, 20_000, 4, seed=3, n_threads=1) for _ in range(2)]
    parallel = run_replications(cfg, 20_000, 4, seed=3, n_threads=4)
    police = [r.cst[:, 0, CS_POLICE] for r in (*serial, parallel)]
    assert police[0].sum() > 0
    assert np.array_equal(police[0], police[1]) and np.array_equal(police[0], police[2])
    assert np.array_equal(cfg.po_state, before[0]) and np.array_equal(cfg.mk_state, before[1])
