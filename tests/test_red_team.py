"""Adversarial inputs that once ended in an internal error (exit 70), a hang or an out-of-memory kill: each is now
one line naming the file or option, the field and the problem, with exit 2 (bad input) or 4 (refused by its
estimate), and nothing is computed first."""

from __future__ import annotations

import os

import pytest
import yaml

from qosbound.cli import main
from qosbound.scenario import load_raw
from tests.helpers import example, one_line


def _run(capsys, *argv):
    code = main(list(argv))
    return code, one_line(capsys.readouterr().err) if code not in (0, 1, 3) else ""


def _write(tmp_path, raw, name="s.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(raw))
    return str(p)


def _must_not_run(*args, **kwargs):  # pragma: no cover - called only if a check comes too late
    raise AssertionError("the evaluation ran before the input was refused")


@pytest.fixture
def loop(tmp_path):
    """A symlink loop: a.yaml -> b.yaml -> a.yaml."""
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    os.symlink(b, a)
    os.symlink(a, b)
    return str(a)


@pytest.mark.parametrize("argv", [["plan", "{loop}"], ["verify", "{loop}"], ["plan", "{loop}", "{ferrari}"],
                                  ["model", "render", "{loop}", "--out", "{tmp}/r"],
                                  ["model", "check", "{loop}"], ["tfrc", "--csv", "{loop}"],
                                  ["validate", "{ferrari}", "--trace", "{loop}"]])
def test_a_symlink_loop_is_refused_as_unreadable(capsys, tmp_path, loop, argv):
    """plan on a symlink loop was 'internal error: RuntimeError: Symlink loop' (exit 70)."""
    argv = [a.format(loop=loop, tmp=tmp_path, ferrari=example("ferrari2001")) for a in argv]
    code = main(argv + (["--quiet"] if argv[0] in ("plan", "verify", "validate") else []))
    out, err = capsys.readouterr()
    if argv[0] == "plan" and len(argv) == 3:  # a batch: the loop is one row of the summary, with its error
        assert code == 2 and "Too many levels of symbolic links" in out and "Traceback" not in out + err
        return
    line = one_line(err)
    assert code == 2 and loop in line and "Too many levels of symbolic links" in line, line


@pytest.mark.parametrize("argv", [
    ["validate", "{ferrari}", "--simulate", "--quiet", "--out", "/proc/qosbound-no/such"],
    ["model", "render", "{ferrari}", "--out", "/proc/qosbound-no/such"],
    ["reproduce", "ferrari2001", "--quick", "--quiet", "--out", "/proc/qosbound-no/such"],
    ["sweep", "{ferrari}", "--vary", "pq.capacity=5..10:2", "--quiet", "--out", "/proc/qosbound-no/such"],
    ["verify", "{ferrari}", "--quiet", "--junit", "/proc/qosbound-no.xml"],
    ["sweep", "{ferrari}", "--vary", "pq.capacity=5..10:2", "--quiet", "--out", "{tmp}/o", "--cache", "/proc/q/c"],
])
def test_an_output_that_cannot_be_created_names_the_path_before_any_work(capsys, monkeypatch, tmp_path, argv):
    """Root passes os.access on /proc, so the folder looked writable and `validate --out /proc/x/y` failed at the
    end with FileNotFoundError (exit 70); the check is now a probe that creates (and removes) what it needs."""
    from qosbound.systems import pq_txq

    monkeypatch.setattr(pq_txq, "evaluate", _must_not_run)
    monkeypatch.setattr(pq_txq, "render_models", _must_not_run)
    argv = [a.format(ferrari=example("ferrari2001"), tmp=tmp_path) for a in argv]
    code, line = _run(capsys, *argv)
    flag = next(a for a in ("--out", "--junit", "--cache") if a in argv and argv[argv.index(a) + 1].startswith("/proc"))
    assert code == 2 and line.startswith(f"qosbound: {flag}: cannot") and "/proc/q" in line, line


def test_the_output_probe_leaves_nothing_behind(tmp_path, capsys, monkeypatch):
    """Checking `--out a/b/c` creates the missing folders to see that it can, then removes them again."""
    from qosbound.model_cmd import check_output_dir

    check_output_dir(str(tmp_path / "a" / "b" / "c"))
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "kept").mkdir()
    check_output_dir(str(tmp_path / "kept"))
    assert [p.name for p in tmp_path.iterdir()] == ["kept"] and list((tmp_path / "kept").iterdir()) == []


