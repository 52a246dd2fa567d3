"""The meters and the drop policy of a port class (``classes[].police``, ``.marker``, ``.dropper``): a policer and
its actions, a marker as ``af`` has it, and the class queue's dropper. Part of the port scenario schema
(:mod:`qosbound.systems.port.schema`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from qosbound import dscp
from qosbound.scenario import PositiveInt, Rate, Size
from qosbound.systems.af.schema import Marker as AFMarker
from qosbound.systems.af.schema import Threshold
from qosbound.systems.base import Strict

__all__ = ["parse_action", "Action", "Police", "Marker", "Dropper"]


def parse_action(v) -> tuple[str, str | None]:
    """A policer action: ``drop``, ``transmit``, or a remark ``set-dscp AF32`` / ``{set-dscp: AF32}`` (the packet
    is transmitted with the new DSCP, Cisco's ``set-dscp-transmit``). Returns (action, canonical DSCP or None)."""
    if isinstance(v, dict):
        if len(v) != 1 or next(iter(v)) not in ("set-dscp", "set-dscp-transmit"):
            raise ValueError("a remark action is {set-dscp: DSCP}")
        return "remark", dscp.canonical(next(iter(v.values())))
    if isinstance(v, str):
        text = v.strip()
        low = text.lower()
        if low in ("drop", "transmit"):
            return low, None
        for head in ("set-dscp-transmit", "set-dscp"):
            if low.startswith(head + " "):
                return "remark", dscp.canonical(text[len(head):].strip())
    raise ValueError(f"{v!r} is not a policer action: drop, transmit, or set-dscp DSCP")


class Action(Strict):
    """One policer action after validation."""

    action: Literal["drop", "transmit", "remark"]
    dscp: str | None = None


def _action(v):
    if isinstance(v, Action):
        return v
    a, d = parse_action(v)
    return Action(action=a, dscp=d)


class Police(Strict):
    """A policer on the class's arrivals, before its queue. One bucket (``cir``, ``cbs``): conform or exceed;
    ``ebs`` adds srTCM's excess bucket (RFC 2697) and ``pir``/``pbs`` make it trTCM (RFC 2698): conform,
    exceed or violate. Each colour's action is ``drop``, ``transmit`` or ``set-dscp DSCP`` (a precedence of the
    class)."""

    cir: Rate = Field(description="committed information rate, bit/s")
    cbs: Size = Field(description="committed burst, bytes")
    ebs: Size | None = Field(default=None, description="srTCM excess burst, bytes (single rate, three colours)")
    pir: Rate | None = Field(default=None, description="trTCM peak rate, bit/s (two rates, three colours)")
    pbs: Size | None = Field(default=None, description="trTCM peak burst, bytes")
    conditional: bool = Field(default=False, description="Cisco's priority policer: meters only under congestion "
                              "(the tx-ring full, or without a ring the link busy, at the arrival); default: "
                              "always, the choice the delay bounds can use")
    conform: Action = Field(default_factory=lambda: Action(action="transmit"), description="drop, transmit or "
                            "set-dscp DSCP")
    exceed: Action = Field(default_factory=lambda: Action(action="drop"), description="drop, transmit or "
                           "set-dscp DSCP")
    violate: Action | None = Field(default=None, description="drop, transmit or set-dscp DSCP (default: the "
                                   "exceed action)")

    @field_validator("conform", "exceed", "violate", mode="before")
    @classmethod
    def _act(cls, v):
        return None if v is None else _action(v)

    @property
    def kind(self) -> str:
        """The meter: ``trtcm``, ``srtcm`` or ``two-colour``."""
        return "trtcm" if self.pir is not None else "srtcm" if self.ebs is not None else "two-colour"

    def actions(self) -> tuple[Action, Action, Action]:
        """(conform, exceed, violate) actions; two-colour meters never violate."""
        return self.conform, self.exceed, self.violate or self.exceed


class Marker(AFMarker):
    """A marker on the class's arrivals (srTCM / trTCM / two-colour, colour-blind or colour-aware), as ``af``
    has it: green, yellow and red become the class's first, second and third precedence (a two-colour marker's
    red the last). Colour-aware, the pre-colour is the precedence the traffic arrives with (its ``mix``)."""


class Dropper(Strict):
    """The class queue's drop policy: ``tail`` (drop at the queue limit only) or a RED-family dropper with
    thresholds per precedence of the class (as ``af`` has it: ``wred`` one average, ``rio`` and ``nred``
    averages over precedences, ``gentle`` RED). Thresholds may also be given for DSCPs of the class that are
    not among its precedences: no packet reaches the queue with those, so they change nothing. Thresholds
    above the queue limit are accepted, as IOS accepts them: the average never exceeds the packets the queue
    holds, so the queue limit drops first -- a ``max_th`` above it means the drop probability never reaches
    ``1 / P_d`` before the queue is full, a ``min_th`` at or above it means RED never drops (tail drop only)."""

    mode: Literal["tail", "wred", "rio", "nred"] = "tail"
    gentle: bool = False
    alpha: float | None = Field(default=None, description="EWMA weight; default 2^-exponent")
    exponent: PositiveInt = Field(default=9, description="alpha = 2^-exponent (Cisco's default 9)")
    thresholds: dict[str, Threshold] = Field(default_factory=dict, description="per precedence (DSCP) of the "
                                             "class: min_th, max_th (packets; above the queue limit the limit "
                                             "drops first), P_d (mark-probability denominator)")

    @property
    def weight(self) -> float:
        return self.alpha if self.alpha is not None else 2.0 ** -self.exponent
