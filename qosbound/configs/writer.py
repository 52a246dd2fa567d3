"""Imported ports written as ``port`` scenario files (YAML): the queueing fields, then the origin in the fields the
port scenario reserves for importers."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from qosbound.configs.imported import ImportedPort

__all__ = ["scenario_yaml", "write_ports", "file_names"]


class _Dumper(yaml.SafeDumper):
    """Writes every value in place (no YAML anchors and aliases for values shared between fields)."""

    def ignore_aliases(self, data):
        return True

_HEADER = """\
# port scenario imported by `qosbound import` from {file} ({format}), {host} {interface}, {direction}put policy
# {policy}. The queueing fields come first; then `provenance` (field -> file:line), `assumed` (the platform
# defaults, with the vendor's page), `not_modelled` (what is left out and its effect) and `shaper`.
"""


def scenario_yaml(port: ImportedPort) -> str:
    """The YAML text of one imported port (header comment, scenario, origin)."""
    head = _HEADER.format(file=port.file, format=port.format, host=port.host, interface=port.interface,
                          direction=port.direction, policy=port.policy)
    return head + yaml.dump(port.document(), Dumper=_Dumper, sort_keys=False, width=120, allow_unicode=True)


def file_names(ports: list[ImportedPort]) -> dict[str, ImportedPort]:
    """``<name>.yaml`` per port; ports of the same name from different files get the file's stem appended."""
    out: dict[str, ImportedPort] = {}
    counts: dict[str, int] = {}
    for p in ports:
        counts[p.name] = counts.get(p.name, 0) + 1
    for p in ports:
        name = p.name if counts[p.name] == 1 else f"{p.name}_{re.sub(r'[^A-Za-z0-9._-]+', '-', Path(p.file).name)}"
        base, k = name, 2
        while f"{name}.yaml" in out:
            name, k = f"{base}_{k}", k + 1
        out[f"{name}.yaml"] = p
    return out


def write_ports(ports: list[ImportedPort], out_dir: str | Path) -> list[Path]:
    """Write each port's scenario into ``out_dir`` (created if missing); returns the paths written."""
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    written = []
    for fname, p in file_names(ports).items():
        path = d / fname
        path.write_text(scenario_yaml(p), encoding="utf-8")
        written.append(path)
    return written
