"""Helpers shared by the test modules: the checkout's folders, and checks of refused commands."""

from __future__ import annotations

import json
from pathlib import Path

from qosbound.cli import main

#: The checkout (the folder holding pyproject.toml) and its documentation, examples and models.
ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"
MODELS = ROOT / "models"


def example(name: str) -> Path:
    """A shipped example scenario by name: ``example("ferrari2001")`` is ``examples/ferrari2001.yaml``."""
    path = EXAMPLES / (name if name.endswith(".yaml") else f"{name}.yaml")
    assert path.is_file(), path
    return path


def one_line(err: str) -> str:
    """The single ``qosbound: ...`` line a refused command prints on standard error (fails otherwise)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("qosbound: "), err
    assert "Traceback" not in err
    return lines[0]


def reproduce_json(capsys, *argv: str) -> tuple[int, dict]:
    """``qosbound reproduce ARGV --json --quiet`` run in process: its exit code and its JSON document."""
    code = main(["reproduce", *argv, "--json", "--quiet"])
    return code, json.loads(capsys.readouterr().out)


def claims_by_id(doc: dict) -> dict[str, dict]:
    """The claims of a ``reproduce --json`` document by their id."""
    return {c["id"]: c for c in doc["claims"]}
