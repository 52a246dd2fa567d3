"""``qosbound reproduce qstp2008``: seed 003's Fig. 4 / Fig. 5 claim in the packet simulator.

Claim (Jourjon, Lochin & Sénac, section 5.2-5.3): on the DiffServ/AF testbed (two-colour
token-bucket markers with 10^4-byte buckets, RIO (10, 20, 0.1, 20, 40, 0.02), a
1000 kbit/s bottleneck, RTT 30 ms), a gTFRC flow with target g holds g against an
aggregate of 1..20 TCP flows, while a plain TFRC flow does not. Fig. 5 uses
g = 400 kbit/s for the flow and the aggregate; Fig. 4 uses g = 500 kbit/s against
an aggregate marked at 300 kbit/s.

For each target, protocol and aggregate size the simulator
(:mod:`qosbound.validation.qstp_sim`) runs independent replications and reports the
mean and standard deviation of the flow's throughput, the share of 1-second windows
below g, and the rate the TFRC equation predicts from the simulated loss event rate
and RTT (gTFRC: the maximum of that and g) beside the measured one.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

__all__ = ["run", "sweep", "CASES"]

#: (target g, aggregate's target), bit/s: Fig. 5 and Fig. 4.
CASES = ((400e3, 400e3), (500e3, 300e3))


def _settings(quick: bool) -> dict:
    if quick:
        return {"n_values": (1, 5, 10, 20), "replications": 3, "duration": 40.0, "warmup": 10.0}
    return {"n_values": tuple(range(1, 21)), "replications": 10, "duration": 200.0, "warmup": 50.0}


def sweep(quick: bool = True, seed: int = 2008, progress=None, cases=CASES) -> list[dict]:
    """Rows of (g, protocol, n) with mean/std throughput, prediction and loss figures (bit/s, SI)."""
    from qosbound.validation.qstp_sim import QstpConfig, replicate

    st = _settings(quick)
    rows = []
    k = 0
    for g, g_agg in cases:
        for proto in ("tfrc", "gtfrc"):
            for n in st["n_values"]:
                k += 1
                cfg = QstpConfig(protocol=proto, target=g, aggregate_target=g_agg, n_tcp=n,
                                 duration=st["duration"], warmup=st["warmup"])
                runs = replicate(cfg, st["replications"], seed + 1000 * k)
                thr = np.array([r.throughput for r in runs])
                pred = np.array([r.predicted for r in runs])
                win = np.concatenate([r.windows for r in runs])
                rows.append({
                    "target": g, "aggregate_target": g_agg, "protocol": proto, "n_tcp": n,
                    "replications": len(runs), "duration": cfg.duration, "warmup": cfg.warmup,
                    "throughput_mean": float(thr.mean()), "throughput_std": float(thr.std(ddof=1)),
                    "throughput_min": float(thr.min()), "throughput_max": float(thr.max()),
                    "aggregate_mean": float(np.mean([r.aggregate for r in runs])),
                    "loss_event_rate": float(np.mean([r.loss_event_rate for r in runs])),
                    "loss_rate": float(np.mean([r.loss_rate for r in runs])),
                    "rtt": float(np.mean([r.rtt for r in runs])),
                    "predicted_mean": float(np.nanmean(pred)) if np.any(np.isfinite(pred)) else None,
                    "windows_below_target": float(np.mean(win < g)) if win.size else None,
                    "in_fraction": float(np.mean([r.in_fraction for r in runs])),
                })
                if progress is not None:
                    progress()
    return rows


def _claims(rows: list[dict]) -> list[dict]:
    """Judge 'gTFRC holds g' and 'TFRC does not' per target, on the replication means (one-sided 95 %)."""
    from scipy import stats

    out = []
    for g in sorted({r["target"] for r in rows}):
        for proto in ("gtfrc", "tfrc"):
            sel = [r for r in rows if r["target"] == g and r["protocol"] == proto]
            below = []
            for r in sel:
                se = r["throughput_std"] / math.sqrt(r["replications"])
                t = stats.t.ppf(0.95, r["replications"] - 1)
                # "below" when the mean's one-sided 95 % upper bound is under g
                if r["throughput_mean"] + t * se < g:
                    below.append(r["n_tcp"])
            holds = not below
            expected = proto == "gtfrc"
            out.append({"target": g, "protocol": proto, "holds_target_at_every_n": holds,
                        "n_below_target": below, "paper": "holds" if expected else "does not hold",
                        "agrees_with_paper": holds == expected})
    return out


def _plot(rows: list[dict], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    files = []
    for g in sorted({r["target"] for r in rows}):
        fig, ax = plt.subplots(figsize=(6, 4))
        for proto, mk in (("tfrc", "o"), ("gtfrc", "s")):
            sel = [r for r in rows if r["target"] == g and r["protocol"] == proto]
            n = [r["n_tcp"] for r in sel]
            ax.errorbar(n, [r["throughput_mean"] / 1e3 for r in sel], yerr=[r["throughput_std"] / 1e3 for r in sel],
                        marker=mk, capsize=3, label=f"{proto.upper().replace('GTFRC', 'gTFRC')} measured")
            ax.plot(n, [(r["predicted_mean"] or np.nan) / 1e3 for r in sel], linestyle=":", marker=mk,
                    fillstyle="none", label=f"{'gTFRC' if proto == 'gtfrc' else 'TFRC'} equation")
        ax.axhline(g / 1e3, color="k", linewidth=0.8, label="target g")
        ax.set_xlabel("TCP flows in the competing aggregate")
        ax.set_ylabel("throughput (kbit/s)")
        ax.set_title(f"seed 003 Fig. 5 shape, g = {g / 1e3:.0f} kbit/s")
        ax.legend(fontsize=7)
        for ext in ("png", "svg"):
            f = out / f"qstp2008_g{int(g / 1e3)}k.{ext}"
            fig.savefig(f)
            files.append(str(f))
        plt.close(fig)
    return files


def run(args) -> int:
    from qosbound.progress import progress
    from qosbound.units import format_quantity

    quick = bool(getattr(args, "quick", False))
    st = _settings(quick)
    total = len(CASES) * 2 * len(st["n_values"])
    with progress(None if not getattr(args, "quiet", False) else False) as prog:
        rows = sweep(quick, progress=prog.task("qstp2008 sweep", total))
    claims = _claims(rows)
    files = _plot(rows, Path(args.out)) if getattr(args, "out", None) else []
    if getattr(args, "json", False):
        print(json.dumps({"paper": "qstp2008", "quick": quick, "settings": {k: list(v) if isinstance(v, tuple)
                                                                           else v for k, v in st.items()},
                          "rows": rows, "claims": claims, "figures": files}, indent=2, allow_nan=False))
        return 0
    print(f"seed 003 (QSTP) Fig. 4/5 shape: {st['replications']} replications of {st['duration']:.0f} s "
          f"(measured after {st['warmup']:.0f} s), RTT 30 ms, 1000 kbit/s, RIO (10, 20, 0.1, 20, 40, 0.02)")
    for g, g_agg in CASES:
        print(f"\ntarget g = {format_quantity(g, 'bit/s')}, aggregate marked at {format_quantity(g_agg, 'bit/s')}")
        print(f"{'TCP':>4} | {'TFRC mean':>10} {'std':>7} {'equation':>10} {'p':>7} {'R':>8} | "
              f"{'gTFRC mean':>10} {'std':>7} {'equation':>10} {'<g (1s)':>7}")
        for n in st["n_values"]:
            a = next(r for r in rows if r["target"] == g and r["protocol"] == "tfrc" and r["n_tcp"] == n)
            b = next(r for r in rows if r["target"] == g and r["protocol"] == "gtfrc" and r["n_tcp"] == n)

            def k(x):
                return f"{x / 1e3:8.1f} k" if x is not None else f"{'-':>10}"

            print(f"{n:>4} | {k(a['throughput_mean'])} {a['throughput_std'] / 1e3:6.1f}k {k(a['predicted_mean'])} "
                  f"{a['loss_event_rate']:7.4f} {a['rtt'] * 1e3:6.0f}ms | {k(b['throughput_mean'])} "
                  f"{b['throughput_std'] / 1e3:6.1f}k {k(b['predicted_mean'])} {b['windows_below_target']:7.2f}")
    print()
    for c in claims:
        name = "gTFRC" if c["protocol"] == "gtfrc" else "TFRC"
        got = "holds" if c["holds_target_at_every_n"] else f"falls below at n = {c['n_below_target']}"
        print(f"{name} at g = {format_quantity(c['target'], 'bit/s')}: {got} (paper: {c['paper']}) -> "
              f"{'agrees' if c['agrees_with_paper'] else 'DIFFERS from the paper'}")
    for f in files:
        print(f"wrote {f}")
    return 0
