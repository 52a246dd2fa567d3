"""The one parameter-path dialect (qosbound.parameter_path) of admit, sweep and tune: a mapping's key, a list's
element by its index or by its name (dots in a name as written or quoted), and one error naming the path and the
first segment that does not resolve (exit 2 from every command)."""

from __future__ import annotations

import pytest

from qosbound.cli import main
from qosbound.errors import ScenarioError
from qosbound.parameter_path import get_path, path_parts, resolve_path, set_path
from qosbound.scenario import load
from tests.helpers import ROOT

WAN = ROOT / "examples" / "network_wan.yaml"
BRANCH = ROOT / "examples" / "port_branch10m.yaml"
FERRARI = ROOT / "examples" / "ferrari2001.yaml"

RAW = {"system": "x", "link": {"rate": "2 Mbit/s"},
       "classes": [{"name": "voice", "police": {"cir": "2 Mbit/s"}},
                   {"name": "VOICE.RTP", "police": {"cir": "1 Mbit/s"}},
                   {"name": "7", "police": {"cir": "7 kbit/s"}}],
       "traffic": {"BE": {"sizes": [{"size": "64 B"}, {"size": "1500 B"}]}}}


def test_a_mapping_key_and_a_list_index_address_a_value():
    assert get_path(RAW, "link.rate") == "2 Mbit/s"
    assert get_path(RAW, "traffic.BE.sizes.1.size") == "1500 B"
    assert get_path(RAW, "classes.0.police.cir") == "2 Mbit/s"


def test_a_list_element_is_addressed_by_its_name():
    assert get_path(RAW, "classes.voice.police.cir") == "2 Mbit/s"
    assert resolve_path(RAW, "classes.voice.police.cir") == ["classes", "voice", "police", "cir"]


def test_a_name_with_dots_is_found_as_written_or_quoted():
    assert get_path(RAW, "classes.VOICE.RTP.police.cir") == "1 Mbit/s"
    assert get_path(RAW, 'classes."VOICE.RTP".police.cir') == "1 Mbit/s"
    assert path_parts("classes.'VOICE.RTP'.police") == ["classes", "VOICE.RTP", "police"]


def test_an_index_is_read_only_when_no_element_is_so_named():
    """'2' is the third element (no class is named '2'); '7' is the class named 7, not an index out of range."""
    assert get_path(RAW, "classes.2.police.cir") == "7 kbit/s"
    assert get_path(RAW, "classes.7.police.cir") == "7 kbit/s"


def test_set_path_returns_a_copy_with_the_value_replaced():
    new = set_path(RAW, "classes.voice.police.cir", "3 Mbit/s")
    assert get_path(new, "classes.voice.police.cir") == "3 Mbit/s"
    assert get_path(RAW, "classes.voice.police.cir") == "2 Mbit/s"
    new = set_path(RAW, "traffic.BE.sizes.0", {"size": "100 B"})
    assert get_path(new, "traffic.BE.sizes.0.size") == "100 B" and new["classes"] == RAW["classes"]


@pytest.mark.parametrize("path,segment,where", [
    ("link.rat", "rat", "'link'"),
    ("nosuch.rate", "nosuch", "the scenario's top level"),
    ("classes.nosuch.police.cir", "nosuch", "'classes'"),
    ("traffic.BE.sizes.5.size", "5", "'traffic.BE.sizes'"),
    ("link.rate.value", "value", "'link.rate'"),
])
def test_a_path_that_does_not_resolve_names_its_first_unresolved_segment(path, segment, where):
    with pytest.raises(ScenarioError) as e:
        get_path(RAW, path)
    assert e.value.problem == f"the scenario has no parameter '{path}': no '{segment}' in {where}"
    assert e.value.field == path and e.value.exit_code == 2


@pytest.mark.parametrize("path", ["classes..voice", "classes.\"voice", "classes.'voice'x.cir"])
def test_a_malformed_path_is_refused(path):
    with pytest.raises(ScenarioError, match="segment"):
        path_parts(path)


def test_the_shipped_examples_are_addressed_by_name():
    """The documented paths: a network's flow and a port's class by name."""
    assert get_path(load(str(WAN)).raw, "flows.voip-ab.traffic.calls") == 30
    assert get_path(load(str(BRANCH)).raw, "classes.voice.police.cir") == "2 Mbit/s"


@pytest.mark.parametrize("argv,prefix", [
    (["admit", str(FERRARI), "--vary", "traffic.EF.rat", "--method", "closed-form", "--quiet"],
     f"qosbound: {FERRARI}: field 'traffic.EF.rat': "),
    (["sweep", str(FERRARI), "--vary", "traffic.EF.rat=1..2:2", "--no-cache", "--quiet"], "qosbound: --vary: "),
    (["tune", str(FERRARI), "--vary", "traffic.EF.rat=1..2:2", "--maximise", "traffic.EF.rat", "--quiet"],
     "qosbound: --vary: "),
])
def test_every_command_refuses_an_unknown_parameter_alike(argv, prefix, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == prefix + "the scenario has no parameter 'traffic.EF.rat': no 'rat' in 'traffic.EF'\n"
