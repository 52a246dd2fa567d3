"""TCP NewReno with SACK-based loss recovery and delayed ACKs: the sender and receiver kernels (numba).

The network that carries the segments is :mod:`qosbound.validation.dumbbell`; this module holds
the per-connection state and what each end does with a segment, an ACK or a timer.

The TCP modelled (segment granularity, one connection per flow)
---------------------------------------------------------------
* **Sequence space in segments.** Every data segment carries ``mss`` payload bytes; sequence
  numbers count segments (0, 1, 2, ...), not bytes. There is no handshake and no FIN: a flow starts
  sending at its start time with ``srtt``/``rttvar`` seeded from its base RTT (what the SYN
  exchange would have measured), and a finite file ends when its last segment is acknowledged.
* **Sender: NewReno congestion control with RFC 6675 ("conservative SACK") loss recovery.**
  The scoreboard holds, per outstanding segment, SACKED, LOST and RETRANSMITTED flags. ``pipe``
  is RFC 6675's estimate: every outstanding segment not SACKed and not lost counts 1, every
  retransmitted one 1 more. A segment is lost when it carries the LOST flag (set by a timeout)
  or ``DUPTHRESH`` = 3 segments above it are SACKed (RFC 6675 ``IsLost`` at segment granularity).
  Segments go out while ``cwnd - pipe >= 1``: first the lowest lost segment not yet
  retransmitted, else new data (limited by ``rwnd`` and the file). This covers RFC 3042 limited
  transmit: SACKed segments leave the pipe before recovery starts. RFC 6675's rule 3 (rescue
  retransmission of an unSACKed segment that is not yet lost) is not implemented.
* **Entering recovery:** on an ACK, outside recovery, when the third duplicate ACK arrives or
  ``snd_una`` is lost by the SACK rule, and only when ``snd_una > recover`` (RFC 6582's guard
  against a second reduction for losses of a window already reduced by a timeout):
  ``ssthresh = max(min(cwnd, FlightSize)/2, 2)`` with FlightSize = ``snd_max - snd_una`` (RFC 5681
  eq. 4 and RFC 6675 step 4.2 halve FlightSize, Linux halves cwnd: FlightSize alone overstates the
  load after a slow-start overshoot, when it holds many SACKed segments, and cwnd alone when the
  flow is rwnd-limited; ns-3 halves its ``BytesInFlight``, the pipe: ``ssthresh_rule="ns3"``
  does the same, here and at every timeout, for comparisons with ns-3), ``cwnd = ssthresh``,
  ``recover = snd_max - 1``, and ``snd_una`` is retransmitted at once, whatever the pipe (RFC 6675
  step 4.3). In recovery the window is not inflated and does not grow; a partial ACK keeps
  recovery going (the pipe rule sends the next lost segment); an ACK above ``recover`` ends it
  with ``cwnd = ssthresh``.
* **Window growth** (as ns-3's ``TcpNewReno``): in slow start (``cwnd < ssthresh``) an ACK
  acknowledging ``k`` new segments adds ``k`` up to ``ssthresh``; if segments remain, or in
  congestion avoidance, the ACK adds ``1/cwnd``; ``cwnd`` never grows above ``rwnd``. Initial
  window ``init_cwnd`` (10 as Linux and ns-3), initial ``ssthresh`` unbounded. Duplicate ACKs do not grow the window.
* **RTO (RFC 6298):** ``srtt``, ``rttvar`` with gains 1/8 and 1/4, ``RTO = srtt + max(G, 4 rttvar)``
  with clock granularity G = 1 ms, at least ``min_rto``, at most 60 s (``rto_floor="rto"``: the whole
  RTO floored, as ns-2 and ns-3 do). ``rto_floor="rttvar"`` floors the variance term instead, as Linux
  does (``tcp_set_rto``: ``RTO = srtt + max(min_rto, 4 rttvar)``; its ``rttvar`` never falls below
  ``tcp_rto_min``), so the RTO stays ``min_rto`` above ``srtt`` on a path whose RTT barely varies.
  One sample per ACK that advances ``snd_una``, from the send time of the newest segment it
  acknowledges, and only when no segment it acknowledges was retransmitted or marked lost and that newest one was not SACKed
  before (Karn's rule as Linux applies it to a cumulative ACK). The timer runs while data is
  outstanding and restarts on every ACK of new data, which also ends a backoff (the RTO is
  recomputed from ``srtt`` and ``rttvar``, as Linux and ns-3 do; RFC 6298 would keep the
  backed-off value until a new sample). On expiry: ``ssthresh = max(min(cwnd, FlightSize)/2, 2)``
  -- unless the flow was in fast recovery, whose reduction already counts for this loss event
  (Linux), and held constant when the timer expires again before any forward progress (RFC 5681:
  a segment retransmitted twice does not lower it again); ns-3 halves its pipe estimate at every
  expiry --, ``cwnd = 1``, every unSACKed outstanding segment is LOST (its RETRANSMITTED flag cleared; SACK
  information is kept), recovery ends, ``recover = snd_max - 1`` and the RTO doubles (exponential
  backoff) at each back-to-back expiry.
* **Receiver: delayed ACKs (RFC 1122, RFC 5681 section 4.2).** An in-order segment is
  acknowledged when it is the second one unacknowledged, else a 200 ms timer (``delack``) is
  started; an out-of-order segment, a duplicate, or a segment that fills (part of) a hole is
  acknowledged at once. Each ACK carries the cumulative ACK and up to ``sack_blocks`` SACK blocks
  (RFC 2018): the block holding the segment that triggered the ACK first, then the other
  out-of-order blocks from the highest down (RFC 2018 repeats the most recently reported blocks;
  the highest are the most recent ones for a sender that sends in order).

All state lives in NumPy arrays so the kernels run in numba's nopython mode: ``S`` (flows x
``NFIELDS``) holds the scalar state (fields named by the constants below), ``SB`` (flows x W)
the sender's scoreboard flags, ``TS`` (flows x W) the segments' last send times and ``RB``
(flows x W) the receiver's out-of-order flags; W is a power of two above twice ``rwnd``.

The kernels allocate nothing and are compiled without reference counting and without raising (numba's
``_nrt=False``, ``error_model="numpy"``): the event loops call them for every packet, and counting the references of
every array they are given cost about as much as the work itself (see :mod:`qosbound.validation.dumbbell_loop`).
numba's on-disk cache does not follow a kernel into the modules it calls: after editing this module,
delete the cached :mod:`qosbound.validation.dumbbell_loop` kernels (``NUMBA_CACHE_DIR``) before measuring.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)

__all__ = ["NFIELDS", "new_state", "send_batch", "on_ack", "on_timeout", "on_data", "build_sack",
           "timer_to_arm", "on_timer", "delack_start", "delack_due", "delack_arm", "delack_fire", "ack_sent",
           "integrate_srtt", "close_window", "rtt_sample",
           "SACKED", "LOST", "RXT", "DUPTHRESH"]

SACKED = 1
LOST = 2
RXT = 4
DUPTHRESH = 3
G = 0.001  # clock granularity, s
MAX_RTO = 60.0

# ---- scalar fields of S ----
UNA = 0          # snd_una, segments
MAX = 1          # snd_max: next new segment
CWND = 2         # segments (float)
SSTH = 3         # segments
INREC = 4        # 1 in fast recovery
RECOVER = 5      # recovery point (RFC 6582 / RFC 6675)
DUP = 6          # duplicate ACK count
SRTT = 7
RTTVAR = 8
RTO = 9
DEADLINE = 10    # retransmission timer deadline (inf: stopped)
ARMED = 11       # time of the retransmission-timer event pending in the event queue (inf: none)
FILE = 12        # segments to send (-1: bulk)
RWND = 13        # receive window, segments
MINRTO = 14
CW_AREA = 15     # integral of cwnd over the measurement window, segment*s
CW_T = 16        # time of the last cwnd integration
N_RTO = 17       # timeouts
N_FR = 18        # fast recoveries entered
N_SENT = 19      # segments sent (new + retransmitted)
N_RETX = 20      # retransmissions
RNXT = 21        # receiver: next expected segment
PEND = 22        # receiver: in-order segments not yet acknowledged
DA_GEN = 23      # receiver: delayed-ACK timer generation
DA_ON = 24       # receiver: delayed-ACK timer running
RHIGH = 25       # receiver: highest segment received + 1
DONE_T = 26      # receiver: time the file's last segment arrived in order (-1 until then)
W_START = 27     # measurement window start (cwnd integration)
W_END = 28
N_SAMPLES = 29   # RTT samples taken
CW_MAX = 30      # largest cwnd in the window
BACKOFF = 31     # back-to-back timeouts since the last forward progress
FRX = 33         # 1: fast retransmit pending (sent at once, whatever the pipe)
SSRULE = 32      # 0: ssthresh from min(cwnd, FlightSize) (RFC 5681 / Linux); 1: from pipe at every reduction (ns-3)
RTT_AREA = 34    # integral of srtt over the measurement window, s*s
RTT_T = 35       # time of the last srtt change
DA_DUE = 36      # receiver: deadline of the running delayed-ACK timer
DA_EV = 37       # receiver: time of the pending delayed-ACK event (inf: none; see delack_arm)
RTOFLOOR = 38    # 0: the whole RTO at least min_rto (ns-2, ns-3); 1: srtt + max(min_rto, 4 rttvar) (Linux)
NFIELDS = 39


def new_state(n: int, W: int, *, init_cwnd: float, rwnd: int, min_rto: float, files, base_rtt, window,
              ssthresh_rule: str = "rfc", rto_floor: str = "rto"):
    """Fresh arrays (S, SB, TS, RB) for ``n`` flows; ``files`` segments per flow (-1 bulk); ``ssthresh_rule``
    "rfc" (default) or "ns3", ``rto_floor`` "rto" (default) or "rttvar" (see the module docstring)."""
    if ssthresh_rule not in ("rfc", "ns3"):
        raise ValueError("ssthresh_rule is 'rfc' or 'ns3'")
    if rto_floor not in ("rto", "rttvar"):
        raise ValueError("rto_floor is 'rto' (ns-2, ns-3) or 'rttvar' (Linux)")
    S = np.zeros((n, NFIELDS))
    S[:, CWND] = init_cwnd
    S[:, SSTH] = 1e12
    S[:, RECOVER] = -1.0
    S[:, SRTT] = np.asarray(base_rtt, dtype=float)
    S[:, RTTVAR] = np.asarray(base_rtt, dtype=float) / 2.0
    S[:, RTOFLOOR] = 1.0 if rto_floor == "rttvar" else 0.0
    if rto_floor == "rttvar":
        S[:, RTO] = np.minimum(MAX_RTO, S[:, SRTT] + np.maximum(min_rto, 4.0 * S[:, RTTVAR]))
    else:
        S[:, RTO] = np.maximum(min_rto, S[:, SRTT] + np.maximum(G, 4.0 * S[:, RTTVAR]))
    S[:, DEADLINE] = np.inf
    S[:, ARMED] = np.inf
    S[:, FILE] = np.asarray(files, dtype=float)
    S[:, RWND] = rwnd
    S[:, MINRTO] = min_rto
    S[:, DONE_T] = -1.0
    S[:, W_START], S[:, W_END] = window
    S[:, CW_T] = window[0]
    S[:, SSRULE] = 1.0 if ssthresh_rule == "ns3" else 0.0
    S[:, RTT_T] = window[0]
    S[:, DA_DUE] = np.inf
    S[:, DA_EV] = np.inf
    return S, np.zeros((n, W), np.int8), np.zeros((n, W)), np.zeros((n, W), np.int8)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _integrate(S, f, now):
    """Add cwnd x (time since the last change) inside the measurement window."""
    t0 = max(S[f, CW_T], S[f, W_START])
    t1 = min(now, S[f, W_END])
    if t1 > t0:
        S[f, CW_AREA] += S[f, CWND] * (t1 - t0)
    S[f, CW_T] = now


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _set_cwnd(S, f, now, v):
    _integrate(S, f, now)
    S[f, CWND] = v
    if now >= S[f, W_START] and now <= S[f, W_END] and v > S[f, CW_MAX]:
        S[f, CW_MAX] = v


@njit(cache=True, error_model="numpy", _nrt=False)
def _scan(S, SB, f, cand):
    """RFC 6675 SetPipe and the lost segments not yet retransmitted (``cand``, highest first).

    Marks segments found lost by the SACK rule LOST. Returns (pipe, number of candidates)."""
    W = SB.shape[1]
    una = int(S[f, UNA])
    mx = int(S[f, MAX])
    pipe = 0
    nsack = 0
    nc = 0
    for s in range(mx - 1, una - 1, -1):
        k = s & (W - 1)
        fl = SB[f, k]
        if fl & SACKED:
            nsack += 1
            continue
        lost = (fl & LOST) != 0
        if not lost and nsack >= DUPTHRESH:
            lost = True
            fl |= LOST
            SB[f, k] = fl
        if not lost:
            pipe += 1
        elif (fl & RXT) == 0:
            cand[nc] = s
            nc += 1
        if fl & RXT:
            pipe += 1
    return pipe, nc


@njit(cache=True, error_model="numpy", _nrt=False)
def send_batch(S, SB, TS, f, now, cand, out):
    """Segments to transmit now (written to ``out``; returns how many): while ``cwnd - pipe >= 1``,
    the lowest lost segment not yet retransmitted, else new data within ``rwnd`` and the file; on
    entering recovery the first lost segment goes out whatever the pipe (fast retransmit, RFC 6675
    step 4.3). Starts the retransmission timer when it is stopped."""
    W = SB.shape[1]
    pipe, nc = _scan(S, SB, f, cand)
    c = nc - 1
    n = 0
    cwnd = S[f, CWND]
    while cwnd - pipe >= 1.0 - 1e-9 or (S[f, FRX] == 1.0 and c >= 0):
        S[f, FRX] = 0.0
        if c >= 0:
            s = cand[c]
            c -= 1
            SB[f, s & (W - 1)] |= RXT
            S[f, N_RETX] += 1
        else:
            mx = int(S[f, MAX])
            if mx - int(S[f, UNA]) >= int(S[f, RWND]):
                break
            if S[f, FILE] >= 0 and mx >= S[f, FILE]:
                break
            s = mx
            S[f, MAX] = mx + 1
            SB[f, s & (W - 1)] = 0
        TS[f, s & (W - 1)] = now
        S[f, N_SENT] += 1
        out[n] = s
        n += 1
        pipe += 1
    if n > 0 and S[f, DEADLINE] == np.inf:
        S[f, DEADLINE] = now + S[f, RTO]
    return n


@njit(cache=True, error_model="numpy", _nrt=False)
def integrate_srtt(S, f, now):
    """Add srtt x (time since its last change) inside the measurement window (for the time-average srtt)."""
    t0 = max(S[f, RTT_T], S[f, W_START])
    t1 = min(now, S[f, W_END])
    if t1 > t0:
        S[f, RTT_AREA] += S[f, SRTT] * (t1 - t0)
    S[f, RTT_T] = now


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def rto_of(S, f):
    """The RTO from ``srtt`` and ``rttvar`` under the flow's floor rule (:data:`RTOFLOOR`), at most 60 s."""
    if S[f, RTOFLOOR] == 1.0:
        return min(MAX_RTO, S[f, SRTT] + max(S[f, MINRTO], 4.0 * S[f, RTTVAR]))
    return min(MAX_RTO, max(S[f, MINRTO], S[f, SRTT] + max(G, 4.0 * S[f, RTTVAR])))


