"""Junos statements from curly-brace and set forms (qosbound.configs.junos_tree): the same statements, lists,
comments, inactive parts and malformed text."""

from __future__ import annotations

import pytest

from qosbound.configs.junos_tree import JunosSyntaxError, parse_curly, parse_set
from tests.configs_helpers import CONFIG_EXAMPLES


PE = CONFIG_EXAMPLES / "pe-junos.conf"


def test_curly_and_set_forms_are_the_same_statements():
    curly = parse_curly(PE.read_text())
    sets = parse_set((CONFIG_EXAMPLES / "pe-junos.set").read_text())
    assert [s.path for s in curly] == [s.path for s in sets]
    assert all(s.line > 0 for s in curly)


def test_lists_comments_and_inactive_parts():
    st = parse_curly("/* c */\nclass-of-service {\n  # c\n  classifiers { dscp X { forwarding-class ef {\n"
                     "    loss-priority low code-points [ ef cs5 ]; } } }\n"
                     "  inactive: schedulers { s { priority low; } }\n}\n")
    assert [s.path[-1] for s in st if not s.inactive] == ["ef", "cs5"]
    assert [s.line for s in st] == [5, 5, 6] and st[-1].inactive


@pytest.mark.parametrize("text", ["class-of-service {\n schedulers {\n", "a { b; }\n}\n", "a { b }\n",
                                  "a [ b c ;\n"])
def test_malformed_curly_text_is_refused_with_its_line(text):
    with pytest.raises(JunosSyntaxError):
        parse_curly(text)
