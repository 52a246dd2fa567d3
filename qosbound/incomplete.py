"""Reports of a run stopped by SIGINT or SIGTERM: what was done, marked incomplete.

A CI job cancelled half-way must still leave a report that says so, never one that looks finished. When a
signal stops ``verify``, ``plan``, ``admit`` or a batch (:mod:`qosbound.interrupts`), the command writes
what it had when the signal came:

* JUnit XML: the verdicts judged on the methods that finished, as usual; the scenario's ``NAME.slo`` suite
  carries the properties ``incomplete`` = ``true``, ``signal`` (``SIGINT`` / ``SIGTERM``), ``methods_done``
  and ``methods_not_done``; one ``<error>`` testcase ``interrupted by SIGTERM`` names the signal and what
  was stopped; each SLO no finished method judged is a ``<skipped>`` testcase ("not judged"). A scenario a
  batch never reached is such a suite with the error testcase only.
* JSON: the usual document with ``"complete": false`` and an ``"interrupted"`` object (the signal, the exit
  code, the message, what was done and what was not); a finished run's document has ``"complete": true``.

The exit code is the signal's (130 / 143), whatever the partial verdicts say.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from qosbound import interrupts

__all__ = ["signal_of", "interrupted_info", "split_judged", "mark_junit_suites", "incomplete_suites"]


def signal_of(error) -> str:
    """The name of the signal that stopped the run: the run's first, else the one ``error`` stands for."""
    sig = interrupts.received()
    if sig is not None:
        return interrupts.signal_name(sig)
    code = getattr(error, "exit_code", None)
    return "SIGINT" if code == interrupts.EXIT_INTERRUPT else "SIGTERM"


def exit_code_of(error) -> int:
    """130 (SIGINT) or 143 (SIGTERM): the exit code of a run stopped by ``error``'s signal."""
    return interrupts.EXIT_INTERRUPT if signal_of(error) == "SIGINT" else interrupts.EXIT_TERMINATED


def interrupted_info(error, **done) -> dict:
    """The ``"interrupted"`` object of a JSON document: signal, exit code, message, and ``done`` (e.g.
    ``methods_done=[...]``, ``methods_not_done=[...]``)."""
    return {"signal": signal_of(error), "exit_code": exit_code_of(error), "message": message_of(error), **done}


def message_of(error) -> str:
    """The one-line message of the interruption."""
    text = str(error) if isinstance(error, Exception) else ""
    if text and text not in ("SIGINT", "SIGTERM"):
        return text
    sig = signal_of(error)
    return f"{'interrupted' if sig == 'SIGINT' else 'terminated'} ({sig})"


def split_judged(verdicts) -> tuple[list, list]:
    """(SLO and agreement verdicts judged on what finished, names of SLOs no finished method judged)."""
    judged = [v for v in verdicts if not (v.kind == "slo" and v.status == "missing")]
    unjudged = [v.name for v in verdicts if v.kind == "slo" and v.status == "missing"]
    return judged, unjudged


def _suites(lines: list[str]) -> list[ET.Element]:
    root = ET.fromstring("<testsuites>" + "\n".join(lines) + "</testsuites>")
    return list(root)


def _lines(elements: list[ET.Element]) -> list[str]:
    out = []
    for el in elements:
        ET.indent(el, space="  ", level=1)
        text = ET.tostring(el, encoding="unicode").rstrip()
        out += ["  " + text.splitlines()[0]] + text.splitlines()[1:]
    return out


def mark_junit_suites(lines: list[str], suite: str, error, *, unjudged=(), done=(), not_done=(),
                      seconds: float = 0.0) -> list[str]:
    """One scenario's ``<testsuite>`` lines (:func:`qosbound.report.junit_suites`, possibly none) with its
    ``SUITE.slo`` suite marked incomplete (see the module docstring)."""
    elements = _suites(lines) if lines else []
    name = f"{suite}.slo"
    slo = next((e for e in elements if e.get("name") == name), None)
    if slo is None:
        slo = ET.Element("testsuite", {"name": name, "tests": "0", "failures": "0", "errors": "0", "skipped": "0",
                                       "time": f"{seconds:.3f}"})
        elements.insert(0, slo)
    sig = signal_of(error)
    props = slo.find("properties")  # e.g. the inputs as understood: one <properties> per suite, extended
    if props is None:
        props = ET.Element("properties")
        slo.insert(0, props)
    for i, (key, value) in enumerate((("incomplete", "true"), ("signal", sig), ("methods_done", ", ".join(done)),
                                      ("methods_not_done", ", ".join(not_done)))):
        props.insert(i, ET.Element("property", {"name": key, "value": value}))
    for title in unjudged:
        case = ET.SubElement(slo, "testcase", {"classname": name, "name": f"{title} [not judged]", "time": "0.000"})
        ET.SubElement(case, "skipped", {"message": f"not judged: the run was stopped by {sig} before a method "
                                                   "that judges it finished"})
    msg = message_of(error)
    case = ET.SubElement(slo, "testcase", {"classname": name, "name": f"interrupted by {sig}",
                                           "time": f"{seconds:.3f}"})
    err = ET.SubElement(case, "error", {"message": msg, "type": "Interrupted"})
    err.text = msg + (f"; finished: {', '.join(done)}" if done else "") + (
        f"; not finished: {', '.join(not_done)}" if not_done else "")
    slo.set("tests", str(int(slo.get("tests", "0")) + len(unjudged) + 1))
    slo.set("errors", str(int(slo.get("errors", "0")) + 1))
    slo.set("skipped", str(int(slo.get("skipped", "0")) + len(unjudged)))
    return _lines(elements)


def incomplete_suites(suite: str, error, seconds: float = 0.0) -> list[str]:
    """The suite of a scenario that nothing was done for (a batch stopped before it)."""
    return mark_junit_suites([], suite, error, seconds=seconds)
