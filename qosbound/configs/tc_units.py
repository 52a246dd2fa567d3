"""The units of Linux ``tc``: the one place this package reads them (tc(8), section TC COMMON UNITS).

tc writes rates in *bits* per second as ``bit`` (or a bare number), ``kbit``, ``mbit``, ``gbit``, ``tbit`` (SI,
1000) or ``kibit``... (IEC, 1024), and in *bytes* per second as ``bps``, ``kbps``, ``mbps``, ``gbps``: ``kbps`` is
kilobytes per second, not kilobits. Sizes are bytes: ``b`` or a bare number, ``k``/``kb`` (1024 B), ``m``/``mb``,
``g``/``gb``, and ``kbit``/``mbit``/``gbit`` (bits, / 8). Times: ``s``/``sec``/``secs``, ``ms``/``msec``,
``us``/``usec`` or a bare number (microseconds). ``tc -j`` prints rates as numbers in bytes per second and sizes in
bytes (:func:`tc_json_rate`).
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["tc_quantity", "tc_json_rate", "TcUnitError"]

_RATE = {"bit": 1.0, "": 1.0, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12,
         "kibit": 1024.0, "mibit": 1024.0**2, "gibit": 1024.0**3, "tibit": 1024.0**4,
         "bps": 8.0, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9, "tbps": 8e12,
         "kibps": 8 * 1024.0, "mibps": 8 * 1024.0**2, "gibps": 8 * 1024.0**3}
_SIZE = {"": 1.0, "b": 1.0, "k": 1024.0, "kb": 1024.0, "m": 1024.0**2, "mb": 1024.0**2, "g": 1024.0**3,
         "gb": 1024.0**3, "kbit": 1024.0 / 8, "mbit": 1024.0**2 / 8, "gbit": 1024.0**3 / 8}
#: time units as divisors of seconds (exact decimal results: 20 us is 2e-05 s)
_TIME = {"s": 1.0, "sec": 1.0, "secs": 1.0, "ms": 1e3, "msec": 1e3, "msecs": 1e3, "us": 1e6, "usec": 1e6,
         "usecs": 1e6, "": 1e6}
_NUM = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)(?:e([+-]?\d+))?\s*([a-zA-Z%]*)\s*$")


class TcUnitError(ValueError):
    """A tc quantity that cannot be read: the message says why."""


def tc_quantity(text: str, kind: Literal["rate", "size", "time"]) -> float:
    """A tc rate (-> bit/s), size (-> bytes) or time (-> seconds) as tc reads it.

    >>> tc_quantity("5mbit", "rate"), tc_quantity("5mbps", "rate"), tc_quantity("10kb", "size")
    (5000000.0, 40000000.0, 10240.0)
    """
    m = _NUM.match(str(text))
    if not m:
        raise TcUnitError(f"'{text}' is not a tc {kind} (a number with a tc unit, e.g. "
                          f"{ {'rate': '5mbit', 'size': '10kb', 'time': '50ms'}[kind]})")
    value = float(m.group(1)) * (10.0 ** int(m.group(2)) if m.group(2) else 1.0)
    unit = m.group(3).lower()
    table = {"rate": _RATE, "size": _SIZE, "time": _TIME}[kind]
    if unit not in table:
        raise TcUnitError(f"'{text}': unknown tc {kind} unit '{m.group(3)}' (tc reads "
                          f"{', '.join(u for u in table if u)})")
    return value / table[unit] if kind == "time" else value * table[unit]


def tc_json_rate(value) -> float:
    """A rate printed by ``tc -j`` (bytes per second, a number) -> bit/s."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TcUnitError(f"'{value}' is not a tc -j rate (a number of bytes per second)")
    return 8.0 * float(value)
