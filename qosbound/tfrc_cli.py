"""``qosbound tfrc``: the TFRC / gTFRC rate calculator (RFC 5348 section 3.1, Jourjon et al. (2008) eq. (1) and (2)).

One point from flags, or a table from a CSV file (one row per point, columns
``s``, ``rtt``, ``loss`` and optionally ``target``, ``x_recv``; cells are numbers
in SI units -- bytes, seconds, bit/s, a fraction -- or strings with units such as
"1500 B", "30 ms", "1 %", "400 kbit/s"). Rates are printed in bit/s.
"""

from __future__ import annotations

import csv
import json
import sys

import numpy as np

from qosbound.errors import ScenarioError
from qosbound.inputs import check_input_file
from qosbound.units import format_quantity, parse_quantity

__all__ = ["add_arguments", "run", "compute"]


def add_arguments(parser) -> None:
    parser.add_argument("--s", default="1500 B", help="packet size (default 1500 B)")
    parser.add_argument("--rtt", help="round-trip time R, e.g. 30ms")
    parser.add_argument("--loss", help="loss event rate p in (0, 1], e.g. 1%% or 0.01")
    parser.add_argument("--target", help="gTFRC target rate g, e.g. 400kbit/s")
    parser.add_argument("--x-recv", dest="x_recv", help="receiver-reported rate X_recv (caps gTFRC at 2 X_recv)")
    parser.add_argument("--b", default="1", help="packets acknowledged per ACK (RFC 5348: 1)")
    parser.add_argument("--t-rto", dest="t_rto", help="retransmission timeout (default 4 R)")
    parser.add_argument("--csv", metavar="FILE", help="table input: columns s, rtt, loss[, target, x_recv]")
    parser.add_argument("--json", action="store_true", help="print the machine-readable form")
    parser.add_argument("--quiet", action="store_true", help="accepted for symmetry with the other commands "
                                                              "(the calculator prints no progress)")


def _positive(value, kind, field):
    x = parse_quantity(value, kind, field=field)
    if not x > 0:
        raise ScenarioError(f"must be positive, got {value!r}", field=field)
    return x


def _loss(value, field):
    x = parse_quantity(value, "probability", field=field)
    if x == 0:
        raise ScenarioError(f"the loss event rate must lie in (0, 1], got {value!r} (p = 0 is slow start, "
                            "where the equation does not apply)", field=field)
    if not 0 < x <= 1:
        raise ScenarioError(f"the loss event rate is a probability in (0, 1], got {value!r} (= {x:g})", field=field)
    return x


def _finite_outputs(res: dict, where: str = "") -> None:
    """An output that over- or underflows (e.g. a rate of inf bit/s from extreme inputs) is refused, not printed."""
    for k, v in res.items():
        if k == "needs_guarantee" or v is None:
            continue
        a = np.asarray(v, dtype=float)
        bad = ~np.isfinite(a) & ~np.isnan(a) if k in ("target", "X_gtfrc", "p_max", "rtt_max", "ratio") else \
            ~np.isfinite(a)
        if np.any(bad):
            i = int(np.flatnonzero(np.atleast_1d(bad))[0])
            row = f"row {i + 2}: " if a.ndim else ""
            raise ScenarioError(f"{where}{row}{k} = {float(np.atleast_1d(a)[i])}: the packet size, RTT, loss rate "
                                "and target are outside the range the equations can be evaluated in floating point")


def compute(s, rtt, loss, target=None, x_recv=None, b=1.0, t_rto=None) -> dict:
    """All calculator outputs for arrays of inputs (SI: bytes, s, fraction, bit/s); rates in bit/s."""
    from qosbound.analytic import tfrc as T

    with np.errstate(all="ignore"):  # over- and underflow are refused by the caller, not printed as warnings
        return _compute(T, s, rtt, loss, target, x_recv, b, t_rto)


