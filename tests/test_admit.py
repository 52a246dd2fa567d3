"""Admission search: the boundary of the feasible region, and the SLO that sets it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qosbound.cli import main
from qosbound.scenario import build, load_raw, set_path
from qosbound.systems import get_system
from qosbound.progress import QUIET
from qosbound.verdicts import judge_slos

ROOT = Path(__file__).resolve().parents[1]


def _admit(capsys, *args):
    code = main(["admit", *args, "--json", "--quiet"])
    return code, json.loads(capsys.readouterr().out)


def test_flat_zero_margin_does_not_stop_the_search(capsys):
    """gTFRC's rate equals its target exactly over a range of loss rates (margin 0): the search must go on to
    where the friendliness SLO fails, and name that SLO."""
    path = str(ROOT / "examples" / "qstp_gtfrc.yaml")
    code, doc = _admit(capsys, path, "--vary", "flows.flow1.loss")
    assert code == 0
    x = doc["value"]
    assert doc["binding_slo"] == "flow1.friendliness <= 1.25"
    raw = load_raw(path)
    system = get_system("tfrc")

    def ok(v):
        scn = build(set_path(raw, "flows.flow1.loss", v))
        return all(not r.failed for r in judge_slos(system, scn, system.evaluate(scn, ["closed-form"], QUIET)))

    assert ok(x) and not ok(x * 1.002)


def test_slos_the_method_cannot_judge_fall_back_to_the_closed_form(capsys):
    """The EF example's worst-case-mean SLO has only a closed form; admitting with the model still works."""
    code, doc = _admit(capsys, str(ROOT / "examples" / "ferrari2001.yaml"), "--vary", "traffic.EF.rate")
    assert code == 0 and doc["method"] == "model-checked"
    assert 300e3 < doc["value"] < 2e6 and doc["binding_slo"] == "EF.loss <= 1e-4"


def test_no_feasible_value_exits_1(tmp_path, capsys):
    raw = load_raw(ROOT / "examples" / "ferrari2001.yaml")
    raw["slos"] = [{"metric": "EF.delay.mean", "max": "1 us"}]
    p = tmp_path / "s.yaml"
    import yaml

    p.write_text(yaml.safe_dump(raw))
    code, doc = _admit(capsys, str(p), "--vary", "traffic.EF.rate", "--method", "model-checked")
    assert code == 1 and doc["value"] is None
    # down to 2^-39 of the rate, as far as a walk of single halvings went (40 model checks), in a dozen or so
    assert min(h["value"] for h in doc["history"]) == 300e3 / 2 ** 39 and doc["evaluations"] <= 14


@pytest.mark.parametrize("param,message", [("traffic.EF.nosuch", "has no parameter"), ("name", "cannot vary")])
def test_bad_parameter_is_an_input_error(capsys, param, message):
    code = main(["admit", str(ROOT / "examples" / "ferrari2001.yaml"), "--vary", param, "--quiet"])
    assert code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("args,needle", [
    (["--min", "abc"], "--min: cannot read 'abc' as a rate"),
    (["--min", "2e6 bit/s", "--max", "1e6 bit/s"], "--min: the search range is empty"),
    (["--min", "2 Mbit/s", "--max", "1 Mbit/s"], "--min: the search range is empty"),
    (["--max", "nan"], "--max: 'nan' is not a finite number"),
    (["--max", "inf"], "--max: 'inf' is not a finite number"),
    (["--direction", "smallest", "--min", "-1 bit/s"], "--min: must be positive"),
    (["--max", "10 ms"], "--max: '10 ms' has the wrong units: a time, not a rate"),
    (["--max", "1000000"], "--max: '1000000' has no unit: write a rate with its unit, e.g. '1000000 bit/s'"),
    (["--max", "10 Mbit"], "--max: '10 Mbit' has the wrong units: a size (an amount of data), not a rate"),
])
def test_bad_search_ranges_are_input_errors(capsys, args, needle):
    """Each of these returned an answer (or a traceback) before: 1e-19 bit/s for --min -1; a bare --max 1000000
    was 1 Mbit/s without a word."""
    code = main(["admit", str(ROOT / "examples" / "ferrari2001.yaml"), "--vary", "traffic.EF.rate", "--quiet",
                 *args])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err


