"""Benchmark of the ring method's upper bound (``models/pq_txq_ring_bound.py``, ``solve_bound``): CPU seconds and
sparse LU factorisations per port, and with ``--compare REF`` the same in the checkout at REF side by side.

The ports: the two examples the bound answers (examples/wan100.yaml, examples/agg1g.yaml) and the three other real
ports of tests/models/test_pq_txq_ring.py (a 1 Gbit/s 128-packet ring with 1000-byte EF at 25 %, a 10 Mbit/s
16-packet ring at 30 %, a 100 Mbit/s 32-packet ring at 40 %; IMIX BE unless said), each solved as the ring method
solves it (``bound_results``: the scenario's CCDF points and quantiles, the state budget, the closed-form largest
delay) in a fresh process with the cache off, by this checkout as it is and with ``ratio_mdp.REUSE_ORDER`` set
(one fill-reducing order reused by the factorisations), and with ``--compare`` by the checkout at REF. Printed per
port and run: CPU seconds of the solve (one BLAS thread: ``_common``), its speed-up over REF's, the factorisations
per process solved, and every bound with its relative difference from REF's, marked where the two differ in the
4 significant digits reports print.

The machine may be shared: the checkouts run alternately, ``--rounds`` times each, and the best CPU time of each
is compared.

Run: ``python benchmarks/bench_ring_bound.py [--ports NAME ...] [--compare REF] [--rounds N]`` (REF: a directory
holding another version of the repository, e.g. an export of the main branch).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PORTS = ["wan100", "agg1g", "p1g", "p10", "p100"]

_CHILD = r"""
import json, sys, time
root, name, reuse = sys.argv[1], sys.argv[2], sys.argv[3] == "reuse"
sys.path.insert(0, root)
from benchmarks import _common  # one BLAS thread
from qosbound.models import ratio_mdp
if reuse:
    ratio_mdp.REUSE_ORDER = True
from qosbound.scenario import build, load
from qosbound.systems import pq_txq
from qosbound.systems.pq_txq.ring_results import closed_form_max
from qosbound.models import pq_txq_ring_bound, pq_txq_ring_bound_budget

IMIX = [(40, 7 / 12), (576, 4 / 12), (1500, 1 / 12)]

def port(name, rate, QT, PQ, ef_rate, ef_size=200, be=IMIX):  # as tests/models/test_pq_txq_ring.py builds them
    return build({"name": name, "system": "pq_txq", "link": {"rate": rate},
                  "txq": {"units": QT, "unit_size": f"{max([ef_size] + [s for s, _ in be])} B"},
                  "pq": {"capacity": PQ},
                  "traffic": {"EF": {"rate": ef_rate, "size": f"{ef_size} B", "arrivals": "poisson"},
                              "BE": {"saturated": True, "sizes": [{"size": f"{s} B", "p": p} for s, p in be]}},
                  "metrics": {"ccdf_at": ["1 ms"], "quantiles": [0.99, 0.999]},
                  "methods": {"model-checked": {"max_states": 1e6}}})

if name in ("wan100", "agg1g"):
    scn = load(f"{root}/examples/{name}.yaml")
elif name == "p1g":
    scn = port("p1g", "1 Gbps", 128, 128, "250 Mbit/s", 1000, [(64, 0.6), (1500, 0.4)])
elif name == "p10":
    scn = port("p10", "10 Mbps", 16, 32, "3 Mbit/s")
else:
    scn = port("p100", "100 Mbps", 32, 64, "40 Mbit/s")
p = pq_txq.params(scn)
opts = scn.methods.model_checked
dmax = closed_form_max(p)
t0 = time.process_time()
b = pq_txq_ring_bound.solve_bound(p, list(scn.metrics.ccdf_at), list(scn.metrics.quantiles),
                                  max_states=min(float(opts.max_states), pq_txq_ring_bound_budget.ABSTRACTION_STATES),
                                  max_delay=dmax)
cpu = time.process_time() - t0
values = {"mean": b.mean, "loss": b.loss}
values.update({f"p{q}": v for q, v in b.quantiles.items()})
values.update({f"ccdf({t})": v for t, v in b.ccdf.items()})
print(json.dumps({"cpu": cpu, "values": values, "decided": {str(k): v for k, v in b.decided.items()},
                  "solved": [(n, s, f) for n, s, _, f in b.solved]}))
"""


def run(root: str, name: str, reuse: bool = False) -> dict:
    """One port's bound solved by the checkout at ``root``, in a fresh process (cache off, one BLAS thread);
    ``reuse``: with ``ratio_mdp.REUSE_ORDER`` set (one fill-reducing order reused by the factorisations)."""
    env = {k: v for k, v in os.environ.items() if k != "QOSBOUND_CACHE_DIR"}
    with tempfile.TemporaryDirectory() as tmp:
        env.update(PYTHONPATH=root, PYTHONDONTWRITEBYTECODE="1", NUMBA_CACHE_DIR=str(Path(tmp) / "numba"))
        res = subprocess.run([sys.executable, "-c", _CHILD, root, name, "reuse" if reuse else "own"], env=env, capture_output=True, text=True,
                             cwd=tmp)
    if res.returncode:
        raise RuntimeError(f"{root} {name}: {res.stderr.strip().splitlines()[-1:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _facts(r: dict) -> str:
    return ", ".join(f"{n} {s} states {f} LU" for n, s, f in r["solved"])


def same_digits(a: float, b: float, digits: int = 6) -> bool:
    """Whether two values print the same with ``digits`` significant digits."""
    return f"{a:.{digits - 1}e}" == f"{b:.{digits - 1}e}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ports", nargs="*", default=PORTS, choices=PORTS)
    ap.add_argument("--compare", metavar="REF", help="a directory holding another version of the repository")
    ap.add_argument("--rounds", type=int, default=1, help="alternating runs of each checkout (best CPU kept)")
    a = ap.parse_args(argv)
    runs_of = {"this": (str(ROOT), False), "this, order reused": (str(ROOT), True)}
    if a.compare:
        runs_of["ref"] = (str(Path(a.compare).resolve()), False)
    print(f"ring bound (solve_bound), CPU seconds, best of {a.rounds}: this checkout ({ROOT}) as it is and with "
          "ratio_mdp.REUSE_ORDER" + (f", against {runs_of['ref'][0]}" if a.compare else ""))
    for name in a.ports:
        runs: dict = {k: [] for k in runs_of}
        for _ in range(a.rounds):
            for k, (root, reuse) in runs_of.items():
                runs[k].append(run(root, name, reuse))
        best = {k: min(rs, key=lambda r: r["cpu"]) for k, rs in runs.items()}
        base = best["ref" if a.compare else "this"]
        print(f"{name}:")
        for k, r in best.items():
            print(f"  {k:<20} {r['cpu']:7.2f} s, {base['cpu'] / r['cpu']:5.2f}x ({_facts(r)})")
        for key in base["values"]:
            line = f"    {key:<13}" + " ".join(f"{k} {r['values'][key]!r:<23}" for k, r in best.items())
            for k, r in best.items():
                if r is not base:
                    v, v0 = r["values"][key], base["values"][key]
                    line += f"; {k}: rel. diff. {abs(v - v0) / max(abs(v0), 1e-300):.1g}" + (
                        "" if same_digits(v, v0, 4) else " (4 digits differ)")
            print(line)
        for k, r in best.items():
            if r["decided"] != base["decided"]:
                print(f"    decided by ({k}): {r['decided']}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
