"""The dumbbell (qosbound.validation.dumbbell): its class queues (strict priority, deficit round robin by weight,
policing, flows in both directions, and the one-class case that must give the FIFO's results exactly); its open-loop
(UDP) sources and client chains (a CBR stream alone gets its rate and the base delay, a Poisson stream on an idle link
waits as M/D/1 says, on-off sources send their mean rate, sources share the class queues with TCP, chained flows
start one after another); its TFRC and gTFRC flows (with validation.tfrc_sender), the packet record, self-clocked
fair queueing between classes, and the loop's event economy."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from qosbound.analytic.tfrc import tfrc_rate
from qosbound.validation.dumbbell import Class, Dumbbell, Marker, Queue, Tfrc, Udp, replicate, simulate
from qosbound.validation.stats import two_sided_t

FOUR = dict(n=4, access=(0.005, 0.01, 0.02, 0.04), rwnd=64, duration=6.0, warmup=1.0)


@pytest.mark.parametrize("q", [Queue(limit=20), Queue.red(5, 15, 0.1), Queue.red(5, 15, 0.1, spacing="count")],
                         ids=["droptail", "red", "ns3-red"])
def test_one_class_is_the_fifo(q):
    """One class per direction (a scheduler with a single queue and departure events) gives exactly the
    numbers of the FIFO that computes departures at admission: same drops, goodput and ACKs per flow."""
    net = Dumbbell(fwd=q, **FOUR)
    a = simulate(net, 7)
    b = simulate(dataclasses.replace(net, fwd_classes=(Class("all", q),), rev_classes=(Class("acks", net.rev),)), 7)
    for k in ("goodput", "drops", "ack_sent", "timeouts", "cwnd_mean"):
        assert np.array_equal(getattr(a.flows, k), getattr(b.flows, k)), k
    assert a.flows.drops.sum() > 0 and b.classes[(0, 0)].drops == a.flows.drops.sum()


def test_strict_priority_starves_the_lower_class_under_overload():
    """A greedy flow in the priority class takes the whole link: the flow in the lower class gets nothing
    through (its few packets are dropped or wait forever). Police the priority class to 3 Mbit/s and the
    lower class gets the rest of the 10 Mbit/s."""
    classes = (Class("low", Queue(limit=50)), Class("high", Queue(limit=50), priority=1))
    net = Dumbbell(n=2, access=(0.01,), rwnd=64, duration=8.0, warmup=2.0, fwd_classes=classes, data_class=(0, 1))
    r = simulate(net, 1)
    assert r.flows.goodput[0] < 0.01 * r.flows.goodput[1] and r.classes[(0, 1)].rate > 0.95 * net.rate
    policed = dataclasses.replace(net, fwd_classes=(classes[0], dataclasses.replace(classes[1], police=1)),
                                  marker=(None, Marker("two-colour", 3e6, 15000)))
    r = simulate(policed, 1)
    assert r.classes[(0, 1)].drops > 0 and r.classes[(0, 1)].rate < 3.3e6
    assert r.classes[(0, 0)].rate > 0.6 * net.rate


@pytest.mark.parametrize("weights", [(3.0, 1.0), (1.0, 1.0, 2.0)])
def test_drr_shares_follow_the_weights_for_greedy_classes(weights):
    """Greedy flows in classes of one level share the link in proportion to the weights (within 2 %)."""
    k = len(weights)
    classes = tuple(Class(f"c{i}", Queue(limit=50), weight=w) for i, w in enumerate(weights))
    r = simulate(Dumbbell(n=k, access=(0.01,), rwnd=64, duration=8.0, warmup=2.0, fwd_classes=classes,
                          data_class=tuple(range(k))), 1)
    rates = np.array([r.classes[(0, i)].rate for i in range(k)])
    assert rates.sum() > 0.95 * 10e6
    assert np.allclose(rates / rates.sum(), np.array(weights) / sum(weights), atol=0.02)


def test_llq_with_cbwfq_serves_the_priority_class_then_shares_the_rest():
    """Cisco-style LLQ + CBWFQ: a policed priority class (1 Mbit/s) and two weighted classes (2:1). The priority
    class gets its policed rate; the weighted classes share what is left 2:1."""
    classes = (Class("voice", Queue(limit=20), priority=1, police=1), Class("af1", Queue(limit=50), weight=2),
               Class("be", Queue(limit=50), weight=1))
    r = simulate(Dumbbell(n=3, access=(0.01,), rwnd=64, duration=8.0, warmup=2.0, fwd_classes=classes,
                          data_class=(0, 1, 2), marker=(Marker("two-colour", 1e6, 5000),)), 2)
    v, a, b = (r.classes[(0, i)].rate for i in range(3))
    assert 0.8e6 < v < 1.1e6
    assert a / b == pytest.approx(2.0, rel=0.04) and v + a + b > 0.95 * 10e6


def test_flows_in_both_directions_share_a_class_queue_with_the_other_flows_acks():
    """A flow sending R2 -> R1 puts its data in the reverse classes and its ACKs in the forward ones: with both
    directions carrying data, ACKs of each direction meet the other's data in the same queue."""
    q = Queue(limit=30)
    r = simulate(Dumbbell(n=2, access=(0.01,), rwnd=64, duration=6.0, warmup=1.0, direction=(0, 1),
                          fwd_classes=(Class("f", q),), rev_classes=(Class("r", q),)), 3)
    assert (r.flows.goodput > 3e6).all()
    for d in (0, 1):
        # each direction carries one flow's data and the other's ACKs
        assert r.classes[(d, 0)].sent > 1.4 * r.flows.arrivals[d] - r.flows.drops[d]


