"""Tests for validation/ns3_runner.py: ns-3 against qosbound's simulator on matched scenarios (slow: ns-3 starts in ~10 s).

Matching the semantics. ns-3's point-to-point device queue counts packets; the
qosbound scenario is configured to ns-3's semantics for the comparison: a unit
size (1024 B) no smaller than the largest packet, so every packet is one unit,
and ``Q_t`` = device queue (5 packets) + 1 for the packet on the wire. ns-3's
device queue holds 5 waiting packets while a sixth is on the wire; qosbound's
transmission queue holds up to ``Q_t`` units including the one on the wire.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from qosbound.errors import EngineError, ScenarioError
from qosbound.scenario import build
from qosbound.systems.pq_txq import params
from qosbound.validation import ns3_runner
from qosbound.validation.compare import arrays, delays, ks_test, trace_results
from qosbound.validation.droppers import ewma_idle, ewma_update, red_drop_prob

needs_ns3 = pytest.mark.skipif(not ns3_runner.available(), reason="the ns3 wheel is not installed")

RAW = dict(name="ns3-match", system="pq_txq", link=dict(rate="2 Mbps"), txq=dict(units=6, unit_size="1024 B"),
           traffic=dict(EF=dict(rate="400 kbps", size="128 B", arrivals="poisson"), BE=dict(size="1024 B")),
           metrics=dict(ccdf_at=["10 ms"], quantiles=[0.99]))


def test_config_follows_scenario():
    """Q_t units of one packet each become a device queue of Q_t - 1 packets; multi-unit packets are refused."""
    cfg = ns3_runner.pq_config_from_params(params(build(RAW)))
    assert cfg.device_queue == 5 and cfg.pq_capacity == 10 and cfg.ef_size == 128
    raw = {**RAW, "txq": dict(units=5, unit_size="512 B")}  # 1024-byte BE packets span two units
    with pytest.raises(ScenarioError, match="unit_size"):
        ns3_runner.pq_config_from_params(params(build(raw)))


def test_send_schedule_rates():
    """CBR schedules are evenly spaced; Poisson schedules have the asked rate (within 5 standard deviations)."""
    rng = np.random.default_rng(1)
    c = ns3_runner.send_schedule(rng, 100.0, 10.0, "cbr")
    assert np.allclose(np.diff(c), 0.01)
    p = ns3_runner.send_schedule(rng, 100.0, 100.0, "poisson")
    assert abs(len(p) - 10_000) < 5 * math.sqrt(10_000)
    assert p.max() < 100.0


@pytest.mark.slow
@needs_ns3
def test_ns3_and_simulator_agree_on_ef_delay():
    """With matched semantics, ns-3 and qosbound's simulator give the same EF delay law: the KS test on
    thinned samples does not reject at 1 %, and the two means and losses agree within their combined
    99 % intervals (batch means); ns-3's mean, p99 and CCDF at 10 ms also agree with the Storm model
    (family-wise 1 %)."""
    from qosbound.progress import QUIET
    from qosbound.systems import pq_txq
    from qosbound.trace_verdicts import compare
    from qosbound.validation.pq_txq_sim import simulate_trace

    scn = build(RAW)
    p = params(scn)
    tn, info = ns3_runner.run_pq(ns3_runner.pq_config_from_params(p, duration=20.0, seed=5))
    assert info["ef_packets"] > 7000
    # the PhyTxEnd and queue-disc Drop trace sources account for every packet, and the receiver agrees
    assert info["max_rx_minus_txend"] == 0.0 and info["received_not_transmitted"] == 0
    assert info["drops_traced"] == int(tn.column("dropped").to_numpy(zero_copy_only=False).sum())
    tq = simulate_trace(p, 200_000, 11)
    an, aq = arrays(tn, 0.01), arrays(tq, 0.01)
    dn, dq = delays(an, "EF"), delays(aq, "EF")
    assert ks_test(dn, dq, thin=10).pvalue > 0.01
    # every delay respects the shared structural bound: 6 packets of 1500 B + 10 EF packets
    assert dn.max() <= (5 * 1024 + 1024 + 10 * 128) * 8 / 2e6 + 1e-9
    metrics = ["EF.delay.mean", "EF.delay.p99", "EF.delay.ccdf@10ms"]
    model = pq_txq.evaluate(scn, ["model-checked"], QUIET)
    verdicts = compare([r for r in model if r.metric in metrics], trace_results(an, metrics, "ns-3"))
    assert len(verdicts) == 3 and all(v.status == "agree" for v in verdicts), [v.detail for v in verdicts]
    for metric in ("EF.delay.mean", "EF.loss"):
        rn = trace_results(an, [metric], "ns-3")[0]
        rq = trace_results(aq, [metric], "simulated")[0]
        se = math.hypot(rn.provenance["std_error"], rq.provenance["std_error"])
        assert abs(rn.value - rq.value) <= 2.86 * se, (metric, rn.value, rq.value, se)


# --------------------------------------------------------------------------------------------- RED
#
# A minimal single-colour RED queue loop with ns-3's RedQueueDisc semantics (packet mode, gentle off,
# "Wait" on), used as qosbound's side of the comparison. Drop decisions and averages come from
# qosbound.validation.droppers; what ns-3 adds is written here:
# * the average sees only the queue disc: an arrival finds q = max(N - 2, 0) queued there, N packets in the
#   system (one on the wire and one in the 1-packet device queue are not counted);
# * after the queue disc was found empty at time s, an arrival at t first decays the average by
#   (1 - w)^m with m = floor(ptc*(t - s)), ptc = link packets per second (Floyd & Jacobson's idle rule);
#   ns-3 finds it empty when a departure leaves one packet in the system, or an arrival finds none;
# * early drops only when the queue disc holds more than one packet; the first arrival with the
#   average above min_th is never dropped; afterwards the probability p_b = red_drop_prob(avg) is
#   spread by the count of arrivals since the last drop ("wait" rule): 0 while count*p_b < 1,
#   p_b/(2 - count*p_b) while < 2, else 1;
# * at or above max_th every arrival is dropped.

@njit(cache=True)
def _red_loop(seed, lam, service, n, min_th, max_th, max_p, w, ptc):
    np.random.seed(seed)
    t = 0.0
    deps = np.zeros(n + 1)  # departure times of the packets in the system (FIFO ring)
    head = 0
    tail = 0
    avg = 0.0
    count = 0
    old = 0
    idle = 1
    idle_t = 0.0
    drops = 0
    last_dep = 0.0
    for _ in range(n):
        t += np.random.exponential(1.0 / lam)
        # departures before t; a departure leaving exactly one packet marks the queue disc found empty
        while head < tail and deps[head % (n + 1)] <= t:
            head += 1
            if tail - head == 1:
                idle = 1
                idle_t = deps[(head - 1) % (n + 1)]
        N = tail - head
        q = max(N - 2, 0)
        if idle == 1:
            m = math.floor(ptc * (t - idle_t))
            avg = ewma_idle(avg, w, m)
            idle = 0
        avg = ewma_update(avg, q, w)
        count += 1
        drop = False
        if avg >= min_th and q > 1:
            if avg >= max_th:
                drop = True
            elif old == 0:
                old = 1
                count = 1
            else:
                pb = red_drop_prob(avg, min_th, max_th, max_p, False)
                if count * pb < 1.0:
                    pa = 0.0
                elif count * pb < 2.0:
                    pa = pb / (2.0 - count * pb)
                else:
                    pa = 1.0
                if np.random.random() <= pa:
                    drop = True
                    count = 0
        else:
            old = 0
        if drop:
            drops += 1
            continue
        start = t if N == 0 else deps[(tail - 1) % (n + 1)]
        deps[tail % (n + 1)] = start + service
        tail += 1
        if N == 0:
            idle = 1
            idle_t = t
        last_dep = deps[(tail - 1) % (n + 1)]
    return drops / n, last_dep


def red_reference(cfg, packets, replications, seed):
    """Drop fraction of the RED loop over independent replications (mean, standard error)."""
    lam = cfg.load * cfg.rate / (8.0 * cfg.size)
    service = cfg.size * 8.0 / cfg.rate
    ptc = cfg.rate / (8.0 * cfg.size)
    seeds = np.random.SeedSequence(seed).generate_state(replications)
    x = np.array([_red_loop(int(s), lam, service, packets, cfg.min_th, cfg.max_th, cfg.max_p, cfg.weight, ptc)[0]
                  for s in seeds])
    return x.mean(), x.std(ddof=1) / math.sqrt(replications)


def test_red_loop_overload_conservation():
    """Under overload (load 1.5) the RED loop keeps the link busy: the drop fraction is 1 - 1/load within 2 %."""
    cfg = ns3_runner.RedConfig(rate=1e7, size=1000, load=1.5, min_th=5, max_th=15, max_p=0.1, weight=0.02)
    mean, _ = red_reference(cfg, 50_000, 4, 3)
    assert abs(mean - (1 - 1 / 1.5)) < 0.02


@pytest.mark.slow
@needs_ns3
def test_ns3_red_drop_rate_matches_loop():
    """ns-3's RedQueueDisc and the documented RED loop drop the same fraction of a Poisson flow at
    load 0.95 (difference within 3.5 combined standard errors: batch means for ns-3, replications for the loop)."""
    cfg = ns3_runner.RedConfig(rate=1e7, size=1000, load=0.95, min_th=3, max_th=12, max_p=0.1, weight=0.02,
                               duration=40.0, seed=4)
    tn, info = ns3_runner.run_red(cfg)
    rn = trace_results(arrays(tn, 0.01), ["AF1.drop"], "ns-3")[0]
    mean, se = red_reference(cfg, 50_000, 8, 9)
    assert rn.value > 0.005  # RED is active in this regime
    both = math.hypot(rn.provenance["std_error"], se)
    assert abs(rn.value - mean) <= 3.5 * both, (rn.value, mean, both)


@pytest.mark.slow
@needs_ns3
def test_ns3_fatal_error_becomes_engine_error():
    """A configuration ns-3 rejects fatally kills only the child process and surfaces as EngineError."""
    cfg = ns3_runner.RedConfig(rate=1e7, size=1000, load=0.5, min_th=20, max_th=10, max_p=0.1, weight=0.02,
                               duration=0.1)
    with pytest.raises(EngineError, match="ns-3"):
        ns3_runner.run_red(cfg)
