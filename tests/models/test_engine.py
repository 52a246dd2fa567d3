"""Every committed model and every example rendering parses and agrees on real PRISM (default engine);
the direct-solve brackets of the engine contain the exact (rational) values.

The PRISM tests are marked ``prism`` and skip where no ``prism`` executable is on PATH (``.ci/run`` puts the
shared build on PATH when it exists). Each PRISM run starts a JVM (1-2 s): properties are batched per model.
"""

from __future__ import annotations

import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from qosbound.errors import ModelError, ResourceError
from qosbound.models import engine
from qosbound.models.engine import MODELS_DIR, _storm_error, check, check_prism, parse_props_text, prism_options
from tests.helpers import ROOT


needs_prism = pytest.mark.skipif(shutil.which("prism") is None, reason="no prism executable on PATH")

#: PRISM's -epsilon for the comparisons. It is PRISM's stopping rule (relative change between iterations),
#: not an error bound; PRISM's value then lies within REL of the TRUE bracket of the direct solve (measured:
#: largest relative gap 2e-11 over the models below at this epsilon).
EPS = 1e-12
REL = 1e-8
ABS = 1e-14

WRED_CONSTS = {"K": 14, "lam0": 3.0, "lam1": 2.0, "lam2": 4.0, "mu": 10.0, "lo0": 6.0, "hi0": 12.0, "pd0": 10.0,
               "lo1": 4.0, "hi1": 10.0, "pd1": 5.0, "lo2": 2.0, "hi2": 8.0, "pd2": 3.0, "gentle": 0}


def _agree(storm, prism, names=None):
    """PRISM's values lie within REL (relative) of Storm's TRUE brackets; properties without a bracket
    (reachability, computed by graph analysis on both tools here) are compared with the same tolerance."""
    for name in names or storm.values:
        p = prism.values[name]
        lo, hi = storm.intervals.get(name, (storm.values[name], storm.values[name]))
        tol = REL * max(abs(lo), abs(hi)) + ABS
        assert lo - tol <= p <= hi + tol, f"{name}: PRISM {p!r} outside Storm's bracket [{lo!r}, {hi!r}]"


def _both(model, props, consts=None):
    named = parse_props_text(Path(props).read_text()) if isinstance(props, (str, Path)) else props
    s = check(str(model), named, consts)
    p = check_prism(str(model), named, consts, precision=EPS)
    return s, p


def test_prism_options_are_read_from_the_model_header():
    assert prism_options((MODELS_DIR / "wred.prism").read_text()) == ["-gs", "-maxiters", "1000000"]
    assert prism_options((MODELS_DIR / "pq_txq.prism").read_text()) == ["-bgs", "-maxiters", "1000000"]
    assert prism_options("dtmc\n") == []


def test_no_committed_model_uses_a_name_prism_reserves_or_reuses_a_label_as_a_property_name():
    import re
    reserved = {"A", "E", "F", "G", "X", "U", "W", "R", "S", "P", "C", "I"}
    for mp in sorted(MODELS_DIR.glob("*.prism")) + [MODELS_DIR / "templates" / "pq_txq.prism"]:
        if mp.name.startswith("tsq"):
            continue  # the TSQ models are tested with their own system
        text = mp.read_text()
        consts = set(re.findall(r"^\s*const\s+\w+\s+(\w+)", text, flags=re.M))
        assert not consts & reserved, f"{mp.name}: {consts & reserved}"
        labels = set(re.findall(r'^\s*label\s+"([^"]+)"', text, flags=re.M))
        pp = mp.with_suffix(".props")
        if pp.exists():
            names = {n for n, _ in parse_props_text(pp.read_text())}
            assert not names & labels, f"{pp.name}: property names equal to labels {names & labels}"


@pytest.mark.prism
@needs_prism
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_wred_model_agrees_on_prism(mode):
    """wred.prism (WRED, RIO, n-RED at K = 14) on PRISM's default engine with the header's options."""
    consts = {**WRED_CONSTS, "mode": mode}
    s, p = _both(MODELS_DIR / "wred.prism", MODELS_DIR / "wred.props", consts)
    assert set(s.intervals) >= {"drop0", "drop1", "drop2", "queue", "sys0", "sys1", "sys2", "p_full"}
    _agree(s, p)


