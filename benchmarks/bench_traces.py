"""Benchmark of the trace layer: qosbound's simulator against ns-3 and a plain-Python loop; pcap import.

Measured side by side in one run, on the matched scenario that ns-3 can
express (2 Mbit/s link, transmission queue of 6 one-packet units = ns-3 device
queue of 5 packets + 1 on the wire, EF 400 kbit/s Poisson of 128 B, saturated
BE of 1024 B, priority queue of 10 packets):

1. ns-3 (3.44 wheel, in its subprocess): packets per second of
   ``Simulator::Run`` alone (startup excluded) and of the whole call;
2. qosbound's numba simulator on one thread (``run_replications``);
3. the plain-Python event loop of the same semantics
   (``pq_txq_reference.reference_departures``) on a smaller run;
4. pcap import: an ingress/egress pair of ``--pcap-packets`` packets each
   (Ethernet/IPv4/UDP, 92-byte frames), matched by :func:`import_pair`.

"Packets" are every packet handled by the device: for ns-3 every EF and BE
packet sent (BE is offered at 1.2x the link rate, so part of it is dropped at
its queue); for qosbound every EF arrival and BE departure. Timings take the
best of a few repeats; the machine may be shared, so the figures are noisy.
Run: ``python benchmarks/bench_traces.py [--quick]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

RAW = dict(name="ns3-match", system="pq_txq", link=dict(rate="2 Mbps"), txq=dict(units=6, unit_size="1024 B"),
           traffic=dict(EF=dict(rate="400 kbps", size="128 B", arrivals="poisson"), BE=dict(size="1024 B")))


def matched_params():
    from qosbound.scenario import build
    from qosbound.systems.pq_txq import params

    return params(build(RAW))


def best_of(fn, repeats):
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def bench_ns3(p, duration):
    from qosbound.validation import ns3_runner

    t0 = time.perf_counter()
    table, info = ns3_runner.run_pq(ns3_runner.pq_config_from_params(p, duration=duration, seed=1))
    wall = time.perf_counter() - t0
    n = info["packets_total"]
    return n, info["run_seconds"], wall


def bench_qosbound(p, ef_packets, repeats):
    from qosbound.validation import pq_txq_sim as sim

    sim.run_replications(p, 1000, 1, seed=1, n_threads=1)  # compile
    t, r = best_of(lambda: sim.run_replications(p, ef_packets, 1, seed=1, n_threads=1), repeats)
    return float(r.stats[:, sim.S_PACKETS].sum()), t


def bench_python(p, ef_packets, seed=1):
    from qosbound.validation.pq_txq_reference import reference_departures

    rng = np.random.default_rng(seed)
    arr = np.cumsum(rng.exponential(1 / p.lam, ef_packets))
    be_n = int(arr[-1] * p.C / (8 * float(np.dot(p.be_sizes, p.be_probs)))) + 10
    be = rng.choice(p.be_sizes, size=be_n, p=p.be_probs)
    t0 = time.perf_counter()
    ef_dep, ef_drop, be_dep = reference_departures(p, arr, be)
    t = time.perf_counter() - t0
    return float(ef_packets + np.isfinite(be_dep).sum()), t


def write_pair(folder: Path, n: int, seed: int = 1):
    """An ingress/egress pcap pair of n Ethernet/IPv4/UDP frames, built with NumPy (fast for millions)."""
    from qosbound.validation.pcap_write import udp_frame

    rng = np.random.default_rng(seed)
    template = np.frombuffer(udp_frame(payload=bytes(50)), dtype=np.uint8)
    L = len(template)
    t_in = np.cumsum(rng.exponential(1e-4, n))
    t_out = t_in + rng.uniform(1e-4, 5e-3, n)
    paths = []
    for name, ts, order in (("in", t_in, np.arange(n)), ("out", t_out, np.argsort(t_out, kind="stable"))):
        rec = np.zeros((n, 16 + L), dtype=np.uint8)
        rec[:, 16:] = template
        i = order
        ticks = np.round(ts[i] * 1e6).astype(np.int64) + 1_700_000_000 * 1_000_000
        hdr = np.zeros((n, 4), dtype="<u4")
        hdr[:, 0], hdr[:, 1] = ticks // 1_000_000, ticks % 1_000_000
        hdr[:, 2] = hdr[:, 3] = L
        rec[:, :16] = hdr.view(np.uint8).reshape(n, 16)
        ipid = (i & 0xFFFF).astype(np.uint16)
        rec[:, 16 + 14 + 4] = ipid >> 8
        rec[:, 16 + 14 + 5] = ipid & 0xFF
        seq = i.astype(">u4").view(np.uint8).reshape(n, 4)
        rec[:, 16 + 14 + 28:16 + 14 + 32] = seq  # payload: sequence number
        rec[:, 16 + 15] = np.where(i % 4 == 0, 46 << 2, 0)  # DSCP: a quarter EF
        path = folder / f"{name}.pcap"
        with open(path, "wb") as f:
            f.write(np.array([0xA1B2C3D4], "<u4").tobytes() + np.array([2, 4], "<u2").tobytes()
                    + np.array([0, 0, 65535, 1], "<u4").tobytes())
            f.write(rec.tobytes())
        paths.append(path)
    return paths


def bench_pcap(n, repeats):
    from qosbound.validation.pcap import import_pair

    with tempfile.TemporaryDirectory() as tmp:
        a, b = write_pair(Path(tmp), n)
        import_pair(a, b)  # compile / warm the file cache
        t, (table, rep) = best_of(lambda: import_pair(a, b), repeats)
        assert rep.matched == n, rep.to_json()
    return n, t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller runs")
    ap.add_argument("--pcap-packets", type=int, default=None)
    args = ap.parse_args(argv)
    q = args.quick
    p = matched_params()
    ns3_duration = 20.0 if q else 60.0
    ef_packets = 2_000_000 if q else 10_000_000
    py_packets = 20_000 if q else 100_000
    pcap_n = args.pcap_packets or (200_000 if q else 1_000_000)
    repeats = 2 if q else 3

    n3, run3, wall3 = bench_ns3(p, ns3_duration)
    nq, tq = bench_qosbound(p, ef_packets, repeats)
    npy, tpy = bench_python(p, py_packets)
    npc, tpc = bench_pcap(pcap_n, repeats)

    r_ns3 = n3 / run3
    r_q = nq / tq
    r_py = npy / tpy
    print("matched PQ + TxQ scenario: 2 Mbit/s, Q_t = 6 one-packet units (ns-3: 5 + 1 on the wire), "
          "EF 400 kbit/s Poisson 128 B, BE 1024 B saturated")
    print(f"  ns-3 3.44 Simulator::Run   {n3:>12,.0f} packets in {run3:8.3f} s  = {r_ns3:12,.0f} packets/s "
          f"(whole call incl. ~10 s startup: {n3 / wall3:,.0f} packets/s)")
    print(f"  qosbound numba, 1 thread   {nq:>12,.0f} packets in {tq:8.3f} s  = {r_q:12,.0f} packets/s")
    print(f"  plain-Python event loop    {npy:>12,.0f} packets in {tpy:8.3f} s  = {r_py:12,.0f} packets/s")
    print(f"  ratio qosbound / ns-3          {r_q / r_ns3:10.1f}x   (target >= 100x)")
    print(f"  ratio qosbound / plain Python  {r_q / r_py:10.1f}x   (target >= 20x)")
    print(f"pcap import (ingress + egress pair, {npc:,} packets each, matched): {tpc:.3f} s = "
          f"{npc / tpc:,.0f} packets/s   (target >= 1e6)")


if __name__ == "__main__":
    main()
