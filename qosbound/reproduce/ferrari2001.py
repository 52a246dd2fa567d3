"""``qosbound reproduce ferrari2001``: Table IV of Ferrari, Pau & Raffaelli (2001), recomputed.

For K = 1, 2, 3 transmission units per best-effort packet, eqs. (5)-(7) give
W_pq, W_t and W (microseconds) with the paper's set-up (rho = 0.15,
T_u = 2048 us, Q_t = 5), printed beside the paper's values, their difference
and the measured mean W_m. The maximum-delay bound of
:mod:`qosbound.analytic.ef_bound` for CBR EF (the test bed's EF stream) with
K-unit best effort is printed too.

Claims checked (:mod:`qosbound.reproduce.claims`): every W_pq, W_t and W of
Table IV recomputed within 0.01 us (the paper truncates to 0.01 us), and the
paper's reading of eq. (7) as a worst case: W lies above the measured mean W_m
for every K; and Table III's direction (the mean EF delay grows with the
aggregation degree A), by simulation (:mod:`qosbound.reproduce.ferrari2001_aggregation`).
Exit 0 when every claim is met, 1 otherwise.

Other methods' means for the same K can be appended to each row of
:func:`table_iv_rows` (as extra keys named in :data:`COLUMNS`).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from qosbound.analytic import ef_bound, ferrari
from qosbound.reproduce import claims as C

__all__ = ["reference", "table_iv_rows", "claims", "run", "COLUMNS"]

#: Printed columns: (row key, header). Values are microseconds.
COLUMNS: list[tuple[str, str]] = [
    ("W_pq", "W_pq"), ("W_pq_paper", "paper"), ("W_pq_diff", "diff"),
    ("W_t", "W_t"), ("W_t_paper", "paper"), ("W_t_diff", "diff"),
    ("W", "W"), ("W_paper", "paper"), ("W_diff", "diff"),
    ("W_m", "W_m (measured)"), ("model_mean_cbr", "model mean (CBR)"),
    ("model_mean_poisson", "model mean (Poisson)"), ("D_max_cbr", "D_max (CBR)"),
]


def model_means(K: int, setup: dict) -> dict[str, float]:
    """Exact mean EF delay (us) of the PQ + TxQ DTMC on Storm for the test bed with K-unit BE packets."""
    from qosbound.models.pq_txq import delay_distribution, render
    from qosbound.scenario import build
    from qosbound.systems.pq_txq import params

    out = {}
    for arrivals in ("cbr", "poisson"):
        raw = {"name": f"ferrari2001-K{K}", "system": "pq_txq", "link": {"rate": setup["link_rate"]},
               "txq": {"units": setup["Q_t"], "unit_size": setup["unit_size"]}, "pq": {"capacity": 10},
               "traffic": {"EF": {"rate": setup["rho"] * setup["link_rate"], "size": setup["ef_size"],
                                  "arrivals": arrivals},
                           "BE": {"saturated": True, "size": K * setup["unit_size"]}}}
        scn = build(raw)
        dd, _ = delay_distribution(render(params(scn), scn.methods.model_checked, scn.name))
        out[f"model_mean_{arrivals}"] = dd.mean() * 1e6
    return out


def reference() -> dict:
    """The paper's set-up and Table IV, from ``qosbound/data/ferrari2001.yaml``."""
    from qosbound.shipped import reference as shipped_reference

    return shipped_reference("ferrari2001")


def table_iv_rows() -> list[dict]:
    """One dict per K: recomputed values, the paper's, differences (us) and whether all match to the tolerance."""
    ref = reference()
    s, tol = ref["setup"], float(ref["tolerance_us"])
    rows = []
    for printed in ref["table_iv"]:
        K = int(printed["K"])
        row: dict = {"K": K}
        got = {"W_pq": ferrari.w_pq(K, s["rho"], s["T_u"]), "W_t": ferrari.w_t(K, s["Q_t"], s["T_u"]),
               "W": ferrari.w(K, s["rho"], s["Q_t"], s["T_u"])}
        ok = True
        for name, value in got.items():
            us = value * 1e6
            row[name] = us
            row[f"{name}_paper"] = float(printed[name])
            row[f"{name}_diff"] = us - float(printed[name])
            ok &= abs(row[f"{name}_diff"]) <= tol
        row["W_m"] = float(printed["W_m"])
        row.update(model_means(K, s))
        row["D_max_cbr"] = 1e6 * ef_bound.cbr_delay_bound(s["Q_t"], s["unit_size"], s["link_rate"],
                                                          K * s["unit_size"], s["ef_size"])
        row["match"] = bool(ok)
        rows.append(row)
    return rows


