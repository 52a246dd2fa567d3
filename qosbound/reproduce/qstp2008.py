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
* **Fig. 5** (section 5.3): g = 400 kbit/s for the flow and the aggregate, 1..20 TCP flows;
  the mean throughput over replications with min/max. Claims: gTFRC holds g at every aggregate
  size; TCP and TFRC miss it.
* **Fig. 6**: the standard deviation of those throughputs over replications. Claim: TCP's is the
  largest, TFRC's and gTFRC's small.
* **Fig. 7** (section 5.4): CBQ in borrow mode guaranteeing 300 kbit/s to the studied flow (TCP
  or QSTP with g = 300 kbit/s) against a UDP flow at 300 kbit/s, 1000 kbit/s during [60, 120] s;
  throughput at the sender and the receiver and the jitter. Claims: both flows keep their
  300 kbit/s during the congestion; QSTP's jitter is lower than TCP's.

Rules. "Reaches g": the one-sided 95 % upper confidence bound of the mean throughput (Student t
over replications) is not below g. "Misses g": that bound lies below (1 - :data:`MARGIN`) g = 0.95 g
(Fig. 4), at half of the aggregate sizes or more (Fig. 5) -- a shortfall beyond the noise of a
flow that settles at g, and a majority rule, so that one slow-start transient at one size does
not flip the verdict. Where qosbound finds otherwise than the paper (plain TFRC holding its target)
the row is a documented finding (:data:`TFRC_FINDING`). Exit 0 when every claim is met (a
documented finding counts as met while qosbound still shows it), 1 otherwise.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from qosbound.reproduce import claims as C

__all__ = ["run", "results", "sweep", "fig4", "fig7", "claims", "CASES", "TFRC_FINDING", "PACKET_SIZE",
           "PROTOCOLS", "settings", "MARGIN"]

#: Packet size, bytes: "the packet size is fixed to 1500 bytes" (section 5.1).
PACKET_SIZE = 1500.0

#: (target g, aggregate's target), bit/s: Fig. 5 and Fig. 4.
CASES = ((400e3, 400e3), (500e3, 300e3))

#: The studied flow's protocols, in the paper's order (a, b, c).
PROTOCOLS = ("tcp", "tfrc", "gtfrc")
NAMES = {"tcp": "TCP", "tfrc": "TFRC", "gtfrc": "gTFRC (QSTP)"}

#: Fig. 4's aggregate size.
FIG4_TCP = 15
#: Fig. 7: the guaranteed pipe (bit/s) and the UDP profile ((from t, rate bit/s), ...).
FIG7_PIPE = 300e3
FIG7_UDP = ((0.0, 300e3), (60.0, 1000e3), (120.0, 300e3))
FIG7_CONGESTION = (60.0, 120.0)

#: "Misses g" means a shortfall beyond this fraction of g (the flow's upper 95 % bound below (1 - MARGIN) g): more
#: than the measurement noise of a flow that settles at g, so that the verdict does not flip with the seed.
MARGIN = 0.05

#: Why plain TFRC holds its target here although the paper's Figs. 4(b) and 5(b) show it does not.
TFRC_FINDING = (
    "in qosbound's test bed plain TFRC holds its target, against real TCP (NewReno + SACK, delayed ACKs) as well. "
    "Evidence: its measured rate follows the TFRC equation at its own simulated loss event rate p and RTT R (the "
    "'equation' column), and the TCP flow in its place sees about the same p and R yet stays below g (3 runs of "
    "120 s at g = 500 kbit/s against 15 TCP flows: TCP 410 kbit/s at p = 0.0086, R = 255 ms; TFRC 503 kbit/s at "
    "p = 0.0097, R = 268 ms; TCP's rate follows Padhye et al.'s formula with b = 2). Most likely cause: RFC 5348's "
    "equation counts one packet per ACK (b = 1), so at a given p and R it allows up to sqrt(2) times the rate of a "
    "TCP with delayed ACKs (b = 2); and the paced TFRC flow keeps about 97 % of its packets IN while RIO drops "
    "nearly every OUT packet once the average queue passes 20 packets, so its loss events stay as rare as TCP's. "
    "The paper's TFRC/SACK is a Java user-space implementation that 'recovers slowly after a transient "
    "congestion'; which part of its test bed keeps its TFRC below g is not established")


