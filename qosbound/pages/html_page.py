"""One self-contained HTML page from a command's JSON document (``plan``, ``verify``, ``admit``, ``sweep``, a
batch of any of them).

The page needs nothing from the network when opened: its style sheet and its one small script are inline, its
figures inline SVG, and a Content-Security-Policy in the page forbids the browser to fetch anything at all.
Every text that comes from a document is escaped (a scenario named ``<script>`` is shown, never run).

What it shows, per scenario (port) and per subject (class or flow): the inputs as understood; each SLO with
its verdict and the method and kind that decided it, how close it is to its limit; every metric by method
with its kind, interval and provenance; the delay CCDF with the bounds and the SLO limits drawn; the agreement
checks; notes on what was omitted or skipped. A batch gets an index of its scenarios with links; a sweep its
curves; an admission search its answer and the margins it evaluated. Everything is sorted by what fails first
(:mod:`qosbound.pages.reading`), quantities are in the reader's units (:func:`qosbound.units.format_quantity`),
and every status carries a symbol and a word as well as a colour.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import html
import json
import math
import re
from pathlib import Path

from qosbound import __version__
from qosbound.pages import plots
from qosbound.pages.anchors import section_anchor
from qosbound.pages.reading import EXIT_MEANING, ScenarioView, SloRow, is_failing_code, relative_margin, scenario_view
from qosbound.units import format_quantity

__all__ = ["render", "STATUS", "SCRIPT", "csp"]

#: How each status reads: (symbol and word, badge class).
STATUS = {"violated": ("✗ violated", "st-fail"), "missing": ("✗ not judged", "st-fail"),
          "inconclusive": ("? inconclusive", "st-warn"), "holds": ("✓ holds", "st-ok"),
          "disagree": ("≠ disagree", "st-fail"), "approximate": ("≈ approximate", "st-warn"),
          "agree": ("= agree", "st-ok"), "invalid": ("– invalid", "st-none"), "error": ("✗ error", "st-fail"),
          "ok": ("✓ ok", "st-ok")}

#: The page's only script: it marks that scripts run, and opens every folded section before printing.
SCRIPT = ('document.documentElement.classList.add("js");'
          'window.addEventListener("beforeprint",function(){'
          'document.querySelectorAll("details").forEach(function(d){d.open=true;});});')

#: What each kind of result means (the page's legend).
KINDS = {"exact": "computed exactly", "numerical": "the exact value of the model, with a proved error bound",
         "upper bound": "the true value is at most this", "lower bound": "the true value is at least this",
         "approximation": "neglects something, named beside it",
         "confidence interval": "a statistical estimate with its interval"}

_METHOD_ORDER = ("closed-form", "model-checked", "simulated", "ns-3", "trace")


def csp() -> str:
    """The page's Content-Security-Policy: nothing may be fetched; inline styles, and only this script."""
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    return f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'"


def esc(x) -> str:
    return html.escape("" if x is None else str(x), quote=True)


