"""TCP dumbbell: qosbound's packet simulator beside ns-3 on the same network, and their agreement, in one run.

Prints, measured side by side on one core:

1. packets per wall-clock second of :func:`qosbound.validation.dumbbell.simulate` (NewReno + SACK,
   delayed ACKs, RED bottleneck) on the matched 4-flow dumbbell, best of ``--repeat`` after a
   warm-up run that compiles the kernels; "packets" are the packets that entered the two bottleneck
   queues (data at R1, ACKs at R2), counted the same way in both engines; then the same figure with
   one class queue per direction (the class scheduler's path), which must give the same goodputs;
2. the same figure for ns-3 (``Simulator::Run`` only, ns-3's import excluded), on ``--replications``
   runs with the same seeds and start times, and the ratio (target >= 50x), by wall-clock time and by the CPU
   time of the simulating thread (on a shared machine the CPU ratio is the one the load does not bend: a loaded
   machine slows the longer ns-3 runs more than qosbound's short ones);
3. the agreement table of :func:`qosbound.validation.ns3_tcp.compare` on those replications
   (replication means, standard errors, relative difference, tolerance, Welch's p-value), the flows
   ns-3 left stalled, and the same statistics for the RFC ssthresh rule (qosbound's default).

    python benchmarks/bench_tcp.py [--duration 30] [--replications 4] [--repeat 3]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of  # noqa: E402,F401  (sets single-threaded BLAS before NumPy loads)
from _result import emit, figure  # noqa: E402

import argparse  # noqa: E402
import dataclasses  # noqa: E402

import numpy as np  # noqa: E402

from qosbound.validation import ns3_runner, ns3_tcp  # noqa: E402
from qosbound.validation.dumbbell import Class, Dumbbell, Queue, simulate  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--replications", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    net = Dumbbell(n=4, access=(0.005, 0.01, 0.02, 0.04), rwnd=64, duration=a.duration, warmup=5.0,
                   fwd=Queue.red(5, 15, 0.1, spacing="count", uncounted=2), ssthresh_rule="ns3")
    print(f"dumbbell: 4 flows, RTT {', '.join(f'{1e3 * x:.0f}' for x in net.base_rtt())} ms, 10 Mbit/s, "
          f"RED 5/15/0.1 (w 0.002), {a.duration:g} s runs ({net.warmup:g} s warm-up)")
    simulate(dataclasses.replace(net, duration=2.0, warmup=1.0), 1)  # compile
    runs = [simulate(net, a.seed) for _ in range(a.repeat)]
    r = runs[-1]
    best = max(x.packets / x.wall for x in runs)
    best_cpu = max(x.packets / x.cpu for x in runs)
    print(f"qosbound simulator: {r.packets} packets, {r.events} heap events per run; best of {a.repeat}: "
          f"{best:,.0f} packets/s ({best_cpu:,.0f} per CPU second)")
    # the class scheduler (one class per direction, departure events) against the FIFO on the same network;
    # a class queue's dropper sees what a FIFO's sees with uncounted=1, so both run with that
    fifo1 = dataclasses.replace(net, fwd=dataclasses.replace(net.fwd, uncounted=1))
    cls = dataclasses.replace(fifo1, fwd_classes=(Class("all", fifo1.fwd),), rev_classes=(Class("acks", net.rev),))
    simulate(dataclasses.replace(cls, duration=2.0, warmup=1.0), 1)
    rates = {}
    for name, n in (("FIFO", fifo1), ("classes", cls)):
        runs = [simulate(n, a.seed) for _ in range(a.repeat)]
        rates[name] = (max(x.packets / x.wall for x in runs), runs[-1])
    same = bool(np.array_equal(rates["FIFO"][1].flows.goodput, rates["classes"][1].flows.goodput))
    print(f"with uncounted=1: FIFO {rates['FIFO'][0]:,.0f} packets/s, one class per direction (scheduler with "
          f"departure events) {rates['classes'][0]:,.0f} packets/s ({rates['classes'][0] / rates['FIFO'][0]:.2f} of "
          f"the FIFO's), best of {a.repeat}; same goodput per flow: {same}")
    figures = [figure("rate", "qosbound, best", best, "packets/s"),
               figure("rate_cpu", "qosbound", best_cpu, "packets per CPU s")]
    if not ns3_runner.available():
        print("ns-3: not installed (the ns3 wheel); no comparison")
        emit(*figures)
        return
    agreements, q, n = ns3_tcp.compare(net, a.replications, a.seed)
    ns_rate = np.array([x.packets / x.wall for x in n])
    ns_cpu = np.array([x.packets / x.cpu for x in n])
    q_rate = np.array([x.packets / x.wall for x in q[1:]] or [best])
    q_cpu = np.array([x.packets / x.cpu for x in q[1:]] or [best_cpu])
    print(f"ns-3 3.44: {int(np.mean([x.packets for x in n]))} packets per run; {ns_rate.mean():,.0f} packets/s "
          f"({ns_cpu.mean():,.0f} per CPU second; mean of {len(n)} runs, Simulator::Run only)")
    print(f"ratio qosbound / ns-3: {best / ns_rate.mean():.0f}x (best run), {q_rate.mean() / ns_rate.mean():.0f}x "
          f"(mean of the comparison runs) by wall-clock time; {best_cpu / ns_cpu.mean():.0f}x and "
          f"{q_cpu.mean() / ns_cpu.mean():.0f}x by CPU time (target >= 50x)")
    figures += [figure("ns3_rate", "ns-3", ns_rate.mean(), "packets/s"),
                figure("ns3_rate_cpu", "ns-3", ns_cpu.mean(), "packets per CPU s"),
                figure("ratio", "qosbound / ns-3, comparison runs", q_rate.mean() / ns_rate.mean(), "x"),
                figure("ratio_cpu", "qosbound / ns-3 by CPU time", q_cpu.mean() / ns_cpu.mean(), "x")]
    print(f"\nagreement over {a.replications} replications (qosbound with ns-3's ssthresh rule):")
    for ag in agreements:
        print("  " + ag.line())
    print(f"  flows stalled at cwnd 1 (one segment per RTO): ns-3 "
          f"{sum(ns3_tcp.stalled(x.goodput, x.cwnd_mean) for x in n)}, qosbound "
          f"{sum(ns3_tcp.stalled(x.flows.goodput, x.flows.cwnd_mean) for x in q)} (of {4 * len(n)})")
    rfc = dataclasses.replace(net, ssthresh_rule="rfc")
    seeds = [int(s) for s in np.random.SeedSequence(a.seed).generate_state(a.replications)]
    qr = [simulate(rfc, s) for s in seeds]
    print(f"qosbound with its default (RFC) ssthresh rule: loss rate {np.mean([x.loss_rate for x in qr]):.4f}, "
          f"mean cwnd {np.mean([x.flows.cwnd_mean.mean() for x in qr]):.2f} segments, goodput "
          f"{np.mean([x.goodput for x in qr]) / 1e6:.3f} Mbit/s")
    emit(*figures)


if __name__ == "__main__":
    main()