def test_uplinks_pace_a_node_and_drop_when_full():
    """Two flows of one node behind a 2 Mbit/s uplink: together they get at most the uplink's payload rate (plus
    the 10 segments its buffer may hold when the window opens, over the 5-s window); a small uplink buffer drops
    segments."""
    net = Dumbbell(n=2, access=(0.01,), rwnd=64, duration=6.0, warmup=1.0, uplink_rate=2e6, uplink_of=(0, 0),
                   uplink_limit=10)
    r = simulate(net, 1)
    assert 0.8 * 2e6 < r.goodput <= 2e6 * 1460 / 1502 + 10 * 1460 * 8 / r.window
    assert r.flows.uplink_drops.sum() > 0


def test_bad_class_configuration_is_refused():
    with pytest.raises(ValueError):
        simulate(Dumbbell(n=2, fwd_classes=(Class("a"),), data_class=(0, 1)))
    with pytest.raises(ValueError):
        simulate(Dumbbell(n=1, fwd_classes=(Class("a", weight=0.0),)))
    with pytest.raises(ValueError):
        simulate(Dumbbell(n=1, direction=(2,)))


LINK = dict(rate=2e6, delay=0.01, duration=6.0, warmup=1.0)


def test_cbr_alone_gets_its_rate_and_the_base_delay():
    """64 kbit/s of 200-byte packets alone on 2 Mbit/s: every packet delivered, each after exactly its
    transmission time plus the link delay, no jitter, and the window's packets carry the source's rate."""
    r = simulate(Dumbbell(n=0, udp=(Udp("cbr", 64e3, 200, access=0.002),), **LINK), 1)
    u = r.udp[0]
    base = 8 * 200 / 2e6 + 0.01 + 0.002
    assert u.dropped == 0 and u.loss == 0.0 and u.sent - u.delivered == u.in_flight <= 1
    assert u.sent == pytest.approx(64e3 * 5.0 / 1600, abs=1)
    assert np.allclose(u.delays, base, atol=1e-12) and u.jitter < 1e-12
    assert u.throughput == pytest.approx(64e3, rel=0.01)


