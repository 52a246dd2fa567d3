"""Quantities with units: parse "2 Mbps", "128 B", "10 ms", "1 %" into SI floats, and format back.

Internal units are SI: seconds, bit/s, bytes (sizes stay in bytes, the unit
network engineers read), dimensionless probabilities. ``1 Mbps = 1e6 bit/s``
(decimal prefixes, as in the source papers: 512 B at 2 Mbit/s is 2.048 ms).
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Literal

from qosbound.errors import ScenarioError

__all__ = ["parse_quantity", "format_quantity", "Kind", "SI_UNIT"]

Kind = Literal["time", "rate", "size", "probability", "count", "packet_rate"]

SI_UNIT: dict[str, str] = {
    "time": "s",
    "rate": "bit/s",
    "size": "B",
    "probability": "1",
    "count": "1",
    "packet_rate": "1/s",
}


@lru_cache(maxsize=1)
def _registry():
    import pint

    ureg = pint.UnitRegistry()
    ureg.define("pps = 1 / second")
    return ureg


_BPS = re.compile(r"(?<![A-Za-z])([kKMGT]?)(bps|Bps)(?![A-Za-z])")


def _normalise(text: str) -> str:
    """'2 Mbps' -> '2 Mbit/s', '5 kBps' -> '5 kB/s' (pint would otherwise also read 'Mbps' as mega-point-second)."""
    return _BPS.sub(lambda m: ("k" if m.group(1) == "K" else m.group(1)) + ("bit/s" if m.group(2) == "bps" else "B/s"),
                    text)


def _units_text(q) -> str:
    return str(q.units)


def parse_quantity(value, kind: Kind, *, field: str | None = None) -> float:
    """Parse a number or a string with units into an SI float of the given kind.

    A bare number is taken in the SI unit of ``kind`` (seconds, bit/s, bytes).
    Raises :class:`ScenarioError` naming ``field`` on any problem.
    """
    if isinstance(value, bool):
        raise ScenarioError(f"expected a {kind} with units, got a boolean", field=field)
    if isinstance(value, (int, float)):
        x = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            raise ScenarioError(f"expected a {kind}, got an empty string", field=field)
        try:  # a bare number given as text (e.g. on the command line) is SI, like a bare number in YAML
            x = float(text)
        except ValueError:
            x = None
        if x is not None:
            if not math.isfinite(x):
                raise ScenarioError(f"'{value}' is not a finite number", field=field)
            return x
        try:
            q = _registry().Quantity(_normalise(text))
        except Exception:
            raise ScenarioError(f"cannot read '{value}' as a {kind} with units", field=field) from None
        x = _convert(q, kind, value, field)
    else:
        raise ScenarioError(f"expected a {kind} (number or string with units), got {type(value).__name__}",
                            field=field)
    if not math.isfinite(x):
        raise ScenarioError(f"'{value}' is not a finite number", field=field)
    return x


def _convert(q, kind: Kind, original, field) -> float:
    ureg = _registry()
    units = _units_text(q)
    has_info = "bit" in units or "byte" in units
    try:
        if kind == "time":
            if not q.check("[time]"):
                raise ValueError
            return float(q.to("second").magnitude)
        if kind == "rate":
            if not (has_info and q.check("1/[time]")):
                raise ValueError
            return float(q.to("bit/second").magnitude)
        if kind == "packet_rate":
            if has_info or not q.check("1/[time]"):
                raise ValueError
            return float(q.to("1/second").magnitude)
        if kind == "size":
            if not (has_info and q.dimensionless):
                raise ValueError
            return float(q.to("byte").magnitude)
        if kind in ("probability", "count"):
            if has_info or not q.dimensionless:
                raise ValueError
            return float(q.to(ureg.dimensionless).magnitude)
    except ValueError:
        pass
    except Exception:
        pass
    expected = {"time": "a time such as '10 ms'", "rate": "a bit rate such as '2 Mbps' or '300 kbit/s'",
                "size": "a size such as '128 B'", "probability": "a probability such as 0.01 or '1 %'",
                "count": "a plain number", "packet_rate": "a packet rate such as '100 pps'"}[kind]
    raise ScenarioError(f"'{original}' has the wrong units: expected {expected}", field=field)


_SCALES = {"s": ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")),
           "bit/s": ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1.0, "bit/s"))}


def display_scale(values, unit: str) -> tuple[float, str]:
    """(divisor, unit) to show SI ``values`` of ``unit`` on one axis: the largest prefix at which the largest
    magnitude is at least 1 (0.0127 s -> (1e-3, 'ms')); (1, unit) for units without prefixes."""
    scales = _SCALES.get(unit)
    top = max((abs(v) for v in values if v is not None and math.isfinite(v)), default=0.0)
    if not scales or top == 0:
        return 1.0, unit
    return next(((f, n) for f, n in scales if top >= f), scales[-1])


def format_quantity(value: float, unit: str, digits: int = 4) -> str:
    """Format an SI value for people: 0.01264 s -> '12.65 ms', 2e6 bit/s -> '2 Mbit/s'."""
    if value is None:
        return "-"
    if not math.isfinite(value):
        return str(value)
    if unit == "s":
        a = abs(value)
        if a == 0:
            return "0 s"
        for scale, name in _SCALES["s"]:
            if a >= scale or name == "ns":
                return f"{value / scale:.{digits}g} {name}"
    if unit == "bit/s":
        a = abs(value)
        for scale, name in _SCALES["bit/s"]:
            if a >= scale or name == "bit/s":
                return f"{value / scale:.{digits}g} {name}"
    if unit == "B":
        return f"{value:.{digits}g} B"
    if unit in ("1", ""):
        if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e6):
            return f"{value:.{max(digits - 1, 1)}e}"
        return f"{value:.{digits}g}"
    return f"{value:.{digits}g} {unit}"
