"""The QSTP test bed (``qosbound.validation.qstp_sim`` on the dumbbell): simulated seconds and packets per wall-clock second.

One 60-s run of Jourjon, Lochin & Sénac's (2008) test bed with 20 TCP flows (NewReno + SACK, delayed ACKs) against a
studied TCP, TFRC or gTFRC flow, and one 180-s run of the CBQ set-up of Fig. 7, best of ``--repeat``; every run is
the numba dumbbell's event loop (``qosbound.validation.dumbbell``), a run's set-up and read-out in Python included:

    python benchmarks/bench_qstp.py [--repeat 3] [--flows 20]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of  # noqa: E402  (sets single-threaded BLAS before NumPy loads)

import argparse  # noqa: E402

import numpy as np  # noqa: E402

from qosbound.validation.qstp_sim import QstpConfig, simulate  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--flows", type=int, default=20)
    a = ap.parse_args()
    simulate(QstpConfig(protocol="tcp", n_tcp=2, duration=3.0, warmup=1.0), np.random.default_rng(0))  # compile
    cases = [(p, QstpConfig(protocol=p, n_tcp=a.flows, duration=60.0, warmup=15.0)) for p in ("tcp", "tfrc", "gtfrc")]
    cases.append(("fig7 cbq+udp, tcp", QstpConfig(protocol="tcp", n_tcp=0, scheduler="cbq", duration=180.0,
                                                  warmup=10.0, udp=((0.0, 300e3), (60.0, 1000e3), (120.0, 300e3)))))
    for name, cfg in cases:
        out = {}
        dt = best_of(a.repeat, lambda: out.__setitem__("r", simulate(cfg, np.random.default_rng(2), trace=False)))
        r = out["r"]
        pkts = (r.throughput + r.aggregate) * cfg.duration / (8 * cfg.size)  # about the packets carried
        print(f"{name:>18}: {cfg.duration / dt:7.1f} simulated s per wall-clock s ({dt:.3f} s for {cfg.duration:.0f} s, "
              f"about {pkts / dt:,.0f} bottleneck packets/s; studied flow {r.throughput / 1e3:.0f} kbit/s)")


if __name__ == "__main__":
    main()
