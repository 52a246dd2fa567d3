"""The issue's scale target: 1,000 router configurations imported and verified by the closed forms in <= 30 s.

``python benchmarks/bench_configs.py --files 1000`` writes 1,000 generated configurations
(:mod:`gen_configs`: IOS XE branches and WAN edges, IOS XR PEs, Junos PEs, tc gateways, OpenConfig leaves) and an
SLO file with one SLO on every class name they use (``X.delay.max <= 1 s`` on a priority class, ``X.rate >= 1
kbit/s`` on a weighted one), then times the command a CI job runs, end to end in a fresh interpreter::

    qosbound verify --configs DIR --slos slos.yaml --methods closed-form --junit out.xml --quiet

(import, one scenario per port, the closed forms, the SLO verdicts, the JUnit report of one testcase per SLO per
port). It prints the wall time, its share of the 30 s budget, the CPU time (user + system, the command and the
child it evaluates in: what the run costs on an idle core; the machine's load average is printed beside it),
the ports and testcases, and the verdicts' counts
(the timing does not depend on them: a failing SLO costs what a holding one does). The SLO file is built from an
untimed import of the same files (to know which class is a priority class). ``--out DIR`` keeps the files.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import _common  # noqa: E402,F401 - single-thread BLAS
from _result import emit, figure  # noqa: E402
from gen_configs import generate  # noqa: E402

from qosbound.configs import import_configs  # noqa: E402


def slo_file(paths, out: Path) -> Path:
    """One SLO per class name of the imported ports: the delay bound of a priority class, the DRR rate of a
    weighted one."""
    kinds: dict[str, str] = {}
    for p in import_configs(paths).ports:
        for c in p.scenario["classes"]:
            kinds.setdefault(c["name"], "priority" if "priority" in c else "weighted")
    lines = ["slos:"]
    for name, kind in sorted(kinds.items()):
        lines.append(f"  - {{metric: {json.dumps(name + '.delay.max')}, max: 1 s}}" if kind == "priority"
                     else f"  - {{metric: {json.dumps(name + '.rate')}, min: 1 kbit/s}}")
    f = out / "slos.yaml"
    f.write_text("\n".join(lines) + "\n")
    return f


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--out", help="keep the generated files here")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(args.out or tmp)
        cfg = base / "configs"
        cfg.mkdir(parents=True, exist_ok=True)
        paths = generate(args.files, cfg, args.seed)
        slos = slo_file(paths, base)
        junit = base / "out.xml"
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        cmd = [sys.executable, "-m", "qosbound", "verify", "--configs", str(cfg), "--slos", str(slos), "--methods",
               "closed-form", "--junit", str(junit), "--quiet", "--json"]
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        dt = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        if proc.returncode not in (0, 1, 2):
            sys.exit(f"verify failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
        root = ET.parse(junit).getroot()
        cases = sum(1 for _ in root.iter("testcase"))
        failures = sum(1 for _ in root.iter("failure"))
        doc = json.loads(proc.stdout)
        n = doc["counts"]
        load = os.getloadavg()[0]
        print(f"{len(paths)} configurations, {n['scenarios']} ports: import + verify by the closed forms in "
              f"{dt:.1f} s wall ({dt / 30:.0%} of the 30 s budget), {cpu:.1f} s CPU (the command and its child), "
              f"{n['scenarios'] / dt:.0f} ports/s, load average {load:.1f}; "
              f"{cases} testcases, {failures} failing; ports: {n['pass']} pass, {n['slo_violated']} violate an SLO, "
              f"{n['not_evaluated']} not evaluated; exit {proc.returncode}")
        emit(figure("wall", f"{len(paths):,} files, end to end", dt, "s"),
             figure("cpu", "CPU", cpu, "s"),
             figure("ports_rate", "ports", n["scenarios"] / dt, "ports/s"),
             figure("testcases", "JUnit testcases", cases, "testcases"))


if __name__ == "__main__":
    main()
