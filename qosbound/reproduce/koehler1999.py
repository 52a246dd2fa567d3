"""``qosbound reproduce koehler1999``: the trTCM, RIO and n-RED set-up of Koehler & Schaefer (1999), Tables 2-6.

Prints (1) the colour fractions of the Table 4 trTCM (per edge node: CIR 2,
PIR 3 Mbit/s, CBS 50 kB, PBS 70 kB) for smooth input (closed form, RFC 2698)
and for Poisson input (the numba marker), at several offered rates; (2) the
drop curves of Table 5 (RIO) and Table 6 (n-RED) against the average queue;
(3) per-precedence drop probabilities of ``examples/koehler1999.yaml`` at the
loads of Table 2 (closed form, fixed average, and -- unless ``--quick`` is
short -- the simulator with the float EWMA); (4) the TCP experiments of sections 4.1-4.2
(:mod:`qosbound.reproduce.koehler1999_tcp`): the goodput of one connection by data and ACK class, Two-Bit
DS (Premium queue with strict priority + RIO) and one AF class (trTCM + n-RED), at the loads of Table 2
and the RTTs of Table 1, with replications and 95 % confidence intervals; ``--out`` draws Figures 4-7 in
the paper's form (PNG + SVG). ``--quick`` runs 100 and 140 % load at 20 and 200 ms (5 replications of
15 s); the full mode every load and RTT (6 replications of 40 s) and Table 1's mixed-RTT rows at 100-140 %.
Both modes rerun Two-Bit DS at 50 % load and 20 ms with RIO at the node uplinks (the low-load sensitivity).

Claims checked (:mod:`qosbound.reproduce.claims`): the yellow share Table 4's trTCM gives an
edge node at its access rate (a documented finding: about 10 %, not 30 %); and from section 4.2 of the
paper, on the drops of (3) by each method: the n-RED queue orders the drop
precedences (AF11 dropped least, then AF12, then AF13) at every load, and as
the load grows the highest precedence pays for it (AF13's drop rises with the
load); and the TCP claims of sections 4.1-4.2 (:func:`qosbound.reproduce.koehler1999_tcp_claims.claims`; the
ordering claims as one-sided tests: :mod:`qosbound.reproduce.koehler1999_tcp_orders`). Every claim is judged
by the rule of ``qosbound/data/claims/koehler1999.yaml`` (:func:`qosbound.reproduce.claims.evaluate`). Exit 1
when any claim is NOT MET, else 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from qosbound.analytic.markers import cbr_fractions
from qosbound.analytic.wred import drop_prob
from qosbound.progress import QUIET
from qosbound.reproduce import claims as C
from qosbound.reproduce import koehler1999_tcp as K
from qosbound.reproduce import koehler1999_tcp_claims as KC
from qosbound.reproduce import koehler1999_tcp_orders as KO
from qosbound.reproduce.koehler1999_tcp import ASSUMPTIONS
from qosbound.scenario import build, load
from qosbound.shipped import example_path
from qosbound.shipped import reference as shipped_reference
from qosbound.systems import af
from qosbound.validation.markers import mark_stream, new_state

__all__ = ["reference", "marker_rows", "dropper_curves", "load_rows", "claims", "yellow_claim", "run"]

AVG_POINTS = [30, 40, 45, 50, 55, 60, 65, 70]


def reference() -> dict:
    return shipped_reference("koehler1999")


def marker_rows(quick: bool = False) -> list[dict]:
    """trTCM (Table 4) fractions per offered rate: CBR closed form and simulated Poisson."""
    t = reference()["table_4"]
    cir, pir, cbs, pbs = float(t["cir_bit_s"]), float(t["pir_bit_s"]), float(t["cbs_bytes"]), float(t["pbs_bytes"])
    size = float(reference()["mtu_bytes"])
    rng = np.random.default_rng(1999)
    n = 50_000 if quick else 500_000
    rows = []
    for rate in (1.5e6, 2.5e6, 3.5e6, 5e6, 10e6):
        f = cbr_fractions("trtcm", rate, cir, pir)
        times = np.cumsum(rng.exponential(8 * size / rate, n))
        col = mark_stream("trtcm", new_state("trtcm", cir, cbs, pir, pbs), times, size)
        sim = np.bincount(col, minlength=3) / n
        rows.append({"rate_bit_s": rate, "cbr": [float(x) for x in f], "poisson_simulated": [float(x) for x in sim]})
    return rows


def dropper_curves() -> dict:
    """Drop probability vs average (packets) for Table 5's RIO and Table 6's n-RED parameters."""
    ref = reference()
    out = {}
    for table, keys in (("table_5", ("in", "out")), ("table_6", ("green", "yellow", "red"))):
        for k in keys:
            v = ref[table][k]
            out[f"{table}.{k}"] = [float(x) for x in drop_prob(np.asarray(AVG_POINTS, float), v["min_th"],
                                                               v["max_th"], 1.0 / v["max_p"])]
    return out


def _example_path() -> Path:
    return example_path("koehler1999")


def load_rows(quick: bool = False) -> list[dict]:
    """Per-precedence drops of the example at the loads of Table 2 (closed form and simulation)."""
    scn = load(_example_path())
    ref = reference()["table_2"]
    rows = []
    for load_pct, bw in zip(ref["load_percent"], ref["bandwidth_mbit_s"]):
        raw = scn.raw
        raw["link"]["rate"] = f"{bw} Mbps"
        raw["classes"]["AF1"]["bandwidth"] = f"{bw} Mbps"
        raw["slos"] = []
        raw["methods"]["simulated"] = {"packets": 20_000 if quick else 300_000, "replications": 3 if quick else 4,
                                       "seed": 1999}
        s = build(raw, str(_example_path()))
        res = af.evaluate(s, ["closed-form", "simulated"], QUIET)
        by = {(r.metric, r.method): r for r in res}

        def get(k, method):
            r = by.get((f"AF1.drop.AF1{k}", method))
            return None if r is None else r.value

        def iv(k, method):
            r = by.get((f"AF1.drop.AF1{k}", method))
            if r is None or r.interval is None:
                return None
            return C.interval(r.interval.low, r.interval.high, r.interval.label())

        rows.append({"load_percent": load_pct, "bandwidth_mbit_s": bw,
                     "closed_form": [get(k, "closed-form") for k in (1, 2, 3)],
                     "simulated": [get(k, "simulated") for k in (1, 2, 3)],
                     "simulated_interval": [iv(k, "simulated") for k in (1, 2, 3)]})
    return rows


def _above(a: float, a_iv: dict | None, b: float, b_iv: dict | None) -> bool:
    """``a`` is resolved to lie above ``b``: exactly when both are exact, else when their intervals separate."""
    if a_iv is None and b_iv is None:
        return a > b + 1e-12 * max(1.0, abs(b))
    lo_a = a if a_iv is None else a_iv["low"]
    hi_b = b if b_iv is None else b_iv["high"]
    return lo_a > hi_b


def yellow_claim(markers: list[dict]) -> C.Claim:
    """The yellow share of Table 4's trTCM at an edge node's own rate (its 10 Mbit/s access link, Table 2's
    50 Mbit/s over five nodes), measured with the simulated marker on Poisson input: about 10 %, where a
    PIR meant to mark some 30 % of the traffic yellow would have to be about 5 Mbit/s."""
    ref = reference()
    rate = float(ref["table_2"]["access_capacity_mbit_s"]) * 1e6 / 5
    row = min(markers, key=lambda r: abs(r["rate_bit_s"] - rate))
    g, y, r = row["poisson_simulated"]
    cir, pir = float(ref["table_4"]["cir_bit_s"]), float(ref["table_4"]["pir_bit_s"])
    smooth = (pir - cir) / row["rate_bit_s"]
    return C.judge(
        "trTCM of Table 4: share of an edge node's packets marked yellow", "section 3, Table 4",
        "about 30 % yellow",
        f"{100 * y:.1f} % yellow ({100 * g:.1f} % green, {100 * r:.1f} % red) at {row['rate_bit_s'] / 1e6:g} Mbit/s "
        f"Poisson (simulated marker); (PIR - CIR)/rate = {100 * smooth:.0f} %",
        0.05 <= y <= 0.15, "finding while the simulated yellow share lies in [5 %, 15 %]",
        finding=(f"with CIR {cir / 1e6:g} and PIR {pir / 1e6:g} Mbit/s an edge node sending at its "
                 f"{row['rate_bit_s'] / 1e6:g} Mbit/s access rate has only PIR - CIR = {(pir - cir) / 1e6:g} Mbit/s "
                 f"of its traffic yellow, about {100 * smooth:.0f} %; 30 % yellow would need PIR = CIR + 0.3 x rate "
                 f"= {(cir + 0.3 * row['rate_bit_s']) / 1e6:g} Mbit/s, or an offered rate near "
                 f"{(pir - cir) / 0.3 / 1e6:.1f} Mbit/s. Most likely cause: the PIR was chosen for a lower rate "
                 f"per node than the access links carry"),
        paper_value=0.30, value=float(y), unit="")


def claims(loads: list[dict]) -> list[C.Claim]:
    """Section 4.2's two claims, for the closed form and the simulator, over the loads of Table 2."""
    out = []
    for key, method in (("closed_form", "closed form (fixed average)"), ("simulated", "simulated")):
        ivk = "simulated_interval" if key == "simulated" else None
        usable = [r for r in loads if all(x is not None for x in r[key])]
        if not usable:
            continue
        reversed_at = []
        for r in usable:
            d, iv = r[key], (r[ivk] if ivk else [None] * 3)
            for lo, hi in ((0, 1), (1, 2)):
                if _above(d[lo], iv[lo], d[hi], iv[hi]):
                    reversed_at.append(f"{r['load_percent']} %: AF1{lo + 1} {d[lo]:.3g} > AF1{hi + 1} {d[hi]:.3g}")
        top = usable[-1]
        shown = "/".join(f"{x:.3g}" for x in top[key])
        out.append(C.judge(
            f"n-RED orders the drops AF11 <= AF12 <= AF13 at every load, {method}", "section 4.2",
            "AF11 lowest, then AF12, then AF13",
            (f"ordered at {len(usable)}/{len(usable)} loads" if not reversed_at else
             f"reversed at {len(reversed_at)} load(s)") + f"; {top['load_percent']} %: {shown}",
            not reversed_at,
            "no load where a lower precedence's drop lies above a higher one's" +
            (" beyond both confidence intervals" if ivk else ""),
            failure="; ".join(reversed_at)))
        falls = []
        for a, b in zip(usable, usable[1:]):
            ia = a[ivk][2] if ivk else None
            ib = b[ivk][2] if ivk else None
            if _above(a[key][2], ia, b[key][2], ib):
                falls.append(f"{a['load_percent']} % -> {b['load_percent']} %: {a[key][2]:.3g} -> {b[key][2]:.3g}")
        seq = ", ".join(f"{r[key][2]:.3g}" for r in usable)
        out.append(C.judge(
            f"AF13 pays for rising load: its drop rises with the load, {method}", "section 4.2",
            "rises with the load", f"AF13 drop at {', '.join(str(r['load_percent']) for r in usable)} %: {seq}",
            not falls,
            "AF13's drop never falls from one load of Table 2 to the next" +
            (" beyond both confidence intervals" if ivk else ""),
            failure="; ".join(falls)))
    return out