@njit(cache=True, error_model="numpy", _nrt=False)
def rtt_sample(S, f, r, now):
    """An RTT sample ``r`` (s) at ``now``: SRTT and RTTVAR as RFC 6298 section 2 updates them (the first sample
    replaces the seed taken from the base RTT)."""
    integrate_srtt(S, f, now)
    if S[f, N_SAMPLES] == 0:
        # the first real sample replaces the seed taken from the base RTT
        S[f, SRTT] = r
        S[f, RTTVAR] = r / 2.0
    else:
        S[f, RTTVAR] = 0.75 * S[f, RTTVAR] + 0.25 * abs(S[f, SRTT] - r)
        S[f, SRTT] = 0.875 * S[f, SRTT] + 0.125 * r
    S[f, N_SAMPLES] += 1
    S[f, RTO] = rto_of(S, f)


@njit(cache=True, error_model="numpy", _nrt=False)
def on_ack(S, SB, TS, f, now, ack, sack, nsack, cand):
    """Process an ACK (cumulative ``ack``, ``nsack`` SACK blocks ``sack[2k], sack[2k+1]`` = [start, end)).

    Updates the scoreboard, the window, recovery and the timer. Returns segments newly acknowledged."""
    W = SB.shape[1]
    una = int(S[f, UNA])
    mx = int(S[f, MAX])
    for b in range(nsack):
        lo = max(sack[2 * b], una)
        hi = min(sack[2 * b + 1], mx)
        for s in range(lo, hi):
            SB[f, s & (W - 1)] |= SACKED
    newly = 0
    if ack > una:
        newly = ack - una
        last = (ack - 1) & (W - 1)
        clean = (SB[f, last] & SACKED) == 0
        for s in range(una, ack):
            k = s & (W - 1)
            if SB[f, k] & (RXT | LOST):
                clean = False
            SB[f, k] = 0
        if clean:
            rtt_sample(S, f, now - TS[f, last], now)
        S[f, UNA] = ack
        S[f, DUP] = 0
        S[f, BACKOFF] = 0
        # forward progress ends the backoff: the RTO is recomputed from the estimator (as Linux and ns-3 do)
        S[f, RTO] = rto_of(S, f)
        if S[f, INREC] == 1.0:
            if ack > S[f, RECOVER]:
                S[f, INREC] = 0.0
                _set_cwnd(S, f, now, S[f, SSTH])
        else:
            cw = S[f, CWND]
            left = newly
            if cw < S[f, SSTH]:
                add = min(float(newly), S[f, SSTH] - cw)
                cw += add
                left = newly - int(add)
            if left > 0 and cw >= S[f, SSTH]:
                cw += 1.0 / cw
            _set_cwnd(S, f, now, min(cw, S[f, RWND]))
        S[f, DEADLINE] = now + S[f, RTO] if ack < mx else np.inf
    elif ack == una and mx > una:
        S[f, DUP] += 1
    if S[f, INREC] == 0.0 and S[f, UNA] < S[f, MAX] and S[f, UNA] > S[f, RECOVER]:
        una = int(S[f, UNA])
        pipe, nc = _scan(S, SB, f, cand)
        first_lost = (SB[f, una & (W - 1)] & LOST) != 0
        if S[f, DUP] >= DUPTHRESH or first_lost:
            S[f, N_FR] += 1
            S[f, INREC] = 1.0
            S[f, RECOVER] = S[f, MAX] - 1
            if S[f, SSRULE] == 1.0:
                S[f, SSTH] = max(pipe / 2.0, 2.0)
            else:
                S[f, SSTH] = max(min(S[f, CWND], S[f, MAX] - una) / 2.0, 2.0)
            _set_cwnd(S, f, now, S[f, SSTH])
            SB[f, una & (W - 1)] |= LOST
            S[f, FRX] = 1.0
    return newly


