"""The estimate-before-build contract shared by every model: size it from the parameters, then build or refuse.

Every model qosbound builds (the exact PQ + TxQ chain, the ring-count chain and its bound MDP, the AF chains,
the TSQ chains) first computes an :class:`Estimate` from the scenario's numbers alone -- states, transitions and
the bytes its build and solve hold at their peak -- in microseconds, and :func:`refuse_over_budget` refuses it
(:class:`~qosbound.errors.ResourceError`, exit 4, the estimate in the message) when it is above the state budget
(``methods.model-checked.max_states``, or ``--max-states``) or above the memory the process may still take
(``--max-memory``, or the machine's available memory). Each estimate is an upper bound of what is built on the
instances its tests check (states and transitions asserted, as stormpy's tests do); the memory figure is an
estimate of the dominant arrays, not a proof, and serves to refuse what cannot fit, before it is tried.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass

from qosbound.errors import ResourceError

__all__ = ["Estimate", "available_memory", "refuse_over_budget", "STORM_BYTES_PER_STATE",
           "STORM_BYTES_PER_TRANSITION"]

#: Storm's explicit builder: the state storage (bit-vector valuations in a hash map, the state-to-row index)
#: and the solver's per-state vectors, bytes per state (a generous figure: the measured peak is below it).
STORM_BYTES_PER_STATE = 200
#: Storm's sparse matrix entry (value and column, 16 bytes) kept twice (built and transposed or copied for the
#: solver), and the builder's choice bookkeeping: bytes per transition.
STORM_BYTES_PER_TRANSITION = 48


def _proc_kib(path: str, key: str) -> float | None:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return float(line.split()[1]) * 1024.0
    except (OSError, ValueError, IndexError):
        return None
    return None


def available_memory() -> float | None:
    """Bytes this process may still take: the address-space limit (``--max-memory`` sets it in the child that
    builds models) less the address space in use, or else the machine's available memory; None if unknown."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        used = _proc_kib("/proc/self/status", "VmSize") or 0.0
        return max(float(soft) - used, 0.0)
    return _proc_kib("/proc/meminfo", "MemAvailable")


def _bytes(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n / 1e3:.3g} kB"


@dataclass(frozen=True)
class Estimate:
    """What building and solving a model would take, from its parameters alone."""

    model: str  # what would be built, e.g. "the TSQ per-hint DTMC (models/tsq_hint.prism)"
    states: float
    transitions: float
    memory: float  # bytes at the peak of building and solving

    def text(self) -> str:
        return (f"{self.model} would have about {self.states:.3g} states and {self.transitions:.3g} transitions "
                f"and need about {_bytes(self.memory)}")


def refuse_over_budget(est: Estimate, max_states: float | None, *, field: str, remedy: str,
                       budget_name: str = "methods.model-checked.max_states, or --max-states") -> None:
    """Raise a ResourceError naming ``est`` when it is above ``max_states`` or above :func:`available_memory`;
    ``field`` is the scenario setting that makes it large, ``remedy`` what the user can do instead."""
    if max_states is not None and est.states > max_states:
        raise ResourceError(f"{est.text()}, above the budget of {float(max_states):.3g} states ({budget_name}): "
                            f"{remedy}", field=field)
    free = available_memory()
    if free is not None and est.memory > free:
        raise ResourceError(f"{est.text()}, more than the {_bytes(free)} of memory left (--max-memory, or the "
                            f"machine's): {remedy}", field=field)
