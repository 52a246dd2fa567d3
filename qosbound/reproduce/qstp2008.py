"""``qosbound reproduce qstp2008``: Figs. 4-7 of Jourjon, Lochin & Sénac (2008) in the packet simulator.

The test bed (section 5.1): two-colour token-bucket markers with 10^4-byte buckets at the edge,
RIO (10, 20, 0.1, 20, 40, 0.02) with a 50-packet buffer in the core, a 1000 kbit/s bottleneck,
RTT 30 ms, 1500-byte packets; the competing aggregate is made of real TCP flows (NewReno with
SACK and delayed ACKs, :mod:`qosbound.validation.tcp`), simulated on qosbound's network engine, the
dumbbell of :mod:`qosbound.validation.dumbbell`, configured as the test bed by
:mod:`qosbound.validation.qstp_sim`. The studied flow is TCP, TFRC or gTFRC (QSTP's congestion
control, :mod:`qosbound.validation.tfrc_sender` with receiver feedback once per RTT; the paper's
TFRC/SACK and QSTP add SACK-based reliability, which does not change the network-level throughput
measured here).

* **Fig. 4** (section 5.2): one flow with target g = 500 kbit/s against 15 TCP flows marked at
  300 kbit/s; its throughput over time (1-s windows) for TCP, TFRC and gTFRC. Claims: TCP and
  TFRC miss g, gTFRC reaches it.
* **Fig. 4(b)'s slow recovery** (section 5.2, t = 40-100 s): the same test bed with a transient congestion, which
  the paper does not describe; qosbound's assumption (:data:`RECOVERY_UDP`): a UDP flow at 1000 kbit/s during
  [30, 40] s in the aggregate's class, as the authors congest the test bed in section 5.4. Measured: the recovery
  time from 40 s to the first 1-s window at or above g, per replication, for TFRC and gTFRC, and for TFRC in
  Fig. 4's runs without the episode (the control). Claim: TFRC stays below g for tens of seconds (the rule made
  operational in the claims file's changelog before the experiment ran).
* **Fig. 5** (section 5.3): g = 400 kbit/s for the flow and the aggregate, 1..20 TCP flows;
  the mean throughput over replications with min/max. Claims: gTFRC holds g at every aggregate
  size; TCP and TFRC miss it.
* **Fig. 6**: the standard deviation of those throughputs over replications. Claim: TCP's is the
  largest, TFRC's and gTFRC's small.
* **Fig. 7** (section 5.4): CBQ in borrow mode guaranteeing 300 kbit/s to the studied flow (TCP
  or QSTP with g = 300 kbit/s) against a UDP flow at 300 kbit/s, 1000 kbit/s during [60, 120] s;
  throughput at the sender and the receiver and the jitter. Claims: both flows keep their
  300 kbit/s during the congestion; QSTP's jitter is lower than TCP's.

The jobs, one module each: the experiments and the test bed's settings
(:mod:`qosbound.reproduce.qstp2008_experiments`), the claim rows and their rules
(:mod:`qosbound.reproduce.qstp2008_claims`: "reaches g", "misses g" beyond :data:`MARGIN`, the documented finding
:data:`TFRC_FINDING`), the figures (:mod:`qosbound.reproduce.qstp2008_figures`); this module prints the tables and
the report. Exit 0 when every claim is met (a documented finding counts as met while qosbound still shows it),
1 otherwise.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from qosbound.progress import progress
from qosbound.reproduce import claims as C
from qosbound.reproduce.qstp2008_claims import MARGIN, RTO_NAMES, TFRC_FINDING, claims
from qosbound.reproduce.qstp2008_experiments import (CASES, CLAMP_CASE, FIG4_TCP, NAMES, PACKET_SIZE, PROTOCOLS,
                                                     RECOVERY_EPISODE, RECOVERY_EPISODES, RECOVERY_UDP, RTO_FLOOR,
                                                     clamp, fig4, fig7, fluid_recovery_time, recovery, recovery_time,
                                                     results, rto_sensitivity, settings, sweep)
from qosbound.reproduce.qstp2008_figures import plots

__all__ = ["run", "results", "sweep", "fig4", "fig7", "clamp", "recovery", "recovery_time", "fluid_recovery_time",
           "rto_sensitivity", "claims", "CASES", "CLAMP_CASE", "TFRC_FINDING", "PACKET_SIZE", "PROTOCOLS", "settings",
           "MARGIN"]


def _json_safe(res: dict) -> dict:
    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        return v

    return clean(res)


def run(args) -> int:
    """The command: run the experiments, judge the claims, write the figures (``--out``), print the tables and
    the report (or the JSON document with ``--json``); the exit code of the claims' evaluation."""
    quick = bool(getattr(args, "quick", False))
    st = settings(quick)
    total = len(PROTOCOLS) * (2 + len(st["n_values"])) + 2 + 2 + 2 * len(RECOVERY_EPISODES)
    with progress(None if not getattr(args, "quiet", False) else False) as prog:
        res = results(quick, progress=prog.task("qstp2008", total))
    checked = claims(res)
    files = plots(res, Path(args.out)) if getattr(args, "out", None) else []
    if getattr(args, "json", False):
        print(json.dumps(C.report_document(C.evaluate("qstp2008", checked), quick=quick,
                                    settings={k: list(v) if isinstance(v, tuple) else v for k, v in st.items()},
                                    results=_json_safe(res), figures=files), indent=2, allow_nan=False))
        return C.evaluate("qstp2008", checked).exit_code()
    print(f"Jourjon, Lochin & Sénac 2008 (QSTP), Figs. 4-7: {st['replications']} replications of "
          f"{st['duration']:.0f} s (measured after {st['warmup']:.0f} s), RTT 30 ms, 1000 kbit/s, "
          f"{PACKET_SIZE:.0f}-byte packets, RIO (10, 20, 0.1, 20, 40, 0.02); TCP = NewReno + SACK, delayed ACKs, "
          f"RTO {RTO_NAMES[RTO_FLOOR]} (the end hosts run GNU/Linux, section 5.1)")
    _print_fig4(res)
    _print_recovery(res, st)
    _print_fig5(res)
    _print_clamp(res)
    _print_rto(res)
    _print_fig7(res)
    print()
    C.print_report("Claims of Jourjon, Lochin & Sénac 2008 checked by qosbound", C.evaluate("qstp2008", checked))
    for f in files:
        print(f"wrote {f}")
    return C.evaluate("qstp2008", checked).exit_code()


