"""A short Markdown summary of a ``verify`` (or ``plan``) document, fit for a merge-request comment: the
verdict in one line, a table of the scenarios (failing first) or of the SLOs, each failing SLO with its
deciding method and kind, and a link to the HTML page (to each scenario's section and SLO row) when one was
written.

Every name from the document is escaped for Markdown (``| [ ] * _ ` \\ < >``), so a hostile scenario or SLO
name cannot break the table or inject markup.
"""

from __future__ import annotations

import math
import re
from urllib.parse import quote

from qosbound.pages.reading import EXIT_MEANING, ScenarioView, is_failing_code, scenario_view
from qosbound.units import format_quantity

__all__ = ["render", "md"]

#: Passing scenarios listed in a batch's table (every failing one is listed).
MAX_PASSING = 10

_SPECIAL = re.compile(r"([\\`*_\[\]|#!~])")


def md(text) -> str:
    """``text`` safe inside a Markdown table cell or link text."""
    s = _SPECIAL.sub(r"\\\1", str("" if text is None else text))
    return s.replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def _q(x, unit) -> str:
    if not isinstance(x, (int, float)) or not math.isfinite(x):
        return "-"
    return format_quantity(float(x), unit or "1")


def _link(text: str, html: str | None, anchor: str) -> str:
    return f"[{md(text)}]({quote(html)}#{anchor})" if html else md(text)


def _slo_text(row) -> str:
    d = row.deciding
    kind = f" [{d.get('result_kind')}]" if d.get("result_kind") else ""
    head = f"{d.get('method')}{kind}: {_q(d.get('value'), d.get('unit'))}, limit {_q(d.get('limit'), d.get('unit'))}"
    if row.failed and d.get("margin") is not None:
        return f"{row.status} by {_q(-d['margin'], d.get('unit'))} ({head})"
    return f"{row.status} ({head})"


def _scenario_lines(v: ScenarioView, html: str | None) -> list[str]:
    return [f"- **{_link(v.suite, html, v.anchor)}**: {_link(r.name, html, r.anchor)} - {md(_slo_text(r))}"
            for r in v.rows if r.failed or r.status == "inconclusive"]


def render(doc: dict, command: str = "verify", html: str | None = None) -> str:
    """The summary; ``html`` is the link to the page (relative to where the summary is written), or None."""
    docs = doc["scenarios"] if isinstance(doc.get("scenarios"), list) else [doc]
    views = sorted((scenario_view(d) for d in docs), key=lambda v: v.sort_key)
    code = doc.get("exit_code")
    sym = "✅" if code == 0 else "⚠️" if code == 3 else "❌"
    failing = sum(is_failing_code(v.exit_code) for v in views)
    what = EXIT_MEANING.get(code, "see the exit codes")
    name = views[0].suite if len(views) == 1 else f"{len(views)} scenarios"
    out = [f"### {sym} qosbound {md(command)}: {md(name)} - exit {code}, {md(what)}", ""]
    if len(views) > 1:
        out += [f"{failing} of {len(views)} scenarios fail.", "", "| scenario | verdict | SLOs | tightest SLO |",
                "|---|---|---|---|"]
        passing = [v for v in views if not is_failing_code(v.exit_code)]
        shown = [v for v in views if is_failing_code(v.exit_code)] + passing[:MAX_PASSING]
        for v in shown:
            if v.error:
                out.append(f"| {_link(v.suite, html, v.anchor)} | ❌ not evaluated | - | {md(v.error)} |")
                continue
            n, nf = len(v.rows), v.failed_slos
            verdict = "✅ pass" if v.exit_code == 0 else "⚠️ methods disagree" if v.exit_code == 3 else "❌ fails"
            t = v.tightest
            tight = f"{_link(t.name, html, t.anchor)}: {md(_slo_text(t))}" if t else "-"
            out.append(f"| {_link(v.suite, html, v.anchor)} | {verdict} | {nf} fail, {n - nf} hold | {tight} |")
        if len(passing) > MAX_PASSING:
            out.append(f"| ... | ✅ {len(passing) - MAX_PASSING} more pass | | |")
    else:
        v = views[0]
        if v.error:
            out.append(f"Not evaluated: {md(v.error)}")
        else:
            out += ["| SLO | verdict |", "|---|---|"]
            for r in v.rows:
                mark = "❌" if r.failed else "⚠️" if r.status == "inconclusive" else "✅"
                out.append(f"| {_link(r.name, html, r.anchor)} | {mark} {md(_slo_text(r))} |")
    bad = [line for v in views if not v.error for line in _scenario_lines(v, html)]
    if bad and len(views) > 1:
        out += ["", "Failing or inconclusive SLOs:", *bad]
    disagree = sum(a.get("status") == "disagree" for v in views for a in v.agreements)
    if disagree:
        out += ["", f"{disagree} agreement check(s) between methods disagree (a finding about the methods, not an "
                    "SLO)."]
    if html:
        out += ["", f"Full report (inputs, every metric by method, delay CCDFs, agreement checks): [{md(html)}]({quote(html)})"]
    return "\n".join(out) + "\n"
