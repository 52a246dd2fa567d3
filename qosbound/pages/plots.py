"""The page's figures as inline SVG (matplotlib, no pyplot state): the delay CCDF of a class or flow with its
bounds and SLO limits, a sweep's metric against its parameter, an admission search's margins.

Every line is told apart by its shape as well as its colour, so a grey print reads the same: the kind sets
the line (a bound dashed, with a triangle pointing to where the truth lies; an approximation dotted; an
estimate solid, its interval a band or error bars), the method sets the marker of estimates and the colour
(Okabe & Ito's palette, which stays distinct for colour-blind readers). SLO limits are hatched regions a
curve must not enter. Probabilities of tails are drawn on a log axis.

The SVG text is made safe to inline several times in one HTML page: no XML prologue or metadata, no style
sheet of its own (the page's CSS carries the one rule it had), and every ``id`` (and every reference to one)
prefixed with the figure's own ``uid``.
"""

from __future__ import annotations

import io
import math
import re

from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from qosbound.pages.reading import Family
from qosbound.units import display_scale, format_quantity

__all__ = ["METHOD_STYLE", "ccdf_svg", "series_svg", "admit_svg", "inline_svg"]

#: Colour and marker of each method's estimates.
METHOD_STYLE = {"closed-form": ("#000000", "D"), "model-checked": ("#0072B2", "s"), "simulated": ("#D55E00", "o"),
                "ns-3": ("#009E73", "P"), "trace": ("#CC79A7", "X")}

#: Line style and marker of a kind (a bound's triangle points to where the truth lies).
_KIND_LINE = {"upper bound": ("--", "v"), "lower bound": ("--", "^"), "approximation": (":", None)}

_HATCHES = ("///", "\\\\\\", "xx", "..", "++", "oo")

_RC = {"svg.fonttype": "none", "svg.hashsalt": "qosbound", "font.family": "DejaVu Sans", "font.size": 9,
       "axes.titlesize": 9, "legend.fontsize": 8, "hatch.linewidth": 0.6, "axes.grid": True, "grid.alpha": 0.35,
       "grid.linewidth": 0.6}


def _style(method: str, kind: str) -> tuple[str, str, str]:
    """(colour, line style, marker) of a method's line of a kind."""
    colour, marker = METHOD_STYLE.get(method, ("#555555", "o"))
    line, kmarker = _KIND_LINE.get(kind, ("-", None))
    return colour, line, kmarker or marker