def _compute(T, s, rtt, loss, target, x_recv, b, t_rto) -> dict:
    s, rtt, loss = (np.asarray(v, dtype=float) for v in (s, rtt, loss))
    out = {"s": s, "rtt": rtt, "loss": loss,
           "X_calc": 8.0 * T.tfrc_rate(s, rtt, loss, b, t_rto),
           "X_sqrt_law": 8.0 * T.sqrt_law_rate(s, rtt, loss, b)}
    if target is not None:
        tg = np.asarray(target, dtype=float)
        has = ~np.isnan(tg)  # a table row without a target (a blank cell) gets no gTFRC outputs
        if not np.all(has):
            s_, r_, l_, t_ = (np.broadcast_to(v, tg.shape) for v in (s, rtt, loss, tg))
            xr_ = None if x_recv is None else np.broadcast_to(np.asarray(x_recv, dtype=float), tg.shape)[has]
            part = _compute(T, s_[has], r_[has], l_[has], t_[has], xr_, b, t_rto)
            for k in ("target", "X_gtfrc", "needs_guarantee", "p_max", "rtt_max", "ratio"):
                if k in part:
                    full = np.full(tg.shape, np.nan)
                    full[has] = np.asarray(part[k], dtype=float)
                    out[k] = full
            return out
        if x_recv is not None:
            xr_a = np.asarray(x_recv, dtype=float)
            xr = None if np.all(np.isnan(xr_a)) else np.where(np.isnan(xr_a), np.inf, xr_a) / 8.0
        else:
            xr = None
        g = tg / 8.0
        out["target"] = tg
        out["X_gtfrc"] = 8.0 * T.gtfrc_rate(s, rtt, loss, g, xr, b, t_rto)
        out["needs_guarantee"] = np.asarray(T.exceeds_fair_rate(s, rtt, loss, g, b, t_rto))
        out["p_max"] = np.asarray(T.max_loss_for_target(s, rtt, g, b, t_rto), dtype=float)
        out["rtt_max"] = T.max_rtt_for_target(s, loss, g, b) if t_rto is None else None
        out["ratio"] = T.friendliness_ratio(s, rtt, loss, g, b, t_rto)
        if out["rtt_max"] is None:
            del out["rtt_max"]
    return out


_UNITS = {"s": "B", "rtt": "s", "loss": "1", "target": "bit/s", "X_calc": "bit/s", "X_sqrt_law": "bit/s",
          "X_gtfrc": "bit/s", "needs_guarantee": "", "p_max": "1", "rtt_max": "s", "ratio": "1"}


#: The largest CSV table read (a point per row: 64 MiB is about a million points).
MAX_CSV_BYTES = 64 * 2**20


def _read_csv(path: str):
    check_input_file(path, "CSV table", lambda problem: ScenarioError(problem, file=path), max_bytes=MAX_CSV_BYTES)
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise ScenarioError(f"cannot read the CSV table: {e.strerror or e}", file=path) from None
    except UnicodeDecodeError as e:
        raise ScenarioError(f"not UTF-8 text (byte 0x{e.object[e.start]:02x})", file=path) from None
    except csv.Error as e:
        raise ScenarioError(f"malformed CSV: {e}", file=path) from None
    if not rows:
        raise ScenarioError("the CSV has no data rows", file=path)
    cols = set(rows[0].keys())
    missing = {"s", "rtt", "loss"} - cols
    if missing:
        raise ScenarioError(f"missing column(s) {', '.join(sorted(missing))}; expected s, rtt, loss[, target, "
                            "x_recv]", file=path)
    unknown = cols - {"s", "rtt", "loss", "target", "x_recv"}
    if unknown:
        raise ScenarioError(f"unknown column(s) {', '.join(sorted(unknown))}", file=path)

    def column(name, reader, optional=False):
        out = []
        for i, row in enumerate(rows):
            cell = row.get(name)
            if optional and (cell is None or not str(cell).strip()):
                out.append(np.nan)  # blank: this row has no target (or no X_recv)
                continue
            try:
                cell = float(cell)
            except (TypeError, ValueError):
                pass
            try:
                out.append(reader(cell, f"row {i + 2}.{name}"))
            except ScenarioError as e:
                raise e.located(file=path) from None
        return np.array(out)

    data = {"s": column("s", lambda v, f: _positive(v, "size", f)),
            "rtt": column("rtt", lambda v, f: _positive(v, "time", f)),
            "loss": column("loss", _loss)}
    if "target" in cols:
        data["target"] = column("target", lambda v, f: _positive(v, "rate", f), optional=True)
    if "x_recv" in cols:
        data["x_recv"] = column("x_recv", lambda v, f: _positive(v, "rate", f), optional=True)
        if "target" not in cols:
            raise ScenarioError("column x_recv only applies to gTFRC: add a target column", file=path)
        lonely = np.flatnonzero(np.isnan(data["target"]) & ~np.isnan(data["x_recv"]))
        if lonely.size:
            raise ScenarioError("x_recv only applies to gTFRC: give a target too", file=path,
                                field=f"row {int(lonely[0]) + 2}.x_recv")
    if "target" in data and np.all(np.isnan(data["target"])):
        del data["target"]
        data.pop("x_recv", None)
    return data


