"""Tests for validation/trace.py: the trace schema, its Parquet and CSV forms, and the refusal of impossible traces."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qosbound.errors import TraceError
from qosbound.validation.compare import arrays
from qosbound.validation.csv_import import read_timestamps_csv
from qosbound.validation.trace import COLUMNS, make_table, read_trace, write_trace


def _table(n=100, seed=0):
    rng = np.random.default_rng(seed)
    arr = np.sort(rng.uniform(0, 10, n))
    dep = arr + rng.exponential(0.01, n)
    drop = rng.random(n) < 0.1
    return make_table(flow="EF", cls=np.where(np.arange(n) % 2, "EF", "BE"), size=128, arrival=arr,
                      departure=np.where(drop, np.nan, dep), dropped=drop, colour=np.arange(n) % 3)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_round_trip(tmp_path, suffix):
    """A trace written as Parquet or CSV reads back with the same columns and values; drops stay null."""
    t = _table()
    p = tmp_path / f"t{suffix}"
    write_trace(t, p)
    back = read_trace(p)
    assert back.column_names == list(COLUMNS)
    assert back.column("dropped").to_pylist() == t.column("dropped").to_pylist()
    assert back.column("departure").null_count == int(np.sum(t.column("dropped").to_numpy(zero_copy_only=False)))
    np.testing.assert_allclose(back.column("arrival").to_numpy(), t.column("arrival").to_numpy(), rtol=1e-15)


def test_missing_column_is_an_error(tmp_path):
    """A CSV lacking a schema column is refused with the missing column named."""
    p = tmp_path / "bad.csv"
    p.write_text("flow,cls,size,arrival\nEF,EF,1,0.0\n")
    with pytest.raises(TraceError, match="missing column"):
        read_trace(p)


def test_missing_file(tmp_path):
    """A trace path that does not exist is a TraceError, not an OSError."""
    with pytest.raises(TraceError, match="not found"):
        read_trace(tmp_path / "nope.parquet")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1e3), st.floats(0, 10), st.booleans()), min_size=1, max_size=50))
def test_make_table_any_input(rows):
    """Any finite arrivals, delays and drop flags make a valid table whose dropped rows have null departures."""
    arr = np.array([r[0] for r in rows])
    dep = arr + np.array([r[1] for r in rows])
    drop = np.array([r[2] for r in rows])
    t = make_table(flow="f", cls="EF", size=1, arrival=arr, departure=dep, dropped=drop)
    assert t.num_rows == len(rows)
    assert t.column("departure").null_count == int(drop.sum())
    a = arrays(t)
    assert np.all(np.diff(a.arrival) >= 0)


def _rows(n=5, **over):
    base = dict(flow="EF", cls="EF", size=[100] * n, arrival=np.arange(n) * 1.0,
                departure=np.arange(n) * 1.0 + 0.004, dropped=[False] * n)
    base.update(over)
    return make_table(**base)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
@pytest.mark.parametrize("table,match", [
    (lambda: _rows(departure=np.arange(5) * 1.0 - 0.004), "row 1, column 'departure': the packet departs before"),
    (lambda: _rows(size=[100, -100, 100, 100, 100]), "row 2, column 'size': negative packet size"),
    (lambda: _rows(arrival=[0.0, 1.0, np.nan, 3.0, 4.0]), "row 3, column 'arrival': the arrival time is not a finite"),
    (lambda: _rows(arrival=[0.0, 1.0, 2.0, np.inf, 4.0]), "row 4, column 'arrival'"),
    (lambda: _rows(arrival=[-5.0, 1.0, 2.0, 3.0, 4.0]), "row 1, column 'arrival': negative arrival time"),
    (lambda: _rows(colour=[0, 1, 2, 3, 0]), "row 4, column 'colour'"),
])
def test_impossible_values_are_refused(tmp_path, suffix, table, match):
    """Each of these passed ``validate`` as '3 checks hold' (a mean delay of -4 ms for departures before
    arrivals)."""
    p = tmp_path / f"t{suffix}"
    write_trace(table(), p)
    with pytest.raises(TraceError, match=match):
        read_trace(p)


def test_a_kept_packet_without_departure_is_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = _rows()
    dep = pa.array([0.004, None, 2.004, 3.004, 4.004], type=pa.float64())
    t = t.set_column(t.column_names.index("departure"), "departure", dep)
    pq.write_table(t, tmp_path / "t.parquet")
    with pytest.raises(TraceError, match="row 2, column 'departure': a packet that is not dropped has no departure"):
        read_trace(tmp_path / "t.parquet")


def test_special_files_are_not_read_as_traces(tmp_path):
    with pytest.raises(TraceError, match="not a regular file"):
        read_trace("/dev/zero")
    with pytest.raises(TraceError, match="is a directory"):
        read_trace(tmp_path)
    with pytest.raises(TraceError, match="is a directory"):
        read_timestamps_csv(tmp_path)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(allow_nan=True, allow_infinity=True), st.floats(allow_nan=True,
                                                                                      allow_infinity=True),
                          st.integers(-2**31, 2**31 - 1), st.booleans(), st.integers(-128, 127)),
                min_size=1, max_size=20),
       st.sampled_from([".parquet", ".csv"]))
def test_any_trace_reads_as_a_consistent_trace_or_a_trace_error(tmp_path_factory, rows, suffix):
    """Fuzz: whatever values a schema-typed trace holds, reading it gives TraceError or a trace whose times are
    finite and non-negative, whose kept packets leave after they arrive, and whose sizes are non-negative."""
    arr = np.array([r[0] for r in rows])
    dep = np.array([r[1] for r in rows])
    drop = np.array([r[3] for r in rows])
    t = make_table(flow="f", cls="EF", size=[r[2] for r in rows], arrival=arr, departure=dep, dropped=drop,
                   colour=[r[4] for r in rows])
    p = tmp_path_factory.mktemp("tr") / f"t{suffix}"
    write_trace(t, p)
    try:
        out = read_trace(p)
    except TraceError:
        return
    a = out.column("arrival").to_numpy()
    d = out.column("departure").to_numpy(zero_copy_only=False).astype(float)
    kept = ~out.column("dropped").to_numpy(zero_copy_only=False).astype(bool)
    assert np.all(np.isfinite(a)) and np.all(a >= 0)
    assert np.all(d[kept] >= a[kept])
    assert np.all(out.column("size").to_numpy() >= 0)
