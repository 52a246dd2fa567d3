"""The parameter an admission search or a sweep varies: its kind (from the scenario's schema, else guessed from
the value), its SI unit, and the search range read from ``--min`` / ``--max`` in its units."""

from __future__ import annotations

import math

from qosbound.errors import ScenarioError
from qosbound.parameter_path import get_path
from qosbound.scenario import parameter_kind, value_text
from qosbound.units import parse_quantity

__all__ = ["UNIT_OF_KIND", "value_kind", "parse_bound", "search_range"]


UNIT_OF_KIND = {"rate": "bit/s", "time": "s", "size": "B", "probability": "1", "count": "1"}


def value_kind(value, raw: dict | None = None, path: str | None = None) -> str:
    """The parameter's kind: from the scenario's schema when ``raw`` and ``path`` name it (a rate stays a rate
    when the file gives it as a bare number), else guessed from the value."""
    if isinstance(value, bool):
        raise ScenarioError("cannot vary a yes/no parameter")
    kind = parameter_kind(raw, path) if raw is not None and path is not None else None
    if kind is not None:
        return kind
    if isinstance(value, (int, float)):
        return "count"
    for kind in ("rate", "time", "size", "probability"):
        try:
            parse_quantity(value, kind)
            return kind
        except ScenarioError:
            continue
    raise ScenarioError(f"cannot vary '{value}': not a number or a quantity with units")


def parse_bound(text, kind: str, flag: str) -> float:
    """A search bound (``--min``/``--max``, a sweep's range end) in SI units: a count bare, else with its unit."""
    if kind == "count":
        try:
            x = float(text)
        except (TypeError, ValueError):
            raise ScenarioError(f"cannot read {text!r} as a number", field=flag) from None
        if not math.isfinite(x):
            raise ScenarioError(f"{text!r} is not a finite number", field=flag)
        return x
    return parse_quantity(text, kind, field=flag, bare_si=False)  # a bare time, rate or size is refused


def search_range(scn, parameter: str, lo_text, hi_text, direction: str = "largest") -> tuple[float | None, float | None]:
    """Read ``--min`` / ``--max`` in the units of the varied parameter ("100 kbit/s", "5 ms"; a bare number only
    for a count or a probability) and check the range: finite, ``min < max``, inside the parameter's domain."""
    current = value_text(get_path(scn.raw, parameter))
    kind = value_kind(current, scn.raw, parameter)
    lo = parse_bound(lo_text, kind, "--min") if lo_text is not None else None
    hi = parse_bound(hi_text, kind, "--max") if hi_text is not None else None
    positive = kind in ("rate", "time", "size")
    for x, flag in ((lo, "--min"), (hi, "--max")):
        if x is None:
            continue
        if positive and x <= 0:
            raise ScenarioError(f"must be positive: {parameter} is a {kind}, got {x:g} {UNIT_OF_KIND[kind]}",
                                field=flag)
        if kind == "probability" and not 0 <= x <= 1:
            raise ScenarioError(f"must lie in [0, 1]: {parameter} is a probability, got {x:g}", field=flag)
    if lo is not None and hi is not None and not lo < hi:
        raise ScenarioError(f"the search range is empty: --min ({lo:g}) must be below --max ({hi:g})",
                            field="--min")
    return lo, hi
