"""Validation figures (matplotlib, written as PNG and SVG).

* :func:`delay_ccdf` -- a class's delay CCDF from a trace (empirical, with
  batch-means intervals at the model's points) against the model-checked CCDF
  points, the closed-form bounds (vertical lines) and the scenario's SLO limits.
  The y-axis stops at what the data resolve: about ``1/n`` for an empirical curve
  of ``n`` delays, and the model's absolute precision for model points (smaller
  model probabilities are not drawn: they are below the solver's error).
* :func:`drop_by_colour` -- drop probability per class and drop precedence: the
  trace's estimate with its interval beside each model's value, coloured by drop
  precedence (AFx1 green, AFx2 yellow, AFx3 red). It is one operating point, not
  a load sweep: a trace at one load cannot give one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["delay_ccdf", "drop_by_colour", "save", "PRECEDENCE_COLOURS"]

#: Drop precedence (0 = lowest, AFx1) -> plot colour, matching the names green, yellow, red.
PRECEDENCE_COLOURS = {0: "#2ca02c", 1: "#e6b800", 2: "#d62728"}
_PRECEDENCE_NAMES = {0: "green", 1: "yellow", 2: "red"}
_NEUTRAL = "#1f77b4"


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
               bounds: dict[str, float] | None = None, slos: list[tuple[str, float | None, float | None]] = (),
               model_floor: float = 1e-10, title: str = "", model_kind: str = "") -> list[str]:
    """Empirical CCDF of ``delays`` (s) with model points (d, P), bound lines and SLO limits; returns the paths.

    ``trace_points`` are (d, value, low, high) estimates with intervals, drawn as error bars. ``slos`` are
    (label, delay limit in s or None, probability or None): a delay limit alone is a vertical line (a mean or
    maximum), a delay with a probability a point the CCDF must pass at or below (a quantile ``pq <= d`` is the
    point (d, 1-q); ``ccdf@d <= P`` the point (d, P)). Model probabilities below ``model_floor`` (the model's
    absolute precision) are not drawn. ``model_kind`` is the kind of the model's points (``numerical``, ``upper
    bound``), named in the legend; ``bounds`` are closed-form upper bounds on the delay, named so.
    """
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    d = np.sort(np.asarray(delays, dtype=float))
    n = len(d)
    floor = 1.0
    if n:
        y = 1.0 - np.arange(1, n + 1) / n
        keep = y > 0  # the last delay has CCDF 0: the empirical curve resolves down to 1/n
        ax.step(d[keep] * 1e3, y[keep], where="post", color=_NEUTRAL, lw=1.2,
                label=f"{trace_label} ({n:,} packets; resolves P >= 1/n = {1.0 / n:.1g})")
        floor = min(floor, 1.0 / n)
    for dd, v, lo, hi in trace_points:
        if v > 0:
            ax.errorbar([dd * 1e3], [v], yerr=[[v - max(lo, v * 1e-3)], [hi - v]], fmt="none", ecolor=_NEUTRAL,
                        capsize=3)
    mp = sorted((x, p) for x, p in model_points if p >= model_floor)
    if mp:
        bound = "bound" in model_kind
        ax.plot([x * 1e3 for x, _ in mp], [p for _, p in mp], "v--" if bound else "o-", color="C1", ms=4, lw=1,
                label=f"model-checked{': ' + model_kind if model_kind else ''} (P >= {model_floor:.0e} drawn)")
        floor = min(floor, min(p for _, p in mp))
    for i, (name, v) in enumerate((bounds or {}).items()):
        ax.axvline(v * 1e3, color=f"C{4 + i}", ls="--", lw=1,
                   label=f"closed-form upper bound: {name} = {v * 1e3:.4g} ms")
    for label, dl, prob in slos:
        if dl is not None and prob is not None:
            ax.plot([dl * 1e3], [prob], marker="v", ms=9, color="k", ls="none", label=f"SLO {label}")
            ax.hlines(prob, 0, dl * 1e3, colors="k", linestyles=":", lw=0.8)
            floor = min(floor, prob)
        elif dl is not None:
            ax.axvline(dl * 1e3, color="k", ls=":", lw=1.2, label=f"SLO {label}")
    ax.set_yscale("log")
    ax.set_ylim(bottom=0.5 * floor, top=1.5)
    ax.set_xlim(left=0)
    ax.set_xlabel(f"{cls} delay d (ms)")
    ax.set_ylabel(f"P({cls} delay > d)")
    ax.set_title(title or f"{cls} delay CCDF")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save(fig, out_dir, f"{cls}_delay_ccdf")


def drop_by_colour(observed: list[tuple[str, int | None, float, float, float]],
                   reference: list[tuple[str, int | None, str, float]], out_dir, *, trace_label: str = "trace",
                   title: str = "", kinds: dict[str, str] | None = None) -> list[str]:
    """Drop probability per class and drop precedence at the trace's operating point.

    ``observed`` holds (class, precedence or None for the whole class, value, low, high) from the trace;
    ``reference`` (class, precedence or None, method, value) from the models. Each (class, precedence) is one
    position on the x-axis, named like the DSCP (AF11, AF12, AF13; 'EF' or 'AF1 (all)' for a whole class) and
    coloured by its drop precedence; the legend names the methods (marker shapes), one entry each, with the kind
    of their numbers (``kinds``: method -> 'approximation', 'numerical', ...; the trace's is an interval).
    """
    plt = _plt()
    keys: list[tuple[str, int | None]] = []
    for c, col, *_ in list(observed) + list(reference):
        if (c, col) not in keys:
            keys.append((c, col))
    keys.sort(key=lambda k: (k[0], -1 if k[1] is None else k[1]))
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(keys) + 2.5), 4.5))

    def name(c, col):
        if col is None:
            return c if c in ("EF", "BE") else f"{c} (all)"
        return f"{c}{col + 1}" if c.startswith("AF") else f"{c} {_PRECEDENCE_NAMES.get(col, col)}"

    def colour(col):
        return PRECEDENCE_COLOURS.get(col, _NEUTRAL) if col is not None else _NEUTRAL

    positive = [v for *_, v in reference if v > 0] + [v for _, _, v, _, _ in observed if v > 0]
    floor = 0.3 * min(positive) if positive else 1e-6
    seen: set[str] = set()
    markers = {"model-checked": "*", "closed-form": "D", "simulated": "s"}
    for i, (c, col) in enumerate(keys):
        for oc, ocol, v, lo, hi in observed:
            if (oc, ocol) != (c, col):
                continue
            y = max(v, floor)
            seen.add(trace_label)
            ax.errorbar([i - 0.15], [y], yerr=[[y - max(lo, floor)], [max(hi, y) - y]], fmt="o", color=colour(col),
                        ecolor=colour(col), capsize=4, mec="k")
        for rc, rcol, method, v in reference:
            if (rc, rcol) != (c, col):
                continue
            seen.add(method)
            ax.plot([i + 0.15], [max(v, floor)], marker=markers.get(method, "^"), ms=11 if method == "model-checked"
                    else 7, ls="none", color=colour(col), mec="k")
    ax.set_xticks(range(len(keys)), [name(c, col) for c, col in keys])
    for tick, (_, col) in zip(ax.get_xticklabels(), keys):
        tick.set_color("k" if col is None else PRECEDENCE_COLOURS.get(col, "k"))
    ax.set_xlim(-0.6, len(keys) - 0.4)
    ax.set_yscale("log")
    ax.set_ylim(bottom=floor)
    ax.set_ylabel("drop probability")
    ax.set_title(title or "drop probability per drop precedence (one operating point)")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    from matplotlib.lines import Line2D

    # one legend entry per method, in a neutral colour: the colour of a point is its drop precedence
    handles = [Line2D([], [], marker="o" if m == trace_label else markers.get(m, "^"), ls="none", color="0.6",
                      mec="k", ms=7, label=(f"{m} (with its interval)" if m == trace_label else
                                            f"{m}: {(kinds or {}).get(m)}" if (kinds or {}).get(m) else m))
               for m in [trace_label] + sorted(seen - {trace_label}) if m in seen]
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              title="marker = method\ncolour = drop precedence", title_fontsize=7)
    return save(fig, out_dir, "drop_by_colour")
