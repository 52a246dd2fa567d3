"""Names of statistics inside metric names (``EF.delay.p99``, ``EF.delay.ccdf@10ms``), shared by every layer."""

from __future__ import annotations

from qosbound.errors import ScenarioError
from qosbound.units import format_quantity, parse_quantity

__all__ = ["quantile_name", "parse_quantile_name", "ccdf_name", "parse_ccdf_name", "compact_time"]


def quantile_name(q: float) -> str:
    """0.99 -> 'p99', 0.999 -> 'p99.9'."""
    s = f"{q * 100:.6f}".rstrip("0").rstrip(".")
    return f"p{s}"


def parse_quantile_name(stat: str) -> float | None:
    """'p99' -> 0.99, 'p99.9' -> 0.999; None for anything that is not a quantile in (0, 1)."""
    if not stat.startswith("p"):
        return None
    try:
        v = float(stat[1:]) / 100.0
    except ValueError:
        return None
    return v if 0 < v < 1 else None


def compact_time(t: float) -> str:
    """10e-3 -> '10ms' (used inside metric names)."""
    return format_quantity(t, "s", digits=6).replace(" ", "")


def ccdf_name(prefix: str, d: float) -> str:
    """('EF.delay', 10e-3) -> 'EF.delay.ccdf@10ms'."""
    return f"{prefix}.ccdf@{compact_time(d)}"


def parse_ccdf_name(stat: str) -> float | None:
    """'ccdf@10ms' -> 0.01 (seconds); None for anything that is not a CCDF point at a time.

    >>> parse_ccdf_name("ccdf@2.5ms"), parse_ccdf_name("p99")
    (0.0025, None)
    """
    if not stat.startswith("ccdf@"):
        return None
    try:
        return parse_quantity(stat[len("ccdf@"):], "time", bare_si=False)
    except ScenarioError:
        return None
