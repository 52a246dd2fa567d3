"""Marker colour fractions by packets and by bytes, honest result kinds, and the AF simulator's intervals.

Regression tests for issue 9's AF items: byte fractions were fed to the per-packet droppers (koehler1999:
AF1 drop 0.286 closed-form against 0.170 simulated), simulated queue means had intervals capped at 1,
approximations were labelled exact, and ``service: guaranteed`` changed the closed form but not the simulator.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml
from scipy import integrate, stats

from qosbound.cli import main
from qosbound.errors import ScenarioError
from qosbound.results import Kind
from tests.helpers import ROOT


def _raw(name: str) -> dict:
    return yaml.safe_load((ROOT / "examples" / f"{name}.yaml").read_text())


def _plan(tmp_path, raw: dict, capsys, methods="closed-form,simulated"):
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(raw))
    code = main(["plan", str(p), "--methods", methods, "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    by = {(m["metric"], m["method"]): m for m in doc["metrics"]}
    return code, by, doc["verdicts"]


# ---- the finite dam ---------------------------------------------------------------------------------------

def _dam_by_quadrature(rho: float, b: float) -> tuple[float, float]:
    """The dam's level-crossing solution integrated numerically (independent of the incomplete gammas).

    Deficit x (in mean sizes) has an atom P0 at 0 and density rho (e^-x - e^-b) g(x) on (0, b) with
    g(x) = P0 exp(rho (x - e^-(b-x) + e^-b)); a packet fits with probability 1 - e^-b g(b); tokens are used
    at rate c (1 - P0), so the byte fraction is (1 - P0) / rho.
    """
    def h(x):
        return math.exp(rho * (x - math.exp(-(b - x)) + math.exp(-b)))

    mass, _ = integrate.quad(lambda x: rho * (math.exp(-x) - math.exp(-b)) * h(x), 0.0, b, epsabs=0, epsrel=1e-13,
                             limit=200)
    p0 = 1.0 / (1.0 + mass)
    return 1.0 - math.exp(-b) * p0 * h(b), (1.0 - p0) / rho


@pytest.mark.parametrize("rho,b", [(0.3, 4.0), (0.9, 10.0), (1.0, 6.0), (2.5, 8.0), (6.0, 12.0)])
def test_dam_closed_form_equals_quadrature(rho, b):
    """The incomplete-gamma closed form of the finite dam equals a direct quadrature of its density."""
    from qosbound.analytic.markers import dam_exponential

    p, by = dam_exponential(rho, b)
    q_p, q_by = _dam_by_quadrature(rho, b)
    assert p == pytest.approx(q_p, rel=1e-9, abs=1e-12)
    assert by == pytest.approx(q_by, rel=1e-9, abs=1e-12)


def test_dam_limits():
    """No load: the bucket is always full, so a packet fits iff its size is below the depth."""
    from qosbound.analytic.markers import dam_exponential

    b = 3.0
    p, by = dam_exponential(0.0, b)
    assert p == pytest.approx(1 - math.exp(-b)) and by == pytest.approx(1 - math.exp(-b) * (1 + b))
    p, by = dam_exponential(50.0, 400.0)  # deep overload: bytes pass at the token rate
    assert by == pytest.approx(1 / 50.0, rel=1e-6) and p > by


def _simulate_marker(kind, rate, size, cir, cbs, second=0.0, depth2=0.0, n=600_000, reps=6, seed=11):
    """Packet and byte colour fractions of the numba marker, per replication (Poisson, exponential sizes)."""
    from qosbound.validation.markers import mark_stream, new_state

    pk, by = [], []
    for r in range(reps):
        rng = np.random.default_rng(seed + r)
        lam = rate / (8.0 * size)
        t = np.cumsum(rng.exponential(1.0 / lam, n))
        s = np.maximum(rng.exponential(size, n), 1.0)
        st = new_state(kind, cir, cbs, second if kind == "trtcm" else depth2, depth2 if kind == "trtcm" else 0.0)
        c = mark_stream(kind, st, t, s)[n // 10:]
        s = s[n // 10:]
        pk.append(np.bincount(c, minlength=3) / len(c))
        by.append(np.bincount(c, weights=s, minlength=3) / s.sum())
    return np.array(pk), np.array(by)


def _within(closed, reps, conf=0.999):
    m = reps.mean(axis=0)
    se = reps.std(axis=0, ddof=1) / math.sqrt(len(reps))
    t = stats.t.ppf(1 - (1 - conf) / 2, len(reps) - 1)
    return np.abs(np.asarray(closed) - m) <= t * se + 1e-4, m


@pytest.mark.parametrize("kind,args", [
    ("two-colour", dict(rate=800e3, size=1500, cir=400e3, cbs=1e4)),
    ("trtcm", dict(rate=50e6, size=1000, cir=10e6, cbs=250e3, second=15e6, depth2=350e3)),
    ("trtcm", dict(rate=1.5e6, size=1000, cir=1e6, cbs=5e3, second=2e6, depth2=1e4)),
    ("srtcm", dict(rate=800e3, size=1500, cir=400e3, cbs=1e4, depth2=2e4)),
])
def test_exact_fractions_match_the_simulated_marker(kind, args):
    """Every fraction the dam solution calls exact (two-colour bucket, srTCM green, trTCM red; packets and
    bytes) lies within the simulated marker's 99.9 % interval; packet and byte fractions differ."""
    from qosbound.analytic.markers import marker_fractions

    second = args.get("second")
    depth2 = args.get("depth2")
    mf = marker_fractions(kind, "poisson", "exponential", args["rate"], args["size"], args["cir"], args["cbs"],
                          second, depth2)
    pk, by = _simulate_marker(kind, args["rate"], args["size"], args["cir"], args["cbs"], second or 0.0,
                              depth2 or 0.0)
    ok_p, m_p = _within(mf.packets, pk)
    ok_b, m_b = _within(mf.bytes, by)
    exact = np.asarray(mf.exact)
    assert exact.any()
    assert ok_p[exact].all(), (mf.packets, m_p)
    assert ok_b[exact].all(), (mf.bytes, m_b)
    # A bucket passes small packets more readily: green is a larger share of packets than of bytes.
    assert mf.packets[0] > mf.bytes[0] + 0.01 and m_p[0] > m_b[0] + 0.01