def settings(quick: bool) -> dict:
    """Run lengths and replications: quick (CI) and full (the paper's 180-s runs, 10 measurements)."""
    if quick:
        return {"n_values": (1, 4, 8, 12, 16, 20), "replications": 4, "duration": 80.0, "warmup": 30.0,
                "fig7_replications": 2, "fig7_duration": 180.0}
    return {"n_values": (1, 2) + tuple(range(4, 21, 2)), "replications": 10, "duration": 180.0, "warmup": 30.0,
            "fig7_replications": 10, "fig7_duration": 180.0}


def _summary(runs, g) -> dict:
    from qosbound.validation.stats import t_quantile

    thr = np.array([r.throughput for r in runs])
    k = len(thr)
    sd = float(thr.std(ddof=1)) if k > 1 else 0.0
    upper = float(thr.mean() + t_quantile(0.95, k - 1) * sd / math.sqrt(k)) if k > 1 else float(thr.mean())
    pred = np.array([r.predicted for r in runs])
    win = np.concatenate([r.windows for r in runs])
    return {"replications": k, "throughput_mean": float(thr.mean()), "throughput_std": sd,
            "throughput_min": float(thr.min()), "throughput_max": float(thr.max()), "upper_95": upper,
            "per_replication": [float(x) for x in thr],
            "aggregate_mean": float(np.mean([r.aggregate for r in runs])),
            "loss_event_rate": float(np.mean([r.loss_event_rate for r in runs])),
            "loss_rate": float(np.mean([r.loss_rate for r in runs])),
            "rtt": float(np.mean([r.rtt for r in runs])),
            "predicted_mean": float(np.nanmean(pred)) if np.any(np.isfinite(pred)) else None,
            "windows_below_target": float(np.mean(win < g)) if win.size else None,
            "window_std": float(np.mean([np.std(r.windows) for r in runs])),
            "in_fraction": float(np.mean([r.in_fraction for r in runs])),
            "tcp_timeouts": float(np.mean([r.extra["tcp_timeouts"] for r in runs])),
            "tcp_fast_recoveries": float(np.mean([r.extra["tcp_fast_recoveries"] for r in runs]))}


def sweep(quick: bool = True, seed: int = 2008, progress=None) -> list[dict]:
    """Fig. 5 / 6: rows of (protocol, n) at g = 400 kbit/s with the throughput's mean, std, min/max (bit/s, SI)."""
    from qosbound.validation.qstp_sim import QstpConfig, replicate

    st = settings(quick)
    g, g_agg = CASES[0]
    rows = []
    for k, proto in enumerate(PROTOCOLS):
        for n in st["n_values"]:
            cfg = QstpConfig(protocol=proto, target=g, aggregate_target=g_agg, n_tcp=n, duration=st["duration"],
                             warmup=st["warmup"], size=PACKET_SIZE)
            runs = replicate(cfg, st["replications"], seed, stream=(5, k, n))
            rows.append({"target": g, "aggregate_target": g_agg, "protocol": proto, "n_tcp": n, "size": cfg.size,
                         "duration": cfg.duration, "warmup": cfg.warmup, **_summary(runs, g)})
            if progress is not None:
                progress()
    return rows


