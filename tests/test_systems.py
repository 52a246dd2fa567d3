"""The System protocol: every hook of every system is required and checked when the system is loaded."""

from __future__ import annotations

import re
import types

import pytest

from qosbound.errors import InternalError, ScenarioError
from qosbound.systems import HOOKS, SYSTEMS, System, check_system, get_system
from tests.helpers import ROOT


def _fake(missing: str | None = None, **extra) -> types.ModuleType:
    m = types.ModuleType("fake_system")
    for hook in HOOKS:
        if hook != missing:
            setattr(m, hook, type("Scenario", (), {}) if hook == "Scenario" else (lambda *a, **k: None))
    for k, v in extra.items():
        setattr(m, k, v)
    return m


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_every_registered_system_implements_every_hook(name):
    """Each shipped system loads through the check and satisfies the runtime protocol."""
    system = get_system(name)
    assert isinstance(system, System)
    assert all(callable(getattr(system, h)) for h in HOOKS)


@pytest.mark.parametrize("hook", HOOKS)
def test_a_system_missing_a_hook_is_refused_naming_it(hook):
    """A module without one hook is refused with an InternalError that names the hook."""
    with pytest.raises(InternalError, match=rf"'{hook}'"):
        check_system(_fake(missing=hook), "fake")


def test_a_misspelt_hook_is_refused_not_ignored(monkeypatch):
    """`agreement` for `agreements` no longer switches the cross-checks off silently: loading fails."""
    import sys

    fake = _fake(missing="agreements", agreement=lambda scn, results: [])
    monkeypatch.setitem(sys.modules, "fake_system", fake)
    monkeypatch.setitem(SYSTEMS, "fake", "fake_system")
    with pytest.raises(InternalError, match="'agreements'"):
        get_system("fake")


def test_a_hook_that_is_not_callable_is_refused():
    with pytest.raises(InternalError, match="'plot_delays' is not callable"):
        check_system(_fake(plot_delays=3.0), "fake")


@pytest.mark.parametrize("name,hook,args", [
    ("tsq", "ns3_trace", (None, 1000)), ("af", "ns3_trace", (None, 1000)), ("tfrc", "ns3_trace", (None, 1000)),
    ("tfrc", "render_models", (None, "out")),
])
def test_a_missing_capability_is_a_typed_error_naming_the_system(name, hook, args):
    with pytest.raises(ScenarioError, match=rf"the {name} system has no"):
        getattr(get_system(name), hook)(*args)


def test_the_commands_never_probe_a_system():
    """No hasattr, no getattr on a system and no branch on a system's name in the commands."""
    files = ["qosbound/cli.py", "qosbound/admit.py", "qosbound/scenario.py"] + sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "qosbound" / "commands").glob("*.py") if p.name != "diff.py")
    for rel in files:
        text = (ROOT / rel).read_text(encoding="utf-8")
        assert "hasattr(" not in text, rel
        assert not re.search(r"getattr\(system", text), rel
        assert not re.search(r"""(scn\.system|name) == ["'](af|tsq|tfrc|pq_txq)["']""", text), rel


def test_every_package_is_listed_for_the_wheel():
    """A package (a system split into af/, tsq/; the sweep) ships only if pyproject lists it: a missing entry
    would leave the installed wheel without it."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "qosbound").rglob("__init__.py")}
    assert {"qosbound.systems.af", "qosbound.sweep"} <= found
    assert found <= listed, found - listed
