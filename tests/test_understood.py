"""The inputs as understood (qosbound.understood): every report starts with them, in text, JSON and JUnit.

A unit misread used to pass silently (`3 mbit/s` as 0.003 bit/s, every SLO holding); the reports now state
the link rate, each stream's or class's rate and share of the link and the sizes before any result, so a
reader sees the scenario as the methods see it.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from qosbound.cli import main
from qosbound.scenario import build, load, load_raw
from qosbound.systems import SYSTEMS, get_system
from qosbound.understood import Echo, Input, Inputs
from tests.helpers import EXAMPLES, example, one_line

# every shipped scenario (a file naming its system; traffic files beside router configurations are not scenarios)
SHIPPED = sorted(p for p in EXAMPLES.glob("**/*.yaml") if "system" in (load_raw(p) or {}))
IDS = [str(p.relative_to(EXAMPLES).with_suffix("")) for p in SHIPPED]


def _write(tmp_path: Path, raw: dict, name: str = "s.yaml") -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(raw, sort_keys=False))
    return str(p)


def _link(scn) -> float | None:
    """The rate every share is a share of: the link, or a TFRC testbed's bottleneck."""
    if getattr(scn, "link", None) is not None:
        return scn.link.rate
    net = getattr(scn, "network", None)
    return net.capacity if net is not None else None


@pytest.mark.parametrize("path", SHIPPED, ids=IDS)
def test_every_shipped_example_reports_its_inputs_in_text_json_and_junit(path, tmp_path, capsys):
    """plan (text), verify --json and verify --junit each carry the inputs as understood, in SI in the machine
    forms, and the text report starts with them (an example with no SLO to verify: plan --json, and no JUnit)."""
    scn = load(path)
    inputs = get_system(scn.system).understood_inputs(scn)
    assert inputs.items
    link = _link(scn)
    # text: the first block of plan's report
    main(["plan", str(path), "--methods", "closed-form", "--quiet"])
    out = capsys.readouterr().out
    assert out.startswith("inputs as understood\n"), out[:300]
    for item in inputs.items:
        assert f"  {item.name}" in out and item.echo() in out
    # JSON: an `inputs` object, SI values
    junit = tmp_path / "out.xml"
    if scn.slos:
        main(["verify", str(path), "--methods", "closed-form", "--quiet", "--json", "--junit", str(junit)])
    else:  # verify refuses a scenario without SLOs (exit 2); its inputs still reach plan's JSON
        assert main(["plan", str(path), "--methods", "closed-form", "--quiet", "--json"]) in (0, 1)
    doc = json.loads(capsys.readouterr().out)
    assert doc["inputs"] == inputs.to_json()
    rates = {k: v for k, v in doc["inputs"].items() if v["unit"] == "bit/s"}
    assert rates, "a report names at least one rate"
    if link is not None:
        key = "link.rate" if "link.rate" in doc["inputs"] else "network.capacity"
        assert doc["inputs"][key]["value"] == link
        for v in rates.values():
            if "share_of_link" in v:
                assert v["share_of_link"] == pytest.approx(v["value"] / link, rel=1e-12)
    # JUnit: properties input.<name> on the SLO suite
    if not scn.slos:
        return
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert set(props) == {f"input.{i.name}" for i in inputs.items}
    for name, value in inputs.properties():
        assert props[name] == value


def test_every_system_implements_the_hook_with_the_shared_type():
    for name in SYSTEMS:
        system = get_system(name)
        scn = load(next(p for p in SHIPPED if load_raw(p).get("system") == name))  # traffic files have none
        assert isinstance(system.understood_inputs(scn), Inputs)


# ---- what the echo says -------------------------------------------------------------------------------------