def fig4(quick: bool = True, seed: int = 2008, progress=None) -> list[dict]:
    """Fig. 4: g = 500 kbit/s against 15 TCP flows marked at 300 kbit/s, per protocol: the replications' summary
    and the first replication's throughput per second (bit/s) over the whole run."""
    from qosbound.validation.qstp_sim import QstpConfig, replicate

    st = settings(quick)
    g, g_agg = CASES[1]
    rows = []
    for k, proto in enumerate(PROTOCOLS):
        cfg = QstpConfig(protocol=proto, target=g, aggregate_target=g_agg, n_tcp=FIG4_TCP, duration=st["duration"],
                         warmup=st["warmup"], size=PACKET_SIZE)
        runs = replicate(cfg, st["replications"], seed, stream=(4, k))
        rows.append({"target": g, "aggregate_target": g_agg, "protocol": proto, "n_tcp": FIG4_TCP,
                     "duration": cfg.duration, "warmup": cfg.warmup, **_summary(runs, g),
                     "series": [float(x) for x in runs[0].extra["received_per_second"]]})
        if progress is not None:
            progress()
    return rows


def fig7(quick: bool = True, seed: int = 2008, progress=None) -> list[dict]:
    """Fig. 7: CBQ (300 kbit/s pipe, borrow mode) against a UDP flow, TCP and QSTP (gTFRC, g = 300 kbit/s): the
    throughput during the congestion [60, 120] s, the jitter, and the first replication's series."""
    from qosbound.validation.qstp_sim import QstpConfig, jitter, replicate
    from qosbound.validation.stats import two_sided_t

    st = settings(quick)
    t0, t1 = FIG7_CONGESTION
    rows = []
    for k, proto in enumerate(("tcp", "gtfrc")):
        cfg = QstpConfig(protocol=proto, target=FIG7_PIPE, aggregate_target=FIG7_PIPE, n_tcp=0,
                         duration=st["fig7_duration"], warmup=10.0, size=PACKET_SIZE, scheduler="cbq",
                         cbq_share=FIG7_PIPE / 1000e3, udp=FIG7_UDP)
        runs = replicate(cfg, st["fig7_replications"], seed, stream=(7, k))
        during = np.array([np.mean(r.extra["received_per_second"][int(t0):int(t1)]) for r in runs])
        jit = np.array([r.extra["jitter"] for r in runs])
        jit_cong = np.array([jitter(r.extra["delays"], t0, t1) for r in runs])
        m = len(runs)

        def ci(x):
            h = two_sided_t(0.95, m - 1) * x.std(ddof=1) / math.sqrt(m) if m > 1 else 0.0
            return float(x.mean()), float(x.mean() - h), float(x.mean() + h)

        d = runs[0].extra["delays"]
        sel = (d[:, 0] >= 1.0)
        rows.append({"protocol": proto, "replications": m, "pipe": FIG7_PIPE,
                     "congestion_throughput": ci(during), "congestion_throughput_min": float(during.min()),
                     "jitter": ci(jit), "jitter_congestion": ci(jit_cong),
                     "throughput": float(np.mean([r.throughput for r in runs])),
                     "sent_series": [float(x) for x in runs[0].extra["sent_per_second"]],
                     "received_series": [float(x) for x in runs[0].extra["received_per_second"]],
                     "ipdv_series": _ipdv_per_second(d[sel], int(cfg.duration))})
        if progress is not None:
            progress()
    return rows


def _ipdv_per_second(d: np.ndarray, seconds: int) -> list:
    """Mean |delay difference| of consecutive packets per 1-s window (s; nan where fewer than two packets)."""
    out = []
    if len(d) < 2:
        return [math.nan] * seconds
    diffs = np.abs(np.diff(d[:, 1]))
    sec = d[1:, 0].astype(int)
    for s in range(seconds):
        v = diffs[sec == s]
        out.append(float(v.mean()) if v.size else math.nan)
    return out


#: The sensitivity run where gTFRC's clamp binds: Fig. 4's test bed with the studied flow's target raised to
#: 800 kbit/s and the aggregate's lowered to 150 kbit/s, so the TFRC equation at the flow's own loss and RTT gives
#: less than g (targets of 650 and 700 kbit/s against the aggregate's 300 did not: there the equation's rate
#: followed the target, the IN-marked share lowering the flow's loss).
CLAMP_CASE = (800e3, 150e3)