def test_koehler_trtcm_packet_fractions_are_close_to_simulation():
    """The trTCM's approximate green/yellow split (C fed P's output as Poisson) is within 0.02 of the simulated
    marker on the koehler1999 marker, and the old byte fractions (0.2 green) are far from it."""
    from qosbound.analytic.markers import marker_fractions

    mf = marker_fractions("trtcm", "poisson", "exponential", 50e6, 1000, 10e6, 250e3, 15e6, 350e3)
    pk, _ = _simulate_marker("trtcm", 50e6, 1000, 10e6, 250e3, 15e6, 350e3, n=400_000, reps=4)
    m = pk.mean(axis=0)
    assert np.max(np.abs(np.asarray(mf.packets) - m)) < 0.02
    assert abs(0.2 - m[0]) > 0.25  # the byte fraction is no estimate of the packet fraction
    assert mf.neglects and not mf.exact[0] and mf.exact[2]


# ---- the AF system ------------------------------------------------------------------------------------------

def test_koehler_closed_form_uses_packet_fractions_and_matches_simulation(tmp_path, capsys):
    """koehler1999: closed-form colour fractions agree with the simulated ones by packets (red exactly) and by
    bytes, AF1 drop by the closed form is within 10 % of the simulated one (it was 0.286 vs 0.170), delivered
    throughput within 3 %, and no colour check disagrees."""
    code, by, verdicts = _plan(tmp_path, _raw("koehler1999"), capsys)
    assert code == 0
    cf, sim = by[("AF1.drop", "closed-form")]["value"], by[("AF1.drop", "simulated")]["value"]
    assert abs(cf - sim) <= 0.10 * sim
    thr_cf, thr_sim = by[("AF1.throughput", "closed-form")]["value"], by[("AF1.throughput", "simulated")]["value"]
    assert abs(thr_cf - thr_sim) <= 0.03 * thr_sim
    for k in (1, 2, 3):
        for suffix in ("", ".bytes"):
            a = by[(f"AF1.colour.AF1{k}{suffix}", "closed-form")]["value"]
            b = by[(f"AF1.colour.AF1{k}{suffix}", "simulated")]["value"]
            assert abs(a - b) < 0.02, (k, suffix, a, b)
    colour = [v for v in verdicts if v["metric"].startswith("AF1.colour")]
    assert len(colour) == 6 and not [v for v in colour if v["status"] == "disagree"]
    red = next(v for v in colour if v["metric"] == "AF1.colour.AF13")
    assert red["status"] == "agree"  # the exact one is checked statistically, not waved through


