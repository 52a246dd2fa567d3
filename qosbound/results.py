"""Results and verdicts: the common currency of every method.

A :class:`Result` is one number for one metric by one method, with its SI unit,
an :class:`Interval` that says honestly *what kind of number it is*, and its
provenance. Every result has exactly one :class:`Kind`:

``exact``
    computed exactly (a closed form evaluated in floating point, or rational
    arithmetic); ``low == value == high``.
``numerical``
    the exact value of the stated model, computed by a floating-point solver:
    the true value lies in ``[low, high]`` (an error bound, e.g. an a-posteriori
    residual bound or a truncation bound).
``upper bound`` / ``lower bound``
    the true value of the metric is at most (at least) ``value``. An upper bound
    may also bound other metrics (``Result.bounds``), e.g. a bound on the
    maximum delay bounds every delay quantile.
``approximation``
    an approximation that neglects something (``Interval.neglects`` says what);
    ``[low, high]`` is an error estimate when one is known, else the point.
``confidence interval``
    a statistical estimate: ``[low, high]`` at ``Interval.level``, with the
    standard error ``se`` and degrees of freedom ``dof`` when known, so that
    agreement checks can re-derive the interval at a family-wise level.

A :class:`Curve` is a whole function computed by one method, e.g. the CCDF of a class's delay
``P(delay > x)`` over a grid of ``x``, with one kind for all its points; a result may carry the curve it
was read from (:attr:`Result.curve`), so reports can draw it.

A :class:`Verdict` is an SLO or a cross-method check judged against results.
"""

from __future__ import annotations

import enum
import fnmatch
import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Kind", "Interval", "Curve", "Result", "Verdict", "METHODS", "results_to_json", "InconsistentResult"]


class InconsistentResult(ValueError):
    """A result or interval that contradicts itself (a value outside its own interval, an empty interval, an
    unknown kind): an internal error of the code that built it, never a user's input error."""

#: The methods, in report order.
METHODS = ("closed-form", "model-checked", "simulated", "ns-3", "trace")


class Kind(str, enum.Enum):
    """What kind of number a result is (see the module docstring)."""

    EXACT = "exact"
    NUMERICAL = "numerical"
    UPPER_BOUND = "upper bound"
    LOWER_BOUND = "lower bound"
    APPROXIMATION = "approximation"
    CI = "confidence interval"

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


def _legacy_kind(text: str) -> tuple[Kind, float | None]:
    """Map an old free-text interval label to a kind (and a CI level). Kept only while callers migrate."""
    t = text.strip().lower()
    if t == "exact":
        return Kind.EXACT, None
    if t in ("bound", "upper bound"):
        return Kind.UPPER_BOUND, None
    if t in ("lower bound", "observed maximum"):
        return Kind.LOWER_BOUND, None
    if t.startswith("approximation"):
        return Kind.APPROXIMATION, None
    if t.endswith("% ci"):
        return Kind.CI, float(t[:-4]) / 100.0
    if t.startswith("precision") or "error" in t:
        return Kind.NUMERICAL, None
    raise InconsistentResult(f"unknown interval kind {text!r}")