def clamp(quick: bool = True, seed: int = 2008, progress=None) -> list[dict]:
    """TFRC and gTFRC at :data:`CLAMP_CASE` against 15 TCP flows: the replications' summary per protocol (with
    ``lower_95``, the one-sided 95 % lower bound of the mean)."""
    from qosbound.validation.qstp_sim import QstpConfig, replicate

    st = settings(quick)
    g, g_agg = CLAMP_CASE
    rows = []
    for k, proto in enumerate(("tfrc", "gtfrc")):
        cfg = QstpConfig(protocol=proto, target=g, aggregate_target=g_agg, n_tcp=FIG4_TCP, duration=st["duration"],
                         warmup=st["warmup"], size=PACKET_SIZE)
        runs = replicate(cfg, st["replications"], seed, stream=(8, k))
        summ = _summary(runs, g)
        rows.append({"target": g, "aggregate_target": g_agg, "protocol": proto, "n_tcp": FIG4_TCP, **summ,
                     "lower_95": 2 * summ["throughput_mean"] - summ["upper_95"]})
        if progress is not None:
            progress()
    return rows


def results(quick: bool = True, seed: int = 2008, progress=None) -> dict:
    """Every figure's data: ``{"fig4": rows, "fig5": rows, "fig7": rows, "clamp": rows}``."""
    return {"fig4": fig4(quick, seed, progress), "fig5": sweep(quick, seed, progress),
            "fig7": fig7(quick, seed, progress), "clamp": clamp(quick, seed, progress)}


def _kbit(x):
    return C._fmt(x, "bit/s")