@njit(cache=True, error_model="numpy", _nrt=False)
def on_timeout(S, SB, f, now, cand):
    """Retransmission timeout: lower ssthresh (see the module docstring), cwnd 1, every unSACKed outstanding
    segment lost, back off the RTO. The caller then runs :func:`send_batch` (which retransmits ``snd_una``)."""
    W = SB.shape[1]
    S[f, N_RTO] += 1
    if S[f, SSRULE] == 1.0:
        pipe, nc = _scan(S, SB, f, cand)
        S[f, SSTH] = max(pipe / 2.0, 2.0)
    elif S[f, BACKOFF] == 0 and S[f, INREC] == 0.0:
        S[f, SSTH] = max(min(S[f, CWND], S[f, MAX] - S[f, UNA]) / 2.0, 2.0)
    S[f, BACKOFF] += 1
    _set_cwnd(S, f, now, 1.0)
    for s in range(int(S[f, UNA]), int(S[f, MAX])):
        k = s & (W - 1)
        if (SB[f, k] & SACKED) == 0:
            SB[f, k] = LOST
    S[f, INREC] = 0.0
    S[f, RECOVER] = S[f, MAX] - 1
    S[f, DUP] = 0
    S[f, RTO] = min(MAX_RTO, 2.0 * S[f, RTO])
    S[f, DEADLINE] = np.inf


