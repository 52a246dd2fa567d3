"""TFRC (RFC 5348) and gTFRC (Jourjon, Lochin & Sénac 2008, eq. (2)): one sender model, its receiver, and the
feedback model as a parameter (numba kernels).

The networks that carry the packets call these kernels: :mod:`qosbound.validation.dumbbell` (a TFRC flow type
beside TCP and UDP) and :mod:`qosbound.validation.tsq_sim` (the TSQ bottleneck). This module holds the state of
each TFRC connection and what each end does with a packet, a feedback or a timer, as
:mod:`qosbound.validation.tcp` does for TCP.

The rate rule (both models)
---------------------------
After a loss event rate ``p > 0`` is known the allowed rate is

    X = min(X_max, max(min(max(X_calc(s, R, p), g), 2 X_recv), s / t_mbi))

(RFC 5348 section 4.3 with gTFRC's target ``g``, Jourjon et al. 2008 eq. (2); ``g = 0``: plain TFRC; ``X_max``
an application cap such as a codec's rate, infinite by default), evaluated by the one SymPy definition
:data:`qosbound.analytic.tfrc.gtfrc_expr` (lambdified and compiled, never re-typed) with b = 1 and t_RTO = 4R.
Before the first loss event the rate doubles once per RTT: ``X = min(X_max, max(min(2X, 2 X_recv), W_init/R))``
with ``W_init = min(4s, max(2s, 4380 B))`` (RFC 5348 4.2 / 4.3, RFC 3390). The loss event rate is
``1 / I_mean`` over the 8 most recent loss intervals (RFC 5348 5.4,
:func:`qosbound.analytic.tfrc.mean_loss_interval`, jitted), a loss event being the losses within one RTT of the
first one. RTT estimates are smoothed as RFC 5348 4.3 does, ``R = 0.9 R + 0.1 R_sample``. Rates are bytes/s,
sizes bytes, times s.

The feedback models (``FEEDBACK``)
----------------------------------
* ``"receiver"`` (RFC 5348; what QSTP's implementation does: its ``Create Feedback`` module at the receiver
  "computes the loss event rate and creates the Feedback message", Jourjon et al. 2008 section 4). The receiver
  detects losses from the sequence numbers (the path does not reorder: a gap is a loss at once, no three-packet
  wait), interpolates the send time of each lost packet between its neighbours' (RFC 5348 5.2) and starts a new
  loss event when that time is more than one RTT after the current event's start. The RTT it uses (there and
  as its feedback period) is the sender's current estimate, the path's base RTT before the first; with
  ``header_rtt`` it is the estimate the latest data packet carried in its header (RFC 5348 3.2.1), up to one
  path delay older. qosbound's QSTP runs use the sender's current estimate (as its earlier simulator did); the
  header's value lowers the jitter of Jourjon et al.'s Fig. 7 from 6.01 to 5.96 ms and Fig. 4's TFRC
  throughput from about 507 to 504 kbit/s (full mode, seed 2008).
  The first loss interval is synthesised from the receive rate (RFC 5348 6.3.1: the p at which X_calc equals
  X_recv, X_recv at least s/(2R)). Feedback (the echoed send time of the latest packet, the time it was held,
  X_recv over the last feedback period, p) is sent once per RTT and at once on a new loss event, none when
  nothing arrived (RFC 5348 6.1, 6.2); the network carries it back (it can queue and be lost there). The sender
  starts at one packet per second, sets X = W_init/R at the first feedback (RFC 5348 4.2), applies the rate rule
  at every feedback, and halves X (never below s/t_mbi, gTFRC never below g) when its nofeedback timer,
  max(4R, 2s/X), expires (RFC 5348 4.4; first 2 s). The receive limit is 2 X_recv of the latest report (RFC
  3448's form, the one Jourjon et al. 2008 write), not RFC 5348's X_recv_set.
* ``"sender"`` (immediate feedback; what the TSQ paper's simulations imply: Claypool, Kinicki & Kumar make their
  interactive flows "TCP-friendly" with no feedback protocol described, and qosbound's TSQ simulator has always
  modelled them this way). The sender learns of each drop when it happens and of each delivered packet's RTT
  (the network's driver supplies the samples), keeps the loss history itself (the packets it sent since the
  current loss event started, counted at send; a drop more than one R after the current event's start opens a
  new one; the first loss event halves X, never below s/t_mbi, and its interval is the packets sent so far), and
  applies the rate rule once per R at a send time, with no receive limit (X_recv infinite). It starts at
  ``X = min(X_max, W_init / R0)`` with R0 the path's base RTT, as if the first feedback had arrived at once.

State: ``Q`` (flows x :data:`NFIELDS`, fields named by the constants below) and ``H`` (flows x 8, the closed loss
intervals in packets, most recent first). As the TCP kernels, these allocate nothing and are compiled without
reference counting and without raising (see :mod:`qosbound.validation.dumbbell_loop`).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from numba import njit
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)

from qosbound.analytic import tfrc as TF

__all__ = ["FEEDBACK", "NFIELDS", "WEIGHTS", "T_MBI", "new_state", "mean_loss_interval", "loss_rate",
           "w_init", "x_calc", "allowed_rate", "loss_rate_for", "start", "on_send", "send_gap", "rate_due",
           "on_drop", "rtt_sample", "on_feedback", "next_send", "rx_packet", "rx_rtt", "rx_timer_due",
           "make_feedback", "SIZE", "TARGET", "XMAX", "MODE", "X", "R", "P", "XRECV", "GEN", "SEQ", "LAST_SEND",
           "N_SENT", "N_RECV", "N_LOST", "N_EVENTS", "N_FB", "BASE_RTT", "NH", "NFB", "RP", "RRTT",
           "HDR_RTT"]

#: The feedback models, in the kernels' numbering.
FEEDBACK = {"receiver": 0, "sender": 1}
#: RFC 5348 section 5.4: weights of the n = 8 most recent loss intervals (defined in qosbound.analytic.tfrc).
WEIGHTS = TF.LOSS_WEIGHTS
#: RFC 5348 section 4.3: t_mbi, seconds (defined in qosbound.analytic.tfrc).
T_MBI = float(TF.T_MBI)

# ---- fields of Q ----
SIZE = 0        # s, bytes on the wire
TARGET = 1      # g, bytes/s (0: plain TFRC)
XMAX = 2        # cap on X, bytes/s (inf: none)
MODE = 3        # feedback model (FEEDBACK)
X = 4           # allowed sending rate, bytes/s
R = 5           # the sender's RTT estimate, s (0: none yet)
P = 6           # the loss event rate the sender last used
XRECV = 7       # the latest reported receive rate, bytes/s (inf: none, or the sender model)
TLD = 8         # time of the last doubling (slow start)
NFB = 9         # nofeedback-timer deadline (receiver model; inf until the first packet)
NEXT_UPD = 10   # sender model: time of the next rate update
LAST_SEND = 11  # time of the latest packet sent
GEN = 12        # generation of the pending send event (a feedback reschedules it)
SEQ = 13        # next sequence number
BASE_RTT = 14   # the path's base RTT (sender model: R0; receiver: its RTT before a header carries one)
NH = 15         # closed loss intervals held in H (<= 8)
OPEN = 16       # sender model: packets sent since the current loss event started
EV_T = 17       # time the current loss event started (sender: drop time; receiver: interpolated send time)
EV_SEQ = 18     # receiver: sequence number that started the current loss event (-1: none yet)
EXPECTED = 19   # receiver: next sequence number expected
LAST_TSEND = 20  # receiver: send time of the latest packet
LAST_ARR = 21   # receiver: arrival time of the latest packet
BYTES_FB = 22   # receiver: bytes received since the last feedback
LAST_FB = 23    # receiver: time of the last feedback (-1: none)
RP = 24         # receiver: the loss event rate it reports
RRTT = 25       # receiver: the RTT the latest packet's header carried (the base RTT before one did)
N_SENT = 26     # packets sent
N_RECV = 27     # receiver: packets received
N_LOST = 28     # packets lost (receiver: detected; sender model: drops)
N_EVENTS = 29   # loss events
N_FB = 30       # feedbacks applied by the sender
HDR_RTT = 31    # receiver: 1 to use the RTT in the packets' headers, 0 the sender's current estimate
NFIELDS = 32

_W = np.array(WEIGHTS)
_mli = njit(cache=False)(TF.mean_loss_interval)
# the one SymPy definition of the rate rule (and of X_calc, for the first interval's inverse), compiled; lambdified
# code has no source file, so these are compiled into (and cached with) every cached kernel that calls them
_allowed = njit(cache=False)(sp.lambdify((TF.s, TF.R, TF.p, TF.b, TF.t_RTO, TF.g, TF.X_recv), TF.gtfrc_expr, "math"))
_xcalc = njit(cache=False)(sp.lambdify((TF.s, TF.R, TF.p, TF.b, TF.t_RTO), TF.tfrc_expr, "math"))


def mean_loss_interval(open_interval: float, closed) -> float:
    """RFC 5348 5.4: I_mean over the k <= 8 closed intervals, most recent first
    (:func:`qosbound.analytic.tfrc.mean_loss_interval`)."""
    return TF.mean_loss_interval(open_interval, list(closed), len(closed))


def new_state(sizes, targets, max_rates, base_rtts, feedback, header_rtt=None):
    """Fresh arrays (Q, H) for TFRC flows: packet sizes (bytes), targets g (bytes/s, 0 for plain TFRC), rate caps
    (bytes/s, inf for none), base RTTs (s), feedback models (names of :data:`FEEDBACK`) and whether each receiver
    takes its RTT from the packets' headers (default: the sender's current estimate)."""
    m = len(sizes)
    Q = np.zeros((m, NFIELDS))
    Q[:, SIZE] = sizes
    Q[:, TARGET] = targets
    Q[:, XMAX] = max_rates
    Q[:, MODE] = [FEEDBACK[f] for f in feedback]
    Q[:, BASE_RTT] = base_rtts
    Q[:, XRECV] = np.inf
    Q[:, NFB] = np.inf
    Q[:, EV_T] = -1e300
    Q[:, EV_SEQ] = -1.0
    Q[:, LAST_FB] = -1.0
    Q[:, TLD] = -1e300
    Q[:, HDR_RTT] = [bool(h) for h in header_rtt] if header_rtt is not None else 0.0
    if not (np.all(Q[:, SIZE] > 0) and np.all(Q[:, TARGET] >= 0) and np.all(Q[:, XMAX] > 0)
            and np.all(Q[:, BASE_RTT] > 0)):
        raise ValueError("TFRC: size, rate cap and base RTT > 0, target >= 0")
    return Q, np.zeros((m, 8))


@njit(cache=True, error_model="numpy", _nrt=False)
def loss_rate(hist, nh, open_count):
    """The loss event rate 1/I_mean of RFC 5348 section 5.4 (:func:`qosbound.analytic.tfrc.mean_loss_interval`) from
    the ``nh`` closed intervals ``hist`` (most recent first) and the open one; 1 before the first loss event, never
    above 1."""
    if nh == 0:
        return 1.0
    return min(1.0, 1.0 / max(_mli(float(open_count), hist, nh), 1.0))


@njit(cache=True, error_model="numpy", _nrt=False)
def w_init(s):
    """RFC 5348 4.2 / RFC 3390: the initial window W_init = min(4s, max(2s, 4380)) bytes."""
    return min(4.0 * s, max(2.0 * s, 4380.0))


@njit(cache=True, error_model="numpy", _nrt=False)
def x_calc(s, rtt, p):
    """X_calc(s, R, p) with b = 1 and t_RTO = 4R, bytes/s (:data:`qosbound.analytic.tfrc.tfrc_expr`)."""
    return _xcalc(s, rtt, p, 1.0, 4.0 * rtt)


@njit(cache=True, error_model="numpy", _nrt=False)
def allowed_rate(s, rtt, p, g, x_recv):
    """The rate rule after feedback with p > 0: max(min(max(X_calc, g), 2 X_recv), s/t_mbi), bytes/s
    (:data:`qosbound.analytic.tfrc.gtfrc_expr` with b = 1, t_RTO = 4R; g = 0 is plain TFRC)."""
    return _allowed(s, rtt, p, 1.0, 4.0 * rtt, g, x_recv)


@njit(cache=True, error_model="numpy", _nrt=False)
def loss_rate_for(s, rtt, x):
    """The loss event rate at which X_calc(s, R, p) = x (RFC 5348 6.3.1), 1 when even X_calc(1) >= x: bisection
    in log p on the compiled equation (strictly decreasing in p, :func:`qosbound.analytic.tfrc.prove_decreasing_in_p`)."""
    if x_calc(s, rtt, 1.0) >= x:
        return 1.0
    lo = -60.0  # log p: X_calc(e^-60) is far above any rate
    hi = 0.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if x_calc(s, rtt, math.exp(mid)) >= x:
            lo = mid
        else:
            hi = mid
    return math.exp(0.5 * (lo + hi))


@njit(cache=True, error_model="numpy", _nrt=False)
def _floor(Q, j):
    """The sender never goes below s/t_mbi (gTFRC: nor below g) when it halves."""
    return max(Q[j, SIZE] / T_MBI, Q[j, TARGET])


@njit(cache=True, error_model="numpy", _nrt=False)
def start(Q, j, now):
    """The sender of flow ``j`` starts at ``now`` (receiver model: one packet per second until the first feedback;
    sender model: W_init / R0, the first update one R0 later)."""
    if Q[j, MODE] == 1.0:
        Q[j, R] = Q[j, BASE_RTT]
        Q[j, X] = min(Q[j, XMAX], w_init(Q[j, SIZE]) / Q[j, R])
        Q[j, NEXT_UPD] = now + Q[j, R]
    else:
        Q[j, X] = min(Q[j, XMAX], Q[j, SIZE])
        Q[j, RRTT] = Q[j, BASE_RTT]


@njit(cache=True, error_model="numpy", _nrt=False)
def on_send(Q, j, now):
    """The sender sends a packet now (its pacing timer fired). Returns its sequence number. Receiver model: an
    expired nofeedback timer halves X first (RFC 5348 4.4), and the timer starts (2 s) with the first packet."""
    if Q[j, MODE] == 0.0:
        if now >= Q[j, NFB]:
            Q[j, X] = max(Q[j, X] / 2.0, _floor(Q, j))
            Q[j, NFB] = now + max(4.0 * (Q[j, R] if Q[j, R] > 0.0 else 0.5), 2.0 * Q[j, SIZE] / Q[j, X])
        elif Q[j, NFB] == np.inf:
            Q[j, NFB] = now + 2.0
    else:
        Q[j, OPEN] += 1.0
    seq = Q[j, SEQ]
    Q[j, SEQ] = seq + 1.0
    Q[j, LAST_SEND] = now
    Q[j, N_SENT] += 1.0
    return int(seq)


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def send_gap(Q, j):
    """Time to the next packet at the current rate, s."""
    return Q[j, SIZE] / Q[j, X]


@njit(cache=True, error_model="numpy", _nrt=False)
def rate_due(Q, H, j, now):
    """Sender model: once per R, at a send time, apply the rate rule (doubling before the first loss event).
    Returns True when X was updated."""
    if Q[j, MODE] != 1.0 or now < Q[j, NEXT_UPD]:
        return False
    s = Q[j, SIZE]
    if Q[j, NH] == 0.0:
        Q[j, X] = min(Q[j, XMAX], max(min(2.0 * Q[j, X], 2.0 * Q[j, XRECV]), w_init(s) / Q[j, R]))
    else:
        Q[j, P] = loss_rate(H[j], int(Q[j, NH]), Q[j, OPEN])
        Q[j, X] = min(Q[j, XMAX], allowed_rate(s, Q[j, R], Q[j, P], Q[j, TARGET], Q[j, XRECV]))
    Q[j, NEXT_UPD] = now + Q[j, R]
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def _close_interval(Q, H, j, length):
    for k in range(7, 0, -1):
        H[j, k] = H[j, k - 1]
    H[j, 0] = length
    Q[j, NH] = min(Q[j, NH] + 1.0, 8.0)
    Q[j, N_EVENTS] += 1.0


@njit(cache=True, error_model="numpy", _nrt=False)
def on_drop(Q, H, j, now):
    """Sender model: one of the flow's packets was dropped at ``now``. A drop more than one R after the current loss
    event's start opens a new event (the first one halves X)."""
    Q[j, N_LOST] += 1.0
    if now - Q[j, EV_T] > Q[j, R]:
        if Q[j, NH] == 0.0:
            Q[j, X] = max(Q[j, X] / 2.0, Q[j, SIZE] / T_MBI)
        _close_interval(Q, H, j, Q[j, OPEN])
        Q[j, OPEN] = 0.0
        Q[j, EV_T] = now


