"""The port's closed forms per class (qosbound.systems.port.closed_form): what each result is, by kind, and
what it reduces to where it is exact."""

from __future__ import annotations

import pytest

from qosbound.analytic.red_queue import mm1k_distribution
from qosbound.results import Kind
from qosbound.scenario import build, load
from qosbound.systems.port.closed_form import allocation, closed_form, residual_rate, tail_profile
from qosbound.systems.port.elements import port_of
from tests.helpers import example


@pytest.fixture(scope="module")
def edge():
    port = port_of(load(example("port_edge1g")))
    return port, {r.metric: r for r in closed_form(port)}


def test_every_class_of_the_edge_port_is_answered(edge):
    """A bound on the delay of every class that is not saturated; Cobham's mean for the priority levels and
    eq. (7) for the top one; the DRR allocation and the AF queue for the weighted classes."""
    _, r = edge
    for c in ("voice", "video", "critical"):
        b = r[f"{c}.delay.max"]
        assert b.kind is Kind.UPPER_BOUND and b.bounds == (f"{c}.delay.p*", f"{c}.delay.mean")
    for c in ("voice", "video"):
        assert r[f"{c}.delay.cobham_mean"].kind is Kind.APPROXIMATION
        assert r[f"{c}.delay.cobham_mean"].estimates == f"{c}.delay.mean"
    assert r["voice.delay.worst_case_mean"].kind is Kind.UPPER_BOUND and "video.delay.worst_case_mean" not in r
    for m in ("critical.drop.AF31", "critical.drop.AF33", "critical.loss", "critical.delay.mean"):
        assert r[m].kind is Kind.APPROXIMATION and "priority levels" in r[m].interval.neglects
    assert "bulk.delay.max" not in r and "class-default.delay.max" not in r


def test_the_drr_allocation_shares_the_residual_link_by_weight(edge):
    """The link less the priority levels' long-run rates (32 + 200 Mbit/s), shared 20:10:10; the saturated
    classes split what critical leaves (max-min)."""
    port, r = edge
    assert residual_rate(port) == pytest.approx(1e9 - 32e6 - 200e6)
    assert r["critical.rate"].value == pytest.approx(0.5 * 768e6)
    assert r["bulk.rate"].value == pytest.approx(0.25 * 768e6)
    shares, thr, CW = allocation(port)
    assert thr == pytest.approx([150e6, 309e6, 309e6])
    assert r["bulk.throughput"].value == pytest.approx(309e6)


def test_the_ring_adds_its_time_to_a_weighted_class_s_mean(edge):
    """critical's mean delay is its queue's (at its residual DRR rate) plus the mean time in the 128-packet ring,
    about 0.6 ms: the simulated mean is 0.633 ms."""
    _, r = edge
    m = r["critical.delay.mean"]
    assert m.provenance["ring_term_s"] == pytest.approx(6.0e-4, rel=0.05)
    assert 5.9e-4 < m.value < 6.5e-4


def test_a_single_class_without_a_ring_is_exact():
    """One weighted class of Poisson traffic with exponential sizes, tail drop, no ring: the M/M/1/K numbers,
    labelled exact; the tail profile never drops below the limit."""
    scn = build({"name": "m", "system": "port", "link": {"rate": "1 Mbit/s"},
                 "classes": [{"name": "d", "dscp": ["AF11"], "bandwidth": "100 %", "queue_limit": 8,
                              "traffic": {"rate": "700 kbit/s", "size": "500 B", "sizes": "exponential"}}]})
    r = {x.metric: x for x in closed_form(port_of(scn))}
    assert r["d.loss"].kind is Kind.EXACT
    assert r["d.loss"].value == pytest.approx(mm1k_distribution(0.7, 8)[-1], rel=1e-12)
    p = tail_profile(8)
    assert p.prob(0, 7.0) == 0.0 and p.max_th[0] == 8.0


