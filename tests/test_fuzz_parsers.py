"""Fuzz every parser: scenario YAML, PRISM models given to ``model check``, and command-line arguments.

Whatever the input, the outcome is a documented exit code (0-4) and, on an error, exactly one line on
standard error -- never a traceback. (Traces, timestamp CSVs and captures are fuzzed in
tests/validation/test_trace.py, test_csv_import.py and test_pcap.py; the library-level fuzz of the scenario
loader runs here without the CLI.)
"""

from __future__ import annotations

import copy
import math
import os
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from qosbound.cli import main
from qosbound.errors import QosboundError
from qosbound.scenario import build, load, load_raw

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
RAW = {p.stem: load_raw(p) for p in EXAMPLES}

_values = st.one_of(
    st.none(), st.booleans(), st.integers(-10**20, 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "abc", "1e400", "-1", "0", "nan", "inf", "1 GB", "-5 ms", "10 ms", "2 Mbps", "150 %",
                     "1e-300 bit/s", "1e15", "poisson", "storm", "AF1", "EF.loss", "max", "[", "{a: 1}"]),
    st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(st.sampled_from(["size", "p", "rate", "metric", "max", "min"]), st.integers(-2, 2), max_size=2),
)


def _paths(d, prefix=()):
    out = [prefix] if prefix else []
    if isinstance(d, dict):
        for k, v in d.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            out += _paths(v, prefix + (i,))
    return out


def _mutate(raw, path, value, delete):
    out = copy.deepcopy(raw)
    cur = out
    for k in path[:-1]:
        cur = cur[k]
    if delete:
        del cur[path[-1]]
    else:
        cur[path[-1]] = value
    return out


@st.composite
def mutated_scenarios(draw, names=tuple(RAW)):
    name = draw(st.sampled_from(names))
    raw = RAW[name]
    mutations = draw(st.integers(1, 3))
    for _ in range(mutations):
        paths = _paths(raw)
        path = draw(st.sampled_from(paths))
        raw = _mutate(raw, path, draw(_values), draw(st.booleans()))
    return raw


@settings(max_examples=300, deadline=None)
@given(mutated_scenarios())
def test_a_mutated_scenario_is_valid_or_one_scenario_error(raw):
    try:
        scn = build(raw, "fuzz.yaml")
    except QosboundError as e:
        assert "\n" not in str(e) and str(e).startswith("fuzz.yaml"), str(e)
        return
    assert scn.name is not None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.text(max_size=300), st.binary(max_size=300).map(lambda b: b.decode("latin-1"))))
def test_any_text_is_a_scenario_or_one_scenario_error(tmp_path_factory, text):
    p = tmp_path_factory.mktemp("yaml") / "s.yaml"
    p.write_bytes(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    try:
        load(p)
    except QosboundError as e:
        assert "\n" not in str(e)


def _main(capfd, argv):
    """Run the CLI in-process; stdout and stderr are read at the file-descriptor level, so output written by
    engines (Storm's C++ log lines) or by child processes counts too."""
    capfd.readouterr()
    try:
        code = main(argv)
    except SystemExit as e:  # argparse: --help (0) or a usage error (2)
        code = e.code
    cap = capfd.readouterr()
    return code, cap.out, cap.err


def _assert_contract(code, err, allowed=(0, 1, 2, 3, 4)):
    assert code in allowed, (code, err)
    assert "Traceback" not in err, err
    if code not in (0, 1, 3):
        lines = [x for x in err.strip().splitlines() if x.strip()]
        assert len(lines) == 1 and lines[0].startswith("qosbound: "), err
        assert "internal error" not in lines[0], err


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutated_scenarios(names=("ferrari2001",)))
def test_plan_on_a_mutated_scenario_keeps_the_contract(tmp_path_factory, capfd, raw):
    """Through the CLI (closed forms: fast), end to end: exit 0-4, one line on an error."""
    p = tmp_path_factory.mktemp("plan") / "s.yaml"
    p.write_text(yaml.safe_dump(raw))
    code, _, err = _main(capfd, ["plan", str(p), "--methods", "closed-form", "--quiet", "--json"])
    _assert_contract(code, err)