def test_units_in_the_range_are_read_in_si(tmp_path, capsys):
    """``--min '100 kbit/s'`` was 'could not convert string to float'; with units it equals the SI numbers."""
    import yaml

    raw = load_raw(ROOT / "examples" / "ferrari2001.yaml")
    raw["slos"] = [{"metric": "EF.delay.worst_case_mean", "max": "25 ms"}]
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(raw))
    code, doc = _admit(capsys, str(p), "--vary", "traffic.EF.rate", "--method", "closed-form",
                       "--min", "100 kbit/s", "--max", "1900 kbit/s")
    code2, doc2 = _admit(capsys, str(p), "--vary", "traffic.EF.rate", "--method", "closed-form",
                         "--min", "1e5 bit/s", "--max", "1.9e6bit/s")
    assert code == code2 == 0
    assert doc["value"] == pytest.approx(doc2["value"], rel=1e-9) and 3e5 < doc["value"] < 1.9e6


def test_an_invalid_trial_value_is_named_not_counted_as_an_slo_failure(capsys):
    """Raising min_th up to max_th makes the RIO scenario invalid: the answer says so, and names no SLO."""
    code, doc = _admit(capsys, str(ROOT / "examples" / "qstp2008.yaml"), "--vary",
                       "classes.AF1.dropper.thresholds.AF11.min_th", "--method", "closed-form")
    assert code == 0 and doc["value"] == 39
    assert doc["binding_slo"] == ""
    assert "beyond it the scenario is invalid" in doc["message"]
    assert "thresholds out of order: min_th = 40 must be below max_th = 40" in doc["message"]


def test_at_the_end_of_the_range_no_slo_is_called_binding(tmp_path, capsys):
    """`admit --max` inside the feasible region named a 'binding SLO' while saying every SLO holds up to the
    limit: now no SLO binds there, and the message names the tightest SLO with its slack instead."""
    import yaml

    raw = load_raw(ROOT / "examples" / "ferrari2001.yaml")
    raw["slos"] = [{"metric": "EF.delay.worst_case_mean", "max": "25 ms"}]
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(raw))
    code, doc = _admit(capsys, str(p), "--vary", "traffic.EF.rate", "--method", "closed-form", "--max", "320 kbit/s")
    assert code == 0 and doc["value"] == 320e3 and doc["binding_slo"] == ""
    assert doc["message"].startswith("every SLO holds up to the given limit; the tightest there: "
                                     "EF.delay.worst_case_mean <= 25 ms (")
    assert doc["search"] == {"parameter": "traffic.EF.rate", "kind": "rate", "unit": "bit/s", "current": 300e3,
                             "min": None, "max": 320e3}
    assert doc["inputs"]["traffic.EF.rate"]["value"] == 300e3
    code = main(["admit", str(p), "--vary", "traffic.EF.rate", "--method", "closed-form", "--max", "320 kbit/s",
                 "--quiet"])
    out = capsys.readouterr().out
    assert out.startswith("inputs as understood\n")
    assert ("search: traffic.EF.rate (rate, now 300 kbit/s), the largest value with every SLO holding up to "
            "320 kbit/s (--max), by closed-form") in out
    assert "= 320 kbit/s (method closed-form, no SLO binds, " in out and "binding SLO" not in out


def test_a_count_range_stays_bare_and_a_rate_range_needs_units(tmp_path, capsys):
    """Calls are counted (`--max 4000`); a rate range without a unit is refused naming --max."""
    path = str(ROOT / "examples" / "wan-ports" / "branch-10m.yaml")
    from qosbound.admit import search_range
    from qosbound.scenario import load

    scn = load(path)
    assert search_range(scn, "traffic.EF.calls", None, "4000") == (None, 4000.0)
    code = main(["admit", path, "--vary", "traffic.EF.call.rate", "--max", "100000", "--quiet"])
    assert code == 2 and "--max: '100000' has no unit" in capsys.readouterr().err


# ---- bounds first, simulation near the boundary (qosbound.admit's search) --------------------------------------

