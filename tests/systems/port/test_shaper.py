"""A parent shaper on a port (``shaper``): the closed-form bounds take it as a rate-latency server -- the port at
the shaper's rate with its burst Bc added to the ring's work (qosbound.analytic.port, the shaper) --, the
simulator as a token bucket of depth Bc refilled at the shaper's rate gating the scheduler's output towards a
ring drained at the interface's rate (qosbound.validation.port_kernels), every bound lies above the simulated
delays, the schema checks the shaper's rate and burst, and the methods that do not model it refuse it naming
its configuration line and the reason."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import numpy as np
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
from qosbound.systems.port.closed_form import (HOLD_NEGLIGIBLE, approximation_view, paced_ring_term,
                                               shaper_hold_probability)
from qosbound.systems.port.elements import port_of
from qosbound.systems.port.simulated import config
from qosbound.validation.port_kernels import CS_BITS, CS_DELIVERED, CS_MAX, G_WINDOW
from qosbound.validation.port_sim import run_replications, simulate_trace
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


def test_a_shaped_port_runs_the_closed_forms_and_the_simulator_and_model_checking_refuses_it_naming_the_line():
    """The default methods of a shaped port are the closed forms and the simulator; asked by name, model checking
    and ns-3 refuse it with the configuration line of the shaper (from the scenario's provenance) and what they
    lack."""
    raw = _edge({"rate": "1 Gbit/s", "bc": "10 kB"})
    raw["provenance"] = {"shaper.rate": "edge.cfg:12"}
    raw["methods"] = {"simulated": {"packets": 20_000, "replications": 2}}
    scn = build(raw)
    assert PORT.default_methods(scn) == ["closed-form", "simulated"]
    assert {r.method for r in PORT.evaluate(scn, ["closed-form", "simulated"], QUIET)} == {"closed-form", "simulated"}
    with pytest.raises(ScenarioError, match="model checking does not model a parent shaper \\(configured at "
                                            "edge.cfg:12\\): the chains have no state for the shaper's bucket") as e:
        PORT.evaluate(scn, ["model-checked"], QUIET)
    assert e.value.field == "shaper"
    with pytest.raises(ScenarioError, match="ns-3 does not model a parent shaper \\(configured at edge.cfg:12\\): "
                                            "the ns-3 runner builds pq_txq's PrioQueueDisc") as e:
        PORT.ns3_trace(scn, 1000)
    assert e.value.field == "shaper"


def test_an_interface_slower_than_its_shaper_is_refused():
    with pytest.raises(ScenarioError, match="below the shaper's") as e:
        build(_edge({"bc": "10 kB", "interface_rate": "100 Mbit/s"}))
    assert e.value.field == "shaper.interface_rate"


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
    decomposition carries 8 Bc / C = 25 ms for the shaper, the ring drains at the interface's 1 Gbit/s, and the
    import notes what models it."""
    [p] = load_configs([ROOT / "examples" / "configs" / "branch-iosxe.cfg"])
    doc = p.document()
    assert doc["shaper"] == {"rate": "100 Mbit/s", "bc": "312500 B", "tc": "25 ms", "interface_rate": "1 Gbit/s"}
    assert "branch-iosxe.cfg:" in p.provenance["shaper.interface_rate"]
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
    proc = subprocess.run([sys.executable, "-m", "qosbound", "plan", str(f), "--json", "--methods", "closed-form"],
                          capture_output=True, text=True, cwd=str(ROOT))
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


def _saturated(shaper: dict, txq: dict | None = None, classes: int = 1) -> object:
    """``classes`` saturated classes of 1500 B packets under a shaper on a 10 Mbit/s port."""
    names = ["class-default"] + [f"bulk{i}" for i in range(1, classes)]
    raw = {"name": "sat", "system": "port", "link": {"rate": "10 Mbit/s"}, "shaper": shaper,
           "classes": [{"name": n, "bandwidth": f"{100 / classes:g} %", "dscp": ["DF"] if i == 0 else [f"CS{i}"],
                        "traffic": {"saturated": True, "size": "1500 B"}} for i, n in enumerate(names)]}
    if txq:
        raw["txq"] = txq
    return port_of(build(raw))


@pytest.mark.parametrize("bc, txq", [(15_000, {"units": 8}), (1_000, None), (100_000, {"units": 128})])
def test_a_saturated_shaped_port_sends_at_the_shaper_s_rate(bc, txq):
    """Two saturated classes under a 10 Mbit/s shaper on a 100 Mbit/s interface: the bits that leave in the
    counted window are the shaper's rate times the window to within one bucket and one ring (8 (bc + V) bits:
    what the bucket and the ring can hold at the window's ends), not the interface's ten times more."""
    port = _saturated({"bc": f"{bc} B", "interface_rate": "100 Mbit/s"}, txq, classes=2)
    rep = run_replications(config(port), 30_000, 2, 5, 0.0, n_threads=1)
    V = 1500.0 * (txq["units"] if txq else 1)
    for r in range(2):
        W = rep.gst[r, G_WINDOW]
        bits = rep.cst[r, :, CS_BITS].sum()
        assert W > 30.0  # s: 30,000 packets at 10 Mbit/s
        assert abs(bits - 10e6 * W) <= 8.0 * (bc + V + 1500.0), (bits / W, W)


def test_a_burst_of_bc_leaves_at_the_interface_s_rate_then_the_shaper_s_rate_holds():
    """A full bucket of 15,000 B passes ten 1500 B packets at once into an 8-packet ring: they leave 0.12 ms apart
    (1500 B at 100 Mbit/s), and so does an eleventh, whose tokens the bucket gathers while they are on the wire
    (1.2 ms); from then on one packet per 1.2 ms, the shaper's 10 Mbit/s."""
    port = _saturated({"bc": "15000 B", "interface_rate": "100 Mbit/s"}, {"units": 8})
    dep = np.sort(simulate_trace(config(port), 60, 1)["departure"])
    wire, gap = 8 * 1500 / 100e6, 8 * 1500 / 10e6
    assert dep[:11] == pytest.approx(wire * np.arange(1, 12), rel=1e-12)
    assert np.diff(dep[10:50]) == pytest.approx(np.full(39, gap), rel=1e-9)


@pytest.mark.parametrize("shaper, txq", [
    ({"bc": "3000 B", "interface_rate": "1 Gbit/s"}, {"units": 16}),
    ({"bc": "64 kB", "interface_rate": "40 Mbit/s"}, {"units": 6, "unit_size": "512 B"}),
    ({"bc": "900 B", "interface_rate": "10 Mbit/s"}, None),
])
def test_what_leaves_a_shaped_port_fits_the_shaper_s_token_bucket(shaper, txq):
    """Priority Poisson and CBR traffic, a Poisson weighted class and a saturated one of mixed sizes: from any
    packet's first bit on the wire to a later packet's last bit, the bytes sent are at most max(bc, L_max) + rate x
    that time (the ring holds no more than the bucket lacks, as it drains at least as fast as the bucket fills),
    and a full bucket's burst comes within one packet of that envelope."""
    raw = {"name": "env", "system": "port", "link": {"rate": "10 Mbit/s"}, "shaper": shaper,
           "classes": [{"name": "v", "dscp": ["EF"], "priority": 1, "police": {"cir": "2 Mbit/s", "cbs": "6 kB"},
                        "traffic": {"rate": "1.5 Mbit/s", "size": "200 B"}},
                       {"name": "w", "dscp": ["AF41"], "priority": 2,
                        "traffic": {"calls": 5, "call": {"rate": "200 kbit/s", "size": "1000 B", "arrivals": "cbr"}}},
                       {"name": "d", "dscp": ["AF11"], "bandwidth": "30 %",
                        "traffic": {"rate": "3 Mbit/s", "sizes": [{"size": 64, "p": 0.5}, {"size": 1500, "p": 0.5}]}},
                       {"name": "class-default", "bandwidth": "30 %",
                        "traffic": {"saturated": True, "sizes": [{"size": 40, "p": 0.3}, {"size": 1200, "p": 0.7}]}}]}
    if txq:
        raw["txq"] = txq
    port = port_of(build(raw))
    tr = simulate_trace(config(port), 20_000, 3)
    gone = ~tr["dropped"] & np.isfinite(tr["departure"])
    order = np.argsort(tr["departure"][gone], kind="stable")
    d = tr["departure"][gone][order]
    size = tr["size"][gone][order]
    S = np.cumsum(size)
    rate = 10e6 / 8  # bytes per second
    first = d - 8.0 * size / port.line_rate  # each packet's first bit on the wire
    F = S - rate * d  # the bytes through packet j less the rate's allowance up to its last bit
    G = (S - size) - rate * first  # the bytes before packet i less the allowance up to its first bit
    excess = np.max(F - np.minimum.accumulate(G))  # the most any [first_i, d_j] carries above rate x length
    cap = max(port.shaper_burst, 1500.0)
    assert excess <= cap * (1 + 1e-9)
    assert excess >= port.shaper_burst - 1500.0


def _adversarial(kind: str) -> dict:
    """Shaped ports built to reach their bounds: EF calls all in phase at their policer's rate (or Poisson at its
    CIR with a deep bucket), a policed CBR level 2, saturated best effort that keeps the ring full, small and large
    buckets, an interval given as tc, interfaces as fast as the shaper and a hundred times faster."""
    calls = {"streams": [{"rate": "80 kbit/s", "size": "200 B", "arrivals": "cbr", "phase": "0.3 ms"}] * 20}
    voice = {"name": "voice", "dscp": ["EF"], "priority": 1, "queue_limit": 40,
             "police": {"cir": "1.6 Mbit/s", "cbs": "4000 B"}, "traffic": calls}
    video = {"name": "video", "dscp": ["AF41"], "priority": 2, "queue_limit": 30,
             "police": {"cir": "2 Mbit/s", "cbs": "12 kB"}, "traffic": {"rate": "2 Mbit/s", "size": "1200 B",
                                                                       "arrivals": "cbr"}}
    data = {"name": "data", "dscp": ["AF21"], "bandwidth": "40 %", "queue_limit": 20,
            "traffic": {"rate": "2.5 Mbit/s", "sizes": [{"size": 64, "p": 0.5}, {"size": 1500, "p": 0.5}]}}
    be = {"name": "class-default", "bandwidth": "20 %", "traffic": {"saturated": True, "size": "1500 B"}}
    raw = {"name": kind, "system": "port", "link": {"rate": "10 Mbit/s"}, "txq": {"units": 16},
           "classes": [voice, video, data, be]}
    if kind == "large bucket, fast interface":
        raw["shaper"] = {"bc": "100 kB", "interface_rate": "1 Gbit/s"}
    elif kind == "large bucket, interface at the shaper's rate":
        raw["shaper"] = {"bc": "100 kB"}
    elif kind == "bucket below a packet":
        raw["shaper"] = {"bc": "200 B", "interface_rate": "100 Mbit/s"}
    elif kind == "tc, ring in units":
        raw["shaper"] = {"tc": "5 ms", "interface_rate": "20 Mbit/s"}
        raw["txq"] = {"units": 24, "unit_size": "512 B"}
    elif kind == "Poisson EF at its policer, no ring":
        raw["shaper"] = {"bc": "1500 B", "interface_rate": "100 Mbit/s"}
        voice["traffic"] = {"rate": "1.6 Mbit/s", "size": "200 B"}
        voice["police"]["cbs"] = "30 kB"
        del raw["txq"]
    return raw


@pytest.mark.parametrize("kind", ["large bucket, fast interface", "large bucket, interface at the shaper's rate",
                                  "bucket below a packet", "tc, ring in units", "Poisson EF at its policer, no ring"])
def test_every_bound_of_a_shaped_port_is_above_its_simulated_maximum(kind):
    """On adversarial shaped ports every class's closed-form bound (priority levels and the weighted class) lies
    at or above the largest delay the simulator sees for it."""
    port = port_of(build(_adversarial(kind)))
    bounds = class_bounds(port)
    rep = run_replications(config(port), 100_000, 2, 17, 0.0, n_threads=1)
    checked = []
    for c in port.active:
        if c.saturated:
            continue
        assert np.isfinite(bounds[c.name].delay), c.name
        assert rep.cst[:, c.index, CS_DELIVERED].sum() > 0
        worst = float(rep.cst[:, c.index, CS_MAX].max())
        assert worst <= bounds[c.name].delay * (1 + 1e-12), (c.name, worst, bounds[c.name].delay)
        checked.append(c.name)
    assert checked == ["voice", "video", "data"]


def test_an_imported_shaped_cisco_port_is_planned_by_the_closed_forms_and_the_simulator():
    """branch-iosxe.cfg: `shape average 100000000` over the child policy WAN-CHILD, on the command line as written:
    both methods answer every class, each priority level's simulated maximum lies under its bound, and the
    saturated classes share the shaper's 100 Mbit/s (the priority classes' 30 Mbit/s at their policers and
    the rest), not the interface's 1 Gbit/s."""
    proc = subprocess.run([sys.executable, "-m", "qosbound", "plan", "examples/configs/branch-iosxe.cfg", "--methods",
                           "closed-form,simulated", "--json", "--quiet"], capture_output=True, text=True,
                          cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    got = {(m["metric"], m["method"]): m["value"] for m in json.loads(proc.stdout)["metrics"]}
    for cls in ("VOICE", "VIDEO"):
        assert 0 < got[(f"{cls}.delay.max", "simulated")] <= got[(f"{cls}.delay.max", "closed-form")]
        # Cobham's mean with the ring paced by the shaper (closed_form.paced_ring_term): within 10 % of the
        # simulated mean (the ring taken full at the shaper's rate gave 15 ms against 0.08 ms)
        assert got[(f"{cls}.delay.cobham_mean", "closed-form")] == \
            pytest.approx(got[(f"{cls}.delay.mean", "simulated")], rel=0.10)
    total = sum(v for (metric, method), v in got.items() if method == "simulated" and metric.endswith(".throughput"))
    assert total == pytest.approx(100e6, rel=2e-3)


def test_under_a_faster_interface_the_ring_holds_at_most_the_packet_admitted_before():
    """The shaper paces admissions at its rate C, the ring drains at C_line > C: a packet finds the ring empty
    (its term is its own wire time 8 L / C_line) unless the packet before it is longer than C_line / C times it,
    and then waits out the rest of that packet's wire time."""
    one_size = port_of(build(_edge({"rate": "1 Gbit/s", "bc": "10 kB", "interface_rate": "10 Gbit/s"})))
    voice = one_size.cls("voice")
    sizes = {L for c in one_size.active for L in c.size_law().sizes}
    # voice packets are 200 B and no packet of the port is above 10 x 200 B: voice finds the ring empty
    assert voice.mean_size == 200.0 and max(sizes) <= 2000.0
    assert paced_ring_term(one_size, voice) == pytest.approx(8.0 * 200.0 / 10e9, rel=1e-12)
    # the same port barely shaped (C_line = 1.01 C): a 200 B voice packet after a 1500 B one finds it on the wire
    close = port_of(build(_edge({"rate": "1 Gbit/s", "bc": "10 kB", "interface_rate": "1.01 Gbit/s"})))
    T_close = paced_ring_term(close, close.cls("voice"))
    assert T_close > 8.0 * close.cls("voice").mean_size / 1.01e9
    assert T_close < 8.0 * (close.cls("voice").mean_size + max(sizes)) / 1.01e9


def _unsaturated_edge(shaper: dict) -> dict:
    """port_edge1g under a parent shaper, its saturated classes given Poisson loads of 1500 B packets at 100 Mbit/s
    each (58 % of the shaper's rate in all)."""
    raw = _edge(shaper)
    for c in raw["classes"]:
        if c["traffic"].get("saturated"):
            c["traffic"] = {"rate": "100 Mbit/s", "size": "1500 B", "arrivals": "poisson"}
    return raw


def test_the_shaper_s_hold_probability_is_the_m_m_1_workload_tail_for_one_poisson_stream_of_exponential_sizes():
    """One Poisson class of exponential sizes (mean m bytes) at load rho of the shaper's rate: the token deficit is
    M/M/1's workload, P(W > bc) = rho exp(-(1 - rho) bc / m) exactly (the Cramer-Lundberg form is exact there)."""
    raw = _edge({"rate": "1 Gbit/s", "bc": "30 kB", "interface_rate": "10 Gbit/s"})
    raw["classes"] = [{"name": "class-default", "bandwidth": "100 %", "queue_limit": 64,
                       "traffic": {"rate": "600 Mbit/s", "arrivals": "poisson", "sizes": "exponential",
                                   "size": "1000 B"}}]
    raw["slos"] = []
    port = port_of(build(raw))
    assert shaper_hold_probability(port) == pytest.approx(0.6 * np.exp(-0.4 * 30_000 / 1000.0), rel=1e-9)
    raw["classes"][0]["traffic"] = {"saturated": True, "sizes": [{"size": "1500 B", "p": 1}]}
    assert shaper_hold_probability(port_of(build(raw))) == 1.0


def test_a_deep_bucket_under_a_light_load_is_taken_as_absent_and_a_shallow_one_is_not():
    """The approximations serve the port at the interface's rate when the shaper hardly ever holds traffic back
    (and say so), at the shaper's rate otherwise; the bounds keep the shaper either way."""
    deep = port_of(build(_unsaturated_edge({"rate": "1 Gbit/s", "bc": "1 MB", "interface_rate": "10 Gbit/s"})))
    view, note = approximation_view(deep)
    assert shaper_hold_probability(deep) < HOLD_NEGLIGIBLE
    assert view.rate == 10e9 and view.shaper_burst == 0.0 and "taken never empty" in note
    shallow = port_of(build(_unsaturated_edge({"rate": "1 Gbit/s", "bc": "1500 B", "interface_rate": "10 Gbit/s"})))
    assert shaper_hold_probability(shallow) >= HOLD_NEGLIGIBLE
    assert approximation_view(shallow)[0] is shallow
    assert class_bounds(deep)["voice"].parts["shaper"] == pytest.approx(8.0 * 1e6 / 1e9, rel=1e-9)  # 8 bc / C


def test_under_a_deep_bucket_cobham_s_mean_follows_the_simulator():
    """The deep-bucket port simulated (the shaper's token bucket in front of the ring): voice's Cobham mean within
    10 % of the simulated mean (served steadily at the shaper's rate it was several times the simulated mean)."""
    raw = _unsaturated_edge({"rate": "1 Gbit/s", "bc": "1 MB", "interface_rate": "10 Gbit/s"})
    raw["methods"] = {"simulated": {"packets": 200_000, "replications": 4, "seed": 3}}
    res = {(r.metric, r.method): r for r in PORT.evaluate(build(raw), ["closed-form", "simulated"], QUIET)}
    assert res[("voice.delay.cobham_mean", "closed-form")].value == pytest.approx(
        res[("voice.delay.mean", "simulated")].value, rel=0.10)