@dataclass(frozen=True)
class Interval:
    """Where the true value lies, and what kind of statement that is.

    Build one with the class methods (:meth:`exact`, :meth:`numerical`,
    :meth:`upper_bound`, :meth:`lower_bound`, :meth:`approximation`,
    :meth:`ci`) rather than the constructor.
    """

    low: float
    high: float
    kind: Kind
    level: float | None = None  # confidence level, for Kind.CI
    se: float | None = None  # standard error of the estimate, for Kind.CI
    dof: int | None = None  # degrees of freedom of ``se`` (replications - 1); None = normal
    neglects: str | None = None  # what an approximation leaves out
    note: str = ""  # how the interval was obtained (e.g. 'a-posteriori residual bound')

    def __post_init__(self):
        if not isinstance(self.kind, Kind):
            kind, level = _legacy_kind(str(self.kind))
            object.__setattr__(self, "kind", kind)
            if level is not None and self.level is None:
                object.__setattr__(self, "level", level)
            if kind is Kind.APPROXIMATION and not self.neglects:  # legacy label: say that nobody said what
                object.__setattr__(self, "neglects", "unstated (legacy 'approximation' label)")
        for name in ("low", "high"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or math.isnan(v):
                raise InconsistentResult(f"interval {name} {v!r} is not a number")
            object.__setattr__(self, name, float(v))
        if self.low > self.high:
            raise InconsistentResult(f"interval [{self.low!r}, {self.high!r}] is empty")
        if self.kind is Kind.CI and not (self.level is not None and 0.0 < self.level < 1.0):
            raise InconsistentResult("a confidence interval needs a level in (0, 1)")
        if self.kind is Kind.APPROXIMATION and not self.neglects:
            raise InconsistentResult("an approximation must say what it neglects")

    # ---- constructors -------------------------------------------------------------------------------
    @classmethod
    def exact(cls, value: float, note: str = "") -> "Interval":
        return cls(value, value, Kind.EXACT, note=note)

    @classmethod
    def numerical(cls, low: float, high: float, note: str = "") -> "Interval":
        """The exact value of the model lies in ``[low, high]`` (a numerical error bound)."""
        return cls(low, high, Kind.NUMERICAL, note=note)

    @classmethod
    def upper_bound(cls, value: float, note: str = "") -> "Interval":
        return cls(value, value, Kind.UPPER_BOUND, note=note)

    @classmethod
    def lower_bound(cls, value: float, note: str = "") -> "Interval":
        return cls(value, value, Kind.LOWER_BOUND, note=note)

    @classmethod
    def approximation(cls, value: float, neglects: str, low: float | None = None, high: float | None = None,
                      note: str = "") -> "Interval":
        """An approximation of the metric; ``neglects`` says what it leaves out; ``[low, high]`` an error
        estimate if one is known."""
        return cls(value if low is None else low, value if high is None else high, Kind.APPROXIMATION,
                   neglects=neglects, note=note)

    @classmethod
    def ci(cls, low: float, high: float, level: float, se: float | None = None, dof: int | None = None,
           note: str = "") -> "Interval":
        return cls(low, high, Kind.CI, level=level, se=se, dof=dof, note=note)

    # ---- queries --------------------------------------------------------------------------------------
    @property
    def is_bound(self) -> bool:
        return self.kind in (Kind.UPPER_BOUND, Kind.LOWER_BOUND)

    @property
    def half_width(self) -> float:
        return 0.5 * (self.high - self.low)

    def contains(self, x: float, slack: float = 0.0) -> bool:
        return self.low - slack <= x <= self.high + slack

    def label(self) -> str:
        """A short human label: 'exact', 'numerical', 'upper bound', 'approximation', '95% CI'."""
        if self.kind is Kind.CI:
            pct = f"{self.level * 100:.6f}".rstrip("0").rstrip(".")
            return f"{pct}% CI"
        return self.kind.value

    def describe(self) -> str:
        """The label with what an approximation neglects: 'approximation (neglects the PQ capacity)'."""
        return self.label() + (f" (neglects {self.neglects})" if self.neglects else "")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.value, "label": self.label(), "low": _clean(self.low), "high": _clean(self.high)}
        if self.level is not None:
            out["level"] = self.level
        if self.se is not None:
            out["std_error"] = _clean(self.se)
        if self.dof is not None:
            out["dof"] = self.dof
        if self.neglects:
            out["neglects"] = self.neglects
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class Curve:
    """A function of one quantity by one method, as a plot draws it: ``value[i]`` at ``x[i]``.

    ``metric`` names what the values are, as metric names do: ``EF.delay.ccdf`` is ``P(EF.delay > x)``
    (``x`` in ``x_unit``, the values in ``unit``). Every point has the same ``kind`` with the meaning of
    :class:`Kind`: a curve of ``upper bound`` kind is at or above the true function at every ``x``; a
    ``confidence interval`` curve has ``low``/``high`` at ``level`` at every point (pointwise, not a band for
    the whole function); an ``approximation`` says what it ``neglects``. ``note`` says how the points were
    obtained (e.g. 'histogram bin edges').
    """

    metric: str
    method: str
    x_unit: str
    unit: str
    kind: Kind
    x: tuple[float, ...]
    value: tuple[float, ...]
    low: tuple[float, ...] | None = None
    high: tuple[float, ...] | None = None
    level: float | None = None  # confidence level, for Kind.CI
    neglects: str | None = None  # what an approximation leaves out
    note: str = ""

    def __post_init__(self):
        if self.method not in METHODS:
            raise InconsistentResult(f"curve {self.metric}: unknown method {self.method!r}")
        if not isinstance(self.kind, Kind):
            raise InconsistentResult(f"curve {self.metric}: kind {self.kind!r} is not a Kind")
        for name in ("x", "value", "low", "high"):
            seq = getattr(self, name)
            if seq is None:
                continue
            seq = tuple(float(v) for v in seq)
            object.__setattr__(self, name, seq)
            if len(seq) != len(self.x):
                raise InconsistentResult(f"curve {self.metric}: {len(seq)} {name} values for {len(self.x)} points")
            if not all(math.isfinite(v) for v in seq):
                raise InconsistentResult(f"curve {self.metric} by {self.method}: a {name} value is not finite")
        if not self.x:
            raise InconsistentResult(f"curve {self.metric} by {self.method} has no points")
        if any(b <= a for a, b in zip(self.x, self.x[1:])):
            raise InconsistentResult(f"curve {self.metric} by {self.method}: x must increase")
        if (self.low is None) != (self.high is None):
            raise InconsistentResult(f"curve {self.metric}: give both low and high, or neither")
        if self.low is not None:
            tol = 1e-12
            if any(not (lo - tol * max(1.0, abs(v)) <= v <= hi + tol * max(1.0, abs(v)))
                   for lo, v, hi in zip(self.low, self.value, self.high)):
                raise InconsistentResult(f"curve {self.metric} by {self.method}: a value lies outside its interval")
        if self.kind is Kind.CI and not (self.level is not None and 0.0 < self.level < 1.0):
            raise InconsistentResult("a confidence-interval curve needs a level in (0, 1)")
        if self.kind is Kind.APPROXIMATION and not self.neglects:
            raise InconsistentResult("an approximation must say what it neglects")

    def label(self) -> str:
        """The kind as reports name it: 'upper bound', '95% CI', 'approximation'."""
        if self.kind is Kind.CI:
            pct = f"{self.level * 100:.6f}".rstrip("0").rstrip(".")
            return f"{pct}% CI"
        return self.kind.value

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"metric": self.metric, "method": self.method, "x_unit": self.x_unit,
                               "unit": self.unit, "kind": self.kind.value, "label": self.label(),
                               "x": list(self.x), "value": list(self.value)}
        if self.low is not None:
            out["low"], out["high"] = list(self.low), list(self.high)
        if self.level is not None:
            out["level"] = self.level
        if self.neglects:
            out["neglects"] = self.neglects
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class Result:
    """One metric value by one method.

    ``bounds`` lists further metrics (``fnmatch`` patterns on metric names) that an
    upper or lower bound also bounds, e.g. ``EF.delay.max`` bounding ``EF.delay.p*``.
    ``estimates`` names the metric an estimate is of when its own name differs,
    e.g. ``EF.delay.cobham_mean`` (an approximation) estimates ``EF.delay.mean``;
    agreement checks then compare it with the other methods' ``EF.delay.mean``.
    ``curve`` is the whole function the method read this value from, when it has one (e.g. the delay CCDF
    behind a mean or a quantile); reports draw it, and ``--json`` lists it under ``curves``, not in the
    result's own form.
    """

    metric: str
    method: str
    value: float
    unit: str
    interval: Interval | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    bounds: tuple[str, ...] = ()
    estimates: str | None = None
    curve: Curve | None = None

    def __post_init__(self):
        if self.method not in METHODS:
            raise InconsistentResult(f"unknown method {self.method!r}")
        if not isinstance(self.value, (int, float)) or not math.isfinite(self.value):
            raise InconsistentResult(f"{self.metric} by {self.method}: value {self.value!r} is not finite")
        iv = self.interval
        if iv is not None:
            tol = 1e-12 * max(1.0, abs(self.value))
            if not iv.contains(self.value, tol):
                raise InconsistentResult(f"{self.metric} by {self.method}: value {self.value!r} lies outside its own "
                                 f"{iv.label()} [{iv.low!r}, {iv.high!r}]")
        if self.bounds and (iv is None or not iv.is_bound):
            raise InconsistentResult(f"{self.metric} by {self.method}: only a bound can bound other metrics")
        if self.curve is not None and self.curve.method != self.method:
            raise InconsistentResult(f"{self.metric} by {self.method}: its curve is by {self.curve.method}")
        if self.estimates is not None and (iv is None or iv.is_bound):
            raise InconsistentResult(f"{self.metric} by {self.method}: a bound bounds (use 'bounds'), it does not "
                                     "estimate another metric")

    @property
    def kind(self) -> Kind | None:
        return self.interval.kind if self.interval is not None else None

    def bounds_metric(self, metric: str) -> bool:
        """Whether this result is a bound on ``metric`` (its own metric, or one named in ``bounds``)."""
        if self.interval is None or not self.interval.is_bound:
            return False
        return metric == self.metric or any(fnmatch.fnmatchcase(metric, p) for p in self.bounds)

    def to_json(self) -> dict[str, Any]:
        out = {
            "metric": self.metric,
            "method": self.method,
            "value": _clean(self.value),
            "unit": self.unit,
            "kind": self.interval.kind.value if self.interval else None,
            "interval": self.interval.to_json() if self.interval else None,
            "provenance": _jsonable(self.provenance),
        }
        if self.bounds:
            out["bounds"] = list(self.bounds)
        if self.estimates:
            out["estimates"] = self.estimates
        return out


