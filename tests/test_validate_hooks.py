"""`qosbound validate` reaches every system through its hooks: AF's own trace simulator, and a typed one-line
refusal where a system has no ns-3 counterpart (it used to be found by hasattr and a branch on AF)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qosbound.cli import main
from qosbound.scenario import load, load_raw
from qosbound.systems import get_system

from tests.helpers import one_line

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_af_simulate_trace_hook_gives_one_row_per_packet_named_by_class():
    """AF's simulate_trace hook: the class simulator's trace, flows named by the scenario's classes, colours
    0..2; a packet neither dropped nor departed is still buffered at the end, so there are at most as many as
    the class buffers hold; the same seed gives the same trace."""
    scn = load(EXAMPLES / "koehler1999.yaml")
    system = get_system("af")
    t = system.simulate_trace(scn, 5000, 3)
    assert t.num_rows >= 5000
    assert set(t.column("flow").to_pylist()) <= set(scn.classes)
    colour = t.column("colour").to_numpy()
    assert colour.min() >= 0 and colour.max() <= 2
    dropped = t.column("dropped").to_numpy(zero_copy_only=False)
    dep = t.column("departure").to_numpy(zero_copy_only=False)
    in_flight = int(np.sum(~dropped & ~np.isfinite(dep)))
    assert in_flight <= sum(c.buffer for c in scn.classes.values())
    assert t.equals(system.simulate_trace(scn, 5000, 3))


def test_validate_ns3_on_a_system_without_ns3_is_one_line_exit_2(tmp_path, capsys):
    """`validate --ns3` on a TSQ scenario is refused (exit 2) by the system's hook, in one line."""
    import yaml

    raw = load_raw(EXAMPLES / "tsq_audio.yaml")
    raw["methods"]["model-checked"] = {"enabled": False}  # the closed form is reference enough here
    p = tmp_path / "tsq.yaml"
    p.write_text(yaml.safe_dump(raw))
    code = main(["validate", str(p), "--ns3", "--quiet", "--out", ""])
    err = capsys.readouterr().err
    assert code == 2
    assert "the tsq system has no ns-3 model" in one_line(err)
