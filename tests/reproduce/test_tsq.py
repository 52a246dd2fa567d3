"""Tests of `qosbound reproduce tsq` (Claypool, Kinicki & Kumar): the shape of the audio experiment and the cap table."""

import json

import numpy as np
import pytest
from scipy import stats

from qosbound.cli import main


@pytest.mark.slow
def test_reproduce_quick_shape(capsys, tmp_path):
    """Quick run: TCP bulk flows; delay rises and drop falls with the hint, quality has an interior optimum above PI
    alone; every experiment of sections 4.2-4.7 is there with its figure. The claims the evidence does not
    support are NOT MET (their named causes not supported by the sensitivity runs, or untested): the audio
    optimum at hint 6, Figure 12's video-vs-audio throughput, the file transfers' peak at 25 % audio and their gain and fall with unresponsive audio; and section
    5's numbers (audio gains of 8-18 % at every mix: 6 % at 75 audio flows; file transfers up to 4 %: about 1 %)."""
    code = main(["reproduce", "tsq", "--quick", "--json", "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["unlisted_rows"] == []
    assert sorted(c["id"] for c in out["claims"] if c["verdict"] == "NOT MET") == [
        "audio-best-at-6", "bulk-senders-shift-optimum", "conclusion-delay-sensitive-gain",
        "conclusion-throughput-sensitive-gain", "fig12-video-throughput-less-affected", "mixed-ftp-peak-25",
        "pi-target-explains-fig12", "udp-mix-ftp-above-1", "udp-mix-ftp-falls"]
    # the two sensitivity runs do not support the causes named for the audio optimum and Figure 12: with every bulk
    # segment acknowledged the optima move further from hint 6; with PI's target at 53 packets the video ratio
    # stays far below the audio one
    for cid, cause in (("audio-best-at-6", "bulk-senders-shift-optimum"),
                       ("fig12-video-throughput-less-affected", "pi-target-explains-fig12")):
        assert f"not supported by its test: {cause} NOT MET" in by_id(out)[cid]["reason"]
    assert out["video_pi_target"]["q_ref"] == 53 and out["audio_ack_every"]["delack"] == 0
    by = {c["id"]: c for c in out["claims"]}
    assert by["audio-delay-rises"]["verdict"] == "reproduced" and by["audio-delay-rises"]["power"] > 0.5
    # Figure 9's file transfers like the hint-16 audio flow (the rule of 118e57b, fixed before this run): their
    # throughput over the audio flow's, 1.195 +- 0.007 over 3 runs, inside [0.8, 1.25] by TOST
    ftp = by["audio-ftp-like-hint16"]
    assert ftp["verdict"] == "reproduced" and 1.0 < ftp["rows"][0]["value"] < 1.25
    # section 5's "up to 4 %" for the file transfers: qosbound's largest gain is about 1 %
    gain = by["conclusion-throughput-sensitive-gain"]
    assert gain["rows"][0]["value"] < 1.02 and gain["p_value"] > 0.5
    assert out["bulk_senders"].startswith("bulk file transfers: TCP")
    rows = [r for r in out["audio"]["rows"] if r["hint"] != "PI alone"]
    pi_alone = next(r for r in out["audio"]["rows"] if r["hint"] == "PI alone")
    hints = [r["hint"] for r in rows]
    assert stats.spearmanr(hints, [r["delay_s"] for r in rows]).statistic > 0.9
    assert stats.spearmanr(hints, [r["drop"] for r in rows]).statistic < -0.8
    best = out["audio"]["best_hint"]
    assert 1 < best < 16
    assert max(r["quality"] for r in rows) > pi_alone["quality"]
    cap = out["cap_region"][0]["cap_min_drop"]
    assert cap[-1] == pytest.approx(1.0) and np.all(np.diff(cap) > 0)
    # the delay CDFs of Figures 8 and 11 rest on enough packets, hint 1 included
    from qosbound.reproduce.tsq_figures import CDF_MIN_PACKETS

    assert min(out["audio"]["cdf_packets"].values()) >= CDF_MIN_PACKETS
    assert [r["audio_flows"] for r in out["mixed"]] == [1, 25, 50, 75] == [r["audio_flows"] for r in out["udp_mix"]]
    names = {f.split("/")[-1] for f in out["figures"]}
    for stem in ("tsq_delay_cdf", "tsq_audio_throughput_cdf", "tsq_quality_vs_hint", "tsq_video_delay_cdf",
                 "tsq_video_throughput_cdf", "tsq_video_quality_vs_hint", "tsq_mixed_normalised_quality",
                 "tsq_udp_file_throughput_vs_hint", "tsq_udp_mix_normalised_quality"):
        assert {stem + ".png", stem + ".svg"} <= names
    assert all((tmp_path / n).exists() for n in names)
    sources = " ".join(c["source"] for c in out["result_rows"])
    for fig in ("Figure 8", "Figure 9", "Figure 10", "Figure 11", "Figure 12", "Figure 13", "Figure 14",
                "Figure 15", "Figure 16"):
        assert fig in sources


def test_argmax_by_seed_counts_each_replications_optimum():
    """The optimum hint seed by seed: replication r of every hint is one seed; ties go to the higher hint."""
    from qosbound.reproduce.tsq_experiments import argmax_by_seed

    rows = [{"hint": 5, "quality_reps": [0.9, 0.5, 0.7]}, {"hint": 6, "quality_reps": [0.8, 0.6, 0.7]},
            {"hint": 7, "quality_reps": [0.1, 0.61, 0.2]}]
    a = argmax_by_seed(rows)
    assert a["per_seed"] == [5, 7, 6] and a["distribution"] == {5: 1, 6: 1, 7: 1}


def test_video_quality_below_160_kbit_s_is_marked_as_an_assumption():
    """The reading of the video throughput quality below 160 kbit/s is qosbound's: `reproduce tsq` lists it as an
    assumption, and a video flow's results name it in their provenance (an audio flow's do not)."""
    import copy

    from qosbound.reproduce.tsq import ASSUMPTIONS
    from qosbound.scenario import build, load
    from qosbound.shipped import example_path
    from qosbound.systems import get_system

    assert any("160 kbit/s" in a["what"] and a["status"].startswith("assumption") for a in ASSUMPTIONS)
    raw = copy.deepcopy(load(example_path("tsq_audio")).raw)
    raw["flows"]["audio"]["app"] = "video"
    raw["flows"]["audio"]["rate"] = "100 kbit/s"
    system = get_system("tsq")
    from qosbound.progress import progress

    with progress(False) as prog:
        res = {r.metric: r for r in system.evaluate(build(raw), ["closed-form"], prog)}
    assert "160 kbit/s" in res["audio.quality"].provenance["assumption"]
    assert "assumption" not in res["bulk.quality"].provenance


def _sweep(peak: int, spread: float = 0.05):
    """A synthetic audio sweep: quality peaks at ``peak``, delay rises and drop falls with the hint."""
    rows = []
    for h in list(range(1, 17)) + ["PI alone"]:
        x = 16 if h == "PI alone" else h
        q = 0.9 - spread * abs(x - peak)
        rows.append({"hint": h, "delay_s": 0.007 * x, "drop": 0.2 / x, "rate_bps": 8e3 * x, "quality": q,
                     "replications": 5, "delay_se": 1e-4, "rate_se": 1.0, "quality_reps": [q - 1e-3, q, q + 1e-3],
                     "quality_reps_mean": q, "quality_reps_se": 1e-3})
    return {"rows": rows, "argmax_by_seed": {"per_seed": [peak] * 3, "distribution": {peak: 3}}}


def test_best_hint_claim_reproduced_found_or_not_met():
    """The optimum at the paper's hint 6 is reproduced; resolved at 8 it is the documented finding; at 14 (not
    within NEAR_OPTIMUM hints) it is NOT MET."""
    from qosbound.analytic.tsq import reference_data
    from qosbound.reproduce import claims as C
    from qosbound.reproduce.tsq_claims import claims

    data = reference_data()

    def verdict(peak):
        rows = claims(data, [], _sweep(peak))
        return next(c for c in rows if c.claim.startswith("audio flow: best overall quality")).verdict

    assert [verdict(6), verdict(8), verdict(14)] == [C.REPRODUCED, C.FINDING, C.NOT_MET]


def by_id(doc: dict) -> dict:
    return {c["id"]: c for c in doc["claims"]}
