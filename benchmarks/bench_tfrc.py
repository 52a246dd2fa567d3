"""TFRC equation: lambdified NumPy evaluation versus per-point SymPy, and the inverse in p, in one run.

Prints, measured side by side on one core:

1. points per second of :func:`qosbound.analytic.tfrc.tfrc_rate` on arrays of
   ``--n`` random (s, R, p) points (target >= 1e7 points/s);
2. points per second of ``tfrc_expr.subs(...).evalf()`` on ``--sympy-points``
   points, and the ratio of the two (target >= 1000x);
3. seconds to solve :func:`max_loss_for_target` for ``--targets`` random targets
   (target <= 1 s), and the largest relative error of X_calc(p_max) against g;
4. one quick run of ``qosbound reproduce qstp2008``'s simulator: simulated seconds
   per wall-clock second for a 60 s run with 20 TCP flows.

    python benchmarks/bench_tfrc.py [--n 10000000] [--sympy-points 200] [--targets 100000] [--repeat 3]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of  # noqa: E402  (sets single-threaded BLAS before NumPy loads)
from _result import emit, figure  # noqa: E402

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from qosbound.analytic import tfrc as T  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--sympy-points", type=int, default=200)
    ap.add_argument("--targets", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-sim", action="store_true", help="skip the simulator figure")
    a = ap.parse_args()
    rng = np.random.default_rng(1)

    s = rng.uniform(40, 1500, a.n)
    R = rng.uniform(1e-3, 1.0, a.n)
    p = rng.uniform(1e-6, 1.0, a.n)
    T.tfrc_rate(s[:10], R[:10], p[:10])  # lambdify once, outside the timing
    t_vec = best_of(a.repeat, lambda: T.tfrc_rate(s, R, p))
    vec_rate = a.n / t_vec

    m = a.sympy_points
    pts = list(zip(s[:m], R[:m], p[:m]))

    def per_point():
        for si, ri, pi in pts:
            T.tfrc_expr.subs({T.s: si, T.R: ri, T.p: pi, T.b: 1, T.t_RTO: 4 * ri}).evalf()

    t_sym = best_of(1, per_point)
    sym_rate = m / t_sym
    print(f"TFRC equation, vectorised (lambdify/NumPy): {vec_rate:.3e} points/s ({a.n} points in {t_vec:.3f} s)")
    print(f"TFRC equation, per-point SymPy subs/evalf:   {sym_rate:.3e} points/s ({m} points in {t_sym:.3f} s)")
    print(f"ratio vectorised / per-point SymPy:          {vec_rate / sym_rate:.3e}x   (targets: >= 1e7 points/s, "
          f">= 1000x)")

    k = a.targets
    sk = rng.uniform(40, 1500, k)
    Rk = rng.uniform(1e-3, 1.0, k)
    pk = 10 ** rng.uniform(-6, -0.01, k)
    g = T.tfrc_rate(sk, Rk, pk)
    T.max_loss_for_target(sk[:10], Rk[:10], g[:10])
    out = {}
    t_inv = best_of(a.repeat, lambda: out.__setitem__("p", T.max_loss_for_target(sk, Rk, g)))
    err = np.max(np.abs(T.tfrc_rate(sk, Rk, out["p"]) / g - 1.0))
    print(f"inverse p_max(g) for {k} targets (SciPy Newton, vectorised): {t_inv:.3f} s, "
          f"max |X_calc(p_max)/g - 1| = {err:.2e}   (target <= 1 s)")
    figures = [figure("rate", "vectorised", vec_rate, "points/s"),
               figure("ratio", "vectorised / per-point SymPy", vec_rate / sym_rate, "x"),
               figure("inverse", f"inverse for {k:,} targets", t_inv, "s")]

    if not a.no_sim:
        from qosbound.validation.qstp_sim import QstpConfig, simulate

        cfg = QstpConfig(protocol="gtfrc", n_tcp=20, duration=60.0, warmup=15.0)
        simulate(QstpConfig(n_tcp=1, duration=2.0, warmup=0.5), np.random.default_rng(0))  # compile kernels
        t0 = time.perf_counter()
        r = simulate(cfg, np.random.default_rng(2))
        dt = time.perf_counter() - t0
        print(f"QSTP simulator, 21 flows on 1000 kbit/s: {cfg.duration / dt:.1f} simulated s per wall-clock s "
              f"({dt:.2f} s for {cfg.duration:.0f} s; gTFRC {r.throughput / 1e3:.0f} kbit/s)")
        figures.append(figure("qstp_speed", "QSTP simulator", cfg.duration / dt, "simulated s/s"))
    emit(*figures)


if __name__ == "__main__":
    main()