def test_a_policer_on_a_weighted_class_thins_its_queue_input():
    """CBR at 2 Mbit/s with a 1 Mbit/s two-colour policer dropping the excess: half the packets lost to the
    policer (RFC 2697's long run), the queue fed the other half."""
    scn = build({"name": "m", "system": "port", "link": {"rate": "10 Mbit/s"},
                 "classes": [{"name": "d", "dscp": ["AF11"], "bandwidth": "100 %",
                              "police": {"cir": "1 Mbit/s", "cbs": "3 kB"},
                              "traffic": {"rate": "2 Mbit/s", "size": "500 B", "arrivals": "cbr"}}]})
    r = {x.metric: x for x in closed_form(port_of(scn))}
    assert r["d.loss"].value == pytest.approx(0.5, rel=1e-9)
    assert r["d.throughput"].value == pytest.approx(1e6, rel=1e-6)


def _edge_raw():
    from qosbound.scenario import load_raw

    return load_raw(example("port_edge1g"))


def test_unpoliced_cbr_calls_at_the_top_level_get_the_cbr_loss_bound():
    """400 random-phase G.711 calls alone at the top level, with no policer: the derivation of
    qosbound.analytic.cbr_loss covers them (only they enter the ring while they have a packet queued), so the
    port reports voice.loss.cbr_bound, an upper bound on voice.loss."""
    raw = _edge_raw()
    del raw["classes"][0]["police"]
    r = {x.metric: x for x in closed_form(port_of(build(raw)))}
    b = r["voice.loss.cbr_bound"]
    assert b.kind is Kind.UPPER_BOUND and b.bounds == ("voice.loss",)
    assert 0.0 <= b.value <= 1.0 and b.provenance["calls"] == 400 and b.provenance["pq_cap"] == 64


def test_the_cbr_loss_bound_is_not_claimed_outside_its_derivation():
    """A policer on the calls (the shipped edge port), or a second class at the top level, takes the port
    outside the derivation: no bound is reported."""
    r = {x.metric for x in closed_form(port_of(load(example("port_edge1g"))))}
    assert "voice.loss.cbr_bound" not in r
    raw = _edge_raw()
    del raw["classes"][0]["police"]
    raw["classes"][1]["priority"] = 1
    raw["classes"][1].pop("police")
    raw["classes"][1]["traffic"] = {"rate": "2 Mbit/s", "size": "1200 B", "arrivals": "poisson"}
    r = {x.metric for x in closed_form(port_of(build(raw)))}
    assert not any(m.endswith("cbr_bound") for m in r)


