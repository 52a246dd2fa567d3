"""``qosbound model check``: bad models, properties and options are refused in one line naming the problem."""

from __future__ import annotations

import json

import pytest

from qosbound.cli import main
from qosbound.models.engine import check
from qosbound.scenario import load
from tests.helpers import ROOT, one_line as _one_line


SMALL = """dtmc
const double p = 0.5;
module m
  s : [0..2] init 0;
  [] s=0 -> p : (s'=1) + (1-p) : (s'=2);
  [] s>0 -> (s'=s);
endmodule
label "one" = s=1;
rewards "r" s=1 : 1; endrewards
"""
PROPS = 'P=? [ F "one" ]\n'


def _files(tmp_path, model=SMALL, props=PROPS, name="m"):
    m = tmp_path / f"{name}.prism"
    p = tmp_path / f"{name}.props"
    if isinstance(model, bytes):
        m.write_bytes(model)
    else:
        m.write_text(model)
    p.write_text(props)
    return str(m), str(p)


def _check(capsys, *args):
    code = main(["model", "check", *args, "--quiet"])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_a_good_model_is_checked(tmp_path, capsys):
    m, _ = _files(tmp_path)
    code, out, err = _check(capsys, m, "--json")
    assert code == 0, err
    assert json.loads(out)["values"]["p1"] == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize("model,props,needle", [
    (SMALL.replace("(1-p) : (s'=2)", "0.6 : (s'=2)"), PROPS, "the probabilities sum to 1.1, not 1"),
    (SMALL.replace("(1-p) : (s'=2)", "-0.5 : (s'=2)"), PROPS, "negative probabilit"),
    (SMALL, 'P=? [ F "nolabel" ]\n', 'unknown label "nolabel" (the model\'s labels: "one")'),
    (SMALL, 'R{"nor"}=? [ F s=2 ]\n', 'unknown reward model "nor" (the model\'s reward models: "r")'),
    (SMALL.replace("s : [0..2] init 0;", "s : int init 0;"), PROPS, "variable 's' is an unbounded int"),
    (SMALL.replace("const double p = 0.5;", "const double p;"), PROPS,
     "undefined constant(s) p (double): give a value with --const"),
    (SMALL.replace("(1-p) : (s'=2)", "(1-p) (s'=2)"), PROPS, "line 5, column"),
    (SMALL, "P=? [ F s=9 & x=2 ]\n", "property 'p1'"),
])
def test_bad_models_and_properties_are_refused_naming_the_problem(tmp_path, capsys, model, props, needle):
    m, p = _files(tmp_path, model, props)
    code, out, err = _check(capsys, m, p)
    assert code == 2, err
    line = _one_line(err)
    assert needle in line and "m.pr" in line, line
    assert "^" not in line  # Storm's caret line is not the message


def test_a_syntax_error_shows_the_offending_line(tmp_path, capsys):
    m, p = _files(tmp_path, SMALL.replace("(1-p) : (s'=2)", "(1-p) (s'=2)"))
    code, _, err = _check(capsys, m, p)
    assert code == 2 and "[] s=0 -> p : (s'=1) + (1-p) (s'=2);" in _one_line(err)


@pytest.mark.parametrize("args,needle", [
    (["--precision", "nan"], "--precision: must be a number in (0, 0.1)"),
    (["--precision", "-1"], "--precision: must be a number in (0, 0.1)"),
    (["--precision", "0.5"], "--precision: must be a number in (0, 0.1)"),
    (["--const", "p=1e400"], "not a finite number"),
    (["--const", "q=1"], "--const q: the model declares no such constant"),
    (["--const", "p"], "expected NAME=VALUE"),
])
def test_bad_options_are_refused(tmp_path, capsys, args, needle):
    m, p = _files(tmp_path, SMALL.replace("const double p = 0.5;", "const double p;"))
    code, _, err = _check(capsys, m, p, *args)
    assert code == 2 and needle in _one_line(err)


HUGE = """dtmc
const int N;
module m
  a : [0..N] init 0;
  b : [0..N] init 0;
  [] true -> 0.5 : (a'=min(a+1,N)) + 0.5 : (b'=min(b+1,N));
endmodule
label "full" = a=N;
"""


