"""tune: the best setting of several parameters for an objective, with every SLO as a constraint."""

from __future__ import annotations

import json
import math
import re
from types import SimpleNamespace

import pytest

from qosbound.admit import admit, worst_margin
from qosbound.cli import main
from qosbound.errors import ScenarioError
from qosbound.scenario import load
from qosbound.sweep.execute import evaluate_point
from qosbound.sweep.grid import set_param
from qosbound.tune import BINDING_TOL, parse_axis, parse_slo, tune
from tests.helpers import example

TAKEO = str(example("takeo2003"))


def _tune(capsys, *args):
    code = main(["tune", *args, "--json", "--quiet"])
    out = capsys.readouterr().out
    return code, (json.loads(out) if out.strip() else None)


def _feasible(raw, path) -> bool:
    rec = evaluate_point(raw, path, ["closed-form"])
    return rec["status"] == "ok" and all(v["status"] not in ("violated", "missing") for v in rec["slos"])


def test_worst_margin_reads_verdicts_and_their_json_alike():
    """admit and tune judge points by one function: the smallest normalised margin and the SLO that has it."""
    objs = [SimpleNamespace(name="a", status="holds", margin=2.0, limit=10.0),
            SimpleNamespace(name="b", status="holds", margin=0.5, limit=1.0),
            SimpleNamespace(name="c", status="holds", margin=0.3, limit=0.0)]
    dicts = [vars(v) for v in objs]
    assert worst_margin(objs, ["closed-form"]) == worst_margin(dicts, ["closed-form"]) == (0.2, "a")
    assert worst_margin([], ["closed-form"]) == (math.inf, "")
    with pytest.raises(ScenarioError, match="cannot be judged"):
        worst_margin([{"name": "d", "status": "missing", "margin": None, "limit": 1.0}], ["simulated"])


def test_one_continuous_axis_finds_admits_boundary():
    """With one real parameter and the parameter as objective, tune answers admit's question: the largest AF2
    rate meeting every SLO, at the same boundary (admit stops within its rtol 1e-4 on the feasible side), with
    the same binding SLO, whose margin at the optimum is ~0 and not negative."""
    scn = load(TAKEO)
    res = tune(scn, ["traffic.AF2.rate=50kbit/s..2Mbps"], maximise="traffic.AF2.rate")
    ref = admit(scn, "traffic.AF2.rate", method="closed-form", lo=50e3, hi=2e6)
    x = res.best.values[0]
    assert ref.value * (1 - 3e-4) <= x <= ref.value * (1 + 3e-4)
    assert res.binding == [ref.binding] == ["AF2.delay.mean <= 20 ms"]
    assert 0 <= res.best.margins[ref.binding] <= BINDING_TOL
    assert _feasible(set_param(scn.raw, "traffic.AF2.rate", x), scn.path)
    assert not _feasible(set_param(scn.raw, "traffic.AF2.rate", x * 1.001), scn.path)
    assert res.rejected["SLO AF2.delay.mean <= 20 ms fails"] >= 1


def test_integer_grid_is_the_brute_force_optimum_with_reasons():
    """On integer axes tune evaluates the whole grid: its optimum is the best feasible point found by evaluating
    each point independently, and each rejected point is counted under its reason."""
    scn = load(TAKEO)
    vary = ["classes.AF2.buffer=40..56", "classes.AF2.dropper.thresholds.AF21.max_th=44,48"]
    res = tune(scn, vary, minimise="classes.AF2.buffer")
    assert res.grid_points == res.evaluations == 17 * 2
    brute = []
    for b in range(40, 57):
        for m in (44, 48):
            raw = set_param(set_param(scn.raw, "classes.AF2.buffer", b),
                            "classes.AF2.dropper.thresholds.AF21.max_th", m)
            if _feasible(raw, scn.path):
                brute.append((b, m))
    assert brute, "the grid has feasible points"
    assert res.best.values[0] == min(b for b, _ in brute)
    assert tuple(res.best.values) in brute
    rejected = 17 * 2 - len(brute)
    assert sum(res.rejected.values()) >= rejected  # a violated point counts once per failing SLO
    assert any(k.startswith("invalid: classes.AF2.buffer: buffer of # packets") for k in res.rejected)
    assert res.limiting and all(p.status != "feasible" for p in res.neighbours)


def test_metric_objective_by_a_method_with_an_extra_slo(capsys):
    """Minimise AF21's drop probability over the AF2 bandwidth and buffer with the delay SLO tightened by --slo:
    the optimum holds every SLO, its objective is the closed form's value there, with its kind, and --slo
    replaced the scenario's limit on the same metric."""
    code, doc = _tune(capsys, TAKEO, "--vary", "classes.AF2.bandwidth=150kbit/s..400kbit/s:6",
                      "--vary", "classes.AF2.buffer=48,64", "--minimise", "AF2.drop.AF21",
                      "--slo", "AF2.delay.mean<=15 ms", "--method", "closed-form")
    assert code == 0 and doc["found"]
    opt = doc["optimum"]
    assert set(opt["margins"]) == {"AF2.drop.AF21 <= 1e-3", "AF2.delay.mean <= 15 ms", "AF3.rate.case2 >= 666 kbit/s"}
    assert all(m >= 0 for m in opt["margins"].values())
    assert opt["objective"]["unit"] == "1" and opt["objective"]["kind"] == "approximation"
    scn = load(TAKEO)
    raw = scn.raw
    for p in opt["parameters"]:
        raw = set_param(raw, p["parameter"], p["value"])
    rec = evaluate_point(raw, scn.path, ["closed-form"])
    value = next(r["value"] for r in rec["results"] if r["metric"] == "AF2.drop.AF21")
    assert opt["objective"]["value"] == pytest.approx(value, rel=1e-12)
    assert [p["unit"] for p in opt["parameters"]] == ["bit/s", "1"]


