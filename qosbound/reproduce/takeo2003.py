"""``qosbound reproduce takeo2003``: Table I's WRED curves and Table V's CBWFQ allocations (Takeo & Tasaka 2003).

Prints (1) the WRED drop probability of each drop precedence of Table I
(P_d = 3) against the average queue, (2) the CBWFQ allocation of every class in
the six cases of Table V beside the values the table prints, and (3) for the
overloaded video class of case 1 (class 3 of ``examples/takeo2003.yaml``), the
per-precedence drop probabilities of the two closed-form approximations
(alpha -> 1 and fixed average) against the simulated float EWMA with
alpha = 2^-9 -- how far each approximation is from the real average (no
printed number to compare with: shown, not judged).

(4) The six cases of Table V as a network (:mod:`qosbound.reproduce.takeo2003_net`): voice, video, the
Poisson load and WebStone-like web transfers through the 2 Mbit/s CBWFQ router in the packet simulator, with
replications and 95 % t-intervals, at additional delays m = 0..4 (ten replications of 120 s measured;
``--quick``: m = 0, three replications of 12 s), and (full mode only) the same with a TCP handshake and HTTP request
at m = 0 and 4 (Fig. 2's retrieval time; the sensitivity that tests the handshake as the cause of the m = 0
findings); ``--out`` draws them against the additional delay
(``takeo2003_cases``). The section IV claims are judged at m = 0 and (full mode) m = 4.

(5) The application-level output of voice 1 and video 1 after a playout model of the receivers
(:mod:`qosbound.reproduce.takeo2003_sync`, :mod:`qosbound.validation.playout`): the coefficient of variation of
the output interval, the skip rate and the mean square error of inter-stream synchronization; Fig. 8's claims are
judged in the full mode (they need m = 1..4), conclusion (i)'s recommended cases at m = 0 in both modes.

Claims checked (:mod:`qosbound.reproduce.claims`): every allocation Table V
prints, recomputed by the CBWFQ closed form within the table's rounding
(1 kbit/s); and the network-level statements of section IV (which case hurts
HTML, voice and video most). Exit 0 when every claim is met, 1 otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from qosbound.analytic.cbwfq import allocate
from qosbound.analytic.red_queue import fixed_average, instantaneous
from qosbound.analytic.wred import drop_prob
from qosbound.progress import QUIET
from qosbound.reproduce import claims as C
from qosbound.reproduce import takeo2003_net as N
from qosbound.reproduce import takeo2003_sync as S
from qosbound.scenario import build, load
from qosbound.shipped import example_path
from qosbound.shipped import reference as shipped_reference
from qosbound.systems import af
from qosbound.validation.plots import save

__all__ = ["reference", "curves", "allocations", "approximations", "claims", "share_claims", "run"]

AVG_POINTS = [0, 8, 16, 20, 24, 28, 32, 36, 40, 44, 48, 56]


def reference() -> dict:
    """Table I and Table V as recorded in ``qosbound/data/takeo2003.yaml``."""
    return shipped_reference("takeo2003")


def curves(points=AVG_POINTS) -> dict[str, list[float]]:
    """Drop probability per precedence (drop1..drop3) at the given averages (packets)."""
    t = reference()["table_I"]
    return {k: [float(x) for x in drop_prob(np.asarray(points, float), v["min_th"], v["max_th"], t["P_d"])]
            for k, v in t["thresholds_packets"].items()}


def allocations() -> list[dict]:
    """Per case: allocated kbit/s per class, the printed values, and whether they match."""
    ref = reference()
    bw = ref["table_I"]["bandwidth_kbit_s"]
    names = list(bw)
    tol = float(ref["table_V"]["printed_rounding_kbit_s"])
    rows = []
    for case, spec in ref["table_V"]["cases"].items():
        got = allocate(float(ref["table_I"]["link_rate_bit_s"]), [bw[n] * 1e3 for n in names],
                       [1.0 if n in spec["backlogged"] else 0.0 for n in names]) / 1e3
        row = {"case": case, "kbit_s": {n: float(g) for n, g in zip(names, got)}, "printed": spec["printed"]}
        row["ok"] = all(abs(row["kbit_s"][n] - float(v)) <= tol for n, v in spec["printed"].items())
        rows.append(row)
    return rows


def approximations(quick: bool = False) -> dict:
    """Class AF3 of the example (case 1): drops by alpha -> 1, fixed average, Storm and the simulated EWMA."""
    p = example_path("takeo2003")
    scn = load(p)
    ci = next(c for c in af.class_inputs(scn) if c.name == "AF3")
    inst = instantaneous(ci.lam, ci.mu, ci.K, ci.profile)
    fixed = fixed_average(ci.lam, ci.mu, ci.K, ci.profile)
    raw = scn.raw
    raw["traffic"] = {"AF3": raw["traffic"]["AF3"]}     # class 3 alone at its constant service rate
    raw["link"] = {"rate": ci.mu * 8 * ci.size}
    raw["classes"] = {"AF3": raw["classes"]["AF3"]}
    raw["cases"] = {}
    raw["slos"] = []
    raw["methods"]["simulated"] = {"packets": 100_000 if quick else 1_000_000, "replications": 4 if quick else 8,
                                   "seed": 2003}
    alone = build(raw, str(p))
    sim = {r.metric: r for r in af.evaluate(alone, ["simulated"], QUIET)}
    out = {"service_rate_bit_s": ci.mu * 8 * ci.size, "offered_bit_s": float(ci.lam.sum() * 8 * ci.size),
           "instantaneous": [float(x) for x in inst.drop[:2]], "fixed_average": [float(x) for x in fixed.drop[:2]],
           "simulated": [], "simulated_ci": []}
    for k in (1, 2):
        r = sim.get(f"AF3.drop.AF3{k}")
        out["simulated"].append(r.value if r else None)
        out["simulated_ci"].append([r.interval.low, r.interval.high] if r else None)
        if r is not None and r.interval is not None:
            out["simulated_ci_kind"] = r.interval.label()
    out["queue"] = {"instantaneous": inst.mean_queue, "fixed_average": fixed.mean_queue,
                    "simulated": sim["AF3.queue.mean"].value}
    return out


def claims(alloc: list[dict]) -> list[C.Claim]:
    """One claim per allocation Table V prints: the CBWFQ closed form within the table's rounding."""
    tol = float(reference()["table_V"]["printed_rounding_kbit_s"])
    out = []
    for r in alloc:
        for n, printed in r["printed"].items():
            out.append(C.compare(f"{n} allocation, {r['case']}", "Table V", float(printed) * 1e3,
                                 r["kbit_s"][n] * 1e3, tol * 1e3, "bit/s", digits=1, scale=1e-3, paper_digits=0,
                                 shown_unit="kbit/s",
                                 rule=f"|qosbound - paper| <= {tol:g} kbit/s (Table V prints whole kbit/s)"))
    return out


