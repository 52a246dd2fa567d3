"""Trustworthy reports: verdict labels, the IMIX verify, separate SLO and agreement outcomes, JUnit, display.

Each test here fails on the code before issue 9's fixes: the p99.9 check was labelled "model-checked 9";
an IMIX scenario whose SLOs hold failed verify because rounded-up model sizes were treated as exact; JUnit
testcases shared names, had no time and no report was written on an input error; a zero loss printed as
[-1e-310, 1e-310]; a missing SLO's limit had no unit.
"""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from qosbound.agreement import agreements
from qosbound.cli import main
from qosbound.progress import QUIET
from qosbound.results import Interval, Kind, Result, Verdict
from qosbound.scenario import build, load_raw

ROOT = Path(__file__).resolve().parents[1]
FERRARI = ROOT / "examples" / "ferrari2001.yaml"
FAST = "closed-form,model-checked"


def write(tmp_path, raw, name="s.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(raw))
    return str(p)


def imix_raw(packets=400_000, replications=6):
    """The Ferrari et al. test bed with an IMIX best-effort mix: 40, 576 and 1500 B at 7:4:1."""
    raw = load_raw(FERRARI)
    raw["name"] = "imix"
    raw["traffic"]["BE"]["sizes"] = [{"size": "40 B", "p": 7 / 12}, {"size": "576 B", "p": 4 / 12},
                                     {"size": "1500 B", "p": 1 / 12}]
    raw["methods"]["simulated"] = {"packets": packets, "replications": replications, "seed": 12}
    return raw


# ---- the p99.9 label -----------------------------------------------------------------------------------

def test_p99_9_verdict_names_its_metric():
    """The max-delay bound's check on p99.9 names 'EF.delay.p99.9', never 'model-checked 9'."""
    from qosbound.systems.pq_txq.closed_form import closed_form_results
    from qosbound.systems import pq_txq

    scn = build(load_raw(FERRARI))
    cf = closed_form_results(pq_txq.params(scn))
    mc = [Result("EF.delay.p99.9", "model-checked", 14.78e-3, "s", Interval.numerical(14.779e-3, 14.781e-3))]
    names = [v.name for v in agreements(cf + mc) + pq_txq.agreements(scn, cf + mc)]
    (p999,) = [n for n in names if "p99.9" in n]
    assert "EF.delay.p99.9" in p999 and "EF.delay.max" in p999 and "model-checked" in p999
    assert not any(n.endswith(" 9") for n in names)


# ---- kinds of the pq_txq results ---------------------------------------------------------------------------

def test_pq_txq_closed_forms_have_honest_kinds():
    """Eq. (7) bounds the mean; the max-delay bound bounds quantiles only when it applies; Cobham is an
    approximation of EF.delay.mean saying what it neglects."""
    from qosbound.systems.pq_txq.closed_form import closed_form_results
    from qosbound.systems import pq_txq

    raw = load_raw(FERRARI)
    res = {r.metric: r for r in closed_form_results(pq_txq.params(build(raw)))}
    wc, mx, cob = res["EF.delay.worst_case_mean"], res["EF.delay.max"], res["EF.delay.cobham_mean"]
    assert wc.kind is Kind.UPPER_BOUND and wc.bounds_metric("EF.delay.mean")
    assert mx.kind is Kind.UPPER_BOUND and mx.bounds_metric("EF.delay.p99.9") and mx.bounds_metric("EF.delay.max")
    assert cob.kind is Kind.APPROXIMATION and cob.estimates == "EF.delay.mean" and "PQ capacity" in cob.interval.neglects
    # Poisson EF with a token bucket smaller than the PQ: the bound does not hold for these arrivals
    raw["traffic"]["EF"]["burst"] = "256 B"
    mx2 = {r.metric: r for r in closed_form_results(pq_txq.params(build(raw)))}["EF.delay.max"]
    assert mx2.kind is Kind.APPROXIMATION and not mx2.bounds_metric("EF.delay.p99")
    assert "token bucket" in mx2.interval.neglects


def test_observed_maximum_is_a_lower_bound_checked_against_the_bound():
    up = Result("EF.delay.max", "closed-form", 10e-3, "s", Interval.upper_bound(10e-3), bounds=("EF.delay.p*",))
    seen = Result("EF.delay.max", "simulated", 11e-3, "s", Interval.lower_bound(11e-3))
    (v,) = agreements([up, seen])
    assert v.status == "disagree" and "cross" in v.detail and v.metric == "EF.delay.max"
    ok = Result("EF.delay.max", "trace", 9e-3, "s", Interval.lower_bound(9e-3))
    assert agreements([up, ok])[0].status == "agree"


# ---- IMIX: rounded sizes make the model an upper bound -----------------------------------------------------

def test_imix_model_results_with_rounded_sizes_are_approximations_and_verify_passes(tmp_path, capsys):
    """With IMIX sizes the exact chain rounds them up to granules (the ring method does not cover 512-byte units):
    its results are approximations that say why they are not bounds (rounding can lower the delay and loss:
    docs/pq_txq.md, the labels table), the simulated estimates are compared with them as with approximations,
    and verify exits 0 on a scenario whose SLOs hold."""
    junit = tmp_path / "imix.xml"
    code = main(["verify", write(tmp_path, imix_raw()), "--json", "--quiet", "--junit", str(junit)])
    doc = json.loads(capsys.readouterr().out)
    model = [m for m in doc["metrics"] if m["method"] == "model-checked"]
    assert model and all(m["kind"] == "approximation" for m in model)
    assert all("rounded up" in m["interval"]["neglects"] and "not a bound" in m["interval"]["neglects"]
               for m in model)
    sim_vs_model = [v for v in doc["agreement_verdicts"] if v["method"] == "model-checked vs simulated"]
    assert sim_vs_model and all(v["result_kind"] == "approximation vs 95% CI" for v in sim_vs_model)
    assert all(v["status"] != "disagree" for v in sim_vs_model), [v["detail"] for v in sim_vs_model]
    assert all(v["status"] == "holds" for v in doc["slo_verdicts"])
    assert code == 0 and doc["exit_code"] == 0


# ---- verify: SLOs and method disagreement are separate outcomes --------------------------------------------

def _fake_system(monkeypatch, results):
    from qosbound.systems import pq_txq

    monkeypatch.setattr(pq_txq, "evaluate", lambda scn, methods, progress: [r for r in results if r.method in methods])


def test_verify_reports_disagreement_apart_from_slos_exit_3(tmp_path, capsys, monkeypatch):
    """Every SLO holds but two methods contradict each other: exit 3, the disagreement in its own section and
    never printed as a failed SLO."""
    se = 1e-5
    _fake_system(monkeypatch, [
        Result("EF.delay.mean", "model-checked", 5e-3, "s", Interval.numerical(5e-3 - 1e-12, 5e-3 + 1e-12)),
        Result("EF.delay.mean", "simulated", 6e-3, "s", Interval.ci(6e-3 - 2 * se, 6e-3 + 2 * se, 0.95, se=se, dof=7)),
    ])
    raw = load_raw(FERRARI)
    raw["slos"] = [{"metric": "EF.delay.mean", "max": "10 ms"}]
    code = main(["verify", write(tmp_path, raw), "--quiet", "--methods", "model-checked,simulated"])
    out = capsys.readouterr().out
    assert code == 3
    slo_part, agree_part = out.split("agreement between methods")
    assert "FAIL" not in out and "DISAGREE" in agree_part and "EF.delay.mean" in agree_part
    # one SLO judged by two methods is one SLO that holds, not two
    assert "SLOs 1 hold, 0 fail (2 method verdicts)" in out and "1 disagree" in out


# ---- JUnit ---------------------------------------------------------------------------------------------------

def test_junit_unique_names_with_metric_method_time_and_two_suites(tmp_path, capsys):
    raw = load_raw(FERRARI)
    raw["slos"] = raw["slos"] + [{"metric": "EF.delay.p99.9", "max": "14 ms"}]  # fails on the model
    junit = tmp_path / "r.xml"
    code = main(["verify", write(tmp_path, raw), "--methods", FAST, "--junit", str(junit), "--quiet"])
    capsys.readouterr()
    assert code == 1
    root = ET.parse(junit).getroot()
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"ferrari2001.slo", "ferrari2001.agreement"}
    cases = root.findall(".//testcase")
    names = [c.get("name") for c in cases]
    assert len(names) == len(set(names)), names
    for c in cases:
        assert float(c.get("time")) >= 0.0
        props = {p.get("name"): p.get("value") for p in c.iter("property")}
        assert props["metric"] in c.get("name") and props["kind"]
        assert all(m in c.get("name") for m in props["method"].split(" vs ") if m != "any") or \
            c.get("classname").endswith(".slo") and props["method"] in c.get("name")
    slo = suites["ferrari2001.slo"]
    assert slo.get("failures") == "1" and float(slo.get("time")) > 0
    (failed,) = [c for c in slo.findall("testcase") if c.find("failure") is not None]
    assert "EF.delay.p99.9" in failed.get("name") and "model-checked" in failed.get("name")
    assert suites["ferrari2001.agreement"].get("failures") == "0"
    assert int(suites["ferrari2001.agreement"].get("tests")) >= 5


