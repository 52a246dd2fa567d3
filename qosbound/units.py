"""Quantities as network engineers write them: one grammar for rates, sizes, times and probabilities.

Every quantity qosbound reads -- a scenario field, an SLO limit, a ``--vary`` grid, ``--min``/``--max``,
``--max-memory``, a TFRC calculator flag -- goes through :func:`parse_quantity`, and the grammar is the
table :data:`UNITS` below (docs/units.md states it for users). Internal units are SI: seconds, bit/s, bytes,
dimensionless probabilities; prefixes are decimal (``1 Mbit/s = 1e6 bit/s``, ``1 kB = 1000 B``) except the
binary ``KiB MiB GiB TiB``.

A quantity is a number, optional whitespace, and a unit::

    quantity := number [whitespace] unit        number := [+-] digits [. digits] [e [+-] digits]

* **Rates** (bit/s): ``bit/s bits/s b/s bps`` after a prefix ``k M G T`` written in either case (``mbit/s``,
  ``Mbps``, ``mbps`` and ``Mb/s`` are all megabit: no rate is ever milli-anything); tc's rate words ``bit
  kbit mbit gbit tbit`` in tc's lowercase; bytes per second only as ``B/s byte/s bytes/s`` after ``k K M G
  T`` (or binary ``KiB/s MiB/s GiB/s``), converted to bits (``10 MB/s`` is 80 Mbit/s).
* **Sizes** (bytes): ``B byte bytes`` after ``k K M G T`` (decimal) or ``KiB MiB GiB TiB`` (binary);
  ``bit bits`` after a prefix in either case, converted to bytes when they make whole bytes (``12 bit`` is
  refused: sizes in bits must be multiples of 8).
* **Times** (s): ``s sec second seconds ms msec us µs usec ns nsec min minute minutes``.
* **Probabilities**: a bare number or a percentage (``1 %``). **Counts**: a bare number.
* **Packet rates** (1/s): ``pps kpps Mpps packets/s pkt/s 1/s``.

Refused, each with a one-line reason: ``mB`` and any milli prefix on a size or rate; ``b``, ``kb``, ``Mb``
as a size and ``Bps``, ``MBps`` as a rate (a bit to IEEE 802.3, a byte to tc: write ``Mbit``/``MB``,
``Mbit/s``/``MB/s``); an amount of data as a rate (``10 Mbit``: write ``10 Mbit/s``); a unit of another kind;
an unknown unit; a number that is not finite (``1e999 Mbit/s``, ``nan ms``).

A **bare number** (``2000000``) is read in the SI unit of its kind where the schema documents it so (the
scenario's fields, a TFRC table's cells); where a limit or a search range is given (SLO limits, ``--vary``,
``--min``, ``--max``) a bare time, rate or size is refused (``bare_si=False``): ``max: 20`` on a delay would
otherwise be 20 s without a word.

``dialect="tc"`` is the hook for importers of Linux tc configurations: there (and only there) ``bps kbps
mbps gbps tbps`` are tc's bytes per second, and ``b kb mb gb`` (also ``k m g``) tc's byte sizes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import MAX_EMAX, MIN_EMIN, Decimal, localcontext
from typing import Literal

from qosbound.errors import ScenarioError

__all__ = ["parse_quantity", "read_quantity", "format_quantity", "format_exact", "display_scale", "Reading", "Unit",
           "Kind", "SI_UNIT", "UNITS", "ACCEPTED", "DIALECTS", "UNIT_KINDS"]

Kind = Literal["time", "rate", "size", "probability", "count", "packet_rate"]

SI_UNIT: dict[str, str] = {
    "time": "s",
    "rate": "bit/s",
    "size": "B",
    "probability": "1",
    "count": "1",
    "packet_rate": "1/s",
}

#: The kinds that always carry a unit where a bare number would be ambiguous (SLO limits, search ranges).
UNIT_KINDS: tuple[str, ...] = ("time", "rate", "size", "packet_rate")

#: The accepted forms per kind, as error messages and docs/units.md state them.
ACCEPTED: dict[str, str] = {
    "time": "a time: a number with s, ms, us (µs), ns or min, e.g. '10 ms'",
    "rate": "a rate: a number with bit/s, kbit/s, Mbit/s, Gbit/s (also bps, Mbps, Mb/s, tc's mbit; the prefix in "
            "any case), or B/s, kB/s, MB/s, GB/s for bytes per second, e.g. '2 Mbit/s'",
    "size": "a size: a number with B, kB, MB, GB (decimal), KiB, MiB, GiB (binary) or bit, kbit, Mbit, "
            "e.g. '1500 B'",
    "probability": "a probability: a number in [0, 1] or a percentage, e.g. 0.01 or '1 %'",
    "count": "a plain number",
    "packet_rate": "a packet rate: a number with pps, kpps or Mpps, e.g. '100 pps'",
}

#: An example unit per kind, for the hint on a bare number ("write '20 ms'").
_EXAMPLE_UNIT = {"time": "ms", "rate": "Mbit/s", "size": "B", "packet_rate": "pps"}

_A = {"time": "a time", "rate": "a rate", "size": "a size", "probability": "a probability", "count": "a count",
      "packet_rate": "a packet rate"}
_KIND_NAME = {**_A, "size": "a size (an amount of data)"}


@dataclass(frozen=True)
class Unit:
    """One spelling of a unit: its kind, its value in SI (exact, as a Decimal), and the canonical spelling."""

    kind: str
    factor: Decimal
    symbol: str
    bits: bool = False  # a size written in bits: must come to whole bytes
    bytes_rate: bool = False  # a rate written in bytes per second


# ---- the table ---------------------------------------------------------------------------------------------

_DEC = {"": "1", "k": "1e3", "K": "1e3", "M": "1e6", "G": "1e9", "T": "1e12"}
#: Prefixes of bit units: the letter in either case (tc writes 'mbit', IEEE 'Mb/s'; a rate is never milli).
_ANY_CASE = {**_DEC, "m": "1e6", "g": "1e9", "t": "1e12"}
_BIN = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40}
_CANON_PREFIX = {"": "", "k": "k", "K": "k", "m": "M", "M": "M", "g": "G", "G": "G", "t": "T", "T": "T"}


def _table() -> dict[str, dict[str, Unit]]:
    t: dict[str, dict[str, Unit]] = {}

    def add(spelling: str, unit: Unit) -> None:
        t.setdefault(spelling, {})[unit.kind] = unit

    for p, f in _ANY_CASE.items():
        c = _CANON_PREFIX[p]
        for s in ("bit/s", "bits/s", "b/s", "bps"):
            add(p + s, Unit("rate", Decimal(f), f"{c}bit/s"))
        for s in ("bit", "bits"):
            add(p + s, Unit("size", Decimal(f) / 8, f"{c}bit", bits=True))
        for s in ("pps",):
            add(p + s, Unit("packet_rate", Decimal(f), f"{c}pps"))
    for p in ("", "k", "m", "g", "t"):  # tc's rate words, as tc writes them
        add(p + "bit", Unit("rate", Decimal(_ANY_CASE[p]), f"{_CANON_PREFIX[p]}bit/s"))
    for p, f in _DEC.items():
        c = _CANON_PREFIX[p]
        for s in ("B", "byte", "bytes"):
            add(p + s, Unit("size", Decimal(f), f"{c}B"))
        for s in ("B/s", "byte/s", "bytes/s"):
            add(p + s, Unit("rate", Decimal(f) * 8, f"{c}B/s", bytes_rate=True))
    for p, f in _BIN.items():
        add(p + "B", Unit("size", Decimal(f), p + "B"))
        add(p + "B/s", Unit("rate", Decimal(f) * 8, p + "B/s", bytes_rate=True))
    for s, f in (("s", "1"), ("sec", "1"), ("second", "1"), ("seconds", "1"), ("ms", "1e-3"), ("msec", "1e-3"),
                 ("us", "1e-6"), ("µs", "1e-6"), ("μs", "1e-6"), ("usec", "1e-6"), ("ns", "1e-9"),
                 ("nsec", "1e-9"), ("min", "60"), ("minute", "60"), ("minutes", "60")):
        add(s, Unit("time", Decimal(f), {"1": "s", "1e-3": "ms", "1e-6": "µs", "1e-9": "ns", "60": "min"}[f]))
    add("%", Unit("probability", Decimal("0.01"), "%"))
    for s in ("packets/s", "pkt/s", "1/s"):
        add(s, Unit("packet_rate", Decimal(1), "pps"))
    return t


#: Every accepted spelling -> {kind: Unit}. A spelling may belong to two kinds ('kbit': tc's rate word, and a
#: size of 1000 bits); the field's kind picks one.
UNITS: dict[str, dict[str, Unit]] = _table()

#: Dialects: spellings that mean something else in an imported configuration's own language.
DIALECTS: dict[str, dict[str, dict[str, Unit]]] = {"tc": {}}
for _p, _f in (("", "1"), ("k", "1e3"), ("m", "1e6"), ("g", "1e9"), ("t", "1e12")):
    # tc(8): "kbps: kilobytes per second" etc.; sizes "kb" / "k": kilobytes
    DIALECTS["tc"][_p + "bps"] = {"rate": Unit("rate", Decimal(_f) * 8, f"{_CANON_PREFIX[_p]}B/s", bytes_rate=True)}
    if _p:
        DIALECTS["tc"][_p + "b"] = {"size": Unit("size", Decimal(_f), f"{_CANON_PREFIX[_p]}B")}
        DIALECTS["tc"][_p] = {"size": Unit("size", Decimal(_f), f"{_CANON_PREFIX[_p]}B")}
DIALECTS["tc"]["b"] = {"size": Unit("size", Decimal(1), "B")}


def _refusal(unit: str, kind: str, original) -> str | None:
    """Why a spelling that is not in the table is refused, for the near misses worth a specific reason."""
    why = _near_miss(unit, kind)
    return f"'{original}': {why}" if why else None


def _near_miss(unit: str, kind: str) -> str | None:
    if unit in ("b", "kb", "Kb", "mb", "Mb", "gb", "Gb", "tb", "Tb"):
        return (f"'{unit}' is ambiguous (a bit to IEEE 802.3, a byte to tc): write '{unit[:-1]}bit' for bits or "
                f"'{_CANON_PREFIX.get(unit[:-1], unit[:-1])}B' for bytes")
    if re.fullmatch(r"[kKmMgGtT]?Bps", unit):
        p = _CANON_PREFIX[unit[:-3]]
        return (f"'{unit}' is ambiguous (bytes to tc, often bits elsewhere): write '{p}B/s' for bytes per second or "
                f"'{p}bit/s' for bits per second")
    if re.fullmatch(r"m(B|byte|bytes)(/s)?", unit):
        return (f"'m' (milli) is not a prefix of a size or rate; write 'M{unit[1:]}' for mega"
                + ("bytes per second" if unit.endswith("/s") else "bytes"))
    if re.fullmatch(r"[gt](B|byte|bytes)(/s)?", unit):
        return f"write '{unit[0].upper()}{unit[1:]}'"
    if re.fullmatch(r"[KkMmGgTt]i?(b|bit|bits)/s", unit) and "i" in unit:
        return "binary prefixes are for bytes only (KiB, MiB); write a decimal rate such as 'Mbit/s'"
    if unit in ("k", "K", "m", "M", "g", "G", "t", "T"):
        p = _CANON_PREFIX[unit]
        what = {"rate": f"'{p}bit/s'", "size": f"'{p}B' or '{p}bit'"}.get(kind, "a unit")
        return f"a prefix without a unit (Junos and tc shorthand): write {what}"
    if re.match(r"[,.]\d", unit):
        return "write the decimal separator as a point ('1.5 Mbit/s'), without thousands separators"
    if kind == "time" and unit.lower() in ("s", "ms", "us", "ns", "min", "sec", "msec", "usec"):
        return f"time units are lowercase ({unit.lower()})"
    if unit in ("h", "hr", "hour", "hours", "d", "day", "days"):
        return "give times in s, ms, us, ns or min"
    return None


# ---- parsing -----------------------------------------------------------------------------------------------

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_QUANTITY = re.compile(rf"\s*(?P<num>{_NUMBER})\s*(?P<unit>.*?)\s*", re.S)
_NON_FINITE = re.compile(r"\s*[+-]?(?:nan|inf|infinity)(?![A-Za-z])\s*(?P<unit>.*?)\s*", re.I | re.S)


@dataclass(frozen=True)
class Reading:
    """A quantity as read: its SI value, the number and unit written (``unit`` None for a bare number)."""

    value: float
    number: Decimal | None
    unit: Unit | None
    text: str  # what was written, as text

    @property
    def bare(self) -> bool:
        return self.unit is None


def _error(problem: str, field: str | None) -> ScenarioError:
    return ScenarioError(problem, field=field)


def _finite(x: float, original, kind: str, field) -> float:
    if not math.isfinite(x):
        raise _error(f"'{original}' is not a finite number (expected {ACCEPTED[kind]})", field)
    return x


def read_quantity(value, kind: Kind, *, field: str | None = None, bare_si: bool = True,
                  dialect: str | None = None) -> Reading:
    """Read ``value`` (a number, or text with a unit) as a quantity of ``kind``; see the module docstring.

    ``bare_si``: whether a bare number is read in the SI unit of ``kind``; when False a bare time, rate, size
    or packet rate is refused (probabilities and counts are bare by nature). ``dialect``: ``"tc"`` reads tc's
    own meanings of ``kbps`` etc. Raises :class:`ScenarioError` naming ``field`` on any problem.

    >>> read_quantity("3 mbit/s", "rate").value
    3000000.0
    >>> read_quantity("10Mb/s", "rate").value, read_quantity("1 Gb/s", "rate").value
    (10000000.0, 1000000000.0)
    >>> read_quantity("10 MB/s", "rate").value
    80000000.0
    """
    if kind not in SI_UNIT:
        raise ValueError(f"unknown quantity kind {kind!r}")
    if isinstance(value, bool):
        raise _error(f"expected {ACCEPTED[kind]}; got a yes/no value", field)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise _error(f"{value!r} is not a finite number (expected {ACCEPTED[kind]})", field)
        reading = Reading(float(value), None, None, repr(value) if isinstance(value, float) else str(value))
        return _bare(reading, kind, field, bare_si)
    if not isinstance(value, str):
        raise _error(f"expected {ACCEPTED[kind]}; got {type(value).__name__}", field)
    text = value.strip()
    if not text:
        raise _error(f"expected {ACCEPTED[kind]}; got an empty text", field)
    m = _QUANTITY.fullmatch(text)
    if m is None:
        if _NON_FINITE.fullmatch(text):
            raise _error(f"'{value}' is not a finite number (expected {ACCEPTED[kind]})", field)
        raise _error(f"cannot read '{value}' as {_A[kind]}: expected {ACCEPTED[kind]}", field)
    _finite(float(m.group("num")), value, kind, field)  # 1e999, or 5000 digits: refused before any arithmetic
    number = Decimal(m.group("num"))
    spelled = m.group("unit")
    if not spelled:
        x = _finite(float(number), value, kind, field)
        return _bare(Reading(x, number, None, text), kind, field, bare_si)
    unit = _lookup(spelled, kind, value, field, dialect)
    with localcontext() as ctx:  # exact: a decimal prefix moves the decimal point, no binary rounding
        ctx.prec, ctx.Emax, ctx.Emin = 60, MAX_EMAX, MIN_EMIN
        exact = number * unit.factor
    x = _finite(float(exact), value, kind, field)
    if unit.bits and exact != exact.to_integral_value():
        raise _error(f"'{value}' is {exact.normalize():f} bytes: a size in bits must be a whole number of bytes "
                     "(a multiple of 8 bits)", field)
    return Reading(x, number, unit, text)


def _choices(spelled: str, dialect: str | None) -> dict[str, Unit]:
    """The kinds a spelling can have: the dialect's own meanings first (tc's words in any case), then the
    grammar's."""
    if dialect is None:
        return UNITS.get(spelled, {})
    if dialect not in DIALECTS:
        raise ValueError(f"unknown unit dialect {dialect!r}")
    out: dict[str, Unit] = {}
    for table in (DIALECTS[dialect], UNITS):
        for s in (spelled, spelled.lower()):
            for k, u in table.get(s, {}).items():
                out.setdefault(k, u)
    return out


