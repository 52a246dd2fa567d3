"""Rendering results and verdicts: text tables (rich), JSON, JUnit XML, Markdown."""

from __future__ import annotations

import json
import os
import sys
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from qosbound.errors import QosboundError
from qosbound.anchors import scenario_anchor, section_anchor, slo_anchor
from qosbound.results import METHODS, Kind, Result, Verdict
from qosbound.units import format_quantity

__all__ = ["render_text", "render_json", "json_document", "write_junit", "write_junit_error", "write_junit_batch",
           "junit_suites", "junit_error_suite", "render_markdown", "curves_json", "console", "split", "omitted", "skipped_lines",
           "fmt_interval", "slo_line", "agreement_line", "slo_outcomes", "slo_counts", "slo_summary", "inputs_block"]


def console(file=None):
    from rich.console import Console  # costly at start-up (rich): loaded when a report prints, not for --help

    return Console(file=file or sys.stdout, soft_wrap=False, width=160 if not (file or sys.stdout).isatty() else None)


def fmt_interval(r: Result) -> str:
    """The result's interval and kind: '[7.87 ms, 7.88 ms] 95% CI', 'upper bound', 'approximation (neglects ...)'.

    The bounds are shown only when they differ from the value at the printed precision (a numerical interval
    1e-10 wide is 'numerical', with its half-width); every number carries the result's unit."""
    iv = r.interval
    if iv is None:
        return ""
    label = iv.describe()
    if iv.low == iv.high:
        return label
    if iv.kind is Kind.NUMERICAL:  # an error bound: shown as a half-width (none below the normal floats)
        h = max(iv.high - r.value, r.value - iv.low)
        return f"{label}, ±{format_quantity(h, r.unit, digits=2)}" if h >= 1e-300 else label
    lo, hi, val = (format_quantity(x, r.unit) for x in (iv.low, iv.high, r.value))
    if lo == val == hi:
        return f"{label}, ±{format_quantity(iv.half_width, r.unit, digits=2)}"
    return f"[{lo}, {hi}] {label}"


def _status_style(status: str) -> str:
    return {"holds": "green", "violated": "bold red", "disagree": "bold red", "missing": "red",
            "inconclusive": "yellow", "agree": "green", "approximate": "yellow"}.get(status, "")


def _q(x: float | None, unit: str) -> str:
    return format_quantity(x, unit) if x is not None else "-"


def omitted(results: list[Result]) -> list[str]:
    """Why a method left metrics out (``provenance['omitted']``), one line each."""
    out = []
    for r in results:
        for pattern, reason in (r.provenance.get("omitted") or {}).items():
            line = f"{pattern} by {r.method} omitted: {reason}"
            if line not in out:
                out.append(line)
    return out


def skipped_lines(skipped: dict[str, str] | None) -> list[str]:
    """Why a method was skipped (e.g. its model is above the state budget), one line each."""
    return [f"{m} skipped: {why}" for m, why in (skipped or {}).items()]


def split(verdicts: list[Verdict]) -> tuple[list[Verdict], list[Verdict]]:
    """(SLO verdicts, agreement verdicts)."""
    return [v for v in verdicts if v.kind == "slo"], [v for v in verdicts if v.kind != "slo"]


def slo_outcomes(slos: list[Verdict]) -> list[tuple[str, str, list[Verdict]]]:
    """One outcome per SLO, in file order: (SLO name, status, its verdicts -- one per method that judged it).

    An SLO fails ('violated', or 'missing' when no method produced its metric) when a verdict on it fails: the
    rule the exit code follows, so the counts, the exit code and the lines agree. It is 'inconclusive' when
    none fails but a confidence interval straddles the limit, else it 'holds'. Verdicts belong to one SLO when
    they share its name and metric."""
    groups: dict[tuple[str, str], list[Verdict]] = {}
    for v in slos:
        groups.setdefault((v.name, v.metric), []).append(v)
    out = []
    for (name, _), vs in groups.items():
        failed = [v for v in vs if v.failed]
        if failed:
            status = "violated" if any(v.status == "violated" for v in failed) else "missing"
        elif any(v.status == "inconclusive" for v in vs):
            status = "inconclusive"
        else:
            status = "holds"
        out.append((name, status, vs))
    return out