def test_poisson_on_an_idle_link_waits_as_md1():
    """Poisson packets of one size at load 0.6: the mean one-way delay is the M/D/1 (Pollaczek-Khinchine)
    wait rho D / (2 (1 - rho)) plus D plus the link delay, inside a 99 % t-interval of replications."""
    D = 8 * 1000 / 2e6
    rho = 0.6
    net = Dumbbell(n=0, udp=(Udp("poisson", rho * 2e6, 1000),), **dict(LINK, duration=11.0))
    means = [simulate(net, s).udp[0].mean_delay for s in range(1, 9)]
    m, se = np.mean(means), np.std(means, ddof=1) / math.sqrt(len(means))
    h = stats.t.ppf(0.995, len(means) - 1) * se
    expect = rho * D / (2 * (1 - rho)) + D + 0.01
    assert abs(m - expect) <= h, (m, h, expect)
    assert h < 0.1 * (expect - D - 0.01)  # the interval is tight enough to mean something


def test_onoff_sends_its_mean_rate_and_stops_on_time():
    """An on-off source (exponential on and off periods of 0.2 s, 1 Mbit/s peak, 8 ms between packets) sends
    1 + 1 / (exp(0.04) - 1) = 25.5 packets per 0.4 s cycle on average (an on period starts with a packet), 510
    kbit/s; 40 s hold about 100 cycles (5.6 % standard deviation). A CBR source with ``stop`` sends nothing
    after it."""
    r = simulate(Dumbbell(n=0, udp=(Udp("onoff", 1e6, 1000, on=0.2, off=0.2),
                                    Udp("cbr", 1e5, 500, start=2.0, stop=4.0)), **dict(LINK, duration=41.0)), 3)
    on, cbr = r.udp
    assert on.throughput == pytest.approx((1 + 1 / math.expm1(0.04)) * 8000 / 0.4, rel=0.15)
    assert cbr.sent == pytest.approx(2.0 * 1e5 / 4000, abs=1) and cbr.delivered == cbr.sent


def test_sources_share_the_class_queues_with_tcp():
    """A CBR stream in a priority class keeps the base delay and no loss beside greedy TCP flows in the lower
    class (one packet on the wire is all it waits for); put in the TCP flows' class instead, it waits behind
    their queue and loses packets to the full buffer."""
    classes = (Class("be", Queue(limit=30)), Class("ef", Queue(limit=30), priority=1))
    base = dict(n=3, access=(0.005,), rwnd=64, fwd_classes=classes, data_class=(0,), **LINK)
    hi = simulate(Dumbbell(udp=(Udp("cbr", 64e3, 200, cls=1),), **base), 2)
    lo = simulate(Dumbbell(udp=(Udp("cbr", 64e3, 200, cls=0),), **base), 2)
    tx = 8 * 1502 / 2e6
    assert hi.udp[0].loss == 0 and hi.udp[0].percentile(100) <= 0.01 + 8 * 200 / 2e6 + tx + 1e-9
    assert lo.udp[0].mean_delay > 0.01 + 10 * tx and lo.udp[0].dropped > 0
    assert hi.classes[(0, 1)].sent == hi.udp[0].sent - hi.udp[0].in_flight
    assert hi.goodput > 0.85 * 2e6


def test_chained_flows_start_when_the_previous_file_arrives():
    """Three files fetched one after another by one client: each starts when the previous one has arrived
    (no think time), so the starts + completions add up, and the last finishes after the sum of the three."""
    net = Dumbbell(n=3, files=(10, 20, 5), starts=(0.5, math.inf, math.inf), then=(1, 2, -1), access=(0.005,),
                   duration=5.0, warmup=0.0, rate=2e6, delay=0.01)
    r = simulate(net, 1)
    c = r.flows.completion
    assert np.isfinite(c).all() and (c > 2 * 0.015).all()
    alone = simulate(dataclasses.replace(net, n=1, files=(10,), starts=(0.5,), then=()), 1).flows.completion[0]
    assert c[0] == alone


