"""Files shipped inside the qosbound package: the example scenarios and the papers' reference numbers.

Both are found with :mod:`importlib.resources`, so they resolve the same way in an installed wheel
(``qosbound/examples/*.yaml``, ``qosbound/data/*.yaml``; ``pyproject.toml`` maps the checkout's
top-level ``examples/`` folder to ``qosbound.examples``) and in a source checkout (where
``qosbound/__init__.py`` puts the checkout root on the package's search path, so
``qosbound.examples`` is the top-level ``examples/`` folder). Nothing here depends on the current
directory.

A command-line scenario argument may name a shipped example instead of a file
(``qosbound plan ferrari2001``): :func:`resolve_scenario` maps it to the shipped file when no file
of that name exists.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import yaml

from qosbound.errors import ScenarioError

__all__ = ["examples_dir", "example_folders", "example_names", "example_path", "resolve_folder", "resolve_scenario",
           "reference", "reference_path"]


def examples_dir():
    """The folder of shipped example scenarios (a :class:`importlib.resources.abc.Traversable`)."""
    return resources.files("qosbound.examples")


def example_names() -> list[str]:
    """Names of the shipped examples (file stems), sorted."""
    return sorted(p.name[:-5] for p in examples_dir().iterdir() if p.name.endswith(".yaml"))


def example_path(name: str) -> Path:
    """The file of the shipped example ``name`` (with or without ``.yaml``)."""
    stem = name[:-5] if name.endswith(".yaml") else name
    if stem not in example_names():
        raise ScenarioError(f"no shipped example '{stem}'; shipped: {', '.join(example_names())}")
    return Path(str(examples_dir().joinpath(f"{stem}.yaml")))


def example_folders() -> list[str]:
    """Names of the shipped folders of examples (one router's ports each), sorted."""
    return sorted(p.name for p in examples_dir().iterdir()
                  if p.is_dir() and any(q.name.endswith(".yaml") for q in p.iterdir()))


def resolve_folder(arg: str) -> str:
    """``arg`` itself when it exists or names no shipped folder, else the shipped folder's path.

    Accepted names: ``edge-router``, ``edge-router/`` and ``examples/edge-router`` (the README's spelling, run
    from outside a checkout).
    """
    if not isinstance(arg, str) or not arg or Path(arg).exists():
        return arg
    p = Path(arg.rstrip("/"))
    if p.parent not in (Path("."), Path("examples")) or p.name not in example_folders():
        return arg
    return str(examples_dir().joinpath(p.name))


def resolve_scenario(arg: str) -> str:
    """``arg`` itself when it is an existing file or names no shipped example, else the shipped example's path.

    Accepted names: ``ferrari2001``, ``ferrari2001.yaml`` and ``examples/ferrari2001.yaml`` (the
    README's spelling, run from outside a checkout).
    """
    if not isinstance(arg, str) or not arg or Path(arg).exists():
        return arg
    p = Path(arg)
    if p.parent not in (Path("."), Path("examples")):
        return arg
    stem = p.name[:-5] if p.name.endswith(".yaml") else p.name
    if stem in example_names():
        return str(example_path(stem))
    return arg


def reference_path(name: str):
    """The file of a paper's reference numbers, ``qosbound/data/<name>.yaml`` (a Traversable)."""
    return resources.files("qosbound") / "data" / f"{name}.yaml"


def reference(name: str) -> dict:
    """A paper's reference numbers, ``qosbound/data/<name>.yaml``."""
    return yaml.safe_load(reference_path(name).read_text(encoding="utf-8"))
