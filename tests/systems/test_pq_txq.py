"""The pq_txq system as a whole: the command line on the EF scenario (plan, verify with exit codes and JUnit, admit,
model render/check, bad input), the model refused for a BE load, and every result's label against docs/pq_txq.md."""

from __future__ import annotations

import functools
import json
import re
import xml.etree.ElementTree as ET

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from qosbound.cli import main
from qosbound.errors import QosboundError
from qosbound.progress import QUIET
from qosbound.results import Kind
from qosbound.scenario import build, load_raw
from qosbound.systems import pq_txq
from tests.helpers import DOCS, ROOT, one_line
from tests.pq_txq_helpers import be60_raw
from tests.models.test_pq_txq_ring import IMIX, raw


EXAMPLE = ROOT / "examples" / "ferrari2001.yaml"
FAST = "closed-form,model-checked"


def write(tmp_path, raw, name="s.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(raw) if not isinstance(raw, str) else raw)
    return str(p)


def base():
    raw = load_raw(EXAMPLE)
    raw["methods"]["simulated"] = {"packets": 20000, "replications": 4, "seed": 3}
    return raw


def test_plan_json_has_every_metric_by_every_method(tmp_path, capsys):
    """plan --json lists each metric with method, value, unit, interval and provenance."""
    code = main(["plan", write(tmp_path, base()), "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) >= {"scenario", "metrics", "verdicts"}
    keys = {(m["metric"], m["method"]) for m in doc["metrics"]}
    for method in ("closed-form", "model-checked", "simulated"):
        assert any(k[1] == method for k in keys)
    for metric in ("EF.delay.mean", "EF.delay.p99", "EF.delay.ccdf@10ms", "EF.loss"):
        assert (metric, "model-checked") in keys and (metric, "simulated") in keys
    kinds = {"exact", "numerical", "upper bound", "lower bound", "approximation", "confidence interval"}
    for m in doc["metrics"]:
        assert {"metric", "method", "value", "unit", "kind", "interval", "provenance"} <= set(m)
        assert m["unit"] in ("s", "1")
        assert m["kind"] in kinds and m["interval"]["kind"] == m["kind"]
        if m["kind"] == "approximation":
            assert m["interval"]["neglects"]
        if m["kind"] == "confidence interval":
            assert m["interval"]["std_error"] is not None and m["interval"]["dof"] == 3
    failed = any(v["status"] in ("violated", "missing") for v in doc["slo_verdicts"])
    disagree = any(v["status"] == "disagree" for v in doc["agreement_verdicts"])
    assert code == (1 if failed else 3 if disagree else 0) == doc["exit_code"]


def test_verify_passes_and_writes_junit(tmp_path, capsys):
    """verify exits 0 when every SLO holds and writes one JUnit testcase per verdict."""
    junit = tmp_path / "r.xml"
    code = main(["verify", write(tmp_path, base()), "--methods", FAST, "--junit", str(junit), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("failures") == "0" and int(suite.get("tests")) >= 4


def test_verify_fails_and_says_which_by_how_much_and_method(tmp_path, capsys):
    """A p99 SLO tighter than the model's value fails with exit 1, naming the SLO, the excess and the method."""
    raw = base()
    raw["slos"] = [{"metric": "EF.delay.p99", "max": "10 ms"}]
    junit = tmp_path / "r.xml"
    code = main(["verify", write(tmp_path, raw), "--methods", FAST, "--junit", str(junit), "--quiet"])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL" in out and "EF.delay.p99 <= 10 ms" in out and "model-checked" in out and "by 3.74" in out
    assert ET.parse(junit).getroot().find("testsuite").get("failures") == "1"


def test_verify_json(tmp_path, capsys):
    raw = base()
    raw["slos"] = [{"metric": "EF.loss", "max": 1e-9}]
    code = main(["verify", write(tmp_path, raw), "--methods", FAST, "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["ok"] is False
    assert doc["verdicts"][0]["status"] == "violated" and doc["verdicts"][0]["margin"] < 0


def test_admit_finds_the_largest_ef_rate(tmp_path, capsys):
    """admit --vary traffic.EF.rate returns the rate where the binding SLO sits on its limit.

    A 10-packet PQ caps the delay of accepted packets, so p99 alone stays under 15 ms almost up to
    saturation; the loss SLO is the one that binds.
    """
    raw = base()
    raw["slos"] = [{"metric": "EF.delay.p99", "max": "15 ms"}, {"metric": "EF.loss", "max": 1e-4}]
    path = write(tmp_path, raw)
    code = main(["admit", path, "--vary", "traffic.EF.rate", "--method", "model-checked", "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    x = doc["value"]
    assert doc["unit"] == "bit/s" and 300e3 < x < 2e6
    assert doc["binding_slo"] == "EF.loss <= 0.0001"
    from qosbound.models.pq_txq import delay_distribution, render
    from qosbound.scenario import set_path
    from qosbound.systems.pq_txq import params

    def worst(rate):
        scn = build(set_path(raw, "traffic.EF.rate", rate))
        dd, _ = delay_distribution(render(params(scn), scn.methods.model_checked))
        return max(dd.quantile(0.99) / 15e-3, dd.loss / 1e-4)

    assert worst(x * 0.999) <= 1 < worst(x * 1.001)


def test_model_render_and_check(tmp_path, capsys):
    """model render writes .prism/.props; model check runs them on Storm and prints states and values."""
    assert main(["model", "render", str(EXAMPLE), "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["model", "check", str(tmp_path / "pq_txq.prism"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["states"] == 6580
    v = doc["values"]
    assert 0 < v["tick"] < 1
    # Loss per slot over arrivals per slot equals the loss probability of the delay-distribution route.
    from qosbound.models.pq_txq import delay_distribution, render
    from qosbound.scenario import load
    from qosbound.systems.pq_txq import params

    scn = load(EXAMPLE)
    dd, _ = delay_distribution(render(params(scn), scn.methods.model_checked, scn.name))
    assert v["ef_lost"] / (v["tick"] * 0.15) == pytest.approx(dd.loss, rel=1e-9)
    # Little's law on the property values gives the distribution's mean delay (Poisson: plus the in-slot term).
    assert v["ef_accepted"] / v["tick"] == pytest.approx(dd.accepted_per_slot, rel=1e-9)


@pytest.mark.skipif(__import__("shutil").which("prism") is None, reason="PRISM is not installed")
def test_prism_engine_agrees_with_storm(capsys):  # pragma: no cover - needs PRISM
    """The committed model gives the same properties on PRISM's default engine as on Storm."""
    main(["model", "check", str(ROOT / "models" / "pq_txq.prism"), "--json"])
    storm = json.loads(capsys.readouterr().out)["values"]
    main(["model", "check", str(ROOT / "models" / "pq_txq.prism"), "--engine", "prism", "--json"])
    prism = json.loads(capsys.readouterr().out)["values"]
    for k, v in storm.items():
        assert prism[k] == pytest.approx(v, rel=1e-5)


# ---------------------------------------------------------------------------------------------------------
# Bad input: one line, exit 2, naming the file, the field and the problem.
# ---------------------------------------------------------------------------------------------------------

def _mut(path, value):
    def f(raw):
        cur = raw
        parts = path.split(".")
        for part in parts[:-1]:
            cur = cur[part]
        if value is _DELETE:
            del cur[parts[-1]]
        else:
            cur[parts[-1]] = value
        return raw
    return f


_DELETE = object()

BAD = [
    ("link rate missing", _mut("link.rate", _DELETE), "link.rate", "required field is missing"),
    ("rate in bytes", _mut("link.rate", "2 MB"), "link.rate", "wrong units"),
    ("rate not a number", _mut("link.rate", "fast"), "link.rate", "cannot read 'fast'"),
    ("negative rate", _mut("link.rate", "-2 Mbps"), "link.rate", "must be positive"),
    ("utilisation >= 1", _mut("traffic.EF.rate", "2.5 Mbps"), "traffic.EF.rate", "unstable"),
    ("size in seconds", _mut("traffic.EF.size", "10 ms"), "traffic.EF.size", "wrong units"),
    ("zero Q_t", _mut("txq.units", 0), "txq.units", "positive integer"),
    ("fractional Q_t", _mut("txq.units", 2.5), "txq.units", "expected an integer"),
    ("unknown arrivals", _mut("traffic.EF.arrivals", "pareto"), "traffic.EF.arrivals", "poisson"),
    ("probability > 1", _mut("traffic.BE.sizes", [{"size": "512 B", "p": 1.5}]), "traffic.BE.sizes[0].p",
     "outside [0, 1]"),
    ("probabilities do not sum to 1", _mut("traffic.BE.sizes", [{"size": "512 B", "p": 0.5}]), "traffic.BE",
     "sum to 0.5"),
    ("unsaturated BE", _mut("traffic.BE.saturated", False), "traffic.BE", "saturated"),
    ("typo in a field", _mut("txq.unit_sise", "512 B"), "txq.unit_sise", "unknown field"),
    ("unknown system", _mut("system", "wfq"), "system", "unknown system"),
    ("SLO without a limit", _mut("slos", [{"metric": "EF.delay.p99"}]), "slos[0]", "exactly one of"),
    ("SLO limit with wrong unit", _mut("slos", [{"metric": "EF.delay.p99", "max": "15 MB"}]), "slos[0].max",
     "wrong units"),
    ("unknown SLO metric", _mut("slos", [{"metric": "EF.jitter", "max": "1 ms"}]), "slos[0].metric",
     "unknown metric"),
    ("unknown method", _mut("slos", [{"metric": "EF.loss", "max": 0.1, "method": "guess"}]), "slos[0]",
     "unknown method"),
    ("too few replications", _mut("methods.simulated", {"replications": 1}), "methods.simulated",
     "at least 2 replications"),
    ("quantile outside (0,1)", _mut("metrics.quantiles", [99]), "metrics.quantiles", "not in (0, 1)"),
]


@pytest.mark.parametrize("name,mutate,field,message", BAD, ids=[b[0] for b in BAD])
def test_bad_scenario_gives_one_line_and_exit_2(tmp_path, capsys, name, mutate, field, message):
    path = write(tmp_path, mutate(base()))
    code = main(["plan", path, "--methods", "closed-form", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert path in err and f"field '{field}'" in err and message in err, err


@pytest.mark.parametrize("text,message", [
    ("name: [unclosed", "invalid YAML at line 1"),
    ("- just\n- a list\n", "top level must be a mapping"),
    ("", "top level must be a mapping"),
    ("name: x\n", "field 'system': required field is missing"),
])
def test_malformed_files(tmp_path, capsys, text, message):
    path = write(tmp_path, text)
    assert main(["verify", path, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_missing_file(capsys):
    assert main(["plan", "/nonexistent/x.yaml"]) == 2
    assert "file not found" in capsys.readouterr().err


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=st.dictionaries(st.sampled_from(["name", "system", "link", "txq", "pq", "traffic", "slos", "methods",
                                            "metrics", "extra"]), yaml_values, max_size=8),
       system=st.sampled_from(["pq_txq", None]))
def test_scenario_loading_never_crashes(doc, system):
    """Arbitrary YAML mappings either validate or raise a QosboundError; nothing else escapes."""
    if system:
        doc["system"] = system
    try:
        build(doc, "fuzz.yaml")
    except QosboundError:
        pass


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=200))
def test_yaml_text_never_crashes(tmp_path_factory, text):
    """Arbitrary text files give a one-line error, never a traceback."""
    p = tmp_path_factory.mktemp("fz") / "f.yaml"
    p.write_text(text, encoding="utf-8")
    try:
        build(load_raw(p), str(p))
    except QosboundError:
        pass


# Best effort with a load in the PQ + TxQ system: the model is skipped, with its reason, and refused when asked for by
# name.


def test_plan_skips_the_model_with_its_reason(tmp_path, capsys):
    """plan on a loaded scenario enabling model-checked answers by the closed forms and the simulator, and says
    why the model was skipped (JSON 'skipped')."""
    code = main(["plan", write(tmp_path, be60_raw()), "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert "saturated best effort only" in doc["skipped"]["model-checked"]
    assert {m["method"] for m in doc["metrics"]} == {"closed-form", "simulated"}
    assert code == doc["exit_code"] == 0


@pytest.mark.parametrize("argv", [["plan", "--methods", "model-checked"], ["model", "render", "--out", "OUT"]])
def test_model_asked_for_by_name_is_refused(tmp_path, capsys, argv):
    """Asking for the model of a loaded scenario (plan --methods model-checked, model render) is bad input:
    one line naming traffic.BE.rate, exit 2, and no number."""
    path = write(tmp_path, be60_raw())
    args = [a if a != "OUT" else str(tmp_path / "out") for a in argv]
    args.insert(2 if argv[0] == "model" else 1, path)
    code = main(args)
    out = capsys.readouterr()
    assert code == 2
    line = one_line(out.err)
    assert "field 'traffic.BE.rate'" in line and "saturated best effort only" in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


# Every label the pq_txq system emits is in the table of docs/pq_txq.md ("What each result is"), with its proof or what
# it neglects; each route is exercised (exact chain, rounded chain, the ring method exact, with its bound and alone,
# closed forms for CBR and Poisson EF, the simulator); and the rounded chain of issue 18 is no longer called an upper
# bound: its loss lies below the exact chain's.


DOC = DOCS / "pq_txq.md"


def _table() -> set[tuple[str, str, str]]:
    """(metric class, method, kind) rows of the labels table."""
    text = DOC.read_text()
    part = text.split("## What each result is", 1)[1].split("\n## ", 1)[0]
    rows = set()
    for line in part.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        names = re.findall(r"`([^`]+)`", cells[0])
        prefix = ""
        for n in names:  # ".pNN" after "EF.delay.mean" means "EF.delay.pNN"
            if n.startswith("."):
                n = prefix + n
            else:
                prefix = n.rsplit(".", 1)[0]
            rows.add((n, cells[1], cells[2]))
    return rows


def _cls(metric: str) -> str:
    m = re.sub(r"\.p[0-9.]+$", ".pNN", metric)
    m = re.sub(r"\.ccdf@.+$", ".ccdf@T", m)
    return re.sub(r"^EF\.s[0-9]+\.", "EF.sN.", m)


@functools.lru_cache(maxsize=None)
def _evaluated(name: str) -> dict:
    """(metric, method) -> result of port ``name`` (each port evaluated once per session)."""
    d, methods = PORTS[name]
    return {(r.metric, r.method): r for r in pq_txq.evaluate(build(d), methods, QUIET)}


def _issue_port(unit="1500 B", **model):
    """Issue 18: 2 Mbit/s, tx-ring 4 x 1500 B, PQ 4, EF 200 B Poisson at 800 kbit/s, BE 40 / 1500 B at 0.5 / 0.5
    (sizes need 75 granules of 20 B: above the default max_granules of 64)."""
    d = raw(4, "800 kbit/s", 200, [(40, 0.5), (1500, 0.5)], 4, link="2 Mbps", **model)
    d["txq"]["unit_size"] = unit
    d["metrics"] = {"ccdf_at": ["20 ms"], "quantiles": [0.99]}
    d["methods"]["simulated"] = {"packets": 20_000, "replications": 2, "seed": 3}
    return d


def _ports():
    bound = raw(16, "10 Mbit/s", 200, IMIX, 8, link="100 Mbps", max_states=300)
    alone = raw(16, "10 Mbit/s", 200, IMIX, 8, link="100 Mbps", max_states=200)
    cbr = raw(3, "300 kbit/s", 128, [(512, 0.5), (1024, 0.5)], 10)
    cbr["traffic"]["EF"]["arrivals"] = "cbr"
    return {"exact chain": (_issue_port(max_granules=100), ["closed-form", "model-checked", "simulated"]),
            "ring exact (sizes would round)": (_issue_port(), ["model-checked"]),
            "rounded chain": (_issue_port(unit="500 B"), ["model-checked"]),
            "ring bound": (bound, ["model-checked"]),
            "ring alone": (alone, ["model-checked"]),
            "cbr": (cbr, ["closed-form"])}


PORTS = _ports()


@pytest.mark.parametrize("name", list(PORTS))
def test_every_label_emitted_is_in_the_table(name):
    table = _table()
    for (metric, method), r in _evaluated(name).items():
        assert (_cls(metric), method, r.kind.value) in table, (name, metric, method, r.kind.value)


def test_each_route_gives_the_kind_the_table_states():
    kinds = {name: {m: r.kind for m, r in _evaluated(name).items()} for name in
             ("ring exact (sizes would round)", "rounded chain", "ring bound", "ring alone")}
    loss = ("EF.loss", "model-checked")
    assert kinds["ring exact (sizes would round)"][loss] is Kind.NUMERICAL
    assert kinds["rounded chain"][loss] is Kind.APPROXIMATION
    assert kinds["ring bound"][loss] is Kind.UPPER_BOUND
    assert kinds["ring bound"][("EF.approx.loss", "model-checked")] is Kind.APPROXIMATION
    assert kinds["ring alone"][loss] is Kind.APPROXIMATION


def test_the_issues_rounded_example_is_answered_by_a_proved_interval_holding_the_exact_chain():
    """Rounded to 24-byte granules the exact chain's loss was 0.1732, labelled "upper bound", against the exact
    0.1781: the port is now answered by the ring method on the exact lattice, an interval proved on the exact ring
    chain, which holds the exact PQ + TxQ chain's loss (sizes whole at max_granules 100) and p99."""
    exact = _evaluated("exact chain")
    ring = _evaluated("ring exact (sizes would round)")
    for key in (("EF.loss", "model-checked"), ("EF.delay.p99", "model-checked")):
        e, r = exact[key], ring[key]
        assert e.kind in (Kind.NUMERICAL, Kind.EXACT) and r.kind is Kind.NUMERICAL
        assert r.interval.low - 1e-9 <= e.value <= r.interval.high + 1e-9, (key, e.value, r.interval)
    assert exact[("EF.loss", "model-checked")].value == pytest.approx(0.1781, abs=5e-4)


def test_a_rounded_chain_says_it_is_not_a_bound_and_why():
    r = _evaluated("rounded chain")[("EF.loss", "model-checked")]
    assert r.kind is Kind.APPROXIMATION and "not a bound" in r.interval.neglects
