"""Benchmark of the PQ + TxQ simulator (qosbound.validation.pq_txq_sim).

Prints, measured side by side in one run on the example scenario of Ferrari et al. (2001)
(examples/ferrari2001.yaml: 2 Mbit/s, Q_t = 5 units of 512 B, EF 300 kbit/s of
128 B, BE 512/1024/1536 B):

1. packets per second of the numba kernel on one thread (target >= 2e7);
2. the speed-up of independent replications on 2 threads over 1 thread (target >= 1.8);
3. peak memory of a 1e8-packet streamed run and of a 1e6-packet full-trace run,
   each in a fresh process (peak resident set minus the peak after imports and
   compilation, from resource.getrusage);
4. the speed ratio of the kernel over a plain-Python event loop of the same
   semantics (qosbound.validation.pq_txq_reference.reference_departures) on a small run.

"Packets" counts every packet handled: EF and BE departures plus lost EF arrivals.
Timings take the best of a few repeats; the machine may be shared, so treat the
figures as noisy. Run: ``python benchmarks/bench_simulator.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

try:
    from benchmarks._result import emit, figure
except ImportError:  # run as a script from benchmarks/
    from _result import emit, figure

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "ferrari2001.yaml"


def example_params():
    from qosbound.scenario import load
    from qosbound.systems.pq_txq import params

    return params(load(str(EXAMPLE)))


def best_of(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), float(np.median(times)), out


def _forget(sim):
    """Drop the replications ``run_replications`` keeps by their inputs, so that a repeat runs them again instead of
    returning the kept ones (without this, every repeat after the first timed a copy)."""
    sim._KEPT.clear()


def single_core(p, ef_packets, repeats):
    """Packets, best and median wall time, and the least process CPU time of one replication on one thread."""
    from qosbound.validation import pq_txq_sim as sim

    cpu = []

    def run():
        _forget(sim)
        c0 = time.process_time()
        r = sim.run_replications(p, ef_packets, 1, seed=1, n_threads=1)
        cpu.append(time.process_time() - c0)
        return r

    best, med, r = best_of(run, repeats)
    n = float(r.stats[:, sim.S_PACKETS].sum())
    return n, best, med, min(cpu)


def _control_kernel():
    """A trivially parallel numba loop: what speed-up the machine allows at all right now."""
    import numba
    from numba import njit, prange

    @njit(parallel=True)
    def spin(n, out, ids):
        for r in prange(out.shape[0]):
            s = 0.0
            for i in range(n):
                s += np.sqrt(i * 1.0 + r)
            out[r] = s
            ids[r] = numba.get_thread_id()

    spin(10, np.zeros(4), np.zeros(4, np.int64))
    return spin


def parallel(p, ef_packets, reps, repeats):
    """Wall and CPU seconds of the same replications on 1 and 2 threads, interleaved, and of a control loop."""
    from qosbound.validation import pq_txq_sim as sim

    spin = _control_kernel()
    wall = {1: [], 2: []}
    cpu = {1: [], 2: []}
    ctrl = {1: [], 2: []}
    used = {}
    for _ in range(repeats):
        for k in (1, 2):  # interleaved so both see the same machine load
            _forget(sim)
            c0, t0 = time.process_time(), time.perf_counter()
            r = sim.run_replications(p, ef_packets, reps, seed=2, n_threads=k, batch=reps)
            wall[k].append(time.perf_counter() - t0)
            cpu[k].append(time.process_time() - c0)
            with sim.threads(k):
                t0 = time.perf_counter()
                ids = np.zeros(reps, np.int64)
                spin(20_000_000, np.zeros(reps), ids)
                used[k] = len(set(ids.tolist()))
                ctrl[k].append(time.perf_counter() - t0)
    n = float(r.stats[:, sim.S_PACKETS].sum())
    return n, {k: min(v) for k, v in wall.items()}, {k: min(v) for k, v in cpu.items()}, \
        {k: min(v) for k, v in ctrl.items()}, used


def python_loop(p, rows):
    from qosbound.validation import pq_txq_sim as sim
    from qosbound.validation.pq_txq_reference import reference_departures

    table = sim.simulate_trace(p, rows, 4)
    cls = np.array(table["cls"].to_pylist())
    arr = table["arrival"].to_numpy()
    size = table["size"].to_numpy()
    ef_arr, be_sizes = arr[cls == "EF"], size[cls == "BE"]
    t0 = time.perf_counter()
    reference_departures(p, ef_arr, be_sizes)
    t_py = time.perf_counter() - t0
    return rows, t_py


# Run in a child process: print peak-memory figures as JSON.
_CHILD = r"""
import json, resource, sys, time, tracemalloc
sys.path.insert(0, {root!r})
from benchmarks.bench_simulator import example_params
from qosbound.validation import pq_txq_sim as sim
p = example_params()
mode, n = sys.argv[1], int(float(sys.argv[2]))
# Compile and warm up first, so the baseline holds the interpreter, numba and LLVM.
sim.run_replications(p, 2000, 1, seed=1, n_threads=1)
sim.simulate_trace(p, 2000, 1)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
t0 = time.perf_counter()
if mode == "stream":
    # EF arrivals for about n packets in all (EF and BE departures).
    r = sim.run_replications(p, 10_000, 1, seed=1, n_threads=1)
    per_ef = r.stats[0, sim.S_PACKETS] / 10_000
    r = sim.run_replications(p, int(n / per_ef), 1, seed=3, n_threads=1)
    packets = float(r.stats[0, sim.S_PACKETS])
