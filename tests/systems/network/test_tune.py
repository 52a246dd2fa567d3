"""``tune`` on a network: the parameters are addressed by the network's paths, the SLOs are the flows', and one
definition shared by several ports (a YAML anchor, ``&edge`` ... ``*edge``) is one parameter: setting it through
any of those ports sets it on every one -- "the same setting on every port at once"."""

from __future__ import annotations

import copy

import pytest

from qosbound.scenario import build, load
from qosbound.systems.network import network
from qosbound.systems.network.bounds import analyse
from qosbound.sweep.grid import set_param
from qosbound.tune import tune
from tests.helpers import example

EDGES = ("branch-a->core-1", "core-2->branch-b")


def _wan(shared_ring: bool) -> dict:
    """examples/network_wan.yaml with its delay-maximum SLO only (the closed forms judge it), the two 10 Mbit/s
    edge ports' rings (16 x 1500 B each) one shared mapping when ``shared_ring``, as a YAML anchor loads."""
    raw = copy.deepcopy(load(example("network_wan")).raw)
    raw["slos"] = [{"metric": "voip-ab.delay.max", "max": "80 ms"}]
    if shared_ring:
        ring = raw["ports"][EDGES[0]]["txq"]
        assert raw["ports"][EDGES[1]]["txq"] == ring
        raw["ports"][EDGES[1]]["txq"] = ring
    return raw


def _bound(raw: dict, units: dict) -> float:
    """voip-ab's end-to-end bound with the given ports' rings set explicitly, each on its own."""
    raw = copy.deepcopy(raw)
    for port, n in units.items():
        raw["ports"][port]["txq"] = dict(raw["ports"][port]["txq"], units=n)
    return analyse(network(build(raw))).flows["voip-ab"].best


def test_a_yaml_anchor_shared_by_ports_loads_as_one_mapping(tmp_path):
    """The loader keeps an anchor's aliases one object, and a parameter set through one port's path (a copy of
    the scenario, as sweep, admit and tune make) reaches the other."""
    f = tmp_path / "pair.yaml"
    f.write_text(
        "name: pair\nsystem: network\nports:\n"
        "  a->b: {link: {rate: 10 Mbit/s}, txq: &edge {units: 16, unit_size: 1500 B},\n"
        "         classes: [{name: voice, priority: 1, queue_limit: 32}, {name: class-default, bandwidth: remaining 100 %}]}\n"
        "  b->c: {link: {rate: 10 Mbit/s}, txq: *edge,\n"
        "         classes: [{name: voice, priority: 1, queue_limit: 32}, {name: class-default, bandwidth: remaining 100 %}]}\n"
        "flows:\n  - {name: v, class: voice, path: [a, b, c], traffic: {calls: 5, call: {rate: 80 kbit/s, size: 200 B,"
        " arrivals: cbr}}}\n"
        "slos:\n  - {metric: v.delay.max, max: 80 ms}\n")
    raw = load(str(f)).raw
    assert raw["ports"]["a->b"]["txq"] is raw["ports"]["b->c"]["txq"]
    out = set_param(raw, "ports.a->b.txq.units", 4)
    assert out["ports"]["b->c"]["txq"]["units"] == 4 and raw["ports"]["b->c"]["txq"]["units"] == 16
    net = network(build(out))
    assert [net.ports[p].ring.units for p in ("a->b", "b->c")] == [4, 4]


def test_tune_sets_a_shared_ring_on_every_port_and_judges_the_flows_slos():
    """Minimising voip-ab's bound over the edge ring through one port's path: the optimum (4 units, the least
    ring) has the bound of both edge rings at 4 units -- not of one alone -- and every evaluated point is judged
    on the flow's SLO."""
    scn = build(_wan(shared_ring=True))
    res = tune(scn, [f"ports.{EDGES[0]}.txq.units=4,8,16"], minimise="voip-ab.delay.max", method="closed-form")
    assert res.best is not None and res.best.values == (4,)
    both = _bound(scn.raw, {EDGES[0]: 4, EDGES[1]: 4})
    one = _bound(scn.raw, {EDGES[0]: 4})
    assert res.best.objective == pytest.approx(both, rel=1e-9)
    assert one > both + 1e-3  # the second edge's ring of 16 units still costs voip-ab there
    assert set(res.best.margins) == {"voip-ab.delay.max <= 80 ms"}


def test_tune_finds_the_largest_shared_ring_within_a_delay_slo():
    """Maximising the shared edge ring with voip-ab's bound at most 60 ms: the answer is the largest grid value
    whose bound (both rings set) is within 60 ms, and the next value is rejected by that SLO."""
    scn = build(_wan(shared_ring=True))
    grid = [8, 12, 16, 20, 24]
    res = tune(scn, [f"ports.{EDGES[0]}.txq.units={','.join(map(str, grid))}"],
               maximise=f"ports.{EDGES[0]}.txq.units", slos=["voip-ab.delay.max<=60 ms"], method="closed-form")
    bounds = {n: _bound(scn.raw, {EDGES[0]: n, EDGES[1]: n}) for n in grid}
    ok = [n for n in grid if bounds[n] <= 0.060]
    assert ok and len(ok) < len(grid), bounds  # the SLO cuts the grid
    assert res.best.values == (max(ok),)
    assert res.rejected and all("voip-ab.delay.max" in k for k in res.rejected)
