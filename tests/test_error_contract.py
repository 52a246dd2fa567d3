"""The error contract: every refusal is one line naming file, field and problem, with a documented exit code.

0 ok, 1 SLO violated, 2 bad input, 3 methods disagree, 4 resource exhausted, 70 internal error (hint:
--debug), 130 interrupted, 143 terminated.
"""

from __future__ import annotations

import pickle
import time
from pathlib import Path

import pytest
import yaml

from qosbound import cli
from qosbound.cli import main
from qosbound.errors import InternalError, Interrupted, ResourceError, ScenarioError
from qosbound.scenario import load_raw
from tests.helpers import one_line as _one_line

ROOT = Path(__file__).resolve().parents[1]
FERRARI = ROOT / "examples" / "ferrari2001.yaml"


def _write(tmp_path, raw, name="s.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(raw))
    return str(p)


def _ferrari(**changes):
    raw = load_raw(FERRARI)
    for path, value in changes.items():
        cur = raw
        parts = path.split("__")
        for k in parts[:-1]:
            cur = cur[k]
        cur[parts[-1]] = value
    return raw


def _run(capsys, *argv):
    code = main(list(argv))
    cap = capsys.readouterr()
    return code, cap.out, cap.err




def test_exit_codes_are_documented_in_help(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for code in ("0 ", "1 ", "2 ", "3 ", "4 ", "70 ", "130 ", "143 "):
        assert f"\n  {code}" in out or f" {code.strip()} terminated" in out, code
    assert "--debug" in out and "--max-memory" in cli.__doc__ + out


def test_a_signal_at_any_point_of_main_is_one_line_and_its_exit_code(capsys, monkeypatch):
    """SIGINT while the scenario is read (in this process, no engine involved): exit 130, one line, and the
    second signal of a repeated Ctrl-C changes nothing."""
    import os
    import signal

    from qosbound import scenario

    def load(path):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            pass  # the handler runs at the next bytecode boundary: the first signal raises here
        raise AssertionError("the signal did not stop the run")

    monkeypatch.setattr(scenario, "load", load)
    assert main(["plan", str(FERRARI), "--quiet"]) == 130
    assert _one_line(capsys.readouterr().err) == "qosbound: interrupted (SIGINT)"


def test_interrupted_pickles_with_what_was_done():
    i = pickle.loads(pickle.dumps(Interrupted("terminated (SIGTERM): x stopped", 143, {"feasible": 3})))
    assert (i.exit_code, i.partial, str(i)) == (143, {"feasible": 3}, "terminated (SIGTERM): x stopped")


def test_errors_pickle_with_their_fields():
    e = pickle.loads(pickle.dumps(ScenarioError("bad", file="f.yaml", field="a.b")))
    assert (e.file, e.field, str(e)) == ("f.yaml", "a.b", "f.yaml: field 'a.b': bad")
    r = pickle.loads(pickle.dumps(ResourceError("big", field="pq.capacity")))
    assert isinstance(r, ResourceError) and r.exit_code == 4 and r.field == "pq.capacity"
    i = pickle.loads(pickle.dumps(Interrupted("terminated", 143)))
    assert i.exit_code == 143
    assert pickle.loads(pickle.dumps(InternalError("x", "tb"))).details == "tb"


def _boom(*args, **kwargs):
    raise RuntimeError("something internal broke")


def test_an_internal_error_is_one_line_exit_70_with_a_debug_hint(tmp_path, capsys, monkeypatch):
    from qosbound.systems import pq_txq

    monkeypatch.setattr(pq_txq, "evaluate", _boom)
    code, _, err = _run(capsys, "plan", str(FERRARI), "--methods", "closed-form", "--quiet")
    assert code == 70
    line = _one_line(err)
    assert "internal error" in line and "RuntimeError: something internal broke" in line and "--debug" in line
    code, _, err = _run(capsys, "--debug", "plan", str(FERRARI), "--methods", "closed-form", "--quiet")
    assert code == 70 and "Traceback" in err and "_boom" in err


def _oom(*args, **kwargs):
    raise MemoryError()


def test_memory_exhaustion_is_a_resource_error_not_bad_input(capsys, monkeypatch):
    from qosbound.systems import pq_txq

    monkeypatch.setattr(pq_txq, "evaluate", _oom)
    code, _, err = _run(capsys, "plan", str(FERRARI), "--methods", "closed-form", "--quiet")
    assert code == 4 and "out of memory" in _one_line(err)


@pytest.mark.parametrize("slos,field,needle", [
    ([{"metric": "EF.delay.mean", "max": "10 ms"}, {"metric": "EF.delay.mean", "max": "10 ms"}], "slos[1]",
     "duplicates slos[0]"),
    ([{"metric": "EF.loss", "max": 2}], "slos[0].max", "its limit must lie in [0, 1]"),
    ([{"metric": "EF.delay.mean", "max": "-1 ms"}], "slos[0].max", "cannot be negative"),
    ([{"metric": "EF.jitter", "max": "1 ms"}], "slos[0].metric", "unknown metric 'EF.jitter'"),
    ([{"metric": "AF1.delay.mean", "max": "1 ms"}], "slos[0].metric", "unknown metric"),
])
def test_bad_slos_are_refused_at_their_field(tmp_path, capsys, slos, field, needle):
    path = _write(tmp_path, _ferrari(slos=slos))
    code, _, err = _run(capsys, "plan", path, "--methods", "closed-form", "--quiet")
    assert code == 2
    line = _one_line(err)
    assert f"{path}: field '{field}'" in line and needle in line, line


def test_an_slo_on_an_undeclared_af_class_is_refused(tmp_path, capsys):
    raw = load_raw(ROOT / "examples" / "qstp2008.yaml")
    raw["slos"] = [{"metric": "AF4.drop", "max": 0.01}]
    path = _write(tmp_path, raw)
    code, _, err = _run(capsys, "plan", path, "--methods", "closed-form", "--quiet")
    assert code == 2
    assert "field 'slos[0].metric': the scenario declares no class or flow 'AF4' (it has AF1)" in _one_line(err)


def test_special_files_are_not_read_as_scenarios(tmp_path, capsys):
    code, _, err = _run(capsys, "plan", "/dev/zero", "--quiet")
    assert code == 2 and "/dev/zero: not a regular file" in _one_line(err)
    code, _, err = _run(capsys, "plan", str(tmp_path), "--quiet")
    assert code == 2 and "is a directory" in _one_line(err)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (5 * 2**20))
    code, _, err = _run(capsys, "plan", str(big), "--quiet")
    assert code == 2 and "too large for a scenario file" in _one_line(err)
    lat = tmp_path / "latin.yaml"
    lat.write_bytes("name: caf\xe9\n".encode("latin-1"))
    code, _, err = _run(capsys, "plan", str(lat), "--quiet")
    assert code == 2 and "line 1: not UTF-8 text (byte 0xe9)" in _one_line(err)


@pytest.mark.parametrize("rate", ["1e-300 bit/s", 1e300])
def test_an_absurd_link_rate_names_the_link_not_an_internal_parameter(tmp_path, capsys, rate):
    """1e-300 bit/s overflowed (OverflowError traceback); 1e300 bit/s was reported at 'm2[0]'."""
    raw = _ferrari(link__rate=rate)
    raw["traffic"]["EF"]["rate"] = 1e-310 if isinstance(rate, str) else 1e5
    path = _write(tmp_path, raw)
    code, _, err = _run(capsys, "plan", path, "--methods", "closed-form", "--quiet")
    assert code == 2
    line = _one_line(err)
    assert "field 'link.rate'" in line and "m2" not in line


def test_a_pq_too_large_for_the_model_is_refused_with_an_estimate_before_rendering(tmp_path, capsys):
    path = _write(tmp_path, _ferrari(pq__capacity=10**7))
    t0 = time.monotonic()
    code, _, err = _run(capsys, "plan", path, "--methods", "model-checked", "--quiet")
    assert code == 4
    line = _one_line(err)
    assert "field 'pq.capacity'" in line and "1e+14 terms" in line and "disable model-checked" in line
    assert time.monotonic() - t0 < 60  # refused, not rendered (rendering ran out of memory)
    code, _, err = _run(capsys, "model", "render", path, "--out", str(tmp_path))
    assert code == 4 and "pq.capacity" in _one_line(err)


def test_a_simulation_beyond_the_budget_is_refused_with_the_estimate(tmp_path, capsys):
    raw = _ferrari()
    raw["methods"]["simulated"] = {"packets": 10**15, "replications": 8}
    path = _write(tmp_path, raw)
    code, _, err = _run(capsys, "plan", path, "--quiet")
    assert code == 4
    line = _one_line(err)
    assert "field 'methods.simulated.packets'" in line and "8e+15 simulated packets" in line
    assert "years" in line and "max_total_packets" in line


def test_a_packet_larger_than_any_ip_packet_is_refused(tmp_path, capsys):
    raw = _ferrari()
    raw["traffic"]["BE"]["sizes"] = [{"size": "1 GB", "p": 1}]
    path = _write(tmp_path, raw)
    code, _, err = _run(capsys, "plan", path, "--quiet")
    assert code == 2
    assert "field 'traffic.BE.sizes[0].size'" in _one_line(err) and "65535 B" in _one_line(err)


def _must_not_run(*args, **kwargs):  # pragma: no cover - called only if the check comes too late
    raise AssertionError("the evaluation ran before the output was checked")


@pytest.mark.parametrize("argv,needle", [
    (["verify", str(FERRARI), "--junit", "/nonexistent-qosbound-dir/r.xml"], "does not exist"),
    (["verify", str(FERRARI), "--junit", "/dev/full"], "No space left on device"),
    (["verify", str(FERRARI), "--junit", "{tmp}"], "it is a folder"),
    (["validate", str(FERRARI), "--simulate", "--out", "{tmp}/afile"], "exists and is not a folder"),
    (["validate", str(FERRARI), "--simulate", "--out", "/dev/full"], "exists and is not a folder"),
    (["model", "render", str(FERRARI), "--out", "{tmp}/afile"], "exists and is not a folder"),
])
def test_unwritable_outputs_are_refused_before_the_evaluation(tmp_path, capsys, monkeypatch, argv, needle):
    from qosbound.systems import pq_txq

    (tmp_path / "afile").write_text("x")
    monkeypatch.setattr(pq_txq, "evaluate", _must_not_run)
    monkeypatch.setattr(pq_txq, "render_models", _must_not_run)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, _, err = _run(capsys, *argv, *(["--quiet"] if argv[0] != "model" else []))
    assert code == 2 and needle in _one_line(err)


def test_negative_looking_option_values_reach_the_command(capsys):
    """argparse alone says 'expected one argument' for ``--rtt -5ms``."""
    code, _, err = _run(capsys, "tfrc", "--rtt", "-5ms", "--loss", "1%")
    assert code == 2 and "--rtt: must be positive, got '-5ms'" in _one_line(err)
    code, _, err = _run(capsys, "tfrc", "--rtt", "30ms", "--loss", "-1%")
    assert code == 2 and "--loss" in _one_line(err)


def test_bad_max_memory_is_an_input_error(capsys):
    code, _, err = _run(capsys, "--max-memory", "10 kB", "tfrc", "--rtt", "30ms", "--loss", "1%")
    assert code == 2 and "--max-memory" in _one_line(err)
