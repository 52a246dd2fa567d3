"""The line tree of a Cisco configuration (qosbound.configs.ios_tree): modes, indentation, banners, lines."""

from __future__ import annotations

from qosbound.configs.ios_tree import parse_tree
from tests.configs_helpers import CONFIG_EXAMPLES


def tree(text):
    return [(n.text, [(c.text, [g.text for g in c.children]) for c in n.children]) for n in parse_tree(text)]


def test_flat_snippets_with_prompts_follow_the_modes():
    """Without indentation (documentation snippets, with or without prompts) the modes decide the nesting."""
    t = tree("Router(config)# policy-map P\nRouter(config-pmap)# class V\nRouter(config-pmap-c)# priority 100\n"
             "police 8000 1000\nconform-action transmit\nexceed-action drop\nclass class-default\nfair-queue\n"
             "interface Gi0/1\nservice-policy output P\n")
    assert t == [("policy-map P", [("class V", ["priority 100", "police 8000 1000"]),
                                   ("class class-default", ["fair-queue"])]),
                 ("interface Gi0/1", [("service-policy output P", [])])]
    police = parse_tree("policy-map P\nclass V\npolice 8000 1000\nconform-action transmit\n")[0].children[0].children[0]
    assert [c.text for c in police.children] == ["conform-action transmit"]


def test_indented_files_keep_unknown_commands_in_their_section_and_globals_at_column_0():
    t = tree("policy-map P\n class V\n  some-new-knob 5\n  priority 10\nno ip http server\nrouter bgp 1\n neighbor x\n")
    assert t[0] == ("policy-map P", [("class V", ["some-new-knob 5", "priority 10"])])
    assert t[1] == ("no ip http server", [])
    assert t[2] == ("router bgp 1", [("neighbor x", [])])


def test_banners_comments_crlf_and_tabs_are_tolerated():
    text = ("banner motd ^C\npolicy-map EVIL\n class X\n^C\n! comment\n# comment\r\npolicy-map P\r\n"
            "\tclass V\r\n  priority 100\r\n")
    nodes = parse_tree(text.replace("\r\n", "\n"))
    assert [n.text for n in nodes] == ["policy-map P"]
    assert [(c.text, [g.text for g in c.children]) for c in nodes[0].children] == [("class V", ["priority 100"])]
    assert nodes[0].line == 7 and nodes[0].children[0].children[0].line == 9


def test_every_node_has_its_line():
    text = (CONFIG_EXAMPLES / "branch-iosxe.cfg").read_text()
    lines = text.split("\n")

    def walk(nodes):
        for n in nodes:
            assert lines[n.line - 1].strip() == n.text
            walk(n.children)
    walk(parse_tree(text))