#: The TCP experiments of sections 4.1-4.2 (:mod:`qosbound.reproduce.koehler1999_tcp`): indices into Table 2's
#: loads, Table 1's RTTs (ms), measured seconds, warm-up seconds, replications, observed connections per
#: combination and side.
TCP_QUICK = {"loads": (1, 5), "rtts": (20, 200), "window": 15.0, "warmup": 5.0, "reps": 5, "copies": 1}
TCP_FULL = {"loads": (0, 1, 2, 3, 4, 5), "rtts": (20, 60, 100, 200), "window": 40.0, "warmup": 10.0, "reps": 6,
            "copies": 1}
TCP_SEED = 1999


def _assumptions() -> list[str]:
    return ASSUMPTIONS


def tcp_sweep(quick: bool, seed: int = TCP_SEED) -> dict:
    """The goodput sweep of sections 4.1-4.2 with the quick or the full settings."""
    s = TCP_QUICK if quick else TCP_FULL
    return K.sweep(s["loads"], s["rtts"], s["warmup"] + s["window"], s["warmup"], s["reps"], seed=seed,
                   copies=s["copies"])


def tcp_section(quick: bool, out: str | None) -> tuple[dict, list, list[str]]:
    """Sections 4.1-4.2: the sweep, its claims, the delayed-ACK sensitivity run (Two-Bit DS at the sweep's loads
    and smallest RTT, delayed ACKs off), the uplink-RIO sensitivity run (Two-Bit DS at 50 % load and the smallest
    RTT, RIO at the node uplinks), in the full mode Table 1's mixed-RTT rows, and (with ``out``) the figures."""
    sw = tcp_sweep(quick)
    s = TCP_QUICK if quick else TCP_FULL
    alt = K.no_delack(s["loads"], min(s["rtts"]), s["warmup"] + s["window"], s["warmup"], s["reps"], seed=TCP_SEED,
                      copies=s["copies"])
    sw["no_delack"] = alt
    # the RTO floor: ns-2 (the paper's simulator) floors the whole RTO, as the runs above; Linux floors the
    # variance term -- the same sensitivity run with Linux's rule
    linux = K.no_delack(s["loads"], min(s["rtts"]), s["warmup"] + s["window"], s["warmup"], s["reps"], seed=TCP_SEED,
                        copies=s["copies"], rto_floor="rttvar")
    sw["no_delack_linux_rto"] = linux
    # the nodes' uplinks with RIO (the paper's nodes) instead of drop tail: Two-Bit DS at the loads < 100 % (50 %)
    # and the smallest RTT, the sensitivity run of the low-load ACK-class claim (quick and full mode)
    light = [li for li in TCP_FULL["loads"] if reference()["table_2"]["load_percent"][li] < 100]
    sw["uplink_aqm"] = K.uplink_aqm_run(light, min(s["rtts"]), s["warmup"] + s["window"], s["warmup"], s["reps"],
                                        seed=TCP_SEED, copies=s["copies"])
    mixed = []
    if not quick:
        # Table 1's mixed rows (the full mode only): both scenarios at the loads >= 100 % and the RTTs with a mixed row
        heavy = [li for li in s["loads"] if reference()["table_2"]["load_percent"][li] >= 100]
        sw["mixed"] = K.mixed_sweep(heavy, s["rtts"], s["warmup"] + s["window"], s["warmup"], s["reps"], seed=TCP_SEED,
                                    copies=s["copies"])
        mixed = KO.mixed_claim(sw, sw["mixed"])
    checked = KC.claims(sw) + KO.claims(sw) + mixed + [KC.no_delack_claim(sw, alt),
                                                       KC.no_delack_claim(sw, linux, "rttvar")] + \
        KO.uplink_aqm_claim(sw, sw["uplink_aqm"])
    return sw, checked, (K.plots(out, sw) if out else [])


