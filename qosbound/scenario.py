"""Scenario files: safe YAML -> typed, validated, SI-unit pydantic objects.

A scenario names its ``system`` (``pq_txq``, ``af``, ``tsq``, ``tfrc``); the
system's module in :mod:`qosbound.systems` supplies the schema. Every quantity
may carry units ("2 Mbit/s", "128 B", "10 ms", in the grammar of
:mod:`qosbound.units`); a bare number in a field is SI, as the schema documents,
while an SLO limit of a time, rate or size must carry its unit. Errors name
the file, the field (dotted path) and the problem, as :class:`ScenarioError`.
"""

from __future__ import annotations

import copy
import math
import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

import yaml
from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, ValidationInfo, field_validator,
                      model_validator)

from qosbound.errors import ScenarioError
from qosbound.inputs import check_input_file
from qosbound.parameter_path import get_path, path_parts, resolve_path, set_path
from qosbound.results import METHODS
from qosbound.systems import get_system, known_systems
from qosbound.units import Kind, parse_quantity

__all__ = [
    "ScenarioBase", "SLO", "refuse_lax_bool", "Time", "Rate", "Size", "PacketSize", "Probability", "PositiveInt",
    "load_raw", "build", "load", "set_path", "get_path", "value_text", "in_form", "QuantityKind", "field_kind",
    "parameter_kind", "path_parts", "resolve_path", "register_virtual",
]


@dataclass(frozen=True)
class QuantityKind:
    """Marks a field type with the kind of quantity it holds (``Rate`` holds a ``rate``), so a parameter's kind
    is known from the schema (:func:`field_kind`), not guessed from how the file happens to spell its value."""

    kind: str


def _unit(kind: Kind):
    def parse(v):
        try:
            return parse_quantity(v, kind)
        except ScenarioError as e:
            raise ValueError(e.problem) from None

    return BeforeValidator(parse)


def _probability(v):
    try:
        x = parse_quantity(v, "probability")
    except ScenarioError as e:
        raise ValueError(e.problem) from None
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"probability {v!r} is outside [0, 1]")
    return x


def _positive(v):
    if not isinstance(v, (int, float)) or v <= 0:
        raise ValueError(f"must be positive, got {v!r}")
    return v


def _int(v):
    if isinstance(v, bool):
        raise ValueError(f"expected an integer, got {v!r}")
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, str):
        try:
            f = float(v)
        except ValueError:
            raise ValueError(f"expected an integer, got {v!r}") from None
        if not f.is_integer():
            raise ValueError(f"expected an integer, got {v!r}")
        v = int(f)
    if not isinstance(v, int):
        raise ValueError(f"expected an integer, got {v!r}")
    return v


def _positive_int(v):
    v = _int(v)
    if v < 1:
        raise ValueError(f"must be a positive integer, got {v}")
    return v


#: Largest packet accepted: the largest IPv4 packet (IPv6 jumbograms are not modelled).
MAX_PACKET_BYTES = 65535


def _packet_size(v):
    try:
        x = parse_quantity(v, "size")
    except ScenarioError as e:
        raise ValueError(e.problem) from None
    if not x > 0:
        raise ValueError(f"packet size must be positive, got {v!r}")
    if x > MAX_PACKET_BYTES:
        raise ValueError(f"packet size {v!r} is larger than the largest IP packet ({MAX_PACKET_BYTES} B)")
    return x


Time = Annotated[float, _unit("time"), QuantityKind("time")]
#: A packet size in bytes, in (0, 65535].
PacketSize = Annotated[float, BeforeValidator(_packet_size), QuantityKind("size")]
Rate = Annotated[float, _unit("rate"), QuantityKind("rate")]
Size = Annotated[float, _unit("size"), QuantityKind("size")]
Probability = Annotated[float, BeforeValidator(_probability), QuantityKind("probability")]
PositiveInt = Annotated[int, BeforeValidator(_positive_int), QuantityKind("count")]
NonNegInt = Annotated[int, BeforeValidator(lambda v: _nonneg(_int(v))), QuantityKind("count")]


def _nonneg(v):
    if v < 0:
        raise ValueError(f"must be non-negative, got {v}")
    return v


def _admits_bool(annotation) -> bool:
    """Whether a field's type lets a YAML ``true``/``false`` through on purpose (``bool``, ``Any``, a Literal of
    a boolean), as opposed to pydantic's lax reading of ``true`` as 1 in an int or float field."""
    if annotation is bool or annotation is Any:
        return True
    if get_origin(annotation) is Literal:
        return any(isinstance(a, bool) for a in get_args(annotation))
    return any(_admits_bool(a) for a in get_args(annotation) if not isinstance(a, (str, int, float)))


