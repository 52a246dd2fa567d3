"""Benchmark of the port system: its simulator kernel, its closed forms, and (``--bounds``) its bounds against
simulated maxima on adversarial ports.

Prints, measured side by side in one run (CPU time of this process, one thread; the machine may be shared,
so compare the ratios, not the absolute figures):

1. packets per second of the port kernel (qosbound.validation.port_kernels) on a 6-class port -- the 1 Gbit/s
   edge port of examples/port_edge1g.yaml (400 CBR calls and Poisson video at two policed priority levels,
   AF3x with WRED, bulk and class-default saturated, a 128-packet ring) with a sixth class of Poisson AF1x
   traffic under WRED (target >= 1e7 packets/s), and the same port under a parent shaper (bucket 100 kB, a
   10 Gbit/s interface);
2. the port kernel beside pq_txq's kernel (qosbound.validation.pq_txq_kernels) on the same EF + saturated
   best-effort port -- examples/wan100.yaml, and its conversion to a port -- and their ratio (target: the port
   kernel at most 1.3x slower);
3. the closed forms' rate: port scenarios validated and answered by every closed form per second (the edge
   port, from its raw mapping);
4. with ``--bounds``: random adversarial ports (the generator of tests/systems/port/test_bounds.py), every class's
   largest simulated delay against its bound: ports, classes checked, bounds exceeded (must be 0), the largest
   ratio simulated/bound;
5. with ``--shaped``: the same under a random parent shaper (``random_shaper`` of that module: a bucket of 40 B to
   100 kB, an interface 1x to 100x the shaper's rate), and beside it the largest ratio of the simulated delay to
   the bound the port would have without the shaper's term 8 bc / R.

6. with ``--approximations`` (alone: nothing else is run): the approximations of shaped ports against the
   simulator -- each priority class's Cobham mean and each weighted class's mean delay beside the simulated mean,
   its 95 % interval and the relative error: the imported branch port of examples/configs/branch-iosxe.cfg (a
   100 Mbit/s shaper on a 1 Gbit/s interface, saturated classes: the ring paced by the shaper), and the edge
   port under a 1 Gbit/s shaper of 1 MB on a 10 Gbit/s interface with Poisson loads (a bucket hardly ever
   empty: the port served at the interface's rate), each also as the approximations served it before
   (steadily at the shaper's rate: ``HOLD_NEGLIGIBLE`` below every probability).

"Packets" counts every packet handled: departures and drops. Run: ``python benchmarks/bench_port.py
[--quick] [--bounds N] [--shaped N]`` or ``python benchmarks/bench_port.py --approximations``.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import _common  # noqa: E402,F401 - one BLAS thread
from qosbound.progress import QUIET  # noqa: E402
from qosbound.scenario import build, load  # noqa: E402
from qosbound.systems import get_system  # noqa: E402
from qosbound.systems.port.bounds import class_bounds  # noqa: E402
from qosbound.systems.port.convert import convert  # noqa: E402
from qosbound.systems.port.elements import port_of  # noqa: E402
from qosbound.systems.port.simulated import config  # noqa: E402
from qosbound.systems.pq_txq import params  # noqa: E402
from qosbound.validation import pq_txq_sim  # noqa: E402
from qosbound.validation.port_kernels import CS_DELIVERED, CS_MAX, G_PACKETS  # noqa: E402
from qosbound.validation.port_sim import run_replications  # noqa: E402

SIXTH = {"name": "business", "dscp": ["AF11", "AF12", "AF13"], "bandwidth": "5 %", "queue_limit": 64,
         "dropper": {"mode": "wred", "exponent": 9, "thresholds": {
             "AF11": {"min_th": 32, "max_th": 64, "P_d": 10}, "AF12": {"min_th": 24, "max_th": 64, "P_d": 10},
             "AF13": {"min_th": 16, "max_th": 64, "P_d": 10}}},
         "traffic": {"rate": "30 Mbit/s", "size": "576 B", "arrivals": "poisson", "mix": [0.7, 0.2, 0.1]}}


def six_class_port():
    raw = load(ROOT / "examples" / "port_edge1g.yaml").raw
    raw["classes"].insert(3, SIXTH)
    return build(raw)


def cpu_rate(fn, repeats: int) -> float:
    """Largest packets per CPU second over ``repeats`` runs of ``fn`` (which returns its packet count)."""
    best = 0.0
    for _ in range(repeats):
        t0 = time.process_time()
        n = fn()
        best = max(best, n / max(time.process_time() - t0, 1e-9))
    return best


def kernels(packets: int, repeats: int) -> dict:
    six = config(port_of(six_class_port()))
    shaped_raw = six_class_port().raw
    shaped_raw["shaper"] = {"bc": "100 kB", "interface_rate": "10 Gbit/s"}
    shaped = config(port_of(build(shaped_raw)))
    wan = load(ROOT / "examples" / "wan100.yaml")
    p = params(wan)
    (wan_port,), _ = convert(ROOT / "examples" / "wan100.yaml")
    wan_cfg = config(port_of(build(wan_port)))
    ef_share = p.lam / (p.lam + p.rho_be * p.C / (8.0 * float(p.be_probs @ p.be_sizes)))
    for cfg in (six, wan_cfg, shaped):  # compile
        run_replications(cfg, 1000, 1, 1, n_threads=1)
    pq_txq_sim.run_replications(p, 1000, 1, 1, n_threads=1)

    def port_run(cfg):
        return lambda: float(run_replications(cfg, packets, 1, 1, n_threads=1).gst[:, G_PACKETS].sum())

    seeds = itertools.count(2)

    def pq_run():  # a new seed each run: pq_txq_sim keeps the replications of inputs it has run and reuses them
        r = pq_txq_sim.run_replications(p, max(int(packets * ef_share), 1000), 1, next(seeds), n_threads=1)
        return float(r.stats[:, pq_txq_sim.S_PACKETS].sum())

    rates = {"six": [], "shaped": [], "port": [], "pq_txq": []}
    for _ in range(repeats):  # interleaved, so that the load of the machine falls on both alike
        rates["six"].append(cpu_rate(port_run(six), 1))
        rates["shaped"].append(cpu_rate(port_run(shaped), 1))
        rates["port"].append(cpu_rate(port_run(wan_cfg), 1))
        rates["pq_txq"].append(cpu_rate(pq_run, 1))
    return {k: max(v) for k, v in rates.items()}


def closed_forms(repeats: int) -> float:
    """Ports answered by every closed form per second (validation from the raw mapping included)."""
    raw = load(ROOT / "examples" / "port_edge1g.yaml").raw
    system = get_system("port")
    system.evaluate(build(copy.deepcopy(raw)), ["closed-form"], QUIET)  # warm the lambdified formulas
    t0 = time.process_time()
    for _ in range(repeats):
        system.evaluate(build(copy.deepcopy(raw)), ["closed-form"], QUIET)
    return repeats / (time.process_time() - t0)


def bounds_survey(n: int, packets: int, shaped: bool = False) -> dict:
    """``n`` random adversarial ports (seeds 100,000 + k; shaped: 50,000 + k, the shaper drawn after the port):
    every class's largest simulated delay against its bound, and (shaped) against the bound without the
    shaper's term."""
    from tests.systems.port.test_bounds import random_port, random_shaper

    from qosbound.errors import ScenarioError

    ports = checked = exceeded = 0
    worst = worst_unshaped = 0.0
    for k in range(n):
        rng = np.random.default_rng((50_000 if shaped else 100_000) + k)
        try:
            raw = random_port(rng)
            if shaped:
                raw = random_shaper(rng, raw)
            port = port_of(build(raw))
        except ScenarioError:
            continue
        ports += 1
        b = class_bounds(port)
        plain = class_bounds(port_of(build({k: v for k, v in raw.items() if k != "shaper"}))) if shaped else b
        rep = run_replications(config(port), packets, 2, k, 0.0, n_threads=1)
        for c in port.active:
            if c.saturated or not math.isfinite(b[c.name].delay) or rep.cst[:, c.index, CS_DELIVERED].sum() == 0:
                continue
            checked += 1
            mx = float(rep.cst[:, c.index, CS_MAX].max())
            worst = max(worst, mx / b[c.name].delay)
            worst_unshaped = max(worst_unshaped, mx / plain[c.name].delay)
            exceeded += mx > b[c.name].delay
    return {"ports": ports, "classes": checked, "exceeded": exceeded, "largest_ratio": worst,
            "largest_unshaped_ratio": worst_unshaped}


