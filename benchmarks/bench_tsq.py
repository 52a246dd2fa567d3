"""TSQ benchmarks: weighted-insertion cost versus queue length, and simulator speed with TSQ + PI.

Run: ``python benchmarks/bench_tsq.py [--quick]``. Prints figures and ratios measured side by side in
one run (the machine is shared, so absolute times are noisy; the ratios are the result).

1. Insertion cost: a treap holding q packets (q = 1e2 .. 1e6) is churned: each operation inserts a packet
   with a random weight, asks for the bytes ahead of it (q') and removes the head, so q stays fixed.
   The cost per operation is fitted by least squares to a + b log2(q) and to a + b q; Claypool, Kinicki & Kumar section
   3.2 asks for O(log q).
2. Simulator: Claypool, Kinicki & Kumar's audio setting (15 Mbit/s, 99 TFRC bulk flows + 1 audio flow, PI) and a 10x
   larger one (150 Mbit/s, 990 + 10 flows), packets per wall-clock second with TSQ and with PI alone.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _churn_kernel():
    import numba

    from qosbound.validation.tsq_sim import treap_kernels

    new, ins, pop, bb = treap_kernels()

    @numba.njit
    def fill(q, seed):
        np.random.seed(seed)
        kw, ks, pr, lc, rc, nb, sb, pay, free, st = new(q + 2)
        path = np.zeros(512, dtype=np.int64)
        for i in range(q):
            ins(kw, ks, pr, lc, rc, nb, sb, pay, free, st, np.random.random(), i, 1000, i, path)
        return kw, ks, pr, lc, rc, nb, sb, pay, free, st, path

    @numba.njit
    def churn(kw, ks, pr, lc, rc, nb, sb, pay, free, st, path, m, start):
        acc = 0
        for j in range(m):
            w = np.random.random()
            acc += bb(kw, ks, lc, rc, nb, sb, st, w, start + j)
            ins(kw, ks, pr, lc, rc, nb, sb, pay, free, st, w, start + j, 1000, start + j, path)
            pid, b = pop(kw, ks, lc, rc, nb, sb, pay, free, st)
            acc += b
        return acc

    @numba.njit
    def fill_tsq(q, seed):
        # a queue as TSQ builds it: packet j arrived at time j (one packet time apart), drain time q
        np.random.seed(seed)
        kw, ks, pr, lc, rc, nb, sb, pay, free, st = new(q + 2)
        path = np.zeros(512, dtype=np.int64)
        for i in range(q):
            w = i + np.random.randint(1, 17) * q / 16.0
            ins(kw, ks, pr, lc, rc, nb, sb, pay, free, st, w, i, 1000, i, path)
        return kw, ks, pr, lc, rc, nb, sb, pay, free, st, path

    @numba.njit
    def churn_tsq(kw, ks, pr, lc, rc, nb, sb, pay, free, st, path, m, start):
        # arrivals at one per packet time, weight t_a + d t_d / 16 with a random hint d, head served
        q = st[2]
        acc = 0
        for j in range(m):
            w = (start + j) + np.random.randint(1, 17) * q / 16.0
            acc += bb(kw, ks, lc, rc, nb, sb, st, w, start + j)
            ins(kw, ks, pr, lc, rc, nb, sb, pay, free, st, w, start + j, 1000, start + j, path)
            pid, b = pop(kw, ks, lc, rc, nb, sb, pay, free, st)
            acc += b
        return acc

    @numba.njit
    def mean_depth(lc, rc, st):
        # iterative DFS: the mean number of nodes on the root-to-node path = node visits of one descent
        stack = np.empty((st[2] + 1, 2), dtype=np.int64)
        top = 0
        total = 0
        if st[0] != 0:
            stack[0, 0] = st[0]
            stack[0, 1] = 1
            top = 1
        while top > 0:
            top -= 1
            x, d = stack[top, 0], stack[top, 1]
            total += d
            if lc[x] != 0:
                stack[top, 0] = lc[x]
                stack[top, 1] = d + 1
                top += 1
            if rc[x] != 0:
                stack[top, 0] = rc[x]
                stack[top, 1] = d + 1
                top += 1
        return total / st[2]

    return fill, churn, mean_depth, fill_tsq, churn_tsq


def insertion_cost(qs, m, workload="uniform"):
    fill, churn, mean_depth, fill_tsq, churn_tsq = _churn_kernel()
    if workload == "tsq":
        fill, churn = fill_tsq, churn_tsq
    t = fill(100, 0)
    churn(*t, 1000, 10**9)  # compile
    out, depth = [], []
    for q in qs:
        t = fill(int(q), 1)
        depth.append(mean_depth(t[3], t[4], t[9]))
        best = np.inf
        for rep in range(3):
            t0 = time.perf_counter()
            churn(*t, m, (int(q) if workload == "tsq" else 10**9) + rep * m)
            best = min(best, time.perf_counter() - t0)
        out.append(best / m * 1e9)
    return np.asarray(out), np.asarray(depth)


def _fit(x, y):
    A = np.vstack([np.ones_like(x), x]).T
    coef, res, *_ = np.linalg.lstsq(A, y, rcond=None)
    pred = A @ coef
    r2 = 1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2)
    return coef, r2


def sim_speed(scale: int, duration: float):
    from qosbound.validation.pi_aqm import seed_params
    from qosbound.validation.tsq_sim import Flow, SimConfig, simulate

    bulk = tuple(Flow(f"b{i}", "tfrc", 50e6, 1000, 16, 0.3) for i in range(99 * scale))
    audio = tuple(Flow(f"a{i}", "tfrc", 128e3, 1000, 6, 0.3) for i in range(scale))
    res = {}
    for tsq in (True, False):
        cfg = SimConfig(15e6 * scale, bulk + audio, duration, seed_params(), tsq=tsq)
        simulate(SimConfig(15e6, bulk[:5] + audio[:1], 0.5, seed_params(), tsq=tsq), seed=0)  # compile
        t0 = time.perf_counter()
        out = simulate(cfg, seed=1)
        dt = time.perf_counter() - t0
        res[tsq] = (len(out.arrival), dt, len(out.arrival) / dt)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    qs = np.array([1e2, 1e3, 1e4, 1e5, 1e6])
    m = 50_000 if args.quick else 300_000
    cost, depth = insertion_cost(qs, m)
    print("1. TSQ weighted insertion (treap): ns per operation (bytes-ahead query + insert + pop head)")
    for q, c in zip(qs, cost):
        print(f"   q = {q:>9.0f}   {c:8.1f} ns")
    (a, b), r2_log = _fit(np.log2(qs), cost)
    (_, bl), r2_lin = _fit(qs, cost)
    print(f"   fit a + b log2(q): a = {a:.1f} ns, b = {b:.1f} ns per doubling, R^2 = {r2_log:.4f}")
    print(f"   fit a + b q:       R^2 = {r2_lin:.4f}")
    print(f"   cost(1e6)/cost(1e2) = {cost[-1] / cost[0]:.2f}  (log2 ratio {np.log2(1e6) / np.log2(1e2):.2f}, "
          f"linear ratio 1e4)")
    (a3, b3), r2_small = _fit(np.log2(qs[:3]), cost[:3])
    print(f"   fit a + b log2(q) on q <= 1e4 (tree in cache): b = {b3:.1f} ns per doubling, R^2 = {r2_small:.4f}")
    print("   mean node depth (node visits per descent): " + ", ".join(f"{d:.1f}" for d in depth))
    (ad, bd), r2_depth = _fit(np.log2(qs), depth)
    print(f"   fit depth = a + b log2(q): a = {ad:.2f}, b = {bd:.3f} (treap theory 2 ln 2 = 1.386), R^2 = {r2_depth:.5f}")
    print(f"   time per node visit: {cost[0] / depth[0]:.1f} ns at q = 1e2, {cost[-1] / depth[-1]:.1f} ns at q = 1e6 "
          "(memory latency: the tree outgrows the caches)")
    cost_t, depth_t = insertion_cost(qs, m, "tsq")
    print("\n   TSQ workload (arrival j at time j, weight j + d q/16, d uniform in 1..16, head served):")
    print("   " + ", ".join(f"q={q:.0e}: {c:.1f} ns" for q, c in zip(qs, cost_t)))
    (a2, b2), r2_t = _fit(np.log2(qs), cost_t)
    (_, _), r2_tl = _fit(qs, cost_t)
    print(f"   fit a + b log2(q): a = {a2:.1f} ns, b = {b2:.1f} ns per doubling, R^2 = {r2_t:.4f}; fit a + b q: "
          f"R^2 = {r2_tl:.4f}; cost(1e6)/cost(1e2) = {cost_t[-1] / cost_t[0]:.2f}")
    print("   mean node depth: " + ", ".join(f"{d:.1f}" for d in depth_t))
    print("\n2. Simulator speed, packets per wall-clock second (TFRC senders, PI AQM)")
    dur = 30.0 if args.quick else 100.0
    for scale in (1, 10):
        r = sim_speed(scale, dur / scale)
        n1, t1, s1 = r[True]
        n0, t0, s0 = r[False]
        print(f"   {15 * scale:>4d} Mbit/s, {100 * scale:>4d} flows: TSQ + PI {s1:,.0f} pkt/s ({n1} packets, "
              f"{t1:.2f} s); PI alone {s0:,.0f} pkt/s; TSQ/PI time ratio {t1 / n1 / (t0 / n0):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