def slo_counts(slos: list[Verdict]) -> dict[str, int]:
    """How many SLOs hold and fail (per SLO, not per method: see :func:`slo_outcomes`); 'inconclusive' SLOs
    count as holding, as their exit code does, and are also counted apart."""
    outcomes = slo_outcomes(slos)
    fail = sum(st in ("violated", "missing") for _, st, _ in outcomes)
    return {"slos": len(outcomes), "hold": len(outcomes) - fail, "fail": fail,
            "inconclusive": sum(st == "inconclusive" for _, st, _ in outcomes),
            "missing": sum(st == "missing" for _, st, _ in outcomes), "verdicts": len(slos)}


def slo_summary(slos: list[Verdict]) -> str:
    """'SLOs 1 hold, 1 fail' (per SLO), with how many method verdicts decided them when that differs, and how
    many failed only because no requested method gives their metric."""
    n = slo_counts(slos)
    text = f"SLOs {n['hold']} hold, {n['fail']} fail"
    notes = []
    if n["inconclusive"]:
        notes.append(f"{n['inconclusive']} inconclusive")
    if n["missing"]:
        notes.append(f"{n['missing']} not judged: no requested method gives the metric")
    if n["verdicts"] != n["slos"]:
        notes.append(f"{n['verdicts']} method verdicts")
    return text + "".join(f" ({x})" for x in notes)


def inputs_block(inputs) -> list[str]:
    """The text lines of the inputs as understood (:class:`qosbound.understood.Inputs`); [] for none."""
    return inputs.lines() if inputs is not None else []


def render_text(scenario_name: str, results: list[Result], verdicts: list[Verdict], out=None,
                title: str | None = None, skipped: dict[str, str] | None = None, inputs=None) -> None:
    """The report of ``plan``: the inputs as understood, the results table, notes, the SLO verdicts and the
    agreement checks."""
    from rich.markup import escape as escape_markup  # costly at start-up (rich), as in console()
    from rich.table import Table  # costly at start-up (rich), as in console()

    c = console(out)
    for line in inputs_block(inputs):
        c.print(escape_markup(line), highlight=False)
    t = Table(title=title or f"qosbound: {scenario_name}", title_justify="left")
    t.add_column("metric")
    t.add_column("method")
    t.add_column("value", justify="right")
    t.add_column("kind and interval", overflow="fold", max_width=60)
    t.add_column("provenance", overflow="fold", max_width=50)
    order = {m: i for i, m in enumerate(METHODS)}
    metrics_order: list[str] = []
    for r in results:
        if r.metric not in metrics_order:
            metrics_order.append(r.metric)
    rows = sorted(results, key=lambda r: (metrics_order.index(r.metric), order.get(r.method, 99)))
    prev = None
    for r in rows:
        src = str(r.provenance.get("source", r.provenance.get("formula", "")))
        if r.provenance.get("config"):  # an imported port: the configuration lines of the class first
            src = f"config {r.provenance['config']}; {src}"
        if r.estimates:
            src = f"estimates {r.estimates}; {src}"
        if r.bounds:
            src = f"also bounds {', '.join(r.bounds)}; {src}"
        t.add_row(r.metric if r.metric != prev else "", r.method, format_quantity(r.value, r.unit),
                  escape_markup(fmt_interval(r)), escape_markup(src))
        prev = r.metric
    c.print(t)
    for line in omitted(results) + skipped_lines(skipped):
        c.print(f"[yellow]note[/] {escape_markup(line)}", highlight=False)
    slos, agree = split(verdicts)
    for heading, group in (("SLO verdicts", slos), ("agreement between methods", agree)):
        if not group:
            continue
        v = Table(title=heading, title_justify="left")
        v.add_column("check")
        v.add_column("method")
        v.add_column("status")
        v.add_column("value", justify="right")
        v.add_column("limit" if heading.startswith("SLO") else "reference", justify="right")
        v.add_column("margin", justify="right")
        v.add_column("detail", overflow="fold", max_width=60)
        for x in group:
            detail = x.detail
            if x.kind == "slo" and x.result_kind:
                detail = f"({x.result_kind}) {detail}".strip()
            v.add_row(escape_markup(x.name), x.method, f"[{_status_style(x.status)}]{x.status}[/]",
                      _q(x.value, x.unit), _q(x.limit, x.unit), _q(x.margin, x.unit), escape_markup(detail))
        c.print(v)
        if heading.startswith("SLO"):
            c.print(escape_markup(slo_summary(group)), highlight=False)


def curves_json(results: list[Result]) -> list[dict]:
    """The curves the results were read from (:attr:`Result.curve`), each once, in the results' order."""
    out, seen = [], set()
    for r in results:
        if r.curve is not None and id(r.curve) not in seen:
            seen.add(id(r.curve))
            out.append(r.curve.to_json())
    return out