@pytest.mark.prism
@needs_prism
def test_wred_model_with_a_zero_colour_rate_runs_on_prism():
    """A colour with rate 0 (every two-colour AF class) used to be 'Rates ... sum to zero' on PRISM."""
    consts = {**WRED_CONSTS, "mode": 1, "lam1": 0.0}
    s, p = _both(MODELS_DIR / "wred.prism", MODELS_DIR / "wred.props", consts)
    _agree(s, p)


@pytest.mark.prism
@needs_prism
def test_wred_ewma_model_agrees_on_prism():
    consts = {k: v for k, v in WRED_CONSTS.items() if k != "gentle"}
    consts.update(alpha=0.5, lam2=0.0)
    s, p = _both(MODELS_DIR / "wred_ewma.prism", MODELS_DIR / "wred_ewma.props", consts)
    _agree(s, p)


@pytest.mark.prism
@needs_prism
def test_marker_model_agrees_on_prism():
    consts = {"p": 0.3, "ip": 3, "ic": 2, "pbs": 12, "cbs": 8, "g": 4}
    s, p = _both(MODELS_DIR / "marker.prism", MODELS_DIR / "marker.props", consts)
    _agree(s, p)
    assert p.values["arrival_slots"] == pytest.approx(0.3, rel=1e-9)


@pytest.mark.prism
@needs_prism
def test_committed_pq_txq_model_agrees_on_prism():
    """models/pq_txq.prism (the ferrari2001 rendering, test_pq_txq_model checks it is current)."""
    s, p = _both(MODELS_DIR / "pq_txq.prism", MODELS_DIR / "pq_txq.props")
    assert set(s.intervals) == set(s.values)
    _agree(s, p)


def _render(example, out):
    from qosbound.cli import main
    assert main(["model", "render", str(ROOT / "examples" / f"{example}.yaml"), "--out", str(out)]) == 0
    return sorted(Path(out).glob("*.prism"))


@pytest.mark.prism
@needs_prism
@pytest.mark.parametrize("example", ["takeo2003", "qstp2008"])
def test_af_example_renderings_agree_on_prism(example, tmp_path, capsys):
    for mp in _render(example, tmp_path):
        s, p = _both(mp, mp.with_suffix(".props"))
        _agree(s, p)


