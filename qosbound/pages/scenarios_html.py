"""The ``plan`` / ``verify`` page (:func:`scenarios_page`) and the pieces of one scenario the other pages reuse:
its inputs as understood, its SLOs and their verdicts, its metrics by method, the delay CCDF, the agreement
checks and the notes; a batch gets an index of its scenarios."""

from __future__ import annotations

import json

from qosbound.pages import plots
from qosbound.anchors import section_anchor
from qosbound.pages.html_common import Page, badge, code_badge, esc, frame, html_table, overall_verdict, q
from qosbound.pages.reading import EXIT_MEANING, ScenarioView, SloRow, is_failing_code, scenario_view

__all__ = ["interval_text", "gauge", "slo_table", "agreement_block", "inputs_block", "metrics_table",
           "ccdf_figure", "notes_block", "scenario_section", "scenarios_page"]

_METHOD_ORDER = ("closed-form", "model-checked", "simulated", "ns-3", "trace")


# ---- pieces of one scenario -------------------------------------------------------------------------------

def interval_text(r: dict) -> str:
    """A result's interval as the text report has it: '[a, b] 95% CI', 'numerical, ±h', 'upper bound'."""
    iv = r.get("interval") or {}
    label = iv.get("label") or r.get("kind") or ""
    lo, hi, v, unit = iv.get("low"), iv.get("high"), r.get("value"), r.get("unit")
    if lo is None or hi is None or lo == hi or v is None:
        return label
    if r.get("kind") == "numerical":
        h = max(hi - v, v - lo)
        return f"{label}, ±{q(h, unit, 2)}" if h >= 1e-300 else label
    a, b, c = q(lo, unit), q(hi, unit), q(v, unit)
    if a == b == c:
        return f"{label}, ±{q(0.5 * (hi - lo), unit, 2)}"
    return f"[{a}, {b}] {label}"


