"""The ``sweep`` page (:func:`sweep_page`): inputs and grid, each SLO over the grid (failing first), one figure
per metric and subject, the invalid points and the disagreements."""

from __future__ import annotations

import math

from qosbound.pages import plots
from qosbound.anchors import section_anchor
from qosbound.pages.html_common import Page, badge, esc, frame, html_table, overall_verdict, q
from qosbound.pages.reading import relative_margin, scenario_view
from qosbound.pages.scenarios_html import inputs_block

__all__ = ["sweep_page"]


def _point_text(axes: list[dict], values: dict) -> str:
    parts = []
    for a in axes:
        v = values.get(a["parameter"])
        parts.append(f"{a['parameter']} = " + (q(v, a.get("unit"), 6) if a.get("unit") not in (None, "1")
                                                else f"{v:g}" if isinstance(v, (int, float)) else str(v)))
    return ", ".join(parts)


def _log_y(metric: str, unit: str, ys: list[float]) -> bool:
    pos = [y for y in ys if y > 0]
    if unit not in ("1", "") or not pos:
        return False
    tail = any(w in metric for w in ("loss", "drop", "ccdf@"))
    return tail or max(pos) / min(pos) > 100


def sweep_page(doc: dict, source: str, generated: str) -> str:
    """A sweep: inputs and grid, each SLO over the grid (failing first), one figure per metric (by subject),
    the invalid points and the disagreements."""
    page = Page()
    axes = doc.get("axes") or []
    points = doc.get("points") or []
    view = scenario_view({**doc, "metrics": [], "slo_verdicts": [], "agreement_verdicts": []})
    valid = [p for p in points if p.get("status") == "ok"]
    body = [overall_verdict(doc, 1, 0)]
    invalid = [p for p in points if p.get("status") != "ok"]
    if invalid and any(p.get("slo_verdicts") for p in valid):
        body.append(f'<p class="note">A point that could not be evaluated counts as failing the SLOs ({len(invalid)} '
                    "here, listed below).</p>")
    grid = "".join(f'<li><span class="mono">{esc(a["parameter"])}</span> ({esc(a.get("kind"))}): {len(a["values"])} '
                   f'values from {esc(q(min(a["values"]), a.get("unit"), 6))} to {esc(q(max(a["values"]), a.get("unit"), 6))}'
                   f'{", logarithmic" if a.get("log") else ""}</li>' for a in axes if a.get("values"))
    body.append(f'<p class="lede">{len(points)} points, {len(valid)} valid; methods: '
                f'{esc(", ".join(doc.get("methods") or []))}</p><ul>{grid}</ul>')
    body.append(inputs_block(view))
    body += _sweep_slos(axes, valid)
    if invalid:
        items = "".join(f"<li>{badge(p.get('status', ''))} at {esc(_point_text(axes, p.get('values', {})))}: "
                        f"{esc(p.get('reason'))}</li>" for p in invalid)
        body.append(f"<details open><summary>{len(invalid)} points not evaluated</summary><ul>{items}</ul></details>")
    dis = [(p, v) for p in valid for v in p.get("agreement_verdicts") or [] if v.get("status") == "disagree"]
    nchecks = sum(len(p.get("agreement_verdicts") or []) for p in valid)
    body.append(f'<p>Agreement between methods: {nchecks} checks over the grid, {len(dis)} disagree.</p>')
    if dis:
        items = "".join(f"<li>{badge('disagree')} at {esc(_point_text(axes, p['values']))}: {esc(v.get('name'))} - "
                        f"{esc(v.get('detail'))}</li>" for p, v in dis)
        body.append(f'<ul>{items}</ul>')
    if axes:
        body += _sweep_figures(page, view, axes, valid)
    return frame(f"qosbound sweep: {view.suite}", f"qosbound sweep: {esc(view.suite)}", "".join(body), generated)


