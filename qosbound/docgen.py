"""Reference pages generated from the code: the scenario schema and the command line.

``python -m qosbound.docgen`` rewrites ``docs/schema.md`` (from each system's pydantic
``Scenario`` model) and ``docs/cli.md`` (from the argparse parser the CLI builds);
``python -m qosbound.docgen --check`` exits 1 when a committed page differs from what
the code gives. Nothing in either page is typed by hand: a field's description is its
``Field(description=...)``, else the ``#:`` comment above it, its attribute docstring
or its trailing comment; its constraints are those of its type (the unit-carrying
types of :mod:`qosbound.scenario`, ``Literal`` choices, ``Field`` bounds) and the
messages its validators raise.
"""

from __future__ import annotations

import argparse
import ast
import enum
import inspect
import io
import math
import sys
import textwrap
import tokenize
import types
import typing
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from qosbound import cli
from qosbound.scenario import ScenarioBase
from qosbound.systems import SYSTEMS, get_system
from qosbound.units import format_quantity

__all__ = ["schema_markdown", "cli_markdown", "pages", "undescribed_fields", "main", "TYPE_ALIASES"]

#: The named field types of the scenario schema: how each reads in the reference, its SI unit (a bare number
#: is read in it) and the constraint its validator enforces. Keys are the names the types carry in the code.
TYPE_ALIASES: dict[str, tuple[str, str, str]] = {
    "Time": ("time", "s", ""),
    "Rate": ("bit rate", "bit/s", ""),
    "Size": ("size", "B", ""),
    "PacketSize": ("packet size", "B", "in (0, 65535] B; text with units allowed, e.g. '1500 B'"),
    "Probability": ("probability", "1", "in [0, 1]; a number or a percentage, e.g. '1 %'"),
    "PositiveInt": ("integer", "", ">= 1"),
    "NonNegInt": ("integer", "", ">= 0"),
    "Precision": ("number", "1", "in (0, 0.1) (relative precision)"),
}

_PLAIN = {float: "number", int: "integer", str: "text", bool: "true or false", type(None): "none"}

_ROOT = Path(__file__).resolve().parents[1]


# ---- reading the code: descriptions and validator messages ------------------------------------------------

@lru_cache(maxsize=None)
def _class_comments(cls: type) -> dict[str, str]:
    """Field name -> the comment documenting it in the class body: ``#:`` lines above, an attribute docstring
    below, or a trailing ``# comment`` on its line (first found, in that order)."""
    try:
        src = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    lines = src.splitlines()
    trailing: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.COMMENT:
                trailing[tok.start[0]] = tok.string
    except (tokenize.TokenError, IndentationError):
        return {}
    tree = ast.parse(src)
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    out: dict[str, str] = {}
    for i, node in enumerate(body):
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        name, text = node.target.id, ""
        above, ln = [], node.lineno - 1  # 1-based line of the field; walk up over '#:' lines
        while ln >= 1 and lines[ln - 1].strip().startswith("#:"):
            above.insert(0, lines[ln - 1].strip()[2:].strip())
            ln -= 1
        if above:
            text = " ".join(above)
        elif i + 1 < len(body) and isinstance(body[i + 1], ast.Expr) and isinstance(body[i + 1].value, ast.Constant) \
                and isinstance(body[i + 1].value.value, str):
            text = " ".join(body[i + 1].value.value.split())
        else:
            c = trailing.get(node.end_lineno or node.lineno, "")
            if c and lines[(node.end_lineno or node.lineno) - 1].lstrip().startswith("#"):
                c = ""  # a comment line of its own, not a trailing one
            text = c.lstrip("#").strip()
            if text.lower().startswith("noqa"):
                text = ""
        if text:
            out[name] = text
    return out


def _defining_class(model: type[BaseModel], name: str) -> type[BaseModel]:
    """The class in the model's MRO whose body declares the field."""
    for cls in model.__mro__:
        if isinstance(cls, type) and issubclass(cls, BaseModel) and name in cls.__dict__.get("__annotations__", {}):
            return cls
    return model