@njit(cache=True, error_model="numpy", _nrt=False)
def rtt_sample(Q, j, sample):
    """An RTT sample reaches the sender: R = 0.9 R + 0.1 sample (RFC 5348 4.3), the sample itself when R is
    unknown."""
    Q[j, R] = sample if Q[j, R] <= 0.0 else 0.9 * Q[j, R] + 0.1 * sample


@njit(cache=True, error_model="numpy", _nrt=False)
def on_feedback(Q, j, now, t_echo, t_delay, x_recv, p):
    """Receiver model: a feedback (echoed send time, hold time, X_recv, p) reaches the sender at ``now``. Updates R
    and X (RFC 5348 4.3; gTFRC's rule) and the nofeedback timer; the driver then reschedules the next packet at
    :func:`next_send` with a new generation."""
    sample = max(now - t_echo - t_delay, 1e-6)
    first = Q[j, R] <= 0.0
    rtt_sample(Q, j, sample)
    Q[j, XRECV] = x_recv
    Q[j, P] = p
    s = Q[j, SIZE]
    if p > 0.0:
        Q[j, X] = min(Q[j, XMAX], allowed_rate(s, Q[j, R], p, Q[j, TARGET], x_recv))
    elif first:
        Q[j, X] = min(Q[j, XMAX], w_init(s) / Q[j, R])
        Q[j, TLD] = now
    elif now - Q[j, TLD] >= Q[j, R]:
        Q[j, X] = min(Q[j, XMAX], max(min(2.0 * Q[j, X], 2.0 * x_recv), w_init(s) / Q[j, R]))
        Q[j, TLD] = now
    Q[j, NFB] = now + max(4.0 * Q[j, R], 2.0 * s / Q[j, X])
    Q[j, N_FB] += 1.0
    Q[j, GEN] += 1.0


