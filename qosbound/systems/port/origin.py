"""The configuration lines behind each class of an imported port (the scenario's ``provenance``, written by
:mod:`qosbound.configs`): every answer on a class carries them, so a report shows which lines decided it."""

from __future__ import annotations

import re
from dataclasses import replace

from qosbound.errors import ScenarioError
from qosbound.results import Result
from qosbound.systems.port.schema import Scenario, split_metric

__all__ = ["class_lines", "with_class_lines"]

#: A ``file:line`` reference inside a provenance entry (``branch.cfg:42``, ``r1.conf:7 (10 % of 1 Gbit/s)``).
_REF = re.compile(r"(?P<file>[^\s,;()]+?):(?P<line>[0-9]+)\b")


def class_lines(scn: Scenario, name: str) -> str:
    """The configuration lines of class ``name``: ``file:L1, L2, ...`` (the class's own line first, then the
    others in order; a second file is written in full); '' when the scenario records none."""
    head = f"classes.{name}."
    refs: list[tuple[str, int]] = []
    first = None
    for path, text in scn.provenance.items():
        if not path.startswith(head):
            continue
        for m in _REF.finditer(text):
            ref = (m.group("file"), int(m.group("line")))
            if path == head + "name" and first is None:
                first = ref
            if ref not in refs:
                refs.append(ref)
    if not refs:
        return ""
    rest = sorted(r for r in refs if r != first)
    ordered = ([first] if first else []) + rest
    out: list[str] = []
    current = None
    for f, line in ordered:
        out.append(f"{f}:{line}" if f != current else str(line))
        current = f
    return ", ".join(out)


def with_class_lines(scn: Scenario, results: list[Result]) -> list[Result]:
    """The results, each on a class with recorded lines carrying them as ``provenance['config']``."""
    if not scn.provenance:
        return results
    names = [c.name for c in scn.classes] + ["class-default"]
    lines: dict[str, str] = {}
    out = []
    for r in results:
        try:
            cls, _ = split_metric(r.metric, names)
        except ScenarioError:
            out.append(r)
            continue
        if cls not in lines:
            lines[cls] = class_lines(scn, cls)
        if lines[cls]:
            r = replace(r, provenance={**r.provenance, "config": lines[cls]})
        out.append(r)
    return out
