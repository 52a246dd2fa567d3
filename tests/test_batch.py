"""``plan`` and ``verify`` over many scenarios: one row per scenario, one JUnit report, one JSON document, and
the batch's exit code the most serious of its scenarios' (70 > 2 > 4 > 1 > 3 > 0)."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

import pytest
import yaml

from qosbound.batch import SEVERITY, batch_exit_code
from qosbound.cli import main
from tests.helpers import EXAMPLES, one_line

ROUTER = EXAMPLES / "edge-router"  # three fast ports: wan0 holds, wan1 violates a bound, video (tfrc) holds


def _router(tmp_path, *extra: tuple[str, str]):
    """A copy of the edge router's ports in a folder of its own, with extra files (name, text)."""
    d = tmp_path / "ports"
    shutil.copytree(ROUTER, d)
    for name, text in extra:
        (d / name).write_text(text)
    return d


BROKEN = ("broken.yaml", "name: broken\nsystem: pq_txq\nlink: {rate: 2 MB}\n")


def _json(capsys, *argv):
    code = main([*argv, "--json", "--quiet"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def _single(capsys, command, path):
    code = main([command, str(path), "--json", "--quiet"])
    return code, json.loads(capsys.readouterr().out)


def test_the_precedence_of_exit_codes():
    """No verdict (internal error, bad input, resource) outranks a failing verdict; a violated SLO outranks a
    disagreement; an unknown code ranks first."""
    assert SEVERITY == (70, 2, 4, 1, 3, 0)
    assert batch_exit_code([]) == 0
    assert batch_exit_code([0, 3, 0]) == 3
    assert batch_exit_code([3, 1, 0]) == 1
    assert batch_exit_code([1, 4]) == 4
    assert batch_exit_code([4, 2, 1]) == 2
    assert batch_exit_code([2, 70, 3]) == 70
    assert batch_exit_code([0, 99, 70]) == 99


def test_a_folder_is_one_row_per_port_and_a_bad_file_does_not_stop_the_others(tmp_path, capsys):
    """verify over a folder: each port judged as alone, the broken file a row with its one-line error, the
    batch exits 2 (bad input outranks the violated SLO of wan1)."""
    d = _router(tmp_path, BROKEN)
    code, doc = _json(capsys, "verify", str(d))
    assert code == 2 and doc["exit_code"] == 2
    rows = {s["scenario"]: s for s in doc["scenarios"]}
    assert [s["scenario"] for s in doc["scenarios"]] == ["broken", "video", "wan0", "wan1"]  # sorted by file name
    assert rows["broken"]["exit_code"] == 2 and rows["broken"]["system"] is None
    assert "field 'link.rate'" in rows["broken"]["error"] and "broken.yaml" in rows["broken"]["error"]
    assert rows["wan0"]["exit_code"] == 0 and rows["wan0"]["slos_hold"] and rows["video"]["exit_code"] == 0
    assert rows["wan1"]["exit_code"] == 1 and not rows["wan1"]["slos_hold"]
    failed = [v for v in rows["wan1"]["slo_verdicts"] if v["status"] == "violated"]
    assert [v["metric"] for v in failed] == ["EF.delay.worst_case_mean"] and failed[0]["margin"] < 0
    assert doc["counts"] == {"scenarios": 4, "pass": 2, "slo_violated": 1, "methods_disagree": 0,
                             "not_evaluated": 1}
    assert all(s["seconds"] >= 0 for s in doc["scenarios"])


@pytest.mark.parametrize("command", ["plan", "verify"])
def test_each_row_is_what_the_single_file_command_says(tmp_path, capsys, command):
    """A scenario's document in a batch equals the single-file command's (plus its seconds and its name in the
    reports), and its exit code too: the batch evaluates each port as `plan`/`verify` does alone."""
    d = _router(tmp_path)
    code, doc = _json(capsys, command, str(d / "wan1.yaml"), str(d / "video.yaml"), str(d / "wan0.yaml"))
    assert code == 1
    assert [s["file"] for s in doc["scenarios"]] == [str(d / f) for f in ("wan1.yaml", "video.yaml", "wan0.yaml")]
    for row in doc["scenarios"]:
        single_code, single = _single(capsys, command, row["file"])
        assert row.pop("seconds") >= 0
        assert row.pop("suite") == row["scenario"]  # its name in the reports: the scenario's, unique here
        assert row == single and row["exit_code"] == single_code


def test_text_summary_one_table_failures_and_errors(tmp_path, capsys):
    d = _router(tmp_path, BROKEN)
    code = main(["plan", str(d), str(tmp_path / "missing.yaml"), "--quiet"])
    out = capsys.readouterr().out
    assert code == 2
    assert out.count("qosbound: 5 scenarios") == 1  # one table, no per-scenario report
    for name in ("broken", "video", "wan0", "wan1", "missing"):
        assert f"│ {name} " in out
    assert "error broken (exit 2):" in out and "'2 MB' has the wrong units" in out
    assert "error missing (exit 2):" in out and "missing.yaml: file not found" in out
    assert "wan1: FAIL EF.delay.worst_case_mean <= 25 ms: violated by" in out
    assert "5 scenarios in " in out and "2 pass, 1 violate an SLO, 0 only disagree between methods, 2 not evaluated; " \
                                       "exit 2" in out


def test_one_junit_report_a_suite_group_per_scenario(tmp_path, capsys):
    """The report holds NAME.slo and NAME.agreement per evaluated port and NAME.input for the broken file,
    every suite name unique, the failures where the verdicts are."""
    d = _router(tmp_path, BROKEN)
    junit = tmp_path / "ports.xml"
    code = main(["verify", str(d), "--junit", str(junit), "--quiet"])
    capsys.readouterr()
    assert code == 2
    root = ET.parse(junit).getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert len(suites) == len(root.findall("testsuite"))  # unique names
    assert set(suites) == {"broken.input", "video.slo", "video.agreement", "wan0.slo", "wan0.agreement",
                           "wan1.slo", "wan1.agreement"}
    assert suites["broken.input"].get("failures") == "1"
    failure = suites["broken.input"].find("testcase/failure")
    assert failure.get("type") == "ScenarioError" and "field 'link.rate'" in failure.get("message")
    assert suites["wan1.slo"].get("failures") == "1" and suites["wan1.slo"].get("tests") == "2"
    assert suites["wan0.slo"].get("failures") == "0" and suites["video.slo"].get("tests") == "1"
    failing = [c.get("name") for c in suites["wan1.slo"].iter("testcase") if c.find("failure") is not None]
    assert failing == ["EF.delay.worst_case_mean <= 25 ms [closed-form]"]


def test_same_name_twice_gets_unique_report_names_and_a_file_given_twice_runs_once(tmp_path, capsys):
    d = _router(tmp_path)
    shutil.copy(d / "wan0.yaml", d / "wan0-spare.yaml")
    junit = tmp_path / "r.xml"
    code, doc = _json(capsys, "verify", str(d / "wan0.yaml"), str(d / "wan0-spare.yaml"), str(d / "wan0.yaml"),
                      "--junit", str(junit))
    assert code == 0 and len(doc["scenarios"]) == 2
    names = [s.get("name") for s in ET.parse(junit).getroot().iter("testsuite")]
    assert names == ["wan0@wan0.slo", "wan0@wan0.agreement", "wan0@wan0-spare.slo", "wan0@wan0-spare.agreement"]


def test_a_quoted_glob_and_a_scenario_without_slos(tmp_path, capsys):
    """A glob pattern names the files it matches (sorted); verify refuses a file declaring no SLOs as bad
    input of that file only, plan evaluates it."""
    raw = yaml.safe_load((ROUTER / "wan0.yaml").read_text())
    raw.pop("slos")
    raw["name"] = "wan2"
    d = _router(tmp_path, ("wan2.yaml", yaml.safe_dump(raw)))
    code, doc = _json(capsys, "verify", str(d / "wan*.yaml"))
    assert [s["scenario"] for s in doc["scenarios"]] == ["wan0", "wan1", "wan2"]
    assert code == 2 and "declares no SLOs to verify" in doc["scenarios"][2]["error"]
    code, doc = _json(capsys, "plan", str(d / "wan*.yaml"))
    assert code == 1 and doc["scenarios"][2]["exit_code"] == 0 and doc["scenarios"][2]["metrics"]


@pytest.mark.parametrize("arg, words", [("{tmp}/empty", "is a directory with no scenario files"),
                                        ("{tmp}/*.yml", "no file matches the pattern")])
def test_a_folder_or_pattern_naming_nothing_is_refused(tmp_path, capsys, arg, words):
    (tmp_path / "empty").mkdir()
    code = main(["verify", str(ROUTER / "wan0.yaml"), arg.format(tmp=tmp_path), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and words in one_line(err)


def test_bad_batch_options_are_refused_before_any_file_is_read(tmp_path, capsys):
    for extra, words in ((["--max-states", "lots"], "--max-states: cannot read 'lots'"),
                         (["--workers", "0"], "--workers: must be between 1 and 1024"),
                         (["--methods", "guess"], "unknown method 'guess'")):
        code = main(["verify", str(ROUTER), "--quiet", *extra])
        assert code == 2 and words in one_line(capsys.readouterr().err), extra


def test_max_states_applies_to_the_ports_with_a_model_and_a_refused_model_is_exit_4(tmp_path, capsys):
    """--max-states budgets the scenarios that have a model and leaves the tfrc port alone; a model asked for by
    --methods above the budget is that port's exit 4, which a broken file (exit 2) outranks."""
    code, doc = _json(capsys, "verify", str(ROUTER), "--max-states", "10")
    assert code == 1 and not any("error" in s for s in doc["scenarios"])
    d = _router(tmp_path)
    (d / "video.yaml").unlink()
    shutil.copy(EXAMPLES / "ferrari2001.yaml", d / "ferrari2001.yaml")
    code, doc = _json(capsys, "verify", str(d / "ferrari2001.yaml"), str(d / "wan0.yaml"), "--methods",
                      "closed-form,model-checked", "--max-states", "10")
    assert code == 4 and [s["exit_code"] for s in doc["scenarios"]] == [4, 4]
    assert all("max_states" in s["error"] for s in doc["scenarios"])
    (d / "broken.yaml").write_text(BROKEN[1])
    code, doc = _json(capsys, "verify", str(d), "--methods", "closed-form,model-checked", "--max-states", "10")
    assert code == 2 and sorted(s["exit_code"] for s in doc["scenarios"]) == [2, 4, 4, 4]


def test_an_internal_error_in_one_scenario_leaves_the_others_their_verdicts(tmp_path, capsys, monkeypatch):
    from qosbound import cli

    real = cli._evaluate_methods

    def failing(system, scn, methods, progress, optional=()):
        if scn.name == "video":
            raise RuntimeError("a bug in the rate equation")
        return real(system, scn, methods, progress, optional)

    monkeypatch.setattr(cli, "_evaluate_methods", failing)
    code, doc = _json(capsys, "verify", str(ROUTER))
    rows = {s["scenario"]: s for s in doc["scenarios"]}
    assert code == 70 and rows["video"]["exit_code"] == 70
    assert "RuntimeError: a bug in the rate equation" in rows["video"]["error"]
    assert rows["wan0"]["exit_code"] == 0 and rows["wan1"]["exit_code"] == 1


def test_a_single_file_keeps_its_own_report(capsys):
    """One file (or a shipped example's name) is the single-file command: no table; a folder holding one file
    is a batch."""
    code = main(["verify", str(ROUTER / "wan1.yaml"), "--quiet"])
    out = capsys.readouterr().out
    assert code == 1 and out.startswith("inputs as understood\n") and "\nSLOs\n" in out and "scenarios" not in out
    assert "wan1: SLOs 1 hold, 1 fail; methods: 0 checks agree, 0 approximate, 0 disagree" in out


def test_two_dask_workers_give_the_same_rows_as_one_process(capsys):
    """The executor does not change a verdict: the documents of the serial child and of two Dask workers are
    equal but for the seconds."""
    pytest.importorskip("distributed")
    code1, serial = _json(capsys, "verify", str(ROUTER))
    code2, dask = _json(capsys, "verify", str(ROUTER), "--workers", "2")
    assert code1 == code2 == 1
    assert serial["executor"] == "one child process" and dask["executor"] == "2 Dask workers"
    for doc in (serial, dask):
        for s in doc["scenarios"]:
            s.pop("seconds")
    assert serial["scenarios"] == dask["scenarios"]


def test_max_states_overrides_a_file_that_does_not_set_it(capsys):
    """--max-states adds the budget to a model-checked section that has none (ferrari2001 gives only the engine
    and the precision): the model asked for by name is then refused, exit 4, naming the budget."""
    code = main(["plan", str(EXAMPLES / "ferrari2001.yaml"), "--methods", "closed-form,model-checked",
                 "--max-states", "10", "--quiet"])
    err = one_line(capsys.readouterr().err)
    assert code == 4 and "7.63e+03 states" in err and "above the budget of 10" in err
