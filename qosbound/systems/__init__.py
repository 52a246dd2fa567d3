"""The systems qosbound models, and the :class:`System` protocol every one of them implements.

A system is a module (``qosbound.systems.pq_txq``, ``.af``, ``.tsq``, ``.tfrc``) whose
module-level names are the hooks below. :func:`get_system` loads it and checks, once,
that every hook exists and is callable; a system missing one (a misspelt ``agreements``)
is refused with an :class:`~qosbound.errors.InternalError` naming the hook, so no
capability is ever switched off silently. The commands (plan, verify, validate, admit,
model render) call the hooks and never ask a system for its name.

Why a :class:`typing.Protocol` checked at registration and not an abstract base class:
the systems are modules of functions that tests, the reproduce scripts and the docs
import directly (``from qosbound.systems.af import class_inputs``); an ABC would wrap
them in classes and singletons for no gain, while a structural protocol states the
contract for readers and type checkers, and :func:`check_system` enforces it at load
time. A system lacking a capability still implements its hook, by raising a typed
error or returning ``None`` where the hook says so (:mod:`qosbound.systems.capabilities`
holds those stand-ins).
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from qosbound.errors import InternalError

if TYPE_CHECKING:  # pragma: no cover - for readers and type checkers only
    from qosbound.results import Result, Verdict
    from qosbound.units import Kind

__all__ = ["SYSTEMS", "HOOKS", "System", "known_systems", "get_system", "check_system"]

SYSTEMS: dict[str, str] = {
    "pq_txq": "qosbound.systems.pq_txq",
    "af": "qosbound.systems.af",
    "tsq": "qosbound.systems.tsq",
    "tfrc": "qosbound.systems.tfrc",
    "port": "qosbound.systems.port",
    "network": "qosbound.systems.network",
}


@runtime_checkable
class System(Protocol):
    """What a system module provides; every hook is required."""

    #: The scenario schema: a :class:`qosbound.scenario.ScenarioBase` subclass.
    Scenario: type

    def evaluate(self, scn, methods: list[str], progress) -> list[Result]:
        """Every metric by every requested method (a subset of :data:`qosbound.results.METHODS`)."""

    def metric_names(self, scn) -> list[str]:
        """The metrics the scenario defines (what ``validate`` reads off a trace)."""

    def metric_kind(self, metric: str) -> Kind:
        """The unit kind of a metric (raises ScenarioError for an unknown one)."""

    def slo_limit(self, scn, slo) -> float:
        """The SLO's limit in SI units."""

    def default_methods(self, scn) -> list[str]:
        """The methods the scenario enables, in report order."""

    def agreements(self, scn, results: list[Result]) -> list[Verdict]:
        """Cross-method checks the generic rule cannot express (may be ``[]``)."""

    def render_models(self, scn, out_dir) -> list[Path]:
        """Write the scenario's PRISM files (``qosbound model render``); ScenarioError when there is no model."""

    def simulate_trace(self, scn, packets: int, seed: int) -> Any:
        """One simulated run as a per-packet trace table (``validate --simulate``)."""

    def ns3_trace(self, scn, ef_packets: int) -> tuple[Any, dict]:
        """(trace table, info) from the ns-3 counterpart (``validate --ns3``); ScenarioError when there is none."""

    def plot_delays(self, scn) -> float | None:
        """The delay range (s) worth adding CCDF points for in ``validate`` plots, or None for no extra points."""

    def admit(self, scn, parameter: str, *, direction: str | None, method: str | None, lo: float | None,
              hi: float | None, progress) -> Any:
        """A system-specific admission search (an :class:`qosbound.admit.AdmitResult`), or None to let the
        generic search of :func:`qosbound.admit.admit` vary ``parameter``."""

    def understood_inputs(self, scn) -> Any:
        """The scenario's inputs as the methods use them (a :class:`qosbound.understood.Inputs`): the link rate,
        each stream's or class's rate and share of the link, the sizes; every report shows them first."""


#: Every hook of :class:`System`, in the order above.
HOOKS: tuple[str, ...] = ("Scenario", "evaluate", "metric_names", "metric_kind", "slo_limit", "default_methods",
                          "agreements", "render_models", "simulate_trace", "ns3_trace", "plot_delays", "admit",
                          "understood_inputs")

_checked: dict[str, Any] = {}


def check_system(module, name: str | None = None):
    """Return ``module`` if it implements every hook of :class:`System`; else raise InternalError naming the
    first missing (or non-callable) hook."""
    label = name or getattr(module, "__name__", repr(module))
    for hook in HOOKS:
        value = getattr(module, hook, None)
        if value is None:
            raise InternalError(f"system '{label}' does not implement the hook '{hook}' (every hook of "
                                "qosbound.systems.System is required)")
        if not callable(value):
            raise InternalError(f"system '{label}': hook '{hook}' is not callable")
    return module


def known_systems() -> list[str]:
    out = []
    for name, mod in SYSTEMS.items():
        if importlib.util.find_spec(mod) is not None:
            out.append(name)
    return out


def get_system(name: str) -> System:
    """The system module ``name``, checked against :class:`System` on first load."""
    if name not in _checked:
        _checked[name] = check_system(importlib.import_module(SYSTEMS[name]), name)
    return _checked[name]