@pytest.mark.prism
@needs_prism
def test_koehler_rendering_parses_on_prism(tmp_path, capsys):
    """The koehler1999 rendering (n-RED, 111,786 states: PRISM's default engine did not finish its long-run
    solve within 30 min here) parses on PRISM; its chain is the n-RED model checked for agreement at K = 14
    above, and its property file is the one of every AF rendering (checked with takeo2003 and qstp2008)."""
    (mp,) = _render("koehler1999", tmp_path)
    out = subprocess.run(["prism", str(mp), "-nobuild"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "Error" not in out.stdout, out.stdout[-2000:]


def _pq_scenario(tmp_path, arrivals: str, capacity: int = 3, rate: str = "300 kbit/s"):
    import yaml
    raw = yaml.safe_load((ROOT / "examples" / "ferrari2001.yaml").read_text())
    raw["pq"]["capacity"] = capacity
    for key in ("traffic",):
        t = raw[key]
        ef = t["EF"] if "EF" in t else t
        ef["arrivals"] = arrivals
        ef["rate"] = rate
    p = tmp_path / f"pq_{arrivals}.yaml"
    p.write_text(yaml.safe_dump(raw))
    return p


@pytest.mark.prism
@needs_prism
@pytest.mark.parametrize("arrivals", ["bernoulli", "cbr"])
def test_pq_txq_renderings_of_every_arrival_process_agree_on_prism(arrivals, tmp_path, capsys):
    from qosbound.cli import main
    scn = _pq_scenario(tmp_path, arrivals)
    assert main(["model", "render", str(scn), "--out", str(tmp_path / "out")]) == 0
    mp = tmp_path / "out" / "pq_txq.prism"
    assert "const double A " not in mp.read_text()
    s, p = _both(mp, mp.with_suffix(".props"))
    _agree(s, p)


def test_tiny_poisson_tails_are_left_out_and_reported(tmp_path):
    """At a large PQ the Poisson tail underflows below what Storm's expression evaluator accepts (1.47e-312 was
    'Invalid numeric token'): outcomes below TINY are left out, the model builds, and the mass is reported."""
    from qosbound.models.pq_txq import TINY, render
    from qosbound.systems.pq_txq import ModelOptions, params
    from qosbound.scenario import load

    scn = load(_pq_scenario(tmp_path, "poisson", capacity=160))
    r = render(params(scn), ModelOptions())
    assert 0 < r.truncated_mass < 1e-290
    import re
    for m in re.finditer(r"=\s*([0-9.]+e-(\d+))", r.text):
        assert float(m.group(1)) >= TINY
    b = engine.build(r.text, None, None)
    assert b.states > 0


def test_exact_mode_converts_huge_rationals(capsys):
    """`model check models/pq_txq.prism --exact` used to end in 'Exceeds the limit (4300 digits)'."""
    from qosbound.models.engine import _big_int, _int_text, fraction_text, rational_to_fraction
    big = "7" * 9000
    fr = rational_to_fraction(f"1/{big}")
    assert fr.denominator == _big_int(big) and _int_text(fr.denominator) == big
    assert "digit" in fraction_text(fr)
    assert fraction_text(Fraction(3, 7)) == "3/7"


def test_exact_check_of_the_committed_model_prints_without_traceback(capsys, tmp_path):
    """Storm's exact (rational) engine on the committed model, shrunk to Q_t = 3, PQ = 4 (445 states: the
    full 6,580-state chain takes about 5 CPU minutes in rational arithmetic); its values lie in the
    floating-point run's brackets."""
    import json

    from qosbound.cli import main
    text = (MODELS_DIR / "pq_txq.prism").read_text()
    small = text.replace("const int QT = 5;", "const int QT = 3;").replace("const int PQ = 10;", "const int PQ = 4;")
    assert small.count("const int QT = 3;") == 1 and small.count("const int PQ = 4;") == 1
    model = tmp_path / "pq_txq.prism"
    model.write_text(small)
    (tmp_path / "pq_txq.props").write_text((MODELS_DIR / "pq_txq.props").read_text())
    code = main(["model", "check", str(model), "--exact"])
    out = capsys.readouterr()
    assert code == 0 and "Traceback" not in out.err and "ef_lost" in out.out and "rational" in out.out
    assert main(["model", "check", str(model), "--exact", "--json"]) == 0
    exact = {k: Fraction(v) for k, v in json.loads(capsys.readouterr().out)["exact_values"].items()}
    assert main(["model", "check", str(model), "--json"]) == 0
    brackets = json.loads(capsys.readouterr().out)["intervals"]
    assert set(exact) == set(brackets) and "ef_lost" in exact
    for name, value in exact.items():
        low, high = brackets[name]
        assert Fraction(low) <= value <= Fraction(high), (name, float(value), low, high)


# ---- engine error brackets against exact (rational) solutions ---------------------------------------------

def _random_ctmc_text(rates: list[tuple[int, int, float]], n: int) -> str:
    lines = ["ctmc", "module m", f"  s : [0..{n - 1}] init 0;"]
    for i in range(n):
        outs = [(j, r) for (a, j, r) in rates if a == i]
        if outs:
            body = " + ".join(f"{r!r} : (s'={j})" for j, r in outs)
            lines.append(f"  [] s={i} -> {body};")
    lines.append("endmodule")
    for i in range(n):
        lines.append(f'rewards "r{i}" s={i} : {float(i + 1)!r}; endrewards')
    lines.append('rewards "lin" true : s * 0.37 + 1e-9; endrewards')
    return "\n".join(lines) + "\n"


@st.composite
def _irreducible_ctmc(draw):
    n = draw(st.integers(2, 7))
    rate = st.floats(1e-3, 1e3, allow_nan=False, allow_infinity=False)
    rates = [(i, (i + 1) % n, draw(rate)) for i in range(n)]  # a cycle: irreducible
    for _ in range(draw(st.integers(0, 2 * n))):
        a, b = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        if a != b:
            rates.append((a, b, draw(rate)))
    return n, rates


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_irreducible_ctmc())
@example(chain=(2, [(0, 1, 830.0), (1, 0, 0.984375)]))  # Storm stores 830.0 one unit in the last place above
@example(chain=(5, [(0, 1, 2.0), (1, 2, 1.0), (2, 3, 1.0), (3, 4, 1.0), (4, 0, 1.0), (0, 4, 255.0)]))  # 255.0 an ulp below
@example(chain=(6, [(0, 1, 1.001), (1, 2, 1.5), (2, 3, 1.0), (3, 4, 1.0), (4, 5, 1.0), (5, 0, 1.0), (0, 4, 256.0),
                    (1, 0, 188.0)]))
def test_brackets_contain_the_exact_stationary_values(chain):
    """On random small irreducible CTMCs (rates over six decades) every bracket of the float route is tight and
    contains Storm's exact (rational) solution of the text, up to what the float model's own rounding moves it:
    Storm's float parse can store a rate an ulp away from the decimal written (830.0 as 0x1.9f00000000001p+9,
    255.0 as 0x1.fdfffffffffffp+7) and its exit rates are rounded sums, so the chain the bracket is computed for
    differs from the text's by about 1e-16 relative per rate; on chains of at most 7 states with rates within six
    decades that moves a stationary value by far less than 1e-9 relative, the allowance used (the same as the
    bracket's own width limit)."""
    n, rates = chain
    text = _random_ctmc_text(rates, n)
    props = [(f"r{i}", f'R{{"r{i}"}}=? [ S ]') for i in range(n)] + [("lin", 'R{"lin"}=? [ S ]'),
                                                                    ("top", f"S=? [ s={n - 1} ]")]
    fl = check(text, props)
    ex = check(text, props, exact=True)
    for name, _ in props:
        lo, hi = fl.intervals[name]
        v = ex.exact_values[name]
        slack = Fraction(1, 10**9) * abs(v)
        assert Fraction(lo) - slack <= v <= Fraction(hi) + slack, f"{name}: exact {float(v)!r} outside [{lo!r}, {hi!r}]"
        assert hi - lo <= 1e-9 * max(1.0, float(abs(v))), f"{name}: bracket [{lo!r}, {hi!r}] too wide"
        assert lo <= fl.values[name] <= hi


def test_direct_solve_matches_a_dense_solve_and_storm_iterative_is_off():
    """n-RED at K = 14: the direct solve's brackets contain a dense NumPy solve of the same generator, and are
    far narrower than the error of Storm's own long-run route on this chain."""
    import scipy.linalg

    from qosbound.models import stationary

    consts = {**WRED_CONSTS, "mode": 2}
    b = engine.build(MODELS_DIR / "wred.prism", consts, ['R{"queue"}=? [ S ]'])
    W, d = stationary.generator(b.model)
    Q = W.toarray() + np.diag(d.astype(float))
    n = Q.shape[0]
    A = np.vstack([Q.T, np.ones(n)])
    rhs = np.zeros(n + 1)
    rhs[-1] = 1.0
    pi = scipy.linalg.lstsq(A, rhs)[0]
    f = np.asarray(b.model.reward_models["queue"].state_rewards)
    dense = float(pi @ f)
    res = check(MODELS_DIR / "wred.prism", [("queue", 'R{"queue"}=? [ S ]')], consts)
    lo, hi = res.intervals["queue"]
    assert lo - 1e-12 * dense <= dense <= hi + 1e-12 * dense
    assert hi - lo < 1e-12 * dense


#: Constants for every committed model with undefined ones (small instances: each runs in seconds on both
#: engines). A model added without an entry here fails test_every_committed_props_file_has_a_check below.
COMMITTED_CONSTANTS = {
    "marker": {"p": 0.3, "ip": 3, "ic": 2, "pbs": 12, "cbs": 8, "g": 4},
    "pq_txq": {},
    "tsq": {"N": 20, "lam": 0.55, "p_lo": 0.01, "p_hi": 0.3, "l": 4.0, "nbits": 2, "k0": 10},
    "tsq_hint": {"N": 20, "lam": 0.55, "p_lo": 0.01, "p_hi": 0.3, "l": 4.0, "nbits": 2, "d": 3},
    "wred": {**WRED_CONSTS, "mode": 1},
    "wred_ewma": {**{k: v for k, v in WRED_CONSTS.items() if k != "gentle"}, "alpha": 0.5},
}


def _committed_props() -> list[Path]:
    """Every committed property file PRISM is expected to read: models/*.props, models/templates/*.props and
    models/rendered/*.props, less the Storm-only ``*.storm.props`` (checked on Storm below)."""
    files = [p for d in ("", "templates", "rendered") for p in sorted((MODELS_DIR / d).glob("*.props"))]
    return [p for p in files if not p.name.endswith(".storm.props")]


def _storm_only_props() -> list[Path]:
    return sorted(MODELS_DIR.rglob("*.storm.props"))


def _model_of(props: Path) -> Path:
    """The model a property file belongs to: ``X.props`` and ``X.storm.props`` go with ``X.prism``."""
    return props.with_name(props.name.split(".")[0] + ".prism")


def test_every_committed_props_file_has_a_check():
    assert _committed_props(), "no committed property files found"
    for pp in _committed_props() + _storm_only_props():
        assert _model_of(pp).exists(), pp
        assert _model_of(pp).stem in COMMITTED_CONSTANTS, f"{pp}: give its constants in COMMITTED_CONSTANTS"


@pytest.mark.parametrize("props", _committed_props(), ids=lambda p: str(p.relative_to(MODELS_DIR)))
def test_every_committed_props_file_checks_on_storm(props):
    model = _model_of(props)
    named = parse_props_text(props.read_text())
    r = check(str(model), named, COMMITTED_CONSTANTS[model.stem])
    assert r.states > 0 and set(r.values) == {n for n, _ in named}
    assert all(np.isfinite(v) for v in r.values.values()), r.values


@pytest.mark.prism
@needs_prism
@pytest.mark.parametrize("props", _committed_props(), ids=lambda p: str(p.relative_to(MODELS_DIR)))
def test_every_committed_props_file_checks_on_prism_as_a_user_runs_it(props, tmp_path):
    """`prism MODEL PROPS -const ...` on the committed files themselves (PRISM's default engine, with the model's
    `// prism-options:` header): every property parses and gets a result, and the results agree with Storm's.

    PRISM runs with ``-epsilon`` EPS (its stopping rule, a relative change between iterates: at its default 1e-6
    the slowly mixing TSQ chains stop 1e-5 to 1e-4 short); Storm's MDP values come from value iteration without
    an error bound (measured 1e-8 relative off direct solves), so 1e-6 relative is the claim here."""
    model = _model_of(props)
    consts = COMMITTED_CONSTANTS[model.stem]
    res = tmp_path / "res.txt"
    cmd = ["prism", str(model), str(props), "-exportresults", f"{res}:csv", "-epsilon", repr(EPS),
           *prism_options(model.read_text())]
    if consts:
        cmd += ["-const", ",".join(f"{k}={v!r}" for k, v in consts.items())]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    errors = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.startswith("Error")]
    assert proc.returncode == 0 and not errors, "\n".join(errors) or proc.stdout[-2000:]
    named = parse_props_text(props.read_text())
    blocks = res.read_text().strip().split("\n\n")
    assert len(blocks) == len(named), proc.stdout[-2000:]
    storm = check(str(model), named, consts)
    for (name, _), block in zip(named, blocks):
        value = float(block.strip().splitlines()[-1].split(",")[-1])
        assert value == pytest.approx(storm.values[name], rel=1e-6, abs=ABS), name


