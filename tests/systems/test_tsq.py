"""Tests of qosbound.systems.tsq: the scenario schema, closed-form plan, admission by hint, and the CLI."""

import json

import pytest

from qosbound.cli import main
from qosbound.errors import ScenarioError
from qosbound.progress import QUIET
from qosbound.scenario import build, load, load_raw
from qosbound.systems import tsq as S
from tests.helpers import example

EXAMPLE = example("tsq_audio")


def _raw(**changes):
    raw = load_raw(EXAMPLE)
    for k, v in changes.items():
        cur = raw
        parts = k.split(".")
        for p in parts[:-1]:
            cur = cur[p]
        cur[parts[-1]] = v
    return raw


def test_example_loads():
    """The example validates into a tsq scenario with the seed's PI constants."""
    scn = load(EXAMPLE)
    assert scn.system == "tsq" and scn.aqm.q_ref == 200 and scn.flows["bulk"].count == 99
    assert scn.hints() == list(range(1, 17))


@pytest.mark.parametrize("field,value,where", [
    ("flows.audio.hint", 17, "flows.audio.hint"),
    ("aqm.b", 2e-5, "aqm"),
    ("metrics.sweep", "bulk", "metrics.sweep"),
    ("tsq.latency", "-1 ms", "tsq.latency"),
])
def test_bad_input_names_field(field, value, where):
    """Bad values are ScenarioErrors naming the field."""
    with pytest.raises(ScenarioError) as e:
        build(_raw(**{field: value}), "x.yaml")
    assert where in str(e.value)


def test_unresponsive_overload_is_an_error():
    """CBR load at or above the link rate has no stable operating point: an error, not numbers."""
    raw = _raw()
    raw["flows"]["udp"] = {"kind": "cbr", "rate": "16 Mbps"}
    with pytest.raises(ScenarioError):
        build(raw, "x.yaml")


def test_closed_form_plan():
    """The closed form gives per-hint delay, drop, rate, quality and bounds; delay rises, drop falls with hint."""
    scn = load(EXAMPLE)
    res = {r.metric: r for r in S.evaluate(scn, ["closed-form"], QUIET)}
    assert 0 < res["tsq.aqm_drop"].value < 0.1
    d = [res[f"audio@h{h}.delay.mean"].value for h in range(1, 17)]
    p = [res[f"audio@h{h}.drop"].value for h in range(1, 17)]
    assert d == sorted(d) and p == sorted(p, reverse=True)
    assert res["audio@h16.drop"].value == pytest.approx(res["tsq.aqm_drop"].value)
    best = int(res["audio.best_hint"].value)
    q = [res[f"audio@h{h}.quality"].value for h in range(1, 17)]
    assert 1 < best < 16 and q[best - 1] == max(q)  # an interior optimum
    for h in range(1, 17):
        assert res[f"audio@h{h}.delay.bound"].value >= res[f"audio@h{h}.delay.mean"].value


def test_tsq_off_is_fifo():
    """With TSQ disabled every hint gets the tail delay and the AQM drop."""
    scn = build(_raw(**{"tsq.enabled": False}), "x.yaml")
    res = {r.metric: r.value for r in S.evaluate(scn, ["closed-form"], QUIET)}
    assert res["audio@h1.delay.mean"] == res["audio@h16.delay.mean"]
    assert res["audio@h1.drop"] == res["audio@h16.drop"]


def test_metric_kinds():
    """Metric names map to unit kinds; unknown ones are errors."""
    assert S.metric_kind("audio@h3.delay.mean") == "time"
    assert S.metric_kind("audio.rate") == "rate"
    assert S.metric_kind("tsq.gain") == "count"
    with pytest.raises(ScenarioError):
        S.metric_kind("audio.jitter")