def _print_tcp(sw: dict) -> None:
    print(f"\nSections 4.1-4.2: goodput (kbit/s, mean [95 % CI half-width]) of one connection by data/ACK class; "
          f"{sw['replications']} replications of {sw['duration_s'] - sw['warmup_s']:g} s (after "
          f"{sw['warmup_s']:g} s), {2 * sw['copies']} connections per combination and run, {sw['packets']} packets")
    for a in K.ASSUMPTIONS:
        print(f"  ASSUMPTION: {a}")
    _print_tcp_points(sw)


def _print_tcp_points(sw: dict) -> None:
    for sc in K.SCENARIOS:
        pts = [p for p in sw["points"] if p["scenario"] == sc]
        if not pts:
            continue
        print(f"  {'Two-Bit DS (Premium + RIO)' if sc == 'twobit' else 'one AF class (trTCM + n-RED)'}")
        print("    load  RTT  " + "".join(f"{K.label(sc, i):>16}" for i in range(9)) + "   loss")
        for p in pts:
            cells = "".join(f"{g / 1e3:>9.0f} [{(h or 0) / 1e3:>4.0f}]"
                            for g, h in zip(p["goodput_bit_s"], p["ci95_half_bit_s"]))
            print(f"    {p['load_percent']:>3d} % {p['rtt_ms']:>3d} ms{cells}   {100 * p['loss_rate']:.1f} %")