@njit(cache=True, error_model="numpy", _nrt=False)
def build_sack(S, RB, f, trigger, sack, max_blocks):
    """SACK blocks for an ACK: the block holding ``trigger`` first (if it is out of order), then the other
    out-of-order blocks from the highest down. Returns the number of blocks written to ``sack``."""
    W = RB.shape[1]
    rnxt = int(S[f, RNXT])
    high = int(S[f, RHIGH])
    n = 0
    tb_lo = -1
    if trigger >= rnxt and trigger < high and RB[f, trigger & (W - 1)]:
        lo = trigger
        while lo - 1 >= rnxt and RB[f, (lo - 1) & (W - 1)]:
            lo -= 1
        hi = trigger + 1
        while hi < high and RB[f, hi & (W - 1)]:
            hi += 1
        sack[0] = lo
        sack[1] = hi
        tb_lo = lo
        n = 1
    s = high - 1
    while s >= rnxt and n < max_blocks:
        if RB[f, s & (W - 1)]:
            hi = s + 1
            while s - 1 >= rnxt and RB[f, (s - 1) & (W - 1)]:
                s -= 1
            if s != tb_lo:
                sack[2 * n] = s
                sack[2 * n + 1] = hi
                n += 1
        s -= 1
    return n


@njit(cache=True, error_model="numpy", _nrt=False)
def on_data(S, RB, f, seq):
    """Receiver: a data segment arrives. Returns (ack_now, delivered): ``ack_now`` 1 to acknowledge at once,
    0 to hold the ACK (the caller starts the delayed-ACK timer when ``PEND`` is 1); ``delivered`` the
    segments newly delivered in order."""
    W = RB.shape[1]
    rnxt = int(S[f, RNXT])
    if seq < rnxt:
        return 1, 0  # duplicate: immediate ACK
    if seq > rnxt:
        RB[f, seq & (W - 1)] = 1
        if seq + 1 > S[f, RHIGH]:
            S[f, RHIGH] = seq + 1
        return 1, 0  # out of order: immediate (duplicate) ACK with SACK
    had_ooo = S[f, RHIGH] > rnxt + 1
    rnxt += 1
    while RB[f, rnxt & (W - 1)]:
        RB[f, rnxt & (W - 1)] = 0
        rnxt += 1
    delivered = rnxt - int(S[f, RNXT])
    S[f, RNXT] = rnxt
    if S[f, RHIGH] < rnxt:
        S[f, RHIGH] = rnxt
    if had_ooo:
        return 1, delivered  # filled (part of) a hole
    S[f, PEND] += 1
    if S[f, PEND] >= 2:
        return 1, delivered
    return 0, delivered