def test_admit_picks_quality_maximising_hint():
    """admit --vary flows.audio.hint returns the closed form's best hint, over all 16 hints."""
    from qosbound.admit import admit

    scn = load(EXAMPLE)
    r = admit(scn, "flows.audio.hint", method="closed-form")
    res = {x.metric: x.value for x in S.evaluate(scn, ["closed-form"], QUIET)}
    assert r.value == res["audio.best_hint"] and r.evaluations == 16
    with pytest.raises(ScenarioError):  # a hint of a flow the scenario does not declare
        admit(scn, "flows.nosuch.hint", method="closed-form")
    # any other parameter goes to the generic search (tests/systems/tsq/test_admission.py checks it honours --direction)


def test_cli_plan_json(capsys):
    """`qosbound plan --methods closed-form --json` prints per-hint results and exits 0."""
    code = main(["plan", str(EXAMPLE), "--methods", "closed-form", "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    metrics = {r["metric"] for r in out["metrics"]}
    assert {"audio@h6.quality", "audio@h1.drop", "audio.best_hint"} <= metrics


def test_cli_bad_file_exit_2(tmp_path, capsys):
    """A bad scenario exits 2 with one line naming the field."""
    p = tmp_path / "bad.yaml"
    raw = _raw(**{"flows.audio.hint": 0})
    import yaml

    p.write_text(yaml.safe_dump(raw))
    assert main(["plan", str(p), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "flows.audio.hint" in err and err.count("\n") == 1


@pytest.mark.slow
def test_example_verify_all_methods(capsys):
    """The example's SLOs, including "no throughput gain from cutting in line" (MDP), hold by every method."""
    code = main(["verify", str(EXAMPLE), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "no throughput gain from cutting in line" in out


def test_model_checked_per_hint():
    """Storm gives per-hint mean, p99 and drop; lower hints wait less and drop more; p99 >= mean."""
    raw = _raw(**{"metrics.hints": [1, 8, 16]})
    raw["methods"]["model-checked"]["mdp"] = False
    scn = build(raw, "x.yaml")
    res = {r.metric: r.value for r in S.evaluate(scn, ["model-checked"], QUIET)}
    mean = [res[f"audio@h{h}.delay.mean"] for h in (1, 8, 16)]
    p99 = [res[f"audio@h{h}.delay.p99"] for h in (1, 8, 16)]
    drop = [res[f"audio@h{h}.drop"] for h in (1, 8, 16)]
    assert mean == sorted(mean) and p99 == sorted(p99) and drop == sorted(drop, reverse=True)
    assert all(p >= m for p, m in zip(p99, mean))
    assert "tsq.gain" not in res


def test_admit_respects_the_flows_slos():
    """With audio.delay.mean <= 30 ms only hints with q' = d q/16 <= 30 ms qualify; the best of them is chosen."""
    from qosbound.admit import admit

    raw = _raw()
    raw["slos"] = [{"metric": "audio.delay.mean", "max": "30 ms"}]
    scn = build(raw, "x.yaml")
    r = admit(scn, "flows.audio.hint", method="closed-form")
    res = {x.metric: x.value for x in S.evaluate(scn, ["closed-form"], QUIET)}
    ok = [h for h in range(1, 17) if res[f"audio@h{h}.delay.mean"] <= 0.030]
    assert r.value == max(ok, key=lambda h: res[f"audio@h{h}.quality"])
    assert "failing" in r.message


def test_model_render_and_check(tmp_path, capsys):
    """`qosbound model render` writes both TSQ models with constants filled in; the DTMC then checks on Storm."""
    assert main(["model", "render", str(EXAMPLE), "--out", str(tmp_path)]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["tsq-audio_tsq.prism", "tsq-audio_tsq.props", "tsq-audio_tsq.storm.props",
                     "tsq-audio_tsq_hint.prism", "tsq-audio_tsq_hint.props"]
    capsys.readouterr()
    assert main(["model", "check", str(tmp_path / "tsq-audio_tsq_hint.prism"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["states"], out["transitions"]) == (801, 2401)
    assert 0 < out["values"]["mean_drop"] < 1
