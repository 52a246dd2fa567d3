"""Every shipped pq_txq and af example as a port (qosbound.systems.port.convert, ``qosbound convert``) gives the
same numbers: closed forms and models exactly (the same value and kind for every metric both report), and
simulation within the intervals -- except the delays ``af`` simulates under WFQ, which a port's DRR changes."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from qosbound.agreement import agreements
from qosbound.progress import QUIET
from qosbound.results import Result
from qosbound.scenario import build, load
from qosbound.systems import get_system
from qosbound.systems.port.convert import UNBOUNDED_QUEUE, convert
from qosbound.validation.stats import welch
from tests.helpers import EXAMPLES, ROOT, one_line

SHIPPED = sorted(p for p in list(EXAMPLES.glob("*.yaml")) + list(EXAMPLES.glob("*/*.yaml"))
                 if yaml.safe_load(p.read_text())["system"] in ("pq_txq", "af"))
#: af metrics a port does not report (queue length, per-colour delays and marker fractions).
AF_ONLY = (".queue.mean", ".colour.", ".delay.AF")


def _port_key(system: str, metric: str, cases: list[str]) -> tuple[int, str] | None:
    """(which converted port, the port's name for it) of an original metric; None for af-only metrics."""
    parts = metric.split(".")
    if system == "af":
        if any(x in metric for x in AF_ONLY):
            return None
        if len(parts) == 3 and parts[1] == "rate":
            return cases.index(parts[2]), f"{parts[0]}.rate"
        if len(parts) == 2 and parts[1] == "drop":
            return 0, f"{parts[0]}.loss"
    return 0, metric


def _compare(path, methods):
    scn = load(path)
    orig = get_system(scn.system).evaluate(scn, methods, QUIET)
    ports, _ = convert(path)
    results = [{(r.metric, r.method): r for r in get_system("port").evaluate(build(p), methods, QUIET)}
               for p in ports]
    compared = 0
    for r in orig:
        key = _port_key(scn.system, r.metric, list(scn.raw.get("cases", {})))
        if key is None:
            continue
        q = results[key[0]].get((key[1], r.method))
        assert q is not None, f"{path.name}: the port has no {key[1]} by {r.method}"
        assert q.value == pytest.approx(r.value, rel=1e-9, abs=1e-15), (r.metric, r.method)
        assert q.kind == r.kind, (r.metric, r.method, q.kind, r.kind)
        compared += 1
    return compared


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_closed_forms_are_the_same_numbers(path):
    """Every closed-form result of the original, under its port name (af: X.drop is X.loss, X.rate.<case> the
    case's port's X.rate), has the same value and the same kind."""
    assert _compare(path, ["closed-form"]) >= 3


@pytest.mark.parametrize("name", ["ferrari2001_fig3", "qstp2008", "takeo2003"])
def test_models_are_the_same_numbers(name):
    """The model-checked results too: pq_txq's exact chain (its granules, its kinds), af's dropper chains on
    Storm with the same inputs."""
    assert _compare(EXAMPLES / f"{name}.yaml", ["closed-form", "model-checked"]) >= 10


def _sim(raw_or_scn, packets, replications, seed):
    raw = raw_or_scn if isinstance(raw_or_scn, dict) else raw_or_scn.raw
    raw["methods"] = dict(raw.get("methods") or {}, simulated={"packets": packets, "replications": replications,
                                                               "seed": seed})
    scn = build(raw)
    return get_system(scn.system).evaluate(scn, ["simulated"], QUIET)


def test_a_pq_txq_port_simulates_within_the_exact_chain_s_numbers():
    """ferrari2001 as a port: its simulated EF delay mean, p99 and CCDF agree with pq_txq's exact chain by the
    family-wise agreement rule (no 'disagree')."""
    path = EXAMPLES / "ferrari2001.yaml"
    exact = [r for r in get_system("pq_txq").evaluate(load(path), ["model-checked"], QUIET)]
    (port_raw,), _ = convert(path)
    sim = _sim(port_raw, 400_000, 6, 21)
    verdicts = agreements(exact + sim)
    compared = {v.metric for v in verdicts}
    assert {"EF.delay.mean", "EF.delay.p99", "EF.loss"} <= compared
    assert not [v for v in verdicts if v.status == "disagree"], [v.name for v in verdicts if v.disagrees]


def test_an_af_port_simulates_af_s_drops_and_throughputs_its_scheduler_changes_delays():
    """takeo2003 case 1 under DRR (the port) and WFQ (af's simulator): every class's drop per precedence and
    throughput agree (Welch, 1 % level); the mean delays differ where a light class shares the link with
    heavier ones (WFQ's virtual finish times favour its short packets), which is the scheduler difference."""
    path = EXAMPLES / "takeo2003.yaml"
    ports, _ = convert(path)
    port = _sim(ports[0], 150_000, 4, 3)
    af = _sim(load(path), 150_000, 4, 3)

    def by(rs: list[Result]):
        return {r.metric.replace(".drop", ".loss") if r.metric.count(".") == 1 else r.metric: r for r in rs}

    p, a = by(port), by(af)
    checked = 0
    for m, r in p.items():
        if m not in a or not (".drop." in m or m.endswith((".throughput", ".loss"))):
            continue
        s = a[m]
        w = welch(r.value, r.provenance["std_error"], 4, s.value, s.provenance["std_error"], 4)
        assert w.p_value() > 0.01 or abs(r.value - s.value) < 1e-4, (m, r.value, s.value)
        checked += 1
    assert checked >= 10
    assert p["AF2.delay.mean"].value > a["AF2.delay.mean"].value  # DRR's rounds, documented in docs/port.md


def test_a_loaded_best_effort_becomes_class_default_with_a_queue_it_never_fills():
    (port,), notes = convert(EXAMPLES / "wan100_be60.yaml")
    default = port["classes"][1]
    assert default["queue_limit"] == UNBOUNDED_QUEUE and default["traffic"]["arrivals"] == "poisson"
    assert any("unbounded" in n for n in notes)


def test_the_convert_command(tmp_path):
    """To standard output: YAML documents that load as ports; with --out: one file per port (af: per case);
    another system: one line, exit 2."""
    proc = subprocess.run([sys.executable, "-m", "qosbound", "convert", "examples/takeo2003.yaml"],
                          capture_output=True, text=True, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    docs = list(yaml.safe_load_all(proc.stdout))
    assert [d["name"] for d in docs] == [f"takeo2003-case{i}" for i in range(1, 7)]
    assert all(build(d).system == "port" for d in docs)
    proc = subprocess.run([sys.executable, "-m", "qosbound", "convert", "wan100", "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=str(ROOT))
    assert proc.returncode == 0 and load(tmp_path / "wan100.yaml").system == "port"
    proc = subprocess.run([sys.executable, "-m", "qosbound", "convert", "examples/tsq_audio.yaml"],
                          capture_output=True, text=True, cwd=str(ROOT))
    assert proc.returncode == 2 and "only pq_txq and af" in one_line(proc.stderr)
