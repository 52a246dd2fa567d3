"""The inputs as understood: what every report states first, so a misread unit shows before any result.

Each system lists its scenario's inputs (the ``understood_inputs`` hook of :class:`qosbound.systems.System`):
the link rate, each stream's or class's rate and share of the link, the packet sizes, the queue sizes. The
value is the one the methods use (SI); ``written`` is what the file says when that differs in unit from the
echo (``10 MB/s`` is echoed ``80 Mbit/s (written 10 MB/s)``) or when the file gives a bare number (read in SI);
a field the file leaves out is marked as a default. The same list is the text report's first block, the
``inputs`` object of ``--json`` (SI units) and the properties of the JUnit report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from qosbound.errors import ScenarioError
from qosbound.units import SI_UNIT, UNIT_KINDS, format_quantity, read_quantity

__all__ = ["Input", "Inputs", "Echo", "raw_at"]

_MISSING = object()


def raw_at(raw: Any, dotted: str):
    """The value at a dotted path of a raw scenario mapping (a number indexes a list), or ``_MISSING``."""
    cur = raw
    for part in dotted.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return _MISSING
    return cur


@dataclass(frozen=True)
class Input:
    """One input as the methods use it: a quantity (SI ``value`` of ``kind``) or a text (``kind`` None)."""

    name: str  # the field's dotted path in the scenario, or a label for a derived value ('traffic.EF.total')
    value: float | str
    kind: str | None = None  # time, rate, size, probability, count; None for a text
    written: str | None = None  # what the file says, when the echo is in another unit or the file gave a bare number
    share: float | None = None  # of the link rate, for a rate
    note: str = ""  # e.g. 'default', 'packets', 'p = 0.9'
    percent: bool = False  # a fraction shown as a percentage (a utilisation)
    noun: str = ""  # what a count counts ('packets', 'units')
    of: str = "the link"  # what ``share`` is a share of

    @property
    def unit(self) -> str:
        return SI_UNIT[self.kind] if self.kind else ""

    def echo(self) -> str:
        """The value for people, then its share of the link, what was written and the note:
        ``80 Mbit/s (8 % of the link; written 10 MB/s)``."""
        if self.kind is None or isinstance(self.value, str):
            head = str(self.value)
        elif self.kind == "count":
            head = f"{self.value:g}" + (f" {self.noun}" if self.noun else "")
        elif self.kind == "probability":
            head = _percent(self.value) if self.percent else f"{self.value:.6g}"
        else:
            head = format_quantity(float(self.value), self.unit, digits=6)
        extra = []
        if self.share is not None:
            extra.append(f"{_percent(self.share)} of {self.of}")
        if self.written is not None:
            extra.append(f"written {self.written}")
        if self.note:
            extra.append(self.note)
        return head + (f" ({'; '.join(extra)})" if extra else "")

    def to_json(self) -> dict:
        """SI ``value`` and ``unit``, what a count counts, the share of the link, what was written, the note, and
        ``echo``: the line the text report prints (:meth:`echo`)."""
        out: dict[str, Any] = {"value": self.value, "unit": self.unit or None}
        if self.noun:
            out["counts"] = self.noun
        if self.share is not None:
            out["share_of_link"] = self.share
        if self.written is not None:
            out["written"] = self.written
        if self.note:
            out["note"] = self.note
        out["echo"] = self.echo()
        return out


def _percent(x: float) -> str:
    return f"{100 * x:.3g} %"


@dataclass(frozen=True)
class Inputs:
    """A scenario's inputs as understood, in the order the report shows them."""

    items: tuple[Input, ...] = ()

    def lines(self, indent: str = "  ") -> list[str]:
        """The text block: a heading, then one line per input, names aligned."""
        if not self.items:
            return []
        width = max(len(i.name) for i in self.items)
        return ["inputs as understood"] + [f"{indent}{i.name.ljust(width)}  {i.echo()}" for i in self.items]

    def to_json(self) -> dict:
        """``{name: {value, unit, share_of_link?, written?, note?}}``, values in SI units."""
        return {i.name: i.to_json() for i in self.items}

    def properties(self) -> list[tuple[str, str]]:
        """(name, value) pairs for JUnit ``<property>`` elements: ``input.<name>`` = the SI value and unit, then
        the echo where it says more ('2000000 bit/s = 2 Mbit/s', '128 B (1 ring unit)')."""
        out = []
        for i in self.items:
            if isinstance(i.value, str):
                si = i.value
            else:
                si = _shortest(i.value) + (f" {i.unit}" if i.unit not in ("", "1") else "")
            echo = i.echo()
            out.append((f"input.{i.name}", echo if echo.startswith(si) else f"{si} = {echo}"))
        return out


def _shortest(x: float) -> str:
    """The shortest text that reads back as ``x`` ('2000000', '0.15', '1e-05')."""
    r = repr(x)
    return r[:-2] if r.endswith(".0") else r


class Echo:
    """Builds a scenario's :class:`Inputs`: each quantity with what the file wrote for it.

    ``link`` is the link rate the shares are taken of (bit/s), ``of`` what it is called in the echo."""

    def __init__(self, scn, link: float | None = None, of: str = "the link"):
        self.raw = scn.raw
        self.link, self.of = link, of
        self.items: list[Input] = []

    def quantity(self, name: str, value: float, kind: str, *, share: bool = False, note: str = "",
                 path: str | None = "", percent: bool = False, noun: str = "") -> "Echo":
        """The input at field ``path`` (default: ``name``; None for a derived value such as a total): its SI
        value, its share of the link (``share``), and what was written when it matters."""
        written, default = _written(self.raw, name if path == "" else path, value, kind)
        notes = [n for n in (note, "default" if default else "") if n]
        s = value / self.link if share and self.link and math.isfinite(value) else None
        v = int(value) if kind == "count" and float(value).is_integer() else float(value)
        self.items.append(Input(name, v, kind, written, s, "; ".join(notes), percent, noun, self.of))
        return self

    def text(self, name: str, value: str, note: str = "") -> "Echo":
        self.items.append(Input(name, value, None, None, None, note))
        return self

    def done(self) -> Inputs:
        return Inputs(tuple(self.items))


def _written(raw, path: str, value: float, kind: str) -> tuple[str | None, bool]:
    """(what the file wrote, when the value was converted to be echoed: a bare number read in SI, bytes per
    second as bits, bits as bytes, a binary prefix; whether the field is left to its default). A change of
    decimal prefix alone (1000 kbit/s echoed as 1 Mbit/s) is not a conversion worth repeating."""
    if path is None:
        return None, False
    got = raw_at(raw, path)
    if got is _MISSING:
        return None, True
    if isinstance(got, bool) or not isinstance(got, (int, float, str)):
        return None, False
    if kind not in UNIT_KINDS:
        if kind == "probability" and isinstance(got, str) and got.strip().endswith("%"):
            return got.strip(), False
        return None, False
    try:
        reading = read_quantity(got, kind)
    except ScenarioError:  # not a quantity of this kind (a derived line): nothing to echo
        return None, False
    if reading.bare:
        return f"{reading.text}, a bare number read in {SI_UNIT[kind]}", False
    u = reading.unit
    if u.bytes_rate or u.bits or u.symbol[1:2] == "i" or u.symbol == "min":  # bytes/s, bits, KiB, min
        return reading.text, False
    return None, False
