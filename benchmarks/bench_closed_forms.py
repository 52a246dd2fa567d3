"""Closed forms: lambdified NumPy evaluation versus per-point SymPy, measured side by side in one run.

Prints points per second of Ferrari's eq. (7) and of Cobham's EF wait (two
classes, best effort saturated) on arrays of ``--n`` points (default 1e7) on
one core, against ``expr.subs(...).evalf()`` per point on ``--sympy-points``
points (extrapolated), and the ratio. Targets: >= 1e7 points/s, >= 1000x.

    python benchmarks/bench_closed_forms.py [--n 10000000] [--sympy-points 200] [--repeat 3]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of  # noqa: E402  (sets single-threaded BLAS before NumPy loads)
from _result import emit, figure  # noqa: E402

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from qosbound.analytic import ferrari, priority  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e7, help="points per array (default 1e7)")
    ap.add_argument("--sympy-points", type=int, default=200, help="points evaluated one by one with SymPy")
    ap.add_argument("--repeat", type=int, default=3, help="repetitions; the best time is kept")
    a = ap.parse_args(argv)
    n = int(a.n)
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        pinned = "pinned to one core"
    except (AttributeError, OSError):
        pinned = "not pinned (one NumPy thread)"
    rng = np.random.default_rng(7)
    k = rng.integers(1, 4, n).astype(float)
    rho = rng.uniform(0.0, 0.9, n)
    q_t = rng.integers(1, 16, n).astype(float)
    t_u = rng.uniform(1e-5, 1e-2, n)
    s_ef = rng.uniform(1e-5, 1e-3, n)
    lam = rho / s_ef
    s_be = rng.uniform(1e-4, 1e-2, n)

    print(f"closed-form benchmark: {n:.3g} points per array, best of {a.repeat}, {pinned}")
    rows = []

    # Ferrari eq. (7): the public, validated function and the bare lambdified expression.
    raw7 = ferrari._fn("W")
    t_pub = best_of(a.repeat, lambda: ferrari.w(k, rho, q_t, t_u))
    t_raw = best_of(a.repeat, lambda: raw7(k, rho, q_t, t_u))
    syms = (ferrari.k, ferrari.rho, ferrari.Q_t, ferrari.T_u)
    m = min(a.sympy_points, n)
    t0 = time.perf_counter()
    for i in range(m):
        ferrari.W_expr.subs(dict(zip(syms, (int(k[i]), rho[i], int(q_t[i]), t_u[i])))).evalf()
    t_sym = (time.perf_counter() - t0) / m
    check = float(ferrari.W_expr.subs(dict(zip(syms, (int(k[0]), rho[0], int(q_t[0]), t_u[0])))).evalf())
    assert abs(check - ferrari.w(k[0], rho[0], q_t[0], t_u[0])) <= 1e-12 * abs(check)
    rows.append(("Ferrari eq. (7), validated", n / t_pub, 1 / t_sym))
    rows.append(("Ferrari eq. (7), bare lambdify", n / t_raw, 1 / t_sym))

    # Cobham, EF above saturated best effort (deterministic EF, exponential-like BE second moment 2*s^2).
    rawc = priority._saturated_fn(2)
    t_pub = best_of(a.repeat, lambda: priority.cobham_wait_saturated([lam], [s_ef], [s_ef ** 2], s_be, 2 * s_be ** 2))
    t_raw = best_of(a.repeat, lambda: rawc(lam, s_ef, s_be, s_ef ** 2, 2 * s_be ** 2))
    lam_s, m1_s, m2_s = priority.class_symbols(2)
    expr = priority.saturated_cobham_exprs(2)[0]
    t0 = time.perf_counter()
    for i in range(m):
        expr.subs({lam_s[0]: lam[i], m1_s[0]: s_ef[i], m1_s[1]: s_be[i], m2_s[0]: s_ef[i] ** 2,
                   m2_s[1]: 2 * s_be[i] ** 2}).evalf()
    t_sym_c = (time.perf_counter() - t0) / m
    rows.append(("Cobham EF wait (BE saturated), validated", n / t_pub, 1 / t_sym_c))
    rows.append(("Cobham EF wait (BE saturated), bare lambdify", n / t_raw, 1 / t_sym_c))

    print(f"{'formula':48s} {'NumPy points/s':>16s} {'SymPy points/s':>16s} {'ratio':>10s}  targets")
    for name, fast, slow in rows:
        ok = "ok" if fast >= 1e7 and fast / slow >= 1000 else "MISSED"
        print(f"{name:48s} {fast:16.3e} {slow:16.3e} {fast / slow:10.3g}x  >=1e7/s, >=1000x: {ok}")
    print(f"SymPy per point measured on {m} points and extrapolated; NumPy on {n:.3g}-point arrays.")
    (e7, e7_fast, e7_slow), (cob, cob_fast, cob_slow) = rows[0], rows[2]
    emit(figure("eq_seven_rate", "eq. (7), validated", e7_fast, "points/s"),
         figure("eq_seven_ratio", "eq. (7) / per-point SymPy", e7_fast / e7_slow, "x"),
         figure("cobham_rate", "Cobham, validated", cob_fast, "points/s"),
         figure("cobham_ratio", "Cobham / per-point SymPy", cob_fast / cob_slow, "x"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
