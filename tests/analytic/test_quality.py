"""Tests of qosbound.analytic.quality: Claypool, Kinicki & Kumar section 2 quality functions, reconstructed breakpoints."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qosbound.analytic import quality as Q
from qosbound.errors import ScenarioError
from qosbound.analytic.tsq import reference_data

REF = reference_data()["quality"]


@pytest.mark.parametrize("ms,value", REF["audio_delay"]["points_ms"])
def test_audio_delay_quoted_values(ms, value):
    """Audio delay quality reproduces the quoted values (Claypool, Kinicki & Kumar section 2.1.1)."""
    assert float(Q.audio_delay_quality(ms / 1000)) == pytest.approx(value, abs=REF["audio_delay"]["tolerance"])


def test_audio_delay_zero_beyond_525ms():
    """Quality reaches 0 at 525 ms and stays there."""
    z = REF["audio_delay"]["zero_at_ms"] / 1000
    assert float(Q.audio_delay_quality(z)) == pytest.approx(0.0, abs=1e-12)
    assert np.all(Q.audio_delay_quality([0.6, 1.0, 10.0]) == 0)


def test_audio_delay_slope_doubles_after_400ms():
    """Above 400 ms the degradation is about twice that between 150 and 400 ms."""
    s1 = (Q.audio_delay_quality(0.15) - Q.audio_delay_quality(0.4)) / 0.25
    s2 = (Q.audio_delay_quality(0.4) - Q.audio_delay_quality(0.5)) / 0.1
    assert 1.8 < s2 / s1 < 2.3


@pytest.mark.parametrize("kbps,value", REF["audio_throughput"]["points_kbps"])
def test_audio_throughput_quoted_values(kbps, value):
    """Audio throughput quality: 1/6 per halving from 1 at 128 kbit/s (Claypool, Kinicki & Kumar section 2.1.2, Figure 3)."""
    assert float(Q.audio_throughput_quality(kbps * 1000)) == pytest.approx(value, abs=REF["audio_throughput"]["tolerance"])


def test_audio_throughput_zero_below_codec_rate():
    """Below 4 kbit/s (the lowest codec rate) the quality is 0."""
    assert np.all(Q.audio_throughput_quality([0.0, 1000.0, 3999.0]) == 0)


def test_printed_coefficient_is_natural_log():
    """The printed 0.24045 log(T) - 0.17 is 1/(6 ln 2) ln(T) - 1/6 to print precision."""
    T = np.array([8.0, 32.0, 100.0])
    printed = 0.24045 * np.log(T) - 0.17
    assert np.allclose(Q.audio_throughput_quality(T * 1000), printed, atol=0.004)


@pytest.mark.parametrize("kbps,value", REF["video_throughput"]["points_kbps"])
def test_video_throughput_quoted_values(kbps, value):
    """Video throughput quality passes through the quoted points (Claypool, Kinicki & Kumar section 2.2.2)."""
    assert float(Q.video_throughput_quality(kbps * 1000)) == pytest.approx(value, abs=1e-12)


def test_file_quality():
    """File transfer: quality 1 when the file moves in one second, proportional below (section 2.3.2)."""
    f = REF["file_throughput"]
    assert float(Q.file_throughput_quality(f["full_quality_bps"], f["size_bits"])) == pytest.approx(1.0)
    assert float(Q.file_throughput_quality(f["full_quality_bps"] / 4, f["size_bits"])) == pytest.approx(0.25)
    assert float(Q.quality("file", 10.0, 2e7, 1e7)) == 1.0


@settings(max_examples=200, deadline=None)
@given(a=st.floats(0, 2), b=st.floats(0, 2))
def test_delay_quality_monotone_and_bounded(a, b):
    """Delay quality lies in [0, 1] and never increases with delay."""
    lo, hi = min(a, b), max(a, b)
    qa, qb = float(Q.audio_delay_quality(lo)), float(Q.audio_delay_quality(hi))
    assert 0 <= qb <= qa + 1e-4 <= 1 + 1e-4  # 1e-4: the seed's pieces meet within 5e-5 at 150 ms


@settings(max_examples=200, deadline=None)
@given(a=st.floats(0, 5e6), b=st.floats(0, 5e6), app=st.sampled_from(["audio", "video"]))
def test_throughput_quality_monotone_and_bounded(a, b, app):
    """Throughput quality lies in [0, 1] and never decreases with throughput."""
    f = Q.audio_throughput_quality if app == "audio" else Q.video_throughput_quality
    lo, hi = min(a, b), max(a, b)
    assert 0 <= float(f(lo)) <= float(f(hi)) <= 1


@settings(max_examples=100, deadline=None)
@given(d=st.floats(0, 1), t=st.floats(0, 2e6))
def test_quality_is_minimum(d, t):
    """Q(d, T) = min(Q_d(d), Q_t(T)) (Claypool, Kinicki & Kumar eq. (1))."""
    assert float(Q.quality("audio", d, t)) == min(float(Q.audio_delay_quality(d)), float(Q.audio_throughput_quality(t)))


def test_bad_inputs_raise():
    """Negative or non-finite inputs and unknown applications are errors, not numbers."""
    with pytest.raises(ScenarioError):
        Q.audio_delay_quality(-1)
    with pytest.raises(ScenarioError):
        Q.audio_throughput_quality(float("nan"))
    with pytest.raises(ScenarioError):
        Q.quality("game", 0.1, 1e5)