def run(args) -> int:
    b = _positive(args.b, "count", "--b")
    t_rto = _positive(args.t_rto, "time", "--t-rto") if args.t_rto else None
    if args.csv:
        data = _read_csv(args.csv)
        res = compute(data["s"], data["rtt"], data["loss"], data.get("target"), data.get("x_recv"), b, t_rto)
        _finite_outputs(res, f"{args.csv}: ")
        _print_table(res, args.json)
        return 0
    if args.rtt is None:
        raise ScenarioError("required (or give --csv FILE)", field="--rtt")
    if args.loss is None:
        raise ScenarioError("required (or give --csv FILE)", field="--loss")
    s = _positive(args.s, "size", "--s")
    rtt = _positive(args.rtt, "time", "--rtt")
    loss = _loss(args.loss, "--loss")
    target = _positive(args.target, "rate", "--target") if args.target else None
    x_recv = _positive(args.x_recv, "rate", "--x-recv") if args.x_recv else None
    if x_recv is not None and target is None:
        raise ScenarioError("--x-recv only applies to gTFRC: give --target too", field="--x-recv")
    res = {k: (v.item() if isinstance(v, np.ndarray) else v)
           for k, v in compute(s, rtt, loss, target, x_recv, b, t_rto).items()}
    _finite_outputs(res)
    if args.json:
        doc = {k: {"value": (bool(v) if k == "needs_guarantee" else float(v)), "unit": _UNITS[k]}
               for k, v in res.items()}
        doc["equation"] = "RFC 5348 section 3.1 (Jourjon et al. 2008 eq. (1)); gTFRC Jourjon et al. (2008) eq. (2)"
        doc["b"] = b
        doc["t_rto"] = t_rto if t_rto is not None else 4 * rtt
        print(json.dumps(doc, indent=2, allow_nan=False))
        return 0
    t_text = format_quantity(t_rto, "s") if t_rto is not None else "4R"
    print(f"TFRC (RFC 5348 3.1): s = {format_quantity(s, 'B')}, R = {format_quantity(rtt, 's')}, "
          f"p = {loss:.6g}, b = {b:g}, t_RTO = {t_text}")
    print(f"  X_calc          = {format_quantity(res['X_calc'], 'bit/s')} ({res['X_calc'] / 8:.6g} B/s)")
    print(f"  square-root law = {format_quantity(res['X_sqrt_law'], 'bit/s')} (upper envelope)")
    if target is not None:
        need = res["needs_guarantee"]
        print(f"gTFRC (Jourjon et al. 2008 eq. 2), target g = {format_quantity(target, 'bit/s')}"
              + (f", X_recv = {format_quantity(x_recv, 'bit/s')}" if x_recv else ""))
        print(f"  X_gTFRC         = {format_quantity(res['X_gtfrc'], 'bit/s')}")
        print(f"  target needs the guarantee: {'yes' if need else 'no'} "
              f"(g {'>' if need else '<='} X_calc; X_gTFRC / X_TFRC = {res['ratio']:.4g})")
        print(f"  g is TCP-friendly up to p = {res['p_max']:.6g}"
              + (f" at this R, and up to R = {format_quantity(res['rtt_max'], 's')} at this p"
                 if "rtt_max" in res else ""))
    return 0


def _print_table(res: dict, as_json: bool) -> None:
    keys = list(res.keys())
    n = len(np.atleast_1d(res["X_calc"]))
    cols = {k: np.broadcast_to(np.atleast_1d(res[k]), (n,)) for k in keys}
    def value(k, i):
        v = cols[k][i]
        if isinstance(v, (float, np.floating)) and np.isnan(v):
            return None  # a row without a target has no gTFRC outputs
        return bool(v) if k == "needs_guarantee" else float(v)

    if as_json:
        rows = [{k: value(k, i) for k in keys} for i in range(n)]
        print(json.dumps({"units": {k: _UNITS[k] for k in keys}, "rows": rows}, indent=2, allow_nan=False))
        return
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow([f"{k} [{_UNITS[k]}]" if _UNITS[k] else k for k in keys])
    for i in range(n):
        w.writerow(["" if value(k, i) is None else str(value(k, i)).lower() if k == "needs_guarantee"
                    else f"{value(k, i):.10g}" for k in keys])
