"""Fragment identifiers of the HTML report, shared by the page and the reports that link into it (JUnit,
Markdown), so a link names the section or SLO row it points to.

A name is encoded one-to-one into characters that are safe both as an HTML ``id`` and in a URL fragment:
ASCII letters, digits, ``_`` and ``-`` stay, every other byte of its UTF-8 form becomes ``.XX`` (hex), so two
different names never share an anchor and a hostile name cannot break out of the attribute.

>>> scenario_anchor("wan1"), scenario_anchor("a b")
('s-wan1', 's-a.20b')
>>> slo_anchor("wan1", "EF.loss <= 1e-4")
's-wan1..slo-EF.2Eloss.20.3C.3D.201e-4'
"""

from __future__ import annotations

__all__ = ["encode", "scenario_anchor", "slo_anchor", "section_anchor"]

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def encode(name: str) -> str:
    """``name`` with every character outside ``[A-Za-z0-9_-]`` written as ``.XX`` per UTF-8 byte."""
    out = []
    for ch in str(name):
        if ch in _SAFE:
            out.append(ch)
        else:
            out.extend(f".{b:02X}" for b in ch.encode("utf-8"))
    return "".join(out)


def scenario_anchor(suite: str) -> str:
    """The id of a scenario's section (``suite``: its name, unique in the run)."""
    return f"s-{encode(suite)}"


def section_anchor(suite: str, section: str) -> str:
    """The id of one section of a scenario: 'slos', 'agreement', 'inputs', 'metrics'..."""
    return f"{scenario_anchor(suite)}..{section}"


def slo_anchor(suite: str, slo: str) -> str:
    """The id of one SLO's row (``slo``: the SLO's name, e.g. 'EF.delay.p99 <= 5 ms')."""
    return f"{scenario_anchor(suite)}..slo-{encode(slo)}"
