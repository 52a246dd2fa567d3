"""The figures of ``reproduce tsq --out``: the TSQ paper's Figures 8-16 redrawn from the simulated experiments
(:mod:`qosbound.reproduce.tsq_experiments`), PNG and SVG."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qosbound.reproduce.tsq_experiments import standard_error
from qosbound.validation.plots import save

__all__ = ["plots", "CDF_MIN_PACKETS"]


#: A delay CDF drawn from fewer packets than this is flagged as resting on few packets.
CDF_MIN_PACKETS = 200


def _fig(title: str, xlabel: str, ylabel: str):
    import matplotlib  # matplotlib: a costly import, needed only when figures are drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return fig, ax


def _cdf_figure(p, name: str, samples: dict, scale: float, xlabel: str, title: str, few: int = 0) -> list[str]:
    fig, ax = _fig(title, xlabel, "CDF")
    for hint in [h for h in (1, 6, 16) if h in samples]:
        x = np.sort(np.asarray(samples[hint], float))
        if x.size == 0:
            continue
        mark = ", few packets" if few and x.size < few else ""
        ax.step(x * scale, np.arange(1, x.size + 1) / x.size, where="post",
                label=f"delay hint {hint} (n = {x.size}{mark})")
    ax.set_ylim(0, 1)
    ax.legend()
    return save(fig, p, name)


def _quality_figure(p, name: str, sweep: dict, title: str) -> list[str]:
    rows = [r for r in sweep["rows"] if r["hint"] != "PI alone"]
    h = [r["hint"] for r in rows]
    fig, ax = _fig(title, "delay hint", "quality")
    ax.plot(h, [float(np.mean(r["delay_quality_reps"])) for r in rows], "o-", label="delay quality")
    ax.plot(h, [float(np.mean(r["rate_quality_reps"])) for r in rows], "s-", label="throughput quality")
    ax.errorbar(h, [r["quality_reps_mean"] for r in rows], yerr=[1.96 * r["quality_reps_se"] for r in rows],
                fmt="k^-", capsize=2, label="quality = min (95 % CI)")
    ax.set_xticks(range(1, 17))
    ax.set_ylim(0, 1.05)
    ax.legend()
    return save(fig, p, name)


def _normalised_figure(p, name: str, rows: list[dict], title: str, audio_label: str) -> list[str]:
    fig, ax = _fig(title, "audio flows among the 100 (%)", "normalised quality (TSQ / PI alone)")
    x = [r["audio_flows"] for r in rows]
    for key, label, fmt in (("audio_quality", audio_label, "o-"), ("file_quality", "file transfer", "s-")):
        ax.plot(x, [r[key + "_normalised"] for r in rows], fmt, label=label)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xticks(x)
    ax.legend()
    return save(fig, p, name)


def plots(out_dir: str, sweep: dict, video: dict | None = None, mixed: list | None = None,
           udp1: list | None = None, udp2: list | None = None) -> list[str]:
    p = Path(out_dir)
    p.mkdir(parents=True, exist_ok=True)
    files = _quality_figure(p, "tsq_quality_vs_hint", sweep,
                            "Audio flow quality versus delay hint (TSQ paper, Figure 10)")
    if sweep["delays"]:
        files += _cdf_figure(p, "tsq_delay_cdf", sweep["delays"], 1000, "queueing delay (ms)",
                             "Audio queueing delay (TSQ paper, Figure 8)", CDF_MIN_PACKETS)
        files += _cdf_figure(p, "tsq_audio_throughput_cdf", sweep["throughput_per_rtt"], 1e-3,
                             "throughput per 300-ms round trip (kbit/s)", "Audio throughput (TSQ paper, Figure 9)")
    if video:
        files += _cdf_figure(p, "tsq_video_delay_cdf", video["delays"], 1000, "queueing delay (ms)",
                             "Video queueing delay (TSQ paper, Figure 11)", CDF_MIN_PACKETS)
        files += _cdf_figure(p, "tsq_video_throughput_cdf", video["throughput_per_rtt"], 1e-3,
                             "throughput per 300-ms round trip (kbit/s)", "Video throughput (TSQ paper, Figure 12)")
        files += _quality_figure(p, "tsq_video_quality_vs_hint", video,
                                 "Video flow quality versus delay hint (TSQ paper, Figure 13)")
    if mixed:
        files += _normalised_figure(p, "tsq_mixed_normalised_quality", mixed,
                                    "Normalised quality, TCP-friendly audio mixes (TSQ paper, Figure 14)", "audio")
    if udp1:
        rows = [r for r in udp1 if r["hint"] != "PI alone"]
        fig, ax = _fig("File transfers beside a 600 kbit/s UDP flow (TSQ paper, Figure 15)", "UDP flow's delay hint",
                       "normalised file-transfer throughput")
        ax.errorbar([r["hint"] for r in rows], [r["normalised"] for r in rows],
                    yerr=[1.96 * standard_error(r["normalised_reps"]) for r in rows], fmt="o-", capsize=2,
                    label="TSQ / PI alone (95 % CI)")
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
        ax.set_xticks(range(1, 17))
        ax.legend()
        files += save(fig, p, "tsq_udp_file_throughput_vs_hint")
    if udp2:
        files += _normalised_figure(p, "tsq_udp_mix_normalised_quality", udp2,
                                    "Normalised quality, unresponsive UDP audio mixes (TSQ paper, Figure 16)",
                                    "UDP audio")
    return files
