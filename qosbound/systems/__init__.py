"""The systems qosbound models. Each module supplies a scenario schema and its methods.

A system module provides:

* ``Scenario`` -- a :class:`qosbound.scenario.ScenarioBase` subclass (the file schema);
* ``evaluate(scn, methods, progress) -> list[Result]`` -- every metric by every
  requested method (a subset of ``METHODS``);
* ``metric_kind(metric) -> Kind`` -- the unit kind of a metric, used to read SLO limits;
* ``slo_limit(scn, slo) -> float`` -- the SLO's limit in SI units (default: by ``metric_kind``);
* ``agreements(scn, results) -> list[Verdict]`` -- cross-method consistency checks;
* ``default_methods(scn) -> list[str]``.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

__all__ = ["SYSTEMS", "known_systems", "get_system"]

SYSTEMS: dict[str, str] = {
    "pq_txq": "qosbound.systems.pq_txq",
    "af": "qosbound.systems.af",
    "tsq": "qosbound.systems.tsq",
    "tfrc": "qosbound.systems.tfrc",
}


def known_systems() -> list[str]:
    out = []
    for name, mod in SYSTEMS.items():
        if importlib.util.find_spec(mod) is not None:
            out.append(name)
    return out


def get_system(name: str) -> ModuleType:
    return importlib.import_module(SYSTEMS[name])