def test_a_huge_state_space_is_estimated_and_refused_before_building(tmp_path, capsys):
    m, p = _files(tmp_path, HUGE, 'P=? [ F "full" ]\n')
    code, _, err = _check(capsys, m, p, "--const", "N=1e12")
    assert code == 4
    line = _one_line(err)
    assert "up to 1e24.0 states" in line and "--max-states" in line
    code, _, err = _check(capsys, m, p, "--const", "N=2.5")
    assert code == 2 and "declares an int" in _one_line(err)
    # an integral float for an int constant is accepted (it was 'Illegal type of expression' before)
    code, out, err = _check(capsys, m, p, "--const", "N=1e1")
    assert code == 0, err
    assert "121 states" in out


def test_the_state_budget_can_be_lowered(tmp_path, capsys):
    m, p = _files(tmp_path, HUGE, 'P=? [ F "full" ]\n')
    code, _, err = _check(capsys, m, p, "--const", "N=100", "--max-states", "1000")
    assert code == 4 and "above the budget of 1000 states" in _one_line(err)


def test_files_that_are_not_prism_text_are_refused(tmp_path, capsys):
    d = tmp_path / "dir.prism"
    d.mkdir()
    (tmp_path / "dir.props").write_text(PROPS)
    code, _, err = _check(capsys, str(d), str(tmp_path / "dir.props"))
    assert code == 2 and "is a directory" in _one_line(err)
    m, p = _files(tmp_path, SMALL.replace("dtmc", "// caf\xe9\ndtmc").encode("latin-1"), name="latin")
    code, _, err = _check(capsys, m, p)
    assert code == 2 and "line 1: not UTF-8 text (byte 0xe9)" in _one_line(err)
    code, _, err = _check(capsys, "/dev/zero", p)
    assert code == 2 and "not a regular file" in _one_line(err)
    code, _, err = _check(capsys, str(tmp_path / "missing.prism"), p)
    assert code == 2 and "file not found" in _one_line(err)


def test_committed_models_pass_the_preflight():
    """The checks must not refuse a model the project ships (they are valid on Storm and PRISM)."""
    from qosbound.commands.model import DEFAULT_MAX_STATES, preflight

    checked = 0
    for prism in sorted((ROOT / "models").glob("*.prism")):
        props = prism.with_suffix(".props")
        if not props.exists():
            continue
        import stormpy

        program = stormpy.parse_prism_program(str(prism), prism_compatibility=True)
        consts = {c.name: (1 if str(c.type) == "int" else 0.5 if str(c.type) == "rational" else True)
                  for c in program.constants if not c.defined}
        if consts:
            continue  # needs real parameter values; the scenario tests render and check those
        preflight(str(prism), prism.read_text(), props.read_text(), {}, DEFAULT_MAX_STATES, str(props))
        checked += 1
    assert checked >= 1


# `qosbound model render` writes self-contained PRISM files whose results equal the scenario's own run.


def test_af_render_gives_the_same_drops_as_the_model_method(tmp_path, capsys):
    """Each rendered AF class model, checked on its own, reproduces check_wred's drop probabilities."""
    from qosbound.models.af import check_wred
    from qosbound.systems.af import class_inputs

    scn = load(ROOT / "examples" / "takeo2003.yaml")
    assert main(["model", "render", str(ROOT / "examples" / "takeo2003.yaml"), "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    for ci in class_inputs(scn)[:2]:
        mp = tmp_path / f"{scn.name}_{ci.name}.prism"
        assert "const int K;" not in mp.read_text()
        res = check(str(mp), str(mp.with_suffix(".props")))
        ref = check_wred(ci.lam, ci.mu, ci.K, ci.profile)
        for k in range(3):
            assert res.values[f"drop{k}"] == pytest.approx(ref.drop[k], rel=1e-9, abs=1e-15)


def test_render_of_a_system_without_a_model_is_a_clear_error(tmp_path, capsys):
    code = main(["model", "render", str(ROOT / "examples" / "qstp_gtfrc.yaml"), "--out", str(tmp_path)])
    assert code == 2 and "has no PRISM model to render" in capsys.readouterr().err
