"""`qosbound validate --simulate` on the TSQ and TFRC scenarios: traces in the one schema, metrics by flow."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from qosbound.cli import main
from qosbound.scenario import load_raw

ROOT = Path(__file__).resolve().parents[1]


def _short(tmp_path, example, **sim):
    raw = load_raw(ROOT / "examples" / example)
    raw.setdefault("methods", {}).setdefault("simulated", {}).update(sim)
    p = tmp_path / example
    p.write_text(yaml.safe_dump(raw))
    return str(p)


def test_tsq_validate_reports_per_flow_trace_statistics(tmp_path, capsys):
    """The TSQ trace gives each flow group's delay and drop with intervals, judged against the models."""
    path = _short(tmp_path, "tsq_audio.yaml", duration=12.0, warmup=4.0, replications=2)
    code = main(["validate", path, "--simulate", "--json", "--quiet", "--out", str(tmp_path / "out")])
    doc = json.loads(capsys.readouterr().out)
    observed = {m["metric"]: m for m in doc["metrics"] if m["method"] == "simulated"}
    assert {"audio.delay.mean", "bulk.delay.mean", "audio.drop"} <= set(observed)
    for m in observed.values():
        assert m["interval"] is not None
    assert code in (0, 1)


def test_tfrc_validate_measures_the_delivered_rate(tmp_path, capsys):
    """The TFRC trace gives each studied flow's delivered throughput; gTFRC's sits near its target."""
    path = _short(tmp_path, "qstp_gtfrc.yaml", duration=40.0, warmup=10.0)
    code = main(["validate", path, "--simulate", "--json", "--quiet", "--out", str(tmp_path / "out")])
    doc = json.loads(capsys.readouterr().out)
    thr = {m["metric"]: m for m in doc["metrics"] if m["metric"].endswith(".throughput")}
    assert set(thr) == {"flow1.throughput", "flow2.throughput"}
    assert 300e3 < thr["flow1.throughput"]["value"] < 600e3
    assert code == 0