def q(value, unit: str | None, digits: int = 4) -> str:
    """A quantity in the reader's units ('-' for none)."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return str(value)
    return format_quantity(float(value), unit or "1", digits=digits)


def badge(status: str, text: str | None = None) -> str:
    label, cls = STATUS.get(status, (status, "st-none"))
    return f'<span class="st {cls}">{esc(text or label)}</span>'


def code_badge(code) -> str:
    if code is None:
        return badge("none", "– not run")
    if code == 0:
        return badge("ok", "✓ pass")
    words = {1: "✗ SLO fails", 2: "✗ bad input", 3: "≠ methods disagree", 4: "✗ resource limit",
             70: "✗ internal error"}
    cls = "st-warn" if code == 3 else "st-fail"
    return f'<span class="st {cls}">{esc(words.get(code, f"✗ exit {code}"))}</span>'


def _table(caption: str, head: list[str], body: str, cls: str = "plain", label: str | None = None) -> str:
    ths = "".join(f'<th scope="col">{h}</th>' for h in head)
    cap = f"<caption>{caption}</caption>" if caption else ""
    return (f'<div class="table" role="region" tabindex="0" aria-label="{esc(label or _strip(caption))}">'
            f'<table class="{cls}">{cap}<thead><tr>{ths}</tr></thead>{body}</table></div>')


def _strip(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", text))


class _Page:
    """Accumulates one page; ``uid()`` gives each figure its own prefix for the ids inside its SVG."""

    def __init__(self):
        self.n = 0

    def uid(self, stem: str = "f") -> str:
        self.n += 1
        return f"{stem}{self.n}"


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
    return _table(esc(cap), ["SLO", "verdict", "decided by (method, kind)", "value", "limit", "how close"],
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
    table = _table("", ["check", "status", "methods", "detail"], f"<tbody>{''.join(rows)}</tbody>",
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
    table = _table("", ["input", "as understood"], f"<tbody>{''.join(rows)}</tbody>",
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
    return _table(f"Every metric of {esc(subject)} by every method ({len(rows)} results)",
                  ["metric", "method", "value", "kind and interval", "provenance"], "".join(body), cls="metrics",
                  label=f"metrics of {subject}")


def ccdf_figure(page: _Page, view: ScenarioView, fam) -> str:
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


def scenario_section(page: _Page, view: ScenarioView, level: int = 2, single: bool = True) -> str:
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


# ---- pages ------------------------------------------------------------------------------------------------

def _frame(title: str, heading: str, body: str, generated: str) -> str:
    css = (Path(__file__).with_name("style.css")).read_text(encoding="utf-8")
    legend = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in KINDS.items())
    return ("<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{esc(csp())}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="generator" content="qosbound {esc(__version__)}">\n'
            f"<title>{esc(title)}</title>\n<style>\n{css}</style>\n<script>{SCRIPT}</script>\n</head>\n<body>\n"
            '<a class="skip" href="#main">Skip to the results</a>\n'
            f'<header><h1>{heading}</h1><p class="meta">made by qosbound {esc(__version__)} on {esc(generated)}; '
            "the page needs no network.</p></header>\n"
            f'<main id="main">\n{body}\n</main>\n'
            '<footer><h2>Reading this page</h2><p class="small">Everything is sorted by what fails first: SLOs '
            "violated or not judged, then inconclusive, then holding, each group by its slack relative to its "
            "limit; scenarios by their exit code's seriousness, then by their tightest SLO. An SLO fails when a "
            "verdict on it fails; the verdict that decided it is shown first (the failing one, else the one "
            "nearest the limit), the other methods' verdicts below it. Symbols: ✓ holds / agrees, ✗ fails, "
            "? inconclusive, ≈ an approximation's gap (a finding, not a contradiction), ≠ methods disagree. "
            "In plots a bound is dashed with a triangle pointing to where the truth lies, an approximation "
            "dotted, an estimate solid with its interval as a band or bars; hatched regions are where an SLO "
            "does not allow the curve to go.</p>"
            f'<dl class="kv">{legend}</dl></footer>\n</body>\n</html>\n')


def _overall(doc: dict, n: int, failing: int) -> str:
    code = doc.get("exit_code")
    cls = "st-ok" if code == 0 else "st-warn" if code == 3 else "st-fail"
    sym = "✓" if code == 0 else "≠" if code == 3 else "✗"
    what = EXIT_MEANING.get(code, "see the exit codes") if code is not None else "no exit code"
    scen = f"{failing} of {n} scenarios fail; " if n > 1 else ""
    return f'<p class="verdict {cls}" role="status">{sym} {esc(scen)}exit {esc(code)}: {esc(what)}</p>'


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
    return _table(f"{len(views)} scenarios, failing first", ["scenario", "verdict", "SLOs", "tightest SLO",
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
    page = _Page()
    failing = sum(is_failing_code(v.exit_code) for v in views)
    body = [_overall(doc, len(views), failing)]
    if len(views) > 1:
        body.append(f'<nav aria-label="Scenarios">{_batch_index(views)}</nav>')
        if doc.get("executor"):
            body.append(f'<p class="meta">{len(views)} scenarios in {doc.get("seconds", 0):.1f} s on '
                        f'{esc(doc["executor"])}.</p>')
    body += [scenario_section(page, v, single=len(views) == 1) for v in views]
    name = views[0].suite if len(views) == 1 else source
    title = f"qosbound {command}: {name} - " + ("pass" if doc.get("exit_code") == 0 else
                                                  f"exit {doc.get('exit_code')}")
    return _frame(title, f"qosbound {esc(command)}: {esc(name)}", "".join(body), generated)


# ---- admit ------------------------------------------------------------------------------------------------

def _admit_answer(d: dict) -> str:
    unit = d.get("unit") or "1"

    def qq(x):
        return q(x, unit, 6) if unit != "1" else (f"{x:.6g}" if isinstance(x, (int, float)) else "-")

    if d.get("error"):
        return f'<p class="error" role="alert"><strong>Not evaluated.</strong> {esc(d["error"])}</p>'
    if d.get("value") is None:
        return (f'<p class="verdict st-fail">✗ no value of {esc(d.get("parameter"))} meets every SLO '
                f'({esc(d.get("message"))}; method {esc(d.get("method"))})</p>')
    stop = (f"binding SLO: {d['binding_slo']}" if d.get("binding_slo") else "no SLO binds")
    msg = f"; {d['message']}" if d.get("message") else ""
    return (f'<p class="verdict st-ok">✓ {esc(d.get("direction"))} {esc(d.get("parameter"))} with every SLO '
            f'holding = <strong>{esc(qq(d.get("value")))}</strong> (method {esc(d.get("method"))}, {esc(stop)}, '
            f'{esc(d.get("evaluations"))} evaluations{esc(msg)})</p>')


def admit_section(page: _Page, d: dict) -> str:
    view = scenario_view(d)
    unit = d.get("unit") or "1"
    out = [f'<section class="scenario{" failing" if is_failing_code(d.get("exit_code")) else ""}" '
           f'id="{esc(view.anchor)}" aria-labelledby="{esc(view.anchor)}-h" data-scenario="{esc(view.suite)}">',
           f'<h2 id="{esc(view.anchor)}-h">{esc(view.suite)} {code_badge(d.get("exit_code"))}</h2>',
           _admit_answer(d)]
    if d.get("error"):
        out.append("</section>")
        return "".join(out)
    s = d.get("search")
    if s:
        def qq(x):
            return "-" if x is None else (q(x, s.get("unit"), 6) if s.get("unit") not in (None, "1") else f"{x:g}")

        rows = "".join(f'<tr><th scope="row">{esc(k)}</th><td>{esc(v)}</td></tr>' for k, v in (
            ("parameter", s.get("parameter")), ("kind", s.get("kind") or "a parameter"),
            ("now", qq(s.get("current"))), ("searched from (--min)", qq(s.get("min"))),
            ("searched up to (--max)", qq(s.get("max")))))
        out.append(_table("The search as understood", ["search", "as understood"], f"<tbody>{rows}</tbody>"))
    for note in d.get("notes") or []:
        out.append(f'<p class="note">note: {esc(note)}</p>')
    hist = d.get("history") or []
    if hist:
        uid = page.uid("admit")
        svg = plots.admit_svg(hist, d.get("parameter", ""), unit, d.get("value"), uid, f"{uid}-cap")
        out.append(f'<figure>{svg}<figcaption id="{uid}-cap">Every value the search evaluated and the smallest '
                   "slack of an SLO there, relative to its limit (at or above 0: every SLO holds); the answer as a "
                   "vertical line.</figcaption></figure>")
        def slack(h):
            return "invalid scenario" if h.get("margin") is None else f"{h['margin']:.4g}"

        rows = "".join(f'<tr><td class="num">{esc(q(h.get("value"), unit, 6) if unit != "1" else h.get("value"))}'
                       f'</td><td class="num">{esc(slack(h))}</td></tr>' for h in hist)
        out.append(f"<details><summary>The {len(hist)} evaluations</summary>"
                   + _table("", ["value", "smallest slack / limit"], f"<tbody>{rows}</tbody>",
                            label=f"evaluations of {view.suite}") + "</details>")
    out.append(inputs_block(view))
    out.append("</section>")
    return "".join(out)


def admit_page(doc: dict, source: str, generated: str) -> str:
    docs = doc["scenarios"] if isinstance(doc.get("scenarios"), list) else [doc]

    def key(d):
        code = d.get("exit_code", 0 if d.get("value") is not None else 1)
        return (0 if d.get("error") else 1 if d.get("value") is None else 2, code)

    docs = sorted(docs, key=key)
    page = _Page()
    body = []
    if len(docs) > 1:
        failing = sum(1 for d in docs if d.get("error") or d.get("value") is None)
        body.append(_overall(doc, len(docs), failing))
        rows = []
        for d in docs:
            v = scenario_view(d)
            unit = d.get("unit") or "1"
            val = ("not evaluated" if d.get("error") else "none feasible" if d.get("value") is None else
                   q(d["value"], unit, 6) if unit != "1" else f"{d['value']:.6g}")
            cls = ' class="fail"' if d.get("error") or d.get("value") is None else ""
            rows.append(f'<tr{cls}><th scope="row"><a href="#{esc(v.anchor)}">{esc(v.suite)}</a></th>'
                        f'<td>{code_badge(d.get("exit_code"))}</td><td class="num">{esc(val)}</td>'
                        f'<td>{esc(d.get("method") or "-")}</td><td class="wrap">{esc(d.get("binding_slo") or "-")}</td>'
                        f'<td class="num">{esc(d.get("evaluations", "-"))}</td></tr>')
        param = doc.get("parameter") or docs[0].get("parameter")
        body.append(f'<nav aria-label="Scenarios">' + _table(
            f"{esc(param)}: {len(docs)} scenarios, failing first",
            ["scenario", "verdict", "value", "method", "binding SLO", "evaluations"], f"<tbody>{''.join(rows)}</tbody>",
            label="index of scenarios") + "</nav>")
    body += [admit_section(page, d) for d in docs]
    name = scenario_view(docs[0]).suite if len(docs) == 1 else source
    return _frame(f"qosbound admit: {name}", f"qosbound admit: {esc(name)}", "".join(body), generated)


# ---- sweep ------------------------------------------------------------------------------------------------

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
    page = _Page()
    axes = doc.get("axes") or []
    points = doc.get("points") or []
    view = scenario_view({**doc, "metrics": [], "slo_verdicts": [], "agreement_verdicts": []})
    valid = [p for p in points if p.get("status") == "ok"]
    body = [_overall(doc, 1, 0)]
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
    return _frame(f"qosbound sweep: {view.suite}", f"qosbound sweep: {esc(view.suite)}", "".join(body), generated)


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
    return [_table("SLOs over the grid, failing first", ["SLO", "verdict", "where it holds", "fails"],
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


def _diff_port(d: dict, k: int) -> str:
    """One port of a ``diff`` document: what was refused, the configuration's changes with their lines, the SLOs
    that changed state, the answers before and after."""
    tag = " (new port)" if d.get("new_only") else " (removed)" if d.get("removed") else ""
    parts = [f'<section id="port-{k}" aria-labelledby="port-{k}-h"><h2 id="port-{k}-h">{esc(d["port"])}{esc(tag)}</h2>']
    for err in d.get("refused", []):
        parts.append(f'<p class="verdict st-fail">{badge("error", "✗ refused")} {esc(err)}</p>')
    if d["slo_changes"]:
        body = "".join(f'<tr><th scope="row">{esc(c["slo"])}</th><td>{badge(c["before"])}</td>'
                       f'<td>{badge(c["after"])}'
                       + (" (broken by this change)" if c["slo"] in d["broken"] else "") + "</td></tr>"
                       for c in sorted(d["slo_changes"], key=lambda c: c["slo"] not in d["broken"]))
        parts.append(_table("SLOs that change state", ["SLO", "before", "after"], f"<tbody>{body}</tbody>"))
    if d["changes"]:
        body = "".join(f'<tr><th scope="row"><code>{esc(c["field"])}</code></th><td>{esc(c["before"])}</td>'
                       f'<td>{esc(c["after"])}</td><td><code>{esc(c["line"])}</code></td></tr>' for c in d["changes"])
        parts.append(_table("Configuration changes", ["field", "before", "after", "line"], f"<tbody>{body}</tbody>"))
    if d["answers"]:
        body = "".join(f'<tr><th scope="row">{esc(a["metric"])}</th><td>{esc(a["method"])}</td>'
                       f'<td>{esc(a["before"])}</td><td>{esc(a["after"])}</td></tr>' for a in d["answers"])
        parts.append(_table("Answers before and after", ["metric", "method", "before", "after"],
                            f"<tbody>{body}</tbody>"))
    if not (d["slo_changes"] or d["changes"] or d["answers"] or d.get("refused")):
        parts.append('<p class="small">No change.</p>')
    return "".join(parts) + "</section>"


def diff_page(doc: dict, source: str, generated: str) -> str:
    """The page of ``qosbound diff``: a headline (SLOs broken, exit code), then each port, the ports with a broken
    SLO first, then the ones that changed, then the unchanged ones."""
    ports = sorted(doc["ports"], key=lambda d: (not d["broken"], not (d["changes"] or d["slo_changes"]
                                                                      or d["answers"] or d["refused"])))
    broken = sum(len(d["broken"]) for d in ports)
    code = doc.get("exit_code")
    cls = "st-ok" if code == 0 else "st-fail"
    head = (f'<p class="verdict {cls}" role="status">{"✓" if code == 0 else "✗"} {broken} SLO'
            f'{"s" if broken != 1 else ""} broken; exit {esc(code)}: '
            f'{esc(EXIT_MEANING.get(code, "see the exit codes"))}</p>'
            f'<p>{esc(doc["old"])} → {esc(doc["new"])}; methods: {esc(", ".join(doc["methods"]))}</p>')
    body = "".join(f'<tr><th scope="row"><a href="#port-{k}">{esc(d["port"])}</a></th>'
                   f'<td>{len(d["changes"])}</td><td>{", ".join(esc(n) for n in d["broken"]) or "-"}</td></tr>'
                   for k, d in enumerate(ports))
    index = _table("Ports", ["port", "configuration changes", "SLOs broken"], f"<tbody>{body}</tbody>")
    sections = "".join(_diff_port(d, k) for k, d in enumerate(ports))
    return _frame(f"qosbound diff: {source}", f"qosbound diff: {esc(source)}", head + index + sections, generated)


def render(doc: dict, command: str, *, source: str | None = None, generated: str | None = None) -> str:
    """The page for ``command``'s document ``doc`` (what ``--json`` prints); ``source`` names what was run (the
    scenario arguments), ``generated`` when (default: now, UTC)."""
    generated = generated or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    source = source or str(doc.get("scenario") or "scenarios")
    if command == "admit":
        return admit_page(doc, source, generated)
    if command == "sweep":
        return sweep_page(doc, source, generated)
    if command == "diff":
        return diff_page(doc, source, generated)
    return scenarios_page(doc, command, source, generated)

