"""`qosbound admit` on a 1 Gbit/s voice port: time with default settings, and the answer against a long search.

The port is examples/voice1g.yaml: 1 Gbit/s, a 128-packet tx-ring, a PQ of 64 packets, G.711 calls (CBR, 200 B
at 80 kbit/s, random phases), saturated IMIX best effort, SLOs EF.delay.p99 <= 2 ms and EF.loss <= 1e-5. The
question is `admit --vary traffic.EF.calls`.

Rows:

* default: the command as a user runs it (`python -m qosbound admit examples/voice1g.yaml --vary
  traffic.EF.calls --json --quiet`, a fresh process: start-up and the compiled kernels' cache included): its
  wall-clock time, answer, what decided it and the binding SLO's estimate at the answer;
* bound: the value up to which the closed-form bounds prove every SLO (from the same run): it must not
  exceed the simulated answers;
* long: the same search with 8 times the replications (`methods.simulated.replications: 64`, so the cap is
  1024 replications of 125,000 packets), a finer tolerance (0.2 %) and an independent seed: the reference the
  default answer is compared with (target: within 2 %);
* the cost of the calls against the number of calls: one simulation (8 replications of 250,000 EF packets)
  of N calls and of one Poisson stream of the same rate, side by side, at 200 ... 12,000 calls; the ratio
  calls / Poisson must not grow with N (the simulator looked for the next call's packet by scanning every
  call, O(N) per packet, which made each admission step slower than the last; it now takes the calls in
  phase order, O(1));
* plan: one `plan` of the scenario as shipped (200 calls), in a fresh process, for the ratio admit / plan.

The machine is shared: the load average is printed, and the ratios (admit / plan, per-packet cost across call
counts) are the figures to compare between runs.

Run: python benchmarks/bench_admit.py [--skip-long]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SCENARIO = ROOT / "examples" / "voice1g.yaml"
PARAM = "traffic.EF.calls"


def _cli(*args: str) -> tuple[float, dict | None, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "qosbound", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT)
    seconds = time.perf_counter() - t0
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        doc = None
    return seconds, doc, proc.stderr


def _long_search() -> tuple[float, object]:
    from qosbound.admit import admit
    from qosbound.scenario import build, load_raw

    raw = load_raw(SCENARIO)
    raw.setdefault("methods", {})["simulated"] = {"replications": 64, "seed": 2}
    scn = build(raw, str(SCENARIO))
    t0 = time.perf_counter()
    res = admit(scn, PARAM, sim_rtol=0.002, max_evals=200)
    return time.perf_counter() - t0, res


def _per_packet() -> list[tuple[int, float, float, float]]:
    import dataclasses

    import numpy as np

    from qosbound.scenario import build, load_raw, set_path
    from qosbound.systems.pq_txq import params
    from qosbound.validation.pq_txq_sim import S_PACKETS, run_replications

    raw = load_raw(SCENARIO)
    rows = []
    run_replications(params(build(raw, str(SCENARIO))), 2000, 2, 1)  # compile (or load the cache) first
    for n in (200, 1600, 6400, 12000):
        calls = params(build(set_path(raw, PARAM, n), str(SCENARIO)))
        poisson = dataclasses.replace(calls, arrivals="poisson", ef_streams=())
        times = []
        for p in (calls, poisson):
            t0 = time.perf_counter()
            rep = run_replications(p, 250_000, 8, 11 + n)
            times.append(time.perf_counter() - t0)
        packets = float(np.sum(rep.stats[:, S_PACKETS]))
        rows.append((n, times[0], times[1], 1e9 * times[0] / packets))
    return rows


def _estimate(doc: dict) -> str:
    e = doc.get("estimate") or {}
    if not e:
        return "-"
    iv = f" [{e['low']:.3g}, {e['high']:.3g}] ({e['kind']})" if "low" in e else f" ({e.get('kind', '')})"
    reps = f", {e['replications']} x {e.get('packets_per_replication', 0):,} packets" if e.get("replications") else ""
    return f"{e['metric']} = {e['value']:.3g}{iv}{reps}"


def main() -> None:
    skip_long = "--skip-long" in sys.argv[1:]
    load0 = os.getloadavg()[0]
    print(f"load average {load0:.1f} on {os.cpu_count()} cores (a shared machine: compare the ratios)")
    t_plan, _, _ = _cli("plan", str(SCENARIO), "--json", "--quiet")
    t_admit, doc, err = _cli("admit", str(SCENARIO), "--vary", PARAM, "--json", "--quiet")
    if doc is None:
        raise SystemExit(f"admit failed: {err}")
    print(f"\n{'search':12s} {'seconds':>8s} {'evals':>6s} {'answer':>8s}  decided by / estimate at the answer")
    print(f"{'default':12s} {t_admit:8.1f} {doc['evaluations']:6d} {doc['value']:8.0f}  {doc['decided_by']}: "
          f"{_estimate(doc)}")
    print(f"{'bound':12s} {'':>8s} {doc['bound_evaluations']:6d} {doc['bound_value'] or float('nan'):8.0f}  "
          + "; ".join(f"{k} by {v}" for k, v in (doc.get("bound_proofs") or {}).items()))
    if not skip_long:
        t_long, res = _long_search()
        est = res.estimate or {}
        print(f"{'long':12s} {t_long:8.1f} {res.evaluations:6d} {res.value:8.0f}  {res.decided_by}: "
              f"{_estimate({'estimate': est})}")
        gap = abs(doc["value"] - res.value) / res.value
        print(f"\ndefault vs long: {100 * gap:.2f} % apart (target <= 2 %); bound {doc['bound_value']:.0f} <= "
              f"default {doc['value']:.0f} and long {res.value:.0f}: "
              f"{'yes' if doc['bound_value'] <= min(doc['value'], res.value) else 'NO'}")
    print(f"admit / plan (200 calls, one evaluation): {t_admit:.1f} s / {t_plan:.1f} s = {t_admit / t_plan:.2f}")
    print(f"\n{'calls':>6s} {'calls s':>8s} {'Poisson s':>9s} {'ratio':>6s} {'ns/packet':>10s}  "
          "(8 x 250,000 EF packets, saturated best effort; Poisson: one stream of the calls' rate)")
    rows = _per_packet()
    for n, t_calls, t_poisson, ns in rows:
        print(f"{n:6d} {t_calls:8.2f} {t_poisson:9.2f} {t_calls / t_poisson:6.2f} {ns:10.1f}")
    print(f"calls / Poisson at {rows[-1][0]} calls over at {rows[0][0]} calls: "
          f"{(rows[-1][1] / rows[-1][2]) / (rows[0][1] / rows[0][2]):.2f} (flat: no cost per call)")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