def run(args) -> int:
    quick = bool(getattr(args, "quick", False))
    mk = marker_rows(quick)
    curves = dropper_curves()
    loads = load_rows(quick)
    sw, tcp_checked, files = tcp_section(quick, getattr(args, "out", None))
    checked = ([yellow_claim(mk)] if mk else []) + claims(loads) + tcp_checked
    if getattr(args, "json", False):
        print(json.dumps(C.report_document(C.evaluate("koehler1999", checked), trtcm=mk, avg_packets=AVG_POINTS, droppers=curves,
                                    loads=loads, tcp=sw, assumptions=_assumptions(), figures=files), indent=2,
                         allow_nan=False))
        return C.evaluate("koehler1999", checked).exit_code()
    print("Koehler & Schaefer 1999, Table 4 trTCM (CIR 2, PIR 3 Mbit/s): colour fractions green/yellow/red")
    for r in mk:
        c, s = r["cbr"], r["poisson_simulated"]
        print(f"  {r['rate_bit_s'] / 1e6:5.1f} Mbit/s  smooth {c[0]:.3f}/{c[1]:.3f}/{c[2]:.3f}"
              f"   Poisson (simulated) {s[0]:.3f}/{s[1]:.3f}/{s[2]:.3f}")
    print("\nTables 5 (RIO) and 6 (n-RED): drop probability vs average queue (packets)")
    print(*C.curve_lines(curves, AVG_POINTS, 13), sep="\n")
    print("\nexamples/koehler1999.yaml at the loads of Table 2: drop AF11 / AF12 / AF13")
    for r in loads:
        cf = "/".join(f"{x:.3g}" for x in r["closed_form"])
        sm = "/".join("-" if x is None else f"{x:.3g}" for x in r["simulated"])
        print(f"  {r['load_percent']:>3d} % ({r['bandwidth_mbit_s']:>5} Mbit/s)  fixed average {cf:<28} simulated {sm}")
    if sw is not None:
        _print_tcp(sw)
        if sw.get("no_delack"):
            print("  sensitivity: Two-Bit DS with delayed ACKs off (every segment acknowledged, ns-2's default sink)")
            _print_tcp_points(sw["no_delack"])
        if sw.get("no_delack_linux_rto"):
            print("  sensitivity: the same with Linux's RTO floor (srtt + max(200 ms, 4 rttvar); ns-2 floors the whole "
                  "RTO at 200 ms)")
            _print_tcp_points(sw["no_delack_linux_rto"])
        if sw.get("uplink_aqm"):
            print("  sensitivity: Two-Bit DS with RIO at the node uplinks (the node's token buckets colour the data "
                  "as it enters; the receivers' ACKs through their node's uplink)")
            _print_tcp_points(sw["uplink_aqm"])
        if sw.get("mixed"):
            print("  Table 1's mixed rows (observed connections at the RTT shown, background sources cycling through the "
                  "row's node delays)")
            _print_tcp_points(sw["mixed"])
    for f in files:
        print(f"  wrote {f}")
    print()
    C.print_report("Claims of Koehler & Schaefer 1999 (sections 3, 4.1, 4.2) checked by qosbound", C.evaluate("koehler1999", checked))
    return C.evaluate("koehler1999", checked).exit_code()