@njit(cache=True, error_model="numpy", _nrt=False)
def next_send(Q, j, now):
    """After a feedback: when the next packet goes out at the new rate (not before ``now``)."""
    return max(now, Q[j, LAST_SEND] + Q[j, SIZE] / Q[j, X])


@njit(cache=True, error_model="numpy", _nrt=False)
def rx_rtt(Q, j):
    """The RTT the receiver uses (loss events, feedback period): the latest header's, or the sender's current
    estimate (the base RTT before there is one)."""
    if Q[j, HDR_RTT] != 0.0:
        return Q[j, RRTT]
    return Q[j, R] if Q[j, R] > 0.0 else Q[j, BASE_RTT]


@njit(cache=True, error_model="numpy", _nrt=False)
def _rx_new_event(Q, H, j, seq, t, now):
    if Q[j, EV_SEQ] < 0.0:
        # RFC 5348 6.3.1: the first interval from the receive rate (at least s/(2R)) as 1/p at X_calc(p) = X_recv
        rtt = rx_rtt(Q, j)
        span = max(now - (Q[j, LAST_FB] if Q[j, LAST_FB] >= 0.0 else now - rtt), 1e-6)
        x_recv = max(Q[j, BYTES_FB] / span, Q[j, SIZE] / (2.0 * rtt))
        _close_interval(Q, H, j, max(1.0 / loss_rate_for(Q[j, SIZE], rtt, x_recv), 1.0))
    else:
        _close_interval(Q, H, j, seq - Q[j, EV_SEQ])
    Q[j, EV_SEQ] = seq
    Q[j, EV_T] = t


