"""The playout model of Takeo & Tasaka's receivers (qosbound/validation/playout.py) on traces computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from qosbound.validation.playout import Output, Vtr, mse, playout, sync_errors

T = 0.05                       # s between MUs (20 MU/s, Table IV)
TS = np.arange(10) * T


def test_constant_delay_gives_regular_output_and_no_sync_error():
    """Every MU delayed 30 ms: output J_max after each arrival, intervals all 50 ms (CV 0); voice and video with the
    same constant delays are in sync (error 0)."""
    o = playout(TS, TS + 0.03)
    assert np.allclose(o.output, TS + 0.13) and o.cv() == pytest.approx(0.0, abs=1e-12) and o.skipped == 0
    v = playout(TS + 0.01, TS + 0.01 + 0.03)
    assert np.allclose(sync_errors(o, v, T / 2), 0.0) and mse(sync_errors(o, v, T / 2)) == pytest.approx(0.0)


def test_a_late_unit_is_output_on_arrival_and_delays_the_rest():
    """MU 4 arrives 250 ms after its timestamp (150 ms after its target at offset 100 ms): it is output on arrival,
    and every later MU keeps the 50-ms spacing behind it (offset 250 ms). Intervals: eight of 50 ms and one of
    200 ms, mean 1/15 s, variance 1/450 s^2: CV = 15 / sqrt(450) = 1 / sqrt(2)."""
    arr = TS + 0.0
    arr[4] = TS[4] + 0.25
    o = playout(TS, arr)
    want = np.where(np.arange(10) < 4, TS + 0.1, TS + 0.25)
    assert np.allclose(o.output, want)
    d = np.diff(want)                               # 50, 50, 50, 200, 50, 50, 50, 50, 50 ms
    assert d[3] == pytest.approx(0.2) and o.cv() == pytest.approx(d.std() / d.mean())
    assert o.cv() == pytest.approx(1 / math.sqrt(2), rel=1e-12)


def test_the_late_unit_shifts_the_inter_stream_error_by_its_lateness():
    """Voice on time (offset 100 ms), video with one frame 150 ms late: the video frames from it on are 150 ms
    behind their derived output time; MSE = 6 of 10 frames x (150 ms)^2 / 10 = 13,500 ms^2."""
    voice = playout(TS, TS)
    arr = TS.copy()
    arr[4] += 0.25
    video = playout(TS, arr)
    e = sync_errors(voice, video, T / 2)
    assert np.allclose(e, np.where(np.arange(10) < 4, 0.0, 0.15))
    assert mse(e) * 1e6 == pytest.approx(6 * 150 ** 2 / 10)


def test_a_unit_later_than_the_maximum_allowable_delay_is_skipped():
    """A delay of 450 ms > Delta_al = 400 ms: the MU is discarded (one skip of ten), the offset is unchanged, and the
    output interval around it is 100 ms."""
    arr = TS + 0.02
    arr[5] = TS[5] + 0.45
    o = playout(TS, arr)
    assert o.skipped == 1 and o.skip_rate == pytest.approx(0.1) and o.received == 10
    assert np.allclose(o.offsets, 0.12) and np.allclose(np.diff(o.output), [T] * 4 + [2 * T] + [T] * 3)


def test_lost_units_are_left_out_and_the_offset_never_passes_the_maximum():
    """nan arrivals are lost (not received); a first MU delayed 350 ms starts at the cap Delta_al, not 450 ms."""
    arr = TS + 0.35
    arr[[2, 3]] = np.nan
    o = playout(TS, arr)
    assert o.received == 8 and o.output.size == 8 and np.allclose(o.offsets, 0.4)


def test_parameters_are_the_papers():
    """Section III.C: J_max = 100 ms, Delta_al = 400 ms."""
    assert Vtr() == Vtr(0.1, 0.4)
    with pytest.raises(ValueError):
        Vtr(-0.1, 0.4)


def test_pairs_only_within_half_an_interval():
    """A video frame whose nearest voice MU was lost (more than half an interval away) is left out of the error."""
    voice = Output(np.array([0.0, 0.1]), np.array([0.1, 0.2]), 2, 0)
    video = Output(np.array([0.0, 0.05, 0.1]), np.array([0.12, 0.17, 0.22]), 3, 0)
    e = sync_errors(voice, video, 0.02)
    assert np.allclose(e, [0.02, 0.02])


def test_bad_traces_are_refused():
    with pytest.raises(ValueError):
        playout(TS, TS - 0.01)
    with pytest.raises(ValueError):
        playout(TS[::-1], TS[::-1])
    assert math.isnan(mse([])) and math.isnan(playout(TS[:2], TS[:2]).cv())
