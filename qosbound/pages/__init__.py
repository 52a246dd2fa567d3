"""Pages for people, made from the commands' JSON documents: one self-contained HTML report
(:mod:`qosbound.pages.html_page`) and a short Markdown summary for a merge-request comment
(:mod:`qosbound.pages.markdown`), both linking into each other by the anchors of :mod:`qosbound.anchors`.

A command builds its ``--json`` document and hands it here; nothing here knows a system, so a new system or
command gets a page as soon as its document follows docs/results.md.
"""

from __future__ import annotations

import os

from qosbound.errors import QosboundError
from qosbound.pages import markdown

__all__ = ["render_html", "write_html", "write_markdown", "link_from"]


def render_html(doc: dict, command: str, *, source: str | None = None, generated: str | None = None) -> str:
    """The HTML page of ``command``'s document (see :func:`qosbound.pages.html_page.render`)."""
    from qosbound.pages.html_page import render  # costly (matplotlib, for the page's plots): only for a page

    return render(doc, command, source=source, generated=generated)


def write_html(path: str, doc: dict, command: str, *, source: str | None = None) -> None:
    """Write the page to ``path`` (refused as ``--html PATH: ...`` when it cannot be written)."""
    write_text(path, render_html(doc, command, source=source), "--html")


def write_markdown(path: str, doc: dict, command: str, *, html: str | None = None) -> None:
    """Write the Markdown summary to ``path``; ``html`` is the link to the page from there (None: no page)."""
    write_text(path, markdown.render(doc, command, html=html), "--markdown")


def write_text(path: str, text: str, flag: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise QosboundError(f"{flag} {path}: cannot write the report: {e.strerror or e}") from None


def link_from(report: str, page: str) -> str:
    """The link to ``page`` from a report written at ``report`` (relative to the report's folder, with '/')."""
    rel = os.path.relpath(os.path.abspath(page), os.path.dirname(os.path.abspath(report)))
    return rel.replace(os.sep, "/")