def inline_svg(fig: Figure, uid: str, label_id: str | None = None) -> str:
    """The figure as an ``<svg>`` element fit to inline in HTML (see the module docstring)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    text = re.sub(r"<style[^>]*>.*?</style>\s*", "", text, flags=re.S)
    text = re.sub(r"<!--.*?-->\s*", "", text, flags=re.S)
    ids = set(re.findall(r'\bid="([^"]+)"', text))
    text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{uid}-{m.group(1)}"', text)
    text = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{uid}-{m.group(1)})" if m.group(1) in ids else m.group(0),
                  text)
    text = re.sub(r'xlink:href="#([^"]+)"',
                  lambda m: f'xlink:href="#{uid}-{m.group(1)}"' if m.group(1) in ids else m.group(0), text)
    head = re.match(r"<svg[^>]*>", text).group(0)
    box = re.search(r'viewBox="([^"]+)"', head).group(1)
    label = f' aria-labelledby="{label_id}"' if label_id else ""
    return f'<svg class="plot" viewBox="{box}" role="img"{label}>' + text[len(head):].rstrip() + "\n"


def _figure(width: float = 7.4, height: float = 4.6) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def _finish(ax, fig) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower left", ncols=1, frameon=False)


def ccdf_svg(fam: Family, uid: str, label_id: str | None = None) -> str:
    """The CCDF ``P(delay > x)`` of one delay family on a log axis: each method's curve (an interval as a band),
    the points its results give (quantiles, CCDF values; an upper bound as the staircase they prove), upper
    bounds on the maximum (the CCDF is 0 beyond them) and every SLO that is a point of the CCDF, hatched where
    the curve must not go."""
    xs = [p.x for p in fam.points] + [b.x for b in fam.max_bounds] + [lim.x for lim in fam.limits]
    for c in fam.curves:
        xs += [x for x, v in zip(c["x"], c["value"]) if v > 0]
    ys = [p.y for p in fam.points if p.y > 0] + [lim.y for lim in fam.limits if lim.y > 0]
    for c in fam.curves:
        if c.get("kind") == "confidence interval" or not ys:
            ys += [v for v in c["value"] if v > 0][-1:]
    floor = 10.0 ** (math.floor(math.log10(min(ys))) - 1) if ys else 1e-6
    floor = min(max(floor, 1e-12), 1e-2)
    top = 2.0
    div, unit = display_scale(xs, "s")
    x_hi = max(xs) * 1.1 / div if xs else 1.0
    with rc_context(_RC):
        fig = _figure()
        ax = fig.add_subplot()
        ax.set_yscale("log")
        for c in fam.curves:
            colour, line, marker = _style(c["method"], c.get("kind", ""))
            x = [v / div for v in c["x"]]
            y = [v if v > 0 else math.nan for v in c["value"]]
            band = ", its interval as a band" if c.get("low") is not None and c.get("kind") == "confidence interval" \
                else ""
            ax.plot(x, y, linestyle=line, color=colour, linewidth=1.6, marker=marker, markevery=0.1, markersize=5,
                    markerfacecolor="white", label=f"{c['method']}: {c.get('label', c.get('kind', ''))}, whole curve{band}")
            if c.get("low") is not None and c.get("kind") == "confidence interval":
                ax.fill_between(x, [max(v, floor) for v in c["low"]], [max(v, floor) for v in c["high"]],
                                color=colour, alpha=0.22, linewidth=0)
        groups: dict[tuple, list] = {}
        for p in fam.points:
            groups.setdefault((p.method, p.label, p.kind), []).append(p)
        for (method, label, kind), pts in groups.items():
            pts = sorted(pts, key=lambda p: p.x)
            colour, line, marker = _style(method, kind)
            x = [p.x / div for p in pts]
            y = [p.y if p.y > 0 else math.nan for p in pts]
            if kind == "upper bound":  # a non-increasing CCDF stays at or below each proved value to its right
                sx, sy = x + [x[-1] + 0.04 * x_hi], y + [y[-1]]
                ax.step(sx, sy, where="post", linestyle="--", color=colour, linewidth=1.3)
                ax.plot(x, y, linestyle="none", marker="v", color=colour, markersize=7,
                        label=f"{method}: {label} at its metrics (the CCDF lies below the staircase)")
                continue
            xerr = [[max(p.x - (p.x_low if p.x_low is not None else p.x), 0.0) / div for p in pts],
                    [max((p.x_high if p.x_high is not None else p.x) - p.x, 0.0) / div for p in pts]]
            yerr = [[max(p.y - (p.y_low if p.y_low is not None else p.y), 0.0) for p in pts],
                    [max((p.y_high if p.y_high is not None else p.y) - p.y, 0.0) for p in pts]]
            ax.errorbar(x, y, xerr=xerr, yerr=yerr, linestyle="none", marker=marker, color=colour, markersize=6,
                        markerfacecolor="white", markeredgewidth=1.4, capsize=2, elinewidth=1,
                        label=f"{method}: {label}, its metrics (quantiles and CCDF values)")
        for b in fam.max_bounds:
            colour, _, _ = _style(b.method, "upper bound")
            ax.axvline(b.x / div, linestyle="--", color=colour, linewidth=1.3)
            ax.plot([b.x / div], [floor * 1.6], marker="<", color=colour, markersize=8, linestyle="none",
                    label=f"{b.method}: upper bound on the maximum, {format_quantity(b.x, 's')} (the CCDF is 0 beyond)")
        for i, lim in enumerate(sorted(fam.limits, key=lambda lim: (lim.x, -lim.y))):
            y0 = max(lim.y, floor)
            bad = lim.status in ("violated", "missing")
            edge = "#B00020" if bad else "#333333"
            ax.add_patch(Rectangle((lim.x / div, y0), max(x_hi - lim.x / div, 1e-12), top - y0, fill=False,
                                   hatch=_HATCHES[i % len(_HATCHES)], edgecolor=edge, linewidth=2.0 if bad else 1.2,
                                   label=f"SLO {i + 1}, {lim.name} ({lim.status}): the CCDF must stay out"))
            ax.annotate(f"SLO {i + 1}", (lim.x / div, y0), xytext=(3, 3), textcoords="offset points", fontsize=8,
                        fontweight="bold", color=edge,
                        bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": edge, "lw": 0.6})
        ax.set_xlim(0, x_hi)
        ax.set_ylim(floor, top)
        ax.set_xlabel(f"delay x [{unit}]")
        ax.set_ylabel(f"P({fam.name.removesuffix('.delay')} delay > x), log scale")
        ax.grid(True, which="major")
        _finish(ax, fig)
        return inline_svg(fig, uid, label_id)


def series_svg(series: list[dict], x_label: str, x_unit: str, y_label: str, y_unit: str, uid: str, *,
               log_x: bool = False, log_y: bool = False, limits: list[dict] = (), label_id: str | None = None,
               zeros: int = 0) -> str:
    """Lines of a metric against a parameter (a sweep): ``series`` items have ``method``, ``kind``, ``label``,
    ``x``, ``y`` and optionally ``low``/``high`` (SI); ``limits`` items ``name``, ``x``, ``y`` (an SLO's limit at
    each point, drawn dashed black)."""
    xs = [x for s in series for x in s["x"]] + [x for lim in limits for x in lim["x"]]
    ys = [y for s in series for y in s["y"]] + [y for lim in limits for y in lim["y"]]
    xdiv, xu = display_scale(xs, x_unit)
    ydiv, yu = display_scale(ys, y_unit)
    pos = [y for y in ys if y > 0]
    floor = min(pos) / 10 if pos else 1e-12
    with rc_context(_RC):
        fig = _figure(7.4, 3.6)
        ax = fig.add_subplot()
        for s in series:
            colour, line, marker = _style(s["method"], s["kind"])
            x = [v / xdiv for v in s["x"]]
            y = [(v / ydiv if not log_y or v > 0 else math.nan) for v in s["y"]]
            ax.plot(x, y, linestyle=line, marker=marker, color=colour, markersize=5, markerfacecolor="white",
                    linewidth=1.4, label=s["label"])
            if s.get("low") is not None and any(h > lo_ for lo_, h in zip(s["low"], s["high"])):
                lo = [(max(v, floor) if log_y else v) / ydiv for v in s["low"]]
                hi = [(max(v, floor) if log_y else v) / ydiv for v in s["high"]]
                ax.fill_between(x, lo, hi, color=colour, alpha=0.2, linewidth=0)
        for lim in limits:
            ax.plot([v / xdiv for v in lim["x"]], [v / ydiv for v in lim["y"]], color="black", linestyle=(0, (6, 3)),
                    linewidth=1.4, label=f"SLO {lim['name']}")
        if log_x:
            ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel(f"{x_label} [{xu}]" if xu not in ("", "1") else x_label)
        ax.set_ylabel((f"{y_label} [{yu}]" if yu not in ("", "1") else y_label) + (", log scale" if log_y else ""))
        if zeros:
            ax.set_title(f"{zeros} point{'s' if zeros != 1 else ''} at 0 not drawn on the log axis")
        _finish(ax, fig)
        return inline_svg(fig, uid, label_id)


def admit_svg(history: list[dict], parameter: str, unit: str, answer: float | None, uid: str,
              label_id: str | None = None) -> str:
    """An admission search: each evaluated value of the parameter and the smallest SLO slack relative to its
    limit there (>= 0: every SLO holds); values where the scenario is not valid sit on the axis's floor as
    crosses; the answer is a vertical line."""
    xs = [h["value"] for h in history]
    div, u = display_scale(xs + ([answer] if answer is not None else []), unit)
    ok = [(h["value"] / div, h["margin"]) for h in history if h.get("margin") is not None and h["margin"] >= 0]
    bad = [(h["value"] / div, h["margin"]) for h in history if h.get("margin") is not None and h["margin"] < 0]
    invalid = [h["value"] / div for h in history if h.get("margin") is None]
    margins = [m for _, m in ok + bad]
    lo = min(margins + [0.0])
    with rc_context(_RC):
        fig = _figure(7.4, 4.0)
        ax = fig.add_subplot()
        ax.axhline(0.0, color="black", linewidth=1.2, linestyle=(0, (6, 3)),
                   label="every SLO exactly at its limit (slack 0)")
        if ok:
            ax.plot(*zip(*ok), linestyle="none", marker="o", markersize=6, color="#0072B2",
                    label="every SLO holds (slack >= 0)")
        if bad:
            ax.plot(*zip(*bad), linestyle="none", marker="x", markersize=7, markeredgewidth=1.8, color="#D55E00",
                    label="an SLO fails (slack < 0)")
        floor = 3.0 * lo if lo < -0.1 else -0.3  # below every margin on the symmetric log axis
        if invalid:
            ax.plot(invalid, [floor] * len(invalid), linestyle="none", marker="X", markersize=7, color="#555555",
                    label="the scenario is not valid there (drawn below every margin)")
        ax.set_ylim(bottom=2.0 * floor)
        if answer is not None:
            ax.axvline(answer / div, color="black", linewidth=1.6,
                       label=f"the answer, {format_quantity(answer, unit, digits=6) if unit != '1' else f'{answer:g}'}")
        ax.set_yscale("symlog", linthresh=0.1)  # slack near 0 readable beside an SLO missed many times over
        ax.set_xlabel(f"{parameter} [{u}]" if u not in ("", "1") else parameter)
        ax.set_ylabel("smallest SLO slack / limit (symmetric log)")
        _finish(ax, fig)
        return inline_svg(fig, uid, label_id)