def json_document(scenario: Any, results: list[Result], verdicts: list[Verdict], extra: dict | None = None,
                  curves_of: list[Result] | None = None) -> dict:
    """The machine-readable form of one scenario's results and verdicts (what ``--json`` prints); ``curves``
    holds the curves of ``curves_of`` (default: of ``results``)."""
    slos, agree = split(verdicts)
    doc = {"scenario": scenario, "metrics": [r.to_json() for r in results],
           "verdicts": [v.to_json() for v in verdicts],
           "slo_verdicts": [v.to_json() for v in slos], "agreement_verdicts": [v.to_json() for v in agree],
           "omitted": omitted(results), "curves": curves_json(results if curves_of is None else curves_of)}
    if extra:
        doc.update(extra)
    return doc


def render_json(scenario: Any, results: list[Result], verdicts: list[Verdict], extra: dict | None = None) -> str:
    return json.dumps(json_document(scenario, results, verdicts, extra), indent=2, allow_nan=False)


def slo_line(v: Verdict) -> str:
    """One SLO verdict as ``verify`` prints it (rich markup): 'ok   NAME (method [kind]: value, limit L)' or
    'FAIL NAME: violated by X (...)'; 'WARN' when a confidence interval straddles the limit."""
    from rich.markup import escape as escape_markup  # costly at start-up (rich), as in console()

    kind = escape_markup(f" [{v.result_kind}]") if v.result_kind else ""
    detail = f" - {escape_markup(v.detail)}" if v.detail else ""
    if v.failed:
        by = f"by {format_quantity(-v.margin, v.unit)} " if v.margin is not None else ""
        return (f"[bold red]FAIL[/] {v.name}: {v.status} {by}({v.method}{kind}: {_q(v.value, v.unit)}, "
                f"limit {_q(v.limit, v.unit)}){detail}")
    tag = "[yellow]WARN[/]" if v.status == "inconclusive" else "[green]ok[/]  "
    return f"{tag} {v.name} ({v.method}{kind}: {_q(v.value, v.unit)}, limit {_q(v.limit, v.unit)}){detail}"


def agreement_line(v: Verdict) -> str:
    """One agreement verdict as ``verify`` prints it (rich markup): 'agree', 'approximate' or 'DISAGREE'."""
    from rich.markup import escape as escape_markup  # costly at start-up (rich), as in console()

    tag = {"agree": "[green]agree[/]     ", "approximate": "[yellow]approximate[/]",
           "disagree": "[bold red]DISAGREE[/]  "}.get(v.status, v.status)
    return f"{tag} {escape_markup(v.name)} ({escape_markup(v.result_kind)}) - {escape_markup(v.detail)}"


def _testcase_name(v: Verdict) -> str:
    return f"{v.name} [{v.method}]" if v.kind == "slo" else v.name


def _message(v: Verdict) -> str:
    msg = f"{v.status}: value {_q(v.value, v.unit)}, {'limit' if v.kind == 'slo' else 'reference'} {_q(v.limit, v.unit)}"
    if v.margin is not None:
        msg += f", margin {_q(v.margin, v.unit)}"
    if v.result_kind:
        msg += f" ({v.result_kind})"
    if v.detail:
        msg += f"; {v.detail}"
    return msg


def _suite(name: str, classname: str, verdicts: list[Verdict], seconds: dict[str, float], failing,
           properties: list[tuple[str, str]] = (), link=None) -> list[str]:
    """One <testsuite>: its <properties> (the inputs as understood), then a <testcase> per verdict with a unique
    name, its time and its result's kind; ``link(verdict)``, when given, is the verdict's place in the HTML page
    (a testcase property ``html``)."""
    names: dict[str, int] = {}
    cases = []
    involved: set[str] = set()
    for v in verdicts:
        base = _testcase_name(v)
        k = names.get(base, 0) + 1
        names[base] = k
        case = base if k == 1 else f"{base} #{k}"
        t = sum(seconds.get(m, 0.0) for m in v.method.split(" vs "))
        involved.update(v.method.split(" vs "))
        lines = [f'    <testcase classname={quoteattr(classname)} name={quoteattr(case)} time="{t:.3f}">']
        props = [("metric", v.metric), ("method", v.method), ("status", v.status)]
        if v.result_kind:
            props.append(("kind", v.result_kind))
        if link is not None:
            props.append(("html", link(v)))
        lines.append("      <properties>" + "".join(f"<property name={quoteattr(a)} value={quoteattr(b)}/>"
                                                    for a, b in props) + "</properties>")
        msg = _message(v)
        if failing(v):
            lines.append(f"      <failure message={quoteattr(msg)} type={quoteattr(v.status)}>{escape(msg)}</failure>")
        else:
            lines.append(f"      <system-out>{escape(msg)}</system-out>")
        lines.append("    </testcase>")
        cases += lines
    failures = sum(1 for v in verdicts if failing(v))
    total = sum(seconds.get(m, 0.0) for m in involved)
    head = (f'  <testsuite name={quoteattr(name)} tests="{len(verdicts)}" failures="{failures}" errors="0" '
            f'skipped="0" time="{total:.3f}">')
    props = (["    <properties>"] + [f"      <property name={quoteattr(a)} value={quoteattr(b)}/>" for a, b in properties]
             + ["    </properties>"]) if properties else []
    return [head] + props + cases + ["  </testsuite>"]


