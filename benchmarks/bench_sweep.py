"""`qosbound sweep` of model-checked points on 1 vs 2 Dask workers, and the cached rerun, side by side.

The sweep: examples/ferrari2001.yaml, the first BE packet size from 256 B to 1536 B (6 points, whole
granules of 256 B), model-checked on Storm. Each timing is a fresh cache; "cached rerun" repeats the 2-worker
sweep against its filled cache. Wall times include starting the local cluster and each worker's imports.
The three tables are compared: they must be identical. Run: python benchmarks/bench_sweep.py [--points N]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
EXAMPLE = ROOT / "examples" / "ferrari2001.yaml"

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_v, "1")


def sweep(points: int, cache_dir: str, workers: int):
    from qosbound.scenario import load
    from qosbound.sweep import Cache, prepare, run, table_rows

    scn = load(EXAMPLE)
    sw = prepare(scn, [f"traffic.BE.sizes.0.size=256B..{256 * points}B:{points}"], ["model-checked"])
    t0 = time.perf_counter()
    run(sw, cache=Cache(cache_dir), workers=workers, dask=True, show_progress=False)
    return time.perf_counter() - t0, sw, table_rows(sw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=6)
    n = ap.parse_args().points
    print(f"sweep of {n} model-checked points: {EXAMPLE.relative_to(ROOT)}, traffic.BE.sizes.0.size = 256 B .. "
          f"{256 * n} B; {os.cpu_count()} CPUs on this machine")
    with tempfile.TemporaryDirectory() as d:
        t1, sw1, rows1 = sweep(n, os.path.join(d, "one"), 1)
        t2, sw2, rows2 = sweep(n, os.path.join(d, "two"), 2)
        tc, swc, rowsc = sweep(n, os.path.join(d, "two"), 2)
    assert sw1.computed == sw2.computed == n and swc.from_cache == n and swc.computed == 0
    same = rows1 == rows2 == rowsc
    print(f"  {'1 Dask worker':<16} {'2 Dask workers':<16} {'speed-up':<10} {'cached rerun':<14}")
    print(f"  {t1:<16.2f} {t2:<16.2f} {t1 / t2:<10.2f} {tc:<14.3f}  (s, wall clock)")
    print(f"  tables identical across the three runs: {'yes' if same else 'NO'}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
