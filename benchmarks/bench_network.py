"""Benchmark of the network system: end-to-end bounds at scale, and the chained simulator's packet-hop rate.

Prints (CPU time of this process, one thread, and wall-clock beside it; the machine may be shared, so the CPU
figures are the ones to compare):

1. bounds: a generated network of ``--ports`` ports and ``--flows`` flows (qosbound.systems.network.generate:
   11 layers of 10 routers, every router linked to every router of the next layer, flows down random paths of
   1-4 hops, voice calls and Poisson or CBR data) written as YAML, then loaded (YAML, validation, the network
   built: routes, classes, 1,000 ports) and bounded (TFA, SFA and FIFO-LP for every flow) -- target <= 10 s on one core,
   loading included;
2. the chained simulator (qosbound.validation.network_sim): packet-hops per CPU second on examples/network_wan.yaml
   and on a generated mesh of 64 ports and 400 flows, beside the port kernel's own rate in trace mode on the WAN's
   core port fed the same packets (the share of the time the chaining costs).

3. with ``--approximation``: the end-to-end approximation (qosbound.systems.network.approximation) against the
   chained simulator, per flow, on examples/network_wan.yaml, a 4-hop tandem with cross traffic at every hop and a
   random mesh (4 layers of 3 routers, 60 flows): mean, p99 and p99.9, approximation / simulated (the simulated
   figure the mean over replications of the per-replication estimate), and the range of the ratios.

4. with ``--tightness``: FIFO-LP beside TFA, SFA and the simulated maximum (4 x 10 s) on the WAN examples, 4- and
   8-hop tandems and two random meshes: for how many flows it is the answer, and its ratios to the others.

5. with ``--compare REF``: the chained simulator's packet-hops per CPU second in this checkout and in the checkout
   at REF (a directory holding another version of the repository), each in a process of its own, alternating,
   ``--rounds`` times each: the WAN (4 x 20 s) and the mesh at ``--mesh-durations`` seconds per replication (2
   replications); and whether both give the same samples (a digest of every flow's delays and counts on the mesh,
   2 x 2 s, and the WAN, 2 x 2 s).

6. with ``--dask N`` (or ``--scheduler ADDRESS``): the WAN example's 8 replications of ``--duration`` s serially
   and on Dask (a local cluster of N single-threaded worker processes, or the cluster at ADDRESS), wall-clock side
   by side: the cluster's start and the workers' kernel compilation apart, then every delay sent back
   (``simulate_on_dask``) against each replication reduced on its worker (``estimates_on_dask``, what ``plan
   --workers`` runs); the bytes one task sends back each way; whether both equal the serial run's (they must:
   each replication has its own seed sequence).

Run: ``python benchmarks/bench_network.py [--ports 1000 --flows 10000] [--quick] [--approximation | --tightness |
--compare REF [--rounds 3 --mesh-durations 5 50] | --dask N | --scheduler ADDRESS [--duration S]]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import _common  # noqa: E402,F401 - one BLAS thread
from qosbound.scenario import build, load  # noqa: E402
from qosbound.systems.network import network  # noqa: E402
from qosbound.systems.network.bounds import analyse  # noqa: E402
from qosbound.systems.network.distributed import estimates_on_dask, replication_record, simulate_on_dask  # noqa: E402
from qosbound.systems.network.estimates import reduce_samples  # noqa: E402
from qosbound.systems.network.approximation import approximate  # noqa: E402
from qosbound.systems.network.generate import random_network, tandem  # noqa: E402
from qosbound.systems.network.simulated import network_config  # noqa: E402
from qosbound.validation.network_sim import simulate  # noqa: E402


def _clock():
    return time.process_time(), time.perf_counter()


def bounds(ports: int, flows: int) -> None:
    width = 10
    layers = max(2, int(round(ports / width ** 2)) + 1)
    raw = random_network(layers, width, flows, seed=1)
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "net.yaml"
        f.write_text(yaml.safe_dump(raw, sort_keys=False))
        size = f.stat().st_size
        c0, w0 = _clock()
        scn = load(f)
        net = network(scn)
        c1, w1 = _clock()
        nb = analyse(net)
        c2, w2 = _clock()
    bounded = [fb for fb in nb.flows.values() if math.isfinite(fb.best)]
    sfa = sum(fb.analysis == "SFA" for fb in bounded)
    lp = sum(fb.analysis == "FIFO-LP" for fb in bounded)
    print(f"bounds: {len(net.ports)} ports, {len(net.flows)} flows, {size / 1e6:.2f} MB of YAML")
    print(f"  load + build {c1 - c0:.2f} s CPU ({w1 - w0:.2f} s wall); TFA + SFA + FIFO-LP {c2 - c1:.2f} s CPU "
          f"({w2 - w1:.2f} s wall); total {c2 - c0:.2f} s CPU, target <= 10 s")
    print(f"  {len(bounded)} flows bounded; the tightest: TFA for {len(bounded) - sfa - lp}, SFA for {sfa}, FIFO-LP "
          f"for {lp}")


def _rate(cfg, duration: float, reps: int, seed: int) -> tuple[float, int, float]:
    simulate(cfg, min(duration, 0.5), 2, seed)  # compile and warm
    c0, w0 = _clock()
    _, hops = simulate(cfg, duration, reps, seed)
    c1, w1 = _clock()
    return hops / (c1 - c0), hops, hops / (w1 - w0)


def kernel_share(cfg) -> float:
    """The port kernel's packets per CPU second on the WAN's core port fed a recorded arrival sequence."""
    from qosbound.validation.network_sim import _run_port  # the feed-mode call the chain makes

    rng = np.random.default_rng(1)
    p = 1  # core-1->core-2, in the network's feed-forward order
    port = cfg.ports[p]
    n = 2_000_000
    t = np.cumsum(rng.exponential(1.0 / 60_000.0, n))
    cls = np.where(rng.random(n) < 0.35, 0, 1).astype(np.int64)
    size = np.where(cls == 0, 200.0, rng.choice([40.0, 576.0, 1500.0], n, p=[0.5833, 0.3334, 0.0833]))
    prec = np.zeros(n, np.int64)
    _run_port(rng, port, t[:1000], cls[:1000], size[:1000], prec[:1000], float(t[999]), 0)
    c0, _ = _clock()
    _run_port(rng, port, t, cls, size, prec, float(t[-1]), 0)
    c1, _ = _clock()
    return n / (c1 - c0)


APPROX_CASES = {"wan": lambda: load(ROOT / "examples" / "network_wan.yaml"),
                "tandem-4": lambda: build(tandem(4)),
                "mesh-4x3": lambda: build(random_network(4, 3, 60, seed=5, rates=(10e6, 100e6), load=0.8))}
QS = (0.99, 0.999)


def approximation_error(duration: float, reps: int) -> list[float]:
    """Per flow of each case: approximation / simulated for the mean, p99 and p99.9; returns every ratio."""
    ratios = []
    for case, make in APPROX_CASES.items():
        mine = []
        net = network(make())
        ap = approximate(net, {n: fb.best for n, fb in analyse(net).flows.items()})
        samples, _ = simulate(network_config(net), duration, reps, 1)
        print(f"approximation: {case} ({len(net.flows)} flows, {reps} x {duration:g} s simulated)")
        for k, f in enumerate(net.flows):
            fa = ap.get(f.name)
            d = samples[k].delays
            if fa is None or fa.why or not all(x.shape[0] >= 500 for x in d):
                continue
            sim = [float(np.mean([x.mean() for x in d]))] + [float(np.mean([np.quantile(x, q) for x in d]))
                                                             for q in QS]
            app = [fa.mean] + fa.quantiles(list(QS))
            r = [a / b for a, b in zip(app, sim)]
            mine += r
            if case != "mesh-4x3" or max(abs(math.log(x)) for x in r) > math.log(1.5):
                print(f"  {f.name:<11} {len(f.hops)} hops  mean {app[0] * 1e3:8.3f} / {sim[0] * 1e3:8.3f} ms = "
                      f"{r[0]:.3f}  p99 {app[1] * 1e3:8.3f} / {sim[1] * 1e3:8.3f} = {r[1]:.3f}  p99.9 "
                      f"{app[2] * 1e3:8.3f} / {sim[2] * 1e3:8.3f} = {r[2]:.3f}")
        ratios += mine
        print(f"  {case}: approximation / simulated in [{min(mine):.3f}, {max(mine):.3f}] over {len(mine) // 3} "
              f"flows" + (" (the mesh's flows shown: those off by more than 1.5x)" if case == "mesh-4x3" else ""))
    print(f"approximation / simulated over all cases, flows, mean, p99, p99.9: [{min(ratios):.3f}, "
          f"{max(ratios):.3f}]")
    return ratios


TIGHT_CASES = {"wan": lambda: load(ROOT / "examples" / "network_wan.yaml"),
               "wan_sites": lambda: load(ROOT / "examples" / "network_wan_sites.yaml"),
               "tandem-4": lambda: build(tandem(4)), "tandem-8": lambda: build(tandem(8)),
               "mesh-5x3 (seed 4)": lambda: build(random_network(5, 3, 80, seed=4, rates=(10e6, 100e6), load=0.85)),
               "mesh-5x3 (seed 6)": lambda: build(random_network(5, 3, 80, seed=6, rates=(10e6, 100e6), load=0.85))}


def tightness(duration: float, reps: int) -> None:
    """FIFO-LP against TFA, SFA and the simulated maximum, per case."""
    for name, make in TIGHT_CASES.items():
        net = network(make())
        nb = analyse(net)
        samples, _ = simulate(network_config(net), duration, reps, 1)
        rows = []
        for f in net.flows:
            fb = nb.flows.get(f.name)
            if fb is None or not math.isfinite(fb.lp):
                continue
            mx = max(float(d.max()) for d in samples[f.index].delays if d.shape[0])
            rows.append((f.name, fb.tfa, fb.sfa, fb.lp, mx, fb.analysis))
        won = [r[3] / min(r[1], r[2]) for r in rows if r[5] == "FIFO-LP"]
        print(f"tightness: {name}: FIFO-LP for {len(rows)} flows, the answer for {len(won)}"
              + (f" ({min(won):.4f}-{max(won):.4f} of the better of TFA and SFA)" if won else "")
              + f"; FIFO-LP / SFA {min(r[3] / r[2] for r in rows):.4f}-{max(r[3] / r[2] for r in rows):.4f}; "
              f"simulated maximum / FIFO-LP {min(r[4] / r[3] for r in rows):.3f}-{max(r[4] / r[3] for r in rows):.3f}")
        for r in rows:
            if r[0] in ("voip-ab", "v"):
                print(f"  {r[0]}: TFA {r[1] * 1e3:.3f} ms, SFA {r[2] * 1e3:.3f} ms, FIFO-LP {r[3] * 1e3:.3f} ms, "
                      f"simulated maximum {r[4] * 1e3:.3f} ms; the answer {r[5]}")


def _size(obj) -> int:
    return len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def on_dask(workers: int, scheduler: str | None, duration: float, replications: int, repeat: int = 2) -> None:
    """The WAN's replications serially and on Dask, wall-clock side by side on one cluster (started once, each
    worker's kernel compiled before the timed runs): every delay sent back against each replication reduced on
    its worker; the bytes one task sends back either way; whether both equal the serial run's."""
    from distributed import Client, LocalCluster  # optional (the dask extra)

    wan = network_config(network(load(ROOT / "examples" / "network_wan.yaml")))
    qs = (0.5, 0.99, 0.999)
    simulate(wan, 0.2, 2, seed=1)  # compile in this process first
    t = time.perf_counter()
    serial, hops = simulate(wan, duration, replications, seed=1)
    ts = time.perf_counter() - t
    t = time.perf_counter()
    ref = reduce_samples(serial, qs)
    tr = time.perf_counter() - t
    per_task = {mode: _size(replication_record((wan, duration, replications, 1, 0.05, 0.05, 0, mode, None)))
                for mode in (None, qs)}
    t = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if scheduler:
            client = stack.enter_context(Client(scheduler, timeout="10s"))
        else:
            cluster = stack.enter_context(LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                       dashboard_address=None, memory_limit=0))
            client = stack.enter_context(Client(cluster))
        tc = time.perf_counter() - t
        t = time.perf_counter()
        estimates_on_dask(wan, 0.2, max(2, workers), seed=1, quantiles=qs, client=client)  # each worker compiles
        tw = time.perf_counter() - t
        td = te = math.inf
        for _ in range(repeat):  # alternating, the best of each: the machine may be shared
            t = time.perf_counter()
            dist, hops_d = simulate_on_dask(wan, duration, replications, seed=1, client=client)
            td = min(td, time.perf_counter() - t)
            del dist
            t = time.perf_counter()
            est, hops_e = estimates_on_dask(wan, duration, replications, seed=1, quantiles=qs, client=client)
            te = min(te, time.perf_counter() - t)
        dist, hops_d = simulate_on_dask(wan, duration, replications, seed=1, client=client)  # for the check
    same = hops == hops_d and all(np.array_equal(x, y) for a, b in zip(serial, dist) for x, y in zip(a.delays, b.delays))
    same_e = hops == hops_e and all(np.array_equal(getattr(a, f), getattr(b, f)) for a, b in zip(ref, est)
                                    for f in ("mean", "quantile", "jitter", "max", "sent", "lost", "bytes", "hop_max"))
    where = f"the cluster at {scheduler}" if scheduler else f"a local cluster of {workers} processes"
    print(f"WAN, {replications} x {duration:g} s ({hops:,} packet-hops): serial {ts:.2f} s wall (+ {tr:.2f} s "
          f"reducing it); on {where} "
          f"(started in {tc:.2f} s, each worker's kernel compiled in {tw:.2f} s, neither in the times that follow): "
          f"every delay sent back {td:.2f} s wall, each replication reduced on its worker {te:.2f} s wall (best of "
          f"{repeat}, alternating)")
    print(f"  one task sends back {per_task[None] / 1e6:.3g} MB with every delay, {per_task[qs] / 1e3:.3g} kB "
          f"reduced ({per_task[None] / per_task[qs]:.3g}x less); samples equal to the serial run's: {same}; "
          f"reduced estimates equal to the serial run's reduction: {same_e}")