else:
    table = sim.simulate_trace(p, n, 3)
    packets = float(table.num_rows)
secs = time.perf_counter() - t0
_, traced = tracemalloc.get_traced_memory()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"packets": packets, "seconds": secs, "rss_base_kB": base, "rss_peak_kB": peak,
                  "tracemalloc_peak_B": traced}}))
"""


def memory(mode, n):
    code = _CHILD.format(root=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code, mode, str(n)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller runs (a smoke test, not the figures)")
    args = ap.parse_args(argv)
    import numba

    from qosbound.validation import pq_txq_sim as sim

    p = example_params()
    q = args.quick
    sim.run_replications(p, 2000, 2, seed=1)  # compile (cached after the first run)
    sim.simulate_trace(p, 2000, 1)
    print(f"machine: {numba.config.NUMBA_NUM_THREADS} numba threads available; load average "
          f"{os.getloadavg()[0]:.2f} at start (shared machine: timings are noisy)")
    print(f"scenario: {EXAMPLE.name} (rho = {p.rho:.3f}, Q_t = {p.Q_t}, pq_cap = {p.pq_cap})")

    n, best, med, cpu = single_core(p, 200_000 if q else 4_000_000, 1 if q else 3)
    one_thread, one_cpu = n / best, n / cpu
    print(f"[1] one thread: {n:.3g} packets in {best:.3f} s (median {med:.3f} s) -> "
          f"{n / best:.3g} packets/s best wall-clock, {n / med:.3g} median; {n / cpu:.3g} packets per CPU-second "
          f"(target >= 2e7)")

    reps = 4
    n, wall, cpu, ctrl, used = parallel(p, 100_000 if q else 1_500_000, reps, 1 if q else 3)
    print(f"[2] {reps} replications, {n:.3g} packets: 1 thread {wall[1]:.3f} s, 2 threads {wall[2]:.3f} s -> "
          f"speed-up {wall[1] / wall[2]:.2f}x (target >= 1.8x); CPU seconds 1 thread {cpu[1]:.3f}, "
          f"2 threads {cpu[2]:.3f} (ratio {cpu[2] / cpu[1]:.2f}: parallel overhead)")
    try:
        autogroup = Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        autogroup = False
    if autogroup and os.getloadavg()[0] > 2:
        print("    note: the kernel's autogroup scheduling is on and the load is high; a session's threads then "
              "can share one session's CPU share, so a second thread may add no CPU time")
    print(f"    control (trivial numba prange loop, same run, {used[2]} worker threads used): speed-up "
          f"{ctrl[1] / ctrl[2]:.2f}x -- the most this machine gives right now")

    ms = memory("stream", 1e6 if q else 1e8)
    mt = memory("trace", 1e5 if q else 1e6)
    for name, m in (("streamed", ms), ("full trace", mt)):
        d = (m["rss_peak_kB"] - m["rss_base_kB"]) / 1024
        print(f"[3] {name}: {m['packets']:.3g} packets in {m['seconds']:.2f} s (tracemalloc on); "
              f"peak RSS {m['rss_peak_kB'] / 1024:.1f} MiB"
              f" ({d:.1f} MiB above the {m['rss_base_kB'] / 1024:.1f} MiB after imports); "
              f"Python-side peak (tracemalloc) {m['tracemalloc_peak_B'] / 2**20:.1f} MiB")

    rows = 20_000 if q else 100_000
    _, t_py = python_loop(p, rows)
    n1, best1, _, _ = single_core(p, 200_000, 3)
    py_rate, nb_rate = rows / t_py, n1 / best1
    print(f"[4] plain-Python event loop: {rows} packets in {t_py:.2f} s -> {py_rate:.3g} packets/s; "
          f"numba kernel {nb_rate:.3g} packets/s -> ratio {nb_rate / py_rate:.0f}x")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    stream = (ms["rss_peak_kB"] - ms["rss_base_kB"]) / 1024
    emit(figure("rate", "one thread", one_thread, "packets/s"),
         figure("rate_cpu", "one thread", one_cpu, "packets per CPU s"),
         figure("speedup", f"{reps} replications, 2 threads / 1", wall[1] / wall[2], "x"),
         figure("control_speedup", "trivial prange loop, 2 threads / 1", ctrl[1] / ctrl[2], "x"),
         figure("stream_memory", f"{ms['packets']:.3g} packets streamed, memory growth", stream, "MiB"),
         figure("python_ratio", "kernel / plain-Python loop", nb_rate / py_rate, "x"))


if __name__ == "__main__":
    main()
