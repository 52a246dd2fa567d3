"""The ``network`` scenario file: nodes, output ports named ``a->b`` (each a port of the port system, written in
place or read from a port file), and flows (a class or a DSCP, a path or a source and destination, and traffic
as in the port system). Field by field in :mod:`qosbound.systems.network` and docs/network.md.

Only the shape is checked here; what needs the ports (a class at every hop, the routes feed-forward) is checked
when the network is built (:func:`qosbound.systems.network.elements.network_of`), with the field named.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from qosbound.scenario import NonNegInt, PositiveInt, ScenarioBase, Time
from qosbound.systems.base import ClosedFormOptions, Strict
from qosbound.systems.base import MethodsBase
from qosbound.systems.network.elements import network_of
from qosbound.systems.network.names import NAME, port_ends
from qosbound.systems.port.schema import Metrics
from qosbound.systems.port.schema import Traffic

__all__ = ["Flow", "SimOptions", "Methods", "Scenario", "NAME", "port_ends", "MAX_PORTS", "MAX_FLOWS", "MAX_HOPS"]

#: Limits, checked before anything is built.
MAX_PORTS = 100_000
MAX_FLOWS = 1_000_000
MAX_HOPS = 256


class Flow(Strict):
    """One flow: its class (by name, the same at every port of its path) or DSCP (each port's class matching
    it, else class-default), its route (``path``, the nodes in order; or ``source`` and ``destination``,
    routed on a shortest path in hops), and its traffic at its first port (the port system's traffic)."""

    name: str = Field(description="the flow's name, heading its metrics (voip-ab.delay.max)")
    cls: str | None = Field(default=None, alias="class", description="the class at every port of the path")
    dscp: str | int | None = Field(default=None, description="a DSCP (name or 0-63): each port's class matching "
                                   "it, else class-default")
    path: list[str] | None = Field(default=None, description="the nodes the flow crosses, in order")
    source: str | None = Field(default=None, description="first node (with destination, instead of path)")
    destination: str | None = Field(default=None, description="last node (with source, instead of path)")
    traffic: Traffic = Field(description="what the flow offers at its first port (a saturated flow is saturated "
                             "there)")

    @field_validator("name")
    @classmethod
    def _name(cls, v):
        if not NAME.match(v):
            raise ValueError(f"flow name {v!r}: letters, digits, '_', '+', '-' only (it heads dotted metric names)")
        return v

    @model_validator(mode="after")
    def _route(self):
        if (self.cls is None) == (self.dscp is None):
            raise ValueError("give exactly one of 'class' or 'dscp'")
        if self.path is not None:
            if self.source is not None or self.destination is not None:
                raise ValueError("give either 'path' or 'source' and 'destination', not both")
            if len(self.path) < 2:
                raise ValueError("a path names at least two nodes")
            if len(self.path) - 1 > MAX_HOPS:
                raise ValueError(f"a path of {len(self.path) - 1} hops is above the limit of {MAX_HOPS}")
        elif self.source is None or self.destination is None:
            raise ValueError("give 'path', or both 'source' and 'destination'")
        elif self.source == self.destination:
            raise ValueError("source and destination are the same node")
        if self.traffic.mix is not None:
            raise ValueError("traffic.mix: a flow carries one DSCP (give the DSCP, or split the flow)")
        return self


class SimOptions(Strict):
    """The chained simulation: ``replications`` independent runs of ``duration`` simulated seconds each; the
    packets whose first arrival falls in the first ``warmup`` or the last ``cooldown`` fraction of it are carried
    but not counted."""

    enabled: bool = True
    duration: Time = Field(default=10.0, description="simulated time per replication, s")
    replications: PositiveInt = 8
    seed: NonNegInt = 1
    warmup: float = 0.05
    cooldown: float = 0.05
    confidence: float = 0.95
    max_packet_hops: float = Field(default=2e9, description="budget on packets x hops x replications, refused "
                                   "before the run")

    @model_validator(mode="after")
    def _check(self):
        if not 0 < self.duration <= 1e5:
            raise ValueError("duration must lie in (0, 1e5] s")
        if self.replications < 2:
            raise ValueError("at least 2 replications (the intervals are Student t over them)")
        if not (0 <= self.warmup < 0.5 and 0 <= self.cooldown < 0.5):
            raise ValueError("warmup and cooldown are fractions of the duration in [0, 0.5)")
        if not 0.5 <= self.confidence < 1:
            raise ValueError("confidence must lie in [0.5, 1)")
        return self


class Methods(MethodsBase):
    closed_form: ClosedFormOptions = Field(default_factory=ClosedFormOptions, alias="closed-form")
    simulated: SimOptions = Field(default_factory=SimOptions)


class Scenario(ScenarioBase):
    system: Literal["network"]
    nodes: list[str] | None = Field(default=None, description="the nodes (default: those the port names join)")
    ports: dict[str, Any] = Field(description="output ports by name 'a->b': a port definition (link, txq, "
                                  "classes, scheduler as in a port scenario; link.delay the propagation after "
                                  "it) or the path of a port file, relative to this file")
    flows: list[Flow] = Field(description="the flows, each over a path of ports")
    metrics: Metrics = Field(default_factory=Metrics)
    methods: Methods = Field(default_factory=Methods)

    # The built network, cached by :func:`qosbound.systems.network.network`; not part of the file.
    _network: Any = None

    @model_validator(mode="after")
    def _shape(self):
        if not self.ports:
            raise ValueError("ports: a network needs at least one port")
        if len(self.ports) > MAX_PORTS:
            raise ValueError(f"ports: {len(self.ports)} ports, above the limit of {MAX_PORTS}")
        if not self.flows:
            raise ValueError("flows: a network needs at least one flow")
        if len(self.flows) > MAX_FLOWS:
            raise ValueError(f"flows: {len(self.flows)} flows, above the limit of {MAX_FLOWS}")
        if self.nodes is not None:
            for n in self.nodes:
                if not NAME.match(str(n)):
                    raise ValueError(f"nodes: {n!r}: letters, digits, '_', '+', '-' only")
            if len(set(self.nodes)) != len(self.nodes):
                raise ValueError("nodes: a node is named twice")
        for name, spec in self.ports.items():
            if port_ends(name) is None:
                raise ValueError(f"ports: {name!r}: a port is named 'a->b' after the nodes it joins (letters, digits, "
                                 "'_', '+', '-')")
            if not isinstance(spec, (dict, str)):
                raise ValueError(f"ports: {name!r}: a port definition (a mapping) or the path of a port file")
        seen = set()
        for f in self.flows:
            if f.name in seen:
                raise ValueError(f"flows: the name {f.name!r} is used twice")
            seen.add(f.name)
        if all(isinstance(spec, dict) for spec in self.ports.values()):
            # built now, so a bad port, route or class is refused when the file is loaded; a network reading port
            # files is built on first use (their paths are relative to the file, known once it is loaded)
            self._network = network_of(self)
        return self