#: One TFRC flow alone on a fast link with random loss (no queueing): only the loss and the path shape its rate.
LOSSY = dict(n=0, rate=100e6, delay=0.02, fwd=Queue(limit=10_000), rev=Queue(limit=10_000), duration=200.0,
             warmup=40.0)


def sending_rate(t):
    """Bit/s the TFRC sender put on the wire in the window."""
    return t.sent * 8.0 * 1000 / t.window


@pytest.mark.parametrize("feedback", ["receiver", "sender"])
def test_tfrc_converges_to_the_equation_at_its_own_loss_event_rate_and_rtt(feedback):
    """A single TFRC flow on a bottleneck with 2 % random loss sends at X_calc(s, R, p) of RFC 5348 evaluated at the
    loss event rate p and RTT R the run measured: the 95 % interval (Student t, 6 replications of 160 s) of the ratio
    sending rate / X_calc lies within 10 % of 1. The tolerance is the equation's own: it is a steady-state
    approximation, and the rate's oscillation around it (X is convex in p) keeps TFRC a few per cent below it (Floyd,
    Handley, Padhye & Widmer 2000 report the same); the interval itself is about +-0.5 %. The loss event rate lies
    below the packet loss rate (losses within one RTT are one event) but above half of it."""
    net = Dumbbell(loss=0.02, tfrc=(Tfrc(size=1000, feedback=feedback, access=0.01),), **LOSSY)
    runs = replicate(net, 6, 7)
    ratio = np.array([sending_rate(r.tfrc[0]) / (8 * float(tfrc_rate(1000, r.tfrc[0].rtt, r.tfrc[0].loss_event_rate)))
                      for r in runs])
    h = two_sided_t(0.95, len(ratio) - 1) * ratio.std(ddof=1) / math.sqrt(len(ratio))
    assert 0.9 <= ratio.mean() - h and ratio.mean() + h <= 1.1
    p = np.array([r.tfrc[0].loss_event_rate for r in runs])
    assert np.all((p > 0.01) & (p < 0.02))
    # the RTT estimate is the path's: 2 (access + delay) plus the packets' transmission times, no queueing here
    assert np.allclose([r.tfrc[0].rtt for r in runs], 0.06, rtol=0.01)


def test_gtfrc_holds_its_target_where_the_equation_gives_less():
    """At 5 % random loss X_calc is about 0.55 Mbit/s; gTFRC with g = 1.5 Mbit/s sends at g (within 1 %: X =
    max(X_calc, g) while 2 X_recv, about 1.9 g, does not bind) where plain TFRC stays at X_calc."""
    base = dict(LOSSY, rate=10e6, duration=100.0, warmup=20.0, loss=0.05)
    rates = {}
    for g in (0.0, 1.5e6):
        runs = replicate(Dumbbell(tfrc=(Tfrc(size=1000, target=g, access=0.01),), **base), 3, 2)
        rates[g] = np.array([sending_rate(r.tfrc[0]) for r in runs])
    assert np.all(np.abs(rates[1.5e6] / 1.5e6 - 1) < 0.01)
    assert np.all(rates[0.0] < 0.5 * 1.5e6)


def test_gtfrc_target_above_the_bottleneck_is_clamped_at_twice_the_receive_rate():
    """The clamp X = min(max(X_calc, g), 2 X_recv): with g = 20 Mbit/s through a 5 Mbit/s drop-tail bottleneck the
    receiver reports X_recv of about 5 Mbit/s, so the sender sends at about 2 X_recv = 10 Mbit/s (within 5 %), half
    of g, and half of it is dropped."""
    net = Dumbbell(n=0, rate=5e6, delay=0.02, fwd=Queue(limit=50), duration=60.0, warmup=20.0,
                   tfrc=(Tfrc(size=1000, target=20e6, access=0.01),))
    t = simulate(net, 1).tfrc[0]
    assert sending_rate(t) == pytest.approx(2 * 5e6, rel=0.05)
    assert t.throughput == pytest.approx(5e6, rel=0.01)
    assert t.dropped == pytest.approx(t.arrivals / 2, rel=0.05)