# ---- timers: what a network driver schedules (one definition for every simulator that runs these ends) ----
#
# A driver keeps at most one retransmission-timer event per flow pending, at ``S[f, ARMED]``; the kernels move
# ``S[f, DEADLINE]`` freely (later on every ACK of new data), so an event that fires before the deadline
# re-arms itself, and only an earlier deadline needs an event of its own. The delayed-ACK timer is one event
# per start, identified by its generation ``S[f, DA_GEN]`` (an ACK sent in the meantime makes it stale).

@njit(cache=True, error_model="numpy", _nrt=False)
def timer_to_arm(S, f):
    """After the sender acted: the time at which the driver must schedule a retransmission-timer event for flow
    ``f`` (the deadline, when it comes before the pending event), or inf when none is needed."""
    d = S[f, DEADLINE]
    if d < S[f, ARMED]:
        S[f, ARMED] = d
        return d
    return np.inf


@njit(cache=True, error_model="numpy", _nrt=False)
def on_timer(S, f, now):
    """A retransmission-timer event scheduled at ``now`` fires. Returns 0: stale or the timer is stopped (nothing
    to do); 1: the deadline has moved later: schedule the next event at ``S[f, ARMED]``; 2: expired: the driver
    runs :func:`on_timeout`, then :func:`send_batch`."""
    if now != S[f, ARMED]:
        return 0  # superseded by an earlier deadline
    S[f, ARMED] = np.inf
    if S[f, DEADLINE] == np.inf:
        return 0
    if now < S[f, DEADLINE] - 1e-12:
        S[f, ARMED] = S[f, DEADLINE]
        return 1
    return 2


