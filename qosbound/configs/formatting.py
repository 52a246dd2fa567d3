"""Quantities written into imported scenarios: exact and readable (``100 Mbit/s``, ``64000 B``, ``4 ms``)."""

from __future__ import annotations

__all__ = ["rate_text", "size_text", "time_text", "number"]


def number(x: float) -> int | float:
    """An integer when the value is integral (YAML then shows ``64``, not ``64.0``)."""
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x)


def _scaled(x: float, scales) -> str:
    """``x`` in the largest unit that writes it exactly (or in 8 characters), else in the largest unit it
    reaches, to 12 significant digits."""
    first = None
    for factor, unit in scales:
        if abs(x) >= factor:
            v = x / factor
            text = f"{v:.12g}"
            if float(text) * factor == x or len(text) <= 8:
                return f"{text} {unit}"
            first = first or (factor, unit)
    factor, unit = first or scales[-1]
    return f"{x / factor:.12g} {unit}"


def rate_text(bps: float) -> str:
    """``1e9`` -> ``'1 Gbit/s'``; ``2.5e6`` -> ``'2.5 Mbit/s'``; exact (12 significant digits)."""
    return _scaled(float(bps), ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1.0, "bit/s")))


def size_text(nbytes: float) -> str:
    """Bytes as ``'64000 B'`` (decimal, no prefixes: exact for every integer size)."""
    return f"{number(nbytes)} B"


def time_text(seconds: float) -> str:
    return _scaled(float(seconds), ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")))
