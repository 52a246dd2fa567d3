"""Rendering results and verdicts: text tables (rich), JSON, JUnit XML, Markdown."""

from __future__ import annotations

import json
import sys
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from qosbound.results import METHODS, Result, Verdict
from qosbound.units import format_quantity

__all__ = ["render_text", "render_json", "write_junit", "render_markdown", "console"]


def console(file=None):
    from rich.console import Console

    return Console(file=file or sys.stdout, soft_wrap=False, width=160 if not (file or sys.stdout).isatty() else None)


def fmt_interval(r: Result) -> str:
    iv = r.interval
    if iv is None:
        return ""
    label = iv.label()
    if iv.neglects:
        label += f" (neglects {iv.neglects})"
    if iv.low == iv.high:
        return label
    return f"[{format_quantity(iv.low, r.unit)}, {format_quantity(iv.high, r.unit)}] {label}"


def _status_style(status: str) -> str:
    return {"holds": "green", "violated": "bold red", "disagree": "bold red", "missing": "red",
            "inconclusive": "yellow", "agree": "green", "approximate": "yellow"}.get(status, "")


def render_text(scenario_name: str, results: list[Result], verdicts: list[Verdict], out=None,
                title: str | None = None) -> None:
    from rich.table import Table

    c = console(out)
    t = Table(title=title or f"qosbound: {scenario_name}", title_justify="left")
    t.add_column("metric")
    t.add_column("method")
    t.add_column("value", justify="right")
    t.add_column("interval")
    t.add_column("provenance", overflow="fold", max_width=60)
    order = {m: i for i, m in enumerate(METHODS)}
    metrics_order: list[str] = []
    for r in results:
        if r.metric not in metrics_order:
            metrics_order.append(r.metric)
    rows = sorted(results, key=lambda r: (metrics_order.index(r.metric), order.get(r.method, 99)))
    prev = None
    for r in rows:
        t.add_row(r.metric if r.metric != prev else "", r.method, format_quantity(r.value, r.unit),
                  fmt_interval(r), str(r.provenance.get("source", r.provenance.get("formula", ""))))
        prev = r.metric
    c.print(t)
    if verdicts:
        v = Table(title="verdicts", title_justify="left")
        v.add_column("check")
        v.add_column("method")
        v.add_column("status")
        v.add_column("value", justify="right")
        v.add_column("limit", justify="right")
        v.add_column("margin", justify="right")
        v.add_column("detail", overflow="fold", max_width=50)
        for x in verdicts:
            v.add_row(x.name, x.method, f"[{_status_style(x.status)}]{x.status}[/]",
                      format_quantity(x.value, x.unit) if x.value is not None else "-",
                      format_quantity(x.limit, x.unit) if x.limit is not None else "-",
                      format_quantity(x.margin, x.unit) if x.margin is not None else "-", x.detail)
        c.print(v)


def render_json(scenario: Any, results: list[Result], verdicts: list[Verdict], extra: dict | None = None) -> str:
    doc = {"scenario": scenario, "metrics": [r.to_json() for r in results],
           "verdicts": [v.to_json() for v in verdicts]}
    if extra:
        doc.update(extra)
    return json.dumps(doc, indent=2, allow_nan=False)


def write_junit(path: str, suite: str, verdicts: list[Verdict]) -> None:
    """One testcase per verdict; violated/disagree/missing are failures."""
    failures = sum(1 for v in verdicts if v.failed)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites><testsuite name={quoteattr(suite)} tests="{len(verdicts)}" failures="{failures}" '
             f'errors="0" skipped="0">']
    for v in verdicts:
        name = f"{v.name} [{v.method}]"
        lines.append(f'  <testcase classname={quoteattr(suite + "." + v.kind)} name={quoteattr(name)}>')
        if v.failed:
            msg = (f"{v.status}: value {format_quantity(v.value, v.unit) if v.value is not None else '-'}, "
                   f"limit {format_quantity(v.limit, v.unit) if v.limit is not None else '-'}"
                   f"{', margin ' + format_quantity(v.margin, v.unit) if v.margin is not None else ''}"
                   f"{'; ' + v.detail if v.detail else ''}")
            lines.append(f"    <failure message={quoteattr(msg)}>{escape(msg)}</failure>")
        elif v.status == "inconclusive":
            lines.append(f"    <system-out>{escape(v.detail)}</system-out>")
        lines.append("  </testcase>")
    lines.append("</testsuite></testsuites>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def render_markdown(results: list[Result], verdicts: list[Verdict]) -> str:
    out = ["| metric | method | value | interval |", "|---|---|---|---|"]
    for r in results:
        out.append(f"| {r.metric} | {r.method} | {format_quantity(r.value, r.unit)} | {fmt_interval(r)} |")
    if verdicts:
        out += ["", "| check | method | status | value | limit |", "|---|---|---|---|---|"]
        for v in verdicts:
            out.append(f"| {v.name} | {v.method} | {v.status} | "
                       f"{format_quantity(v.value, v.unit) if v.value is not None else '-'} | "
                       f"{format_quantity(v.limit, v.unit) if v.limit is not None else '-'} |")
    return "\n".join(out) + "\n"
