"""Storm on the PQ + TxQ model: build + solve time and model size as the instance grows.

Prints one table (states, transitions, seconds to build, seconds to solve and derive the delay
distribution) for growing Q_t, PQ capacity and number of BE size classes, up to more than 1e6 states,
and the example instance against its target (<= 1 s). Run: python benchmarks/bench_storm.py [--quick]
"""

from __future__ import annotations

import argparse
import time

from qosbound.models.pq_txq import delay_distribution, render
from qosbound.scenario import build
from qosbound.systems.pq_txq import ModelOptions, params

SIZES = {1: [(1536, 1.0)], 2: [(512, 0.6), (1536, 0.4)], 3: [(512, 0.5), (1024, 0.3), (1536, 0.2)],
         4: [(512, 0.4), (1024, 0.3), (1280, 0.2), (1536, 0.1)]}


def instance(QT, PQ, K):
    raw = {"name": f"qt{QT}-pq{PQ}-k{K}", "system": "pq_txq", "link": {"rate": "2 Mbps"},
           "txq": {"units": QT, "unit_size": "512 B"}, "pq": {"capacity": PQ},
           "traffic": {"EF": {"rate": "300 kbit/s", "size": "128 B", "arrivals": "poisson"},
                       "BE": {"saturated": True, "sizes": [{"size": f"{s} B", "p": p} for s, p in SIZES[K]]}}}
    return params(build(raw))


def run(QT, PQ, K):
    p = instance(QT, PQ, K)
    t0 = time.perf_counter()
    r = render(p, ModelOptions())
    t1 = time.perf_counter()
    dd, built = delay_distribution(r)
    mean = dd.mean()
    p99 = dd.quantile(0.99)
    t2 = time.perf_counter()
    return built.states, built.transitions, t1 - t0, built.seconds, t2 - t1, mean, p99


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rows = [(5, 10, 3), (2, 10, 3), (3, 10, 3), (4, 10, 3), (6, 10, 3), (5, 20, 3), (5, 40, 3),
            (5, 10, 1), (5, 10, 2), (5, 10, 4), (7, 10, 3), (8, 10, 3)]
    if not args.quick:
        rows += [(8, 40, 3), (9, 40, 4)]
    print("PQ + TxQ model on Storm (Poisson EF 300 kbit/s of 128 B at 2 Mbit/s, 512 B units)")
    print(f"{'Q_t':>4} {'PQ':>4} {'BE':>3} {'states':>10} {'transitions':>12} {'render s':>9} {'Storm s':>9} "
          f"{'total s':>9} {'mean ms':>9} {'p99 ms':>8}")
    for QT, PQ, K in rows:
        states, trans, tr, ts, tt, mean, p99 = run(QT, PQ, K)
        tag = "  <- example (target <= 1 s)" if (QT, PQ, K) == (5, 10, 3) else ""
        print(f"{QT:>4} {PQ:>4} {K:>3} {states:>10} {trans:>12} {tr:>9.3f} {ts:>9.3f} {tt:>9.3f} "
              f"{mean * 1e3:>9.4f} {p99 * 1e3:>8.3f}{tag}", flush=True)
    print("'Storm s' = parse + build + stationary distribution; 'total s' adds the delay distribution, mean "
          "and p99 in Python. Times are wall clock on a shared machine.")


if __name__ == "__main__":
    main()
