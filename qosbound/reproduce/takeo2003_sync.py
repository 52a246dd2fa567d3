"""Takeo & Tasaka (2003), the application-level streaming claims: Fig. 8's inter-stream synchronization and
conclusion (i)'s recommended cases, judged on the output of qosbound's playout model.

The six cases of Table V run through the network of :mod:`qosbound.reproduce.takeo2003_net`; every voice 1 MU
and video 1 frame delivered then passes the playout model of :mod:`qosbound.validation.playout` (the enhanced VTR
algorithm's stated parameters: initial buffering J_max = 100 ms, maximum allowable delay 400 ms; no target-time
shortening and no inter-stream control, the model's assumptions), which gives per replication the coefficient of
variation of each stream's output interval (``voice1.cv``, ``video1.cv``), its skip rate, and the mean square error
of inter-stream synchronization (``sync.mse``, s^2; section III.E's definition, voice the master).

The claims (rules in ``qosbound/data/claims/takeo2003.yaml``, written before these results were seen):

* Fig. 8: the MSE falls from m = 0 to m = 4 in each case; it is below 6400 ms^2 at m = 4 in cases 1, 3-6; case 3's
  is the smallest at m = 1, 2 and 3. They need m >= 1: judged in the full mode only (the quick mode runs m = 0).
* Section V (i): cases 1, 5 and 6 are recommendable -- at m = 0 each has a smaller voice 1 output-interval CV than
  cases 2 and 4 and a smaller 5125-byte HTML transfer time than case 3.
"""

from __future__ import annotations

import math

import numpy as np

from qosbound.reproduce import claims as C
from qosbound.reproduce import rules as R
from qosbound.reproduce import takeo2003_net as N

__all__ = ["MS2", "sync_claims", "recommend_claim", "print_results"]

MS2 = 1e6      #: ms^2 per s^2


def case_stat(res, case, m, metric, reps, scale=1.0):
    mean, se, n = N.case_stat(res, case, m, metric, reps)
    return mean * scale, se * scale, n


def sync_claims(res: dict, ms, reps: int | None = None) -> list[C.Claim]:
    """Fig. 8's three claims on the runs at the additional delays ``ms`` (rows only for the delays run: m = 0 and
    4 for the fall and the 6400-ms^2 level, m = 1..3 for case 3's place)."""
    ms = set(ms)
    rule_fall = N.claim_rule("fig8-sync-error-falls")
    out = []
    if {0, 4} <= ms:
        for case in N.CASES:
            a = case_stat(res, case, 4, "sync.mse", reps, MS2)
            b = case_stat(res, case, 0, "sync.mse", reps, MS2)
            t = R.difference(a, b, "<", effect=float(rule_fall.effect) * abs(b[0]), alpha=float(rule_fall.level),
                             names=("m = 4", "m = 0"))
            pw = "" if t.power is None else f"; power {100 * t.power:.0f} %"
            out.append(C.judge(f"inter-stream sync MSE falls from m = 0 to m = 4, {case}", "Fig. 8", "decreasing",
                               f"m = 0: {b[0]:.4g} ms^2, m = 4: {a[0]:.4g} ms^2 (p = {t.p:.3g}{pw})",
                               t.p <= float(rule_fall.level), "MSE at m = 4 below MSE at m = 0: one-sided Welch test",
                               failure=f"not shown: {t.what}", p_value=t.p, test=t.what, power=t.power,
                               value=a[0] - b[0], unit="ms^2"))
    if 4 in ms:
        rule = N.claim_rule("fig8-sync-fine-at-200ms")
        for case in ("case1", "case3", "case4", "case5", "case6"):
            mean, se, n = case_stat(res, case, 4, "sync.mse", reps, MS2)
            dof = n - 1 if n > 1 else None
            t = R.one_sided(mean, se, dof, float(rule.threshold), "<", alpha=float(rule.level))
            out.append(C.judge(f"inter-stream sync MSE below 6400 ms^2 at m = 4, {case}", "Fig. 8", "< 6400 ms^2",
                               f"{mean:.4g} ms^2 (p = {t.p:.3g})", t.p <= float(rule.level),
                               "MSE below 6400 ms^2: one-sided t test on the replication mean",
                               failure=f"not shown: {t.what}", value=mean, unit="ms^2", se=se, dof=dof,
                               paper_value=6400.0))
    for m in (1, 2, 3):
        if m in ms:
            out.append(N.order_claim(res, m, "sync.mse", f"inter-stream sync MSE smallest in case 3 [m = {m}]",
                                      "Fig. 8", "case3", "s^2", largest=False, cid="fig8-case3-smallest-50-150",
                                      reps=reps))
    return out