def test_nothing_feasible_exits_1_with_the_nearest_points(capsys):
    """A limit no setting meets: exit 1, no optimum, the points nearest to feasible with their failing SLO."""
    code, doc = _tune(capsys, TAKEO, "--vary", "traffic.AF2.rate=100kbit/s..300kbit/s:3",
                      "--maximise", "traffic.AF2.rate", "--slo", "AF2.delay.mean<=1 us")
    assert code == 1 and not doc["found"] and doc["optimum"] is None
    assert doc["rejected"] == {"SLO AF2.delay.mean <= 1 us fails": 3}
    assert doc["nearest_rejected"][0]["reason"] == "SLO AF2.delay.mean <= 1 us fails"
    assert doc["closest_infeasible"] == doc["nearest_rejected"][0]


def test_nothing_feasible_says_why_and_how_far_in_text(capsys):
    """Without a feasible point the text report proposes no value, and says why: the point closest to feasible
    and, for each SLO it fails, by how much it misses the limit."""
    code = main(["tune", TAKEO, "--vary", "traffic.AF2.rate=100kbit/s..300kbit/s:3", "--maximise",
                 "traffic.AF2.rate", "--slo", "AF2.delay.mean<=1 us", "--quiet"])
    out = capsys.readouterr().out
    assert code == 1
    assert "no feasible point: each of the 3 points evaluated fails an SLO or is invalid; no value is proposed" in out
    assert "closest to feasible: traffic.AF2.rate = 100 kbit/s" in out
    assert re.search(r"SLO AF2\.delay\.mean <= 1 us fails: misses its limit by [0-9.e+]+ (%|times) of the limit",
                     out), out
    assert "optimum:" not in out


@pytest.mark.parametrize("args, words", [
    (["--vary", "traffic.AF2.rate=1Mbit/s..2Mbit/s", "--maximise", "traffic.AF1.rate"], "not varied"),
    (["--vary", "traffic.AF2.rate=1Mbit/s..2Mbit/s", "--maximise", "AF9.nothing"], "neither a parameter"),
    (["--vary", "traffic.AF2.rate=2Mbit/s..1Mbit/s", "--maximise", "traffic.AF2.rate"], "empty"),
    (["--vary", "traffic.AF2.rate=1Mbit/s..2Mbit/s", "--maximise", "traffic.AF2.rate", "--slo", "AF2.delay.mean"],
     "--slo"),
    (["--vary", "traffic.AF2.rate=1Mbit/s..2Mbit/s", "--maximise", "traffic.AF2.rate", "--method", "nope"],
     "--method"),
    (["--vary", "nope.x=1..2", "--maximise", "nope.x"], "no parameter"),
    (["--vary", "traffic.AF2.rate=1..2", "--maximise", "traffic.AF2.rate"], "'1' has no unit"),
    (["--vary", "traffic.AF2.rate=1Mbit/s..2Mbit/s", "--maximise", "traffic.AF2.rate", "--slo",
      "AF2.delay.mean<=0.02"], "'0.02' has no unit"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, args, words):
    code = main(["tune", TAKEO, *args, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_axis_kinds():
    """LO..HI on a real parameter is continuous; on an integer one every integer; LO..HI:N and lists are grids."""
    raw = load(TAKEO).raw
    a, cont = parse_axis(raw, "traffic.AF2.rate=50kbit/s..2Mbps")
    assert cont and a.values == (50e3, 2e6) and a.unit == "bit/s"
    a, cont = parse_axis(raw, "classes.AF2.buffer=40..43")
    assert not cont and a.values == (40, 41, 42, 43)
    a, cont = parse_axis(raw, "traffic.AF2.rate=100kbit/s..300kbit/s:3")
    assert not cont and a.values == (100e3, 200e3, 300e3)
    assert parse_slo("AF2.delay.mean <= 15 ms") == {"metric": "AF2.delay.mean", "max": "15 ms"}
    assert parse_slo("AF3.rate>=1e5") == {"metric": "AF3.rate", "min": 1e5}


def test_grid_points_come_from_the_sweeps_cache_on_a_rerun(capsys, tmp_path):
    """The grid stage is a sweep: with --cache a rerun reads every grid point back and gives the same answer."""
    args = [TAKEO, "--vary", "classes.AF2.buffer=47..50", "--vary", "traffic.AF2.rate=100kbit/s,200kbit/s",
            "--minimise", "AF2.delay.mean", "--cache", str(tmp_path / "cache")]
    code1, first = _tune(capsys, *args)
    code2, second = _tune(capsys, *args)
    assert code1 == code2 == 0
    assert first["from_cache"] == 0 and second["from_cache"] == second["grid_points"] == 8
    assert first["optimum"] == second["optimum"] and first["rejected"] == second["rejected"]


def test_metric_objective_on_a_continuous_axis_reaches_the_same_boundary():
    """AF2's carried throughput grows with its offered rate until the delay SLO stops it: maximising the metric
    over the rate ends on the boundary that maximising the rate itself finds, with the delay SLO binding."""
    scn = load(TAKEO)
    by_param = tune(scn, ["traffic.AF2.rate=50kbit/s..2Mbps"], maximise="traffic.AF2.rate")
    by_metric = tune(scn, ["traffic.AF2.rate=50kbit/s..2Mbps"], maximise="AF2.throughput")
    assert by_metric.best.values[0] == pytest.approx(by_param.best.values[0], rel=1e-4)
    assert by_metric.binding == ["AF2.delay.mean <= 20 ms"]
    assert by_metric.best.interval["kind"] == "approximation"
    assert "SLSQP" in by_metric.refined
