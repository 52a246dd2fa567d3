"""``qosbound reproduce tsq``: the results of the TSQ paper ("Traffic Sensitive QoS Controller"), regenerated.

1. The cap region of the drop adjustment for the seed's parameters (l = 40 ms,
   PI target 200 packets and buffer 800 packets of 1000 B at 15 Mbit/s).
2. The quality functions at the values section 2 quotes.
3. The audio experiment of section 4.2 (15 Mbit/s, 99 bulk flows + one
   TCP-friendly 128 kbit/s audio flow, one-way propagation 150 ms): per-hint
   queueing delay, drop, throughput and quality of the audio flow, and the
   hint that maximises quality (the paper finds 6), with PI alone as the
   reference. Figures (``--out``): quality versus hint, delay CDFs for hints 1, 6, 16.

Claims checked (:mod:`qosbound.reproduce.claims`): every quoted value of the
quality functions (section 2) within the tolerance the reference data states;
and section 4.2.2 on the simulated audio experiment: the queueing delay rises
and the drop falls with the hint (Spearman rank correlation, one-sided
p < 0.05), the best overall quality is at hint 6 (not resolved below the best
hint's quality: one-sided 95 % Welch bound on the difference of replication
means), TSQ's best hint beats PI alone (same bound), and PI alone gives about
hint 16's delay (difference not resolved at 95 %). Exit 0 when every claim is
met, 1 otherwise.
"""

from __future__ import annotations

import json

import numpy as np

from qosbound.analytic.tsq import reference_data
from qosbound.reproduce import claims as C
from qosbound.reproduce.tsq_claims import (ALMOST_CONSTANT, FILE_FLAT_FINDING, NEAR_OPTIMUM, SPEARMAN_EFFECT,
                                           all_claims, claims, hint_ratio, mixed_claims, optimum_claim, udp_claims,
                                           video_claims)
from qosbound.reproduce.tsq_experiments import (BULK_KINDS, MIXES, UDP_RATE, argmax_by_seed, audio_sweep, cap_table,
                                                experiments, hint_sweep, mdp_scan, mix_sweep, optimum_by_seed,
                                                optimum_spread, quality_rows, settings, udp_hint_sweep)
from qosbound.reproduce.tsq_figures import CDF_MIN_PACKETS, plots

__all__ = ["run", "audio_sweep", "hint_sweep", "mix_sweep", "udp_hint_sweep", "experiments", "settings", "claims",
           "video_claims", "mixed_claims", "udp_claims", "all_claims", "optimum_claim", "optimum_shift", "ASSUMPTIONS",
           "argmax_by_seed", "CDF_MIN_PACKETS", "NEAR_OPTIMUM", "BULK_KINDS", "MIXES", "UDP_RATE", "ALMOST_CONSTANT",
           "FILE_FLAT_FINDING", "SPEARMAN_EFFECT", "mdp_scan"]

#: Readings of the paper that are qosbound's own, printed with every output that uses them.
ASSUMPTIONS = [
    {"what": "video throughput quality below 160 kbit/s",
     "qosbound": "linear from 0.6 at 160 kbit/s down to 0 at 0 kbit/s",
     "paper": "section 2.2.2: only \"any further reduction in throughput will cause the quality to fall off "
              "sharply\"; the formula for T < 160 kbit/s is lost in the text",
     "status": "assumption (not the paper's; no quoted value below 160 kbit/s to check it against)"},
]


def _print_sweep(title: str, sw: dict, unit_app: str) -> None:
    print(title)
    print("   hint   queueing delay   drop      throughput      quality (mean of replications +- s.e.)")
    for r in sw["rows"]:
        print(f"   {str(r['hint']):<8} {r['delay_s'] * 1000:8.1f} ms   {r['drop']:.4f}   "
              f"{r['rate_bps'] / 1000:8.1f} kbit/s   {r['quality_reps_mean']:.4f} +- {r['quality_reps_se']:.4f}")
    print(f"   best hint: {sw['best_hint']}; optimum seed by seed: {optimum_spread(sw)} "
          f"(per seed: {optimum_by_seed(sw)['per_seed']})")
    for hint, n in sorted(sw.get("cdf_packets", {}).items(), key=lambda kv: str(kv[0])):
        flag = "" if n >= CDF_MIN_PACKETS else f" (below {CDF_MIN_PACKETS}: read its shape with care)"
        print(f"   delay CDF at {'hint ' + str(hint) if hint != 'PI alone' else 'PI alone'}: {n} {unit_app} packets"
              f"{flag}")


def _print_mix(title: str, rows: list[dict]) -> None:
    print(title)
    print("   audio flows   audio quality TSQ / PI (normalised)   file quality TSQ / PI (normalised)   "
          "file-transfer throughput TSQ / PI")
    for r in rows:
        t, p = r["tsq"], r["pi"]
        print(f"   {r['audio_flows']:>5}        {np.mean(t['audio_quality_reps']):.4f} / "
              f"{np.mean(p['audio_quality_reps']):.4f} ({r['audio_quality_normalised']:.4f})      "
              f"{np.mean(t['file_quality_reps']):.5f} / {np.mean(p['file_quality_reps']):.5f} "
              f"({r['file_quality_normalised']:.4f})      {np.mean(t['file_rate_reps']) / 1e3:.1f} / "
              f"{np.mean(p['file_rate_reps']) / 1e3:.1f} kbit/s")


