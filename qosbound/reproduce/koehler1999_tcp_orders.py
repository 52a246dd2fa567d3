"""The ordering claims of Koehler & Schaefer (1999), sections 4.1, 4.2 and 5, as one-sided tests on the goodput sweep
of :mod:`qosbound.reproduce.koehler1999_tcp`: PA below PP, AP above every other combination, the spreads over the
loads (Assured and Best Effort against PP; PP at 100 ms against 20 ms), AB at 20 ms against 60 ms, Premium data
within its share of the Premium CIR, the ACK class's direction (at the loads >= 100 % and at low load), the one AF
class's independence of the data precedence at low load and 200 ms, and its smaller confidence intervals.

Each row carries its one-sided test (:mod:`qosbound.reproduce.rules`): ratios of goodputs are paired by replication
(the nine combinations run in one simulation), so a ratio's mean over the replications is tested by Student's t with
replications - 1 degrees of freedom; quantities from independent runs (another RTT) by Welch's test. A claim of
several comparisons is an intersection-union test (every comparison must reject; its p-value the largest of theirs).
The rules and their effects are those of the claims file (``qosbound/data/claims/koehler1999.yaml``), which the
claims' evaluation (:func:`qosbound.reproduce.claims.evaluate`) puts in the file's Holm family.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from qosbound.reproduce import claims as C
from qosbound.reproduce import rules as R
from qosbound.reproduce.koehler1999_tcp import COMBOS, HEADER, PACKET, label, points
from qosbound.reproduce.koehler1999_tcp_claims import ratio_reps, Sweep
from qosbound.validation.stats import welch_samples

__all__ = ["claims", "mixed_claim", "uplink_aqm_claim",
           "ORDER_EFFECT", "SPREAD_EFFECT", "AB_EFFECT", "SHARE_EFFECT", "CI_EFFECT", "BAND",
           "PREMIUM_SHARE_BIT_S"]

#: The effects the stated powers refer to (the claims file's ``effect``): a ratio 20 % off 1 (PA/PP, AP/X, AP/AB,
#: PB/PP), 10 points of relative spread over the loads, 20 % of AB's goodput at 60 ms, the goodput of the Premium
#: share taken in full on the wire (958/1000 of it: 4.2 % below the share), 5 points of relative half-width.
ORDER_EFFECT = 0.2
SPREAD_EFFECT = 0.1
AB_EFFECT = 0.2
SHARE_EFFECT = 1 - (PACKET - HEADER) / PACKET
CI_EFFECT = 0.05
#: The equivalence band of af-independent-at-low-load-200ms (relative difference of the goodputs).
BAND = (-0.1, 0.1)
#: A Premium source's share of its node's Premium CIR (Table 3: 2 Mbit/s per node, two Premium sources per node).
PREMIUM_SHARE_BIT_S = 1e6

LEVEL = 0.05


def _mean_test(x: np.ndarray, threshold: float, direction: str, effect: float | None, name: str) -> R.Test:
    """One-sided Student t on the mean of ``x`` (paired per-replication values), dof len(x) - 1."""
    x = np.asarray(x, float)
    n = len(x)
    se = float(x.std(ddof=1)) / np.sqrt(n) if n > 1 else float("nan")
    t = R.one_sided(float(x.mean()), se, n - 1 if n > 1 else None, threshold, direction, effect=effect, alpha=LEVEL)
    return R.Test(t.p, f"{name}: {t.what}", t.power, t.effect)


def _welch_test(a: np.ndarray, b: np.ndarray, direction: str, effect: float | None, names: tuple[str, str]) -> R.Test:
    """One-sided Welch test of mean ``a`` against mean ``b`` (independent replications)."""
    a, b = np.asarray(a, float), np.asarray(b, float)

    def se(x):
        return float(x.std(ddof=1)) / np.sqrt(len(x)) if len(x) > 1 else 0.0

    return R.difference((float(a.mean()), se(a), len(a)), (float(b.mean()), se(b), len(b)), direction,
                        effect=effect, alpha=LEVEL, names=names)


def _row(claim: str, source: str, paper: str, shown: str, rule: str, t: R.Test, *, failure: str,
         value: float | None = None, unit: str = "") -> C.Claim:
    """A result row judged by its one-sided test ``t`` (met at the level before the family's adjustment)."""
    pw = "" if t.power is None else f", power {100 * t.power:.0f} % at the stated effect"
    return C.judge(claim, source, paper, f"{shown} ({t.what}; p {t.p:.3g}{pw})", t.p < LEVEL, rule,
                   failure=f"{failure}: p {t.p:.3g}", p_value=float(t.p), test=t.what, power=t.power,
                   effect=t.effect, value=value, unit=unit)


def _spreads(s: Sweep, rtt: int, combos) -> np.ndarray:
    """Per replication: (max - min)/mean of the goodput over the loads judged (replications paired by index), for
    each combination of ``combos`` (shape replications x len(combos))."""
    g = np.stack([np.asarray(s.tb[(ld, rtt)]["per_replication"])[:, list(combos)] for ld in s.loads], axis=2)
    return (g.max(axis=2) - g.min(axis=2)) / np.maximum(g.mean(axis=2), 1e-9)


def claims(sw: dict) -> list:
    """The ordering claims checked on a sweep (:func:`qosbound.reproduce.koehler1999.tcp_sweep`); rows whose points
    the sweep lacks (60 ms, 100 ms, loads < 100 %: the full mode's) are left out."""
    s = Sweep.of(sw)
    return [row for judge in (_pa_below_pp, _ap_highest, _variation, _pp_spread_rtt, _ab_rtt, _premium_share,
                              _receiver, _low_load, _af_low_load, _af_ci) for row in judge(s)]


def _pa_below_pp(s: Sweep) -> list:
    """Section 4.1, Fig. 4(a): PA below PP at every load, the smallest RTT."""
    c = s.c
    tests = [_mean_test(ratio_reps(s.tb[(ld, s.r0)], [c["PA"]], [c["PP"]]), 1.0, "<", ORDER_EFFECT, f"PA/PP {ld} %")
             for ld in s.loads]
    ms = {ld: float(ratio_reps(s.tb[(ld, s.r0)], [c["PA"]], [c["PP"]]).mean()) for ld in s.loads}
    t = R.intersection_union(tests)
    return [_row(f"Two-Bit DS, RTT {s.r0} ms: PA below PP", "section 4.1, Fig. 4(a)", "PA lower than PP",
                 "PA/PP " + ", ".join(f"{ld} %: {v:.2f}" for ld, v in ms.items()), "PA/PP below 1 at every load: "
                 "one-sided t per load on the paired per-replication ratio, intersection-union", t,
                 failure="PA/PP not shown below 1 at every load", value=max(ms.values()))]


def _ap_highest(s: Sweep) -> list:
    """Sections 4.1 and 5: AP above each of the eight other combinations at every load, the smallest RTT."""
    c = s.c
    others = [k for k in c if k != "AP"]
    tests, worst = [], (None, np.inf)
    for ld in s.loads:
        for k in others:
            r = ratio_reps(s.tb[(ld, s.r0)], [c["AP"]], [c[k]])
            tests.append(_mean_test(r, 1.0, ">", ORDER_EFFECT, f"AP/{k} {ld} %"))
            if r.mean() < worst[1]:
                worst = (f"AP/{k} at {ld} %", float(r.mean()))
    t = R.intersection_union(tests)
    return [_row(f"Two-Bit DS, RTT {s.r0} ms: AP above every other combination", "sections 4.1 and 5",
                 "AP gives the highest throughput", f"smallest ratio {worst[0]}: {worst[1]:.2f}",
                 "AP/X above 1 for each other combination X and load: one-sided t on the paired per-replication "
                 "ratios, intersection-union", t, failure="AP not shown above every other combination",
                 value=worst[1])]


def _variation(s: Sweep) -> list:
    """Section 4.1, Fig. 4(a): Assured and Best Effort vary more over the loads than PP (smallest RTT)."""
    if len(s.loads) < 2:
        return []
    pp = _spreads(s, s.r0, [s.c["PP"]])[:, 0]
    a = _spreads(s, s.r0, s.A).mean(axis=1)
    b = _spreads(s, s.r0, s.B).mean(axis=1)
    t = R.intersection_union([_mean_test(a - pp, 0.0, ">", SPREAD_EFFECT, "Ax spread - PP spread"),
                              _mean_test(b - pp, 0.0, ">", SPREAD_EFFECT, "Bx spread - PP spread")])
    return [_row(f"Two-Bit DS, RTT {s.r0} ms: Assured and Best Effort vary more over the loads than PP",
                 "section 4.1, Fig. 4(a)", "significantly higher variation than Premium",
                 f"spread over {', '.join(f'{ld} %' for ld in s.loads)} ((max - min)/mean per replication): Ax "
                 f"{100 * a.mean():.0f} %, Bx {100 * b.mean():.0f} %, PP {100 * pp.mean():.0f} %",
                 "Ax's and Bx's spread minus PP's above 0: one-sided paired t over the replications, "
                 "intersection-union", t, failure="a spread not shown above PP's",
                 value=float(min(a.mean(), b.mean()) - pp.mean()))]


def _pp_spread_rtt(s: Sweep) -> list:
    """Section 4.1, Fig. 4(c): PP varies more over the loads at 100 ms than at 20 ms (the full mode)."""
    if 100 not in s.rtts or 20 not in s.rtts or len(s.loads) < 2:
        return []
    hi = _spreads(s, 100, [s.c["PP"]])[:, 0]
    lo = _spreads(s, 20, [s.c["PP"]])[:, 0]
    t = _welch_test(hi, lo, ">", SPREAD_EFFECT, ("PP spread 100 ms", "PP spread 20 ms"))
    return [_row("Two-Bit DS: PP varies more over the loads at 100 ms than at 20 ms", "section 4.1, Fig. 4(c)",
                 "higher variation of PP", f"PP's spread over {', '.join(f'{ld} %' for ld in s.loads)}: "
                 f"{100 * lo.mean():.0f} % at 20 ms, {100 * hi.mean():.0f} % at 100 ms",
                 "PP's spread at 100 ms above at 20 ms: one-sided Welch test", t,
                 failure="PP's spread not shown larger at 100 ms", value=float(hi.mean() - lo.mean()))]


def _ab_rtt(s: Sweep) -> list:
    """Section 4.1, Figs. 5(a) and 5(d): AB lower at 20 ms than at 60 ms, at the lowest and the highest load (the
    full mode)."""
    if 60 not in s.rtts or 20 not in s.rtts:
        return []
    c = s.c
    tests, shown = [], []
    for ld in sorted({s.loads[0], s.loads[-1]}):
        a20 = np.asarray(s.tb[(ld, 20)]["per_replication"])[:, c["AB"]]
        a60 = np.asarray(s.tb[(ld, 60)]["per_replication"])[:, c["AB"]]
        ap20 = s.tb[(ld, 20)]["goodput_bit_s"][c["AP"]]
        ap60 = s.tb[(ld, 60)]["goodput_bit_s"][c["AP"]]
        ref = max(float(a60.mean()), 1e-9)
        tests.append(_welch_test(a20 / ref, a60 / ref, "<", AB_EFFECT, (f"AB 20 ms {ld} %", f"AB 60 ms {ld} %")))
        shown.append(f"{ld} %: AB {a20.mean() / 1e3:.0f} vs {a60.mean() / 1e3:.0f} kbit/s (AP {ap20 / 1e3:.0f} vs "
                     f"{ap60 / 1e3:.0f})")
    t = R.intersection_union(tests)
    return [_row("Two-Bit DS: AB lower at RTT 20 ms than at 60 ms", "section 4.1, Figs. 5(a), 5(d)",
                 "AB(20 ms) below AB(60 ms)", "; ".join(shown) + " at 20 vs 60 ms",
                 "AB(20 ms) - AB(60 ms) below 0 at both loads: one-sided Welch tests, intersection-union", t,
                 failure="AB not shown lower at 20 ms")]


def _premium_share(s: Sweep) -> list:
    """Sections 4.1 and 5: Premium data's goodput stays below its share of its node's Premium CIR (every point)."""
    tests, top = [], (None, -np.inf)
    for (ld, rtt), p in sorted(s.tb.items()):
        per = np.asarray(p["per_replication"])
        for k in ("PP", "PA", "PB"):
            x = per[:, s.c[k]] / PREMIUM_SHARE_BIT_S
            tests.append(_mean_test(x, 1.0, "<", SHARE_EFFECT, f"{k}/share {ld} % {rtt} ms"))
            if x.mean() > top[1]:
                top = (f"{k} at {ld} %, {rtt} ms", float(x.mean()))
    t = R.intersection_union(tests)
    return [_row("Two-Bit DS: Premium data within its share of the Premium CIR", "sections 4.1 and 5",
                 "only up to the contracted rate",
                 f"largest Px goodput / 1 Mbit/s share: {top[1]:.3f} ({top[0]}; full share on the wire: "
                 f"{(PACKET - HEADER) / PACKET:.3f})",
                 "each Px's goodput below its 1 Mbit/s share at every point: one-sided t, intersection-union", t,
                 failure="a Premium connection's goodput not shown below its share", value=top[1])]


def _ack_direction(s: Sweep, loads: list, claim: str, source: str, paper: str) -> list:
    """AP/AB - 1 and 1 - PB/PP above 0 at ``loads`` (smallest RTT): one-sided t, intersection-union."""
    c = s.c
    tests, shown = [], []
    for ld in loads:
        p = s.tb[(ld, s.r0)]
        apab = ratio_reps(p, [c["AP"]], [c["AB"]]) - 1
        pbpp = 1 - ratio_reps(p, [c["PB"]], [c["PP"]])
        tests += [_mean_test(apab, 0.0, ">", ORDER_EFFECT, f"AP/AB - 1 {ld} %"),
                  _mean_test(pbpp, 0.0, ">", ORDER_EFFECT, f"1 - PB/PP {ld} %")]
        shown.append(f"{ld} %: AP/AB {1 + apab.mean():.2f}, PB/PP {1 - pbpp.mean():.2f}, bottleneck loss "
                     f"{100 * p['loss_rate']:.2f} %")
    t = R.intersection_union(tests)
    return [_row(claim, source, paper, "; ".join(shown), "AP/AB above 1 and PB/PP below 1 at every load: one-sided t "
                 "on the paired per-replication ratios, intersection-union", t,
                 failure="AP above AB and PB below PP not shown at every load")]


def _receiver(s: Sweep) -> list:
    """Section 5: the receiver's ACK class changes the goodput (loads >= 100 %)."""
    return _ack_direction(s, s.loads, f"Two-Bit DS, RTT {s.r0} ms: the receiver's ACK class changes the goodput "
                          "(AP above AB, PB below PP)", "section 5", "the ACK class has a big influence")


def _low_load(s: Sweep) -> list:
    """Section 4.1, Fig. 5: at low load the ACK class is the main factor (the full mode's loads < 100 %)."""
    if not s.light:
        return []
    return _ack_direction(s, s.light, f"Two-Bit DS, RTT {s.r0} ms: at low load the ACK class is the main factor "
                          f"({', '.join(f'{ld} %' for ld in s.light)}: AP above AB, PB below PP)",
                          "section 4.1, Fig. 5", "ACK class the main factor at low load")


def _af_low_load(s: Sweep) -> list:
    """Section 4.2, Fig. 6(d): at 200 ms and low load the goodput does not depend on the data precedence."""
    if not s.light or 200 not in s.rtts:
        return []
    tests, shown = [], []
    for ld in s.light:
        per = np.asarray(s.af[(ld, 200)]["per_replication"]).reshape(-1, 3, 3).mean(axis=2)
        for k in (1, 2):
            x = per[:, k] / np.maximum(per[:, 0], 1e-9) - 1
            n = len(x)
            se = float(x.std(ddof=1)) / np.sqrt(n) if n > 1 else float("nan")
            b = R.band(float(x.mean()), se, n - 1 if n > 1 else None, *BAND, alpha=LEVEL)
            tests.append(R.Test(b.p, f"AF1{k + 1}x/AF11x - 1 {ld} %: {b.what}"))
            shown.append(f"{ld} %: AF1{k + 1}x/AF11x {1 + x.mean():.2f}")
    t = R.intersection_union(tests)
    return [_row("one AF class, RTT 200 ms: the goodput independent of the data precedence at low load",
                 "section 4.2, Fig. 6(d)", "independent of the drop precedence", "; ".join(shown),
                 f"AF12x/AF11x - 1 and AF13x/AF11x - 1 within [{BAND[0]:g}, {BAND[1]:g}]: two one-sided t tests each, "
                 "intersection-union", t, failure="equivalence within +-10 % not shown")]


def _rel_half(p: dict) -> float:
    """The mean over the nine combinations of the 95 % half-width relative to the combination's mean goodput."""
    g = np.asarray(p["goodput_bit_s"], float)
    h = np.asarray([np.nan if x is None else x for x in p["ci95_half_bit_s"]], float)
    return float(np.nanmean(h / np.maximum(g, 1e-9)))


def _af_ci(s: Sweep) -> list:
    """Section 4.2, Fig. 7: the one AF class's confidence intervals smaller than Two-Bit DS's (every point of the
    run, paired by point)."""
    keys = sorted(k for k in s.tb if k in s.af)
    if len(keys) < 2 or s.sw["replications"] < 2:
        return []
    d = np.array([_rel_half(s.af[k]) - _rel_half(s.tb[k]) for k in keys])
    af = np.mean([_rel_half(s.af[k]) for k in keys])
    tb = np.mean([_rel_half(s.tb[k]) for k in keys])
    t = _mean_test(d, 0.0, "<", CI_EFFECT, "AF - Two-Bit DS relative half-width")
    return [_row("one AF class: smaller confidence intervals than Two-Bit DS", "section 4.2, Fig. 7",
                 "smaller intervals", f"mean 95 % half-width / goodput over {len(keys)} points: one AF class "
                 f"{100 * af:.0f} %, Two-Bit DS {100 * tb:.0f} %",
                 "the AF class's mean relative half-width below Two-Bit DS's: one-sided paired t over the points", t,
                 failure="smaller intervals not shown", value=float(d.mean()))]


def mixed_claim(sw: dict, mixed: dict) -> list:
    """Section 3.2 and appendix A: Table 1's mixed rows give nearly the equal-RTT goodputs. Per scenario and RTT of
    ``mixed`` (:func:`qosbound.reproduce.koehler1999_tcp.mixed_sweep`), each combination's goodput summed over the
    mixed run's loads (per replication) against the equal-RTT sweep's: the relative difference within the band by two
    one-sided Welch tests; intersection-union over every combination, scenario and RTT."""
    tests, shown = [], []
    for sc in ("twobit", "af"):
        mx, eq = points(mixed, sc), points(sw, sc)
        for rtt in sorted({k[1] for k in mx}):
            loads = sorted(ld for ld, r in mx if r == rtt and (ld, rtt) in eq)
            if not loads:
                continue
            worst = (None, 0.0)
            for c in range(9):
                a = sum(np.asarray(mx[(ld, rtt)]["per_replication"])[:, c] for ld in loads)
                b = sum(np.asarray(eq[(ld, rtt)]["per_replication"])[:, c] for ld in loads)
                ref = max(float(b.mean()), 1e-9)
                w = welch_samples(a, b)
                d = w.diff / ref
                t = R.band(d, w.se / ref, w.dof, *BAND, alpha=LEVEL)
                tests.append(R.Test(t.p, f"{label(sc, c)} {rtt} ms mixed/equal - 1: {t.what}"))
                if abs(d) >= abs(worst[1]):
                    worst = (label(sc, c), d)
            shown.append(f"{'Two-Bit DS' if sc == 'twobit' else 'AF'} {rtt} ms: largest {worst[0]} "
                         f"{100 * worst[1]:+.0f} %")
    if not tests:
        return []
    t = R.intersection_union(tests)
    return [_row("mixed RTTs (Table 1) give nearly the equal-RTT goodputs", "section 3.2, appendix A",
                 "nearly equivalent results", "; ".join(shown) + " (goodput over the loads, mixed against equal)",
                 f"each combination's relative difference within [{BAND[0]:g}, {BAND[1]:g}]: two one-sided Welch "
                 "tests, intersection-union", t, failure="equivalence within +-10 % not shown")]


def uplink_aqm_claim(sw: dict, alt: dict) -> list:
    """The project's hypothesis for the low-load NOT MET: with RIO at the node uplinks
    (:func:`qosbound.reproduce.koehler1999_tcp.uplink_aqm_run`) the ACK class is the main factor at the loads < 100 %
    of ``alt``: AP/AB above 1 and PB/PP below 1 (the rule of low-load-ack-class-main-factor: one-sided t on the paired
    per-replication ratios, intersection-union); the drop-tail uplinks' ratios of ``sw`` at the same point are shown
    beside it when the sweep has them."""
    if not any(ld < 100 for ld, _ in points(alt, "twobit")):
        return []
    s = Sweep.of(alt)
    light = sorted({ld for ld, _ in s.tb if ld < 100})
    at = ", ".join(f"{ld} %" for ld in light)
    rows = _ack_direction(s, light, f"with RIO at the node uplinks (Two-Bit DS, RTT {s.r0} ms): at low load the ACK "
                          f"class is the main factor ({at}: AP above AB, PB below PP)",
                          "section 3.1, section 4.1, Fig. 5", "(qosbound's sensitivity run)")
    c = s.c
    notes = []
    for ld in light:
        p = s.tb[(ld, s.r0)]
        arr, drp = p.get("uplink_arrivals_by_colour"), p.get("uplink_drops_by_colour")
        if arr is not None:
            notes.append(f"{ld} %: uplink data drops green/yellow/red "
                         + "/".join(f"{100 * d / a:.2f} %" if a else "-" for a, d in zip(arr, drp))
                         + f", {p['ack_uplink_drops']:.0f} ACKs dropped at the uplinks")
            share = p.get("ack_uplink_drop_share")
            if share:
                by_ack = {y: [share[i] for i, (x_, y_) in enumerate(COMBOS) if y_ == y and share[i] is not None]
                          for y in range(3)}
                notes.append("the observed connections' ACKs dropped at the uplinks by ACK class: " + ", ".join(
                    f"{'PAB'[y]} {100 * np.mean(v):.2f} %" for y, v in by_ack.items() if v))
        base = points(sw, "twobit").get((ld, s.r0))
        if base is not None:
            notes.append(f"drop-tail uplinks: AP/AB {ratio_reps(base, [c['AP']], [c['AB']]).mean():.2f}, PB/PP "
                         f"{ratio_reps(base, [c['PB']], [c['PP']]).mean():.2f}")
    return [dataclasses.replace(rows[0], qosbound=rows[0].qosbound + "; " + "; ".join(notes))] if notes else rows