def claims(res: dict) -> list[C.Claim]:
    """The claim rows of Figs. 4-7 from :func:`results`."""
    out = []
    miss4 = f"misses g: the one-sided 95 % upper bound of the mean is below (1 - {MARGIN:g}) g"
    # ---- Fig. 4 ----
    for r in res["fig4"]:
        g = r["target"]
        iv = C.interval(0.0, r["upper_95"], "one-sided 95% CI")
        got = f"mean {_kbit(r['throughput_mean'])} (upper 95% bound {_kbit(r['upper_95'])}, {r['replications']} runs)"
        reaches = r["upper_95"] >= g
        misses = r["upper_95"] < (1 - MARGIN) * g
        nums = {"paper_value": g, "value": r["throughput_mean"], "unit": "bit/s", "interval": iv}
        claim = f"{NAMES[r['protocol']]} vs {FIG4_TCP} TCP flows {'reaches' if r['protocol'] == 'gtfrc' else 'misses'}" \
                f" g = {_kbit(g)}"
        src = "section 5.2, Fig. 4(" + "abc"[PROTOCOLS.index(r["protocol"])] + ")"
        if r["protocol"] == "gtfrc":
            out.append(C.judge(claim, src, f"reaches g = {_kbit(g)}", got, reaches,
                               "reaches g: the one-sided 95 % upper bound of the mean is >= g",
                               failure="gTFRC fell below its target", **nums))
        elif r["protocol"] == "tcp" or misses:
            out.append(C.judge(claim, src, f"below g = {_kbit(g)}", got, misses, miss4,
                               failure=f"{NAMES[r['protocol']]} reached its target", **nums))
        else:
            pred = r["predicted_mean"]
            got += f"; TFRC equation at its simulated p and R: {_kbit(pred) if pred else '-'}"
            out.append(C.judge(claim, src, f"below g = {_kbit(g)}", got, not misses, miss4,
                               finding=TFRC_FINDING, **nums))
    # ---- Fig. 5 ----
    rows = res["fig5"]
    g = rows[0]["target"]
    for proto in PROTOCOLS:
        sel = [r for r in rows if r["protocol"] == proto]
        below = [r["n_tcp"] for r in sel if r["upper_95"] < g]
        short = [r["n_tcp"] for r in sel if r["upper_95"] < (1 - MARGIN) * g]
        worst = min(sel, key=lambda r: r["throughput_mean"])
        mean_all = float(np.mean([r["throughput_mean"] for r in sel]))
        iv = C.interval(0.0, worst["upper_95"], "one-sided 95% CI")
        got = (f"below g at {len(below)} of {len(sel)} sizes (n = {below}), below {1 - MARGIN:g} g at {len(short)}; "
               f"mean over sizes {_kbit(mean_all)}; "
               f"lowest {_kbit(worst['throughput_mean'])} at n = {worst['n_tcp']}")
        nums = {"paper_value": g, "value": worst["throughput_mean"], "unit": "bit/s", "interval": iv}
        src = "section 5.3, Fig. 5(" + "abc"[PROTOCOLS.index(proto)] + ")"
        misses = 2 * len(short) >= len(sel)
        miss_rule = (f"misses g: the one-sided 95 % upper bound of the mean throughput lies below (1 - {MARGIN:g}) g "
                     "at half of the aggregate sizes or more")
        if proto == "gtfrc":
            out.append(C.judge(f"gTFRC (QSTP) holds g = {_kbit(g)} against 1..20 TCP flows", src,
                               f"holds g = {_kbit(g)}", got, not below,
                               "holds g: at no aggregate size does the one-sided 95 % upper bound of the mean lie "
                               "below g", failure="gTFRC fell below its target", **nums))
        elif proto == "tcp" or misses:
            out.append(C.judge(f"{NAMES[proto]} misses g = {_kbit(g)} against 1..20 TCP flows", src,
                               f"below g = {_kbit(g)}", got, misses, miss_rule,
                               failure=f"{NAMES[proto]} held its target at most sizes", **nums))
        else:
            pred = worst["predicted_mean"]
            got += f"; TFRC equation there: {_kbit(pred) if pred else '-'}"
            out.append(C.judge(f"TFRC misses g = {_kbit(g)} against 1..20 TCP flows", src, f"below g = {_kbit(g)}",
                               got, not misses, miss_rule, finding=TFRC_FINDING, **nums))
    # ---- the project's hypothesis behind the TFRC finding: TFRC follows its equation, which exceeds g ----
    tf = [r for r in res["fig4"] + rows if r["protocol"] == "tfrc" and r.get("predicted_mean")]
    if tf:
        ratio = sum(r["throughput_mean"] for r in tf) / sum(r["predicted_mean"] for r in tf)
        above = [r for r in tf if r["predicted_mean"] > r["target"]]
        out.append(C.judge(
            "TFRC follows the TFRC equation at its own loss and RTT, which exceeds g", "sections 5.2-5.3",
            "(qosbound's hypothesis)",
            f"measured / equation {ratio:.3f} over {len(tf)} rows; the equation above g in {len(above)} of {len(tf)}",
            0.85 <= ratio <= 1.15 and 2 * len(above) >= len(tf),
            "measured / equation (summed over TFRC's rows of Figs. 4-5) within [0.85, 1.15], and the equation above "
            "g in half of the rows or more", failure="TFRC does not follow its equation, or the equation gives "
            "less than g", value=ratio, unit=""))
    # ---- the sensitivity run where gTFRC's clamp binds (the paper's contrast, exercised) ----
    if res.get("clamp"):
        cl = {r["protocol"]: r for r in res["clamp"]}
        t, q = cl["tfrc"], cl["gtfrc"]
        g = t["target"]
        binds = t["predicted_mean"] is not None and t["predicted_mean"] < g
        ok = binds and t["upper_95"] < (1 - MARGIN) * g and q["lower_95"] >= (1 - MARGIN) * g
        out.append(C.judge(
            f"clamp binds (g = {_kbit(g)}, aggregate {_kbit(t['aggregate_target'])}): gTFRC holds g, TFRC does not",
            "section 5.2, Fig. 4(b, c)", "(qosbound's sensitivity run)",
            f"TFRC {_kbit(t['throughput_mean'])} (upper 95% bound {_kbit(t['upper_95'])}; its equation "
            f"{_kbit(t['predicted_mean']) if t['predicted_mean'] else '-'}), gTFRC {_kbit(q['throughput_mean'])} "
            f"(lower 95% bound {_kbit(q['lower_95'])}), {t['replications']} runs",
            ok, "the clamp binds (TFRC's equation rate at its own p and R below g); TFRC's one-sided 95 % upper "
                "bound below 0.95 g; gTFRC's one-sided 95 % lower bound at or above 0.95 g",
            failure=("the clamp does not bind here" if not binds else "the contrast is not shown"),
            paper_value=g, value=q["throughput_mean"], unit="bit/s"))
    # ---- Fig. 6 ----
    sd = {p: float(np.sqrt(np.mean([r["throughput_std"] ** 2 for r in rows if r["protocol"] == p])))
          for p in PROTOCOLS}
    ok = sd["tcp"] > sd["tfrc"] and sd["tcp"] > sd["gtfrc"]
    out.append(C.judge("TCP's throughput standard deviation is the largest; TFRC's and gTFRC's are small",
                       "section 5.3, Fig. 6", "TCP largest",
                       "; ".join(f"{NAMES[p]} {_kbit(sd[p])}" for p in PROTOCOLS), ok,
                       "TCP's standard deviation over replications (root mean square over the aggregate sizes) "
                       "exceeds TFRC's and gTFRC's", failure="TCP's spread is not the largest",
                       paper_value=None, value=sd["tcp"], unit="bit/s"))
    # ---- Fig. 7 ----
    f7 = {r["protocol"]: r for r in res["fig7"]}
    for proto in ("tcp", "gtfrc"):
        r = f7[proto]
        m, lo, hi = r["congestion_throughput"]
        out.append(C.judge(f"CBQ: {NAMES[proto]} keeps its {_kbit(r['pipe'])} pipe while UDP sends 1000 kbit/s",
                           "section 5.4, Fig. 7(" + ("a" if proto == "tcp" else "b") + ")",
                           f">= {_kbit(r['pipe'])}",
                           C.with_interval(m, "bit/s", C.interval(lo, hi, "95% CI")) +
                           f"; lowest run {_kbit(r['congestion_throughput_min'])}",
                           r["congestion_throughput_min"] >= 0.97 * r["pipe"],
                           "keeps the pipe: every replication's mean receive rate over [60, 120] s is at least 97 % "
                           "of it (3 %: one 1500-byte packet in 40 at 300 kbit/s)",
                           failure="the flow lost its guarantee", paper_value=r["pipe"], value=m, unit="bit/s",
                           interval=C.interval(lo, hi, "95% CI")))
    jt, jq = f7["tcp"]["jitter"], f7["gtfrc"]["jitter"]
    out.append(C.judge("CBQ: QSTP's jitter is lower than TCP's", "section 5.4, Fig. 7(c, d)", "QSTP < TCP",
                       f"TCP {jt[0] * 1e3:.2f} ms [{jt[1] * 1e3:.2f}, {jt[2] * 1e3:.2f}]; QSTP {jq[0] * 1e3:.2f} ms "
                       f"[{jq[1] * 1e3:.2f}, {jq[2] * 1e3:.2f}] (95% CI)", jq[2] < jt[1],
                       "lower: the 95 % intervals of the mean jitter (mean |difference of consecutive one-way "
                       "delays|, RFC 3393) do not overlap, QSTP's below", failure="QSTP's jitter is not lower",
                       value=jq[0], unit="s", interval=C.interval(jq[1], jq[2], "95% CI")))
    return out


