"""Application quality functions of Claypool, Kinicki & Kumar, section 2: Q = min(Q_d(delay), Q_t(throughput)), in [0, 1].

Each function is one SymPy ``Piecewise`` in the paper's units (one-way delay in
ms, throughput in kbit/s), re-expressed in SI (seconds, bit/s) by substitution
and lambdified (``"numpy"``, vectorised). The public functions take SI numbers.

The text extraction of Claypool, Kinicki & Kumar is garbled in places. The reading chosen here
(each choice is tested against the values the text quotes):

* **Audio (and video) delay quality**, section 2.1.1, eq. list under Figure 2.
  Quoted values: 1 at 0 ms, 0.98 at 150 ms, 0.7 at 300 ms (MOS 3.5), 0.5 at
  400 ms (MOS 3), "above 400 ms the degradation is about twice that from 150
  to 400 ms". The printed first slope "0.00133" would give 0.80 at 150 ms,
  contradicting the quoted 0.98; a lost zero restores it: ``1 - 0.000133 d``.
  The other pieces are as printed: ``1.268 - 0.00192 d`` on 150..400 ms
  (0.98 at 150, 0.692 at 300, 0.5 at 400), ``2.1 - 0.004 d`` on 400..525 ms
  (0.5 at 400, 0 at 525; slope 0.004 ~ twice 0.00192), 0 beyond 525 ms.
  Section 2.2.1 says video uses the same delay quality.
* **Audio throughput quality**, section 2.1.2: 1 at 128 kbit/s, 0.83 at 64,
  "linear as the throughput is halved" (one encoding bit per halving, the
  figure's ticks 0.17 apart: 1/6 per halving), 0 below 4 kbit/s (the lowest
  codec rate). The printed ``0.24045 log(T) - 0.17`` is the natural log:
  0.24045 = 1/(6 ln 2), and -0.17 is -1/6 rounded. Chosen:
  ``Q_t = log2(T / 2 kbit/s) / 6`` on 4..128 kbit/s, 1 above, 0 below 4.
* **Video throughput quality**, section 2.2.2: the equations lost their
  coefficients; the text gives the points (160, 0.6), (384, 0.8), (512, 0.85),
  (768, 0.9), (1500, 1) kbit/s and 1 above 1.5 Mbit/s. Chosen: linear between
  these points, and below 160 kbit/s linear to 0 at 0 kbit/s (4x steeper than
  on 160..384: the text's "falls off sharply").
* **File transfer**, section 2.3: delay quality 1 (router delays are far below
  the tens of seconds that matter; the text ignores delay up to 1000 ms and
  so does this reading at any delay); throughput quality ``min(1, T / S)`` for a
  file of ``S`` bits (finishing in one second is full quality).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

from qosbound.errors import ScenarioError

__all__ = ["delay_s", "thr", "file_bits", "audio_delay_expr", "audio_throughput_expr",
           "video_delay_expr", "video_throughput_expr", "file_delay_expr", "file_throughput_expr",
           "VIDEO_POINTS", "audio_delay_quality", "audio_throughput_quality", "video_delay_quality",
           "video_throughput_quality", "file_delay_quality", "file_throughput_quality", "quality", "APPS"]

#: One-way delay, s.
delay_s = sp.Symbol("delay", nonnegative=True)
#: Throughput, bit/s.
thr = sp.Symbol("T", nonnegative=True)
#: File size, bits.
file_bits = sp.Symbol("S", positive=True)

_D = sp.Symbol("D_ms", nonnegative=True)  # delay in ms (the paper's unit)
_X = sp.Symbol("X_kbps", nonnegative=True)  # throughput in kbit/s

_audio_delay_ms = sp.Piecewise(
    (1 - sp.Rational(133, 1000000) * _D, _D <= 150),
    (sp.Rational(1268, 1000) - sp.Rational(192, 100000) * _D, _D <= 400),
    (sp.Rational(21, 10) - sp.Rational(4, 1000) * _D, _D <= 525),
    (0, True),
)
_audio_thr_kbps = sp.Piecewise(
    (0, _X < 4),
    (sp.log(_X / 2) / (6 * sp.log(2)), _X <= 128),
    (1, True),
)

#: Claypool, Kinicki & Kumar section 2.2.2: (kbit/s, quality) points of the video throughput quality.
VIDEO_POINTS = ((0, 0), (160, sp.Rational(6, 10)), (384, sp.Rational(8, 10)), (512, sp.Rational(85, 100)),
                (768, sp.Rational(9, 10)), (1500, 1))


def _linear_pieces(points, x):
    pieces = []
    for (x0, y0), (x1, y1) in zip(points[:-1], points[1:]):
        pieces.append((sp.sympify(y0) + (sp.sympify(y1) - y0) * (x - x0) / (x1 - x0), x <= x1))
    pieces.append((sp.sympify(points[-1][1]), True))
    return sp.Piecewise(*pieces)


_video_thr_kbps = _linear_pieces(VIDEO_POINTS, _X)

#: Claypool, Kinicki & Kumar section 2.1.1 (reading above): audio delay quality of a one-way delay in seconds.
audio_delay_expr = _audio_delay_ms.subs(_D, 1000 * delay_s)
#: Claypool, Kinicki & Kumar section 2.1.2 (reading above): audio throughput quality of a throughput in bit/s.
audio_throughput_expr = _audio_thr_kbps.subs(_X, thr / 1000)
#: Claypool, Kinicki & Kumar section 2.2.1: video delay quality = audio delay quality.
video_delay_expr = audio_delay_expr
#: Claypool, Kinicki & Kumar section 2.2.2 (reading above): video throughput quality, bit/s.
video_throughput_expr = _video_thr_kbps.subs(_X, thr / 1000)
#: Claypool, Kinicki & Kumar section 2.3.1: file-transfer delay quality (1 at router delays).
file_delay_expr = sp.Integer(1)
#: Claypool, Kinicki & Kumar section 2.3.2: Q_t(T, S) = T / S, at most 1 (S in bits, T in bit/s).
file_throughput_expr = sp.Min(1, thr / file_bits)


@lru_cache(maxsize=None)
def _fn(name: str):
    table = {
        "ad": ((delay_s,), audio_delay_expr),
        "at": ((thr,), audio_throughput_expr),
        "vt": ((thr,), video_throughput_expr),
        "ft": ((thr, file_bits), file_throughput_expr),
    }
    args, expr = table[name]
    return sp.lambdify(args, expr, "numpy")


def _arr(x, what):
    a = np.asarray(x, dtype=float)
    if np.any(~np.isfinite(a)) or np.any(a < 0):
        raise ScenarioError(f"{what} must be finite and non-negative", field=what)
    return a


def audio_delay_quality(delay):
    """Audio-conference delay quality of a one-way delay in seconds (Claypool, Kinicki & Kumar section 2.1.1)."""
    a = _arr(delay, "delay")
    return np.asarray(_fn("ad")(a), dtype=float) + 0.0 * a


def audio_throughput_quality(rate):
    """Audio-conference throughput quality of a throughput in bit/s (Claypool, Kinicki & Kumar section 2.1.2)."""
    a = _arr(rate, "throughput")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(_fn("at")(a), dtype=float) + 0.0 * a
    return np.where(a < 4000.0, 0.0, out)


def video_delay_quality(delay):
    """Video-conference delay quality (= audio's, Claypool, Kinicki & Kumar section 2.2.1)."""
    return audio_delay_quality(delay)


def video_throughput_quality(rate):
    """Video-conference throughput quality of a throughput in bit/s (Claypool, Kinicki & Kumar section 2.2.2)."""
    a = _arr(rate, "throughput")
    return np.asarray(_fn("vt")(a), dtype=float) + 0.0 * a


def file_delay_quality(delay):
    """File-transfer delay quality: 1 (Claypool, Kinicki & Kumar section 2.3.1)."""
    return np.ones_like(_arr(delay, "delay"))


def file_throughput_quality(rate, size_bits):
    """File-transfer throughput quality min(1, T/S) (Claypool, Kinicki & Kumar section 2.3.2); S in bits."""
    a = _arr(rate, "throughput")
    s = np.asarray(size_bits, dtype=float)
    if np.any(~(s > 0)):
        raise ScenarioError("file size must be positive", field="file_size")
    return np.asarray(_fn("ft")(*np.broadcast_arrays(a, s)), dtype=float)


APPS = ("audio", "video", "file")


def quality(app: str, delay, rate, size_bits=None):
    """Q = min(Q_d(delay), Q_t(throughput)) for ``app`` in audio, video, file (Claypool, Kinicki & Kumar eq. (1))."""
    if app == "audio":
        return np.minimum(audio_delay_quality(delay), audio_throughput_quality(rate))
    if app == "video":
        return np.minimum(video_delay_quality(delay), video_throughput_quality(rate))
    if app == "file":
        if size_bits is None:
            raise ScenarioError("file transfer quality needs the file size", field="file_size")
        return np.minimum(file_delay_quality(delay), file_throughput_quality(rate, size_bits))
    raise ScenarioError(f"unknown application '{app}'; expected one of {', '.join(APPS)}", field="app")