def _slo_suite(name: str, slos: list[Verdict], seconds: dict[str, float], properties) -> list[str]:
    """One <testsuite> with a <testcase> per SLO (not per method): it fails when a verdict on the SLO fails, its
    message lists every method's verdict; the methods' time is shared out evenly over the testcases, so the
    times add up to the evaluation's."""
    outcomes = slo_outcomes(slos)
    total = sum(seconds.values())
    each = total / len(outcomes) if outcomes else 0.0
    names: dict[str, int] = {}
    cases = []
    failures = 0
    for title, status, vs in outcomes:
        k = names.get(title, 0) + 1
        names[title] = k
        case = title if k == 1 else f"{title} #{k}"
        msg = "; ".join(f"{v.method}: {_message(v)}" for v in vs)
        props = [("metric", vs[0].metric), ("status", status), ("methods", ", ".join(v.method for v in vs))]
        cases.append(f'    <testcase classname={quoteattr(name)} name={quoteattr(case)} time="{each:.3f}">')
        cases.append("      <properties>" + "".join(f"<property name={quoteattr(a)} value={quoteattr(b)}/>"
                                                    for a, b in props) + "</properties>")
        if status in ("violated", "missing"):
            failures += 1
            cases.append(f"      <failure message={quoteattr(msg)} type={quoteattr(status)}>{escape(msg)}</failure>")
        else:
            cases.append(f"      <system-out>{escape(msg)}</system-out>")
        cases.append("    </testcase>")
    head = (f'  <testsuite name={quoteattr(name)} tests="{len(outcomes)}" failures="{failures}" errors="0" '
            f'skipped="0" time="{total:.3f}">')
    props = (["    <properties>"]
             + [f"      <property name={quoteattr(a)} value={quoteattr(b)}/>" for a, b in properties]
             + ["    </properties>"]) if properties else []
    return [head] + props + cases + ["  </testsuite>"]


def junit_suites(suite: str, verdicts: list[Verdict], seconds: dict[str, float] | None = None,
                 skipped: dict[str, str] | None = None, inputs=None, html: str | None = None,
                 per_slo: bool = False) -> list[str]:
    """The <testsuite> elements of one scenario (see :func:`write_junit`), as lines; ``per_slo``: the SLO suite
    has one testcase per SLO (:func:`_slo_suite`), as ``verify`` on router configurations writes it."""
    seconds = seconds or {}
    slos, agree = split(verdicts)
    props = inputs.properties() if inputs is not None else []
    slo_link = agree_link = None
    if html:
        props = [("html_report", f"{html}#{scenario_anchor(suite)}"), *props]
        slo_link = lambda v: f"{html}#{slo_anchor(suite, v.name)}"  # noqa: E731
        agree_link = lambda v: f"{html}#{section_anchor(suite, 'agreement')}"  # noqa: E731
    lines = (_slo_suite(f"{suite}.slo", slos, seconds, props) if per_slo else
             _suite(f"{suite}.slo", f"{suite}.slo", slos, seconds, lambda v: v.failed, props, slo_link))
    lines += _suite(f"{suite}.agreement", f"{suite}.agreement", agree, seconds, lambda v: v.disagrees,
                    [("html_report", f"{html}#{section_anchor(suite, 'agreement')}")] if html else (), agree_link)
    if skipped:
        name = quoteattr(f"{suite}.methods")
        lines.append(f'  <testsuite name={name} tests="{len(skipped)}" failures="0" skipped="{len(skipped)}">')
        for m, why in skipped.items():
            lines += [f'    <testcase classname={name} name={quoteattr(m)} time="0.000">',
                      f"      <skipped message={quoteattr(why)}/>", "    </testcase>"]
        lines.append("  </testsuite>")
    return lines