SMALL = """dtmc
const double p = 0.5;
const int N = 3;
module m
  s : [0..N] init 0;
  [go] s<N -> p : (s'=s+1) + (1-p) : (s'=0);
  [] s=N -> 1 : (s'=s);
endmodule
label "top" = s=N;
rewards "r" s=1 : 1; endrewards
"""
PROPS = 'P=? [ F "top" ]\nR{"r"}=? [ F "top" ]\n'
_PRISM_CHARS = "0123456789.+-*/=<>&|!()[]{};:'\" \nsNpmodule[..]trueinitlabelconstdoublerewards"


@st.composite
def mutated_prism(draw):
    text = SMALL
    for _ in range(draw(st.integers(0, 2))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 6)))
        text = text[:i] + draw(st.text(alphabet=_PRISM_CHARS, max_size=6)) + text[j:]
    props = draw(st.sampled_from([PROPS, 'P=? [ F "nope" ]\n', 'R{"x"}=? [ F s=1 ]\n', "P=? [ F s=\n", "",
                                  'P=? [ F<=5 "top" ]\n', 'S=? [ s=0 ]\n']))
    return text, props


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutated_prism(), st.sampled_from([[], ["--precision", "nan"], ["--const", "N=1e12"], ["--exact"],
                                          ["--precision", "1e-6"], ["--const", "p=0.3"]]))
def test_model_check_on_a_mutated_model_keeps_the_contract(tmp_path_factory, capfd, model, options):
    d = tmp_path_factory.mktemp("prism")
    (d / "m.prism").write_text(model[0])
    (d / "m.props").write_text(model[1])
    code, out, err = _main(capfd, ["model", "check", str(d / "m.prism"), "--quiet", *options])
    _assert_contract(code, err, allowed=(0, 2, 4))
    if code == 0:
        assert "states" in out


_TOKENS = ["--rtt", "--loss", "--s", "--target", "--x-recv", "--b", "--t-rto", "--csv", "--json", "--quiet",
           "-5ms", "30ms", "1%", "150%", "0", "-1", "nan", "inf", "1e400", "abc", "", "1500 B", "400kbit/s",
           "/dev/zero", "/nonexistent", "--", "-", "--debug", "--max-memory", "1 GB", "--help"]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_TOKENS), max_size=8))
def test_tfrc_arguments_keep_the_contract(capfd, argv):
    code, _, err = _main(capfd, ["tfrc", *argv])
    if "--help" in argv and code == 0:
        return
    _assert_contract(code, err, allowed=(0, 2))


_OPTION_VALUES = st.one_of(st.text(max_size=12), st.floats(allow_nan=True, allow_infinity=True).map(repr),
                           st.sampled_from(["nan", "-1", "inf", "1e400", "0", "1e-300", "0.5", "abc", "-5ms"]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["--precision", "--const", "--max-states", "--engine"]), _OPTION_VALUES,
       st.sampled_from(["N", "p", "q", ""]))
def test_model_check_option_values_keep_the_contract(tmp_path_factory, capfd, option, value, name):
    """Any value of any option of ``model check`` on a valid model: an answer, or one line (nan and -1 as a
    precision were accepted or crashed)."""
    d = tmp_path_factory.mktemp("opt")
    (d / "m.prism").write_text(SMALL)
    (d / "m.props").write_text(PROPS)
    v = f"{name}={value}" if option == "--const" else value
    code, _, err = _main(capfd, ["model", "check", str(d / "m.prism"), "--quiet", f"{option}={v}"])
    _assert_contract(code, err, allowed=(0, 2, 4))
    if option == "--precision" and code == 0:
        assert 0 < float(value) < 0.1