def share_claims(alloc: list[dict]) -> list[C.Claim]:
    """Section III.D's reading of Tables I, IV and V: class 3's allocation over the two video streams' bit rate
    ("almost 60 %") and class 2's over the two voice streams' ("much higher"), both with every class backlogged
    (case 1: Table I's bandwidths); the video rates are Table IV's averages."""
    ref = reference()
    rates = ref["table_IV"]["bit_rate_kbit_s"]
    case1 = next(r for r in alloc if r["case"] == "case1")["kbit_s"]
    video = rates["video1"] + rates["video2"]
    voice = rates["voice1"] + rates["voice2"]
    paper = float(ref["section_III_D"]["class3_share_of_video"])
    share = case1["AF3"] / video
    row = C.compare("class 3's allocation over the video streams' total bit rate", "section III.D", paper, share,
                    0.05, "", digits=3, rule="|qosbound - 0.6| <= 0.05 (section III.D's 'almost 60 %')")
    ratio = case1["AF2"] / voice
    row2 = C.judge("class 2's allocation over the voice streams' total bit rate", "section III.D", "much higher",
                   f"{case1['AF2']:.0f} / {voice:.0f} kbit/s = {ratio:.3f}", ratio > 2.0,
                   "the ratio above 2 ('much higher': more than twice)", failure="not more than twice",
                   value=ratio, unit="")
    return [row, row2]


