"""Media synchronization at a receiver: a playout (buffering) control of media units, and the application-level
measures Takeo & Tasaka judge streaming with.

Source: Takeo & Tasaka, "Application-Level QoS of Web Access and Streaming Services with AF Service on DiffServ"
(2003), section III.C: the receivers output the media units (MUs: 400 voice samples, or one video frame) by the
enhanced Virtual-Time Rendering (VTR) algorithm of Tasaka, Nunome & Ishibashi, "Live media synchronization quality
of a retransmission-based error recovery scheme" (2000), with the initial buffering time ``J_max`` = 100 ms and the
maximum allowable delay ``Delta_al`` = 400 ms; its other parameters are those of an earlier paper (in Japanese) that
the 2003 paper does not restate. Section III.E defines the measures:

* coefficient of variation of the output interval (intra-stream): the standard deviation of the intervals between
  consecutive MU outputs over their mean (:meth:`Output.cv`);
* mean square error of inter-stream synchronization: the mean over the slave (video) MUs of the square of the
  difference between a video MU's output time and its *derived* output time, the output time of the corresponding
  master (voice) MU plus the difference of the two MUs' timestamps (:func:`sync_errors`, :func:`mse`).

The playout model (:func:`playout`), per stream, in timestamp order:

1. The first MU received is output ``J_max`` after its arrival: the stream's output offset (output time minus
   timestamp) starts at its delay plus ``J_max``.
2. Every later MU is output at its timestamp plus the current offset (its target output time), or on arrival when it
   arrives after that target, and then the offset grows by the lateness: the virtual time of VTR expands, so later
   MUs keep the spacing of their timestamps behind the late one.
3. An MU whose delay (arrival minus timestamp) exceeds ``Delta_al`` is discarded (skipped), and the offset never
   exceeds ``Delta_al``.

Assumptions where the paper is silent (the choices of this model, not of the paper):

* No target-time shortening: the offset only grows (it is the running maximum of the MUs' delays, from the first
  MU's delay plus ``J_max``, capped at ``Delta_al``). VTR also shortens the virtual time when MUs wait long in the
  buffer, with thresholds the 2003 paper does not give.
* No inter-stream control: voice and video are played out independently, each by steps 1-3. The enhanced VTR
  algorithm also adjusts the slave (video) stream's output to the master (voice); here the inter-stream error is
  that of two independent intra-stream controls, and is not reduced by any such adjustment.
* Outputting takes no time, and an MU is output whole at one instant (a video frame when its last packet has
  arrived; a frame missing a packet is lost).
* The corresponding voice MU of a video MU is the output voice MU with the nearest timestamp, when it is within half
  an MU interval (``pair_within``); a video MU without one is left out of the error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Vtr", "Output", "playout", "sync_errors", "mse"]


@dataclass(frozen=True)
class Vtr:
    """The playout parameters (s): ``initial_buffering`` (J_max) and ``max_delay`` (Delta_al) of Takeo & Tasaka,
    section III.C."""

    initial_buffering: float = 0.100
    max_delay: float = 0.400

    def __post_init__(self):
        if not (self.initial_buffering >= 0 and self.max_delay > 0):
            raise ValueError("J_max must be >= 0 and Delta_al > 0 (s)")


@dataclass(frozen=True)
class Output:
    """What the playout of one stream did: ``timestamp`` and ``output`` (s) of every MU output, in order; ``received``
    MUs given (lost ones excluded) and ``skipped`` of them discarded for a delay above Delta_al."""

    timestamp: np.ndarray
    output: np.ndarray
    received: int
    skipped: int

    @property
    def offsets(self) -> np.ndarray:
        """Output time minus timestamp of every MU output (s)."""
        return self.output - self.timestamp

    def cv(self) -> float:
        """Coefficient of variation of the output interval (1): population standard deviation of the intervals
        between consecutive outputs over their mean; nan with fewer than two intervals."""
        d = np.diff(self.output)
        if d.size < 2 or not d.mean() > 0:
            return math.nan
        return float(d.std() / d.mean())

    @property
    def skip_rate(self) -> float:
        """Skipped MUs over the MUs received."""
        return self.skipped / self.received if self.received else 0.0


def playout(timestamp, arrival, vtr: Vtr = Vtr()) -> Output:
    """Output times of a stream's MUs by the model of the module docstring. ``timestamp``: generation time of each
    MU received (s, increasing); ``arrival``: its arrival time at the receiver (s; nan: lost, left out)."""
    ts = np.asarray(timestamp, float)
    ar = np.asarray(arrival, float)
    if ts.shape != ar.shape:
        raise ValueError("timestamp and arrival must have the same length")
    if ts.size > 1 and np.any(np.diff(ts) <= 0):
        raise ValueError("timestamps must increase")
    keep = np.isfinite(ar)
    ts, ar = ts[keep], ar[keep]
    delay = ar - ts
    if np.any(delay < 0):
        raise ValueError("an MU arrives before its timestamp")
    ok = delay <= vtr.max_delay
    out_ts, out = [], []
    offset = math.nan
    for t, d in zip(ts[ok], delay[ok]):
        if math.isnan(offset):
            offset = min(d + vtr.initial_buffering, vtr.max_delay)
        offset = max(offset, d)     # a late MU is output on arrival: the virtual time expands
        out_ts.append(t)
        out.append(t + offset)
    return Output(np.asarray(out_ts, float), np.asarray(out, float), int(ts.size), int((~ok).sum()))


def sync_errors(master: Output, slave: Output, pair_within: float) -> np.ndarray:
    """Per slave MU with a corresponding master MU: its output time minus its derived output time (the master MU's
    output time plus the difference of their timestamps), i.e. the slave's offset minus the master's (s). The
    corresponding master MU is the output one with the nearest timestamp, if within ``pair_within`` s."""
    if master.timestamp.size == 0 or slave.timestamp.size == 0:
        return np.zeros(0)
    i = np.searchsorted(master.timestamp, slave.timestamp)
    lo = np.clip(i - 1, 0, master.timestamp.size - 1)
    hi = np.clip(i, 0, master.timestamp.size - 1)
    near = np.where(np.abs(master.timestamp[hi] - slave.timestamp) < np.abs(master.timestamp[lo] - slave.timestamp),
                    hi, lo)
    gap = np.abs(master.timestamp[near] - slave.timestamp)
    pair = gap <= pair_within
    derived = master.output[near] + (slave.timestamp - master.timestamp[near])
    return (slave.output - derived)[pair]


def mse(errors) -> float:
    """Mean square of the synchronization errors (s^2); nan without any."""
    e = np.asarray(errors, float)
    return float(np.mean(e * e)) if e.size else math.nan