@pytest.fixture(scope="module")
def odd_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("odd")
    (d / "latin.yaml").write_bytes("name: caf\xe9\n".encode("latin-1"))
    (d / "latin.prism").write_bytes(("// caf\xe9\n" + SMALL).encode("latin-1"))
    (d / "latin.props").write_text(PROPS)
    (d / "dir.prism").mkdir()
    (d / "dir.yaml").mkdir()
    (d / "empty.yaml").write_text("")
    (d / "list.yaml").write_text("- 1\n- 2\n")
    (d / "afile").write_text("x")
    os.symlink(d / "loop2.yaml", d / "loop.yaml")  # a symlink loop
    os.symlink(d / "loop.yaml", d / "loop2.yaml")
    os.mkfifo(d / "fifo.yaml")  # reading would wait for a writer
    return d


_COMMANDS = [["plan"], ["verify"], ["admit"], ["validate"], ["model", "check"], ["model", "render"],
             ["reproduce"], ["tfrc"], []]
_PATHS = ["{d}/latin.yaml", "{d}/latin.prism", "{d}/dir.prism", "{d}/dir.yaml", "{d}/empty.yaml", "{d}/list.yaml",
          "/dev/zero", "/nonexistent.yaml", "{d}/afile", "{d}/loop.yaml", "{d}/fifo.yaml", "/dev/full"]
_ARGS = _PATHS + ["--vary", "traffic.EF.rate", "--min", "--max", "-1", "abc", "--junit",
         "/dev/full", "{d}/afile", "--out", "--trace", "in.pcap,", "--simulate", "--methods", "bogus", "--const",
         "N=", "--precision", "nan", "--engine", "nope", "nosuchpaper", "--json", "--quiet", "--direction",
         "smallest"]


def _is_batch_command(argv) -> bool:
    """Whether the CLI reads ``argv`` as the batch form of plan/verify (parsed by the CLI's own parser)."""
    import contextlib
    import io

    from qosbound.commands.batch import is_batch
    from qosbound.cli import build_parser

    try:
        with contextlib.redirect_stderr(io.StringIO()):
            args = build_parser().parse_args(argv)
        return is_batch(args.scenario)
    except (SystemExit, Exception):
        return False


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(_COMMANDS), st.sampled_from(_PATHS), st.lists(st.sampled_from(_ARGS), max_size=5))
def test_any_command_line_keeps_the_contract(odd_files, capfd, command, path, rest):
    """Arguments naming no usable scenario or model (Latin-1 files, folders, devices, empty or non-mapping
    YAML, missing files): every command refuses them in one line, exit 2."""
    argv = [a.replace("{d}", str(odd_files)) for a in [path, *rest]]
    code, out, err = _main(capfd, [*command, *argv])
    if command in (["plan"], ["verify"]) and _is_batch_command([*command, *argv]):
        # several files are a batch: each bad file is a row of its summary with its one-line error, exit 2
        assert code == 2 and "Traceback" not in out + err, (code, out, err)
        return
    _assert_contract(code, err, allowed=(2,))


def test_the_fuzz_strategies_reach_every_example():
    assert len(RAW) == len(EXAMPLES) >= 5
    assert all(isinstance(r, dict) for r in RAW.values())



# ---- every numeric field of every example, with the values that broke parsers before ----------------------------

#: A scenario leaf written as a number, or as a number with a unit ("2 Mbps", "10 ms").
_NUMERIC = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*[A-Za-z%/]*$")


def _numeric_leaves(raw) -> list[tuple]:
    out = []
    for path in _paths(raw):
        cur = raw
        for k in path:
            cur = cur[k]
        if (isinstance(cur, (int, float)) and not isinstance(cur, bool)) or \
                (isinstance(cur, str) and _NUMERIC.match(cur.strip())):
            out.append(path)
    return out