def optimum_shift(res: dict, paper_hint: int) -> str:
    """Does the bulk senders' kind move the audio optimum toward ``paper_hint``? (a sentence, either way)"""
    tcp = res["audio"]["argmax_by_seed"]["per_seed"]
    tfrc = res["audio_tfrc"]["argmax_by_seed"]["per_seed"]
    dt, df = float(np.median(np.abs(np.asarray(tcp) - paper_hint))), float(np.median(np.abs(np.asarray(tfrc) -
                                                                                               paper_hint)))
    side = lambda x: "below" if np.median(x) < paper_hint else ("above" if np.median(x) > paper_hint else "at")
    verdict = ("closer to" if dt < df else "no closer to" if dt == df else "farther from")
    return (f"TCP bulk flows: optima {min(tcp)}..{max(tcp)} (median {np.median(tcp):g}, {side(tcp)} {paper_hint}); "
            f"TFRC bulk flows: {min(tfrc)}..{max(tfrc)} (median {np.median(tfrc):g}, {side(tfrc)} {paper_hint}). "
            f"TCP moves the optimum {verdict} the paper's hint {paper_hint} (median distance {dt:g} against {df:g} "
            "hints)" + ("; it overshoots to the other side" if side(tcp) != side(tfrc) and side(tcp) != "at" else ""))


#: The bulk senders, as every output states them.
BULK_SENDERS = ("bulk file transfers: TCP (qosbound's NewReno + SACK with delayed ACKs, validation/tcp.py; ACKs "
                "return over an uncongested reverse path)")


def run(args) -> int:
    """Compute every table and experiment, judge the claims and print them (``--json``: the document); 0 when every
    claim is met. ``--out`` draws the figures."""
    data = reference_data()
    quick = bool(getattr(args, "quick", False))
    cap = cap_table(data)
    qual = quality_rows(data)
    scan = mdp_scan()
    res = experiments(quick)
    seed_best = data["audio_setting"]["optimum_hint"]["value"]
    files = (plots(args.out, res["audio"], res.get("video"), res.get("mixed"), res.get("udp1"), res.get("udp2"))
             if getattr(args, "out", None) else [])
    checked = all_claims(data, qual, res)
    shift = optimum_shift(res, seed_best) if "audio_tfrc" in res else None
    if getattr(args, "json", False):
        print(json.dumps(_document(checked, cap, qual, scan, res, shift, seed_best, files), indent=2,
                         allow_nan=False))
        return C.evaluate("tsq", checked).exit_code()
    _print_tables(cap, qual, scan)
    _print_experiments(res, shift, files)
    print()
    C.print_report("Claims of the TSQ paper checked by qosbound", C.evaluate("tsq", checked))
    return C.evaluate("tsq", checked).exit_code()


def _document(checked: list, cap: list, qual: list, scan: list, res: dict, shift: str | None, seed_best,
              files: list) -> dict:
    """The ``--json`` document: the claims report with every table and experiment (the delay samples left out)."""
    def strip(sw):
        return {k: v for k, v in sw.items() if k not in ("delays", "throughput_per_rtt")} if sw else None

    s = res["settings"]
    return C.report_document(C.evaluate("tsq", checked), cap_region=cap, quality=qual, mdp_scan=scan,
                             audio=strip(res["audio"]), video=strip(res.get("video")), mixed=res.get("mixed"),
                             udp_hint=res.get("udp1"), udp_mix=res.get("udp2"),
                             audio_tfrc=strip(res.get("audio_tfrc")),
                             video_pi_target=strip(res.get("video_pi_target")),
                             audio_ack_every=strip(res.get("audio_ack_every")),
                             optimum_shift=shift, bulk_senders=BULK_SENDERS,
                             seed_best_hint=seed_best, duration_s=s["duration"], replications=s["reps"],
                             simulation_seconds=res["seconds"], assumptions=ASSUMPTIONS,
                             figures=files)


