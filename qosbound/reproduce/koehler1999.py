"""``qosbound reproduce koehler1999``: the trTCM, RIO and n-RED set-up of Koehler & Schaefer (1999), Tables 2-6.

Prints (1) the colour fractions of the Table 4 trTCM (per edge node: CIR 2,
PIR 3 Mbit/s, CBS 50 kB, PBS 70 kB) for smooth input (closed form, RFC 2698)
and for Poisson input (the numba marker), at several offered rates; (2) the
drop curves of Table 5 (RIO) and Table 6 (n-RED) against the average queue;
(3) per-precedence drop probabilities of ``examples/koehler1999.yaml`` at the
loads of Table 2 (closed form, fixed average, and -- unless ``--quick`` is
short -- the simulator with the float EWMA). The paper's results are TCP
goodputs, which qosbound does not model; nothing here is compared with a
printed number except the parameters. Exit 0.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import numpy as np
import yaml

__all__ = ["reference", "marker_rows", "dropper_curves", "load_rows", "run"]

AVG_POINTS = [30, 40, 45, 50, 55, 60, 65, 70]


def reference() -> dict:
    return yaml.safe_load(resources.files("qosbound").joinpath("data/koehler1999.yaml").read_text(encoding="utf-8"))


def marker_rows(quick: bool = False) -> list[dict]:
    """trTCM (Table 4) fractions per offered rate: CBR closed form and simulated Poisson."""
    from qosbound.analytic.markers import cbr_fractions
    from qosbound.validation.markers import mark_stream, new_state

    t = reference()["table_4"]
    cir, pir, cbs, pbs = float(t["cir_bit_s"]), float(t["pir_bit_s"]), float(t["cbs_bytes"]), float(t["pbs_bytes"])
    size = float(reference()["mtu_bytes"])
    rng = np.random.default_rng(1999)
    n = 50_000 if quick else 500_000
    rows = []
    for rate in (1.5e6, 2.5e6, 3.5e6, 5e6, 10e6):
        f = cbr_fractions("trtcm", rate, cir, pir)
        times = np.cumsum(rng.exponential(8 * size / rate, n))
        col = mark_stream("trtcm", new_state("trtcm", cir, cbs, pir, pbs), times, size)
        sim = np.bincount(col, minlength=3) / n
        rows.append({"rate_bit_s": rate, "cbr": [float(x) for x in f], "poisson_simulated": [float(x) for x in sim]})
    return rows


def dropper_curves() -> dict:
    """Drop probability vs average (packets) for Table 5's RIO and Table 6's n-RED parameters."""
    from qosbound.analytic.wred import drop_prob

    ref = reference()
    out = {}
    for table, keys in (("table_5", ("in", "out")), ("table_6", ("green", "yellow", "red"))):
        for k in keys:
            v = ref[table][k]
            out[f"{table}.{k}"] = [float(x) for x in drop_prob(np.asarray(AVG_POINTS, float), v["min_th"],
                                                               v["max_th"], 1.0 / v["max_p"])]
    return out


def _example_path() -> Path:
    return Path(__file__).resolve().parents[2] / "examples" / "koehler1999.yaml"


def load_rows(quick: bool = False) -> list[dict]:
    """Per-precedence drops of the example at the loads of Table 2 (closed form and simulation)."""
    from qosbound.progress import QUIET
    from qosbound.scenario import build, load
    from qosbound.systems import af

    scn = load(_example_path())
    ref = reference()["table_2"]
    rows = []
    for load_pct, bw in zip(ref["load_percent"], ref["bandwidth_mbit_s"]):
        raw = scn.raw
        raw["link"]["rate"] = f"{bw} Mbps"
        raw["classes"]["AF1"]["bandwidth"] = f"{bw} Mbps"
        raw["slos"] = []
        raw["methods"]["simulated"] = {"packets": 20_000 if quick else 300_000, "replications": 2 if quick else 4,
                                       "seed": 1999}
        s = build(raw, str(_example_path()))
        res = af.evaluate(s, ["closed-form", "simulated"], QUIET)
        by = {(r.metric, r.method): r.value for r in res}
        rows.append({"load_percent": load_pct, "bandwidth_mbit_s": bw,
                     "closed_form": [by.get((f"AF1.drop.AF1{k}", "closed-form")) for k in (1, 2, 3)],
                     "simulated": [by.get((f"AF1.drop.AF1{k}", "simulated")) for k in (1, 2, 3)]})
    return rows


def run(args) -> int:
    quick = bool(getattr(args, "quick", False))
    mk = marker_rows(quick)
    curves = dropper_curves()
    loads = load_rows(quick)
    if getattr(args, "json", False):
        print(json.dumps({"paper": "koehler1999", "trtcm": mk, "avg_packets": AVG_POINTS, "droppers": curves,
                          "loads": loads}, indent=2, allow_nan=False))
        return 0
    print("Koehler & Schaefer 1999, Table 4 trTCM (CIR 2, PIR 3 Mbit/s): colour fractions green/yellow/red")
    for r in mk:
        c, s = r["cbr"], r["poisson_simulated"]
        print(f"  {r['rate_bit_s'] / 1e6:5.1f} Mbit/s  smooth {c[0]:.3f}/{c[1]:.3f}/{c[2]:.3f}"
              f"   Poisson (simulated) {s[0]:.3f}/{s[1]:.3f}/{s[2]:.3f}")
    print("\nTables 5 (RIO) and 6 (n-RED): drop probability vs average queue (packets)")
    print("avg          " + "".join(f"{a:>7d}" for a in AVG_POINTS))
    for k, v in curves.items():
        print(f"{k:<13}" + "".join(f"{x:7.3f}" for x in v))
    print("\nexamples/koehler1999.yaml at the loads of Table 2: drop AF11 / AF12 / AF13")
    for r in loads:
        cf = "/".join(f"{x:.3g}" for x in r["closed_form"])
        sm = "/".join("-" if x is None else f"{x:.3g}" for x in r["simulated"])
        print(f"  {r['load_percent']:>3d} % ({r['bandwidth_mbit_s']:>5} Mbit/s)  fixed average {cf:<28} simulated {sm}")
    return 0
