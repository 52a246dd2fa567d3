"""The SLO file: what each imported port's classes must achieve (``--slos SLOS.yaml``)::

    slos:                            # on every port that has the class
      - {metric: VOICE.delay.max, max: 20 ms}
      - {metric: CRITICAL-DATA.loss, max: 1e-3}
    ports:                           # on one port: "HOST:INTERFACE", "INTERFACE" (any host) or the port's name
      "br-lyon-01:GigabitEthernet0/0/0.100":
        - {metric: VIDEO.delay.max, max: 50 ms}

Each SLO is the port system's (``metric`` as ``CLASS.quantity``, ``max`` or ``min`` with its unit, optionally
``method``). A general SLO applies to the ports that have its class and is skipped on the others; one that
applies to no imported port at all is an error naming its line (a misspelt class name would otherwise check
nothing). A port's own SLO must name one of its classes, and replaces a general one on the same metric and
side (``max`` / ``min``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from qosbound.configs.imported import ImportedPort
from qosbound.errors import ConfigError
from qosbound.inputs import check_input_file

__all__ = ["SLOSpec", "load_slos", "slos_for", "check_all_used"]

MAX_SLO_BYTES = 4 * 2**20


@dataclass
class SLOSpec:
    """A parsed SLO file: the general SLOs and the per-port ones, each with its line."""

    file: str | None = None
    general: list[tuple[dict, int]] = field(default_factory=list)
    ports: dict[str, list[tuple[dict, int]]] = field(default_factory=dict)


def _entries(node, file: str, at: str) -> list[tuple[dict, int]]:
    if not isinstance(node, yaml.SequenceNode):
        raise ConfigError("expected a list of SLOs ({metric: CLASS.delay.max, max: 10 ms})", file=file,
                          line=node.start_mark.line + 1, field=at)
    out = []
    for k, item in enumerate(node.value):
        value = yaml.safe_load(yaml.serialize(item))
        if not isinstance(value, dict) or "metric" not in value:
            raise ConfigError("an SLO is a mapping with 'metric' and 'max' or 'min'", file=file,
                              line=item.start_mark.line + 1, field=f"{at}[{k}]")
        out.append((value, item.start_mark.line + 1))
    return out


def load_slos(path: str | Path) -> SLOSpec:
    """Read an SLO file (module docstring); errors name the file, the line and the field."""
    name = str(path)
    check_input_file(path, "SLO file", lambda p: ConfigError(p, file=name), max_bytes=MAX_SLO_BYTES)
    try:
        node = yaml.compose(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ConfigError("not UTF-8 text", file=name) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise ConfigError(f"not valid YAML: {getattr(e, 'problem', e)}", file=name,
                          line=mark.line + 1 if mark else None) from None
    spec = SLOSpec(file=name)
    if node is None:
        return spec
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError("expected a mapping with 'slos' and/or 'ports'", file=name)
    for k, v in node.value:
        key = str(k.value)
        if key == "slos":
            spec.general = _entries(v, name, "slos")
        elif key == "ports":
            if not isinstance(v, yaml.MappingNode):
                raise ConfigError("expected a mapping of port -> list of SLOs", file=name, line=v.start_mark.line + 1,
                                  field="ports")
            for pk, pv in v.value:
                spec.ports[str(pk.value)] = _entries(pv, name, f"ports.{pk.value}")
        elif key != "description":
            raise ConfigError("unknown section; expected slos or ports", file=name, line=k.start_mark.line + 1,
                              field=key)
    return spec


def _class_of(metric: str, names: list[str]) -> str | None:
    """The longest class name the metric starts with (names may hold dots: ``VOICE.RTP.delay.max``); what follows
    it is the port system's to check."""
    return next((n for n in sorted(names, key=len, reverse=True) if metric.startswith(n + ".")), None)


def slos_for(port: ImportedPort, spec: SLOSpec, used: set[int] | None = None) -> list[dict]:
    """The SLOs of one imported port: the general ones on its classes, then its own (by ``HOST:INTERFACE``,
    ``INTERFACE`` or its name). ``used`` collects the indexes of the general SLOs that applied."""
    names = [c["name"] for c in port.scenario["classes"]] + ["class-default"]
    out = []
    for i, (slo, _) in enumerate(spec.general):
        if _class_of(str(slo["metric"]), names) is not None:
            out.append(dict(slo))
            if used is not None:
                used.add(i)
    for key in (f"{port.host}:{port.interface}", port.interface, port.name):
        for slo, line in spec.ports.get(key, []):
            if _class_of(str(slo["metric"]), names) is None:
                raise ConfigError(f"{port.host} {port.interface} has no class for '{slo['metric']}' (its classes: "
                                  f"{', '.join(names[:-1])})", file=spec.file, line=line, field=f"ports.{key}")
            out = [o for o in out if _key(o) != _key(slo)]  # the port's own replaces a general one
            out.append(dict(slo))
    return out


def _key(slo: dict) -> tuple:
    """What makes two SLOs the same requirement: the metric, the side of the bound, the method."""
    return str(slo.get("metric")), "max" if "max" in slo else "min", slo.get("method")


def check_all_used(spec: SLOSpec, used: set[int], ports: list[ImportedPort]) -> None:
    """Every general SLO applied to some port, and every port key names an imported port; else an error naming
    the line."""
    for i, (slo, line) in enumerate(spec.general):
        if i not in used:
            raise ConfigError(f"no imported port has a class for '{slo['metric']}' (a misspelt class name would check "
                              "nothing)", file=spec.file, line=line, field=f"slos[{i}]")
    keys = {k for p in ports for k in (f"{p.host}:{p.interface}", p.interface, p.name)}
    for key, entries in spec.ports.items():
        if key not in keys:
            line = entries[0][1] if entries else None
            raise ConfigError(f"no imported port is '{key}' (ports: {', '.join(sorted(p.name for p in ports))})",
                              file=spec.file, line=line, field=f"ports.{key}")
