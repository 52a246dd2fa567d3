"""Validation figures (matplotlib, written as PNG and SVG).

* :func:`delay_ccdf` -- a class's delay CCDF from a trace (empirical, with
  batch-means 95 % intervals at the model's points) against the model-checked
  CCDF points and the closed-form bounds (vertical lines).
* :func:`drop_vs_load` -- drop probability per colour against the class's
  offered load: the trace cut into time windows (each window one point: the
  class's offered load and its drop fraction per colour, averaged in load
  bins), with the reference values at the trace's mean load of the class.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["delay_ccdf", "drop_vs_load", "save"]

_COLOUR_NAMES = {0: "green", 1: "yellow", 2: "red"}


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def save(fig, out_dir: str | Path, stem: str) -> list[str]:
    """Write ``stem.png`` and ``stem.svg`` into ``out_dir``; return the two paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        p = out / f"{stem}.{ext}"
        fig.savefig(p, dpi=120 if ext == "png" else None, bbox_inches="tight")
        paths.append(str(p))
    _plt().close(fig)
    return paths


def delay_ccdf(delays: np.ndarray, out_dir, *, cls: str = "EF", trace_label: str = "trace",
               model_points: list[tuple[float, float]] = (), trace_points: list[tuple[float, float, float, float]] = (),
               bounds: dict[str, float] | None = None, title: str = "") -> list[str]:
    """Empirical CCDF of ``delays`` (s) with model points (d, P) and bound lines; returns the file paths.

    ``trace_points`` are (d, value, low, high) estimates with intervals, drawn as error bars.
    """
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    d = np.sort(np.asarray(delays, dtype=float))
    n = len(d)
    if n:
        y = 1.0 - np.arange(1, n + 1) / n
        keep = y > 0
        ax.step(d[keep] * 1e3, y[keep], where="post", color="C0", lw=1.2, label=f"{trace_label} ({n:,} packets)")
    for dd, v, lo, hi in trace_points:
        if v > 0:
            ax.errorbar([dd * 1e3], [v], yerr=[[v - max(lo, v * 1e-3)], [hi - v]], fmt="none", ecolor="C0",
                        capsize=3)
    if model_points:
        mp = sorted((x, p) for x, p in model_points if p > 0)
        if mp:
            ax.plot([x * 1e3 for x, _ in mp], [p for _, p in mp], "o-", color="C1", ms=4, lw=1,
                    label="model-checked")
    for i, (name, v) in enumerate((bounds or {}).items()):
        ax.axvline(v * 1e3, color=f"C{2 + i}", ls="--", lw=1, label=f"closed form: {name} = {v * 1e3:.3g} ms")
    ax.set_yscale("log")
    ax.set_xlabel(f"{cls} delay d (ms)")
    ax.set_ylabel(f"P({cls} delay > d)")
    ax.set_title(title or f"{cls} delay CCDF")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, out_dir, f"{cls}_delay_ccdf")


def drop_vs_load(arrival: np.ndarray, size: np.ndarray, dropped: np.ndarray, colour: np.ndarray, cls: np.ndarray,
                 out_dir, *, capacity: float | None = None, windows: int = 200,
                 reference: list[tuple[str, int | None, str, float]] = (), trace_label: str = "trace",
                 title: str = "") -> list[str]:
    """Drop fraction per class and colour against the class's offered load, from time windows of one trace.

    ``capacity`` (bit/s) turns the offered bit rate into a load; ``reference``
    holds (class, colour or None for all colours, method, drop probability)
    from the models, drawn at the trace's mean load of the class in the colour
    of the matching trace curve.
    """
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    span = float(arrival.max() - arrival.min()) if len(arrival) else 0.0
    colour_of: dict[tuple[str, int | None], str] = {}
    mean_load: dict[str, float] = {}
    if span > 0:
        edges = np.linspace(arrival.min(), arrival.max() + 1e-12, windows + 1)
        w = np.clip(np.searchsorted(edges, arrival, side="right") - 1, 0, windows - 1)
        groups = sorted({(str(a), int(b)) for a, b in zip(cls.tolist(), colour.tolist())})
        for k, (c, col) in enumerate(groups):
            of_cls = cls == c
            offered = np.bincount(w[of_cls], weights=size[of_cls].astype(float) * 8.0, minlength=windows) \
                / (span / windows)
            x = offered / capacity if capacity else offered
            mean_load[c] = float(size[of_cls].sum()) * 8.0 / span / (capacity or 1.0)
            sel = of_cls & (colour == col)
            tot = np.bincount(w[sel], minlength=windows)
            drp = np.bincount(w[sel], weights=dropped[sel].astype(float), minlength=windows)
            ok = tot > 0
            if not ok.any() or (drp.sum() == 0 and c == "BE"):
                continue
            # average windows in load bins so the curve is readable
            bins = np.linspace(x[ok].min(), x[ok].max() + 1e-12, 12)
            b = np.clip(np.searchsorted(bins, x[ok], side="right") - 1, 0, len(bins) - 2)
            num = np.bincount(b, weights=drp[ok], minlength=len(bins) - 1)
            den = np.bincount(b, weights=tot[ok], minlength=len(bins) - 1)
            cx = np.bincount(b, weights=x[ok] * tot[ok], minlength=len(bins) - 1)
            m = den > 0
            label = c if col == 0 and c in ("EF", "BE") else f"{c} {_COLOUR_NAMES.get(col, col)}"
            colour_of[(c, col)] = f"C{k % 10}"
            colour_of.setdefault((c, None), f"C{k % 10}")
            ax.plot(cx[m] / den[m], num[m] / den[m], "o-", ms=3, lw=1, color=colour_of[(c, col)],
                    label=f"{trace_label}: {label}")
    markers = {"model-checked": "*", "closed-form": "D"}
    seen = set()
    for c, col, method, p in reference:
        if (c, col) not in colour_of or c not in mean_load:
            continue  # no such traffic in the trace
        lab = method if method not in seen else None
        seen.add(method)
        ax.plot([mean_load[c]], [p], marker=markers.get(method, "s"), ms=10 if method == "model-checked" else 6,
                ls="none", color=colour_of[(c, col)], markeredgecolor="k", label=lab)
    ax.set_xlabel("offered load of the class (fraction of the link rate)" if capacity else
                  "offered rate of the class (bit/s)")
    ax.set_ylabel("drop probability")
    ax.set_title(title or "drop probability per colour against load")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save(fig, out_dir, "drop_vs_load")