# Run in a process of its own with a checkout's root first on the path: that checkout's simulator on the cases of
# this benchmark (the names below exist in every version of this file that has the simulator section).
_COMPARE_CHILD = """
import hashlib, json, sys
root, durations = sys.argv[1], [float(x) for x in sys.argv[2].split(",")]
sys.path.insert(0, root)
from benchmarks import bench_network as b
wan = b.network_config(b.network(b.load(root + "/examples/network_wan.yaml")))
mesh = b.network_config(b.network(b.build(b.random_network(5, 4, 400, seed=2, rates=(10e6, 100e6)))))
out = {"wan": b._rate(wan, 20.0, 4, 1)[0]}
for h in durations:
    out[f"mesh {h:g} s"] = b._rate(mesh, h, 2, 2)[0]
dig = hashlib.sha256()
for cfg, seed in ((mesh, 2), (wan, 1)):
    samples, hops = b.simulate(cfg, 2.0, 2, seed)
    dig.update(str(hops).encode())
    for f in samples:
        for d in f.delays:
            dig.update(d.tobytes())
        for a in (f.sent, f.lost, f.bytes, f.hop_max, f.hop_lost):
            dig.update(a.tobytes())
out["digest"] = dig.hexdigest()
print(json.dumps(out))
"""


def compare(ref: str, rounds: int, durations: list[float]) -> None:
    """The simulator's rates in this checkout and in ``ref``, alternating, each run in a fresh process (its own
    numba cache: the checkout's ``.numba_cache`` where writable, else a temporary one)."""
    roots = {"this": str(ROOT), "ref": str(Path(ref).resolve())}
    runs: dict[str, list[dict]] = {k: [] for k in roots}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            for name, root in roots.items():
                cache = Path(root) / ".numba_cache" if os.access(root, os.W_OK) else Path(tmp) / name
                env = dict(os.environ, PYTHONPATH=root, NUMBA_CACHE_DIR=str(cache), PYTHONDONTWRITEBYTECODE="1")
                res = subprocess.run([sys.executable, "-c", _COMPARE_CHILD, root, ",".join(map(str, durations))],
                                     env=env, capture_output=True, text=True, check=True, cwd=tmp)
                runs[name].append(json.loads(res.stdout.strip().splitlines()[-1]))
    print(f"simulator, packet-hops per CPU second, {rounds} alternating runs each: this checkout ({roots['this']}) "
          f"against {roots['ref']}")
    for case in [k for k in runs["this"][0] if k != "digest"]:
        a = [r[case] for r in runs["this"]]
        b = [r[case] for r in runs["ref"]]
        print(f"  {case:<12} this {min(a):.3g}-{max(a):.3g} (best {max(a):.3g}); ref {min(b):.3g}-{max(b):.3g} "
              f"(best {max(b):.3g}); best / best {max(a) / max(b):.2f}x")
    same = len({r["digest"] for rs in runs.values() for r in rs}) == 1
    print(f"  the same samples in both (mesh 2 x 2 s, WAN 2 x 2 s, every delay and count): {same}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ports", type=int, default=1000)
    ap.add_argument("--flows", type=int, default=10000)
    ap.add_argument("--quick", action="store_true", help="a tenth of the sizes")
    ap.add_argument("--approximation", action="store_true", help="only the approximation's error (item 3)")
    ap.add_argument("--tightness", action="store_true", help="only FIFO-LP's tightness (item 4)")
    ap.add_argument("--compare", metavar="REF", help="only the simulator's rate here against the checkout at REF")
    ap.add_argument("--rounds", type=int, default=3, help="with --compare: alternating runs of each checkout")
    ap.add_argument("--mesh-durations", type=float, nargs="+", default=[5.0, 50.0],
                    help="with --compare: the mesh's seconds per replication")
    ap.add_argument("--dask", type=int, default=0, metavar="N", help="only the replications on N local Dask workers")
    ap.add_argument("--scheduler", metavar="ADDRESS", help="only the replications on the Dask cluster at ADDRESS")
    ap.add_argument("--duration", type=float, default=20.0, help="with --dask / --scheduler: simulated seconds per "
                                                                 "replication (8 replications)")
    ap.add_argument("--repeat", type=int, default=2, help="with --dask / --scheduler: timed runs of each Dask mode")
    a = ap.parse_args(argv)
    if a.compare:
        compare(a.compare, a.rounds, a.mesh_durations)
        return
    if a.dask or a.scheduler:
        on_dask(a.dask or 2, a.scheduler, a.duration if not a.quick else 2.0, 8, a.repeat)
        return
    if a.tightness:
        tightness(10.0 if not a.quick else 2.0, 4)
        return
    if a.approximation:
        approximation_error(10.0 if not a.quick else 2.0, 4)
        return
    q = 10 if a.quick else 1
    bounds(a.ports // q, a.flows // q)
    wan = network_config(network(load(ROOT / "examples" / "network_wan.yaml")))
    r, hops, rw = _rate(wan, 20.0 / q, 4, 1)
    print(f"simulator: WAN example {hops:,} packet-hops: {r:.3g} packet-hops per CPU second ({rw:.3g} per wall "
          "second)")
    mesh = network_config(network(build(random_network(5, 4, 400, seed=2, rates=(10e6, 100e6)))))
    r2, hops2, rw2 = _rate(mesh, 5.0 / q, 2, 2)
    print(f"simulator: mesh of {len(mesh.ports)} ports, 400 flows, {hops2:,} packet-hops: {r2:.3g} per CPU second "
          f"({rw2:.3g} per wall second)")
    k = kernel_share(wan)
    print(f"port kernel alone (trace mode, fed, the WAN's core port): {k:.3g} packets per CPU second; the chained "
          f"simulator runs at {r / k:.2f} of it on the WAN")


if __name__ == "__main__":
    main()