def recommend_claim(res: dict, m: int = 0, reps: int | None = None) -> C.Claim:
    """Section V (i): each of cases 1, 5 and 6 below cases 2 and 4 in voice 1's output-interval CV and below case 3
    in the 5125-byte HTML transfer time (nine one-sided Welch tests, intersection-union)."""
    rule = N.claim_rule("conclusion-recommend-1-5-6")
    alpha, rel = float(rule.level), float(rule.effect)
    tests = []
    for good in ("case1", "case5", "case6"):
        for metric, worse in (("voice1.cv", ("case2", "case4")), ("html.time5k", ("case3",))):
            g = case_stat(res, good, m, metric, reps)
            for w in worse:
                tests.append(R.difference(g, case_stat(res, w, m, metric, reps), "<", effect=rel * abs(g[0]),
                                          alpha=alpha, names=(f"{good} {metric}", w)))
    t = R.intersection_union(tests)
    cv = ", ".join(f"{c[-1]}: {res[(c, m)]['voice1.cv'][0]:.3f}" for c in N.CASES)
    tt = ", ".join(f"{c[-1]}: {res[(c, m)]['html.time5k'][0]:.3g} s" for c in N.CASES)
    pw = "" if t.power is None else f"; power {100 * t.power:.0f} %"
    return C.judge(f"cases 1, 5 and 6 recommendable (voice 1 CV below cases 2, 4; HTML time below case 3) [m = {m}]",
                   "section V (i)", "cases 1, 5, 6", f"voice 1 CV {cv}; 5k time {tt} (p = {t.p:.3g}{pw})",
                   t.p <= alpha, "nine one-sided Welch tests (intersection-union)", failure=f"not shown: {t.what}",
                   p_value=t.p, test=t.what, power=t.power, effect=rel)


def print_results(res: dict) -> None:
    """The application-level streaming measures per case and additional delay (mean +- 95 % half-width)."""
    cols = [("voice1.cv", "voice1 CV", 1, "{:.3f}"), ("video1.cv", "video1 CV", 1, "{:.3f}"),
            ("voice1.skip", "voice1 skipped", 1, "{:.4f}"), ("video1.skip", "video1 skipped", 1, "{:.4f}"),
            ("sync.mse", "sync MSE ms^2", MS2, "{:.0f}")]
    print("Takeo & Tasaka 2003, Figs. 5, 6 and 8 after the playout model (J_max = 100 ms, Delta_al = 400 ms; "
          "independent streams, no target-time shortening): mean +- 95 % t half-width over replications")
    for m in sorted({k[1] for k in res}):
        print(f"\nadditional delay m = {m}")
        print(f"{'':<7}" + "".join(f"{h:>22}" for _, h, _, _ in cols))
        for case in N.CASES:
            cells = []
            for k, _, s, fmt in cols:
                mean, h = res[(case, m)][k][:2]
                hw = " +- " + fmt.format(h * s) if math.isfinite(h) else ""
                cells.append((fmt.format(mean * s) + hw).rjust(22) if np.isfinite(mean) else "n/a".rjust(22))
            print(f"{case:<7}" + "".join(cells))