def test_feedback_is_a_packet_on_the_reverse_path():
    """Receiver feedback crosses the reverse bottleneck as a packet: losing half of the reverse path's packets halves
    the feedbacks the sender applies (within 15 %); the sender model sends none."""
    base = dict(LOSSY, rate=10e6, duration=100.0, warmup=20.0, loss=0.02)
    upd = {al: np.mean([r.tfrc[0].updates for r in replicate(
        Dumbbell(ack_loss=al, tfrc=(Tfrc(size=1000, access=0.01),), **base), 3, 3)]) for al in (0.0, 0.5)}
    assert upd[0.5] == pytest.approx(0.5 * upd[0.0], rel=0.15)
    whole = dict(base, warmup=0.0)  # the window is the whole run: every packet offered to a queue is counted
    for feedback in ("receiver", "sender"):
        r = simulate(Dumbbell(tfrc=(Tfrc(size=1000, access=0.01, feedback=feedback),), **whole), 3)
        extra = r.packets - r.tfrc[0].arrivals  # feedback packets offered to the reverse queue
        assert (extra > 0.8 * r.tfrc[0].updates) if feedback == "receiver" else (extra == 0)


def test_tfrc_and_tcp_share_a_red_bottleneck():
    """A TFRC flow and two TCP flows of the same RTT share a 10 Mbit/s RED bottleneck: the link stays busy, nothing is
    lost beyond it, and TFRC's throughput lies between half and 2.5 times a TCP flow's (RFC 5348's equation counts
    one packet per ACK where these TCP receivers delay their ACKs, which favours TFRC by up to sqrt(2))."""
    net = Dumbbell(n=2, rate=10e6, access=(0.01,), delay=0.01, fwd=Queue.red(10, 40, 0.1, limit=100), duration=60.0,
                   warmup=15.0, tfrc=(Tfrc(size=1502, access=0.01),))
    for r in replicate(net, 3, 4):
        tcp = r.flows.throughput * (1502 / 1460)
        total = tcp.sum() + r.tfrc[0].throughput
        assert 0.9 * 10e6 <= total <= 1.01 * 10e6
        assert 0.5 * tcp.mean() <= r.tfrc[0].throughput <= 2.5 * tcp.mean()


def test_packet_record_follows_each_packet():
    """The packet record (``trace``) holds every data packet of the traced sources in send order: send <= arrival at
    the queue (one access delay later) <= departure (FIFO: departures increase by at least one transmission time)
    <= arrival at the receiver (one link delay later); drops have no departure; the delivered count in the window
    matches the flow's statistics; the trace-schema table has the packets that reached the queue."""
    net = Dumbbell(n=1, rate=2e6, access=(0.01,), delay=0.02, fwd=Queue(limit=20), loss=0.01, duration=20.0,
                   warmup=5.0, tfrc=(Tfrc(size=1000, access=0.005),), trace=("*",))
    r = simulate(net, 5)
    tr = r.trace
    for name, acc in (("tcp0", 0.01), ("tfrc0", 0.005)):
        m = tr.of(name)
        assert m.sum() > 100 and np.all(np.diff(tr.sent[m]) >= 0)
        arr = tr.arrival[m]
        seen = np.isfinite(arr)
        assert np.allclose(arr[seen] - tr.sent[m][seen], acc)
        kept = seen & ~tr.dropped[m]
        assert np.all(np.isnan(tr.departure[m][tr.dropped[m]]))
        rx = tr.received[m][kept]
        done = np.isfinite(rx)
        assert np.allclose(rx[done] - tr.departure[m][kept][done], 0.02)
    kept = np.isfinite(tr.departure)
    order = np.argsort(tr.arrival[kept], kind="stable")
    assert np.all(np.diff(tr.departure[kept][order]) >= 8 * 1000 / 2e6 * (1 - 1e-9))
    t = r.tfrc[0]
    m = tr.of("tfrc0")
    assert np.count_nonzero((tr.received[m] >= 5.0) & (tr.received[m] <= 20.0)) == t.delivered
    table = tr.table()
    assert table.num_rows == np.isfinite(tr.arrival).sum()
    assert set(table["flow"].to_pylist()) == {"tcp0", "tfrc0"}
    with pytest.raises(ValueError, match="unknown sources"):
        simulate(dataclasses.replace(net, trace=("tcp7",)), 1)


