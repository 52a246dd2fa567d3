"""A CSV of packet timestamps (from a traffic generator, a tester, a log) -> a trace.

The file has a header row. Required: an arrival column (``arrival``, ``t_in``,
``ingress`` or ``tx_time``) and a departure column (``departure``, ``t_out``,
``egress`` or ``rx_time``); an empty departure (or one of ``nan``, ``-``,
``lost``, ``drop``) means the packet was lost. Optional: ``cls`` or ``class``,
``dscp`` (classified like captures: 46 EF, AFxy -> AFx with its colour),
``flow``, ``size`` (bytes), ``colour``, ``hint``, ``dropped`` (0/1). Times are
in ``time_unit`` ("s", "ms", "us" or "ns") and may be absolute (e.g. Unix
epoch): they are shifted so the first arrival is at 0. Every row becomes one
packet; a row that cannot be read is an error naming its line, never skipped.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from qosbound.errors import TraceError
from qosbound.inputs import check_input_file
from qosbound.validation.trace import make_table

__all__ = ["read_timestamps_csv"]

_ARRIVAL = ("arrival", "t_in", "ingress", "tx_time")
_DEPARTURE = ("departure", "t_out", "egress", "rx_time")
_LOST = {"", "nan", "-", "lost", "drop", "dropped", "none", "null"}
_SCALE = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def _pick(header: list[str], names, path, what) -> int | None:
    low = [h.strip().lower() for h in header]
    for nm in names:
        if nm in low:
            return low.index(nm)
    if what:
        raise TraceError(f"{path}: no {what} column; expected one of {', '.join(names)} (found {', '.join(header)})")
    return None


def read_timestamps_csv(path: str | Path, *, time_unit: str = "s", default_class: str = "EF",
                        default_size: int = 0):
    """Read a timestamp CSV into a trace table (see the module docstring for the columns)."""
    if time_unit not in _SCALE:
        raise TraceError(f"unknown time unit {time_unit!r}; expected one of {', '.join(_SCALE)}")
    scale = _SCALE[time_unit]
    p = Path(path)
    check_input_file(p, "CSV file", lambda problem: TraceError(f"{path}: {problem}"))
    try:
        f = open(p, newline="", encoding="utf-8")
    except FileNotFoundError:
        raise TraceError(f"{path}: file not found") from None
    except OSError as e:
        raise TraceError(f"{path}: cannot read: {e.strerror}") from None
    try:
        with f:
            return _read_rows(f, path, scale, default_class, default_size)
    except UnicodeDecodeError as e:
        raise TraceError(f"{path}: not UTF-8 text (byte 0x{e.object[e.start]:02x})") from None
    except csv.Error as e:
        raise TraceError(f"{path}: not a readable CSV file ({e})") from None


def _read_rows(f, path, scale, default_class, default_size):
    from qosbound.validation.pcap import dscp_class  # costly: numba (the pcap reader's kernels) at import

    rows = csv.reader(f)
    try:
        header = next(rows)
    except StopIteration:
        raise TraceError(f"{path}: empty file") from None
    ia = _pick(header, _ARRIVAL, path, "arrival")
    idp = _pick(header, _DEPARTURE, path, "departure")
    ic = _pick(header, ("cls", "class"), path, None)
    ids = _pick(header, ("dscp",), path, None)
    ifl = _pick(header, ("flow",), path, None)
    isz = _pick(header, ("size", "bytes", "length"), path, None)
    ico = _pick(header, ("colour", "color"), path, None)
    ih = _pick(header, ("hint",), path, None)
    idr = _pick(header, ("dropped",), path, None)
    arr, dep, cls, flow, size, colour, hint = [], [], [], [], [], [], []
    for line, row in enumerate(rows, start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise TraceError(f"{path}: line {line}: {len(row)} fields, the header has {len(header)}")
        try:
            a = float(row[ia]) * scale
            d_text = row[idp].strip().lower()
            d = math.nan if d_text in _LOST else float(d_text) * scale
            if idr is not None and row[idr].strip().lower() in ("1", "true", "yes"):
                d = math.nan
            s = int(float(row[isz])) if isz is not None else default_size
            c, col = default_class, 0
            if ids is not None:
                c, col = dscp_class(int(row[ids]))
            if ic is not None and row[ic].strip():
                c = row[ic].strip()
            if ico is not None and row[ico].strip():
                col = int(row[ico])
            h = int(row[ih]) if ih is not None and row[ih].strip() else 0
        except (ValueError, OverflowError) as e:
            raise TraceError(f"{path}: line {line}: cannot read a number ({e})") from None
        if not math.isfinite(a):
            raise TraceError(f"{path}: line {line}: the arrival time is not a finite number")
        if math.isinf(d):
            raise TraceError(f"{path}: line {line}: the departure time is not a finite number")
        if not math.isnan(d) and d < a:
            raise TraceError(f"{path}: line {line}: the packet departs before it arrives")
        if s < 0:
            raise TraceError(f"{path}: line {line}: negative packet size ({s})")
        if not 0 <= col <= 2:
            raise TraceError(f"{path}: line {line}: colour {col} is not 0 (green), 1 (yellow) or 2 (red)")
        if not 0 <= h < 2**15:
            raise TraceError(f"{path}: line {line}: hint {h} is outside 0..32767")
        if not 0 <= s < 2**31:
            raise TraceError(f"{path}: line {line}: packet size {s} is out of range")
        arr.append(a)
        dep.append(d)
        cls.append(c)
        flow.append(row[ifl].strip() if ifl is not None else c)
        size.append(s)
        colour.append(col)
        hint.append(h)
    if not arr:
        raise TraceError(f"{path}: no packets")
    a = np.asarray(arr)
    d = np.asarray(dep)
    t0 = a.min()
    order = np.argsort(a, kind="stable")
    pick = lambda v, dt: np.asarray(v, dtype=dt)[order]  # noqa: E731
    return make_table(flow=pick(flow, object).astype(str), cls=pick(cls, object).astype(str),
                      colour=pick(colour, np.int8), hint=pick(hint, np.int16), size=pick(size, np.int32),
                      arrival=(a - t0)[order], departure=(d - t0)[order], dropped=np.isnan(d)[order])
