"""Results and verdicts: the common currency of every method.

A :class:`Result` is one number for one metric by one method, with its SI unit,
its interval (confidence interval for simulation, numerical precision or
``exact`` for model checking, ``exact`` for closed forms) and its provenance.
A :class:`Verdict` is an SLO or a cross-method check judged against results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Interval", "Result", "Verdict", "METHODS", "results_to_json"]

#: The methods, in report order.
METHODS = ("closed-form", "model-checked", "simulated", "ns-3", "trace")


@dataclass(frozen=True)
class Interval:
    """Where the true value lies: ``kind`` is e.g. '95% CI', 'precision 1e-09', 'exact', 'bound'."""

    low: float
    high: float
    kind: str

    def contains(self, x: float, slack: float = 0.0) -> bool:
        return self.low - slack <= x <= self.high + slack

    def to_json(self) -> dict[str, Any]:
        return {"low": _clean(self.low), "high": _clean(self.high), "kind": self.kind}


@dataclass(frozen=True)
class Result:
    """One metric value by one method."""

    metric: str
    method: str
    value: float
    unit: str
    interval: Interval | None = None
    provenance: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}")
        if not isinstance(self.value, (int, float)) or not math.isfinite(self.value):
            raise ValueError(f"{self.metric} by {self.method}: value {self.value!r} is not finite")

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "method": self.method,
            "value": _clean(self.value),
            "unit": self.unit,
            "interval": self.interval.to_json() if self.interval else None,
            "provenance": _jsonable(self.provenance),
        }


@dataclass(frozen=True)
class Verdict:
    """An SLO judged on one method's result, or an agreement check between methods.

    ``status`` is 'holds', 'violated', 'inconclusive' (a confidence interval
    straddles the limit: reported, counted as holding only if the point
    estimate does) or 'missing' (no method produced the metric).
    """

    kind: str  # "slo" or "agreement"
    name: str
    metric: str
    method: str
    status: str
    value: float | None = None
    limit: float | None = None
    unit: str = ""
    margin: float | None = None  # limit-side slack, SI; negative when violated
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.status in ("violated", "missing", "disagree")

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "metric": self.metric,
            "method": self.method,
            "status": self.status,
            "value": _clean(self.value),
            "limit": _clean(self.limit),
            "unit": self.unit,
            "margin": _clean(self.margin),
            "detail": self.detail,
        }


def _clean(x):
    if x is None:
        return None
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _jsonable(obj):
    import numpy as np

    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return _clean(obj.item())
    if isinstance(obj, float):
        return _clean(obj)
    return obj


def results_to_json(results: list[Result]) -> list[dict[str, Any]]:
    return [r.to_json() for r in results]
