"""`qosbound plan` on every shipped example: every metric computed by two or more methods gets at least one
agreement verdict, so a new system cannot forget them, and the verdicts hold (agree, or approximate with what
the approximation neglects); a disagreement must say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from qosbound.cli import main
from qosbound.scenario import load_raw

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))


def _smaller(raw: dict) -> dict:
    """The example with shorter simulations (statistical checks stay family-wise valid at any size)."""
    sim = (raw.get("methods") or {}).get("simulated")
    if isinstance(sim, dict):
        if "packets" in sim or raw.get("system") == "pq_txq":
            sim["packets"] = min(int(float(sim.get("packets", 400_000))), 400_000)
        if "replications" in sim:
            sim["replications"] = min(int(sim["replications"]), 6)
    return raw


def _compared(metrics: list[dict]) -> dict[str, list[dict]]:
    """Metric -> the results that compute it (under its own name or as the metric they estimate)."""
    out: dict[str, list[dict]] = {}
    for m in metrics:
        out.setdefault(m.get("estimates") or m["metric"], []).append(m)
    return out


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_metric_computed_twice_has_agreement_verdicts(path, tmp_path, capsys):
    scn = tmp_path / path.name
    scn.write_text(yaml.safe_dump(_smaller(load_raw(path))))
    code = main(["plan", str(scn), "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    verdicts = doc["agreement_verdicts"]
    on = {}
    for v in verdicts:
        on.setdefault(v["metric"], []).append(v)
    for metric, results in _compared(doc["metrics"]).items():
        methods = {r["method"] for r in results}
        if len(methods) < 2:
            continue
        kinds = {r["kind"] for r in results}
        if kinds <= {"upper bound"} or kinds <= {"lower bound"}:
            continue  # two bounds from the same side cannot contradict each other: nothing to check
        assert metric in on, f"{path.stem}: {metric} by {sorted(methods)} has no agreement verdict"
    for v in verdicts:
        assert v["status"] in ("agree", "approximate", "disagree")
        if v["status"] == "approximate":
            assert "neglects" in v["detail"], v
        assert v["status"] != "disagree", f"{path.stem}: {v['name']}: {v['detail']}"
    assert code == doc["exit_code"] and code in (0, 1)
