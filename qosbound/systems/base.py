"""Helpers shared by the system modules: metric names, method selection, SLO limits."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from qosbound.errors import ResourceError, ScenarioError
from qosbound.metric_names import ccdf_name, compact_time, parse_quantile_name, quantile_name
from qosbound.scenario import NonNegInt, PositiveInt, Rate, Time, refuse_lax_bool
from qosbound.units import parse_quantity

__all__ = ["quantile_name", "ccdf_name", "parse_quantile_name", "Strict", "compact_time", "check_range", "MIN_RATE",
           "MAX_RATE", "MAX_BUFFER", "MAX_BURST", "MAX_TIME", "check_ccdf_points", "check_quantiles",
           "requested_statistics"]


class Strict(BaseModel):
    """Base for scenario sections: unknown fields are errors."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _no_lax_bool(cls, v, info: ValidationInfo):
        return refuse_lax_bool(cls, v, info)

# ---- checks shared by the systems' metric sections ------------------------------------------------------

def check_ccdf_points(v: list[float]) -> list[float]:
    """CCDF points are positive times (NaN refused too)."""
    if any(not d > 0 for d in v):
        raise ValueError("CCDF points must be positive times")
    return v


def check_quantiles(v: list[float]) -> list[float]:
    """Quantiles are numbers strictly between 0 and 1."""
    for q in v:
        if not isinstance(q, (int, float)) or not 0 < q < 1:
            raise ValueError(f"quantile {q!r} is not in (0, 1)")
    return v


def requested_statistics(ccdf_at, quantiles, stats) -> tuple[list[float], list[float]]:
    """The CCDF points and quantiles a run computes: ``ccdf_at`` and ``quantiles`` (copied), then those the delay
    statistics ``stats`` name (``ccdf@T``, ``pNN``, as after ``delay.`` in a metric name; any other is skipped), in
    their order, each once: a time within 1e-12 s of one listed, or a quantile within 1e-12 of one, is not added
    again. A time that does not parse raises ScenarioError (field ``metric``)."""
    ccdf = list(ccdf_at)
    qs = list(quantiles)
    for stat in stats:
        if stat.startswith("ccdf@"):
            d = parse_quantity(stat[5:], "time", field="metric")
            if not any(abs(d - x) <= 1e-12 for x in ccdf):
                ccdf.append(d)
        q = parse_quantile_name(stat)
        if q is not None and not any(abs(q - x) < 1e-12 for x in qs):
            qs.append(q)
    return ccdf, qs


# ---- method options shared by the systems' scenario schemas --------------------------------------------

def _precision(v: float) -> float:
    if not 0 < v < 0.1:
        raise ValueError("precision must be in (0, 0.1)")
    return v


#: Requested numerical precision of a model-checking run (relative), in (0, 0.1).
Precision = Annotated[float, AfterValidator(_precision)]


class ClosedFormOptions(Strict):
    enabled: bool = True


class ModelOptionsBase(Strict):
    enabled: bool = True
    precision: Precision = 1e-10


class PacketSimOptions(Strict):
    """Independent replications of a fixed number of packets; ``warmup`` is a fraction of them."""

    enabled: bool = True
    packets: PositiveInt = 2_000_000
    replications: PositiveInt = 8
    seed: NonNegInt = 1  # NumPy's SeedSequence takes non-negative integers only
    warmup: float = 0.01
    confidence: float = 0.95

    #: Budget on packets * replications: the simulators run at most ~1e7 packets/s per core, so 1e10 packets is
    #: already about 20 minutes; a larger run is refused before it starts (raise it here when that is meant).
    max_total_packets: float = 1e10

    @model_validator(mode="after")
    def _check(self):
        if self.packets < 1000:
            raise ValueError("simulate at least 1000 packets per replication")
        total = float(self.packets) * float(self.replications)
        if total > self.max_total_packets:
            raise ResourceError(f"{self.packets:.3g} packets x {self.replications} replications = {total:.3g} "
                                f"simulated packets, above the budget of {self.max_total_packets:.3g} (at ~1e7 "
                                f"packets/s it would run for at least {_duration(total / 1e7)}): simulate fewer "
                                "packets, or raise methods.simulated.max_total_packets",
                                field="methods.simulated.packets")
        _check_replications(self.replications, self.confidence)
        if not 0 <= self.warmup < 0.5:
            raise ValueError("warmup is a fraction of the packets in [0, 0.5)")
        return self


