"""The figures of ``qosbound reproduce qstp2008`` (``--out``): Figs. 4-7 of Jourjon, Lochin & Sénac, "Design,
Implementation and Evaluation of a QoS-aware Transport Protocol" (2008), drawn from the results of
:mod:`qosbound.reproduce.qstp2008_experiments`, each as PNG and SVG."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qosbound.reproduce.qstp2008_claims import kbit
from qosbound.reproduce.qstp2008_experiments import (EPISODE_NAMES, FIG4_TCP, FIG7_CONGESTION, NAMES, PROTOCOLS,
                                                     RECOVERY_AFTER, RECOVERY_EPISODES)
from qosbound.validation.plots import save

__all__ = ["plots"]


def plots(res: dict, out: Path) -> list[str]:
    """Write Fig. 4, Fig. 4(b)'s recovery (when run), Figs. 5, 6 and 7 into ``out``; the files written."""
    # matplotlib is costly to import and needed only with --out
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    files = _fig4(plt, res, out)
    if res.get("recovery"):
        files += _recovery(plt, res, out)
    files += _fig5(plt, res, out)
    files += _fig6(plt, res, out)
    files += _fig7(plt, res, out)
    return files


def _fig4(plt, res: dict, out: Path) -> list[str]:
    """Fig. 4: instantaneous throughput (1-s windows), one panel per protocol."""
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5), sharey=True)
    for ax, r in zip(axes, res["fig4"]):
        s = np.asarray(r["series"]) / 1e3
        ax.plot(np.arange(len(s)) + 0.5, s, linewidth=0.8, label=f"{NAMES[r['protocol']]} flow")
        ax.axhline(r["target"] / 1e3, color="k", linestyle="--", linewidth=0.8, label="target rate")
        ax.set_xlabel("time (s)")
        ax.set_title(f"({'abc'[PROTOCOLS.index(r['protocol'])]}) {NAMES[r['protocol']]} vs {FIG4_TCP} TCP")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("throughput (kbit/s)")
    return save(fig, out, "qstp2008_fig4")


def _recovery(plt, res: dict, out: Path) -> list[str]:
    """Fig. 4(b)'s recovery: the mean 1-s throughput over the replications with its 95 % band, per episode."""
    kinds = [kd for kd, _ in RECOVERY_EPISODES if any(r["episode_kind"] == kd for r in res["recovery"])]
    fig, axes = plt.subplots(len(kinds), 2, figsize=(11, 3.3 * len(kinds)), sharey=True, squeeze=False)
    for r in res["recovery"]:
        ax = axes[kinds.index(r["episode_kind"]), 0 if r["protocol"] == "tfrc" else 1]
        m = np.asarray(r["series_mean"]) / 1e3
        t = np.arange(len(m)) + 0.5
        ax.plot(t, m, linewidth=0.9, label=f"{NAMES[r['protocol']]} flow, mean of {r['replications']} runs")
        ax.fill_between(t, np.asarray(r["series_low"]) / 1e3, np.asarray(r["series_high"]) / 1e3, alpha=0.3,
                        label="95 % CI")
        ax.axhline(r["target"] / 1e3, color="k", linestyle="--", linewidth=0.8, label="target rate")
        ax.set_ylim(bottom=0)
        ax.axvspan(*r["episode"], color="0.85")
        ax.axvline(RECOVERY_AFTER[1], color="0.5", linestyle=":", linewidth=0.8)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("throughput (kbit/s)")
        ax.set_title(f"{NAMES[r['protocol']]}: " + EPISODE_NAMES[r["episode_kind"]].format(
            rate=kbit(r["udp_rate"])) + f" in [{r['episode'][0]:g}, {r['episode'][1]:g}] s", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return save(fig, out, "qstp2008_fig4b_recovery")


def _fig5(plt, res: dict, out: Path) -> list[str]:
    """Fig. 5: mean throughput against the aggregate size, min/max bars, one panel per protocol."""
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
    return save(fig, out, "qstp2008_fig5")


def _fig6(plt, res: dict, out: Path) -> list[str]:
    """Fig. 6: the throughput's standard deviation over replications against the aggregate size."""
    rows = res["fig5"]
    fig, ax = plt.subplots(figsize=(6, 4))
    for proto, mk in zip(PROTOCOLS, "o^s"):
        sel = [r for r in rows if r["protocol"] == proto]
        ax.plot([r["n_tcp"] for r in sel], [r["throughput_std"] / 1e3 for r in sel], marker=mk, label=NAMES[proto])
    ax.set_xlabel("micro-flows in the aggregate")
    ax.set_ylabel("throughput standard deviation (kbit/s)")
    ax.legend()
    return save(fig, out, "qstp2008_fig6")


def _fig7(plt, res: dict, out: Path) -> list[str]:
    """Fig. 7: throughput at the sender and the receiver, and the jitter, for TCP and QSTP under CBQ."""
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
    return save(fig, out, "qstp2008_fig7")