LEAVES = [(name, path) for name, raw in RAW.items() for path in _numeric_leaves(raw)]
#: Never a number: a scenario holding one of these in a number field is refused, whatever the field.
NOT_A_NUMBER = [True, False, math.nan, math.inf, -math.inf, [1, 2], "nan", "inf ms", {"a": 1}]
#: Numbers at the edges: refused, or accepted and then answered within the contract.
EDGES = [1e308, -1e308, 1e-308, -1.0, 0, 0.5, 10**30, "1e308", "1e-300"]


def test_every_numeric_field_is_reached():
    assert len(LEAVES) > 100 and {name for name, _ in LEAVES} == set(RAW)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(LEAVES), st.sampled_from(NOT_A_NUMBER))
def test_a_number_field_refuses_what_is_not_a_number(leaf, value):
    """A boolean (pydantic reads true as 1), NaN, an infinity, a list or a mapping in any number field of any
    example is one ScenarioError naming the file, never a scenario."""
    name, path = leaf
    with pytest.raises(QosboundError) as e:
        build(_mutate(RAW[name], path, value, False), "fuzz.yaml")
    assert "\n" not in str(e.value) and str(e.value).startswith("fuzz.yaml"), str(e.value)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(LEAVES), st.sampled_from(EDGES))
def test_an_edge_value_in_any_number_field_keeps_the_contract_end_to_end(tmp_path_factory, capfd, leaf, value):
    """Huge, tiny, negative and zero values in any number field: refused in one line, or planned by the closed
    forms with exit 0-4 and no NaN or infinity printed as a value."""
    name, path = leaf
    raw = _mutate(RAW[name], path, value, False)
    try:
        build(raw, "fuzz.yaml")
    except QosboundError as e:
        assert "\n" not in str(e) and str(e).startswith("fuzz.yaml"), str(e)
        return
    p = tmp_path_factory.mktemp("edge") / "s.yaml"
    p.write_text(yaml.safe_dump(raw))
    code, out, err = _main(capfd, ["plan", str(p), "--methods", "closed-form", "--quiet", "--json"])
    _assert_contract(code, err)
    assert not re.search(r'"value": (NaN|Infinity|-Infinity)', out), out[-2000:]


# ---- every method with every system --------------------------------------------------------------------------

#: (example, method) pairs quick enough to run: every method a system lacks, and the closed forms everywhere
#: (the simulators and ns-3 where they exist are exercised by their own tests).
_METHOD_CASES = [(name, m) for name in sorted(RAW) for m in ("closed-form", "model-checked", "ns-3", "trace")
                 if not (m == "ns-3" and RAW[name]["system"] == "pq_txq")
                 and not (m == "model-checked" and RAW[name]["system"] in ("pq_txq", "af", "tsq"))]


@pytest.mark.parametrize("name,method", _METHOD_CASES)
def test_every_method_asked_of_every_system_keeps_the_contract(capfd, name, method):
    """A method asked for by name is answered, or refused in one line (exit 2: the system has no such method or
    the trace method needs a trace; exit 4: a budget) -- never an internal error."""
    code, out, err = _main(capfd, ["plan", str(ROOT / "examples" / f"{name}.yaml"), "--methods", method,
                                   "--quiet", "--json"])
    _assert_contract(code, err)
    if method in ("ns-3", "trace") or (method == "model-checked" and RAW[name]["system"] == "tfrc"):
        assert code == 2, (code, err)


@pytest.mark.parametrize("name", sorted(n for n in RAW if RAW[n]["system"] not in ("pq_txq", "network")))
def test_validate_with_ns3_on_a_system_without_it_is_refused(capfd, tmp_path, name):
    """(pq_txq and network scenarios are validated on ns-3: tests/systems/pq_txq/test_ns3.py,
    tests/systems/network/test_ns3.py, with the network features ns-3 cannot express refused there.)"""
    code, _, err = _main(capfd, ["validate", str(ROOT / "examples" / f"{name}.yaml"), "--ns3", "--quiet",
                                 "--out", str(tmp_path / "o")])
    _assert_contract(code, err, allowed=(2,))
