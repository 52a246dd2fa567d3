"""The AF chain's size is estimated from the buffer before anything is built, and an oversized one is refused."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from qosbound.systems.af import MAX_AF_MODEL_STATES, model_states
from tests.models.test_af import COUNTS


@pytest.mark.parametrize("mode,states,transitions", COUNTS)
def test_estimate_bounds_the_built_state_count(mode, states, transitions):
    """At K = 14 the estimate is at least the state count Storm builds (asserted in tests/models/test_af.py)."""
    assert states <= model_states(14, mode) < 2 * states + 20


def test_estimate_is_exact_for_the_koehler_n_red_chain():
    """Köhler & Schäfer's example at a 90-packet buffer: the n-RED chain has C(93, 3) = 129,766 states."""
    assert model_states(90, "nred") == 129_766


def test_a_huge_buffer_is_refused_before_building(tmp_path):
    """An AF buffer of 1e6 packets on the model: asked for by name, one line naming the field and the estimate,
    exit 4, no hang; merely enabled by the scenario, the model is skipped with that reason and the closed form
    and the simulator answer."""
    from qosbound.shipped import example_path

    raw = yaml.safe_load(open(example_path("qstp2008")))
    cls = next(iter(raw["classes"]))
    raw["classes"][cls]["buffer"] = 1_000_000
    raw["methods"] = {"model-checked": {}}
    f = tmp_path / "big.yaml"
    f.write_text(yaml.safe_dump(raw))
    proc = subprocess.run([sys.executable, "-m", "qosbound", "plan", str(f), "--methods", "model-checked", "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 4, proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line and f"classes.{cls}.buffer" in line and "states" in line
    proc = subprocess.run([sys.executable, "-m", "qosbound", "plan", str(f), "--json", "--quiet"],
                          capture_output=True, text=True, timeout=300)
    doc = json.loads(proc.stdout)
    assert proc.returncode == doc["exit_code"] and proc.returncode != 4
    assert f"classes.{cls}.buffer" in doc["skipped"]["model-checked"] and "states" in doc["skipped"]["model-checked"]
    assert "closed-form" in {m["method"] for m in doc["metrics"]} and "model-checked" not in {m["method"] for m in doc["metrics"]}
    assert model_states(1_000_000, "rio") > MAX_AF_MODEL_STATES
