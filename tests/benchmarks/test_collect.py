"""benchmarks/collect.py: the paper's benchmark run -- each benchmark's command, its figures from the line it
prints, its times and the load -- as one JSON document."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _collector():
    spec = importlib.util.spec_from_file_location("bench_collect", ROOT / "benchmarks" / "collect.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


collect = _collector()


def test_the_figures_are_those_of_the_last_result_line():
    out = ("closed-form benchmark: some text\n"
           'RESULT {"figures": [{"name": "old", "label": "old", "value": 1, "unit": "s"}]}\n'
           "more text\n"
           'RESULT {"figures": [{"name": "rate", "label": "eq. (7)", "value": 1.5e8, "unit": "points/s"}]}\n')
    assert collect.figures_from_result("x", out) == [
        {"name": "rate", "label": "eq. (7)", "value": 1.5e8, "unit": "points/s"}]


@pytest.mark.parametrize("out,message", [
    ("no figures printed\n", "benchmark x: no 'RESULT' line"),
    ("RESULT {\"figures\": [{\"name\": \"a\"}]}\n", "benchmark x: its RESULT line is malformed"),
    ("RESULT {\"figures\": [{\"name\": \"a\", \"label\": \"a\", \"value\": NaN, \"unit\": \"s\"}]}\n",
     "benchmark x: its RESULT line is malformed"),
])
def test_a_benchmark_without_figures_stops_the_collection(out, message):
    with pytest.raises(collect.CollectError, match=re.escape(message)):
        collect.figures_from_result("x", out)


#: bench_network.py's lines as it prints them (its own format strings, values of one run).
NETWORK_OUT = """bounds: 100 ports, 1000 flows, 0.19 MB of YAML
  load + build 0.30 s CPU (0.52 s wall); TFA + SFA + FIFO-LP 0.13 s CPU (0.20 s wall); total 0.43 s CPU, target <= 10 s
  1000 flows bounded; the tightest: TFA for 880, SFA for 100, FIFO-LP for 20
simulator: WAN example 2,345,678 packet-hops: 7.49e+06 packet-hops per CPU second (5.1e+06 per wall second)
simulator: mesh of 64 ports, 400 flows, 123,456 packet-hops: 8.67e+05 per CPU second (4e+05 per wall second)
port kernel alone (trace mode, fed, the WAN's core port): 1.1e+07 packets per CPU second; the chained simulator runs at 0.68 of it on the WAN
"""


def test_the_network_benchmark_is_read_from_its_printed_lines():
    figs = {f["name"]: (f["label"], f["value"], f["unit"]) for f in collect.figures_from_network(NETWORK_OUT)}
    assert figs == {"total_cpu": ("100 ports, 1,000 flows loaded and bounded", 0.43, "CPU s"),
                    "bounds_cpu": ("of which the bounds", 0.13, "CPU s"),
                    "wan_rate": ("simulator, WAN example", 7.49e6, "packet-hops per CPU s"),
                    "mesh_rate": ("simulator, mesh of 64 ports", 8.67e5, "packet-hops per CPU s")}


def test_a_network_line_that_changed_stops_the_collection_naming_it():
    with pytest.raises(collect.CollectError, match="benchmark network: no line matching .*simulator: mesh"):
        collect.figures_from_network(NETWORK_OUT.replace("mesh of", "grid of"))


def test_every_benchmark_prints_its_figures_or_is_read_from_its_text():
    for b in collect.BENCHMARKS:
        source = (ROOT / "benchmarks" / b.script).read_text()
        assert re.fullmatch(r"[a-z_]+", b.name), b.name  # it names the paper's macros
        if b.name == "network":
            assert "RESULT" not in source  # read from its printed lines (NETWORK_LINES)
        else:
            assert "emit(" in source, b.script
        assert b.command.startswith(f"python benchmarks/{b.script}")


def test_a_benchmark_run_records_its_command_figures_times_and_load():
    """A real run of the cheapest benchmark, small: the record the JSON file holds."""
    b = collect.Benchmark("closed_forms", "closed forms", "bench_closed_forms.py",
                          ("--n", "2e4", "--sympy-points", "3", "--repeat", "1"), ">= 1000x")
    rec = collect.run_one(b, timeout=600)
    assert rec["command"] == "python benchmarks/bench_closed_forms.py --n 2e4 --sympy-points 3 --repeat 1"
    assert [f["name"] for f in rec["figures"]] == ["eq_seven_rate", "eq_seven_ratio", "cobham_rate", "cobham_ratio"]
    assert all(f["value"] > 0 for f in rec["figures"])
    assert {f["unit"] for f in rec["figures"]} == {"points/s", "x"}
    assert rec["wall_s"] > 0 and rec["cpu_s"] > 0  # the child's CPU time, measured
    assert len(rec["load_before"]) == len(rec["load_after"]) == 3


def test_a_benchmark_that_fails_stops_the_collection_with_its_exit_code():
    b = collect.Benchmark("gone", "a script that is not there", "bench_not_there.py", (), "")
    with pytest.raises(collect.CollectError, match=r"benchmark gone: python benchmarks/bench_not_there.py exited 2"):
        collect.run_one(b, timeout=60)


def test_the_run_records_machine_versions_and_commit(monkeypatch):
    monkeypatch.setattr(collect, "run_one", lambda b, timeout: {"name": b.name, "wall_s": 1.0, "cpu_s": 1.0,
                                                               "load_before": [1, 1, 1], "load_after": [1, 1, 1],
                                                               "figures": []})
    doc = collect.collect(list(collect.BENCHMARKS[:2]), 10, log=lambda *a, **k: None)
    assert doc["schema"] == 1 and [b["name"] for b in doc["benchmarks"]] == ["closed_forms", "tfrc"]
    assert doc["machine"]["cores"] >= 1 and doc["machine"]["cpu"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", doc["versions"]["python"]) and doc["versions"]["qosbound"]
    assert re.fullmatch(r"[0-9a-f]{12}(\+local changes)?|unknown", doc["commit"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT.*", doc["started"]) and doc["seconds"] >= 0