def _own_doc(model) -> str:
    """The first paragraph of a model's own docstring (not one inherited from a base), on one line."""
    doc = model.__dict__.get("__doc__") if isinstance(model, type) else None
    return " ".join(inspect.cleandoc(doc).split("\n\n")[0].split()) if doc else ""


def _describe(model: type[BaseModel], name: str, info: FieldInfo) -> str:
    """Field(description=...), else the comment on the field, else (for a section) the section's docstring."""
    if info.description:
        return " ".join(info.description.split())
    text = _class_comments(_defining_class(model, name)).get(name, "")
    if not text:
        subs = [m for _, m in _type(info.annotation, info.metadata).models]
        text = _own_doc(subs[0]) if len(subs) == 1 else ""
    return text


def _message(node: ast.AST) -> str | None:
    """The text of a raised message: a string constant, or an f-string with its fields shown as '...'."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "…" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _message(node.left), _message(node.right)
        return a + b if a is not None and b is not None else None
    return None


def _same_package(callee, func) -> bool:
    """Whether ``callee`` is defined in the module of ``func``, a sibling module of the same package (a schema
    split along its jobs, e.g. the port's checks across fields beside its models), or the checks every system's
    schema shares (:mod:`qosbound.systems.base`)."""
    return (callee.__module__.rpartition(".")[0] == func.__module__.rpartition(".")[0]
            or callee.__module__ == "qosbound.systems.base")


@lru_cache(maxsize=None)
def _raised(func, depth: int = 2) -> tuple[tuple[str, str | None], ...]:
    """(message, field) of every ValueError / ScenarioError / ResourceError the function raises, and those of
    the module-level functions of its package it calls (``depth`` calls deep), in source order."""
    func = getattr(func, "__func__", func)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return ()
    found: list[tuple[int, tuple]] = []
    for node in ast.walk(tree):
        if depth > 0 and isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            callee = getattr(func, "__globals__", {}).get(node.func.id)
            if inspect.isfunction(callee) and _same_package(callee, func) and callee is not func:
                found.append((node.lineno, _raised(callee, depth - 1)))
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            callee = node.exc.func
            cname = callee.id if isinstance(callee, ast.Name) else getattr(callee, "attr", "")
            if cname not in ("ValueError", "ScenarioError", "ResourceError"):
                continue
            msg = _message(node.exc.args[0])
            field = next((kw.value.value for kw in node.exc.keywords
                          if kw.arg == "field" and isinstance(kw.value, ast.Constant)), None)
            if msg:
                found.append((node.lineno, ((" ".join(msg.split()), field),)))
    found.sort(key=lambda item: item[0])
    return tuple(m for _, ms in found for m in ms)


def _validators(model: type[BaseModel]):
    """(field validators: field -> messages, model validator messages) of a model, its bases included."""
    decs = model.__pydantic_decorators__
    per_field: dict[str, list[str]] = {}
    for dec in decs.field_validators.values():
        for f in dec.info.fields:
            per_field.setdefault(f, []).extend(m for m, _ in _raised(dec.func))
    whole = []
    for dec in decs.model_validators.values():
        whole.extend(_raised(dec.func))
    return per_field, whole


# ---- types ------------------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _alias_names() -> dict[int, str]:
    """id(validator metadata) -> alias name, for the Annotated aliases the schema modules define or import."""
    modules = {sys.modules["qosbound.scenario"] if "qosbound.scenario" in sys.modules else None}
    for name in SYSTEMS:
        mod = get_system(name)
        modules.add(mod)
        for obj in vars(mod).values():
            if isinstance(obj, type) and issubclass(obj, BaseModel):
                for cls in obj.__mro__:
                    modules.add(sys.modules.get(cls.__module__))
    out: dict[int, str] = {}
    for mod in modules:
        if mod is None:
            continue
        for var, obj in vars(mod).items():
            if typing.get_origin(obj) is typing.Annotated and var in TYPE_ALIASES:
                for meta in obj.__metadata__:
                    out[id(meta)] = var
    return out


def _alias_of(metadata) -> str | None:
    names = _alias_names()
    for meta in metadata:
        if id(meta) in names:
            return names[id(meta)]
    return None


def _bounds(metadata) -> list[str]:
    """Constraints pydantic records as annotated-types metadata (``Field(gt=...)``, ``min_length`` ...)."""
    ops = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "multiple_of": "multiple of", "min_length": "length >=",
           "max_length": "length <="}
    out = []
    for meta in metadata:
        if type(meta).__module__ != "annotated_types":
            continue
        for attr, op in ops.items():
            v = getattr(meta, attr, None)
            if v is not None:
                out.append(f"{op} {v:g}" if isinstance(v, (int, float)) else f"{op} {v}")
    return out


class _Type:
    """A field type as the reference shows it."""

    def __init__(self, text: str, unit: str = "", constraints: list[str] | None = None,
                 models: list[tuple[str, type]] | None = None):
        self.text, self.unit = text, unit
        self.constraints = constraints or []
        self.models = models or []  # (path suffix, model class) of nested sections


def _type(tp, metadata=(), anchor=None) -> _Type:
    """Render a type; ``anchor(model)`` gives the link target of a nested section."""
    alias = _alias_of(metadata)
    if alias:
        text, unit, cons = TYPE_ALIASES[alias]
        return _Type(text, unit, [c for c in (cons, *_bounds(metadata)) if c])
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        return _type(args[0], (*tp.__metadata__, *metadata), anchor)
    if origin is typing.Literal:
        return _Type("one of " + ", ".join(f"`{a}`" for a in args))
    if origin in (typing.Union, types.UnionType):
        parts = [_type(a, (), anchor) for a in args]
        none = any(a is type(None) for a in args)
        shown = [p for p, a in zip(parts, args) if a is not type(None)]
        t = _Type(" or ".join(p.text for p in shown) + (" or none" if none else ""),
                  next((p.unit for p in shown if p.unit), ""),
                  [c for p in shown for c in p.constraints], [m for p in shown for m in p.models])
        return t
    if origin in (list, tuple, set, frozenset):
        inner = _type(args[0], (), anchor) if args else _Type("any")
        return _Type(f"list of {inner.text}", inner.unit, [f"each {c}" for c in inner.constraints] + _bounds(metadata),
                     [("[]" + s, m) for s, m in inner.models])
    if origin is dict:
        inner = _type(args[1], (), anchor) if len(args) == 2 else _Type("any")
        return _Type(f"mapping of name to {inner.text}", inner.unit, [f"each {c}" for c in inner.constraints],
                     [(".NAME" + s, m) for s, m in inner.models])
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _Type(f"[section]({anchor(tp)})" if anchor else "section", models=[("", tp)])
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _Type("one of " + ", ".join(f"`{e.value}`" for e in tp))
    if tp is typing.Any:
        return _Type("any")
    return _Type(_PLAIN.get(tp, getattr(tp, "__name__", str(tp))), "", _bounds(metadata))


def _value(v, unit: str) -> str:
    if isinstance(v, BaseModel):
        return "its fields' defaults"
    if isinstance(v, bool):
        return f"`{str(v).lower()}`"
    if isinstance(v, (int, float)) and unit in ("s", "bit/s", "B") and math.isfinite(v):
        return f"`{format_quantity(float(v), unit, digits=6)}`"
    if isinstance(v, float):
        return f"`{v:g}`"
    if isinstance(v, list):
        return "`[" + ", ".join(_value(x, unit).strip("`") for x in v) + "]`"
    if isinstance(v, dict):
        return "`{}`" if not v else f"`{v}`"
    if v is None:
        return "none"
    if v == "":
        return '`""`'
    return f"`{v}`"


def _default(info: FieldInfo, unit: str) -> str:
    if info.default is not PydanticUndefined:
        return _value(info.default, unit)
    if info.default_factory is not None:
        try:
            return _value(info.default_factory(), unit)
        except TypeError:  # a factory taking the validated data
            return "computed"
    return "**required**"


# ---- the schema page ----------------------------------------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _slug(*parts: str) -> str:
    return "-".join(p.replace(".", "-").replace("[]", "").replace("_", "-").lower() for p in parts if p).strip("-")


def _sections(scenario: type[BaseModel], prefix: str, anchors: dict[type, str], skip=frozenset()):
    """(dotted path, model) of the scenario and every nested section not yet documented, depth first in field
    order; ``anchors`` gains each new section's anchor (a section shared with an earlier system links there)."""
    out = []

    def walk(path: str, model: type[BaseModel], top: bool = False):
        if model in anchors:
            return
        anchors[model] = _slug(prefix, path or "top")
        out.append((path, model))
        for name, info in model.model_fields.items():
            if top and name in skip:
                continue
            shown = info.alias or name
            for suffix, sub in _type(info.annotation, info.metadata).models:
                walk(f"{path}.{shown}{suffix}" if path else f"{shown}{suffix}", sub)

    walk("", scenario, top=True)
    return out


def _section_markdown(title: str, anchor: str, model: type[BaseModel], path: str, anchors: dict[type, str],
                      missing: list[str], skip=frozenset(), note: str = "") -> list[str]:
    out = [f'<a id="{anchor}"></a>', "", title, ""] + ([note, ""] if note else [])
    doc = _own_doc(model)
    if doc and path:
        out += [doc, ""]
    per_field, whole = _validators(model)
    out += ["| field | type | unit | default | constraints | description |", "|---|---|---|---|---|---|"]
    for name, info in model.model_fields.items():
        if name in skip:
            continue
        shown = info.alias or name
        t = _type(info.annotation, info.metadata, lambda m: "#" + anchors[m])
        cons = list(t.constraints)
        cons += [m for m in per_field.get(name, []) if m not in cons]
        cons += [m for m, f in whole if f and f.split(".")[-1] == shown and m not in cons]
        desc = _describe(model, name, info)
        if not desc:
            owner = _defining_class(model, name)
            entry = f"{owner.__module__}.{owner.__qualname__}.{name}"
            if entry not in missing:
                missing.append(entry)
        out.append("| " + " | ".join(_cell(x) for x in (
            f"`{shown}`", t.text, t.unit, _default(info, t.unit), "; ".join(cons), desc)) + " |")
    checks = [m for m, f in whole if not f or f.split(".")[-1] not in
              {i.alias or n for n, i in model.model_fields.items()}]
    if checks:
        out += ["", "Checks across the section's fields (the message given when one fails):", ""]
        out += [f"* {m}" for m in dict.fromkeys(checks)]
    out.append("")
    return out


def schema_markdown(missing: list[str] | None = None) -> str:
    """The scenario schema reference of every system, from the pydantic models."""
    missing = [] if missing is None else missing
    anchors: dict[type, str] = {}
    out = ["# Scenario schema reference", "",
           "<!-- Generated by `python -m qosbound.docgen` from the pydantic models; do not edit by hand. -->", "",
           "Every field of every system's scenario file, generated from the schema the loader validates against "
           "(`qosbound.systems.get_system(name).Scenario`). A field with a unit may be given as a bare number, "
           "read in that SI unit (s, bit/s, B), or as text with units in the grammar of [units.md](units.md) "
           "(`'10 ms'`, `'2 Mbit/s'`, `'1 Gb/s'`, `'128 B'`, `'1 %'`); an SLO limit (`slos[].max`, `slos[].min`) "
           "of a time, rate or size must carry its unit. Unknown fields are errors. A section that is not required may be left out; its fields then "
           "take the defaults shown. A section shared by several systems is described once, where it first "
           "appears. Each system's page tells what the fields mean for it ([pq_txq](pq_txq.md), [af](af.md), "
           "[tsq](tsq.md), [tfrc](tfrc.md), [port](port.md)); [scenarios.md](scenarios.md) shows a whole file.", "",
           "Systems: " + ", ".join(f"[`{n}`](#{_slug(n, 'top')})" for n in SYSTEMS), ""]
    common = set(ScenarioBase.model_fields)
    out += ["## Fields every scenario shares", ""]
    for path, model in _sections(ScenarioBase, "common", anchors):
        title = "### the top level" if not path else f"### `{path}`"
        out += _section_markdown(title, anchors[model], model, path, anchors, missing)
    for name in SYSTEMS:
        mod = get_system(name)
        scn = mod.Scenario
        skip = frozenset(n for n in common if n != "system" and scn.model_fields[n].annotation
                         == ScenarioBase.model_fields[n].annotation)
        out += [f"## `{name}`", ""]
        head = (inspect.getdoc(mod) or "").split("\n\n")[0]
        if head:
            out += [" ".join(head.split()), ""]
        for path, model in _sections(scn, name, anchors, skip):
            title = f"### `{name}`: " + (f"`{path}`" if path else "the top level")
            note = (f"The [fields every scenario shares](#{_slug('common', 'top')}) ("
                    + ", ".join(f"`{n}`" for n in sorted(skip)) + "), and:") if model is scn else ""
            out += _section_markdown(title, anchors[model], model, path, anchors, missing,
                                     skip if model is scn else frozenset(), note)
    return "\n".join(out).rstrip() + "\n"


def undescribed_fields() -> list[str]:
    """The schema fields with no description anywhere in the code, as ``module.Class.field`` of the class that
    declares them (for their owners to fill in)."""
    missing: list[str] = []
    schema_markdown(missing)
    return missing


# ---- the CLI page -------------------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    build = getattr(cli, "build_parser", None)
    if build is None:
        raise RuntimeError("qosbound.cli has no build_parser(): point qosbound.docgen._parser at the function "
                           "that builds the argument parser")
    return build()


def _usage(p: argparse.ArgumentParser) -> str:
    fmt = argparse.HelpFormatter(p.prog, width=100)
    fmt.add_usage(p.usage, p._actions, p._mutually_exclusive_groups, prefix="usage: ")
    return fmt.format_help().strip()


def _opt_names(a: argparse.Action) -> str:
    if a.option_strings:
        meta = ""
        if a.nargs != 0:
            meta = " " + (a.metavar or a.dest.upper()) if not a.choices else " {" + ",".join(map(str, a.choices)) + "}"
        return ", ".join(f"`{o}{meta}`" for o in a.option_strings)
    return f"`{a.metavar or a.dest}`"


def _expand_help(a: argparse.Action, prog: str) -> str:
    """The help text as ``--help`` prints it: argparse %-formats it (``%%`` -> ``%``, ``%(default)s`` ...)."""
    if not a.help:
        return ""
    params = {k: v for k, v in vars(a).items() if v is not argparse.SUPPRESS}
    params.update(prog=prog, choices=", ".join(map(str, a.choices)) if a.choices else None)
    try:
        return a.help % params
    except (KeyError, TypeError, ValueError):
        return a.help


def _action_rows(p: argparse.ArgumentParser, skip: set[str]) -> list[str]:
    rows = []
    exclusive = {id(a): g for g in p._mutually_exclusive_groups for a in g._group_actions}
    for a in p._actions:
        if isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)) or a.help == argparse.SUPPRESS:
            continue
        if a.option_strings and set(a.option_strings) & skip:
            continue
        notes = []
        if a.choices and not a.option_strings:
            notes.append("one of " + ", ".join(f"`{c}`" for c in a.choices))
        if a.required and a.option_strings:
            notes.append("required")
        if id(a) in exclusive:
            others = [o.option_strings[0] for o in exclusive[id(a)]._group_actions if o is not a]
            notes.append(("exactly one of this and " if exclusive[id(a)].required else "not with ")
                         + ", ".join(f"`{o}`" for o in others))
        if not a.option_strings and a.nargs == "?":
            notes.append("optional")
        if isinstance(a, argparse._AppendAction):
            notes.append("repeatable")
        default = a.default
        if isinstance(a, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._VersionAction)) \
                or default in (None, argparse.SUPPRESS, []):
            shown = ""
        else:
            shown = f"`{default}`"
        help_ = _expand_help(a, p.prog)
        rows.append("| " + " | ".join(_cell(x) for x in (_opt_names(a), shown, "; ".join(
            [help_] + notes if help_ else notes))) + " |")
    return rows


