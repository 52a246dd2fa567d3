"""Storm on the PQ + TxQ model: build + solve time and model size as the instance grows.

Prints two tables. The first (states, the predicted bound, transitions, seconds to build, seconds to solve and
derive the delay distribution) for growing Q_t, PQ capacity and number of BE size classes, up to more than 1e6
states, and the example instance against its target (<= 1 s). The second gives, for Q_t = 5 ... 256 and 1 ... 4
BE sizes, the state bound that ``plan`` compares with ``methods.model-checked.max_states`` before building
anything, and the time that takes. Run: python benchmarks/bench_storm.py [--quick]
"""

from __future__ import annotations

import argparse
import time

try:
    from benchmarks._result import emit, figure
except ImportError:  # run as a script from benchmarks/
    from _result import emit, figure

from qosbound.models.pq_txq import delay_distribution, render
from qosbound.models.pq_txq_size import predicted_states
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
    bound, _ = predicted_states(p, ModelOptions())
    return built.states, bound, built.transitions, t1 - t0, built.seconds, t2 - t1, mean, p99


def size_table(budget: float = 1e6):
    """The bound for rings far beyond what can be built, with the time the prediction takes."""
    print()
    print(f"State bound before building (budget {budget:.0e} states, methods.model-checked.max_states)")
    print(f"{'Q_t':>4} " + " ".join(f"{f'{k} BE size' + ('s' if k > 1 else ''):>14}" for k in SIZES) +
          f" {'predict ms':>11}")
    for QT in (5, 8, 16, 32, 64, 128, 256):
        cells, t0 = [], time.perf_counter()
        for K in SIZES:
            bound, _ = predicted_states(instance(QT, 64, K), ModelOptions())
            cells.append(f"{float(bound):>12.3g}{' *' if bound > budget else '  '}")
        ms = (time.perf_counter() - t0) * 1e3 / len(SIZES)
        print(f"{QT:>4} " + " ".join(cells) + f" {ms:>11.2f}")
    print("PQ of 64 packets. * = above the budget: plan skips the exact chain (or refuses it when asked for by "
          "--methods) and answers by the closed forms and the simulator.")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rows = [(5, 10, 3), (2, 10, 3), (3, 10, 3), (4, 10, 3), (6, 10, 3), (5, 20, 3), (5, 40, 3),
            (5, 10, 1), (5, 10, 2), (5, 10, 4), (7, 10, 3), (8, 10, 3)]
    if not args.quick:
        rows += [(8, 40, 3), (9, 40, 4)]
    print("PQ + TxQ model on Storm (Poisson EF 300 kbit/s of 128 B at 2 Mbit/s, 512 B units)")
    print(f"{'Q_t':>4} {'PQ':>4} {'BE':>3} {'states':>10} {'bound':>10} {'transitions':>12} {'render s':>9} {'Storm s':>9} "
          f"{'total s':>9} {'mean ms':>9} {'p99 ms':>8}")
    measured = {}
    for QT, PQ, K in rows:
        states, bound, trans, tr, ts, tt, mean, p99 = run(QT, PQ, K)
        measured[QT, PQ, K] = (states, trans, tt)
        tag = "  <- example (target <= 1 s)" if (QT, PQ, K) == (5, 10, 3) else ""
        print(f"{QT:>4} {PQ:>4} {K:>3} {states:>10} {bound:>10} {trans:>12} {tr:>9.3f} {ts:>9.3f} {tt:>9.3f} "
              f"{mean * 1e3:>9.4f} {p99 * 1e3:>8.3f}{tag}", flush=True)
    print("'bound' = the state bound known before building; 'Storm s' = parse + build + stationary distribution; "
          "'total s' adds the delay distribution, mean and p99 in Python. Times are wall clock on a shared machine.")
    size_table()
    ex = measured[5, 10, 3]
    big = max(measured.values())
    emit(figure("example_states", "example: states", ex[0], "states"),
         figure("example_transitions", "example: transitions", ex[1], "transitions"),
         figure("example_seconds", "example: Storm and delay distribution", ex[2], "s"),
         figure("largest_states", "largest: states", big[0], "states"),
         figure("largest_seconds", "largest: Storm and delay distribution", big[2], "s"))


if __name__ == "__main__":
    main()