#: A small voice port: 10 Mbit/s, an 8-packet ring, a PQ of 8, G.711-like CBR calls with random phases.
VOICE = {"name": "small-voice", "system": "pq_txq", "link": {"rate": "10 Mbit/s"},
         "txq": {"units": 8, "unit_size": "1500 B"}, "pq": {"capacity": 8},
         "traffic": {"EF": {"calls": 20, "call": {"rate": "80 kbit/s", "size": "200 B", "arrivals": "cbr"}},
                     "BE": {"saturated": True, "sizes": [{"size": "40 B", "p": 0.5833333333333334},
                                                        {"size": "576 B", "p": 0.3333333333333333},
                                                        {"size": "1500 B", "p": 0.08333333333333333}]}},
         "metrics": {"quantiles": [0.99]},
         "methods": {"simulated": {"packets": 320000, "replications": 4, "seed": 3}},
         "slos": [{"metric": "EF.delay.p99", "max": "20 ms"}, {"metric": "EF.loss", "max": 1e-3}]}


class _Tasks:
    """A progress recorder: the simulations' descriptions, the statuses and the partial values."""

    def __init__(self):
        self.tasks, self.statuses, self.partials = [], [], []

    def task(self, description, total=None):
        self.tasks.append(description)
        return lambda n=1: None

    def status(self, text, eta=None):
        self.statuses.append(text)

    def partial(self, value):
        self.partials.append(value)


@pytest.fixture(scope="module")
def voice_answer():
    """The search, run as the CLI runs it: in a forked child (numba's threads stay out of the test process)."""
    from qosbound.admit import admit
    from qosbound.isolate import run_isolated

    rec = _Tasks()
    res = run_isolated(admit, build(VOICE), "traffic.EF.calls", what="admission search", progress=rec)
    return res, rec


def test_the_bound_decided_answer_is_proved_and_never_above_the_simulated_one(voice_answer):
    """Bounds prove every SLO up to bound_value (the closed-form maximum delay proves the p99, the CBR-call loss
    bound the loss); the simulator, searching beyond it, finds a larger answer; and at the bound-decided value
    the simulated loss is not significantly above the limit (the bound is sound)."""
    from qosbound.admit import judge_point

    res, _ = voice_answer
    assert res.method == "simulated" and res.decided_by == "simulated"
    assert res.bound_value is not None and 1 <= res.bound_value <= res.value
    assert set(res.bound_proofs) == {"EF.delay.p99 <= 20 ms", "EF.loss <= 0.001"}
    assert "EF.delay.max upper bound" in res.bound_proofs["EF.delay.p99 <= 20 ms"]
    assert "EF.loss.cbr_bound upper bound" in res.bound_proofs["EF.loss <= 0.001"]
    system = get_system("pq_txq")
    proved = {}
    for n in (int(res.bound_value), int(res.bound_value) + 1):  # the largest value the bounds prove, exactly
        trial = build(set_path(VOICE, "traffic.EF.calls", n))
        proved[n] = judge_point(system, trial, system.evaluate(trial, ["closed-form"], QUIET),
                                bounds_only=True)["proved"]
    assert proved == {int(res.bound_value): True, int(res.bound_value) + 1: False}
    from qosbound.isolate import run_isolated

    trial = build(set_path(VOICE, "traffic.EF.calls", int(res.bound_value)))
    sim = {r.metric: r for r in run_isolated(system.evaluate, trial, ["simulated"], QUIET, what="simulation")}
    assert sim["EF.loss"].interval.low <= 1e-3


def test_the_answer_carries_the_binding_slos_estimate_and_interval(voice_answer):
    res, _ = voice_answer
    e = res.estimate
    assert res.binding == "EF.loss <= 0.001" and e["slo"] == res.binding and e["by"] == "simulated"
    assert e["metric"] == "EF.loss" and e["kind"] == "95% CI" and e["low"] <= e["value"] <= e["high"]
    assert e["replications"] in (16, 32, 64) and e["packets_per_replication"] == 20000
    assert res.infeasible is not None and res.value < res.infeasible <= res.value + 1  # to one call


def test_simulation_stops_replicating_once_the_interval_decides(voice_answer):
    """Values far from the boundary are decided at the first look (16 replications of 20,000 packets); only
    those near it go on to the cap (64: the scenario's 4 x 320,000 packets split 16 ways)."""
    _, rec = voice_answer
    counts = [int(t.split()[1]) for t in rec.tasks if t.startswith("simulating ")]
    assert set(counts) <= {16, 32, 64} and 16 in counts and 64 in counts
    firsts = [c for c, prev in zip(counts, [None] + counts) if prev is None or c <= prev]
    assert firsts.count(16) >= 2  # several values needed no more than the first look