def _lookup(spelled: str, kind: str, original, field, dialect: str | None) -> Unit:
    choices = _choices(spelled, dialect)
    if kind in choices:
        return choices[kind]
    if choices:
        other = next(iter(choices.values()))
        hint = ""
        if kind == "rate" and other.kind == "size":
            hint = f": a rate is per second, e.g. '{_number_text(original)} {other.symbol}/s'"
            if other.bits:
                hint += " (tc's lowercase rate words kbit, mbit, gbit are read as rates)"
        elif kind == "size" and other.kind == "rate":
            hint = ": a size has no '/s'"
        raise _error(f"'{original}' has the wrong units: {_KIND_NAME[other.kind]}, not {_A[kind]}{hint}; "
                     f"expected {ACCEPTED[kind]}", field)
    why = _refusal(spelled, kind, original)
    if why:
        raise _error(f"{why}; expected {ACCEPTED[kind]}", field)
    raise _error(f"'{original}': unknown unit '{spelled}'; expected {ACCEPTED[kind]}", field)


def _number_text(original) -> str:
    m = _QUANTITY.fullmatch(str(original).strip())
    return m.group("num") if m else "1"


def _bare(reading: Reading, kind: str, field, bare_si: bool) -> Reading:
    if not bare_si and kind in UNIT_KINDS:
        n, x = reading.text, abs(reading.value)
        # the example: the SI unit where the number looks like SI (2000000 bit/s, 0.01 s), else a common one
        unit = (SI_UNIT[kind] if (kind == "rate" and x >= 1e3) or (kind == "time" and 0 < x < 1) else
                _EXAMPLE_UNIT[kind])
        raise _error(f"'{n}' has no unit: write {_A[kind]} with its unit, e.g. '{n} {unit}'; "
                     f"expected {ACCEPTED[kind]}", field)
    return reading