@njit(cache=True, error_model="numpy", _nrt=False)
def delack_start(S, f):
    """:func:`on_data` asked for no ACK now: start the delayed-ACK timer unless it runs. Returns the generation
    to schedule the timer event with, or -1 when it already runs."""
    if S[f, DA_ON] == 0.0:
        S[f, DA_ON] = 1.0
        S[f, DA_GEN] += 1
        return int(S[f, DA_GEN])
    return -1


@njit(cache=True, error_model="numpy", _nrt=False)
def delack_due(S, f, gen):
    """The delayed-ACK timer event of generation ``gen`` fires: True when it is current (the ACK is sent now)."""
    return gen == int(S[f, DA_GEN]) and S[f, DA_ON] != 0.0


@njit(cache=True, error_model="numpy", _nrt=False)
def ack_sent(S, f):
    """The receiver sends an ACK now: nothing is pending any more and a running delayed-ACK timer is stale."""
    S[f, PEND] = 0
    S[f, DA_ON] = 0.0
    S[f, DA_GEN] += 1


# The delayed-ACK timer as one pending event per flow (what the dumbbell drives): starting a timer schedules an event
# only when none is pending; an event that fires before the running timer's deadline re-arms itself at it. The ACK
# goes out at the same instant as with one event per start (delack_start), with far fewer events.