@njit(cache=True, error_model="numpy", _nrt=False)
def rx_packet(Q, H, j, now, seq, t_send, size, rtt_hdr):
    """Receiver model: packet ``seq`` (sent at ``t_send``, ``size`` bytes, the sender's RTT estimate ``rtt_hdr`` in
    its header, 0 for none) arrives at ``now``. Detects losses and loss events; returns 1 when a feedback must go
    now (the first packet, or a new loss event), 2 for the first packet (the driver also starts the feedback timer),
    0 otherwise."""
    if rtt_hdr > 0.0:
        Q[j, RRTT] = rtt_hdr
    new_event = False
    exp = Q[j, EXPECTED]
    if seq > exp:
        t_prev = Q[j, LAST_TSEND] if Q[j, N_RECV] > 0.0 else t_send
        n_gap = seq - exp
        for k in range(int(n_gap)):
            Q[j, N_LOST] += 1.0
            tk = t_prev + (t_send - t_prev) * (k + 1) / (n_gap + 1)
            if Q[j, EV_SEQ] < 0.0 or tk > Q[j, EV_T] + rx_rtt(Q, j):
                _rx_new_event(Q, H, j, exp + k, tk, now)
                new_event = True
    Q[j, EXPECTED] = max(exp, seq + 1.0)
    Q[j, LAST_TSEND] = t_send
    Q[j, LAST_ARR] = now
    Q[j, N_RECV] += 1.0
    Q[j, BYTES_FB] += size
    if Q[j, EV_SEQ] >= 0.0:
        Q[j, RP] = loss_rate(H[j], int(Q[j, NH]), Q[j, EXPECTED] - Q[j, EV_SEQ])
    if Q[j, LAST_FB] < 0.0:
        return 2
    return 1 if new_event else 0


@njit(cache=True, error_model="numpy", _nrt=False)
def rx_timer_due(Q, j):
    """The receiver's once-per-RTT timer fires: True when a feedback is due (packets arrived since the last one)."""
    return Q[j, LAST_FB] >= 0.0 and Q[j, N_RECV] > 0.0 and Q[j, LAST_ARR] > Q[j, LAST_FB]


@njit(cache=True, error_model="numpy", _nrt=False)
def make_feedback(Q, j, now, out, row):
    """The receiver sends a feedback now: ``out[row, 0:4]`` = (echoed send time of the latest packet, the time it was
    held, X_recv over the period since the last feedback (bytes/s), p)."""
    span = now - Q[j, LAST_FB] if Q[j, LAST_FB] >= 0.0 else rx_rtt(Q, j)
    out[row, 0] = Q[j, LAST_TSEND]
    out[row, 1] = now - Q[j, LAST_ARR]
    out[row, 2] = Q[j, BYTES_FB] / max(span, 1e-6)
    out[row, 3] = Q[j, RP]
    Q[j, BYTES_FB] = 0.0
    Q[j, LAST_FB] = now