def _plot(res: dict, out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from qosbound.validation.plots import save

    out.mkdir(parents=True, exist_ok=True)
    files = []
    # Fig. 4: instantaneous throughput (1-s windows), one panel per protocol
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5), sharey=True)
    for ax, r in zip(axes, res["fig4"]):
        s = np.asarray(r["series"]) / 1e3
        ax.plot(np.arange(len(s)) + 0.5, s, linewidth=0.8, label=f"{NAMES[r['protocol']]} flow")
        ax.axhline(r["target"] / 1e3, color="k", linestyle="--", linewidth=0.8, label="target rate")
        ax.set_xlabel("time (s)")
        ax.set_title(f"({'abc'[PROTOCOLS.index(r['protocol'])]}) {NAMES[r['protocol']]} vs {FIG4_TCP} TCP")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("throughput (kbit/s)")
    files += save(fig, out, "qstp2008_fig4")
    # Fig. 5: mean throughput vs aggregate size, min/max bars
    rows = res["fig5"]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5), sharey=True)
    for ax, proto in zip(axes, PROTOCOLS):
        sel = [r for r in rows if r["protocol"] == proto]
        n = np.array([r["n_tcp"] for r in sel])
        m = np.array([r["throughput_mean"] for r in sel]) / 1e3
        lo = m - np.array([r["throughput_min"] for r in sel]) / 1e3
        hi = np.array([r["throughput_max"] for r in sel]) / 1e3 - m
        ax.errorbar(n, m, yerr=[lo, hi], marker="o", capsize=3, label=f"{NAMES[proto]} flow (min/max)")
        ax.plot(n, np.array([r["aggregate_mean"] for r in sel]) / 1e3, marker="s", label="TCP aggregate")
        ax.axhline(sel[0]["target"] / 1e3, color="k", linestyle="--", linewidth=0.8, label="target rate")
        ax.set_xlabel("micro-flows in the aggregate")
        ax.set_title(f"({'abc'[PROTOCOLS.index(proto)]}) {NAMES[proto]}")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("average throughput (kbit/s)")
    files += save(fig, out, "qstp2008_fig5")
    # Fig. 6: standard deviation
    fig, ax = plt.subplots(figsize=(6, 4))
    for proto, mk in zip(PROTOCOLS, "o^s"):
        sel = [r for r in rows if r["protocol"] == proto]
        ax.plot([r["n_tcp"] for r in sel], [r["throughput_std"] / 1e3 for r in sel], marker=mk, label=NAMES[proto])
    ax.set_xlabel("micro-flows in the aggregate")
    ax.set_ylabel("throughput standard deviation (kbit/s)")
    ax.legend()
    files += save(fig, out, "qstp2008_fig6")
    # Fig. 7: throughput at sender and receiver, and jitter
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    for j, r in enumerate(res["fig7"]):
        ax = axes[0, j]
        s, rcv = np.asarray(r["sent_series"]) / 1e3, np.asarray(r["received_series"]) / 1e3
        t = np.arange(len(s)) + 0.5
        ax.plot(t, s, linewidth=0.8, label="sender")
        ax.plot(t, rcv, linewidth=0.8, label="receiver")
        ax.axhline(r["pipe"] / 1e3, color="k", linestyle="--", linewidth=0.8, label="guaranteed pipe")
        ax.axvspan(*FIG7_CONGESTION, color="0.9")
        ax.set_title(f"({'ab'[j]}) {NAMES[r['protocol']]} throughput")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("throughput (kbit/s)")
        ax.legend(fontsize=7)
        ax = axes[1, j]
        ax.plot(t, np.asarray(r["ipdv_series"]) * 1e3, linewidth=0.8)
        ax.axvspan(*FIG7_CONGESTION, color="0.9")
        ax.set_title(f"({'cd'[j]}) {NAMES[r['protocol']]} jitter")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("jitter (ms)")
    fig.tight_layout()
    files += save(fig, out, "qstp2008_fig7")
    return files


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
    from qosbound.progress import progress

    quick = bool(getattr(args, "quick", False))
    st = settings(quick)
    total = len(PROTOCOLS) * (1 + len(st["n_values"])) + 2 + 2
    with progress(None if not getattr(args, "quiet", False) else False) as prog:
        res = results(quick, progress=prog.task("qstp2008", total))
    checked = claims(res)
    files = _plot(res, Path(args.out)) if getattr(args, "out", None) else []
    if getattr(args, "json", False):
        print(json.dumps(C.report_document(C.evaluate("qstp2008", checked), quick=quick,
                                    settings={k: list(v) if isinstance(v, tuple) else v for k, v in st.items()},
                                    results=_json_safe(res), figures=files), indent=2, allow_nan=False))
        return C.evaluate("qstp2008", checked).exit_code()
    print(f"Jourjon, Lochin & Sénac 2008 (QSTP), Figs. 4-7: {st['replications']} replications of "
          f"{st['duration']:.0f} s (measured after {st['warmup']:.0f} s), RTT 30 ms, 1000 kbit/s, "
          f"{PACKET_SIZE:.0f}-byte packets, RIO (10, 20, 0.1, 20, 40, 0.02); TCP = NewReno + SACK, delayed ACKs")

    def k(x):
        return f"{x / 1e3:7.1f}k" if x is not None else f"{'-':>8}"

    print(f"\nFig. 4: g = 500 kbit/s vs {FIG4_TCP} TCP flows marked at 300 kbit/s")
    print(f"{'flow':>13} | {'mean':>8} {'std':>8} {'equation':>8} {'p':>7} {'R':>6} {'<g (1s)':>7} "
          f"{'TCP RTOs':>8} {'TCP FRs':>8}")
    for r in res["fig4"]:
        print(f"{NAMES[r['protocol']]:>13} | {k(r['throughput_mean'])} {k(r['throughput_std'])} "
              f"{k(r['predicted_mean'])} {r['loss_event_rate']:7.4f} {r['rtt'] * 1e3:4.0f}ms "
              f"{r['windows_below_target']:7.2f} {r['tcp_timeouts']:8.0f} {r['tcp_fast_recoveries']:8.0f}")
    print("\nFig. 5 / 6: g = 400 kbit/s (flow and aggregate) vs n TCP flows: mean and std over replications")
    print(f"{'n':>3} | " + " | ".join(f"{NAMES[p]:>17} {'equation':>8}" for p in PROTOCOLS))
    rows = res["fig5"]
    for n in sorted({r["n_tcp"] for r in rows}):
        cells = []
        for p in PROTOCOLS:
            r = next(x for x in rows if x["protocol"] == p and x["n_tcp"] == n)
            cells.append(f"{k(r['throughput_mean'])} ± {k(r['throughput_std'])} {k(r['predicted_mean'])}")
        print(f"{n:>3} | " + " | ".join(cells))
    g, g_agg = CLAMP_CASE
    print(f"\nSensitivity: gTFRC's clamp binding, g = {g / 1e3:.0f} kbit/s vs {FIG4_TCP} TCP flows marked at "
          f"{g_agg / 1e3:.0f} kbit/s")
    for r in res.get("clamp", []):
        print(f"{NAMES[r['protocol']]:>13} | mean {k(r['throughput_mean'])} [{k(r['lower_95'])}, {k(r['upper_95'])}] "
              f"equation {k(r['predicted_mean'])} p {r['loss_event_rate']:.4f} R {r['rtt'] * 1e3:.0f}ms")
    print("\nFig. 7: CBQ, 300 kbit/s pipe (borrow mode) vs UDP (300 kbit/s; 1000 kbit/s in [60, 120] s)")
    for r in res["fig7"]:
        print(f"{NAMES[r['protocol']]:>13} | in [60, 120] s {k(r['congestion_throughput'][0])}bit/s, whole run "
              f"{k(r['throughput'])}bit/s, jitter {r['jitter'][0] * 1e3:.2f} ms "
              f"(during the congestion {r['jitter_congestion'][0] * 1e3:.2f} ms)")
    print()
    C.print_report("Claims of Jourjon, Lochin & Sénac 2008 checked by qosbound", C.evaluate("qstp2008", checked))
    for f in files:
        print(f"wrote {f}")
    return C.evaluate("qstp2008", checked).exit_code()
