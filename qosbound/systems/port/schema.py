"""The port scenario schema (``system: port``): a link, an optional tx-ring, and an ordered list of classes.

Field names are the interface (configuration importers and networks of ports write them): extend, do not
rename. The meaning of every field, and the semantics the three methods share, are in
:mod:`qosbound.systems.port` and ``docs/port.md``; this module only reads and checks the file. Every refusal
is a :class:`~qosbound.errors.ScenarioError` naming the field by its dotted path, a class addressed by its
``name`` (``classes.voice.police.cir``), the form ``admit``, ``sweep`` and ``tune`` use.

Reserved for configuration importers (accepted, checked for shape, carried into the results' provenance,
without effect on any number):

* ``provenance`` -- field path -> ``file:line`` of the configuration line it came from;
* ``assumed`` -- field path -> why a platform default was assumed (e.g. ``"IOS-XE default WRED thresholds"``);
* ``not_modelled`` -- constructs of the configuration the model leaves out, each with its effect;
* ``classes[].match`` -- classification by something other than DSCP (IP precedence, MPLS EXP, CoS,
  qos-group). Each class declares its own traffic, so classification changes no number.

A class's ``dscp`` lists every DSCP it matches (any number: a class matching IP precedence 5 matches eight);
its ``precedences`` -- at most three of them, the drop precedences the droppers and markers tell apart, green
first -- default to the ``dscp`` list itself when that has at most three entries (:func:`precedences`).

Class names are what routers allow (letters, digits and most punctuation: ``VOICE.RTP``, ``AF4:video``,
``q/1``); a name heads its metrics (``VOICE.RTP.delay.p99``) and addresses its parameters
(``classes.VOICE.RTP.police.cir``), both read against the port's own class names (the longest that fits), or
quoted (``classes."VOICE.RTP".police.cir``) -- :func:`qosbound.scenario.path_parts`.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from qosbound.errors import ScenarioError
from qosbound.scenario import PositiveInt, ScenarioBase, Time
from qosbound.systems.af.schema import ClosedFormOptions as AFClosedFormOptions
from qosbound.systems.base import MethodsBase, PacketSimOptions, Strict, check_ccdf_points, check_quantiles
from qosbound.systems.port.classes import (CLASS_NAME, DEFAULT_CLASS, MAX_CLASSES, MAX_PRECEDENCES, MAX_QUEUE,
                                           MAX_STREAMS, Match, NotModelled, PortLink, Ring, Scheduler, Shaper,
                                           TrafficClass, long_run_rate, parse_bandwidth, precedences,
                                           priority_reservation)
from qosbound.systems.port.meters import Action, Dropper, Marker, Police, parse_action
from qosbound.systems.port.scenario_checks import MIN_PACKET, check_port, shaper_burst, shaper_line_rate
from qosbound.systems.port.traffic import Traffic, offered_rate
from qosbound.systems.pq_txq.schema import ModelOptions as PQModelOptions

__all__ = ["PortLink", "Ring", "Action", "Police", "Marker", "Dropper", "Traffic", "Match", "TrafficClass",
           "Scheduler", "Shaper", "NotModelled", "Metrics", "ClosedFormOptions", "ModelOptions", "SimOptions",
           "Methods", "Scenario",
           "DEFAULT_CLASS", "CLASS_NAME", "MAX_PRECEDENCES", "MAX_QUEUE", "MAX_CLASSES", "MAX_STREAMS",
           "parse_bandwidth", "parse_action", "precedences",
           "check_port", "priority_reservation", "offered_rate", "long_run_rate", "split_metric",
           "check_slo_classes", "shaper_burst", "shaper_line_rate", "MIN_PACKET"]

# Most of these names are defined in the modules along the schema's jobs and read from here: the link, ring and
# classes (.classes), policers, markers and droppers (.meters), traffic (.traffic), the checks across fields
# (.scenario_checks); this module keeps the options, the Scenario and its metric names.


class Metrics(Strict):
    ccdf_at: list[Time] = Field(default_factory=list, description="delay CCDF points reported per class")
    quantiles: list[float] = Field(default_factory=lambda: [0.99, 0.999], description="delay quantiles reported "
                                   "per class")

    @field_validator("ccdf_at")
    @classmethod
    def _pos(cls, v):
        return check_ccdf_points(v)

    @field_validator("quantiles")
    @classmethod
    def _q(cls, v):
        return check_quantiles(v)


class ModelOptions(PQModelOptions):
    """Model checking per class: the top priority level on pq_txq's chains, each weighted class's dropper
    chain on af's (``average`` as af's)."""

    average: Literal["instantaneous", "ewma"] = "instantaneous"


class SimOptions(PacketSimOptions):
    """Independent replications of ``packets`` packets entering the port (arrivals of every class, and the
    packets saturated classes hand the scheduler); ``warmup`` is a fraction of them."""

    packets: PositiveInt = 2_000_000


class ClosedFormOptions(AFClosedFormOptions):
    """Closed forms: ``approximation`` is how the weighted classes' RED-family queues treat the EWMA average
    (as ``af``'s)."""


class Methods(MethodsBase):
    closed_form: ClosedFormOptions = Field(default_factory=ClosedFormOptions, alias="closed-form")
    model_checked: ModelOptions = Field(default_factory=ModelOptions, alias="model-checked")
    simulated: SimOptions = Field(default_factory=SimOptions)


class Scenario(ScenarioBase):
    system: Literal["port"]
    link: PortLink
    txq: Ring | None = Field(default=None, description="the tx-ring (absent: none; the scheduler hands the wire "
                             "one packet at a time)")
    classes: list[TrafficClass] = Field(description="the classes, in the policy's order; class-default is added "
                                        "when not declared")
    scheduler: Scheduler = Field(default_factory=Scheduler)
    shaper: Shaper | None = Field(default=None, description="a parent shaper serving the classes at link.rate "
                                  "with a burst bc (closed forms and simulator)")
    provenance: dict[str, str] = Field(default_factory=dict, description="reserved: field path -> file:line")
    assumed: dict[str, str] = Field(default_factory=dict, description="reserved: field path -> the platform "
                                    "default assumed there")
    not_modelled: list[NotModelled] = Field(default_factory=list, description="reserved: constructs left out")
    metrics: Metrics = Field(default_factory=Metrics)
    methods: Methods = Field(default_factory=Methods)

    @model_validator(mode="after")
    def _check(self):
        check_port(self)
        check_slo_classes(self)
        return self


#: What follows the class name in a port metric (the class name itself may hold dots: ``VOICE.RTP.delay.p99``).
_SUFFIX = re.compile(r"\.(?P<q>delay\.(?P<stat>mean|max|worst_case_mean|cobham_mean|p[0-9.eE+-]+|ccdf@.+)"
                     r"|loss(?:\.police|\.queue)?|drop\.[^.]+|throughput|rate|aggregation_degree)$")


def split_metric(metric: str, names=None) -> tuple[str, str]:
    """(class name, quantity) of a port metric: ``'VOICE.RTP.delay.p99'`` -> ``('VOICE.RTP', 'delay.p99')``.
    With the port's class ``names``, the class is the longest of them the metric starts with; without, what
    precedes the longest quantity the grammar knows. ScenarioError for a metric that fits neither."""
    if names is not None:
        for n in sorted(names, key=len, reverse=True):
            if metric.startswith(n + ".") and _SUFFIX.fullmatch("." + metric[len(n) + 1:]):
                return n, metric[len(n) + 1:]
    else:
        for m in _SUFFIX.finditer(metric):  # the first match leaves the longest quantity
            if m.start() > 0:
                return metric[:m.start()], m.group("q")
    raise ScenarioError(f"unknown metric '{metric}' for a port scenario; known per class X: X.delay.mean, "
                        "X.delay.pNN, X.delay.ccdf@<time>, X.delay.max, X.loss, X.loss.police, X.loss.queue, "
                        "X.drop.<DSCP>, X.throughput, X.rate", field="metric")


def check_slo_classes(scn) -> None:
    """Every SLO names a class of the port (its name read with dots and all: :func:`split_metric`); a
    ScenarioError naming the SLO otherwise."""
    names = [c.name for c in scn.classes] + ["class-default"]
    for i, slo in enumerate(scn.slos):
        try:
            split_metric(slo.metric, names)
        except ScenarioError:
            try:
                cls, _ = split_metric(slo.metric)
            except ScenarioError as e:
                raise ScenarioError(e.problem, field=f"slos[{i}].metric") from None
            raise ScenarioError(f"the port has no class '{cls}' (it has {', '.join(names[:-1])})",
                                field=f"slos[{i}].metric") from None