def test_progress_names_the_value_tried_the_bracket_and_reports_partial_brackets(voice_answer):
    res, rec = voice_answer
    assert any("admit traffic.EF.calls = " in s and "(simulated, evaluation " in s for s in rec.statuses)
    assert any("feasible at >= " in s and "infeasible at <= " in s for s in rec.statuses)
    last = rec.partials[-1]
    assert last["feasible"] == res.value and last["infeasible"] == res.infeasible
    assert last["bound_value"] == res.bound_value and last["evaluations"] == res.evaluations


def test_admit_text_says_what_decided_the_answer(tmp_path, capsys):
    import yaml

    p = tmp_path / "voice.yaml"
    p.write_text(yaml.safe_dump(VOICE))
    assert main(["admit", str(p), "--vary", "traffic.EF.calls", "--quiet"]) == 0
    out = [x for x in capsys.readouterr().out.splitlines() if x.startswith("small-voice: ")]
    assert out[0].startswith("small-voice: largest traffic.EF.calls with every SLO holding = ")
    assert "(method simulated, binding SLO: EF.loss <= 0.001, " in out[0]
    assert out[1].startswith("small-voice: decided by simulated: at the answer EF.loss <= 0.001: simulated "
                             "EF.loss = ") and "(95% CI), 64 replications of 20,000 packets" in out[1]
    assert out[2].startswith("small-voice: feasible at >= ") and "infeasible at <= " in out[2]
    assert out[3].startswith("small-voice: every SLO is proved by bounds at traffic.EF.calls = ")


def test_the_simulated_trials_design():
    """The cap spends one plan simulation's packets in 16 times as many replications; the looks double from
    16 (or the scenario's count); short runs are not split below 20,000 packets."""
    from qosbound.admit import sim_design

    assert sim_design(2_000_000, 8) == (125_000, [16, 32, 64, 128])
    assert sim_design(320_000, 4) == (20_000, [16, 32, 64])
    assert sim_design(5_000, 8) == (5_000, [8])
    assert sim_design(1_000_000, 32) == (62_500, [32, 64, 128, 256, 512])


def _r(metric, method, value, iv, bounds=()):
    from qosbound.results import Result

    return Result(metric, method, value, "s" if "delay" in metric else "1", iv, {}, bounds=bounds)


def test_a_proved_bound_decides_an_slo_before_any_estimate():
    """An upper bound at or below a max limit proves the SLO (whatever the simulator's interval says); a lower
    bound above it proves it fails; an SLO restricted to one method is judged on that method alone."""
    from qosbound.admit import judge_point
    from qosbound.results import Interval

    raw = load_raw(ROOT / "examples" / "voice1g.yaml")
    scn = build(raw)
    system = get_system("pq_txq")
    bound = _r("EF.delay.max", "closed-form", 1.6e-3, Interval.upper_bound(1.6e-3), bounds=("EF.delay.p*",))
    est = _r("EF.delay.p99", "simulated", 2.5e-3, Interval.ci(2.4e-3, 2.6e-3, 0.95))
    loss = _r("EF.loss", "simulated", 2e-6, Interval.ci(1e-6, 3e-6, 0.95))
    pt = judge_point(system, scn, [bound, est, loss])
    assert pt["feasible"] and pt["slos"]["EF.delay.p99 <= 2 ms"]["by"] == "bound"
    assert pt["slos"]["EF.loss <= 1e-5"]["by"] == "simulated" and pt["decided"] and not pt["proved"]
    seen = _r("EF.delay.max", "simulated", 2.2e-3, Interval.lower_bound(2.2e-3), bounds=("EF.delay.p*",))
    pt = judge_point(system, scn, [seen, loss])
    assert not pt["feasible"] and pt["slos"]["EF.delay.p99 <= 2 ms"]["by"] == "bound" and pt["disproved"]
    raw["slos"][0]["method"] = "simulated"
    pt = judge_point(system, build(raw), [bound, est, loss])
    assert not pt["feasible"] and pt["slos"]["EF.delay.p99 <= 2 ms"]["by"] == "simulated"
    straddle = _r("EF.loss", "simulated", 9e-6, Interval.ci(4e-6, 1.4e-5, 0.95))
    pt = judge_point(system, scn, [bound, straddle])
    assert pt["feasible"] and not pt["decided"]  # the point estimate holds; the interval straddles the limit
