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

import datetime

from qosbound.pages.admit_html import admit_page, admit_section
from qosbound.pages.diff_html import diff_page
from qosbound.pages.html_common import SCRIPT, STATUS, csp
from qosbound.pages.scenarios_html import scenario_section, scenarios_page
from qosbound.pages.sweep_html import sweep_page

__all__ = ["render", "STATUS", "SCRIPT", "csp", "scenarios_page", "scenario_section", "admit_page", "admit_section",
           "sweep_page", "diff_page"]

# The pages' parts live in modules along their jobs and are read from here: what every page shares
# (html_common), the plan/verify page and the pieces of a scenario (scenarios_html), the admit, sweep and diff
# pages (admit_html, sweep_html, diff_html).


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
