"""Tests for validation/csv_import.py: timestamp CSVs read as traces, bad ones refused with the line and the problem."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qosbound.errors import TraceError
from qosbound.validation.csv_import import read_timestamps_csv


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