def _kv(d: dict) -> str:
    rows = []
    for k, v in d.items():
        if isinstance(v, (dict, list)):
            v = json.dumps(v, ensure_ascii=False)
        rows.append(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>")
    return f'<dl class="kv">{"".join(rows)}</dl>'


def gauge(row: SloRow) -> str:
    """How close the deciding value is to the limit: a bar (the limit a tick at two thirds) and the ratio in
    words; none where there is no value or the limit is 0."""
    v, lim = row.deciding.get("value"), row.limit
    if v is None or not lim or not isinstance(v, (int, float)):
        return ""
    ratio = v / lim
    if ratio < 0:
        return ""
    w, tick = 90.0, 60.0
    bar = min(ratio, 1.5) / 1.5 * w
    words = (f"{ratio * 100:.3g} % of the limit" if ratio >= 1e-3 else "below 0.1 % of the limit")
    over = (row.bound == "max" and ratio > 1) or (row.bound == "min" and ratio < 1)
    fill = f'fill="url(#{row.anchor}-hatch)"' if over else 'fill="#6b6b6b"'
    pattern = (f'<defs><pattern id="{esc(row.anchor)}-hatch" width="4" height="4" patternUnits="userSpaceOnUse" '
               f'patternTransform="rotate(45)"><rect width="4" height="4" fill="#ffffff"/>'
               f'<rect width="2" height="4" fill="#8a1c13"/></pattern></defs>') if over else ""
    svg = (f'<svg class="gauge" width="{w + 2:g}" height="14" viewBox="0 0 {w + 2:g} 14" role="img" '
           f'aria-label="{esc(words)}">{pattern}'
           f'<rect x="1" y="3" width="{w:g}" height="8" fill="#ffffff" stroke="#999999"/>'
           f'<rect x="1" y="3" width="{bar:.1f}" height="8" {fill} stroke="#1b1b1b" stroke-width="0.6"/>'
           f'<line x1="{tick + 1:g}" y1="0" x2="{tick + 1:g}" y2="14" stroke="#000000" stroke-width="2"/></svg>')
    return f'{svg}<span class="small">{esc(words)}</span>'


def _verdict_cells(v: dict) -> str:
    kind = v.get("result_kind") or ""
    return (f'<td>{esc(v.get("method"))}<br><span class="small">{esc(kind)}</span></td>'
            f'<td class="num">{esc(q(v.get("value"), v.get("unit")))}</td>'
            f'<td class="num">{esc(q(v.get("limit"), v.get("unit")))}</td>')


def slo_table(view: ScenarioView) -> str:
    """Every SLO, what fails first: its verdict, the verdict that decided it, how close to the limit, and the
    other methods' verdicts on it in rows below."""
    if not view.rows:
        return '<p class="note">This scenario declares no SLOs.</p>'
    body = []
    for row in view.rows:
        d = row.deciding
        cls = "fail" if row.failed else "warn" if row.status == "inconclusive" else ""
        margin = d.get("margin")
        if margin is not None and row.failed:
            by = f"violated by {q(-margin, d.get('unit'))}"
        elif margin is not None:
            by = f"slack {q(margin, d.get('unit'))}"
        else:
            by = ""
        detail = f'<br><span class="small">{esc(d.get("detail"))}</span>' if d.get("detail") else ""
        body.append(f'<tbody class="group" data-slo="{esc(row.name)}" data-status="{esc(row.status)}">'
                    f'<tr id="{esc(row.anchor)}" class="{cls}"><th scope="row" class="wrap">{esc(row.name)}</th>'
                    f"<td>{badge(row.status)}{detail}</td>{_verdict_cells(d)}"
                    f'<td>{gauge(row)}<br><span class="small">{esc(by)}</span></td></tr>')
        for v in row.verdicts[1:]:
            st = v.get("status", "")
            ocls = "other fail" if st in ("violated", "missing") else "other"
            body.append(f'<tr class="{ocls}"><td>also judged by</td><td>{badge(st)}'
                        + (f'<br><span class="small">{esc(v.get("detail"))}</span>' if v.get("detail") else "")
                        + f"</td>{_verdict_cells(v)}<td></td></tr>")
        body.append("</tbody>")
    n = len(view.rows)
    nf = view.failed_slos
    cap = f"SLOs: {nf} fail, {n - nf} hold (failing first; the first row of each is the verdict that decided it)"
    return html_table(esc(cap), ["SLO", "verdict", "decided by (method, kind)", "value", "limit", "how close"],
                  "".join(body), cls="slos")


def agreement_block(view: ScenarioView) -> str:
    ag = view.agreements
    if not ag:
        return (f'<p id="{esc(section_anchor(view.suite, "agreement"))}" class="note">No agreement check: no metric '
                "was computed by two methods.</p>")
    nd = sum(v.get("status") == "disagree" for v in ag)
    na = sum(v.get("status") == "approximate" for v in ag)
    rows = []
    for v in ag:
        st = v.get("status", "")
        cls = ' class="fail"' if st == "disagree" else ""
        rows.append(f"<tr{cls}><td class=\"wrap\">{esc(v.get('name'))}</td><td>{badge(st)}</td>"
                    f"<td>{esc(v.get('method'))}<br><span class=\"small\">{esc(v.get('result_kind'))}</span></td>"
                    f"<td class=\"wrap small\">{esc(v.get('detail'))}</td></tr>")
    summary = (f"Agreement between methods: {nd} disagree, {na} approximate, {len(ag) - nd - na} agree "
               "(not SLOs: a disagreement is a finding about the methods)")
    table = html_table("", ["check", "status", "methods", "detail"], f"<tbody>{''.join(rows)}</tbody>",
                   label=f"agreement checks of {view.name}")
    return (f'<details id="{esc(section_anchor(view.suite, "agreement"))}"{" open" if nd else ""}>'
            f"<summary>{esc(summary)}</summary>{table}</details>")


def inputs_block(view: ScenarioView, heading: str = "Inputs as understood", open_: bool = True) -> str:
    inputs = view.doc.get("inputs") or {}
    if not inputs:
        return ""
    rows = []
    for name, item in inputs.items():
        if not isinstance(item, dict):
            item = {"value": item}
        echo = item.get("echo")
        if echo is None:
            echo = q(item.get("value"), item.get("unit"), 6) if item.get("unit") not in (None, "1") else \
                str(item.get("value"))
            extra = [x for x in (f"{100 * item['share_of_link']:.3g} % of the link" if "share_of_link" in item
                                 else "", f"written {item['written']}" if "written" in item else "",
                                 item.get("note", "")) if x]
            echo += f" ({'; '.join(extra)})" if extra else ""
        rows.append(f'<tr><th scope="row" class="mono wrap">{esc(name)}</th><td class="wrap">{esc(echo)}</td></tr>')
    table = html_table("", ["input", "as understood"], f"<tbody>{''.join(rows)}</tbody>",
                   label=f"inputs of {view.name}")
    return (f'<details id="{esc(section_anchor(view.suite, "inputs"))}"{" open" if open_ else ""}><summary>{esc(heading)} '
            f'({len(rows)})</summary>{table}</details>')


def _metric_cell(r: dict) -> str:
    extra = []
    if r.get("estimates"):
        extra.append(f"estimates {r['estimates']}")
    if r.get("bounds"):
        extra.append(f"also bounds {', '.join(r['bounds'])}")
    return f'<span class="mono">{esc(r.get("metric"))}</span>' + "".join(
        f'<br><span class="small">{esc(x)}</span>' for x in extra)


def _kind_cell(r: dict) -> str:
    iv = r.get("interval") or {}
    text = esc(interval_text(r))
    more = []
    if iv.get("neglects"):
        more.append(f"neglects {iv['neglects']}")
    if iv.get("note"):
        more.append(iv["note"])
    if more:
        text += (' <details class="inline"><summary>details</summary><span class="small"> '
                 + esc("; ".join(more)) + "</span></details>")
    return text


def _prov_cell(r: dict) -> str:
    prov = r.get("provenance") or {}
    head = prov.get("source") or prov.get("formula") or prov.get("model") or prov.get("estimator") or ""
    if not prov:
        return ""
    return (f'<span class="small wrap">{esc(head)}</span><details class="prov"><summary>provenance '
            f"({len(prov)})</summary>{_kv(prov)}</details>")


def metrics_table(results: list[dict], subject: str) -> str:
    order: dict[str, int] = {}
    for r in results:
        order.setdefault(r.get("metric", ""), len(order))
    rows = sorted(results, key=lambda r: (order[r.get("metric", "")], _METHOD_ORDER.index(r["method"])
                                          if r.get("method") in _METHOD_ORDER else 99))
    body, prev = [], None
    for r in rows:
        if r.get("metric") != prev:
            if prev is not None:
                body.append("</tbody>")
            body.append('<tbody class="group">')
            prev = r.get("metric")
        body.append(f"<tr><td class=\"wrap\">{_metric_cell(r)}</td><td>{esc(r.get('method'))}</td>"
                    f"<td class=\"num\">{esc(q(r.get('value'), r.get('unit')))}</td><td>{_kind_cell(r)}</td>"
                    f"<td>{_prov_cell(r)}</td></tr>")
    body.append("</tbody>")
    return html_table(f"Every metric of {esc(subject)} by every method ({len(rows)} results)",
                  ["metric", "method", "value", "kind and interval", "provenance"], "".join(body), cls="metrics",
                  label=f"metrics of {subject}")


def ccdf_figure(page: Page, view: ScenarioView, fam) -> str:
    uid = page.uid("ccdf")
    cap_id = f"{uid}-cap"
    svg = plots.ccdf_svg(fam, uid, cap_id)
    drawn = "; ".join(f"SLO {i + 1}: {lim.name}" for i, lim in
                      enumerate(sorted(fam.limits, key=lambda lim: (lim.x, -lim.y))))
    parts = [f"The CCDF of {fam.name.removesuffix('.delay')}'s delay, P(delay &gt; x), on a log axis: each "
             "method's curve where it computes one, the points its metrics give (quantiles and CCDF values), "
             "upper bounds as the staircase they prove"]
    if fam.max_bounds:
        parts.append("an upper bound on the maximum as a dashed vertical line (the CCDF is 0 beyond it)")
    if fam.limits:
        parts.append(f"the SLO limits hatched where the CCDF must not go ({esc(drawn)})")
    text = ", ".join(parts) + "."
    if fam.not_drawn:
        text += f" Not a point of the CCDF, so not drawn: {esc(', '.join(fam.not_drawn))}."
    return f'<figure>{svg}<figcaption id="{cap_id}">{text}</figcaption></figure>'


def notes_block(doc: dict) -> str:
    lines = list(doc.get("omitted") or []) + [f"{m} skipped: {why}" for m, why in (doc.get("skipped") or {}).items()]
    if not lines:
        return ""
    return '<ul class="note">' + "".join(f"<li>{esc(x)}</li>" for x in lines) + "</ul>"


def _counts_line(view: ScenarioView) -> str:
    n, nf = len(view.rows), view.failed_slos
    ag = view.agreements
    nd = sum(v.get("status") == "disagree" for v in ag)
    na = sum(v.get("status") == "approximate" for v in ag)
    inc = sum(r.status == "inconclusive" for r in view.rows)
    parts = [f"SLOs: {nf} fail, {n - nf} hold" + (f" ({inc} inconclusive)" if inc else ""),
             f"methods: {len(ag) - nd - na} checks agree, {na} approximate, {nd} disagree" if ag else
             "methods: no agreement check (one method per metric)"]
    if view.exit_code is not None:
        parts.append(f"exit {view.exit_code}: {EXIT_MEANING.get(view.exit_code, 'see the exit codes')}")
    if view.doc.get("seconds") is not None:
        parts.append(f"{view.doc['seconds']:.1f} s")
    return " · ".join(esc(p) for p in parts)


def scenario_section(page: Page, view: ScenarioView, level: int = 2, single: bool = True) -> str:
    """One scenario: header, inputs (folded in a batch), SLOs, agreement, then each subject's CCDF and
    metrics."""
    d = view.doc
    h, hs = f"h{level}", f"h{level + 1}"
    failing = is_failing_code(view.exit_code)
    out = [f'<section class="scenario{" failing" if failing else ""}" id="{esc(view.anchor)}" '
           f'aria-labelledby="{esc(view.anchor)}-h" data-scenario="{esc(view.suite)}">',
           f'<{h} id="{esc(view.anchor)}-h">{esc(view.suite)} {code_badge(view.exit_code)}</{h}>']
    meta = [x for x in (f"system {d['system']}" if d.get("system") else "", f"file {d['file']}" if d.get("file")
                        else "") if x]
    if meta:
        out.append(f'<p class="meta mono">{esc(" · ".join(meta))}</p>')
    if view.error:
        out.append(f'<p class="error" role="alert"><strong>Not evaluated.</strong> {esc(view.error)}</p>')
        out.append("</section>")
        return "".join(out)
    out.append(f'<p class="lede">{_counts_line(view)}</p>')
    out.append(inputs_block(view, open_=single))
    out.append(f'<{hs} id="{esc(section_anchor(view.suite, "slos"))}">SLOs</{hs}>')
    out.append(slo_table(view))
    out.append(notes_block(d))
    out.append(agreement_block(view))
    fams = {f.name: f for f in view.families if f.drawable}
    failing_subjects = {r.metric.split(".", 1)[0] for r in view.rows if r.failed}
    subjects = sorted(view.subjects, key=lambda s: (s not in failing_subjects, list(view.subjects).index(s)))
    for subject in subjects:
        results = view.subjects[subject]
        out.append(f'<{hs} id="{esc(section_anchor(view.suite, "subject-" + subject))}">{esc(subject)}</{hs}>')
        for name in [f for f in fams if f.split(".", 1)[0] == subject]:
            out.append(ccdf_figure(page, view, fams.pop(name)))
        out.append(metrics_table(results, subject))
    out.append("</section>")
    return "".join(out)


def _batch_index(views: list[ScenarioView]) -> str:
    rows = []
    for v in views:
        n, nf = len(v.rows), v.failed_slos
        ag = v.agreements
        nd = sum(a.get("status") == "disagree" for a in ag)
        na = sum(a.get("status") == "approximate" for a in ag)
        t = v.tightest
        tight = (f"{t.name}: {q(t.deciding.get('value'), t.unit)} by {t.deciding.get('method')}" if t else "-")
        slos = "not evaluated" if v.error else f"{nf} fail, {n - nf} hold"
        cls = ' class="fail"' if is_failing_code(v.exit_code) else ""
        rows.append(f'<tr{cls} data-row="{esc(v.suite)}"><th scope="row"><a href="#{esc(v.anchor)}">'
                    f'{esc(v.suite)}</a></th><td>{code_badge(v.exit_code)}</td><td>{esc(slos)}</td>'
                    f'<td class="wrap small">{esc(tight if not v.error else v.error)}</td>'
                    f"<td>{esc(_methods_text(v))}"
                    f"</td><td class=\"mono small wrap\">{esc(v.doc.get('system') or '-')}<br>"
                    f"{esc(v.doc.get('file') or '')}</td></tr>")
    return html_table(f"{len(views)} scenarios, failing first", ["scenario", "verdict", "SLOs", "tightest SLO",
                                                             "methods", "system, file"],
                  f"<tbody>{''.join(rows)}</tbody>", label="index of scenarios")


def _methods_text(v: ScenarioView) -> str:
    ag = v.agreements
    if v.error:
        return "-"
    if not ag:
        return "no check (one method per metric)"
    nd = sum(a.get("status") == "disagree" for a in ag)
    na = sum(a.get("status") == "approximate" for a in ag)
    return f"{len(ag) - nd - na} agree, {na} approx., {nd} disagree"


def scenarios_page(doc: dict, command: str, source: str, generated: str) -> str:
    """``plan``/``verify`` of one scenario or a batch: an index (batch), then one section per scenario."""
    docs = doc["scenarios"] if isinstance(doc.get("scenarios"), list) else [doc]
    views = sorted((scenario_view(d) for d in docs), key=lambda v: v.sort_key)
    page = Page()
    failing = sum(is_failing_code(v.exit_code) for v in views)
    body = [overall_verdict(doc, len(views), failing)]
    if len(views) > 1:
        body.append(f'<nav aria-label="Scenarios">{_batch_index(views)}</nav>')
        if doc.get("executor"):
            body.append(f'<p class="meta">{len(views)} scenarios in {doc.get("seconds", 0):.1f} s on '
                        f'{esc(doc["executor"])}.</p>')
    body += [scenario_section(page, v, single=len(views) == 1) for v in views]
    name = views[0].suite if len(views) == 1 else source
    title = f"qosbound {command}: {name} - " + ("pass" if doc.get("exit_code") == 0 else
                                                  f"exit {doc.get('exit_code')}")
    return frame(title, f"qosbound {esc(command)}: {esc(name)}", "".join(body), generated)