def _print_tables(cap: list, qual: list, scan: list) -> None:
    """Sections 1 and 2 of the text report: the cap region, the MDP scan and the quality functions."""
    print("TSQ (Traffic Sensitive QoS Controller) reproduced by qosbound")
    print("\n1. Cap region: the AQM drop p above which a hint-d packet's p' = 1 (and the square-root law")
    print("   predicts a gain), q' = d q/16, l = 40 ms, 1000 B packets at 15 Mbit/s")
    print("   hint  " + "".join(f"{d:>7d}" for d in (1, 2, 4, 6, 8, 12, 16)))
    for row in cap:
        vals = [row["cap_min_drop"][d - 1] for d in (1, 2, 4, 6, 8, 12, 16)]
        print(f"   {row['queue']:<5} " + "".join(f"{v:7.4f}" for v in vals) + f"   (q = {row['delay_s'] * 1000:.1f} ms)")
    print("\n   MDP (models/tsq.prism, N = 30, lam = 0.55, pb = 0.01 .. p_hi): relative gain of the best hint policy")
    print("   over FIFO; '*' = a capped state is reachable")
    ls = sorted({r["l_slots"] for r in scan})
    print("   p_hi \\ l  " + "".join(f"{x:>11g}" for x in ls))
    for p_hi in sorted({r["p_hi"] for r in scan}):
        cells = [r for r in scan if r["p_hi"] == p_hi]
        print(f"   {p_hi:<9g}" + "".join(f"{r['gain']:>10.2e}{'*' if r['capped_reachable'] else ' '}" for r in cells))
    print("\n2. Quality functions at the quoted values (section 2)")
    for r in qual:
        print(f"   {r['function']:<17} at {r['at']:<12} quoted {r['quoted']:<5} reconstructed {r['reconstructed']:.4f}")
    for a in ASSUMPTIONS:
        print(f"   ASSUMPTION: {a['what']}: {a['qosbound']} ({a['paper']})")


def _print_experiments(res: dict, shift: str | None, files: list) -> None:
    """Sections 3-7 of the text report: the simulated experiments, then the figures written."""
    s = res["settings"]
    print(f"\n   Simulations: {s['duration']:g} s runs ({s['warmup']:g} s warm-up), {s['reps']} replications each "
          f"({s['video_reps']} for the video flow), {BULK_SENDERS}; "
          f"{res['seconds']:.0f} s of computing")
    _print_sweep(f"\n3. Audio flow, section 4.2 (15 Mbit/s, 99 TCP bulk flows, one 128 kbit/s TCP-friendly audio "
                 f"flow; {res['audio']['packets']} packets)", res["audio"], "audio")
    if "audio_tfrc" in res:
        _print_sweep("\n   The same with TFRC bulk senders (qosbound's earlier stand-in for TCP, for comparison):",
                     res["audio_tfrc"], "audio")
        print(f"   Bulk senders and the optimum: {shift}")
    if "audio_ack_every" in res:
        _print_sweep("\n   Sensitivity (the audio optimum's finding, blamed on the bulk senders): the same with every "
                     "bulk segment acknowledged (no delayed ACK, as ns-2's default sink), the same seeds; varied: the "
                     "receivers' ACKs only", res["audio_ack_every"], "audio")
    if "video" in res:
        _print_sweep(f"\n4. Video flow, section 4.3 (4 Mbit/s, 19 TCP bulk flows, one 500 kbit/s TCP-friendly video "
                     f"flow; {res['video']['packets']} packets)", res["video"], "video")
        print("   ASSUMPTION in use: " + ASSUMPTIONS[0]["what"] + ": " + ASSUMPTIONS[0]["qosbound"] + " (hints where "
              "the video throughput falls below 160 kbit/s rest on it)")
    if "video_pi_target" in res:
        _print_pi_target(res["video_pi_target"], res["audio"])
    if "mixed" in res:
        _print_mix("\n5. Mixed traffic, section 4.4 (15 Mbit/s, 100 flows: TCP-friendly 128 kbit/s audio at hint 6, "
                   "TCP file transfers at hint 16; file quality of a 10 Mbit file)", res["mixed"])
    if "udp1" in res:
        print("\n6. Unresponsive UDP, section 4.7.1 (99 TCP file transfers, one 600 kbit/s UDP flow at each hint)")
        print("   UDP hint   file-transfer throughput (normalised by PI alone)   UDP throughput")
        for r in res["udp1"]:
            print(f"   {str(r['hint']):<9}  {r['file_rate'] / 1e3:8.2f} kbit/s ({r['normalised']:.4f})"
                  f"                   {r['udp_rate'] / 1e3:.1f} kbit/s")
    if "udp2" in res:
        _print_mix("\n7. Unresponsive UDP audio mixes, section 4.7.2 (128 kbit/s UDP audio at hint 6, TCP file "
                   "transfers at hint 16)", res["udp2"])
    for f in files:
        print(f"   wrote {f}")


def _print_pi_target(video: dict, audio: dict) -> None:
    """Figure 12's sensitivity run: the video flow at hints 1 and 16 with PI's target lowered, beside the audio flow."""
    rv, ra = hint_ratio(video), hint_ratio(audio)
    print(f"\n   Sensitivity (Figure 12's finding, blamed on PI's target): the video experiment with PI's target "
          f"{video['q_ref']:g} packets instead of 200 (the audio link's 107 ms), the same seeds; varied: PI's target "
          "only")
    print("   hint   queueing delay   drop      throughput")
    for r in video["rows"]:
        print(f"   {str(r['hint']):<8} {r['delay_s'] * 1000:8.1f} ms   {r['drop']:.4f}   "
              f"{r['rate_bps'] / 1000:8.1f} kbit/s")
    print(f"   throughput at hint 1 / hint 16: video {rv.mean():.3f} (audio, 200 packets at 15 Mbit/s: "
          f"{ra.mean():.3f})")
