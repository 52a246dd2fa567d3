"""Tests of ``qosbound reproduce ferrari2001`` (qosbound.reproduce.ferrari2001): Table IV from the command line, and
Fig. 3 -- the mean EF delay against the BE payload, by a sweep.

The command runs with ``--quick`` here (Table IV is the same; Fig. 3 gets three payloads)."""

from __future__ import annotations

import copy
import json
import math

import pytest

from qosbound.cli import main
from qosbound.reproduce import claims as C
from qosbound.reproduce import ferrari2001
from qosbound.reproduce import ferrari2001 as F


def test_text_output_reproduces_table_iv(capsys):
    """The command prints every K with the recomputed W to 0.01 us beside the paper's values (it exits 1: Table
    III's growth with A and the W_m hypothesis are NOT MET, tests/reproduce/test_ferrari2001_claims.py)."""
    assert main(["reproduce", "ferrari2001", "--quick"]) == 1
    out = capsys.readouterr().out
    for w, wm in (("12649.41", "10162.51"), ("17106.82", "15949.06"), ("21564.24", "19272.81")):
        assert w in out and wm in out
    assert "Table IV reproduced" in out


def test_json_output(capsys):
    """--json gives one row per K whose values match the data file's Table IV within its tolerance."""
    assert main(["reproduce", "ferrari2001", "--quick", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    ref = ferrari2001.reference()
    assert doc["match"] is True and doc["unit"] == "us"
    assert [r["K"] for r in doc["rows"]] == [1, 2, 3]
    for row, printed in zip(doc["rows"], ref["table_iv"]):
        for key in ("W_pq", "W_t", "W"):
            assert abs(row[key] - printed[key]) <= ref["tolerance_us"]
            assert row[f"{key}_diff"] == pytest.approx(row[key] - printed[key])
        assert row["W_m"] == printed["W_m"]


def test_out_writes_the_table(tmp_path, capsys):
    """--out writes the rows as JSON and CSV files."""
    assert main(["reproduce", "ferrari2001", "--quick", "--out", str(tmp_path), "--quiet"]) == 1
    capsys.readouterr()
    rows = json.loads((tmp_path / "ferrari2001_table_iv.json").read_text())
    assert len(rows) == 3
    assert (tmp_path / "ferrari2001_table_iv.csv").read_text().startswith("K,")


def test_mismatch_exits_1(monkeypatch, capsys):
    """When a recomputed value leaves the tolerance (here: a corrupted reference) the command exits 1."""
    ref = ferrari2001.reference()
    ref["table_iv"][1]["W"] += 1.0
    monkeypatch.setattr(ferrari2001, "reference", lambda: ref)
    assert main(["reproduce", "ferrari2001", "--quick"]) == 1
    assert "NOT reproduced" in capsys.readouterr().out


def test_cbr_bound_column_against_measurement():
    """The CBR maximum bound lies above the measured mean only for K = 1: the test bed adds delay outside the model.

    (The measurements are end-to-end one-way means over three routers; the model is one output port.)
    """
    rows = ferrari2001.table_iv_rows()
    assert [r["D_max_cbr"] > r["W_m"] for r in rows] == [True, False, False]
    assert all(r["W"] > r["W_m"] for r in rows)


# --- Fig. 3 -------------------------------------------------------------------------------------------------

def test_payload_grid_keeps_every_model_exact_and_within_budget():
    """The full grid spans 100..1450 B in 32-B steps; every IP size is a whole number of 32-B granules, so no size
    is rounded, and every chain's state bound lies within the scenario's max_states (no point skipped)."""
    from qosbound.models.pq_txq_render import layout
    from qosbound.models.pq_txq_size import predicted_states
    from qosbound.scenario import build, set_path
    from qosbound.systems.pq_txq import params

    pays = F.fig3_payloads()
    assert pays[0] == 100 and 1450 - F.FIG3_GRANULE < pays[-1] <= 1450 and len(pays) == 43
    assert F.fig3_payloads(quick=True) == [100, 484, 516]
    scn = F._fig3_scenario(False)
    budget = scn.methods.model_checked.max_states
    for pay in pays:
        raw = set_path(copy.deepcopy(scn.raw), "traffic.BE.size", f"{pay + F.HEADER_BYTES} B")
        s = build(raw)
        lay = layout(params(s), s.methods.model_checked)
        assert lay.granule == F.FIG3_GRANULE and not lay.rounded, pay
        assert predicted_states(params(s), s.methods.model_checked)[0] <= budget, pay


def test_closed_form_over_the_full_grid_is_table_iv_by_unit_count(tmp_path):
    """eq. (7) from the sweep at every payload equals Table IV's W for k = ceil((payload + 28 B) / 512 B), and a
    second run is all cache hits."""
    ref = F.reference()
    by_k = {int(r["K"]): float(r["W"]) for r in ref["table_iv"]}
    fig = F.fig3(methods=["closed-form"], cache_dir=tmp_path)
    assert fig["sweep"]["closed-form"]["computed"] == 43
    for pt in fig["points"]:
        k = math.ceil((pt["payload"] + 28) / 512)
        assert pt["units"] == k
        assert pt["closed-form"]["value"] * 1e6 == pytest.approx(by_k[k], abs=ref["tolerance_us"])
    again = F.fig3(methods=["closed-form"], cache_dir=tmp_path)
    assert again["sweep"]["closed-form"] == {**again["sweep"]["closed-form"], "computed": 0, "from_cache": 43}
    assert [p["closed-form"] for p in again["points"]] == [p["closed-form"] for p in fig["points"]]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig3")
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["reproduce", "ferrari2001", "--quick", "--json", "--out", str(out)])
    return code, json.loads(buf.getvalue()), out


def test_quick_run_draws_fig3_with_every_method(quick_run):
    """--quick: three payloads with the model, the simulation and eq. (7); the model's mean rises within one unit
    and falls where the BE packet needs a second unit; the simulation's 95 % CI holds the model's mean."""
    code, doc, _ = quick_run
    assert code == 1     # Table III and the W_m hypothesis: tests/reproduce/test_ferrari2001_claims.py
    rows = doc["fig3"]["rows"]
    assert [r["payload_B"] for r in rows] == [100, 484, 516] and [r["units"] for r in rows] == [1, 1, 2]
    model = [r["model_mean_us"] for r in rows]
    assert model[0] < model[1] and model[2] < model[1]
    for r in rows:
        assert r["sim_low_us"] <= r["model_mean_us"] <= r["sim_high_us"]
        assert r["model_mean_us"] <= r["W_us"] and not r["skipped"]


def test_quick_run_claims(quick_run):
    """The Fig. 3 claims are rows of the claim table, each reproduced; the 1000-B step is beyond --quick's grid."""
    _, doc, _ = quick_run
    fig3 = {c["claim"]: c["verdict"] for c in doc["result_rows"] if "Fig. 3" in c["source"]}
    assert fig3 == {
        "mean EF delay is non-monotone in the BE payload (model-checked)": C.REPRODUCED,
        "mean EF delay is non-monotone in the BE payload (simulated)": C.REPRODUCED,
        "the mean delay steps down exactly where a BE packet needs one more 512-B unit": C.REPRODUCED,
        "a discontinuity at a BE payload of 485 by": C.REPRODUCED,
        "between steps the mean delay grows with the payload (1 unit)": C.REPRODUCED}
    assert any(c["claim"].startswith("eq. (7)") and c["verdict"] == C.REPRODUCED for c in doc["result_rows"])
    by = {c["id"]: c["verdict"] for c in doc["claims"]}
    assert by["fig3-non-monotone"] == by["fig3-steps-at-unit-multiples"] == by["eq7-above-mean"] == C.CLAIM_REPRODUCED


def test_quick_run_writes_the_figure_and_the_sweep_tables(quick_run):
    """--out writes Fig. 3 as PNG and SVG with the paper's axes and units, its CSV and each method's sweep table."""
    _, _, out = quick_run
    assert (out / "ferrari2001_fig3.png").stat().st_size > 1000
    svg = (out / "ferrari2001_fig3.svg").read_text()
    assert "BE payload size (bytes)" in svg and "EF one-way delay, mean (ms)" in svg and "granule 32 B" in svg
    assert (out / "ferrari2001_fig3.csv").read_text().startswith("payload_B,ip_size_B,units,")
    for m in ("model-checked", "simulated_closed-form"):
        assert (out / f"ferrari2001_fig3_sweep_{m}" / "sweep.csv").exists()


def _fig(model: list[tuple[int, float]], eq7: float = 1.0) -> dict:
    pts = []
    for pay, v in model:
        pts.append({"payload": pay, "ip_size": pay + 28, "units": math.ceil((pay + 28) / 512),
                    "model-checked": {"value": v, "low": v, "high": v, "kind": ""}, "simulated": None,
                    "closed-form": {"value": eq7, "low": eq7, "high": eq7, "kind": ""}})
    return {"points": pts}


def _verdicts(fig: dict) -> dict:
    return {c.claim: c.verdict for c in F.fig3_claims(fig)}


def test_claims_fail_on_a_monotone_curve_or_a_step_off_the_unit_boundary():
    """The claim rows can fail: a monotone curve is NOT MET as non-monotone; a fall inside one unit, or none at
    a unit boundary, is NOT MET as "steps at unit multiples"; a mean above eq. (7) is NOT MET."""
    good = _verdicts(_fig([(100, 3e-3), (484, 7e-3), (516, 4e-3), (964, 8e-3), (996, 9e-3), (1028, 5e-3)]))
    assert set(good.values()) == {C.REPRODUCED} and "a discontinuity at a BE payload of 1000 by" in good
    mono = _verdicts(_fig([(100, 3e-3), (484, 7e-3), (516, 8e-3)]))
    assert mono["mean EF delay is non-monotone in the BE payload (model-checked)"] == C.NOT_MET
    assert mono["a discontinuity at a BE payload of 485 by"] == C.NOT_MET
    off = _verdicts(_fig([(100, 3e-3), (292, 2e-3), (484, 7e-3), (516, 4e-3)]))
    assert off["the mean delay steps down exactly where a BE packet needs one more 512-B unit"] == C.NOT_MET
    dip = _verdicts(_fig([(100, 3e-3), (132, 2.9e-3), (164, 3.5e-3), (484, 7e-3), (516, 4e-3)]))
    assert dip["between steps the mean delay grows with the payload (1 unit)"] == C.NOT_MET  # no simulation
    above = _verdicts(_fig([(100, 3e-3), (484, 7e-3), (516, 4e-3)], eq7=5e-3))
    assert above["eq. (7) (all units full) lies above the mean delay at every payload"] == C.NOT_MET