def test_simulated_intervals_contain_their_estimate_and_use_the_confidence(tmp_path, capsys):
    """Simulated queue means are not capped at 1 (it was 46.28 [46.12, 1]); every simulated interval is a
    confidence interval at the scenario's level with se and dof = replications - 1."""
    raw = _raw("koehler1999")
    raw["methods"]["simulated"].update(packets=100_000, replications=3, confidence=0.9)
    code, by, _ = _plan(tmp_path, raw, capsys, methods="simulated")
    q = by[("AF1.queue.mean", "simulated")]
    assert q["value"] > 1 and q["interval"]["low"] <= q["value"] <= q["interval"]["high"]
    sims = [m for (metric, method), m in by.items() if method == "simulated"]
    assert sims
    for m in sims:
        iv = m["interval"]
        assert m["kind"] == Kind.CI.value and iv["level"] == 0.9 and iv["dof"] == 2
        assert iv["std_error"] is not None and iv["low"] <= m["value"] <= iv["high"]
        t = stats.t.ppf(0.95, 2)
        if m["unit"] != "1" or 0 < iv["low"] and iv["high"] < 1:
            assert iv["high"] - m["value"] == pytest.approx(t * iv["std_error"], rel=1e-9, abs=1e-15)


def test_closed_form_kinds_are_honest(tmp_path, capsys):
    """A fixed-average M/M/1/K drop is an approximation that says it neglects the EWMA dynamics; CBWFQ shares
    are exact; the alpha = 1 WRED product form of a lone Poisson class with exponential sizes is exact."""
    _, by, _ = _plan(tmp_path, _raw("koehler1999"), capsys, methods="closed-form")
    d = by[("AF1.drop.AF13", "closed-form")]
    assert d["kind"] == "approximation" and "EWMA averaging dynamics" in d["interval"]["neglects"]
    assert by[("AF1.rate", "closed-form")]["kind"] == "exact"
    raw = _raw("qstp2008")
    raw["classes"]["AF1"]["dropper"] = {"mode": "wred", "alpha": 1.0, "thresholds": {
        "AF11": {"min_th": 20, "max_th": 40, "P_d": 3}, "AF12": {"min_th": 12, "max_th": 32, "P_d": 3},
        "AF13": {"min_th": 6, "max_th": 24, "P_d": 3}}}
    raw["traffic"]["AF1"] = {"rate": "900 kbit/s", "size": "1500 B", "mix": [0.4, 0.3, 0.3]}
    _, by, _ = _plan(tmp_path, raw, capsys, methods="closed-form")
    for metric in ("AF1.drop.AF11", "AF1.drop", "AF1.delay.mean", "AF1.queue.mean", "AF1.colour.AF12"):
        assert by[(metric, "closed-form")]["kind"] == "exact", metric
    raw["traffic"]["AF1"]["sizes"] = "fixed"
    _, by, _ = _plan(tmp_path, raw, capsys, methods="closed-form")
    assert "Poisson input with exponential sizes" in by[("AF1.drop", "closed-form")]["interval"]["neglects"]


def _two_classes(service: str) -> dict:
    return {
        "name": "guaranteed", "system": "af", "link": {"rate": "10 Mbps"}, "service": service,
        "classes": {n: {"bandwidth": bw, "buffer": 40, "dropper": {"mode": "wred", "alpha": 1.0, "thresholds": {
            f"{n}1": {"min_th": 20, "max_th": 36, "P_d": 5}, f"{n}2": {"min_th": 14, "max_th": 30, "P_d": 5},
            f"{n}3": {"min_th": 8, "max_th": 24, "P_d": 5}}}} for n, bw in (("AF1", "6 Mbps"), ("AF2", "4 Mbps"))},
        "traffic": {"AF1": {"rate": "6.3 Mbps", "size": "1000 B", "mix": [0.5, 0.3, 0.2]},
                    "AF2": {"rate": "1 Mbps", "size": "500 B", "mix": [1, 0, 0]}},
        "methods": {"simulated": {"packets": 200_000, "replications": 4, "seed": 5}},
    }