def parse_quantity(value, kind: Kind, *, field: str | None = None, bare_si: bool = True,
                   dialect: str | None = None) -> float:
    """The SI value of ``value`` read as a ``kind`` (:func:`read_quantity`)."""
    return read_quantity(value, kind, field=field, bare_si=bare_si, dialect=dialect).value


# ---- formatting --------------------------------------------------------------------------------------------

_SCALES = {"s": ((60.0, "min"), (1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")),
           "bit/s": ((1e12, "Tbit/s"), (1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1.0, "bit/s")),
           "B": ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B")),
           "1/s": ((1e6, "Mpps"), (1e3, "kpps"), (1.0, "pps"))}
#: Scales used for reports: minutes and kilobytes are left to the echo of inputs (a delay reads in s, a
#: packet size in B).
_REPORT_SCALES = {"s": _SCALES["s"][1:], "bit/s": _SCALES["bit/s"]}


def display_scale(values, unit: str) -> tuple[float, str]:
    """(divisor, unit) to show SI ``values`` of ``unit`` on one axis: the largest prefix at which the largest
    magnitude is at least 1 (0.0127 s -> (1e-3, 'ms')); (1, unit) for units without prefixes."""
    scales = _REPORT_SCALES.get(unit)
    top = max((abs(v) for v in values if v is not None and math.isfinite(v)), default=0.0)
    if not scales or top == 0:
        return 1.0, unit
    return next(((f, n) for f, n in scales if top >= f), scales[-1])


def format_quantity(value: float, unit: str, digits: int = 4) -> str:
    """Format an SI value for people: 0.01264 s -> '12.64 ms', 2e6 bit/s -> '2 Mbit/s', 1500 B -> '1500 B'."""
    if value is None:
        return "-"
    if not math.isfinite(value):
        return str(value)
    if unit in _REPORT_SCALES:
        a = abs(value)
        if a == 0:
            return f"0 {unit}"
        for scale, name in _REPORT_SCALES[unit]:
            if a >= scale or scale == _REPORT_SCALES[unit][-1][0]:
                return f"{value / scale:.{digits}g} {name}"
    if unit == "B":
        if value == int(value) and abs(value) < 1e6:
            return f"{int(value)} B"
        return f"{value:.{digits}g} B" if abs(value) < 1e6 else _scaled(value, "B", digits)
    if unit in ("1", ""):
        if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e6):
            return f"{value:.{max(digits - 1, 1)}e}"
        return f"{value:.{digits}g}"
    return f"{value:.{digits}g} {unit}"


def _scaled(value: float, unit: str, digits: int) -> str:
    a = abs(value)
    for scale, name in _SCALES[unit]:
        if a >= scale or scale == _SCALES[unit][-1][0]:
            return f"{value / scale:.{digits}g} {name}"
    return f"{value:.{digits}g} {unit}"  # pragma: no cover - the last scale always matches


def format_exact(value: float, kind: Kind) -> str:
    """The SI ``value`` of ``kind`` in the unit a person reads, with every digit needed to read it back exactly:
    ``parse_quantity(format_exact(x, k), k) == x`` for every finite x (the decimal point is moved in the
    shortest decimal form of x, so no rounding happens on the way back). Probabilities and counts are bare.

    >>> format_exact(8e7, "rate"), format_exact(0.0125, "time"), format_exact(65535.0, "size")
    ('80 Mbit/s', '12.5 ms', '65535 B')
    """
    unit = SI_UNIT[kind]
    if kind in ("probability", "count"):
        return repr(float(value))
    scales = _SCALES[unit] if kind != "time" else _SCALES["s"][1:]
    a = abs(value)
    scale, name = next(((f, n) for f, n in scales if a >= f), scales[-1])
    if kind == "size" and value == int(value) and a < 1e6:
        scale, name = 1.0, "B"
    with localcontext() as ctx:
        ctx.prec = 60
        d = Decimal(repr(float(value))) / Decimal(repr(scale))
    text = format(d.normalize(), "f") if -12 < d.adjusted() < 18 else format(d.normalize(), "e")
    return f"{text} {name}"
