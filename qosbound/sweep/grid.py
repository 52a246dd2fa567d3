"""The grid of a sweep: ``--vary PARAM=SPEC`` read in the units of the parameter.

SPEC is ``LO..HI:N`` (N evenly spaced values, both ends included), ``LO..HI:N:log``
(N values evenly spaced in the logarithm) or a list ``a,b,c``; a single value is a
one-point list. LO, HI and the list entries carry units as in the scenario file
("100B", "1.5 Mbit/s", "10 ms"; the grammar of :mod:`qosbound.units`); a bare number is
refused for a time, rate or size (it is read only for counts and probabilities). The
parameter's kind comes from the scenario's schema. PARAM is a dotted path into the
scenario; a number in it indexes a list (``traffic.BE.sizes.0.size``), a name picks the list element of that
``name`` (``classes.voice.police.cir``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from qosbound.admit import _kind_of, _parse_bound
from qosbound.errors import ScenarioError
from qosbound.scenario import get_path, in_form, set_path, value_text
from qosbound.units import SI_UNIT, format_quantity

__all__ = ["Axis", "parse_vary", "points", "get_param", "set_param", "MAX_POINTS"]

#: Largest grid accepted (the product of the axes' lengths).
MAX_POINTS = 100_000

FLAG = "--vary"


@dataclass(frozen=True)
class Axis:
    """One varied parameter: its dotted path, its kind (rate, time, size, probability, count) and its values
    (SI floats; ints for an integer parameter)."""

    path: str
    kind: str
    values: tuple
    log: bool = False

    @property
    def unit(self) -> str:
        return SI_UNIT[self.kind]

    def describe(self) -> str:
        """The axis as understood, for the report: 'traffic.EF.rate (rate): 5 values from 100 kbit/s to 2 Mbit/s'."""

        def q(v) -> str:
            return f"{v:g}" if self.unit == "1" else format_quantity(v, self.unit, digits=6)

        n = len(self.values)
        if n == 1:
            return f"{self.path} ({self.kind}): {q(self.values[0])}"
        if n <= 6:
            return f"{self.path} ({self.kind}): {', '.join(q(v) for v in self.values)}"
        spacing = " evenly spaced in the logarithm" if self.log else ""
        return f"{self.path} ({self.kind}): {n} values{spacing} from {q(min(self.values))} to {q(max(self.values))}"

    @property
    def column(self) -> str:
        """The table column: the path, with the SI unit when it has one ('traffic.EF.rate [bit/s]')."""
        return self.path if self.unit == "1" else f"{self.path} [{self.unit}]"


def get_param(raw: dict, dotted: str):
    """:func:`qosbound.scenario.get_path`: a list element by its index or its ``name``."""
    return get_path(raw, dotted)


def set_param(raw: dict, dotted: str, value) -> dict:
    """:func:`qosbound.scenario.set_path` (a copy of ``raw``), ``value`` (SI) written in the parameter's own form
    (a percentage stays one: :func:`qosbound.scenario.in_form`)."""
    return set_path(raw, dotted, in_form(get_path(raw, dotted), value))


def _number(text: str, what: str, spec: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise ScenarioError(f"'{spec}': the number of points {what!s} must be an integer, got '{text}'",
                            field=FLAG) from None
    return n


def parse_vary(raw: dict, text: str) -> Axis:
    """One ``--vary PARAM=SPEC`` against the scenario's raw mapping (see the module docstring)."""
    if "=" not in text:
        raise ScenarioError(f"'{text}': expected PARAM=LO..HI:N, PARAM=LO..HI:N:log or PARAM=a,b,c", field=FLAG)
    path, spec = (s.strip() for s in text.split("=", 1))
    if not path or not spec:
        raise ScenarioError(f"'{text}': expected PARAM=LO..HI:N, PARAM=LO..HI:N:log or PARAM=a,b,c", field=FLAG)
    try:
        current = value_text(get_param(raw, path))
        kind = _kind_of(current, raw, path)
    except ScenarioError as e:
        raise ScenarioError(e.problem, field=FLAG) from None
    integer = isinstance(current, int) and not isinstance(current, bool) and kind == "count"

    def read(x: str) -> float:
        if not x.strip():
            raise ScenarioError(f"'{text}': an empty value", field=FLAG)
        try:
            return _parse_bound(x.strip(), kind, FLAG)
        except ScenarioError as e:
            raise ScenarioError(f"{path}: {e.problem}", field=FLAG) from None

    log = False
    if ".." in spec:
        rng, _, rest = spec.partition(":")
        lo_t, _, hi_t = rng.partition("..")
        opts = rest.split(":") if rest else []
        if not opts or len(opts) > 2 or (len(opts) == 2 and opts[1].strip() != "log"):
            raise ScenarioError(f"'{spec}': expected LO..HI:N or LO..HI:N:log", field=FLAG)
        n = _number(opts[0].strip(), "N", spec)
        log = len(opts) == 2
        lo, hi = read(lo_t), read(hi_t)
        if n < 1:
            raise ScenarioError(f"'{spec}': the grid of {path} is empty (N = {n})", field=FLAG)
        if n == 1 and lo != hi:
            raise ScenarioError(f"'{spec}': one point cannot span {lo_t.strip()}..{hi_t.strip()}; give N >= 2",
                                field=FLAG)
        if log and not (lo > 0 and hi > 0):
            raise ScenarioError(f"'{spec}': a log grid needs LO and HI above zero", field=FLAG)
        if n == 1:
            values = [lo]
        elif log:
            a, b = math.log(lo), math.log(hi)
            values = [math.exp(a + (b - a) * k / (n - 1)) for k in range(n)]
            values[0], values[-1] = lo, hi
        else:
            values = [lo + (hi - lo) * k / (n - 1) for k in range(n)]
            values[-1] = hi
    else:
        values = [read(x) for x in spec.split(",")]
    if not values:
        raise ScenarioError(f"'{spec}': the grid of {path} is empty", field=FLAG)
    if integer:
        bad = [v for v in values if abs(v - round(v)) > 1e-9 * max(1.0, abs(v))]
        if bad:
            raise ScenarioError(f"{path} is an integer; the grid '{spec}' gives {bad[0]:g}", field=FLAG)
        values = [int(round(v)) for v in values]
    else:
        values = [float(v) for v in values]
    if len(set(values)) != len(values):
        raise ScenarioError(f"'{spec}': the grid of {path} repeats a value", field=FLAG)
    return Axis(path, kind, tuple(values), log)


def points(axes: list[Axis]) -> list[tuple]:
    """Every combination of the axes' values, the first axis varying slowest."""
    paths = [a.path for a in axes]
    if len(set(paths)) != len(paths):
        dup = next(p for p in paths if paths.count(p) > 1)
        raise ScenarioError(f"{dup} is varied twice", field=FLAG)
    total = math.prod(len(a.values) for a in axes)
    if total > MAX_POINTS:
        raise ScenarioError(f"the grid has {total} points, above the limit of {MAX_POINTS}", field=FLAG)
    return list(itertools.product(*(a.values for a in axes)))