@pytest.mark.parametrize("hints", [[True, True], [True, False], True, [1, True]])
def test_tsq_hints_given_as_booleans_are_refused(tmp_path, capsys, hints):
    """`hints: [true, true]` was read as hints [1, 1] (pydantic's lax bool-to-int) and accepted."""
    raw = load_raw(example("tsq_audio"))
    raw["metrics"]["hints"] = hints
    code, line = _run(capsys, "plan", _write(tmp_path, raw), "--methods", "closed-form", "--quiet")
    assert code == 2 and "field 'metrics.hints'" in line, line


@pytest.mark.parametrize("section,field,value", [
    ("aqm", "q_max", True), ("tsq", "hint_bits", True), ("link", "rate", True), ("aqm", "q_ref", False)])
def test_a_boolean_in_a_number_field_is_refused(tmp_path, capsys, section, field, value):
    raw = load_raw(example("tsq_audio"))
    raw[section][field] = value
    code, line = _run(capsys, "plan", _write(tmp_path, raw), "--methods", "closed-form", "--quiet")
    assert code == 2 and f"field '{section}.{field}'" in line and "boolean" in line, line


@pytest.mark.parametrize("change,field", [
    ({"size": 1e308}, "flows.flow1.size"), ({"size": "1e308 B"}, "flows.flow1.size"),
    ({"rtt": "1e-307 s"}, "flows.flow1"), ({"rtt": "1e300 s", "loss": 1e-300}, "flows.flow1")])
def test_a_tfrc_input_giving_an_infinite_rate_is_refused_at_the_flow(tmp_path, capsys, change, field):
    """A TFRC packet of 1e308 B gave 'internal error: InconsistentResult: value inf is not finite' (exit 70)."""
    raw = load_raw(example("qstp_gtfrc"))
    raw.pop("network")
    raw["methods"].pop("simulated")
    raw["flows"]["flow1"].update(change)
    code, line = _run(capsys, "plan", _write(tmp_path, raw), "--quiet")
    assert code == 2 and f"field '{field}" in line, line


def test_validate_simulate_on_tfrc_without_a_network_names_the_missing_section(tmp_path, capsys):
    """Without methods.simulated the TFRC schema leaves the options unset: `validate --simulate` was an
    AttributeError ('NoneType' object has no attribute 'seed')."""
    raw = load_raw(example("qstp_gtfrc"))
    raw.pop("network")
    raw["methods"].pop("simulated")
    code, line = _run(capsys, "validate", _write(tmp_path, raw), "--simulate", "--quiet", "--out", str(tmp_path / "o"))
    assert code == 2 and "field 'network'" in line and "needs a 'network' section" in line, line


def test_tfrc_csv_from_a_fifo_is_refused_instead_of_waiting(tmp_path, capsys):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    code, line = _run(capsys, "tfrc", "--csv", str(fifo))
    assert code == 2 and "not a regular file" in line


def test_a_junit_file_on_a_fifo_is_refused_instead_of_waiting(tmp_path, capsys, monkeypatch):
    from qosbound.systems import pq_txq

    monkeypatch.setattr(pq_txq, "evaluate", _must_not_run)
    fifo = tmp_path / "pipe.xml"
    os.mkfifo(fifo)
    code, line = _run(capsys, "verify", str(example("ferrari2001")), "--junit", str(fifo), "--quiet")
    assert code == 2 and "--junit" in line and "FIFO" in line
