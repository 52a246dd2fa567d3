"""The layers only point down: ``analytic``, ``models`` and ``validation`` import nothing of qosbound but a small
neutral core (and the layers below them); ``systems`` never imports a command module.

Every import statement of every module is read with ``ast``, including the ones inside functions, so an
import deferred to call time is caught as well as one at module level. That the package has no import cycle at all
is ``tests/test_import_graph.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: The neutral core every layer may use: units, errors, results, input checks, progress, the forked-child
#: runner and its signal policy, the shared parameter types, the metric-name helpers, the stationary solve of a Markov chain
#: and where numba keeps the compiled kernels.
CORE = {"qosbound", "qosbound.units", "qosbound.errors", "qosbound.results", "qosbound.inputs",
        "qosbound.progress", "qosbound.isolate", "qosbound.interrupts", "qosbound.metric_names",
        "qosbound.markov", "qosbound.dscp", "qosbound.kernel_cache"}

#: Each lower layer (folder, package) and the lower layers it may use besides the core.
LOWER = {
    "analytic": ("qosbound.analytic", {"qosbound.analytic"}),
    "models": ("qosbound.models", {"qosbound.models", "qosbound.analytic"}),
    "validation": ("qosbound.validation", {"qosbound.validation", "qosbound.analytic"}),
}

#: Command modules (the CLI and what it composes) that the system layer must never import.
COMMANDS = {"qosbound.cli", "qosbound.commands", "qosbound.reproduce", "qosbound.__main__"}


def _modules(folder: Path, package: str):
    for path in sorted(folder.rglob("*.py")):
        rel = path.relative_to(folder).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        yield ".".join([package, *parts]), path


def imports(path: Path, module: str) -> list[tuple[int, str]]:
    """Every module a file imports (absolute names; ``from a import b`` counts as ``a.b`` and ``a``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_pkg = path.name == "__init__.py"
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[:len(base) - node.level + (1 if is_pkg else 0)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module
            out.append((node.lineno, name))
            out += [(node.lineno, f"{name}.{a.name}") for a in node.names if a.name != "*"]
    return out


def _within(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def upward_imports(layer: str) -> list[str]:
    package, allowed = LOWER[layer]
    bad = []
    for module, path in _modules(ROOT / layer, package):
        for line, name in imports(path, module):
            if not _within(name, {"qosbound"}):
                continue  # the standard library and third-party packages
            if name in CORE or _within(name, CORE - {"qosbound"}) or _within(name, allowed):
                continue
            bad.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    return bad


@pytest.mark.parametrize("layer", sorted(LOWER))
def test_lower_layers_import_only_the_core(layer):
    """analytic/, models/ and validation/ never import qosbound.systems, the CLI or any other upper module."""
    assert upward_imports(layer) == []


def test_system_layer_never_imports_a_command():
    """qosbound/systems/* composes the lower layers and is composed by the CLI, never the other way round."""
    bad = []
    for module, path in _modules(ROOT / "qosbound" / "systems", "qosbound.systems"):
        bad += [f"{path.relative_to(ROOT)}:{line}: {name}" for line, name in imports(path, module)
                if _within(name, COMMANDS)]
    assert bad == []


def test_core_imports_no_layer_above_it():
    """The neutral core itself stays neutral: it imports only core modules."""
    bad = []
    for name in sorted(CORE - {"qosbound"}):
        path = ROOT / (name.replace(".", "/") + ".py")
        bad += [f"{path.relative_to(ROOT)}:{line}: {n}" for line, n in imports(path, name)
                if _within(n, {"qosbound"}) and n not in CORE and not _within(n, CORE - {"qosbound"})]
    assert bad == []


def test_the_checker_sees_upward_imports(tmp_path):
    """The walk finds an upward import at module level, inside a function and in relative form."""
    f = tmp_path / "mod.py"
    f.write_text("import numpy\nfrom qosbound.errors import ModelError\n"
                 "def g():\n    from qosbound.systems.base import quantile_name\n"
                 "    from ..cli import isolated\n")
    names = {n for _, n in imports(f, "qosbound.models.mod")}
    assert "qosbound.systems.base.quantile_name" in names
    assert "qosbound.cli.isolated" in names
    assert "qosbound.errors.ModelError" in names
    assert not _within("qosbound.systems.base", CORE - {"qosbound"})
