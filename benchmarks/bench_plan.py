"""`qosbound plan` on the example, cold start (a fresh process), measured against its target (<= 5 s).

Runs the command several times in fresh processes (the first run also fills numba's cache) and prints the
wall-clock times, plus the time of each method alone. Run: python benchmarks/bench_plan.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "ferrari2001.yaml"


def timed(args):
    env = dict(os.environ)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "qosbound", *args], capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stderr)
    return dt


def main():
    print(f"qosbound plan {EXAMPLE.relative_to(ROOT)} --json, fresh processes (target <= 5 s)")
    runs = [timed(["plan", str(EXAMPLE), "--json", "--quiet"]) for _ in range(3)]
    print("  whole plan:        " + ", ".join(f"{t:.2f} s" for t in runs))
    for m in ("closed-form", "model-checked", "simulated"):
        t = min(timed(["plan", str(EXAMPLE), "--json", "--quiet", "--methods", m]) for _ in range(2))
        print(f"  {m:<18} {t:.2f} s (best of 2, includes interpreter and imports)")
    t = min(timed(["--version"]) for _ in range(2))
    print(f"  interpreter + CLI import: {t:.2f} s")


if __name__ == "__main__":
    main()