def _shaped_cases():
    from qosbound.configs import load_configs
    from tests.systems.port.test_shaper import _unsaturated_edge

    [branch] = load_configs([ROOT / "examples" / "configs" / "branch-iosxe.cfg"])
    deep = _unsaturated_edge({"rate": "1 Gbit/s", "bc": "1 MB", "interface_rate": "10 Gbit/s"})
    deep["methods"] = {"simulated": {"packets": 400_000, "replications": 8, "seed": 3}}
    return [("branch-iosxe.cfg, saturated", branch.document()), ("edge-1g, 1 MB bucket, Poisson", deep)]


def approximations_survey() -> None:
    """Print every shaped case's approximations beside the simulated means (module docstring, item 6)."""
    from qosbound.systems.port import closed_form as cf

    port = get_system("port")
    for label, raw in _shaped_cases():
        scn = build(raw)
        sim = {r.metric: r for r in port.evaluate(scn, ["simulated"], QUIET)}
        now = {r.metric: r for r in port.evaluate(scn, ["closed-form"], QUIET)}
        saved = cf.HOLD_NEGLIGIBLE
        cf.HOLD_NEGLIGIBLE = -1.0  # every hold probability above it: served steadily at the shaper's rate
        try:
            steady = {r.metric: r for r in port.evaluate(scn, ["closed-form"], QUIET)}
        finally:
            cf.HOLD_NEGLIGIBLE = saved
        print(f"{label}:")
        for name, r in now.items():
            if not name.endswith((".delay.cobham_mean", ".delay.mean")) or r.interval.kind.value != "approximation":
                continue
            s = sim.get(name.replace("cobham_mean", "mean"))
            if s is None:
                continue
            old = steady[name].value
            print(f"  {name:32s} {r.value * 1e6:10.4g} us (steadily at the shaper's rate {old * 1e6:10.4g} us); "
                  f"simulated {s.value * 1e6:.4g} us [{s.interval.low * 1e6:.4g}, {s.interval.high * 1e6:.4g}]; "
                  f"error {r.value / s.value - 1:+.1%} (was {old / s.value - 1:+.1%})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer packets and repeats")
    ap.add_argument("--bounds", type=int, default=0, metavar="N", help="also survey N random adversarial ports")
    ap.add_argument("--shaped", type=int, default=0, metavar="N", help="also survey N random adversarial shaped ports")
    ap.add_argument("--approximations", action="store_true",
                    help="only the approximations of shaped ports against the simulator")
    args = ap.parse_args(argv)
    if args.approximations:
        approximations_survey()
        return 0
    packets, repeats = (1_000_000, 3) if args.quick else (4_000_000, 5)
    k = kernels(packets, repeats)
    print(f"port kernel, 6-class port (edge-1g + AF1x):     {k['six']:.3g} packets/s per core (target >= 1e7)")
    print(f"port kernel, the same port under a parent shaper:  {k['shaped']:.3g} packets/s per core "
          f"(shaped / unshaped {k['shaped'] / k['six']:.2f}x)")
    print(f"port kernel, EF + saturated BE (wan100 as a port): {k['port']:.3g} packets/s per core")
    print(f"pq_txq kernel, the same port (wan100):             {k['pq_txq']:.3g} packets/s per core")
    print(f"  pq_txq / port: {k['pq_txq'] / k['port']:.2f}x (target <= 1.3)")
    cf = closed_forms(20 if args.quick else 100)
    print(f"closed forms: {cf:.3g} ports/s (edge-1g: validation and every closed form of every class)")
    if args.bounds:
        s = bounds_survey(args.bounds, 100_000 if args.quick else 300_000)
        print(f"bounds: {s['ports']} random ports, {s['classes']} class bounds, {s['exceeded']} exceeded by a "
              f"simulated delay, largest simulated/bound {s['largest_ratio']:.7f}")
        if s["exceeded"]:
            return 1
    if args.shaped:
        s = bounds_survey(args.shaped, 100_000 if args.quick else 300_000, shaped=True)
        print(f"shaped bounds: {s['ports']} random shaped ports, {s['classes']} class bounds, {s['exceeded']} exceeded "
              f"by a simulated delay, largest simulated/bound {s['largest_ratio']:.7f}, largest simulated/bound "
              f"without the shaper's term {s['largest_unshaped_ratio']:.7f}")
        if s["exceeded"]:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