def claims(rows: list[dict], ref: dict) -> list[C.Claim]:
    """Table IV value by value (9 claims), then "W bounds the measured mean" per K (3 claims). Values in us."""
    tol = float(ref["tolerance_us"])
    out = []
    eqs = {"W_pq": "eq. (5)", "W_t": "eq. (6)", "W": "eq. (7)"}
    for r in rows:
        for key, eq in eqs.items():
            out.append(C.compare(f"{key} for K = {r['K']}", f"Table IV, {eq}", r[f"{key}_paper"], r[key], tol, "us",
                                 digits=2, shown_unit="us",
                                 rule=f"|qosbound - paper| <= {tol:g} us (Table IV truncates to 0.01 us)"))
    for r in rows:
        out.append(C.judge(f"worst-case mean W bounds the measured mean W_m, K = {r['K']}",
                           "section VI, Table IV", f"W_m = {r['W_m']:.2f} us (measured)", f"W = {r['W']:.2f} us",
                           r["W"] >= r["W_m"], "W >= W_m", paper_value=r["W_m"], value=r["W"], unit="us",
                           failure="the recomputed worst case lies below the measurement"))
    from qosbound.reproduce.ferrari2001_aggregation import aggregation_claim

    out.append(aggregation_claim())  # Table III's direction, by simulation (about 10 CPU-seconds)
    return out


def _write(out: Path, rows: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "ferrari2001_table_iv.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    with open(out / "ferrari2001_table_iv.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def run(args) -> int:
    """Print Table IV recomputed beside the paper's (``--json`` for the machine form); 0 when they match."""
    rows = table_iv_rows()
    ok = all(r["match"] for r in rows)
    ref = reference()
    checked = claims(rows, ref)
    if getattr(args, "out", None):
        _write(Path(args.out), rows)
    if getattr(args, "json", False):
        print(json.dumps(C.document("ferrari2001", checked, table="IV", unit="us", source=ref["source"],
                                    setup=ref["setup"], tolerance_us=ref["tolerance_us"], rows=rows, match=ok),
                         indent=2, allow_nan=False))
        return C.exit_code(checked)

    from rich.table import Table

    from qosbound.report import console

    s = ref["setup"]
    t = Table(title=f"Ferrari, Pau & Raffaelli 2001, Table IV (microseconds): eq. (7) with rho = {s['rho']:g}, "
                    f"T_u = {s['T_u'] * 1e6:g} us, Q_t = {s['Q_t']}", title_justify="left")
    t.add_column("K", justify="right")
    for _, header in COLUMNS:
        t.add_column(header, justify="right")
    t.add_column("match")
    for r in rows:
        cells = [f"{r[key]:+.4f}" if key.endswith("_diff") else f"{r[key]:.2f}" for key, _ in COLUMNS]
        t.add_row(str(r["K"]), *cells, "yes" if r["match"] else "NO")
    c = console()
    c.print(t)
    c.print(f"W = W_pq + W_t = (k/(1-rho) + Q_t + k - 1) T_u; paper values truncated to 0.01 us, tolerance "
            f"{ref['tolerance_us']} us. W_m is the paper's measured one-way mean, which includes delays outside "
            "this model (the test bed's other hops). The model means are the exact mean EF delay of qosbound's "
            "PQ + TxQ DTMC on Storm (PQ of 10 packets, BE packets filling K units), for CBR and Poisson EF. "
            "D_max (CBR) is qosbound's maximum-delay bound "
            "(Q_t-1) T_u + 8 (L_max + L_EF)/C for CBR EF and K-unit best effort.", highlight=False)
    c.print("Table IV reproduced: every value within tolerance." if ok else
            "Table IV NOT reproduced: see the diff columns.", highlight=False)
    c.print()
    C.print_table("Claims of Ferrari, Pau & Raffaelli 2001 checked by qosbound", checked)
    return C.exit_code(checked)
