"""`qosbound sweep` of model-checked points on 1 vs 2 Dask workers, and the cached rerun, side by side.

The sweep: examples/ferrari2001.yaml, the EF rate from 50 kbit/s in steps of 50 kbit/s (12 points by
default), model-checked on Storm. Two timings per worker count, each on a fresh cache:

* cold: the whole `run` as the command does it -- start a local cluster, import the engines in each worker,
  compute every point;
* warm: the points alone, on a cluster already started whose workers have each evaluated one point outside
  the sweep (imports and compiled closed forms in place) -- the speed-up a long sweep approaches.

"cached rerun" repeats the sweep against the filled cache. The tables of every run are compared: they must
be identical. The machine's load average is printed: on a shared machine the ratio measures what was free.
Run: python benchmarks/bench_sweep.py [--points N]
"""

from __future__ import annotations

import argparse
import logging
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


def _sweep(points: int):
    from qosbound.scenario import load
    from qosbound.sweep import prepare

    return prepare(load(EXAMPLE), [f"traffic.EF.rate=50kbit/s..{50 * points}kbit/s:{points}"], ["model-checked"])


def cold(points: int, cache_dir: str, workers: int):
    from qosbound.sweep import Cache, run, table_rows

    sw = _sweep(points)
    t0 = time.perf_counter()
    run(sw, cache=Cache(cache_dir), workers=workers, dask=True, show_progress=False)
    return time.perf_counter() - t0, sw, table_rows(sw)


def warm(points: int, cache_dir: str, workers: int):
    from distributed import Client, LocalCluster

    from qosbound.sweep import Cache, run, table_rows
    from qosbound.sweep.execute import evaluate_point

    sw = _sweep(points)
    outside = _sweep(1).raws[0]  # 50 kbit/s .. 50 kbit/s: one point; its key is in no cache used here
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=0, silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        client.run(evaluate_point, outside, str(EXAMPLE), ["model-checked"])  # on every worker
        t0 = time.perf_counter()
        run(sw, cache=Cache(cache_dir), client=client, show_progress=False)
        return time.perf_counter() - t0, sw, table_rows(sw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=12)
    n = ap.parse_args().points
    print(f"sweep of {n} model-checked points: {EXAMPLE.relative_to(ROOT)}, traffic.EF.rate = 50 .. {50 * n} "
          f"kbit/s; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start")
    with tempfile.TemporaryDirectory() as d:
        c1, s1, r1 = cold(n, os.path.join(d, "c1"), 1)
        c2, s2, r2 = cold(n, os.path.join(d, "c2"), 2)
        w1, _, r3 = warm(n, os.path.join(d, "w1"), 1)
        w2, _, r4 = warm(n, os.path.join(d, "w2"), 2)
        tc, sc, r5 = cold(n, os.path.join(d, "c2"), 2)
    assert s1.computed == s2.computed == n and sc.from_cache == n and sc.computed == 0
    same = r1 == r2 == r3 == r4 == r5
    print(f"  {'':<6} {'1 Dask worker':>14} {'2 Dask workers':>15} {'speed-up':>9}")
    print(f"  {'cold':<6} {c1:>12.2f} s {c2:>13.2f} s {c1 / c2:>9.2f}")
    print(f"  {'warm':<6} {w1:>12.2f} s {w2:>13.2f} s {w1 / w2:>9.2f}")
    print(f"  cached rerun (every point from the cache, no cluster started): {tc:.3f} s")
    print(f"  load average at the end: {os.getloadavg()[0]:.1f}; tables identical across the five runs: "
          f"{'yes' if same else 'NO'}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
