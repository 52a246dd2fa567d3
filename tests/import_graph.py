"""The import graph of the qosbound package, read from the source with ``ast``.

Every import statement counts, wherever it is: at module level, inside a function, inside a class or a
conditional -- so an import deferred to call time is an edge like any other. Imports under
``if TYPE_CHECKING:`` are left out (they never run). The package is the ``qosbound/`` folder plus the three
top-level folders ``pyproject.toml`` maps into it (``models/``, ``analytic/``, ``validation/``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Package name of each source folder.
FOLDERS = {"qosbound": "qosbound", "models": "qosbound.models", "analytic": "qosbound.analytic",
           "validation": "qosbound.validation"}


@dataclass(frozen=True)
class Import:
    """One imported name: the importing module, the file and line, the absolute target (``a.b`` for
    ``from a import b``), whether the statement runs inside a function, and the comment on its line or the
    line above (the reason a deferred import must give)."""
    module: str
    path: Path
    line: int
    target: str
    imported_name: str | None
    in_function: bool
    comment: str


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package, by its dotted name."""
    out: dict[str, Path] = {}
    for folder, package in FOLDERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root / folder).with_suffix("")
            if package == "qosbound" and rel.parts[0] in ("models", "analytic", "validation", "examples"):
                continue  # an installed copy's mapped folders, should one ever sit inside the source folder
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([package, *parts])] = path
    return out


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _comment(lines: list[str], lineno: int) -> str:
    """The comment at the end of the statement's line, or the comment line just above it."""
    here = lines[lineno - 1]
    if "#" in here:
        return here.split("#", 1)[1].strip()
    above = lines[lineno - 2].strip() if lineno >= 2 else ""
    return above[1:].strip() if above.startswith("#") else ""


def imports_of(module: str, path: Path) -> list[Import]:
    """Every import a module makes, with absolute targets."""
    source = path.read_text()
    lines = source.splitlines()
    tree = ast.parse(source, filename=str(path))
    is_pkg = path.name == "__init__.py"
    out: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                for sub in child.orelse:
                    visit(ast.Module(body=[sub], type_ignores=[]), in_function)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    out.append(Import(module, path, child.lineno, alias.name, None, in_function,
                                      _comment(lines, child.lineno)))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = module.split(".")
                    base = base[:len(base) - child.level + (1 if is_pkg else 0)]
                    name = ".".join(base + ([child.module] if child.module else []))
                else:
                    name = child.module or ""
                for alias in child.names:
                    out.append(Import(module, path, child.lineno, f"{name}.{alias.name}" if alias.name != "*"
                                      else name, alias.name, in_function, _comment(lines, child.lineno)))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return out


def resolve(target: str, known: dict[str, Path]) -> str | None:
    """The package module an import target lands in (``a.b.c`` -> ``a.b`` when ``c`` is a name in it)."""
    name = target
    while name:
        if name in known:
            return name
        name = name.rsplit(".", 1)[0] if "." in name else ""
    return None


def graph(root: Path = ROOT) -> tuple[dict[str, set[str]], list[Import]]:
    """The module graph (edges between package modules) and every internal import."""
    known = modules(root)
    edges: dict[str, set[str]] = {m: set() for m in known}
    internal: list[Import] = []
    for module, path in known.items():
        for imp in imports_of(module, path):
            if not (imp.target == "qosbound" or imp.target.startswith("qosbound.")):
                continue
            internal.append(imp)
            to = resolve(imp.target, known)
            if to and to != module:
                edges[module].add(to)
            # importing a.b.c first runs the packages a and a.b (their __init__), unless the importer sits
            # inside one already (then that package was initialised before it): an edge to each such package
            while to and "." in to:
                to = to.rsplit(".", 1)[0]
                if to in known and to != module and not module.startswith(to + "."):
                    edges[module].add(to)
    return edges, internal


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def private_uses(module: str, path: Path, known: dict[str, Path]) -> list[str]:
    """``alias._name`` where ``alias`` names another module of the package (``import qosbound.x as N``, ``from
    qosbound import x as N``): a private name crossing modules through an attribute, as ``from x import _name`` does
    through an import. Dunder names are not private."""
    tree = ast.parse(path.read_text(), filename=str(path))
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname and a.name in known:
                    aliases[a.asname] = a.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                target = f"{node.module}.{a.name}"
                if target in known:
                    aliases[a.asname or a.name] = target
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and node.attr.startswith("_") and not node.attr.startswith("__")
                and aliases[node.value.id] != module):
            out.append(f"{path}:{node.lineno} {aliases[node.value.id]}.{node.attr}")
    return out