def _sweep_slos(axes: list, valid: list) -> list[str]:
    """Each SLO over the grid's valid points, failing first: where it holds and the first point where it fails."""
    names: dict[str, dict] = {}
    for p in valid:
        for v in p.get("slo_verdicts") or []:
            s = names.setdefault(v["name"], {"fail": [], "judged": 0, "margin": math.inf})
            s["judged"] += 1
            if v.get("status") in ("violated", "missing"):
                if p not in s["fail"]:
                    s["fail"].append(p)
            s["margin"] = min(s["margin"], relative_margin(v))
    rows = []
    for name, s in sorted(names.items(), key=lambda kv: (not kv[1]["fail"], kv[1]["margin"])):
        nf = len(s["fail"])
        st = "violated" if nf else "holds"
        first = f"first at {_point_text(axes, s['fail'][0]['values'])}" if nf else "-"
        cls = ' class="fail"' if nf else ""
        rows.append(f'<tr{cls} data-slo="{esc(name)}"><th scope="row" class="wrap">{esc(name)}</th><td>{badge(st)}</td>'
                    f"<td>holds at {len(valid) - nf} of {len(valid)} valid points</td><td class=\"wrap\">{esc(first)}</td></tr>")
    if not rows:
        return []
    return [html_table("SLOs over the grid, failing first", ["SLO", "verdict", "where it holds", "fails"],
                   f"<tbody>{''.join(rows)}</tbody>")]


def _sweep_series(axes: list, valid: list) -> tuple[dict, dict, dict]:
    """Per metric: its series (one per method, kind and value of the other axes, over the first axis), its unit,
    and the limits of the SLOs on it that carry a bound."""
    x_axis = axes[0]
    series: dict[str, dict[tuple, dict]] = {}
    units: dict[str, str] = {}
    limits: dict[str, dict[str, dict]] = {}
    for p in valid:
        x = p["values"].get(x_axis["parameter"])
        rest = tuple((a["parameter"], p["values"].get(a["parameter"])) for a in axes[1:])
        for r in p.get("metrics") or []:
            if r.get("value") is None:
                continue
            label = (r.get("interval") or {}).get("label") or r.get("kind") or ""
            key = (r["method"], label, rest)
            s = series.setdefault(r["metric"], {}).setdefault(key, {
                "method": r["method"], "kind": r.get("kind") or "", "x": [], "y": [], "low": [], "high": [],
                "label": f"{r['method']}: {label}" + "".join(
                    f", {a} = {v:g}" if isinstance(v, (int, float)) else f", {a} = {v}" for a, v in rest)})
            iv = r.get("interval") or {}
            s["x"].append(x)
            s["y"].append(r["value"])
            s["low"].append(iv.get("low", r["value"]))
            s["high"].append(iv.get("high", r["value"]))
            units[r["metric"]] = r.get("unit") or "1"
        for v in p.get("slo_verdicts") or []:
            if v.get("limit") is not None and v.get("bound"):
                lim = limits.setdefault(v["metric"], {}).setdefault(v["name"], {"name": v["name"], "pts": set()})
                lim["pts"].add((x, v["limit"]))
    return series, units, limits


def _sweep_figures(page, view, axes: list, valid: list) -> list[str]:
    """One figure per metric, grouped by subject: the first axis on x, a line per method, kind and value of the
    other axes, the SLO limits dashed."""
    x_axis = axes[0]
    series, units, limits = _sweep_series(axes, valid)
    body = []
    by_subject: dict[str, list[str]] = {}
    for metric in series:
        by_subject.setdefault(metric.split(".", 1)[0], []).append(metric)
    for subject, metrics in by_subject.items():
        body.append(f"<h2>{esc(subject)}</h2>")
        for metric in metrics:
            ss = []
            for s in series[metric].values():
                order = sorted(range(len(s["x"])), key=lambda i: s["x"][i])
                ss.append({**s, **{k: [s[k][i] for i in order] for k in ("x", "y", "low", "high")}})
            ys = [y for s in ss for y in s["y"]]
            log_y = _log_y(metric, units[metric], ys)
            zeros = sum(1 for y in ys if y <= 0) if log_y else 0
            lims = [{"name": lim["name"], "x": [a for a, _ in sorted(lim["pts"])],
                     "y": [b for _, b in sorted(lim["pts"])]} for lim in limits.get(metric, {}).values()]
            uid = page.uid("sweep")
            svg = plots.series_svg(ss, x_axis["parameter"], x_axis.get("unit") or "1", metric, units[metric], uid,
                                   log_x=bool(x_axis.get("log")), log_y=log_y, limits=lims, label_id=f"{uid}-cap",
                                   zeros=zeros)
            body.append(f'<figure id="{esc(section_anchor(view.suite, "sweep-" + metric))}">{svg}'
                        f'<figcaption id="{uid}-cap"><span class="mono">{esc(metric)}</span> against '
                        f'{esc(x_axis["parameter"])}, one line per method and kind'
                        + (", SLO limits dashed black" if lims else "") + (", log axis" if log_y else "")
                        + ".</figcaption></figure>")
    return body
