"""`qosbound tune`: evaluations and time per question, against `admit` and against the grid it would replace.

Rows (examples/takeo2003.yaml, closed form):

* admit: the largest AF2 rate, one parameter (bracketing + brentq);
* tune, continuous: the same question as `--vary traffic.AF2.rate=50kbit/s..2Mbps` (5-point grid, SLSQP,
  boundary polish);
* grid alone: a sweep-style grid over the same range fine enough to land within 0.1 % of the answer, the
  number of points it would need (not run: the count is the point);
* tune, integer grid: the smallest AF2 buffer over two AF21 max_th settings, cold and rerun from the cache.

Run: python benchmarks/bench_tune.py
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_v, "1")


def main() -> None:
    from qosbound.admit import admit
    from qosbound.scenario import load
    from qosbound.sweep import Cache
    from qosbound.tune import tune

    scn = load(str(ROOT / "examples" / "takeo2003.yaml"))
    rows = []
    t0 = time.perf_counter()
    a = admit(scn, "traffic.AF2.rate", method="closed-form", lo=50e3, hi=2e6)
    rows.append(("admit traffic.AF2.rate", a.evaluations, time.perf_counter() - t0, f"{a.value / 1e3:.3f} kbit/s"))
    t0 = time.perf_counter()
    r = tune(scn, ["traffic.AF2.rate=50kbit/s..2Mbps"], maximise="traffic.AF2.rate")
    x = r.best.values[0]
    rows.append(("tune, continuous (grid + SLSQP + polish)", r.evaluations, time.perf_counter() - t0,
                 f"{x / 1e3:.3f} kbit/s"))
    n = math.ceil((2e6 - 50e3) / (1e-3 * x)) + 1
    rows.append(("grid alone to 0.1 % (not run)", n, float("nan"), ""))
    with tempfile.TemporaryDirectory() as d:
        vary = ["classes.AF2.buffer=40..64", "classes.AF2.dropper.thresholds.AF21.max_th=44,48"]
        for label in ("tune, integer grid (cold cache)", "tune, integer grid (rerun, cached)"):
            t0 = time.perf_counter()
            r = tune(scn, vary, minimise="classes.AF2.buffer", cache=Cache(d))
            rows.append((label, r.evaluations - r.from_cache, time.perf_counter() - t0,
                         f"buffer {r.best.values[0]} packets"))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'question':45s} {'evaluated':>9s} {'seconds':>8s}  answer")
    for name, evals, secs, answer in rows:
        print(f"{name:45s} {evals:9d} {'-' if math.isnan(secs) else f'{secs:.1f}':>8s}  {answer}")


if __name__ == "__main__":
    main()
