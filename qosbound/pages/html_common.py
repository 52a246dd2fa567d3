"""What every HTML page shares (:mod:`qosbound.pages.html_page`): the statuses and how they read, the page's one
script and its Content-Security-Policy, escaping, quantities in the reader's units, badges, tables, the frame
(head, style sheet, legend) and the overall verdict line."""

from __future__ import annotations

import base64
import hashlib
import html
import math
import re
from pathlib import Path

from qosbound import __version__
from qosbound.pages.reading import EXIT_MEANING
from qosbound.units import format_quantity

__all__ = ["STATUS", "SCRIPT", "KINDS", "csp", "esc", "q", "badge", "code_badge", "html_table", "strip_tags", "Page",
           "frame", "overall_verdict"]

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


def html_table(caption: str, head: list[str], body: str, cls: str = "plain", label: str | None = None) -> str:
    ths = "".join(f'<th scope="col">{h}</th>' for h in head)
    cap = f"<caption>{caption}</caption>" if caption else ""
    return (f'<div class="table" role="region" tabindex="0" aria-label="{esc(label or strip_tags(caption))}">'
            f'<table class="{cls}">{cap}<thead><tr>{ths}</tr></thead>{body}</table></div>')


def strip_tags(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", text))


class Page:
    """Accumulates one page; ``uid()`` gives each figure its own prefix for the ids inside its SVG."""

    def __init__(self):
        self.n = 0

    def uid(self, stem: str = "f") -> str:
        self.n += 1
        return f"{stem}{self.n}"


def frame(title: str, heading: str, body: str, generated: str) -> str:
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


def overall_verdict(doc: dict, n: int, failing: int) -> str:
    code = doc.get("exit_code")
    cls = "st-ok" if code == 0 else "st-warn" if code == 3 else "st-fail"
    sym = "✓" if code == 0 else "≠" if code == 3 else "✗"
    what = EXIT_MEANING.get(code, "see the exit codes") if code is not None else "no exit code"
    scen = f"{failing} of {n} scenarios fail; " if n > 1 else ""
    return f'<p class="verdict {cls}" role="status">{sym} {esc(scen)}exit {esc(code)}: {esc(what)}</p>'
