"""Hooks for what a system cannot do: each raises a typed error naming the system, or answers None.

A system module implements every hook of :class:`qosbound.systems.System`; where it has
no such capability it binds one of these, e.g. ``ns3_trace = no_ns3("tsq")``.
"""

from __future__ import annotations

from qosbound.errors import ScenarioError

__all__ = ["no_ns3", "no_trace_simulator", "no_models", "no_plot_delays", "generic_admit"]


def no_ns3(system: str):
    """``ns3_trace`` of a system without an ns-3 counterpart: a ScenarioError that says what to use instead."""

    def ns3_trace(scn, ef_packets: int):
        raise ScenarioError(f"the {system} system has no ns-3 model; validate with --simulate or --trace FILE",
                            file=getattr(scn, "path", None), field="system")

    return ns3_trace


def no_trace_simulator(system: str):
    """``simulate_trace`` of a system without a packet-trace simulator."""

    def simulate_trace(scn, packets: int, seed: int):
        raise ScenarioError(f"the {system} system has no trace simulator; validate with --trace FILE",
                            file=getattr(scn, "path", None), field="system")

    return simulate_trace


def no_models(system: str):
    """``render_models`` of a system without a PRISM model."""

    def render_models(scn, out_dir) -> list:
        raise ScenarioError(f"the {system} system has no PRISM model to render", file=getattr(scn, "path", None),
                            field="system")

    return render_models


def no_plot_delays(scn) -> float | None:
    """``plot_delays`` of a system whose validation plots need no extra CCDF points: None."""
    return None


def generic_admit(scn, parameter: str, *, direction=None, method=None, lo=None, hi=None, progress=None):
    """``admit`` of a system with no search of its own: None, so the generic search varies ``parameter``."""
    return None