@pytest.mark.parametrize("sharing", ["drr", "scfq"])
def test_weighted_classes_share_by_weight_under_both_disciplines(sharing):
    """Two backlogged classes of one level with weights 0.3 and 0.7 on a 1 Mbit/s link get 300 and 700 kbit/s (to
    0.1 %) by deficit round robin and by self-clocked fair queueing; a class alone takes the whole link
    (borrowing)."""
    cl = (Class("a", Queue(limit=50), weight=0.3), Class("b", Queue(limit=50), weight=0.7))
    base = dict(n=0, rate=1e6, delay=0.005, fwd_classes=cl, sharing=sharing, duration=30.0, warmup=5.0)
    r = simulate(Dumbbell(udp=(Udp("cbr", 1e6, 1500, cls=0), Udp("cbr", 1e6, 1500, cls=1)), **base), 1)
    assert r.classes[(0, 0)].rate == pytest.approx(300e3, rel=1e-3)
    assert r.classes[(0, 1)].rate == pytest.approx(700e3, rel=1e-3)
    alone = simulate(Dumbbell(udp=(Udp("cbr", 1e6, 1500, cls=0),), **base), 1)
    assert alone.classes[(0, 0)].rate == pytest.approx(1e6, rel=1e-3)


def test_bad_tfrc_flows():
    with pytest.raises(ValueError, match="feedback"):
        simulate(Dumbbell(n=0, tfrc=(Tfrc(feedback="oracle"),)))
    with pytest.raises(ValueError, match="size"):
        simulate(Dumbbell(n=0, tfrc=(Tfrc(size=0),)))
    with pytest.raises(ValueError, match="class"):
        simulate(Dumbbell(n=0, fwd_classes=(Class("a"),), tfrc=(Tfrc(cls=3),)))
    with pytest.raises(ValueError, match="marker"):
        simulate(Dumbbell(n=0, tfrc=(Tfrc(marker=2),)))
    with pytest.raises(ValueError, match="sharing"):
        simulate(Dumbbell(n=1, sharing="wfq"))


def test_a_data_segment_costs_two_events_and_an_ack_one():
    """The event economy of the TCP path (benchmarks/bench_tcp.py's dumbbell): every data segment is two heap events
    (its arrival at the queue and at the receiver), every ACK one (its arrival at the sender: the receiver hands it
    to its queue at once), the timers one pending event per flow: heap events stay below 2 per data segment plus
    1.2 per ACK (the engine before this one took 2 per ACK and one per delayed-ACK timer start: 2.3 per packet)."""
    net = Dumbbell(n=4, access=(0.005, 0.01, 0.02, 0.04), rwnd=64, duration=30.0, warmup=0.0,
                   fwd=Queue.red(5, 15, 0.1, spacing="count", uncounted=2), ssthresh_rule="ns3")
    r = simulate(net, 1)
    data, acks = r.flows.arrivals.sum(), r.flows.ack_sent.sum()
    assert data + acks <= r.packets
    assert r.events <= 2 * data + 1.2 * acks