def test_a_converted_unit_is_echoed_with_what_was_written(tmp_path, capsys):
    """`10 MB/s` is 80 Mbit/s, and the report says it was written in bytes per second; `3 mbit/s` is echoed as
    3 Mbit/s (mega), a bare link rate as what it was read as."""
    raw = load_raw(example("ferrari2001"))
    raw["link"]["rate"] = 2000000
    raw["traffic"]["EF"]["rate"] = "0.1 MB/s"
    raw["txq"]["unit_size"] = "4096 bit"
    main(["plan", _write(tmp_path, raw), "--methods", "closed-form", "--quiet", "--json"])
    doc = json.loads(capsys.readouterr().out)["inputs"]
    assert doc["traffic.EF.rate"] == {"value": 8e5, "unit": "bit/s", "share_of_link": 0.4, "written": "0.1 MB/s",
                                      "note": "Poisson arrivals",
                                      "echo": "800 kbit/s (40 % of the link; written 0.1 MB/s; Poisson arrivals)"}
    assert doc["link.rate"]["written"] == "2000000, a bare number read in bit/s"
    assert doc["txq.unit_size"]["value"] == 512.0 and doc["txq.unit_size"]["written"] == "4096 bit"
    main(["plan", _write(tmp_path, raw), "--methods", "closed-form", "--quiet"])
    out = capsys.readouterr().out
    assert "traffic.EF.rate          800 kbit/s (40 % of the link; written 0.1 MB/s; Poisson arrivals)" in out
    raw["traffic"]["EF"]["rate"] = "300 kbit/s"
    raw["link"]["rate"] = "3 mbit/s"
    main(["plan", _write(tmp_path, raw), "--methods", "closed-form", "--quiet"])
    out = capsys.readouterr().out
    assert "link.rate                3 Mbit/s\n" in out and "(10 % of the link" in out


def test_the_issue_port_written_as_engineers_write_it(tmp_path, capsys):
    """A 1 Gbit/s port in IEEE and tc spellings reads as 1 Gbit/s and 50 Mbit/s (5 % of the link)."""
    raw = load_raw(example("agg1g"))
    raw["link"]["rate"] = "1 Gb/s"
    raw["traffic"]["EF"]["rate"] = "50 mbit/s"
    main(["plan", _write(tmp_path, raw), "--methods", "closed-form", "--quiet", "--json"])
    doc = json.loads(capsys.readouterr().out)["inputs"]
    assert doc["link.rate"]["value"] == 1e9 and doc["traffic.EF.rate"]["value"] == 5e7
    assert doc["traffic.EF.rate"]["share_of_link"] == 0.05 and "written" not in doc["traffic.EF.rate"]
    raw["traffic"]["EF"]["rate"] = "10 MB/s"
    main(["plan", _write(tmp_path, raw), "--methods", "closed-form", "--quiet"])
    assert "80 Mbit/s (8 % of the link; written 10 MB/s; Poisson arrivals)" in capsys.readouterr().out


def test_a_default_is_marked_as_one(tmp_path):
    raw = load_raw(example("ferrari2001"))
    raw["txq"].pop("unit_size", None)
    inputs = get_system("pq_txq").understood_inputs(build(raw))
    item = next(i for i in inputs.items if i.name == "txq.unit_size")
    assert item.value == 512.0 and item.note == "default" and item.echo() == "512 B (default)"


def test_the_echo_of_one_input():
    i = Input("traffic.EF.rate", 8e7, "rate", written="10 MB/s", share=0.08, note="Poisson arrivals")
    assert i.echo() == "80 Mbit/s (8 % of the link; written 10 MB/s; Poisson arrivals)"
    assert i.to_json() == {"value": 8e7, "unit": "bit/s", "share_of_link": 0.08, "written": "10 MB/s",
                           "note": "Poisson arrivals", "echo": i.echo()}
    assert Inputs((i,)).properties() == [("input.traffic.EF.rate", "80000000 bit/s = 80 Mbit/s (8 % of the link; "
                                                                    "written 10 MB/s; Poisson arrivals)")]
    assert Input("pq.capacity", 10, "count", noun="EF packets").echo() == "10 EF packets"
    assert Input("utilisation", 0.15, "probability", percent=True).echo() == "15 %"


