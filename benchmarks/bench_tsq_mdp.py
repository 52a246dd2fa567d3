"""TSQ MDP benchmark: Storm's best-hint-policy value on the two formulations of the same MDP, and the direct solve.

Run: ``python benchmarks/bench_tsq_mdp.py [--quick]``. For buffers N and hint bits n it times Storm's
``R{"sqrt_law"}max=? [ LRA ]`` on models/tsq.prism (the hint chosen bit by bit: n + 1 steps per slot,
(N + 2)(2^(n+1) - 1) states) and on the one-action-per-hint rendering that ``no_gain`` checks
(``flat_mdp_text``: N + 1 states, 2^n actions each), and the direct SciPy solve (greedy hint per state), and
prints each value's relative distance to the direct solve. The machine is shared: compare the ratios, not the
absolute times.
"""

from __future__ import annotations

import argparse
import time


def main(argv=None) -> None:
    from qosbound.models import engine
    from qosbound.models import tsq as M

    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small buffers only")
    args = ap.parse_args(argv)
    sizes = (50, 100) if args.quick else (100, 200, 400, 800)
    prop = [("m", 'R{"sqrt_law"}max=? [ LRA ]')]
    print(f"{'N':>5} {'n':>2} {'bitwise s':>10} {'flat s':>8} {'ratio':>6} {'direct s':>9} "
          f"{'bitwise rel err':>16} {'flat rel err':>13}")
    for N in sizes:
        for bits in (3, 4):
            ab = M.Abstraction(N=N, lam=0.5096, p_lo=0.0019, p_hi=0.0019 + 0.0169 * N / 200, l=75.0, slot=1.0,
                               bits=bits, k0=N // 4)
            t0 = time.perf_counter()
            bw = engine.check(M.MDP_MODEL, prop, ab.mdp_constants()).values["m"]
            t1 = time.perf_counter()
            consts = {k: v for k, v in ab.constants().items() if k != "nbits"}
            fl = engine.check(M.flat_mdp_text(bits), prop, consts).values["m"]
            t2 = time.perf_counter()
            direct = M.best_policy_direct(ab)
            t3 = time.perf_counter()
            print(f"{N:5d} {bits:2d} {t1 - t0:10.2f} {t2 - t1:8.2f} {(t1 - t0) / (t2 - t1):6.1f} {t3 - t2:9.3f} "
                  f"{abs(bw - direct) / direct:16.2e} {abs(fl - direct) / direct:13.2e}", flush=True)


if __name__ == "__main__":
    main()
