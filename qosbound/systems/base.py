"""Helpers shared by the system modules: metric names, method selection, SLO limits."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from qosbound.errors import ScenarioError
from qosbound.units import format_quantity

__all__ = ["quantile_name", "ccdf_name", "parse_quantile_name", "Strict", "compact_time"]


class Strict(BaseModel):
    """Base for scenario sections: unknown fields are errors."""

    model_config = ConfigDict(extra="forbid")


def quantile_name(q: float) -> str:
    """0.99 -> 'p99', 0.999 -> 'p99.9'."""
    s = f"{q * 100:.6f}".rstrip("0").rstrip(".")
    return f"p{s}"


def parse_quantile_name(stat: str) -> float | None:
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
    return f"{prefix}.ccdf@{compact_time(d)}"


def metric_stat(metric: str) -> str:
    return metric.split(".", 2)[-1] if metric.count(".") >= 2 else ""


def require(cond: bool, problem: str, field: str) -> None:
    if not cond:
        raise ScenarioError(problem, field=field)


def jsonable_config(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")