def run(args) -> int:
    quick = bool(getattr(args, "quick", False))
    c = curves()
    alloc = allocations()
    approx = approximations(quick)
    ok = all(r["ok"] for r in alloc)
    checked = claims(alloc) + share_claims(alloc)
    setup = N.Setup.quick() if quick else N.Setup()
    net = N.measure(setup)
    checked += N.net_claims(net, 0, setup.replications)
    checked.append(S.recommend_claim(net, 0, setup.replications))
    checked += S.sync_claims(net, setup.ms, setup.replications)
    if max(setup.ms) > 0:
        checked += N.net_claims(net, max(setup.ms), setup.replications)
        checked += N.shrink_claims(net, 0, max(setup.ms), setup.replications)
    hs = {}
    if setup.handshake_ms:  # the handshake sensitivity (full mode only: it doubles the runs at its delays)
        hs = N.measure(setup, handshake=True)
        checked += N.handshake_claims(hs, setup.handshake_ms, setup.replications)
    if getattr(args, "json", False):
        cases = [{"case": k[0], "m": k[1], **{m: {"mean": _num(v[0]), "half_width_95": _num(v[1])}
                                              for m, v in d.items()}} for k, d in net.items()]
        hs_cases = [{"case": k[0], "m": k[1], **{m: {"mean": _num(v[0]), "half_width_95": _num(v[1])}
                                                 for m, v in d.items()}} for k, d in hs.items()]
        print(json.dumps(C.report_document(C.evaluate("takeo2003", checked), avg_packets=AVG_POINTS, wred_curves=c, table_V=alloc,
                                    approximations_AF3_case1=approx, network_cases=cases,
                                    handshake_cases=hs_cases, ok=ok), indent=2,
                         allow_nan=False))
    else:
        print("Takeo & Tasaka 2003, Table I: WRED drop probability (P_d = 3) vs average queue (packets)")
        print(*C.curve_lines(c, AVG_POINTS, 8), sep="\n")
        print("\nTable V: CBWFQ allocation (kbit/s) on 2 Mbit/s; printed values in brackets")
        for r in alloc:
            cells = []
            for n, v in r["kbit_s"].items():
                pr = r["printed"].get(n)
                cells.append(f"{n} {v:7.1f}" + (f" [{pr}]" if pr is not None else "      "))
            print(f"{r['case']}: " + "  ".join(cells) + ("" if r["ok"] else "  MISMATCH"))
        a = approx
        print(f"\nClass 3 of case 1 (video {a['offered_bit_s'] / 1e3:.0f} kbit/s at {a['service_rate_bit_s'] / 1e3:.0f}"
              " kbit/s, alpha = 2^-9): drop probability by approximation")
        print(f"{'':<16}{'AF31':>12}{'AF32':>12}{'mean queue':>12}")
        print(f"{'alpha -> 1':<16}{a['instantaneous'][0]:12.4g}{a['instantaneous'][1]:12.4g}"
              f"{a['queue']['instantaneous']:12.3f}")
        print(f"{'fixed average':<16}{a['fixed_average'][0]:12.4g}{a['fixed_average'][1]:12.4g}"
              f"{a['queue']['fixed_average']:12.3f}")
        s = a["simulated"]
        print(f"{'simulated EWMA':<16}{s[0]:12.4g}{s[1]:12.4g}{a['queue']['simulated']:12.3f}"
              f"   ({a.get('simulated_ci_kind', 'CI')} AF31 [{a['simulated_ci'][0][0]:.4g}, {a['simulated_ci'][0][1]:.4g}],"
              f" AF32 [{a['simulated_ci'][1][0]:.4g}, {a['simulated_ci'][1][1]:.4g}])")
        print()
        N.print_results(net)
        if hs:
            print("\nThe handshake sensitivity (SYN / SYN-ACK and a 300-byte request before each transfer; "
                  "'5k file s' is the retrieval time from the SYN):")
            N.print_results(hs)
        print()
        S.print_results(net)
        print()
        C.print_report("Claims of Takeo & Tasaka 2003 checked by qosbound", C.evaluate("takeo2003", checked))
    out = getattr(args, "out", None)
    if out:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        Path(out).mkdir(parents=True, exist_ok=True)
        xs = np.linspace(0, 60, 601)
        t = reference()["table_I"]
        fig, ax = plt.subplots(figsize=(5, 3.5))
        for k, v in t["thresholds_packets"].items():
            ax.plot(xs, drop_prob(xs, v["min_th"], v["max_th"], t["P_d"]), label=k)
        ax.set_xlabel("average queue (packets)")
        ax.set_ylabel("drop probability")
        ax.set_title("Table I WRED, P_d = 3")
        ax.legend()
        fig.tight_layout()
        save(fig, out, "takeo2003_wred")
        N.figure(net, out)
    return C.evaluate("takeo2003", checked).exit_code()


def _num(x: float):
    """A JSON number, or None for a value that does not exist (no interval from one replication)."""
    return float(x) if np.isfinite(x) else None