@pytest.mark.parametrize("props", _storm_only_props(), ids=lambda p: str(p.relative_to(MODELS_DIR)))
def test_storm_only_props_files_say_so_and_check_on_storm(props):
    """A property PRISM cannot read (LRA on an MDP) lives in a ``*.storm.props`` file whose header says so."""
    header = props.read_text().split('"', 1)[0]
    assert "Storm-only" in header and "PRISM" in header
    model = _model_of(props)
    named = parse_props_text(props.read_text())
    r = check(str(model), named, COMMITTED_CONSTANTS[model.stem])
    assert set(r.values) == {n for n, _ in named} and all(np.isfinite(v) for v in r.values.values())


# Storm's failures become one honest line: what is wrong and where, never a lone caret; memory is a resource.


def test_the_error_line_and_the_quoted_source_line_are_kept_and_the_caret_dropped():
    e = RuntimeError("ERROR (PrismParser.cpp:64): Parsing error in line 5, column 21: expecting expression:\n"
                     "\tconst double p = 0/;\n\t                   ^\n")
    err = _storm_error("m.prism: cannot parse", e)
    assert isinstance(err, ModelError)
    text = str(err)
    assert "line 5, column 21" in text and "const double p = 0/;" in text
    assert "ERROR (" not in text and not text.rstrip().endswith("^") and "\n" not in text


def test_bad_alloc_is_a_resource_error_not_bad_input():
    err = _storm_error("steady state", RuntimeError("std::bad_alloc"))
    assert isinstance(err, ResourceError) and err.exit_code == 4 and "memory" in str(err)
