"""Configuration files (and a traffic file) -> imported ports: the one entry point of the package.

``load_configs(paths, traffic)`` is what every command on configurations uses (``import``; later ``plan``,
``verify --configs`` and ``diff``): it reads each file, detects its format, parses it to the vendor's AST, gives it
its queueing meaning, applies the traffic, and returns one :class:`~qosbound.configs.imported.ImportedPort` per
output interface with a policy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from qosbound.configs.detect import detect_format
from qosbound.configs.imported import ImportedPort, import_port
from qosbound.configs.ios_parse import parse_ios
from qosbound.configs.ios_semantics import ios_ports
from qosbound.configs.port import settle_remarks
from qosbound.configs.junos_semantics import junos_ports
from qosbound.configs.openconfig import openconfig_ports
from qosbound.configs.source import read_config
from qosbound.configs.tc_semantics import tc_ports
from qosbound.configs.traffic import TrafficSpec, apply_traffic, load_traffic
from qosbound.errors import ConfigError

__all__ = ["load_configs", "import_configs", "ImportReport", "expand_paths"]

#: File suffixes skipped when a folder is given (traffic files, scenarios, documents).
_NOT_CONFIGS = {".yaml", ".yml", ".md", ".txt.orig", ".swp"}


@dataclass
class ImportReport:
    """Everything an import found: the ports, and per file the notes that concern no port (policies never
    attached, input-only interfaces) and the format detected."""

    ports: list[ImportedPort] = field(default_factory=list)
    notes: dict[str, list[str]] = field(default_factory=dict)
    formats: dict[str, str] = field(default_factory=dict)

    @property
    def refusals(self) -> list[ConfigError]:
        return [e for p in self.ports for e in p.refusals]


def expand_paths(paths) -> list[str]:
    """Files as given; a folder contributes its files (sorted, hidden files and YAML / Markdown skipped)."""
    out: list[str] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out += [str(f) for f in sorted(path.rglob("*")) if f.is_file() and not f.name.startswith(".")
                    and f.suffix.lower() not in _NOT_CONFIGS]
        else:
            out.append(str(p))
    return out


def _ports_of(cfg, fmt, traffic: TrafficSpec):
    if fmt.family in ("ios", "ios-xe", "ios-xr"):
        return ios_ports(parse_ios(cfg, fmt.family), traffic)
    if fmt.family == "junos":
        return junos_ports(cfg, fmt, traffic)
    if fmt.family == "linux":
        return tc_ports(cfg, fmt, traffic)
    return openconfig_ports(cfg, fmt, traffic)


def import_configs(paths, traffic: str | Path | TrafficSpec | None = None) -> ImportReport:
    """Import every configuration (see the module docstring). A file that cannot be read or is of an unread
    format raises; a port whose policy cannot be modelled is returned with its ``refusals``."""
    spec = traffic if isinstance(traffic, TrafficSpec) else (load_traffic(traffic) if traffic else TrafficSpec())
    report = ImportReport()
    for path in expand_paths(paths):
        cfg = read_config(path)
        fmt = detect_format(cfg)
        report.formats[path] = fmt.name
        ports, notes = _ports_of(cfg, fmt, spec)
        report.notes[path] = notes
        for port in ports:
            settle_remarks(port)
            if not port.refusals:
                try:
                    apply_traffic(port, spec)
                except ConfigError as e:
                    port.refusals.append(e)
            report.ports.append(import_port(port))
    return report


def load_configs(paths, traffic: str | Path | TrafficSpec | None = None, *, strict: bool = True) -> list[ImportedPort]:
    """The imported ports of ``paths`` (files or folders) with ``traffic`` (a traffic file, or None for the
    defaults). ``strict``: raise the first refusal (a :class:`~qosbound.errors.ConfigError`) instead of returning
    ports that carry refusals."""
    report = import_configs(paths, traffic)
    if strict and report.refusals:
        raise report.refusals[0]
    return report.ports