@njit(cache=True, error_model="numpy", _nrt=False)
def delack_arm(S, f, now, delack):
    """:func:`on_data` asked for no ACK now: start the delayed-ACK timer (deadline ``now + delack``) unless it runs.
    Returns the time at which the driver must schedule a delayed-ACK event, or inf when none is needed."""
    if S[f, DA_ON] != 0.0:
        return np.inf
    S[f, DA_ON] = 1.0
    S[f, DA_GEN] += 1
    S[f, DA_DUE] = now + delack
    if S[f, DA_EV] == np.inf:
        S[f, DA_EV] = S[f, DA_DUE]
        return S[f, DA_DUE]
    return np.inf


@njit(cache=True, error_model="numpy", _nrt=False)
def delack_fire(S, f, now):
    """A delayed-ACK event scheduled by :func:`delack_arm` fires at ``now``. Returns 1: the timer expired, the
    driver sends the ACK; 2: the running timer's deadline is later, schedule the next event at ``S[f, DA_EV]``;
    0: no timer runs (an ACK went out meanwhile)."""
    S[f, DA_EV] = np.inf
    if S[f, DA_ON] == 0.0:
        return 0
    if S[f, DA_DUE] <= now:
        return 1
    S[f, DA_EV] = S[f, DA_DUE]
    return 2


@njit(cache=True, error_model="numpy", _nrt=False)
def close_window(S, f, now):
    """At the end of a run: bring the time integrals of cwnd and srtt up to ``now`` (clipped to the window)."""
    _integrate(S, f, now)
    integrate_srtt(S, f, now)
