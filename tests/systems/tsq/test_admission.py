"""Admission on TSQ scenarios: the hint search honours --direction, every other parameter goes to the generic
search (which honours it too). Before, TSQ's own search answered "quality-maximising" whatever was asked and
refused any parameter but a hint."""

from __future__ import annotations

import json

from qosbound.admit import admit
from qosbound.cli import main
from qosbound.progress import QUIET
from qosbound.scenario import build, load_raw, set_path
from qosbound.systems import tsq as S
from qosbound.verdicts import judge_slos
from tests.helpers import example

EXAMPLE = example("tsq_audio")


def _scenario():
    """The example with one SLO the closed form judges: the audio flow's mean queueing delay at most 30 ms."""
    raw = load_raw(EXAMPLE)
    raw["slos"] = [{"metric": "audio.delay.mean", "max": "30 ms"}]
    return raw, build(raw, "x.yaml")


def _holds(raw, parameter, value) -> bool:
    scn = build(set_path(raw, parameter, value), "x.yaml")
    return all(not v.failed for v in judge_slos(S, scn, S.evaluate(scn, ["closed-form"], QUIET)))


def test_hint_direction_picks_the_largest_or_smallest_feasible_hint():
    """--direction largest/smallest returns the largest/smallest hint meeting the flow's SLOs; without it, the
    quality-maximising one; the three agree with the per-hint closed form."""
    raw, scn = _scenario()
    res = {r.metric: r.value for r in S.evaluate(build({**raw, "metrics": {"sweep": "audio"}}, "x.yaml"),
                                                     ["closed-form"], QUIET)}
    ok = [h for h in range(1, 17) if res[f"audio@h{h}.delay.mean"] <= 0.030]
    assert 1 < len(ok) < 16  # the SLO splits the hints, so the directions differ
    best = admit(scn, "flows.audio.hint", method="closed-form")
    largest = admit(scn, "flows.audio.hint", direction="largest", method="closed-form")
    smallest = admit(scn, "flows.audio.hint", direction="smallest", method="closed-form")
    assert best.direction == "quality-maximising"
    assert best.value == max(ok, key=lambda h: res[f"audio@h{h}.quality"])
    assert (largest.direction, largest.value) == ("largest", max(ok))
    assert (smallest.direction, smallest.value) == ("smallest", min(ok))
    assert largest.binding == "audio.delay.mean <= 30 ms"  # it fails at the next hint up


def test_other_parameters_go_to_the_generic_search_with_their_direction():
    """--vary link.rate --direction smallest: the smallest link rate meeting the delay SLO (it holds there and
    fails just below), where TSQ's own search used to refuse the parameter."""
    raw, scn = _scenario()
    r = admit(scn, "link.rate", direction="smallest", method="closed-form")
    assert r.direction == "smallest" and r.binding == "audio.delay.mean <= 30 ms"
    assert _holds(raw, "link.rate", r.value) and not _holds(raw, "link.rate", r.value * 0.999)


def test_cli_admit_passes_the_direction(tmp_path, capsys):
    """`qosbound admit --vary flows.audio.hint --direction smallest` reports the smallest feasible hint."""
    import yaml

    raw, _ = _scenario()
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(raw))
    code = main(["admit", str(p), "--vary", "flows.audio.hint", "--direction", "smallest", "--method",
                 "closed-form", "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["direction"] == "smallest" and doc["value"] == 1.0
