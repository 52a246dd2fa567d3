"""TSQ simulator speed with TCP bulk senders beside TFRC ones (Claypool, Kinicki & Kumar's audio setting).

Run: ``python benchmarks/bench_tsq_tcp.py [--quick]``. The section 4.2 setting (15 Mbit/s, 99 bulk flows + one
128 kbit/s TCP-friendly audio flow at hint 6, PI, 100 s of simulated time) is run with the bulk flows as TCP
(NewReno + SACK, delayed ACKs, validation/tcp.py) and as TFRC; it prints packets through the router per
wall-clock second and wall-clock seconds per simulated 100 s, side by side in one run (the machine is shared:
the ratio is the result). Compilation is excluded (one short run first).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def run(kind: str, duration: float, reps: int) -> dict:
    from qosbound.validation.pi_aqm import seed_params
    from qosbound.validation.tsq_sim import Flow, SimConfig, simulate

    bulk = tuple(Flow(f"b{i}", kind, 50e6, 1000, 16, 0.3) for i in range(99))
    flows = bulk + (Flow("audio", "tfrc", 128e3, 1000, 6, 0.3),)
    simulate(SimConfig(15e6, flows, 1.0, seed_params()), seed=1)  # compile
    walls, packets = [], []
    for r in range(reps):
        t0 = time.perf_counter()
        out = simulate(SimConfig(15e6, flows, duration, seed_params()), seed=10 + r)
        walls.append(time.perf_counter() - t0)
        packets.append(len(out.arrival))
    w = float(np.median(walls))
    return {"kind": kind, "wall_s": w, "packets": float(np.median(packets)), "pps": float(np.median(packets)) / w}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args(argv)
    duration, reps = (20.0, 2) if a.quick else (100.0, 5)
    rows = [run(k, duration, reps) for k in ("tcp", "tfrc")]
    print(f"TSQ + PI, 15 Mbit/s, 99 bulk + 1 audio flow, {duration:g} s simulated, median of {reps} runs")
    for r in rows:
        print(f"  bulk {r['kind']:<5} {r['packets']:10.0f} packets  {r['wall_s']:6.3f} s wall  {r['pps']:10.3g} packets/s")
    print(f"  TCP / TFRC speed: {rows[0]['pps'] / rows[1]['pps']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
