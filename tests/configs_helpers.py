"""Helpers of the configuration-import tests: import a configuration written inline, find a class."""

from __future__ import annotations

from pathlib import Path

from qosbound.configs import import_configs, load_configs
from tests.helpers import ROOT

CONFIG_EXAMPLES = ROOT / "examples" / "configs"
MALFORMED = ROOT / "tests" / "data" / "configs"
#: real-sized configurations written from the vendors' documented syntax (``field-*``), in the same folder
FIELD = MALFORMED


def write(tmp_path: Path, text: str, name: str = "r1.cfg") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def ports(tmp_path: Path, text: str, name: str = "r1.cfg", traffic=None):
    """The imported ports of one inline configuration (refusals raised)."""
    return load_configs([write(tmp_path, text, name)], traffic)


def report(tmp_path: Path, text: str, name: str = "r1.cfg", traffic=None):
    return import_configs([write(tmp_path, text, name)], traffic)


def cls(port, name: str) -> dict:
    return next(c for c in port.scenario["classes"] if c["name"] == name)