def _reference():
    import importlib.util
    import json

    from tests.helpers import ROOT

    path = ROOT / "tests" / "data" / "port_closed_forms.py"
    spec = importlib.util.spec_from_file_location("port_closed_forms", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, json.loads(path.with_suffix(".json").read_text())


def test_the_closed_forms_give_the_recorded_numbers_digit_for_digit():
    """Every closed-form result of the shipped ports (and of every shipped pq_txq / af example as a port) is
    the number recorded in tests/data/port_closed_forms.json before the closed forms were made faster and the
    shaper added: same metrics, same values and intervals to the last bit, same kinds."""
    mod, ref = _reference()
    ports = mod.shipped_ports()
    assert sorted(ports) == sorted(ref["ports"])
    for name, raw in ports.items():
        got = mod.closed_forms(raw)
        assert [g["metric"] for g in got] == [r["metric"] for r in ref["ports"][name]], name
        for g, r in zip(got, ref["ports"][name]):
            assert (g["value"], g["low"], g["high"], g["kind"]) == (r["value"], r["low"], r["high"], r["kind"]), \
                (name, g["metric"])


def _llq(voice_rate: str, other: dict) -> dict:
    """Cisco's LLQ: voice under 'priority 2 Mbit/s' (a conditional policer) on a 10 Mbit/s port, and one other
    class."""
    return {"name": "llq", "system": "port", "link": {"rate": "10 Mbit/s"}, "txq": {"units": 8, "unit_size": "packet"},
            "classes": [{"name": "voice", "dscp": ["EF"], "priority": 1,
                         "police": {"cir": "2 Mbit/s", "cbs": "4000 B", "conditional": True},
                         "traffic": {"rate": voice_rate, "size": "200 B", "arrivals": "cbr"}},
                        {"name": "class-default", "bandwidth": "remaining 100 %", "traffic": other}]}


def test_a_conditional_policer_meters_always_on_a_port_a_saturated_class_keeps_congested():
    """Voice offered at 6 Mbit/s above its 2 Mbit/s LLQ policer, beside a saturated class: the port is congested
    at every arrival, so the policer holds voice to 2 Mbit/s and class-default gets the other 8 Mbit/s (the
    closed forms took voice at its offered 6 Mbit/s and gave class-default 4). The simulator, the real kernel,
    agrees: class-default's throughput and voice's policer loss (2/3)."""
    from qosbound.progress import QUIET
    from qosbound.systems import get_system

    raw = _llq("6 Mbit/s", {"saturated": True, "sizes": [{"size": "1500 B", "p": 1}]})
    port = port_of(build(raw))
    assert port.cls("voice").long_run_rate == pytest.approx(2e6)
    r = {x.metric: x for x in closed_form(port)}
    assert r["class-default.throughput"].value == pytest.approx(8e6, rel=1e-9)
    # the policer's loss, of its long-run colour fractions: one CBR stream of one size, exact
    assert r["voice.loss.police"].kind is Kind.EXACT and r["voice.loss.police"].value == pytest.approx(2 / 3)
    raw["methods"] = {"simulated": {"packets": 200000, "replications": 4, "seed": 5}}
    scn = build(raw)
    sim = {x.metric: x for x in get_system("port").evaluate(scn, ["simulated"], QUIET)}
    thr = sim["class-default.throughput"]
    assert thr.interval.low * 0.99 <= 8e6 <= thr.interval.high * 1.01
    assert sim["voice.loss.police"].value == pytest.approx(2 / 3, abs=0.01)


def test_a_conditional_policer_does_not_cap_a_port_that_is_not_always_congested():
    """With Poisson traffic below the link instead of a saturated class, the port is idle at times and the
    policer passes packets unmetered then: no cap is claimed (voice at its offered 3 Mbit/s)."""
    port = port_of(build(_llq("3 Mbit/s", {"rate": "5 Mbit/s", "size": "1500 B", "arrivals": "poisson"})))
    assert port.cls("voice").long_run_rate == pytest.approx(3e6)
    assert port.cls("voice").police.passed() is None
    assert "voice.loss.police" not in {x.metric for x in closed_form(port)}  # it may never meter: no claim


def test_priority_traffic_above_the_link_is_stable_under_a_conditional_policer_on_a_congested_port():
    """Voice offered at 12 Mbit/s on the 10 Mbit/s port: refused as unstable without a saturated class (the
    policer may never meter), accepted with one (the policer holds it to 2 Mbit/s)."""
    from qosbound.errors import ScenarioError

    port = port_of(build(_llq("12 Mbit/s", {"saturated": True, "sizes": [{"size": "1500 B", "p": 1}]})))
    assert port.cls("voice").long_run_rate == pytest.approx(2e6)
    with pytest.raises(ScenarioError, match="unstable"):
        build(_llq("12 Mbit/s", {"rate": "5 Mbit/s", "size": "1500 B", "arrivals": "poisson"}))


def test_many_calls_above_their_policer_get_a_lower_bound_on_its_loss_the_simulator_respects():
    """60 calls of 100 kbit/s (6 Mbit/s) under the 2 Mbit/s LLQ policer beside a saturated class: whatever their
    phases, at most 2 Mbit/s passes, so at least 2/3 of the packets (one size) are dropped -- a lower bound the
    simulator's estimate does not fall below; under the cap (15 calls) no claim is made."""
    from qosbound.progress import QUIET
    from qosbound.systems import get_system

    raw = _llq("1 Mbit/s", {"saturated": True, "sizes": [{"size": "1500 B", "p": 1}]})
    raw["classes"][0]["traffic"] = {"calls": 60, "call": {"rate": "100 kbit/s", "size": "200 B", "arrivals": "cbr"}}
    r = {x.metric: x for x in closed_form(port_of(build(raw)))}
    low = r["voice.loss.police"]
    assert low.kind is Kind.LOWER_BOUND and low.value == pytest.approx(2 / 3)
    raw["methods"] = {"simulated": {"packets": 200000, "replications": 4, "seed": 9}}
    sim = {x.metric: x for x in get_system("port").evaluate(build(raw), ["simulated"], QUIET)}
    assert sim["voice.loss.police"].interval.high >= low.value
    raw["classes"][0]["traffic"]["calls"] = 15
    assert "voice.loss.police" not in {x.metric for x in closed_form(port_of(build(raw)))}
