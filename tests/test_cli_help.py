"""Every option, positional argument and sub-command of the command line says what it is for (`--help`)."""

from __future__ import annotations

import argparse

import pytest

from qosbound.cli import build_parser


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("qosbound",)):
    """(command path, name, help) of every argument and sub-command under ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield path, name, helps.get(name)
                yield from _walk(sub, (*path, name))
        else:
            yield path, "/".join(action.option_strings) or action.dest, action.help


ENTRIES = list(_walk(build_parser()))


def test_the_walk_sees_every_command():
    commands = {" ".join(p[1:]) for p, _, _ in ENTRIES}
    assert {"plan", "verify", "admit", "sweep", "tune", "validate", "model render", "model check", "tfrc",
            "reproduce"} <= commands


@pytest.mark.parametrize("path,name,text", ENTRIES,
                         ids=[f"{' '.join(p[1:]) or 'qosbound'} {n}" for p, n, _ in ENTRIES])
def test_no_help_entry_is_empty(path, name, text):
    """`--help` printed empty entries for several options (model check --engine, reproduce --json ...)."""
    assert text and text.strip() and text != argparse.SUPPRESS, (path, name)