def _has_bool(v) -> bool:
    """A boolean as the value, or as an item of a list of scalars (sections are checked by their own model)."""
    return isinstance(v, bool) or (isinstance(v, (list, tuple)) and any(isinstance(x, bool) for x in v))


def refuse_lax_bool(model: type[BaseModel], v, info: ValidationInfo):
    """Refuse ``true``/``false`` in a field that is not a flag: pydantic reads it as 1/0 in a number field, so
    ``hints: [true, true]`` became hints [1, 1] and ``q_max: true`` a buffer of one packet."""
    field = model.model_fields.get(info.field_name) if info.field_name else None
    if field is not None and _has_bool(v) and not _admits_bool(field.annotation):
        raise ValueError(f"expected {'numbers' if isinstance(v, (list, tuple)) else 'a number or a quantity'}, "
                         f"got a boolean ({v!r}); true/false are only for on/off fields")
    return v


class SLO(BaseModel):
    """A service-level objective: ``metric`` must stay at most ``max`` (or at least ``min``).

    The limit is read in the metric's unit ("15 ms" for a delay, 1e-3 for a
    probability); a time, rate or size limit must carry its unit (a bare 20 on a
    delay is refused, not read as 20 s). ``method`` restricts the SLO to one method; by default every
    method that produces the metric is judged.
    """

    model_config = ConfigDict(extra="forbid")

    metric: str = Field(description="the metric judged, e.g. EF.delay.p99, EF.loss, AF1.drop.AF11")
    max: Any = Field(default=None, description="upper limit in the metric's unit: '20 ms', '2 Mbit/s', '1500 B' "
                                               "(a time, rate or size needs its unit); a probability bare or in %")
    min: Any = Field(default=None, description="lower limit, read like max")
    method: str | None = Field(default=None, description="judge by this method only (default: every method that "
                                                         "gives the metric)")
    name: str | None = Field(default=None, description="the SLO's name in reports (default: METRIC <= LIMIT)")

    @model_validator(mode="after")
    def _one_limit(self):
        if (self.max is None) == (self.min is None):
            raise ValueError("give exactly one of 'max' or 'min'")

        if self.method is not None and self.method not in METHODS:
            raise ValueError(f"unknown method '{self.method}'; expected one of {', '.join(METHODS)}")
        return self

    @property
    def bound(self) -> str:
        return "max" if self.max is not None else "min"

    @property
    def raw_limit(self):
        return self.max if self.max is not None else self.min

    def title(self) -> str:
        if self.name:
            return self.name
        op = "<=" if self.bound == "max" else ">="
        return f"{self.metric} {op} {self.raw_limit}"


class ScenarioBase(BaseModel):
    """Fields every scenario shares. Systems subclass it with their own sections."""

    model_config = ConfigDict(extra="forbid")

    name: str
    system: str
    description: str = ""
    source: str = ""
    slos: list[SLO] = []

    @field_validator("*", mode="before")
    @classmethod
    def _no_lax_bool(cls, v, info: ValidationInfo):
        return refuse_lax_bool(cls, v, info)

    # Set by :func:`build`; not part of the file.
    _path: str | None = None
    _raw: dict | None = None

    @property
    def path(self) -> str | None:
        return self._path

    @property
    def raw(self) -> dict:
        return copy.deepcopy(self._raw or {})


#: PyYAML's safe loader, in C (libyaml, shipped in PyYAML's wheels) where present: the same safe semantics, about
#: four times faster on a network of thousands of ports and flows (megabytes).
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: Largest scenario file read (bytes): scenarios are a few kB; this refuses /dev/zero or a misplaced trace.
MAX_SCENARIO_BYTES = 4 * 2**20


#: Scenarios built in memory under a label (a port imported from a router configuration: ``FILE#INTERFACE``),
#: read by :func:`load_raw` as if a file held them; a label may hold the error that stops its import instead.
_VIRTUAL: dict[str, dict | Exception] = {}


def register_virtual(label: str, raw: dict | Exception) -> None:
    """Make ``load_raw(label)`` return a copy of ``raw`` (or raise it, for an error)."""
    _VIRTUAL[label] = raw