def _check_replications(replications: int, confidence: float) -> None:
    """What every simulation's interval needs: two replications or more, a confidence level in (0.5, 1)."""
    if replications < 2:
        raise ValueError("at least 2 replications are needed for a confidence interval")
    if not 0.5 < confidence < 1:
        raise ValueError("confidence must be in (0.5, 1)")


def _duration(seconds: float) -> str:
    for unit, n in (("years", 3.15e7), ("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if seconds >= n:
            return f"{seconds / n:.3g} {unit}"
    return f"{seconds:.3g} s"


class TimedSimOptions(Strict):
    """Independent replications of a fixed simulated time; ``warmup`` is a time at the start of each."""

    enabled: bool = True
    duration: Time = 60.0
    warmup: Time = 10.0
    replications: PositiveInt = 3
    seed: NonNegInt = 1  # NumPy's SeedSequence takes non-negative integers only
    confidence: float = 0.95

    @model_validator(mode="after")
    def _check(self):
        _check_replications(self.replications, self.confidence)
        if not 0 <= self.warmup < self.duration:
            raise ValueError("warmup must lie in [0, duration)")
        return self


class MethodsBase(Strict):
    """The ``methods:`` section: subclasses add ``model_checked`` and ``simulated`` with their own options."""

    model_config = Strict.model_config | {"populate_by_name": True}

    closed_form: ClosedFormOptions = Field(default_factory=ClosedFormOptions, alias="closed-form")


#: The physical ranges scenario numbers must lie in: beyond them no port exists, and the closed forms, solvers and
#: simulators over- or underflow (a link of 1e308 bit/s gave rates of inf, one of 1e-308 bit/s a NaN in a root
#: finder; a buffer of 1e308 packets an array larger than memory). Inside them every method answers.
MIN_RATE = 1.0  # bit/s
MAX_RATE = 1e15  # bit/s: 1 Pbit/s, above any link built
MAX_BUFFER = 10**9  # packets
MAX_BURST = 1e12  # bytes
MAX_TIME = 1e6  # seconds (about 11.6 days): a latency or RTT above it is a unit mistake


def check_range(v: float | None, lo: float | None, hi: float, what: str, unit: str, field: str | None = None):
    """``v`` when None or within [lo, hi] (``lo`` None: at most ``hi``; a sign is checked where the field's own
    message says what it means); else a ScenarioError (``field`` given) or a ValueError (inside a pydantic
    validator, which adds the field) naming the range."""
    if v is None or ((lo is None or lo <= v) and v <= hi):
        return v
    where = f"above {hi:g}" if lo is None else f"outside [{lo:g}, {hi:g}]"
    problem = f"{what} {v:.4g} {unit} is {where} {unit}"
    if field is None:
        raise ValueError(problem)
    raise ScenarioError(problem, field=field)


class Link(Strict):
    """The output link: its line rate (bit/s)."""

    rate: Rate = Field(description="line rate, bit/s")

    @field_validator("rate")
    @classmethod
    def _pos(cls, v):
        if v <= 0:
            raise ValueError("link rate must be positive")
        return check_range(v, MIN_RATE, MAX_RATE, "link rate", "bit/s")


def default_methods(scn) -> list[str]:
    """The methods a scenario's ``methods:`` section enables, in report order (absent sections count as off)."""
    out = []
    for name, attr in (("closed-form", "closed_form"), ("model-checked", "model_checked"), ("simulated", "simulated")):
        opts = getattr(scn.methods, attr, None)
        if opts is not None and opts.enabled:
            out.append(name)
    return out