def test_simulator_honours_guaranteed_service(tmp_path, capsys):
    """service: guaranteed serves each class at its share only: AF1 (offered 6.3 Mbit/s on a 6 Mbit/s share)
    delivers at most its share in the simulator, while under max-min WFQ it takes AF2's idle capacity; with
    alpha = 1 the closed form is then exact and the generic rule finds simulation and closed form agreeing."""
    _, g, verdicts = _plan(tmp_path, _two_classes("guaranteed"), capsys)
    _, w, _ = _plan(tmp_path, _two_classes("max-min"), capsys, methods="simulated")
    thr_g = g[("AF1.throughput", "simulated")]["value"]
    assert thr_g <= 6e6 * 1.005
    assert w[("AF1.throughput", "simulated")]["value"] > 6.2e6
    assert w[("AF1.drop", "simulated")]["value"] < 0.5 * g[("AF1.drop", "simulated")]["value"]
    assert g[("AF1.drop.AF13", "closed-form")]["kind"] == "exact"
    # AF2 (1 Mbit/s on a 4 Mbit/s share) sees no drop at all: its interval is not the zero-width [0, 0].
    quiet = w[("AF2.drop", "simulated")]
    assert quiet["value"] == 0 and quiet["interval"]["std_error"] > 0 and quiet["interval"]["high"] > 0
    checks = [v for v in verdicts if v["method"] == "closed-form vs simulated" or v["method"] == "simulated vs "
              "closed-form"]
    drops = [v for v in checks if ".drop" in v["metric"] or ".queue" in v["metric"]]
    assert drops and all(v["status"] == "agree" for v in drops), [(v["metric"], v["detail"]) for v in drops
                                                                    if v["status"] != "agree"]


def test_af_agreements_leave_sim_vs_model_to_the_generic_rule():
    """The af module's own checks are the precedence ordering and Storm vs SciPy only."""
    from qosbound.results import Interval, Result
    from qosbound.scenario import build
    from qosbound.systems import af

    raw = _raw("qstp2008")  # made a case the old code checked itself: one WRED class, alpha = 1, a fixed mix
    raw["classes"]["AF1"]["dropper"] = {"mode": "wred", "alpha": 1.0, "thresholds": {
        "AF11": {"min_th": 20, "max_th": 40, "P_d": 3}, "AF12": {"min_th": 12, "max_th": 32, "P_d": 3},
        "AF13": {"min_th": 6, "max_th": 24, "P_d": 3}}}
    raw["traffic"]["AF1"] = {"rate": "1100 kbit/s", "size": "1500 B", "mix": [0.3, 0.3, 0.4]}
    scn = build(raw)
    rs = [Result("AF1.drop.AF11", "simulated", 0.01, "1", Interval.ci(0.009, 0.011, 0.95, se=5e-4, dof=3),
                 {"std_error": 5e-4, "replications": 4}),
          Result("AF1.drop.AF11", "model-checked", 0.5, "1", Interval.numerical(0.5, 0.5))]
    own = af.agreements(scn, rs)
    assert not [v for v in own if "simulated" in v.method or "simulated" in v.name]
    from qosbound.agreement import agreements

    generic = [v for v in agreements(rs) if v.metric == "AF1.drop.AF11"]
    assert len(generic) == 1 and generic[0].status == "disagree"


@pytest.mark.parametrize("edit,field,problem", [
    (lambda r: r["classes"]["AF1"]["dropper"]["thresholds"]["AF11"].update(min_th=45),
     "classes.AF1.dropper.thresholds.AF11.min_th", "thresholds out of order"),
    (lambda r: r["classes"]["AF1"]["dropper"].update(alpha=0.0), "classes.AF1.dropper.alpha", "not in (0, 1]"),
    (lambda r: r["traffic"]["AF1"]["marker"].update(cir="-1 kbit/s"), "traffic.AF1.marker.cir", "outside [0,"),
    (lambda r: r["traffic"]["AF1"].update(mix=[0.5, 0.5, 0.5]), "traffic.AF1.mix", "both"),
])
def test_infeasible_values_raise_typed_errors_naming_the_field(edit, field, problem):
    """A trial value such as min_th >= max_th is refused by a ScenarioError naming the field and the reason
    (what admit reports), not a bare ValueError."""
    from qosbound.scenario import build

    raw = _raw("qstp2008")
    edit(raw)
    with pytest.raises(ScenarioError) as e:
        build(raw)
    assert e.value.field == field and problem in e.value.problem


def test_poisson_fractions_are_cached_by_marker_parameters():
    """The slotted trTCM chain is solved once per set of marker parameters (admit re-evaluates it each step)."""
    from qosbound.analytic import markers

    args = ("trtcm", 3e6, 1000.0, 1e6, 4000.0, 6000.0)
    f1, e1 = markers.poisson_fractions(*args, pir=2e6)
    before = markers._poisson_fractions.cache_info().hits
    f2, e2 = markers.poisson_fractions(*args, pir=2e6)
    assert markers._poisson_fractions.cache_info().hits == before + 1
    assert np.array_equal(f1, f2) and np.array_equal(e1, e2)
    f2[0] = -1.0  # callers get copies: the cached value cannot be changed through them
    assert markers.poisson_fractions(*args, pir=2e6)[0][0] == f1[0]