@dataclass(frozen=True)
class Verdict:
    """An SLO judged on one method's result, or an agreement check between methods.

    For SLOs ``status`` is 'holds', 'violated', 'inconclusive' (a confidence
    interval straddles the limit: reported, counted as holding only if the
    point estimate does) or 'missing' (no method produced the metric).
    For agreement checks it is 'agree', 'disagree' or 'approximate' (an
    approximation compared with a reference: the gap is reported, it is not a
    contradiction).
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
    result_kind: str = ""  # kind of the judged result (SLO), or of the two compared results (agreement)
    bound: str = ""  # an SLO's side of its limit: "max" (value <= limit) or "min" (value >= limit)

    @property
    def failed(self) -> bool:
        """An SLO that does not hold (violated, or no method produced its metric)."""
        return self.kind == "slo" and self.status in ("violated", "missing")

    @property
    def disagrees(self) -> bool:
        """A cross-method check that found two methods contradicting each other."""
        return self.kind == "agreement" and self.status == "disagree"

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
            "result_kind": self.result_kind,
            **({"bound": self.bound} if self.bound else {}),
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
    if isinstance(obj, enum.Enum):
        return obj.value
    return obj


def results_to_json(results: list[Result]) -> list[dict[str, Any]]:
    return [r.to_json() for r in results]
