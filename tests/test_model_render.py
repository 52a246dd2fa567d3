"""`qosbound model render` writes self-contained PRISM files whose results equal the scenario's own run."""

from __future__ import annotations

from pathlib import Path

import pytest

from qosbound.cli import main
from qosbound.models.engine import check
from qosbound.scenario import load

ROOT = Path(__file__).resolve().parents[1]


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