def test_the_echo_builder_takes_the_written_value_from_the_file():
    class Scn:
        raw = {"link": {"rate": "125 kB/s"}, "flows": [{"rtt": "0.5 min"}, {"rtt": 0.03}]}

    got = (Echo(Scn(), 1e6).quantity("link.rate", 1e6, "rate").quantity("flows.0.rtt", 30.0, "time")
           .quantity("flows.1.rtt", 0.03, "time").quantity("x.total", 2e6, "rate", share=True, path=None).done())
    assert [i.written for i in got.items] == ["125 kB/s", "0.5 min", "0.03, a bare number read in s", None]
    assert got.items[3].share == 2.0


# ---- the limits and ranges that must carry a unit -----------------------------------------------------------

def test_a_bare_slo_limit_on_a_delay_is_an_error_naming_the_field(tmp_path, capsys):
    """`{metric: EF.delay.p99, max: 20}` was 20 s without a word; now exit 2, the field and the forms named."""
    raw = load_raw(example("ferrari2001"))
    raw["slos"] = [{"metric": "EF.delay.p99", "max": 20}]
    path = _write(tmp_path, raw)
    assert main(["verify", path, "--quiet"]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"{path}: field 'slos[0].max': '20' has no unit: write a time with its unit, e.g. '20 ms'" in line
    assert "expected a time: a number with s, ms, us (µs), ns or min" in line


@pytest.mark.parametrize("limit", [1e-4, "1e-4", "0.01 %"])
def test_a_bare_probability_limit_stays_valid(tmp_path, capsys, limit):
    raw = load_raw(example("ferrari2001"))
    raw["slos"] = [{"metric": "EF.loss", "max": limit}]
    assert main(["plan", _write(tmp_path, raw), "--methods", "closed-form", "--quiet", "--json"]) in (0, 1)
    doc = json.loads(capsys.readouterr().out)
    assert doc["slo_verdicts"][0]["limit"] == pytest.approx(1e-4, rel=1e-12)


def test_a_bare_sweep_range_of_a_rate_is_an_error_naming_the_flag(capsys, tmp_path):
    """`--vary traffic.EF.rate=1..5:3` swept 1-5 bit/s; now exit 2 naming --vary and the forms."""
    code = main(["sweep", str(example("ferrari2001")), "--vary", "traffic.EF.rate=1..5:3", "--out",
                 str(tmp_path / "o"), "--no-cache", "--quiet"])
    line = one_line(capsys.readouterr().err)
    assert code == 2 and line.startswith("qosbound: --vary: traffic.EF.rate: '1' has no unit: write a rate")
    assert "Mbit/s" in line and "MB/s" in line


def test_a_bare_scenario_rate_is_still_a_rate_when_varied(tmp_path, capsys):
    """The kind of a varied parameter comes from the schema: `rate: 300000` in the file is a rate, so the grid
    needs units and is not an integer count."""
    raw = load_raw(example("ferrari2001"))
    raw["traffic"]["EF"]["rate"] = 300000
    path = _write(tmp_path, raw)
    assert main(["sweep", path, "--vary", "traffic.EF.rate=100..200:3", "--out", str(tmp_path / "o"),
                 "--no-cache", "--quiet"]) == 2
    assert "has no unit" in capsys.readouterr().err
    code = main(["sweep", path, "--vary", "traffic.EF.rate=100kbit/s..200kbit/s:3", "--methods", "closed-form",
                 "--out", str(tmp_path / "o"), "--no-cache", "--quiet", "--no-plots"])
    out = capsys.readouterr().out
    assert code in (0, 1) and "traffic.EF.rate (rate): 100 kbit/s, 150 kbit/s, 200 kbit/s" in out