def test_junit_written_for_an_input_error(tmp_path, capsys):
    """A scenario that does not load still gives CI a report: one failing testcase with the message, exit 2."""
    raw = load_raw(FERRARI)
    raw["link"]["rate"] = "100 kbit/s"  # EF 300 kbit/s: unstable
    junit = tmp_path / "r.xml"
    code = main(["verify", write(tmp_path, raw), "--junit", str(junit), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "unstable" in err
    root = ET.parse(junit).getroot()
    (case,) = root.findall(".//testcase")
    assert case.find("failure") is not None and "unstable" in case.find("failure").get("message")
    assert root.find("testsuite").get("failures") == "1" and case.get("time") is not None


# ---- incomplete reports (a run stopped by a signal) -------------------------------------------------------------

def _stop_at_the_simulator(monkeypatch):
    """The pq_txq system sends this test's process SIGTERM when asked to simulate (in the engine's child,
    after it reported the closed forms as done): a signal arriving at a known stage, in the test's own
    process (which runs the command in-process when numba's threads already run here: it works alike)."""
    import os
    import signal
    import time

    from qosbound.systems import pq_txq

    real = pq_txq.evaluate
    me = os.getpid()

    def evaluate(scn, methods, progress):
        if "simulated" in methods:
            os.kill(me, signal.SIGTERM)
            time.sleep(60)
        return real(scn, methods, progress)

    monkeypatch.setattr(pq_txq, "evaluate", evaluate)


def test_a_verify_stopped_by_sigterm_writes_what_it_judged_marked_incomplete(tmp_path, capsys, monkeypatch):
    """Stopped in the simulator after the closed forms and the model: the JUnit report has the verdicts judged
    so far as usual, and its .slo suite carries incomplete=true, the signal, the methods done and not done, an
    error testcase naming the signal and a skipped testcase per SLO no finished method judged."""
    _stop_at_the_simulator(monkeypatch)
    raw = load_raw(FERRARI)
    raw["slos"].append({"metric": "EF.delay.mean", "max": "50 ms", "method": "simulated"})
    junit = tmp_path / "r.xml"
    code = main(["verify", write(tmp_path, raw), "--junit", str(junit), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 143 and err.strip().splitlines() == [
        "qosbound: terminated (SIGTERM): evaluating ferrari2001 stopped"], err
    assert "ferrari2001: incomplete" in out and "not judged" in out
    root = ET.parse(junit).getroot()
    slo = next(x for x in root.iter("testsuite") if x.get("name") == "ferrari2001.slo")
    assert len(slo.findall("properties")) == 1  # the inputs as understood and the marks, in one element
    props = {p.get("name"): p.get("value") for p in slo.find("properties").iter("property")}
    assert {k: props[k] for k in ("incomplete", "signal", "methods_done", "methods_not_done")} == {
        "incomplete": "true", "signal": "SIGTERM", "methods_done": "closed-form, model-checked",
        "methods_not_done": "simulated"}
    assert any(k.startswith("input.") for k in props)  # the inputs as understood, as in a finished report
    cases = list(slo.iter("testcase"))
    assert int(slo.get("tests")) == len(cases) and slo.get("errors") == "1"
    (error,) = [c for c in cases if c.find("error") is not None]
    assert error.get("name") == "interrupted by SIGTERM" and "SIGTERM" in error.find("error").get("message")
    skipped = [c.get("name") for c in cases if c.find("skipped") is not None]
    assert skipped == ["EF.delay.mean <= 50 ms [not judged]"] and slo.get("skipped") == "1"
    judged = [c for c in cases if c.find("error") is None and c.find("skipped") is None]
    assert judged and all("model-checked" in c.get("name") or "closed-form" in c.get("name") for c in judged)
    assert root.find(".//testsuite[@name='ferrari2001.agreement']") is not None


def test_a_stopped_verify_json_says_complete_false_and_what_was_done(tmp_path, capsys, monkeypatch):
    _stop_at_the_simulator(monkeypatch)
    code = main(["verify", str(FERRARI), "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 143 and doc["complete"] is False and doc["exit_code"] == 143
    i = doc["interrupted"]
    assert (i["signal"], i["exit_code"], i["methods_done"], i["methods_not_done"]) == (
        "SIGTERM", 143, ["closed-form", "model-checked"], ["simulated"])
    assert {v["method"] for v in doc["slo_verdicts"]} <= {"closed-form", "model-checked"} and doc["slo_verdicts"]


def test_a_finished_report_says_complete(tmp_path, capsys):
    code = main(["verify", str(FERRARI), "--methods", FAST, "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["complete"] is True and "interrupted" not in doc and code in (0, 1, 3)


# ---- display ---------------------------------------------------------------------------------------------------

def test_a_tiny_numerical_interval_is_not_printed_as_denormal_brackets():
    from qosbound.report import fmt_interval

    r = Result("EF.loss", "model-checked", 0.0, "1", Interval.numerical(0.0, 1e-310))
    text = fmt_interval(r)
    assert "e-310" not in text.split("±")[0] and "[" not in text and text.startswith("numerical")
    r2 = Result("EF.delay.mean", "model-checked", 7.8756e-3, "s", Interval.numerical(7.8756e-3 - 1e-12, 7.8756e-3 + 1e-12))
    assert "±" in fmt_interval(r2) and "s" in fmt_interval(r2).split("±")[1]


def test_model_probabilities_stay_in_0_1(tmp_path):
    """A model loss of 0 (CBR EF, large PQ) has an interval within [0, 1], not [-1e-310, 1e-310]."""
    from qosbound.systems import pq_txq

    raw = load_raw(FERRARI)
    raw["traffic"]["EF"]["arrivals"] = "cbr"
    raw["pq"]["capacity"] = 20
    res = {r.metric: r for r in pq_txq.evaluate(build(raw), ["model-checked"], QUIET)}
    loss = res["EF.loss"]
    assert loss.interval.low >= 0.0 and loss.interval.high <= 1.0
    for r in res.values():
        if r.unit == "1":
            assert 0.0 <= r.interval.low <= r.interval.high <= 1.0


def test_missing_slo_shows_its_limit_with_a_unit_and_omitted_results_say_why():
    from qosbound.systems import pq_txq
    from qosbound.verdicts import judge_slos

    raw = load_raw(FERRARI)
    raw["slos"] = [{"metric": "EF.delay.p99", "max": "5 ms", "method": "simulated"}]
    scn = build(raw)
    loss = Result("EF.loss", "simulated", 1.0, "1", Interval.ci(0.99, 1.0, 0.95, se=0.001, dof=7),
                  {"omitted": {"EF.delay.*": "no EF packet was delivered"}})
    (v,) = judge_slos(pq_txq, scn, [loss])
    assert v.status == "missing" and v.unit == "s" and v.limit == pytest.approx(5e-3)
    assert "no EF packet was delivered" in v.detail


def test_an_all_dropped_class_has_no_delay_in_a_trace():
    import numpy as np

    from qosbound.validation.compare import trace_results
    from qosbound.validation.trace import make_table

    n = 400
    t = make_table(flow="a", cls="AF1", size=100, arrival=np.arange(n) * 1e-3, departure=np.full(n, np.nan),
                   dropped=np.ones(n, dtype=bool))
    res = {r.metric: r for r in trace_results(t, ["AF1.delay.mean", "AF1.drop"])}
    assert "AF1.delay.mean" not in res and res["AF1.drop"].value == 1.0


def test_text_report_shows_kinds_and_what_approximations_neglect(tmp_path, capsys):
    code = main(["plan", str(FERRARI), "--methods", FAST, "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    for word in ("upper bound", "numerical", "approximation (neglects", "SLO verdicts", "agreement between methods"):
        assert word in out


# ---- statistics: one module ---------------------------------------------------------------------------------

def test_replications_are_seeded_one_way():
    """The packet simulator's numba seeds and the TFRC simulator's generators come from the same spawned
    sequences of the scenario seed."""
    import numpy as np

    from qosbound.validation.stats import replication_rngs, replication_seeds

    seeds = replication_seeds(7, 3)
    ss = np.random.SeedSequence(7).spawn(3)
    assert [int(s) for s in seeds] == [int(x.generate_state(1, np.uint32)[0]) for x in ss]
    a = [g.random() for g in replication_rngs(7, 3)]
    b = [np.random.default_rng(x).random() for x in ss]
    assert a == b
    # separate streams (e.g. one per flow) are independent of each other and reproducible
    assert replication_rngs(7, 1, (1,))[0].random() != replication_rngs(7, 1, (2,))[0].random()
    assert replication_rngs(7, 1, (1,))[0].random() == replication_rngs(7, 1, (1,))[0].random()


def test_simulated_intervals_use_the_scenario_confidence(tmp_path):
    from qosbound.systems import pq_txq

    raw = load_raw(FERRARI)
    raw["methods"]["simulated"] = {"packets": 20000, "replications": 4, "seed": 3, "confidence": 0.9}
    res = [r for r in pq_txq.evaluate(build(raw), ["simulated"], QUIET) if r.kind is Kind.CI]
    assert res and all(r.interval.level == 0.9 and r.interval.dof == 3 for r in res)
    from qosbound.validation.stats import two_sided_t

    mean = next(r for r in res if r.metric == "EF.delay.mean")
    assert mean.interval.half_width == pytest.approx(two_sided_t(0.9, 3) * mean.interval.se)


def test_junit_into_a_missing_directory_is_refused_before_evaluating(tmp_path, capsys, monkeypatch):
    from qosbound.systems import pq_txq

    def boom(*a, **k):  # pragma: no cover - must not be reached
        raise AssertionError("evaluated before checking the report path")

    monkeypatch.setattr(pq_txq, "evaluate", boom)
    code = main(["verify", str(FERRARI), "--junit", str(tmp_path / "no" / "r.xml"), "--quiet"])
    assert code == 2 and "does not exist" in capsys.readouterr().err


# ---- counts per SLO, not per method verdict ------------------------------------------------------------------

def _v(name, metric, method, status):
    return Verdict(kind="slo", name=name, metric=metric, method=method, status=status, value=1.0, limit=1.0,
                   unit="s", margin=0.0 if status == "holds" else -1.0)


def test_two_slos_judged_by_three_methods_are_two_slos():
    """'SLOs 0 hold, 6 fail' for a file with two SLOs: the count is per SLO (the exit code's rule: an SLO fails
    when a verdict on it fails), and says how many method verdicts there were."""
    from qosbound.report import slo_counts, slo_outcomes, slo_summary

    both_fail = [_v(n, m, meth, "violated") for n, m in (("A <= 1 ms", "EF.delay.p99"), ("B <= 1e-4", "EF.loss"))
                 for meth in ("closed-form", "model-checked", "simulated")]
    assert slo_summary(both_fail) == "SLOs 0 hold, 2 fail (6 method verdicts)"
    mixed = [_v("A <= 1 ms", "EF.delay.p99", "model-checked", "holds"),
             _v("A <= 1 ms", "EF.delay.p99", "simulated", "violated"),
             _v("B <= 1e-4", "EF.loss", "model-checked", "holds"), _v("B <= 1e-4", "EF.loss", "simulated", "inconclusive")]
    assert [(n, st) for n, st, _ in slo_outcomes(mixed)] == [("A <= 1 ms", "violated"), ("B <= 1e-4", "inconclusive")]
    assert slo_counts(mixed) == {"slos": 2, "hold": 1, "fail": 1, "inconclusive": 1, "missing": 0, "verdicts": 4}
    missing = [_v("C >= 1 Mbit/s", "f.rate", "any", "missing")]
    assert slo_summary(missing) == "SLOs 0 hold, 1 fail (1 not judged: no requested method gives the metric)"


def test_verify_counts_slos_and_names_the_method_that_fails_one(tmp_path, capsys, monkeypatch):
    """An SLO held by the model and violated by the simulation is one failing SLO, and the report says which
    method failed it."""
    se = 1e-6
    _fake_system(monkeypatch, [
        Result("EF.delay.mean", "model-checked", 5e-3, "s", Interval.numerical(5e-3 - 1e-12, 5e-3 + 1e-12)),
        Result("EF.delay.mean", "simulated", 12e-3, "s", Interval.ci(12e-3 - 2 * se, 12e-3 + 2 * se, 0.95, se=se,
                                                                      dof=7)),
        Result("EF.loss", "model-checked", 1e-6, "1", Interval.numerical(1e-6, 1e-6)),
    ])
    raw = load_raw(FERRARI)
    raw["slos"] = [{"metric": "EF.delay.mean", "max": "10 ms"}, {"metric": "EF.loss", "max": 1e-4}]
    code = main(["verify", write(tmp_path, raw), "--quiet", "--methods", "model-checked,simulated", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["slo_counts"] == {"slos": 2, "hold": 1, "fail": 1, "inconclusive": 0, "missing": 0,
                                               "verdicts": 3}
    main(["verify", write(tmp_path, raw), "--quiet", "--methods", "model-checked,simulated"])
    out = capsys.readouterr().out
    assert "=> EF.delay.mean <= 10 ms fails (by simulated; an SLO fails when a verdict on it fails)" in out
    assert "SLOs 1 hold, 1 fail (3 method verdicts)" in out
