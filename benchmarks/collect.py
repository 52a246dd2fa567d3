"""Run the paper's benchmarks in their quick forms and write their headline figures to one JSON file.

``python benchmarks/collect.py [--out paper/data/benchmarks.json] [--only NAME ...]`` runs each command of
:data:`BENCHMARKS` from the repository's root, one after the other, in a fresh interpreter, and records per
benchmark: the exact command, its headline figures (numbers with units, from the ``RESULT {...}`` line the script
prints last -- ``benchmarks/_result.py`` -- or, for ``bench_network.py``, parsed from its printed lines), its
wall-clock and CPU seconds (the CPU time of the command and every child it waited for), and the load average
(1, 5, 15 min) just before and just after it; and for the whole run the machine (CPU model, cores), the Python and
qosbound versions, the commit and the date. ``make -C paper`` (full mode) runs it; the paper's performance table and
the numbers its text quotes are built from the file alone (``paper/generate.py``, ``bench_table``).

The quick forms are smaller than the runs ``docs/benchmarks.md`` records (fewer points, packets, files,
replications): the ratios measured side by side in one run (vectorised / per-point, qosbound / ns-3, 2 threads / 1)
are the figures to compare, and absolute rates depend on the machine's load, which the file records beside them.
A benchmark that exits non-zero or prints no figures stops the collection (nothing is written).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import resource
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "paper" / "data" / "benchmarks.json"
sys.path.insert(0, str(ROOT / "benchmarks"))
from _result import PREFIX, figure  # noqa: E402

#: The version of this file's layout (``paper/generate.py`` refuses another).
SCHEMA = 1


@dataclass(frozen=True)
class Benchmark:
    """One command of the collection: its name (letters and underscores: it names the paper's macros), what it
    measures, the script and its arguments (the quick form), and the target ``docs/benchmarks.md`` states."""

    name: str
    title: str
    script: str
    args: tuple[str, ...]
    target: str

    @property
    def command(self) -> str:
        return shlex.join(["python", f"benchmarks/{self.script}", *self.args])


BENCHMARKS = (
    Benchmark("closed_forms", "closed forms against per-point SymPy", "bench_closed_forms.py",
              ("--n", "1e6", "--sympy-points", "50"), ">= 1e7 points/s, >= 1000x"),
    Benchmark("tfrc", "TFRC equation", "bench_tfrc.py", ("--n", "1000000", "--sympy-points", "50"),
              ">= 1e7 points/s, >= 1000x, inverse <= 1 s"),
    Benchmark("storm", "Storm on the PQ + TxQ chain", "bench_storm.py", ("--quick",), "example <= 1 s"),
    # the full form: its --quick is a smoke test (one timing of each, no repeats to take the best of)
    Benchmark("simulator", "EF simulator (PQ + TxQ)", "bench_simulator.py", (),
              ">= 2e7 packets/s, >= 1.8x on 2 threads"),
    Benchmark("ring", "ring-count chain and ring bound", "bench_ring.py", ("--quick",), "-"),
    Benchmark("tcp", "TCP dumbbell against ns-3", "bench_tcp.py", ("--replications", "3", "--repeat", "2"),
              ">= 50x ns-3"),
    Benchmark("network", "network bounds and chained simulator", "bench_network.py", ("--quick",),
              "1,000 ports <= 10 s; >= 1e7 packet-hops/s"),
    Benchmark("configs", "configurations imported and verified (CI gate)", "bench_configs.py", ("--files", "200"),
              "1,000 files <= 30 s"),
)

_NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)"
#: bench_network.py prints no RESULT line: its figures are read from these lines of its text.
NETWORK_LINES = (
    (rf"^bounds: {_NUM} ports, {_NUM} flows", (("ports", "bounds: ports", "ports"), ("flows", "flows", "flows"))),
    (rf"^\s*load \+ build {_NUM} s CPU .*; TFA \+ SFA(?: \+ FIFO-LP)? {_NUM} s CPU .*total {_NUM} s CPU",
     (("load_cpu", "load + build", "CPU s"), ("bounds_cpu", "bounds", "CPU s"), ("total_cpu", "in all", "CPU s"))),
    (rf"^simulator: WAN example {_NUM} packet-hops: {_NUM} packet-hops per CPU second",
     (("wan_hops", "WAN example", "packet-hops"), ("wan_rate", "WAN example", "packet-hops per CPU s"))),
    (rf"^simulator: mesh of {_NUM} ports, .*: {_NUM} per CPU second",
     (("mesh_ports", "mesh", "ports"), ("mesh_rate", "mesh", "packet-hops per CPU s"))),
)


class CollectError(Exception):
    """A benchmark failed or printed no figures: the collection stops."""


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def figures_from_result(name: str, stdout: str) -> list[dict]:
    """The figures of the last ``RESULT {...}`` line of a benchmark's output."""
    lines = [ln for ln in stdout.splitlines() if ln.startswith(PREFIX)]
    if not lines:
        raise CollectError(f"benchmark {name}: no '{PREFIX.strip()}' line in its output")
    try:
        doc = json.loads(lines[-1][len(PREFIX):])
        return [figure(f["name"], f["label"], f["value"], f["unit"]) for f in doc["figures"]]
    except (ValueError, KeyError, TypeError) as e:
        raise CollectError(f"benchmark {name}: its RESULT line is malformed: {e}") from None


def figures_from_network(stdout: str) -> list[dict]:
    """The figures of ``bench_network.py``'s text: every line of :data:`NETWORK_LINES` must be there."""
    out = []
    for pattern, names in NETWORK_LINES:
        m = re.search(pattern, stdout, re.M)
        if not m:
            raise CollectError(f"benchmark network: no line matching {pattern!r} in its output")
        out += [figure(n, label, _number(v), unit) for (n, label, unit), v in zip(names, m.groups())]
    hidden = {"ports", "flows", "wan_hops", "mesh_ports", "load_cpu"}  # the sizes go into the labels
    size = {f["name"]: f["value"] for f in out}
    labels = {"total_cpu": f"{size['ports']:,.0f} ports, {size['flows']:,.0f} flows loaded and bounded",
              "bounds_cpu": "of which the bounds",
              "wan_rate": "simulator, WAN example",
              "mesh_rate": f"simulator, mesh of {size['mesh_ports']:.0f} ports"}
    for f in out:
        f["label"] = labels.get(f["name"], f["label"])
    out.sort(key=lambda f: f["name"] != "total_cpu")  # the total first
    return [f for f in out if f["name"] not in hidden]


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_one(b: Benchmark, timeout: float) -> dict:
    """Run one benchmark from the repository's root; its record (command, figures, times, load)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    argv = [sys.executable, str(ROOT / "benchmarks" / b.script), *b.args]
    load_before = _load()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=str(ROOT), env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CollectError(f"benchmark {b.name}: still running after {timeout:.0f} s ({b.command})") from None
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_after = _load()
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise CollectError(f"benchmark {b.name}: {b.command} exited {proc.returncode}: {tail}")
    figs = figures_from_network(proc.stdout) if b.name == "network" else figures_from_result(b.name, proc.stdout)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {"name": b.name, "title": b.title, "command": b.command, "target": b.target, "figures": figs,
            "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load_before": load_before, "load_after": load_after}


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=str(ROOT),
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def machine() -> dict:
    """The CPU model (``/proc/cpuinfo``), the cores the OS reports and the platform."""
    cpu = platform.processor() or platform.machine()
    try:
        m = re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M)
        cpu = m.group(1).strip() if m else cpu
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count() or 0, "platform": platform.platform()}


def commit() -> str:
    """The commit, with ``+local changes`` where tracked files differ from it (this file's output aside)."""
    c = _git("rev-parse", "--short=12", "HEAD") or "unknown"
    dirty = _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!paper/build",
                 ":!paper/data/benchmarks.json")
    return c + ("+local changes" if dirty else "")


def collect(selected: list[Benchmark], timeout: float, log=print) -> dict:
    """Run the benchmarks and return the document :func:`main` writes."""
    sys.path.insert(0, str(ROOT))
    import qosbound  # the checkout's, as the benchmarks import it

    started = _dt.datetime.now(_dt.timezone.utc)
    t0 = time.monotonic()
    doc = {"schema": SCHEMA, "started": started.isoformat(timespec="seconds"), "commit": commit(),
           "machine": machine(), "versions": {"python": platform.python_version(),
                                              "qosbound": qosbound.__version__},
           "benchmarks": []}
    for b in selected:
        log(f"{b.command}", flush=True)
        rec = run_one(b, timeout)
        log(f"  {rec['wall_s']:.1f} s wall, {rec['cpu_s']:.1f} s CPU, load {rec['load_before'][0]} -> "
            f"{rec['load_after'][0]}: " + "; ".join(f"{f['label']} {f['value']:.4g} {f['unit']}"
                                                    for f in rec["figures"]), flush=True)
        doc["benchmarks"].append(rec)
    doc["seconds"] = round(time.monotonic() - t0, 1)
    return doc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="the JSON file (default paper/data/benchmarks.json)")
    ap.add_argument("--only", nargs="+", choices=[b.name for b in BENCHMARKS], help="run only these")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds one benchmark may take (default 3600)")
    a = ap.parse_args(argv)
    selected = [b for b in BENCHMARKS if not a.only or b.name in a.only]
    try:
        doc = collect(selected, a.timeout)
    except CollectError as e:
        print(f"collect.py: {e}", file=sys.stderr)
        return 2
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"{out}: {len(doc['benchmarks'])} benchmarks in {doc['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