def _k(x) -> str:
    """A rate in bit/s as kbit/s in a fixed-width column ('-' when there is none)."""
    return f"{x / 1e3:7.1f}k" if x is not None else f"{'-':>8}"


def _print_fig4(res: dict) -> None:
    print(f"\nFig. 4: g = 500 kbit/s vs {FIG4_TCP} TCP flows marked at 300 kbit/s")
    print(f"{'flow':>13} | {'mean':>8} {'std':>8} {'equation':>8} {'p':>7} {'R':>6} {'<g (1s)':>7} "
          f"{'TCP RTOs':>8} {'TCP FRs':>8}")
    for r in res["fig4"]:
        print(f"{NAMES[r['protocol']]:>13} | {_k(r['throughput_mean'])} {_k(r['throughput_std'])} "
              f"{_k(r['predicted_mean'])} {r['loss_event_rate']:7.4f} {r['rtt'] * 1e3:4.0f}ms "
              f"{r['windows_below_target']:7.2f} {r['tcp_timeouts']:8.0f} {r['tcp_fast_recoveries']:8.0f}")


def _print_recovery(res: dict, st: dict) -> None:
    e0, e1 = RECOVERY_EPISODE
    print(f"\nFig. 4(b): transient congestion, UDP {RECOVERY_UDP[0][1] / 1e3:.0f} kbit/s in [{e0:g}, {e1:g}] s "
          f"(same test bed, {st['recovery_replications']} replications of {st['recovery_duration']:.0f} s); T: from "
          f"{e1:g} s to the first 1-s window >= g")
    print(f"{'episode':>9} {'flow':>13} | {'before':>8} {'during':>8} {'40-100s':>8} {'<g':>4} {'IN drops':>8} | "
          f"T (s) mean and per run")
    for r in res.get("recovery", []):
        t = r["recovery_times"]
        print(f"{r['episode_kind']:>9} {NAMES[r['protocol']]:>13} | {_k(float(np.mean(r['before'])))} "
              f"{_k(float(np.mean(r['during'])))} {_k(float(np.mean(r['after'])))} {r['after_below_target']:4.2f} "
              f"{sum(r['in_drops_during']):8d} | {np.mean(t):5.1f}  ({', '.join(f'{x:.0f}' for x in t)}; "
              f"{r['censored']} censored)")
    ctrl = [x for f in res["fig4"] if f["protocol"] == "tfrc" for x in f.get("recovery_control", [])]
    if ctrl:
        print(f"{'none':>9} {'TFRC':>13} | Fig. 4's runs, T from {e1:g} s: {np.mean(ctrl):.1f} s "
              f"({', '.join(f'{x:.0f}' for x in ctrl)})")


