"""The generated reference pages (docs/schema.md, docs/cli.md) are current, complete and say true things."""

from __future__ import annotations

import argparse

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from qosbound import docgen
from qosbound.systems import SYSTEMS, get_system
from tests.helpers import ROOT


@pytest.mark.parametrize("page", ["schema.md", "cli.md"])
def test_committed_page_is_current(page):
    path = ROOT / "docs" / page
    fresh = docgen.pages(ROOT)[path]
    assert path.exists(), f"docs/{page} is missing: run `python -m qosbound.docgen`"
    assert path.read_text(encoding="utf-8") == fresh, f"docs/{page} is stale: run `python -m qosbound.docgen`"


def _fields(model: type[BaseModel], seen=None):
    """Every (model, shown name) reachable from a model, nested sections included."""
    seen = set() if seen is None else seen
    if model in seen:
        return
    seen.add(model)
    for name, info in model.model_fields.items():
        yield model, info.alias or name
        for _, sub in docgen._type(info.annotation, info.metadata).models:
            yield from _fields(sub, seen)


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_schema_lists_every_field(system):
    page = docgen.schema_markdown()
    rows = {line.split("|")[1].strip().strip("`") for line in page.splitlines() if line.startswith("| `")}
    fields = list(_fields(get_system(system).Scenario))
    assert len(fields) >= 10
    absent = [f"{m.__qualname__}.{name}" for m, name in fields if name not in rows]
    assert not absent, absent
    assert f"## `{system}`" in page


def test_schema_shows_units_and_defaults_of_the_pq_txq_fields():
    page = docgen.schema_markdown()
    # Found by walking the pq_txq schema, not written in the generator: a Size field with a 512 B default.
    assert "| `unit_size` | size | B | `512 B` |" in page
    assert "| `rate` | bit rate | bit/s | **required** |" in page
    assert "| `ccdf_at` | list of time | s | `[5 ms, 10 ms, 15 ms]` |" in page


def test_every_named_type_of_the_schema_is_recognised():
    """A unit-carrying type renamed or added in the schema modules must be described in TYPE_ALIASES."""
    assert set(docgen._alias_names().values()) == set(docgen.TYPE_ALIASES)


def _adapter(name: str) -> TypeAdapter:
    from qosbound import scenario
    from qosbound.systems import base

    return TypeAdapter(getattr(scenario, name, None) or getattr(base, name))


@pytest.mark.parametrize("name, good, bad", [
    ("Time", [("10 ms", 0.01), (2, 2.0)], ["10 kbit/s"]),
    ("Rate", [("2 Mbps", 2e6), ("300 kbit/s", 3e5)], ["10 ms"]),
    ("Size", [("128 B", 128.0), (10, 10.0)], ["1 s"]),
    ("PacketSize", [("65535 B", 65535.0), (1, 1.0)], [0, 65536, "70 kB"]),
    ("Probability", [("1 %", 0.01), (1, 1.0), (0, 0.0)], [1.01, -0.1]),
    ("PositiveInt", [(1, 1), (5.0, 5)], [0, -3, 1.5]),
    ("NonNegInt", [(0, 0), (7, 7)], [-1]),
    ("Precision", [(1e-10, 1e-10), (0.09, 0.09)], [0.1, 0.0]),
])
def test_the_constraints_the_reference_states_are_enforced(name, good, bad):
    """TYPE_ALIASES states each type's unit and range in words; the validators must agree with them."""
    ta = _adapter(name)
    for raw, value in good:
        assert ta.validate_python(raw) == pytest.approx(value), (name, raw)
    for raw in bad:
        with pytest.raises(ValidationError):
            ta.validate_python(raw)


def test_descriptions_fall_back_on_comments():
    """A field without Field(description=...) is described by its '#:' comment when it has one."""
    from qosbound.systems.base import PacketSimOptions

    page = docgen.schema_markdown()
    row = next(line for line in page.splitlines() if line.startswith("| `max_total_packets`"))
    assert "Budget on packets * replications" in row
    missing = docgen.undescribed_fields()
    assert not any(f.endswith(".max_total_packets") for f in missing), missing
    # ... and a section by its docstring: `link` has no Field description, its class Link has a docstring.
    assert "| `link` | [section](#pq-txq-link) |  | **required** |  | The output link: its line rate (bit/s). |" in page
    assert PacketSimOptions.model_fields["max_total_packets"].description is None


def test_cli_reference_lists_every_subcommand_and_option():
    page = docgen.cli_markdown()
    parser = docgen._parser()

    def walk(p, path):
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    full = [*path, name]
                    assert f"`qosbound {' '.join(full)}`" in page, full
                    for opt in sub._actions:
                        for o in opt.option_strings:
                            if o not in ("-h", "--help"):
                                assert f"`{o}" in page, (full, o)
                    walk(sub, full)

    walk(parser, [])
    assert "%%" not in page and "%(" not in page  # help texts appear as --help prints them
    for code in ("0", "1", "2", "3", "4", "70", "130"):
        assert f"\n  {code} " in page


def test_cli_reference_follows_new_subcommands(monkeypatch):
    """A subcommand another module adds shows up without touching the generator."""
    from qosbound import cli

    real = cli.build_parser

    def with_extra():
        p = real()
        sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
        sp = sub.add_parser("calibrate", help="a calibration")
        sp.add_argument("--points", default="9", help="how many values")
        return p

    monkeypatch.setattr(cli, "build_parser", with_extra)
    page = docgen.cli_markdown()
    assert "### `qosbound calibrate`" in page and "* [`qosbound calibrate`](#calibrate) -- a calibration" in page
    assert "| `--points POINTS` | `9` | how many values |" in page


def test_check_mode_reports_a_stale_page(tmp_path, monkeypatch, capsys):
    page = tmp_path / "docs" / "cli.md"
    page.parent.mkdir()
    monkeypatch.setattr(docgen, "_ROOT", tmp_path)
    assert docgen.main([]) == 2 and not page.exists()  # not a checkout: nothing written
    (tmp_path / "pyproject.toml").write_text("")
    page.write_text("# old\n")
    monkeypatch.setattr(docgen, "pages", lambda root=tmp_path: {page: "# new\n"})
    assert docgen.main(["--check"]) == 1
    assert "run `python -m qosbound.docgen`" in capsys.readouterr().err
    assert page.read_text() == "# old\n"
    assert docgen.main([]) == 0 and page.read_text() == "# new\n"
    assert docgen.main(["--check"]) == 0