def _subcommands(p: argparse.ArgumentParser):
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            helps = {c.dest: c.help or "" for c in a._choices_actions}
            for name, sub in a.choices.items():
                yield name, helps.get(name, ""), sub


def cli_markdown() -> str:
    """The command-line reference, walking the parser the CLI builds (new subcommands appear by themselves)."""
    root = _parser()
    glob = {o for a in root._actions for o in a.option_strings if a.default == argparse.SUPPRESS}
    out = ["# Command-line reference", "",
           "<!-- Generated by `python -m qosbound.docgen` from the argument parser; do not edit by hand. -->", "",
           f"{root.description or ''} Every command is `{root.prog} COMMAND ...`; "
           "[commands.md](commands.md) explains what each does and how they fit together.", "",
           "```", _usage(root), "```", "", "## Options of every command", "",
           "| argument | default | meaning |", "|---|---|---|", *_action_rows(root, set()), ""]
    if root.epilog:
        out += ["## Exit codes", "", "```", root.epilog.strip(), "```", ""]
    out += ["## Commands", ""]
    listed = []

    def walk(p, depth, path):
        for name, help_, sub in _subcommands(p):
            full = " ".join([*path, name])
            listed.append((full, help_))
            out.extend([f'<a id="{_slug(full.replace(" ", "-"))}"></a>', "", "#" * depth + f" `{root.prog} {full}`",
                        ""])
            if help_:
                out.extend([help_[0].upper() + help_[1:] + ".", ""])
            if sub.description:
                out.extend([sub.description.strip(), ""])
            out.extend(["```", _usage(sub), "```", ""])
            rows = _action_rows(sub, glob)
            if rows:
                out.extend(["| argument | default | meaning |", "|---|---|---|", *rows, ""])
            if sub.epilog and sub.epilog != root.epilog:
                out.extend(["```", sub.epilog.strip(), "```", ""])
            walk(sub, depth + 1, [*path, name])

    walk(root, 3, [])
    index = [f"* [`{root.prog} {full}`](#{_slug(full.replace(' ', '-'))}) -- {help_}" for full, help_ in listed]
    at = out.index("## Commands") + 2
    out[at:at] = [*index, ""]
    return "\n".join(out).rstrip() + "\n"


# ---- entry point --------------------------------------------------------------------------------------------

def pages(root: Path = _ROOT) -> dict[Path, str]:
    """Each generated page's path and the text the code gives now."""
    return {root / "docs" / "schema.md": schema_markdown(), root / "docs" / "cli.md": cli_markdown()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m qosbound.docgen", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a committed page is stale; write nothing")
    ap.add_argument("--missing", action="store_true", help="list the schema fields that have no description")
    args = ap.parse_args(argv)
    if args.missing:
        print("\n".join(undescribed_fields()))
        return 0
    if not (_ROOT / "pyproject.toml").is_file() or not (_ROOT / "docs").is_dir():
        print("qosbound.docgen: run it from a source checkout (the pages live in its docs/ folder)", file=sys.stderr)
        return 2
    stale = []
    for path, text in pages().items():
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old != text:
            stale.append(path)
            if not args.check:
                path.write_text(text, encoding="utf-8")
    rel = [str(p.relative_to(_ROOT)) for p in stale]
    if args.check:
        if stale:
            print(f"stale: {', '.join(rel)}: run `python -m qosbound.docgen`", file=sys.stderr)
        return 1 if stale else 0
    print(f"wrote {', '.join(rel)}" if stale else "up to date")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