def write_junit(path: str, suite: str, verdicts: list[Verdict], seconds: dict[str, float] | None = None,
                skipped: dict[str, str] | None = None, inputs=None, html: str | None = None,
                per_slo: bool = False) -> None:
    """JUnit XML with two test suites: ``<suite>.slo`` (its ``<properties>`` the inputs as understood,
    ``input.<field>``; a failure per SLO verdict that does not hold) and
    ``<suite>.agreement`` (a failure per pair of methods that disagree). Every verdict is one testcase whose
    name is unique and names the metric and the method(s); ``time`` is the time spent computing the results it
    judges (``seconds``: per method). A method skipped on a budget is a ``<skipped>`` testcase of a third suite,
    ``<suite>.methods``, with the reason. ``html``: the link to the ``--html`` page (relative to the report),
    given as the property ``html_report`` of each suite (to the scenario's section) and ``html`` of each testcase
    (to its SLO's row, or to the agreement checks)."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', f"<testsuites name={quoteattr(suite)}>"]
    lines += junit_suites(suite, verdicts, seconds, skipped, inputs, html, per_slo=per_slo)
    lines.append("</testsuites>")
    _write(path, "\n".join(lines) + "\n")


def junit_error_suite(suite: str, error: BaseException, seconds: float = 0.0, html: str | None = None) -> list[str]:
    """The <testsuite> ``<suite>.input`` of a scenario that could not be loaded or evaluated: one failing
    testcase carrying the message and the error's type (and the link to the page's section, ``html_report``)."""
    msg = str(error) or type(error).__name__
    props = ([f'    <properties><property name="html_report" value={quoteattr(f"{html}#{scenario_anchor(suite)}")}/>'
              "</properties>"] if html else [])
    return [f'  <testsuite name={quoteattr(suite + ".input")} tests="1" failures="1" errors="0" skipped="0" '
            f'time="{seconds:.3f}">', *props,
            f'    <testcase classname={quoteattr(suite + ".input")} name="scenario loads and evaluates" '
            f'time="{seconds:.3f}">',
            f"      <failure message={quoteattr(msg)} type={quoteattr(type(error).__name__)}>{escape(msg)}</failure>",
            "    </testcase>", "  </testsuite>"]


def write_junit_error(path: str, suite: str, error: BaseException, seconds: float = 0.0,
                      html: str | None = None) -> None:
    """A JUnit report for a run that could not be evaluated (bad input, engine failure): one failing testcase
    carrying the message, so CI shows why."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', f"<testsuites name={quoteattr(suite)}>",
             *junit_error_suite(suite, error, seconds, html), "</testsuites>"]
    _write(path, "\n".join(lines) + "\n")


def write_junit_batch(path: str, name: str, groups: list[list[str]]) -> None:
    """One JUnit report for several scenarios: ``groups`` holds each scenario's <testsuite> lines (from
    :func:`junit_suites` or :func:`junit_error_suite`, under a name unique in the batch), in order."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', f"<testsuites name={quoteattr(name)}>"]
    for g in groups:
        lines += g
    lines.append("</testsuites>")
    _write(path, "\n".join(lines) + "\n")


def _write(path: str, text: str) -> None:
    """Write the report whole or not at all (a signal during the write leaves no half of it): a temporary
    file beside it, renamed over it; a special file (e.g. /dev/stdout) is written directly."""
    tmp = None
    try:
        if os.path.exists(path) and not os.path.isfile(path):
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            return
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        raise QosboundError(f"--junit {path}: cannot write the report: {e.strerror or e}") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def render_markdown(results: list[Result], verdicts: list[Verdict]) -> str:
    out = ["| metric | method | value | kind and interval |", "|---|---|---|---|"]
    for r in results:
        out.append(f"| {r.metric} | {r.method} | {format_quantity(r.value, r.unit)} | {fmt_interval(r)} |")
    if verdicts:
        out += ["", "| check | method | status | value | limit |", "|---|---|---|---|---|"]
        for v in verdicts:
            out.append(f"| {v.name} | {v.method} | {v.status} | {_q(v.value, v.unit)} | {_q(v.limit, v.unit)} |")
    return "\n".join(out) + "\n"