def load_raw(path: str | Path) -> dict:
    """Read a YAML scenario safely; errors name the file. Only regular files up to 4 MiB are read (and the
    scenarios registered in memory by :func:`register_virtual`)."""
    held = _VIRTUAL.get(str(path))
    if isinstance(held, Exception):
        raise held
    if held is not None:
        return copy.deepcopy(held)
    p = Path(path)
    check_input_file(p, "scenario file", lambda problem: ScenarioError(problem, file=str(path)),
                     max_bytes=MAX_SCENARIO_BYTES)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ScenarioError(f"cannot read: {e.strerror}", file=str(path)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise ScenarioError(f"line {line}: not UTF-8 text (byte 0x{data[e.start]:02x})", file=str(path)) from None
    try:
        data = yaml.load(text, Loader=SAFE_LOADER)
    except yaml.YAMLError as e:
        if SAFE_LOADER is not yaml.SafeLoader:
            # libyaml's marks can point past the end of the text ("line 2" of a one-line file); the pure-Python
            # parser's message names the place where the problem is: read it again with that one to say so
            try:
                yaml.load(text, Loader=yaml.SafeLoader)
            except yaml.YAMLError as pure:
                e = pure
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or "invalid YAML"
        raise ScenarioError(f"invalid YAML{where}: {problem}", file=str(path)) from None
    except Exception as e:  # pragma: no cover - defensive: yaml may raise odd errors on binary input
        raise ScenarioError(f"invalid YAML: {e.__class__.__name__}", file=str(path)) from None
    if not isinstance(data, dict):
        raise ScenarioError("top level must be a mapping of fields (name, system, ...)", file=str(path))
    return data


def error_location(loc) -> str:
    parts = []
    for x in loc:
        if isinstance(x, int):
            parts.append(f"[{x}]")
        elif isinstance(x, str) and (x.startswith("function-") or x in ("tagged-union",)):
            continue
        else:
            parts.append(("." if parts else "") + str(x))
    return "".join(parts)


def error_problem(err: dict) -> str:
    msg = err.get("msg", "invalid value")
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    if err.get("type") == "extra_forbidden":
        return "unknown field (check the spelling)"
    if err.get("type") == "missing":
        return "required field is missing"
    return msg


def build(raw: dict, path: str | None = None):
    """Validate a raw mapping into the scenario class of its ``system``."""
    file = str(path) if path else None
    if not isinstance(raw, dict):
        raise ScenarioError("top level must be a mapping", file=file)
    name = raw.get("system")
    if name is None:
        raise ScenarioError("required field is missing", file=file, field="system")
    if not isinstance(name, str) or name not in known_systems():
        raise ScenarioError(f"unknown system {name!r}; expected one of {', '.join(known_systems())}",
                            file=file, field="system")
    system = get_system(name)
    try:
        scn = system.Scenario.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        raise ScenarioError(error_problem(err), file=file, field=error_location(err.get("loc", ())) or None) from None
    except ScenarioError as e:
        raise e.located(file=file) from None
    except (ValueError, TypeError, ArithmeticError) as e:
        raise ScenarioError(str(e), file=file) from None
    scn._path = file
    scn._raw = copy.deepcopy(raw)
    _check_slos(system, scn, file)
    return scn


def _check_slos(system, scn, file: str | None) -> None:
    """SLOs are checked now, so a bad one is an input error naming its field, not a late crash or a silent
    'missing' verdict: a known metric of a declared class or flow, a limit in range, no duplicates."""
    try:
        declared = {m.split(".")[0].split("@")[0] for m in system.metric_names(scn)}
    except Exception:  # noqa: BLE001 - a system that cannot list its metrics for this scenario: skip the check
        declared = None
    seen: dict[tuple, int] = {}
    for i, slo in enumerate(scn.slos):
        here = f"slos[{i}]"
        try:
            kind = system.metric_kind(slo.metric)
        except ScenarioError as e:
            raise ScenarioError(e.problem, file=file, field=f"{here}.metric") from None
        head = slo.metric.split(".")[0].split("@")[0]
        if declared and head not in declared and head != scn.system:
            raise ScenarioError(f"the scenario declares no class or flow '{head}' (it has "
                                f"{', '.join(sorted(declared))})", file=file, field=f"{here}.metric")
        try:
            limit = system.slo_limit(scn, slo)
        except ScenarioError as e:
            field = f"{here}.metric" if e.problem.startswith(("unknown metric", "no flow")) else f"{here}.{slo.bound}"
            raise ScenarioError(e.problem, file=file, field=field) from None
        if kind == "probability" and not 0.0 <= limit <= 1.0:
            raise ScenarioError(f"{slo.metric} is a probability: its limit must lie in [0, 1], got {limit:g}",
                                file=file, field=f"{here}.{slo.bound}")
        if kind in ("time", "rate", "size", "count") and limit < 0:
            raise ScenarioError(f"a {kind} limit cannot be negative, got {slo.raw_limit!r}", file=file,
                                field=f"{here}.{slo.bound}")
        key = (slo.metric, slo.bound, slo.method)
        if key in seen:
            raise ScenarioError(f"duplicates slos[{seen[key]}] ({slo.metric}, {slo.bound}"
                                f"{', method ' + slo.method if slo.method else ''}): keep one", file=file, field=here)
        seen[key] = i


def load(path: str | Path):
    """Load and validate a scenario file."""
    return build(load_raw(path), str(path))


def _members(tp, metadata=()) -> list[tuple[Any, tuple]]:
    """(type, metadata) of each member of a union, with Annotated metadata collected."""
    origin = typing.get_origin(tp)
    if origin is Annotated:
        args = typing.get_args(tp)
        return _members(args[0], (*metadata, *tp.__metadata__))
    if origin in (typing.Union, types.UnionType):
        return [m for a in typing.get_args(tp) if a is not type(None) for m in _members(a)]
    return [(tp, tuple(metadata))]


def _step(tp, metadata, part: str) -> list[tuple[Any, tuple]]:
    """The types one path part below ``tp``: a model's field (by name or alias), a list's item (a number, or an
    element's ``name``), a dict's value (any key)."""
    out: list[tuple[Any, tuple]] = []
    for t, meta in _members(tp, metadata):
        origin = typing.get_origin(t)
        if isinstance(t, type) and issubclass(t, BaseModel):
            for name, info in t.model_fields.items():
                if part in (name, info.alias):
                    out += _members(info.annotation, tuple(info.metadata))
        elif origin in (list, tuple):  # an element by its index or its name
            out += _members(typing.get_args(t)[0])
        elif origin is dict:
            out += _members(typing.get_args(t)[1])
    return out


def field_kind(model: type, dotted: str | list[str]) -> str | None:
    """The kind of quantity (``time``, ``rate``, ``size``, ``probability``, ``count``) the scenario schema
    ``model`` declares at the dotted path (a number indexes a list: ``traffic.BE.sizes.0.size``), from the
    field's type; ``count`` for a plain number, None when the path names no quantity (or no field).

    >>> from qosbound.systems.pq_txq import Scenario
    >>> field_kind(Scenario, "traffic.EF.rate"), field_kind(Scenario, "txq.units"), field_kind(Scenario, "name")
    ('rate', 'count', None)
    """
    cur = [(model, ())]
    for part in (path_parts(dotted) if isinstance(dotted, str) else dotted):
        cur = [m for t, meta in cur for m in _step(t, meta, part)]
        if not cur:
            return None
    kinds = set()
    for t, meta in cur:
        marks = [m.kind for m in meta if isinstance(m, QuantityKind)]
        if marks:
            kinds.update(marks)
        elif t in (int, float):
            kinds.add("count")
    return kinds.pop() if len(kinds) == 1 else None


def parameter_kind(raw: dict, dotted: str) -> str | None:
    """The kind of the parameter at ``dotted`` in a scenario mapping: from its system's schema, else (a system
    that cannot be loaded, or a field the schema does not type) None."""
    name = raw.get("system") if isinstance(raw, dict) else None
    if not isinstance(name, str) or name not in known_systems():
        return None
    try:
        parts = resolve_path(raw, dotted)
    except ScenarioError:
        parts = path_parts(dotted)
    return field_kind(get_system(name).Scenario, parts)


_FORM = re.compile(r"^\s*(remaining\s+)?([^%]*\S)\s*%\s*$", re.I)


def value_text(value):
    """A parameter's value with a word before its quantity taken off: ``'remaining 20 %'`` -> ``'20 %'`` (other
    values unchanged), so ``admit``, ``sweep`` and ``tune`` read it as the quantity it is."""
    if isinstance(value, str):
        m = _FORM.match(value)
        if m and m.group(1):
            return f"{m.group(2)} %"
    return value


def in_form(original, value):
    """``value`` (SI) written the way ``original`` is: a percentage stays a percentage (``'remaining 20 %'`` ->
    ``'remaining 25 %'`` for 0.25), anything else is the SI value."""
    if isinstance(original, str):
        m = _FORM.match(original)
        if m:
            return f"{m.group(1) or ''}{float(value) * 100.0!r} %"
    return value


def finite(x: float) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)
