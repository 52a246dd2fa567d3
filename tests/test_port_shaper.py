"""A parent shaper on a port (``shaper``): the closed-form bounds take it as a rate-latency server -- the port at
the shaper's rate with its burst Bc added to the ring's work (qosbound.analytic.port, the shaper) --, the
schema checks its rate and burst, and the methods that do not model it refuse it naming its configuration
line."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest
import sympy as sp
import yaml

from qosbound.analytic import port as nc
from qosbound.configs import load_configs
from qosbound.errors import ScenarioError
from qosbound.progress import QUIET
from qosbound.scenario import build, load_raw
from qosbound.systems import get_system
from qosbound.systems.port.bounds import class_bounds
from qosbound.systems.port.elements import port_of
from tests.helpers import ROOT, example

PORT = get_system("port")


def _edge(shaper: dict | None = None) -> dict:
    raw = copy.deepcopy(load_raw(example("port_edge1g")))
    if shaper is not None:
        raw["shaper"] = shaper
    return raw


def test_a_shaped_port_is_the_residual_of_a_rate_latency_server_symbolically():
    """Theorem 6.2.1 of Le Boudec & Thiran on the strict curve (C, T_0), T_0 = 8 V_S / C: the level's latency
    (C T_0 + 8 sigma_H) / (C - rho_H) is level_latency_expr with V_S = V + b_S for V."""
    T0 = 8 * nc.shaped_work_expr / nc.C
    residual = (nc.C * T0 + 8 * nc.sigma_H) / (nc.C - nc.rho_H)
    assert sp.simplify(residual - nc.level_latency_expr.subs(nc.V, nc.shaped_work_expr)) == 0


def test_the_shaper_s_burst_adds_its_interval_at_each_class_s_residual_rate():
    """Bc = 10 kB at 1 Gbit/s: every priority level's bound grows by exactly 8 Bc / (C - rho_H), every weighted
    class's by 8 Bc / R_W (its DRR latency is the aggregate's plus its round), nothing else changes."""
    port = port_of(build(_edge()))
    plain = class_bounds(port)
    shaped = class_bounds(port_of(build(_edge({"rate": "1 Gbit/s", "bc": "10 kB"}))))
    bc = 10_000.0
    RW = port.rate - sum(c.arrival_curve().long_term().rate for c in port.active if c.priority is not None)
    assert plain.keys() == shaped.keys()
    for name, b in plain.items():
        s = shaped[name]
        if b.service is None:
            assert s.service is None
            continue
        R = RW if port.cls(name).priority is None else b.service.rate
        assert s.delay - b.delay == pytest.approx(8.0 * bc / R, rel=1e-9), name
        assert s.parts["shaper"] == pytest.approx(8.0 * bc / R, rel=1e-12), name
        assert s.service.rate == b.service.rate


def test_tc_alone_gives_the_burst_rate_times_tc():
    a = class_bounds(port_of(build(_edge({"bc": "125000 B"}))))
    b = class_bounds(port_of(build(_edge({"tc": "1 ms"}))))
    assert {k: v.delay for k, v in a.items()} == {k: v.delay for k, v in b.items()}


@pytest.mark.parametrize("shaper, field, words", [
    ({"rate": "500 Mbit/s", "bc": "10 kB"}, "shaper.rate", "differs from link.rate"),
    ({"rate": "1 Gbit/s"}, "shaper", "give the shaper's burst"),
    ({"bc": "125000 B", "tc": "4 ms"}, "shaper.tc", "not tc"),
    ({"bc": "0 B"}, "shaper.bc", "shaper burst"),
])
def test_a_shaper_that_does_not_fit_the_port_is_refused_naming_its_field(shaper, field, words):
    with pytest.raises(ScenarioError, match=words) as e:
        build(_edge(shaper))
    assert e.value.field == field


def test_a_shaped_port_runs_the_closed_forms_and_the_simulator_refuses_it_naming_the_line():
    """The default methods of a shaped port are the closed forms only; asked by name, the simulator and model
    checking refuse it with the configuration line of the shaper (from the scenario's provenance)."""
    raw = _edge({"rate": "1 Gbit/s", "bc": "10 kB"})
    raw["provenance"] = {"shaper.rate": "edge.cfg:12"}
    scn = build(raw)
    assert PORT.default_methods(scn) == ["closed-form"]
    assert PORT.evaluate(scn, ["closed-form"], QUIET)
    for method, who in (("simulated", "the simulator"), ("model-checked", "model checking")):
        with pytest.raises(ScenarioError, match=f"{who} does not model a parent shaper \\(configured at "
                                                "edge.cfg:12\\)") as e:
            PORT.evaluate(scn, [method], QUIET)
        assert e.value.field == "shaper"


def test_the_approximations_of_a_shaped_port_say_they_neglect_its_bursts():
    """Cobham's mean and the weighted queues are served steadily at the shaper's rate: labelled; Ferrari's eq. (7)
    (proved only at line rate) is not given."""
    res = PORT.evaluate(build(_edge({"rate": "1 Gbit/s", "bc": "10 kB"})), ["closed-form"], QUIET)
    names = {r.metric for r in res}
    assert "voice.delay.worst_case_mean" not in names and "voice.delay.max" in names
    approx = [r for r in res if r.interval.kind == "approximation" and r.metric.endswith(("cobham_mean", "drop.AF31"))]
    assert approx and all("parent shaper's bursts" in r.interval.neglects for r in approx)


def test_the_imported_branch_port_bounds_voice_with_the_shaper_s_25_ms_interval():
    """branch-iosxe.cfg shapes to 100 Mbit/s with IOS's default Tc = 25 ms (Bc = 312500 B): the voice bound's
    decomposition carries 8 Bc / C = 25 ms for the shaper, and the import notes what models it."""
    [p] = load_configs([ROOT / "examples" / "configs" / "branch-iosxe.cfg"])
    doc = p.document()
    assert doc["shaper"] == {"rate": "100 Mbit/s", "bc": "312500 B", "tc": "25 ms"}
    assert p.provenance["shaper.rate"].startswith("examples/configs/branch-iosxe.cfg:") or \
        "branch-iosxe.cfg:" in p.provenance["shaper.rate"]
    assert any("parent shaper" in n["item"] and "closed-form bounds" in n["effect"] for n in doc["not_modelled"])
    b = class_bounds(port_of(build(doc)))
    assert b["VOICE"].parts["shaper"] == pytest.approx(0.025, rel=1e-12)


def test_plan_on_a_shaped_tc_port_prints_its_interval_in_ms(tmp_path):
    """tbf rate 18mbit burst 32k: Tc = 8 x 32768 B / 18 Mbit/s, written in ms (a bug once wrote it in ns)."""
    [p] = load_configs([ROOT / "examples" / "configs" / "home-prio-tbf.sh"],
                       ROOT / "examples" / "configs" / "traffic" / "home-prio-tbf.yaml")
    assert p.document()["shaper"]["tc"] == "14.5635555556 ms"
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump(p.document(), sort_keys=False))
    proc = subprocess.run([sys.executable, "-m", "qosbound", "plan", str(f), "--json"], capture_output=True,
                          text=True, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    methods = {r["method"] for r in json.loads(proc.stdout)["metrics"]}
    assert methods == {"closed-form"}


def test_a_wred_curve_above_the_queue_limit_is_clipped_alike_by_the_closed_form_and_storm():
    """max_th = 40 over a queue of 20 packets (instantaneous average): Storm's chain and the closed form solve the
    same clipped birth-death chain -- the per-precedence drops agree to the engine's precision."""
    raw = {"name": "clip", "system": "port", "link": {"rate": "10 Mbit/s"},
           "classes": [{"name": "AF1.x", "dscp": ["AF11", "AF12"], "bandwidth": "100 %", "queue_limit": 20,
                        "dropper": {"mode": "wred", "exponent": 1,
                                    "thresholds": {"AF11": {"min_th": 10, "max_th": 40, "P_d": 10},
                                                   "AF12": {"min_th": 5, "max_th": 30, "P_d": 10}}},
                        "traffic": {"rate": "9 Mbit/s", "size": "1000 B", "sizes": "exponential",
                                    "arrivals": "poisson", "mix": [0.5, 0.5]}}],
           "methods": {"closed-form": {"approximation": "instantaneous"},
                       "model-checked": {"average": "instantaneous"}}}
    res = PORT.evaluate(build(raw), ["closed-form", "model-checked"], QUIET)
    got = {(r.metric, r.method): r.value for r in res if ".drop." in r.metric}
    for p in ("AF11", "AF12"):
        cf, mc = got[(f"AF1.x.drop.{p}", "closed-form")], got[(f"AF1.x.drop.{p}", "model-checked")]
        assert 0 < cf < 1 and mc == pytest.approx(cf, abs=1e-5)
    assert got[("AF1.x.drop.AF12", "closed-form")] > got[("AF1.x.drop.AF11", "closed-form")]
