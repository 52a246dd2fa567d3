"""A value of an imported port together with where it came from.

A :class:`Field` is either *given* (it has the configuration lines that decided it, ``sources``) or *assumed* (a
platform default, :class:`Default`, labelled in the output). It may be *derived* from both (e.g. ``20 %`` of a
shaper's rate): ``derivation`` then says how. Nothing in an imported port is a bare value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from qosbound.configs.source import Source

__all__ = ["Default", "Field", "given", "assumed"]


@dataclass(frozen=True)
class Default:
    """A platform default the configuration does not state: the family, the table key, the value, the source."""

    platform: str
    key: str
    value: Any
    citation: str
    meaning: str = ""

    def describe(self) -> str:
        return f"{self.platform} default {self.key} = {self.value}" + (f" ({self.meaning})" if self.meaning else "")


@dataclass(frozen=True)
class Field:
    """A value with its provenance: the lines that gave it and/or the default assumed for it."""

    value: Any
    sources: tuple[Source, ...] = ()
    default: Default | None = None
    derivation: str = ""
    inputs: tuple["Field", ...] = field(default=(), compare=False)

    def all_sources(self) -> tuple[Source, ...]:
        """Every line that decided the value, its inputs' lines included, in file order without repeats."""
        out = set(self.sources)
        for f in self.inputs:
            out.update(f.all_sources())
        return tuple(sorted(out))

    def all_defaults(self) -> tuple[Default, ...]:
        out = [self.default] if self.default is not None else []
        for f in self.inputs:
            out += [d for d in f.all_defaults() if d not in out]
        return tuple(out)

    def provenance(self) -> str:
        """``file:line`` (comma separated when several lines decided it); ``assumed: ...`` for a default."""
        parts = [str(s) for s in self.all_sources()]
        parts += [f"assumed {d.platform} default {d.key}" for d in self.all_defaults()]
        return ", ".join(parts) if parts else "derived"

    def derive(self, value: Any, how: str, *others: "Field") -> "Field":
        """A new field computed from this one (and others): keeps every input's provenance."""
        return Field(value, (), None, how, (self, *others))


def given(value: Any, *sources: Source, how: str = "") -> Field:
    """A value the configuration states, at ``sources``."""
    return Field(value, tuple(s for s in sources if s is not None), None, how)


def assumed(value: Any, default: Default, how: str = "") -> Field:
    """A value the configuration does not state: the platform's default."""
    return Field(value, (), default, how)
