"""Tests for validation/trace.py (the trace schema), csv_import.py and compare.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qosbound.errors import TraceError
from qosbound.trace_verdicts import compare
from qosbound.validation.compare import arrays, ccdf, ks_test, trace_results
from qosbound.validation.csv_import import read_timestamps_csv
from qosbound.validation.trace import COLUMNS, make_table, read_trace, write_trace
from qosbound.results import Interval, Result


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


def test_timestamp_csv(tmp_path):
    """A timestamp CSV in ms with absolute times and a lost packet becomes a trace starting at 0."""
    p = tmp_path / "ts.csv"
    p.write_text("t_in,t_out,dscp,size\n1000.0,1002.5,46,200\n1001.0,,10,300\n1003.0,1004.0,14,300\n")
    t = read_timestamps_csv(p, time_unit="ms")
    assert t.column("arrival").to_pylist() == pytest.approx([0.0, 0.001, 0.003])
    assert t.column("dropped").to_pylist() == [False, True, False]
    assert t.column("cls").to_pylist() == ["EF", "AF1", "AF1"]
    assert t.column("colour").to_pylist() == [0, 0, 2]
    assert t.column("departure").to_pylist()[0] == pytest.approx(0.0025)


@pytest.mark.parametrize("text,match", [
    ("a,b\n1,2\n", "no arrival column"),
    ("arrival,departure\n1,0.5\n", "departs before"),
    ("arrival,departure\n1,x\n", "line 2"),
    ("arrival,departure\n1\n", "fields"),
])
def test_timestamp_csv_errors(tmp_path, text, match):
    """Bad timestamp CSVs are refused with the line and the problem, never skipped."""
    p = tmp_path / "ts.csv"
    p.write_text(text)
    with pytest.raises(TraceError, match=match):
        read_timestamps_csv(p)


def test_trace_results_exponential():
    """On i.i.d. exponential delays the batch-means 95 % intervals of the mean, p99 and a CCDF point
    contain the true values (a failure has probability about 0.15 over the three: seeds are fixed)."""
    rng = np.random.default_rng(7)
    n = 40_000
    mean = 0.01
    arr = np.arange(n) * 1e-3
    d = rng.exponential(mean, n)
    t = make_table(flow="EF", cls="EF", size=100, arrival=arr, departure=arr + d, dropped=np.zeros(n, bool))
    res = {r.metric: r for r in trace_results(t, ["EF.delay.mean", "EF.delay.p99", "EF.delay.ccdf@20ms"])}
    assert res["EF.delay.mean"].interval.contains(mean)
    assert res["EF.delay.p99"].interval.contains(-mean * np.log(0.01))
    assert res["EF.delay.ccdf@20ms"].interval.contains(np.exp(-2.0))
    assert res["EF.delay.mean"].provenance["replications"] == 20


def test_drop_metrics_by_colour():
    """AF1.drop.AF13 counts only red AF1 packets; AF1.drop counts all of them."""
    n = 4000
    colour = np.arange(n) % 3
    dropped = colour == 2
    t = make_table(flow="a", cls="AF1", size=100, arrival=np.arange(n) * 1e-3,
                   departure=np.where(dropped, np.nan, np.arange(n) * 1e-3 + 1e-3), dropped=dropped, colour=colour)
    res = {r.metric: r for r in trace_results(t, ["AF1.drop.AF13", "AF1.drop.AF11", "AF1.drop", "AF1.throughput"])}
    assert res["AF1.drop.AF13"].value == 1.0
    assert res["AF1.drop.AF11"].value == 0.0
    assert res["AF1.drop"].value == pytest.approx(1 / 3, abs=1e-3)
    assert res["AF1.throughput"].value == pytest.approx(2 / 3 * 100 * 8 / 1e-3, rel=0.01)


def test_compare_agreement_and_bounds():
    """An estimate within its standard errors agrees; one far off disagrees; a bound below the observed mean fails."""
    est = Result("EF.delay.mean", "trace", 0.0102, "s", Interval(0.0098, 0.0106, "95% CI"),
                 {"std_error": 0.0002, "replications": 20})
    good = Result("EF.delay.mean", "model-checked", 0.0100, "s", Interval(0.0100, 0.0100, "precision 1e-10"))
    bad = Result("EF.delay.mean", "model-checked", 0.0120, "s", Interval(0.0120, 0.0120, "precision 1e-10"))
    bound = Result("EF.delay.worst_case_mean", "closed-form", 0.009, "s", Interval.upper_bound(0.009),
                   bounds=("EF.delay.mean",))
    v = {x.method: x for x in compare([good, bound], [est])}
    assert v["trace vs model-checked"].status == "agree" and v["closed-form vs trace"].status == "disagree"
    assert compare([bad], [est])[0].status == "disagree"


def test_ks_and_ccdf():
    """KS rejects two clearly different samples and not two draws of the same law; ccdf is 1 - ECDF."""
    rng = np.random.default_rng(3)
    a, b, c = rng.exponential(1, 3000), rng.exponential(1, 3000), rng.exponential(1.5, 3000)
    assert ks_test(a, b).pvalue > 1e-3
    assert ks_test(a, c).pvalue < 1e-6
    assert ccdf(np.array([1.0, 2.0, 3.0]), np.array([0.5, 2.0, 3.0])).tolist() == pytest.approx([1.0, 1 / 3, 0.0])


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


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="0123456789.,-\nabcdefinlost_", max_size=200))
def test_timestamp_csv_never_crashes(tmp_path_factory, body):
    """Arbitrary text after a valid header either reads as a trace or raises TraceError, nothing else."""
    p = tmp_path_factory.mktemp("csv") / "ts.csv"
    p.write_text("arrival,departure,dscp\n" + body)
    try:
        t = read_timestamps_csv(p)
    except TraceError:
        return
    assert t.num_rows >= 1
    arr = t.column("arrival").to_numpy()
    assert np.all(np.isfinite(arr)) and arr.min() == 0.0


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


@pytest.mark.parametrize("body,match", [
    ("1,0.5,5\n", "departs before it arrives"),
    ("0,0.1,-5\n", "negative packet size"),
    ("0,inf,5\n", "departure time is not a finite number"),
])
def test_timestamp_csv_refuses_impossible_rows(tmp_path, body, match):
    p = tmp_path / "ts.csv"
    p.write_text("arrival,departure,size\n" + body)
    with pytest.raises(TraceError, match=match):
        read_timestamps_csv(p)


def test_timestamp_csv_in_latin1_is_refused(tmp_path):
    p = tmp_path / "ts.csv"
    p.write_bytes("arrival,departure,cls\n0,0.1,caf\xe9\n".encode("latin-1"))
    with pytest.raises(TraceError, match="not UTF-8"):
        read_timestamps_csv(p)


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