def _print_fig5(res: dict) -> None:
    print("\nFig. 5 / 6: g = 400 kbit/s (flow and aggregate) vs n TCP flows: mean and std over replications")
    print(f"{'n':>3} | " + " | ".join(f"{NAMES[p]:>17} {'equation':>8}" for p in PROTOCOLS))
    rows = res["fig5"]
    for n in sorted({r["n_tcp"] for r in rows}):
        cells = []
        for p in PROTOCOLS:
            r = next(x for x in rows if x["protocol"] == p and x["n_tcp"] == n)
            cells.append(f"{_k(r['throughput_mean'])} ± {_k(r['throughput_std'])} {_k(r['predicted_mean'])}")
        print(f"{n:>3} | " + " | ".join(cells))


def _print_clamp(res: dict) -> None:
    g, g_agg = CLAMP_CASE
    print(f"\nSensitivity: gTFRC's clamp binding, g = {g / 1e3:.0f} kbit/s vs {FIG4_TCP} TCP flows marked at "
          f"{g_agg / 1e3:.0f} kbit/s")
    for r in res.get("clamp", []):
        print(f"{NAMES[r['protocol']]:>13} | mean {_k(r['throughput_mean'])} [{_k(r['lower_95'])}, {_k(r['upper_95'])}] "
              f"equation {_k(r['predicted_mean'])} p {r['loss_event_rate']:.4f} R {r['rtt'] * 1e3:.0f}ms")


def _print_fig7(res: dict) -> None:
    print("\nFig. 7: CBQ, 300 kbit/s pipe (borrow mode) vs UDP (300 kbit/s; 1000 kbit/s in [60, 120] s)")
    for r in res["fig7"]:
        print(f"{NAMES[r['protocol']]:>13} | in [60, 120] s {_k(r['congestion_throughput'][0])}bit/s, whole run "
              f"{_k(r['throughput'])}bit/s, jitter {r['jitter'][0] * 1e3:.2f} ms "
              f"(during the congestion {r['jitter_congestion'][0] * 1e3:.2f} ms)")


def _print_rto(res: dict) -> None:
    """Fig. 4 under the default RTO rule and under ns-2's, side by side (the sensitivity run), with the TCP
    aggregate's timeouts, fast recoveries and drops per run in the measurement window."""
    if not res.get("rto_ns2"):
        return
    main = {r["protocol"]: r for r in res["fig4"]}
    other = res["rto_ns2"][0]["rto_floor"]
    print(f"\nSensitivity: the TCP RTO rule, Fig. 4 again with {RTO_NAMES[other]} (the same seeds) against the "
          f"default, {RTO_NAMES[RTO_FLOOR]}; the TCP aggregate's RTOs, fast recoveries (FRs) and drops per run in "
          f"the measurement window")
    print(f"{'flow':>13} | {'rule':>6} | {'mean':>8} {'upper95':>8} | {'RTOs':>6} {'FRs':>6} {'drops':>6} "
          f"{'RTOs/drop':>9}")
    for r in res["rto_ns2"]:
        for x in (main[r["protocol"]], r):
            drops = x.get("tcp_drops")
            per = f"{x['tcp_timeouts'] / drops:9.2f}" if drops else f"{'-':>9}"
            print(f"{NAMES[x['protocol']]:>13} | {x.get('rto_floor', RTO_FLOOR):>6} | {_k(x['throughput_mean'])} "
                  f"{_k(x['upper_95'])} | {x['tcp_timeouts']:6.0f} {x['tcp_fast_recoveries']:6.0f} "
                  f"{drops or 0:6.0f} {per}")
