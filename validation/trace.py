"""The one packet-trace schema, and its Parquet / CSV forms.

One row per packet seen at the device's ingress:

========== ========= =====================================================
column     type      meaning
========== ========= =====================================================
flow       string    flow or aggregate name ("EF", "BE", "flow1", ...)
cls        string    traffic class / PHB ("EF", "BE", "AF1", ...)
colour     int8      drop precedence: 0 green/none, 1 yellow, 2 red
hint       int16     TSQ delay hint (0 when not used)
size       int32     bytes on the wire
arrival    float64   arrival time at the ingress, seconds
departure  float64   time the last bit left the egress, seconds; null if dropped
dropped    bool      the packet was dropped in the device
========== ========= =====================================================

Times are seconds from the start of the trace. CSV uses the same columns with
an empty ``departure`` for dropped packets.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qosbound.errors import TraceError
from qosbound.inputs import check_input_file

__all__ = ["COLUMNS", "make_table", "write_trace", "read_trace", "check_trace", "MAX_TRACE_BYTES"]

#: Largest trace file read (bytes); Parquet and CSV are read whole into memory.
MAX_TRACE_BYTES = 8 * 2**30

COLUMNS = ("flow", "cls", "colour", "hint", "size", "arrival", "departure", "dropped")


def _schema():
    import pyarrow as pa

    return pa.schema([
        ("flow", pa.string()), ("cls", pa.string()), ("colour", pa.int8()), ("hint", pa.int16()),
        ("size", pa.int32()), ("arrival", pa.float64()), ("departure", pa.float64()), ("dropped", pa.bool_()),
    ])


def make_table(*, flow, cls, size, arrival, departure, dropped, colour=None, hint=None):
    """Build a pyarrow Table in the trace schema from array-likes (strings may be scalars)."""
    import pyarrow as pa

    arrival = np.asarray(arrival, dtype=np.float64)
    n = arrival.shape[0]

    def col(v, dtype):
        if v is None:
            return np.zeros(n, dtype=dtype)
        a = np.asarray(v)
        if a.ndim == 0:
            return np.full(n, a.item(), dtype=dtype)
        return a.astype(dtype)

    dropped = col(dropped, bool)
    departure = col(departure, np.float64)
    dep = pa.array(departure, mask=dropped | ~np.isfinite(departure), type=pa.float64())
    flow_col = _string_column(flow, n)
    cls_col = _string_column(cls, n)
    return pa.Table.from_arrays(
        [flow_col, cls_col, pa.array(col(colour, np.int8)), pa.array(col(hint, np.int16)),
         pa.array(col(size, np.int32)), pa.array(arrival), dep, pa.array(dropped)],
        schema=_schema())


def _string_column(v, n: int):
    """A string column from a scalar, an array-like, or a pyarrow array (taken as is: fast for big traces)."""
    import pyarrow as pa

    if isinstance(v, (pa.Array, pa.ChunkedArray)):
        if len(v) != n:
            raise TraceError(f"a string column has {len(v)} rows, expected {n}")
        return v.cast(pa.string())
    a = np.asarray(v)
    if a.ndim == 0:
        return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)),
                                              pa.array([str(a.item())])).cast(pa.string())
    return pa.array(a.astype(str), type=pa.string())


def write_trace(table, path: str | Path) -> None:
    """Write a trace table as Parquet (``.parquet``) or CSV (``.csv``)."""
    p = Path(path)
    if p.suffix == ".csv":
        import pyarrow.csv as pcsv

        pcsv.write_csv(table, p)
    else:
        import pyarrow.parquet as pq

        pq.write_table(table, p)


def read_trace(path: str | Path):
    """Read a trace (Parquet or CSV) and check it against the schema."""
    import pyarrow as pa

    p = Path(path)
    check_input_file(p, "trace file (Parquet or CSV)", lambda problem: TraceError(f"{path}: {problem}"),
                     max_bytes=MAX_TRACE_BYTES, too_large_hint="split it or import a time window")
    try:
        if p.suffix == ".csv":
            import pyarrow.csv as pcsv

            opts = pcsv.ConvertOptions(column_types=_schema(), strings_can_be_null=False)
            table = pcsv.read_csv(p, convert_options=opts)
        else:
            import pyarrow.parquet as pq

            table = pq.read_table(p)
    except (pa.ArrowInvalid, OSError) as e:
        raise TraceError(f"{path}: not a readable trace ({str(e).splitlines()[0][:120]})") from None
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        raise TraceError(f"{path}: missing column(s) {', '.join(missing)}; expected {', '.join(COLUMNS)}")
    try:
        table = table.select(list(COLUMNS)).cast(_schema())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise TraceError(f"{path}: a column has the wrong type ({str(e).splitlines()[0][:120]})") from None
    check_trace(table, str(path))
    return table


def check_trace(table, path: str = "<trace>") -> None:
    """Refuse values the schema's types admit but the trace cannot mean: times that are negative, NaN or
    infinite; a packet leaving before it arrives; a kept packet without a departure; a negative size; a colour
    outside 0..2; a negative hint. The message names the first offending row (1-based, data rows) and column."""
    n = table.num_rows
    if n == 0:
        raise TraceError(f"{path}: the trace holds no packets")
    arr = table.column("arrival").to_numpy(zero_copy_only=False)
    dep_col = table.column("departure")
    dep = dep_col.to_numpy(zero_copy_only=False).astype(np.float64)  # nulls -> NaN
    dropped = table.column("dropped").fill_null(False).to_numpy(zero_copy_only=False).astype(bool)
    size = table.column("size").to_numpy(zero_copy_only=False)
    colour = table.column("colour").to_numpy(zero_copy_only=False)
    hint = table.column("hint").to_numpy(zero_copy_only=False)

    def fail(mask, column, problem):
        bad = np.flatnonzero(mask)
        if bad.size:
            i = int(bad[0])
            more = f" (and {bad.size - 1} more rows)" if bad.size > 1 else ""
            raise TraceError(f"{path}: row {i + 1}, column '{column}': {problem}{more}")

    with np.errstate(invalid="ignore"):
        fail(~np.isfinite(arr), "arrival", "the arrival time is not a finite number")
        fail(arr < 0, "arrival", "negative arrival time (times are seconds from the start of the trace)")
        kept = ~dropped
        fail(kept & np.isnan(dep), "departure", "a packet that is not dropped has no departure time")
        fail(np.isinf(dep), "departure", "the departure time is not a finite number")
        fail(kept & (dep < arr), "departure", "the packet departs before it arrives")
    fail(size.astype(np.int64) < 0 if size.dtype != object else np.zeros(n, bool), "size", "negative packet size")
    fail((colour < 0) | (colour > 2), "colour", "drop precedence must be 0 (green), 1 (yellow) or 2 (red)")
    fail(hint < 0, "hint", "negative delay hint")
