"""The dumbbell's event loop (numba): the bottleneck queues, their scheduler, and every end's events.

The network, the flows and what is measured are described in :mod:`qosbound.validation.dumbbell`, which builds
the arrays this module runs on and reads the results back. This module holds the mechanics:

* the event queue (:mod:`qosbound.validation.event_heap`): events of equal time leave in the order they were
  scheduled, a class link's departure first;
* a FIFO bottleneck direction computes a packet's departure when it admits it (no departure event); a direction
  with class queues puts the next packet on the wire at each departure (strict priority between levels, deficit
  round robin or self-clocked fair queueing within a level);
* the droppers (:mod:`qosbound.validation.droppers`: one definition of the averages and drop curves) and the
  markers (:mod:`qosbound.validation.markers`);
* the TCP ends (:mod:`qosbound.validation.tcp`), the TFRC ends (:mod:`qosbound.validation.tfrc_sender`) and the
  open-loop sources.

Speed (the events are what costs): a data segment costs two events (arrival at its queue, arrival at its
receiver), an ACK one (arrival at its sender; the receiver hands it to its queue at once when no other event is
due at that instant, exactly as if it had been scheduled), the delayed-ACK timer one event per flow at a time
(:func:`qosbound.validation.tcp.delack_arm`), the retransmission timer likewise (:func:`~qosbound.validation.tcp.timer_to_arm`).
The loop and every kernel it calls are compiled without reference counting (numba's ``_nrt=False`` option: they
allocate nothing; :func:`run` allocates every array and hands them over) and never raise (``error_model="numpy"``;
a full packet pool or event heap is flagged and reported by the caller): with reference counting, each call of a
small kernel increments and decrements the count of every array it is given, which cost about half of the loop's
time (measured with ``perf``: ``NRT_incref`` / ``NRT_decref`` were the two largest symbols).

numba's on-disk cache does not follow a kernel into the modules it calls: after editing tcp.py, tfrc_sender.py,
droppers.py, markers.py or event_heap.py, delete the cached kernels of this module (``NUMBA_CACHE_DIR``) before
measuring.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)

from qosbound.validation import event_heap as E
from qosbound.validation import tcp as T
from qosbound.validation import tfrc_sender as F
from qosbound.validation.droppers import avg_index, ewma_idle, ewma_update, red_drop_prob
from qosbound.validation.markers import mark

__all__ = ["run", "EV", "PKT", "REC_FIELDS"]

# event kinds
EV_START, EV_QUEUE, EV_TCP_RX, EV_TCP_ACK, EV_RTO, EV_DELACK, EV_DEPART, EV_UDP_GEN, EV_UDP_RX = 0, 1, 2, 4, 5, 6, 7, 8, 9
EV_TFRC_SEND, EV_TFRC_RX, EV_TFRC_FB, EV_TFRC_TIMER, EV_WINDOW = 10, 11, 12, 13, 14
EV_HS_RX, EV_HS_TIMER = 3, 15
EV = {"start": EV_START, "queue": EV_QUEUE, "tcp_rx": EV_TCP_RX, "tcp_ack": EV_TCP_ACK, "rto": EV_RTO,
      "delack": EV_DELACK, "depart": EV_DEPART, "udp_gen": EV_UDP_GEN, "udp_rx": EV_UDP_RX,
      "tfrc_send": EV_TFRC_SEND, "tfrc_rx": EV_TFRC_RX, "tfrc_fb": EV_TFRC_FB, "tfrc_timer": EV_TFRC_TIMER,
      "window": EV_WINDOW, "hs_rx": EV_HS_RX, "hs_timer": EV_HS_TIMER}

# packet types
P_TCP, P_ACK, P_UDP, P_TFRC, P_FB, P_SYN, P_SYNACK, P_REQ = 0, 1, 2, 3, 4, 5, 6, 7
PKT = {"tcp": P_TCP, "ack": P_ACK, "udp": P_UDP, "tfrc": P_TFRC, "feedback": P_FB, "syn": P_SYN, "synack": P_SYNACK,
       "request": P_REQ}
#: Columns of the handshake state (per TCP flow): phase (0 none, 1 SYN sent, 2 request sent, 3 data flowing),
#: attempt (the timer event that is current), retransmissions (SYN and request), handshake segments dropped,
#: the current handshake timeout (s), the time the SYN-ACK reached the client (the connection established).
HS_PHASE, HS_ATTEMPT, HS_RETX, HS_DROPS, HS_RTO, HS_EST = range(6)

#: Columns of the packet record (one row per data packet of a traced source offered to a bottleneck queue).
REC_FIELDS = ("type", "source", "direction", "cls", "colour", "size", "sent", "arrival", "departure", "dropped",
              "received")
_R_TYPE, _R_SRC, _R_DIR, _R_CLS, _R_COL, _R_SIZE, _R_SENT, _R_ARR, _R_DEP, _R_DROP, _R_RX = range(11)


# ---- the bottleneck queues --------------------------------------------------------------------------------------
#
# Queue rows 0 and 1 are the FIFOs of the two directions, rows 2 + k the class queues. Float state per row:
# [packets per colour (3), averages (3), RED count, RED old, last departure, idle since].

@njit(cache=True, error_model="numpy", _nrt=False)
def _red_drop(qs, q, s0, s1, s2, col, full, qmin, qmax, qmaxp, qi, alpha):
    """The dropper of queue ``q``: update the three cumulative averages (EWMA weight ``alpha``) from the per-colour
    counts (s0, s1, s2) the averages see, then decide for a ``col`` arrival (True: drop). ``full``: no room in the
    buffer (a drop, drawing no random number)."""
    a = s0
    qs[q, 3] = ewma_update(qs[q, 3], a, alpha)
    a += s1
    qs[q, 4] = ewma_update(qs[q, 4], a, alpha)
    a += s2
    qs[q, 5] = ewma_update(qs[q, 5], a, alpha)
    if full:
        return True
    avg = qs[q, 3 + avg_index(qi[q, 1], col)]
    p = red_drop_prob(avg, qmin[q, col], qmax[q, col], qmaxp[q, col], qi[q, 2] == 1)
    if qi[q, 3] == 0:
        return p > 0.0 and np.random.random() < p
    # ns-3 RED ("wait"): qs[q, 6] = count, qs[q, 7] = old
    if avg >= qmin[q, col] and s0 + s1 + s2 > 1:
        qs[q, 6] += 1.0
        if p >= 1.0:
            qs[q, 6] = 0.0
            return True
        if qs[q, 7] == 0.0:
            qs[q, 7] = 1.0
            qs[q, 6] = 1.0
            return False
        cp = qs[q, 6] * p  # Floyd & Jacobson's uniformisation: 0 below 1, p / (2 - count p) below 2, then 1
        pa = 0.0 if cp < 1.0 else (p / (2.0 - cp) if cp < 2.0 else 1.0)
        if pa > 0.0 and np.random.random() <= pa:
            qs[q, 6] = 0.0
            return True
        return False
    qs[q, 7] = 0.0
    qs[q, 6] += 1.0
    return False


@njit(cache=True, inline="always", _nrt=False)
def _uncount(s0, s1, s2, c):
    """The three colour counts (green, yellow, red) less one packet of colour ``c``."""
    if c == 0:
        return s0 - 1.0, s1, s2
    if c == 1:
        return s0, s1 - 1.0, s2
    return s0, s1, s2 - 1.0


@njit(cache=True, error_model="numpy", _nrt=False)
def _decay(qs, q, t, rate, qf):
    """After an idle period since ``qs[q, 9]`` the averages decay by (1 - alpha)^m, m idle packet times."""
    idle = t - qs[q, 9]
    if idle > 0.0:
        m = math.floor(idle * rate / (8.0 * qf[q, 1]))
        for k in range(3):
            qs[q, 3 + k] = ewma_idle(qs[q, 3 + k], qf[q, 0], m)


@njit(cache=True, error_model="numpy", _nrt=False)
def _fifo_admit(t, size, col, d, fdep, fcol, fh, qs, qmin, qmax, qmaxp, qi, qf, rate):
    """Offer one packet to direction ``d``'s FIFO. Returns its departure time (the last bit leaves), or -1 when the
    dropper or the full buffer drops it."""
    cap = fdep.shape[1]
    h = fh[d, 0]
    n = fh[d, 1]
    while n > 0 and fdep[d, h] <= t:  # packets whose last bit left before t are gone
        qs[d, fcol[d, h]] -= 1.0
        h += 1
        if h == cap:
            h = 0
        n -= 1
    fh[d, 0] = h
    fh[d, 1] = n
    if n == 0:
        _decay(qs, d, t, rate, qf)
    # what the averages see: waiting packets less the uncounted ones, taken from the head
    s0 = qs[d, 0]
    s1 = qs[d, 1]
    s2 = qs[d, 2]
    j = h
    for _ in range(min(qi[d, 4], n)):
        s0, s1, s2 = _uncount(s0, s1, s2, fcol[d, j])
        j += 1
        if j == cap:
            j = 0
    waiting = n - 1 if n > 0 else 0
    if _red_drop(qs, d, s0, s1, s2, col, waiting >= qi[d, 0], qmin, qmax, qmaxp, qi, qf[d, 0]):
        return -1.0
    start = t if n == 0 else max(t, qs[d, 8])
    dep = start + 8.0 * size / rate
    qs[d, 8] = dep
    qs[d, 9] = dep
    pos = h + n
    if pos >= cap:
        pos -= cap
    fdep[d, pos] = dep
    fcol[d, pos] = col
    fh[d, 1] = n + 1
    qs[d, col] += 1.0
    return dep


@njit(cache=True, error_model="numpy", _nrt=False)
def _class_offer(t, pid, col, k, rate, qs, ch, cring, qmin, qmax, qmaxp, qi, qf, cpol, wire_k):
    """Offer packet ``pid`` (colour ``col``) to class ``k``'s queue; True when it is queued. A class queue holds its
    waiting packets only (the packet on the wire has left it): its dropper sees what a FIFO's sees with
    ``uncounted=1``, and its averages decay after the class was idle (queue empty, nothing of it on the wire)
    since its last departure."""
    if col >= cpol[k]:
        return False
    q = 2 + k
    n = ch[k, 1]
    if n == 0 and wire_k != k:
        _decay(qs, q, t, rate, qf)
    if _red_drop(qs, q, qs[q, 0], qs[q, 1], qs[q, 2], col, n >= qi[q, 0], qmin, qmax, qmaxp, qi, qf[q, 0]):
        return False
    pos = ch[k, 0] + n
    if pos >= cring.shape[1]:
        pos -= cring.shape[1]
    cring[k, pos] = pid
    ch[k, 1] = n + 1
    qs[q, col] += 1.0
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def _class_next(d, sharing, dir_lv, lv_lo, lv_hi, lv_cur, lv_fresh, ch, cring, cdef, cquant, p_size, p_tag):
    """The scheduler of direction ``d``: the class whose head packet goes on the wire next (-1: nothing waits).
    Levels are served in order (strict priority); within a level, deficit round robin (``sharing`` 0: the class
    whose turn it is adds its quantum once per turn and sends while its deficit covers the head packet) or
    self-clocked fair queueing (``sharing`` 1: the smallest finish tag at the heads, the lower class on a tie)."""
    for lv in range(dir_lv[d, 0], dir_lv[d, 1]):
        lo = lv_lo[lv]
        hi = lv_hi[lv]
        busy = False
        for k in range(lo, hi):
            if ch[k, 1] > 0:
                busy = True
                break
        if not busy:
            continue
        if hi - lo == 1:
            return lo
        if sharing == 1:
            best = -1
            bt = np.inf
            for k in range(lo, hi):
                if ch[k, 1] > 0:
                    tag = p_tag[cring[k, ch[k, 0]]]
                    if tag < bt:
                        bt = tag
                        best = k
            return best
        while True:
            k = lv_cur[lv]
            if ch[k, 1] > 0:
                if lv_fresh[lv] == 0:
                    cdef[k] += cquant[k]
                    lv_fresh[lv] = 1
                size = p_size[cring[k, ch[k, 0]]]
                if cdef[k] >= size:
                    cdef[k] -= size
                    return k
            else:
                cdef[k] = 0.0
            lv_cur[lv] = lo if k + 1 == hi else k + 1
            lv_fresh[lv] = 0
    return -1


@njit(cache=True, error_model="numpy", _nrt=False)
def _class_pop(k, ch, cring, qs, p_col):
    """Take class ``k``'s head packet off its queue."""
    pid = cring[k, ch[k, 0]]
    h = ch[k, 0] + 1
    ch[k, 0] = 0 if h == cring.shape[1] else h
    ch[k, 1] -= 1
    qs[2 + k, p_col[pid]] -= 1.0
    return pid


# ---- small helpers ----------------------------------------------------------------------------------------------

@njit(cache=True, error_model="numpy", _nrt=False)
def _alloc(free, nfree):
    """A free packet slot, or -1 (and the exhaustion flag ``nfree[1]``) when none is left."""
    if nfree[0] == 0:
        nfree[1] = 1
        return -1
    nfree[0] -= 1
    return free[nfree[0]]


@njit(cache=True, inline="always", _nrt=False)
def _free(free, nfree, pid):
    free[nfree[0]] = pid
    nfree[0] += 1


@njit(cache=True, error_model="numpy", _nrt=False)
def _sched(ht, hk, hv, hn, ctr, t, kind, a, b):
    """Schedule an event (the next counter value orders it among events of the same time)."""
    E.push(ht, hk, hv, hn, t, ctr[0], E.pack(kind, a, b))
    ctr[0] += 1


@njit(cache=True, error_model="numpy", _nrt=False)
def _now_or_later(ht, hk, hv, hn, ctr, t, pid):
    """A packet reaches its queue at ``t`` = now: returns ``pid`` for the loop to handle at once when no other event is
    due at ``t`` (then it would be the next event anyway), else schedules it and returns -1."""
    if hn[0] == 0 or ht[0] > t:
        return pid
    _sched(ht, hk, hv, hn, ctr, t, EV_QUEUE, pid, 0)
    return -1


@njit(cache=True, error_model="numpy", _nrt=False)
def _colour(mkind, mstate, m, fixed, t, size, aware):
    """A packet's colour: marker ``m``'s (colour blind, or colour aware with the fixed colour as the pre-colour), or
    the fixed colour when ``m`` < 0."""
    if m < 0:
        return fixed
    return mark(mstate[m], mkind[m], t, size, fixed if aware else 0, aware)


@njit(cache=True, error_model="numpy", _nrt=False)
def _on_ack(S, SB, TS, f, t, p_s, p_sack, p_ns, pid, cand):
    """TCP flow ``f``'s sender processes ACK packet ``pid`` (its SACK blocks read in place)."""
    T.on_ack(S, SB, TS, f, t, p_s[pid], p_sack[pid], p_ns[pid], cand)


@njit(cache=True, error_model="numpy")
def _grow(rec):
    """The packet record with twice the rows."""
    out = np.empty((2 * rec.shape[0], rec.shape[1]))
    out[:rec.shape[0]] = rec
    return out


# ---- the loop ---------------------------------------------------------------------------------------------------

@njit(cache=True, error_model="numpy")
def run(seed, fp, ip, tcp, mk, qp, sch, udp, tfrc, out):
    """Run the dumbbell (arrays built by :func:`qosbound.validation.dumbbell_arrays.kernel_inputs`). ``fp`` = (delay,
    rate, rev_rate, delack, loss, ack_loss, duration, w0, w1, utx, think, data_size, header, handshake, syn_rto,
    request size on the wire); ``ip`` = (sack_blocks,
    marker_aware, pool, ulim, sharing, ccap, fifo_cap, heap_cap, record). Returns (packets, heap events, error code
    (0 none, 1 packet pool exhausted, 2 event heap full, 3 open-loop delay record full), open-loop delay records,
    packet record)."""
    np.random.seed(seed)
    delay, rate, rrate, delack, loss, ack_loss, duration, w0, w1, utx, think, data_size, header = (
        fp[0], fp[1], fp[2], fp[3], fp[4], fp[5], fp[6], fp[7], fp[8], fp[9], fp[10], fp[11], fp[12])
    sack_blocks, maware, pool, ulim, sharing, ccap, fifo_cap, heap_cap, record = (
        ip[0], ip[1] != 0, ip[2], ip[3], ip[4], ip[5], ip[6], ip[7], ip[8] != 0)
    S, SB, TS, RB, access, starts, colour, acolour, dmark, amark, fdir, dcls, acls, then, up, tr_tcp, hs = tcp
    mkind, mstate = mk
    qmin, qmax, qmaxp, qi, qf = qp
    dmode, cpol, cquant, cshare, dir_lv, lv_lo, lv_hi = sch
    ukind, urate, usize, udir, ucls, ucol, umark, ustart, ustop, uon, uoff, uacc, tr_udp = udp
    Q, H, tacc, tdir, tcls, tfcls, tcol, tmark, tstart, tfbsize, tr_tfrc = tfrc
    st, col_arr, col_drop, cst, udrop, ust, urec, tst, snap, tsnap, started = out
    n = S.shape[0]
    nu = ukind.shape[0]
    nt = Q.shape[0]
    W = SB.shape[1]
    rates = np.array([rate, rrate])
    ufree = np.zeros(up.max() + 1 if up.shape[0] > 0 else 1)
    ul = _uplink_state(ip, fp, up, qi, qmin, qmax, qmaxp, qf, dmode, fdir, dcls, acls, cpol)
    # packet pool: owner, type, seq/ack, SACK blocks, size, colour, send time, TFRC fields, SCFQ tag, record row
    p_f = np.zeros(pool, np.int64)
    p_type = np.zeros(pool, np.int64)
    p_s = np.zeros(pool, np.int64)
    p_ns = np.zeros(pool, np.int64)
    p_sack = np.zeros((pool, 8), np.int64)
    p_size = np.zeros(pool)
    p_col = np.zeros(pool, np.int64)
    p_t = np.zeros(pool)
    p_x = np.zeros((pool, 4))
    p_tag = np.zeros(pool)
    p_rec = np.full(pool, -1, np.int64)
    free = np.arange(pool - 1, -1, -1).astype(np.int64)
    nfree = np.array([pool, 0], np.int64)
    # queues: FIFO rings (departure time, colour), [head, count]; class rings of packet ids, [head, count], deficits
    K = cpol.shape[0]
    qs = np.zeros((2 + K, 10))
    fdep = np.zeros((2, fifo_cap))
    fcol = np.zeros((2, fifo_cap), np.int64)
    fh = np.zeros((2, 2), np.int64)
    ch = np.zeros((K, 2), np.int64)
    cring = np.zeros((K, ccap), np.int64)
    cdef = np.zeros(K)
    ctag = np.zeros(K)
    vt = np.zeros(2)
    lv_cur = lv_lo.copy()
    lv_fresh = np.zeros(lv_lo.shape[0], np.int64)
    wire = np.full(2, -1, np.int64)
    wire_k = np.full(2, -1, np.int64)
    u_end = np.zeros(nu)
    cand = np.zeros(W, np.int64)
    outb = np.zeros(W, np.int64)
    ht, hk, hv, hn = np.empty(heap_cap), np.empty(heap_cap, np.int64), np.empty(heap_cap, np.int64), np.zeros(2, np.int64)
    ctr = np.zeros(1, np.int64)
    for f in range(n):
        if starts[f] < np.inf:
            _sched(ht, hk, hv, hn, ctr, starts[f], EV_START, f, 0)
    for u in range(nu):
        if ustart[u] <= ustop[u]:
            if ukind[u] == 2:
                u_end[u] = ustart[u] + np.random.exponential(uon[u])
            _sched(ht, hk, hv, hn, ctr, ustart[u], EV_UDP_GEN, u, 0)
    for j in range(nt):
        F.start(Q, j, tstart[j])
        _sched(ht, hk, hv, hn, ctr, tstart[j], EV_TFRC_SEND, j, 0)
    _sched(ht, hk, hv, hn, ctr, w0, EV_WINDOW, 0, 0)
    pk = (p_f, p_type, p_s, p_ns, p_sack, p_size, p_col, p_t, p_x, p_tag, p_rec, free, nfree)
    qw = (qs, fdep, fcol, fh, ch, cring, cdef, ctag, vt, lv_cur, lv_fresh, wire, wire_k, rates)
    hp = (ht, hk, hv, hn, ctr)
    wk = (cand, outb, ufree, u_end, ul)
    ls = np.zeros(8)  # the loop's state between calls: t, in window, pending packet, packets, events, record rows
    ls[2] = -1.0
    rec = np.empty((64, 11))
    while True:
        status = _loop(fp, ip, tcp, mk, qp, sch, udp, tfrc, out, pk, qw, hp, wk, ls, rec)
        if status != -1:
            break
        rec = _grow(rec)  # the packet record is full: twice the rows, and go on
    for f in range(n):
        T.close_window(S, f, w1)
    error = status
    if error == 0 and nfree[1] != 0:
        error = 1
    if error == 0 and hn[1] != 0:
        error = 2
    return int(ls[3]), int(ls[4]), error, int(ls[6]), rec[:int(ls[5])].copy()


@njit(cache=True, error_model="numpy", _nrt=False)
def _loop(fp, ip, tcp, mk, qp, sch, udp, tfrc, out, pk, qw, hp, wk, ls, rec):
    """The event loop proper, until the end of the run (returns 0, or an error code 1-3) or until the packet record
    is full (returns -1: the caller grows it and calls again). No reference counting here (``_nrt=False``: every
    array is allocated by :func:`run`), which is most of the loop's speed."""
    delay, rate, rrate, delack, loss, ack_loss, duration, w0, w1, utx, think, data_size, header = (
        fp[0], fp[1], fp[2], fp[3], fp[4], fp[5], fp[6], fp[7], fp[8], fp[9], fp[10], fp[11], fp[12])
    sack_blocks, maware, pool, ulim, sharing, ccap, fifo_cap, heap_cap, record = (
        ip[0], ip[1] != 0, ip[2], ip[3], ip[4], ip[5], ip[6], ip[7], ip[8] != 0)
    S, SB, TS, RB, access, starts, colour, acolour, dmark, amark, fdir, dcls, acls, then, up, tr_tcp, hs = tcp
    mkind, mstate = mk
    qmin, qmax, qmaxp, qi, qf = qp
    dmode, cpol, cquant, cshare, dir_lv, lv_lo, lv_hi = sch
    ukind, urate, usize, udir, ucls, ucol, umark, ustart, ustop, uon, uoff, uacc, tr_udp = udp
    Q, H, tacc, tdir, tcls, tfcls, tcol, tmark, tstart, tfbsize, tr_tfrc = tfrc
    st, col_arr, col_drop, cst, udrop, ust, urec, tst, snap, tsnap, started = out
    p_f, p_type, p_s, p_ns, p_sack, p_size, p_col, p_t, p_x, p_tag, p_rec, free, nfree = pk
    handshake, syn_rto, req_size = fp[13] != 0.0, fp[14], fp[15]
    qs, fdep, fcol, fh, ch, cring, cdef, ctag, vt, lv_cur, lv_fresh, wire, wire_k, rates = qw
    ht, hk, hv, hn, ctr = hp
    cand, outb, ufree, u_end, ul = wk
    uaqm = ip[9] != 0
    upl = (ufree, utx, ulim, ul, mkind, mstate, colour, dmark, maware, data_size, p_col)
    n = S.shape[0]
    nt = Q.shape[0]
    W = SB.shape[1]
    t = ls[0]
    inwin = ls[1] != 0.0
    pend = int(ls[2])
    packets = int(ls[3])
    events = int(ls[4])
    nrec = int(ls[5])
    nrec_u = int(ls[6])
    error = 0
    while True:
        if record and nrec + W + 4 > rec.shape[0]:  # no room for a whole window of segments: grow the record
            error = -1
            break
        if pend >= 0:
            kind = EV_QUEUE
            a = pend
            b = 0
            pend = -1
        else:
            if hn[0] == 0:
                break
            t, key, v = E.pop(ht, hk, hv, hn)
            if t > duration:
                break
            events += 1
            kind = v & E.KIND_MASK
            a = (v >> 4) & E.A_MASK
            b = v >> 32
            inwin = t >= w0 and t <= w1
        if nfree[1] != 0:
            error = 1
            break
        if hn[1] != 0:
            error = 2
            break
        if kind == EV_QUEUE:  # a packet reaches its bottleneck queue
            pid = a
            f = p_f[pid]
            ty = p_type[pid]
            packets += 1
            lost = False
            if ty == P_ACK:
                d = 1 - fdir[f]
                k = acls[f]
                nb = p_ns[pid]
                size = header + (8.0 * nb + 4.0 if nb > 0 else 0.0)
                c = p_col[pid] if uaqm and up[n + f] >= 0 else _colour(mkind, mstate, amark[f], acolour[f], t, size,
                                                                      False)
                if inwin:
                    st[f, 5] += 1
                lost = ack_loss > 0.0 and np.random.random() < ack_loss
            elif ty == P_TCP:
                d = fdir[f]
                k = dcls[f]
                size = data_size
                c = p_col[pid] if uaqm else _colour(mkind, mstate, dmark[f], colour[f], t, data_size, maware)
                if inwin:
                    st[f, 2] += 1
                    col_arr[c] += 1
                lost = loss > 0.0 and np.random.random() < loss
                if lost and inwin:
                    st[f, 4] += 1
            elif ty == P_TFRC:
                d = tdir[f]
                k = tcls[f]
                size = Q[f, F.SIZE]
                c = _colour(mkind, mstate, tmark[f], tcol[f], t, size, False)
                if inwin:
                    tst[f, 1] += 1
                    if c == 0:
                        tst[f, 8] += 1
                lost = loss > 0.0 and np.random.random() < loss
                if lost and inwin:
                    tst[f, 3] += 1
            elif ty >= P_SYN:  # a handshake segment: the server's SYN-ACK as its data, the client's SYN and request as its ACKs
                if ty == P_SYNACK:
                    d = fdir[f]
                    k = dcls[f]
                    size = header
                    c = _colour(mkind, mstate, dmark[f], colour[f], t, size, maware)
                    lost = loss > 0.0 and np.random.random() < loss
                else:
                    d = 1 - fdir[f]
                    k = acls[f]
                    size = header if ty == P_SYN else req_size
                    c = _colour(mkind, mstate, amark[f], acolour[f], t, size, False)
                    lost = ack_loss > 0.0 and np.random.random() < ack_loss
            else:  # TFRC feedback
                d = 1 - tdir[f]
                k = tfcls[f]
                size = tfbsize[f]
                c = 0
                lost = ack_loss > 0.0 and np.random.random() < ack_loss
            if record and p_rec[pid] >= 0:
                r = p_rec[pid]
                rec[r, _R_DIR] = d
                rec[r, _R_CLS] = k if dmode[d] == 1 else -1
                rec[r, _R_COL] = c
                rec[r, _R_SIZE] = size
                rec[r, _R_ARR] = t
            ok = False
            if not lost:
                p_size[pid] = size
                p_col[pid] = c
                if dmode[d] == 0:
                    dep = _fifo_admit(t, size, c, d, fdep, fcol, fh, qs, qmin, qmax, qmaxp, qi, qf, rates[d])
                else:
                    if inwin:
                        cst[k, 0] += 1
                    dep = -1.0
                    if _class_offer(t, pid, c, k, rates[d], qs, ch, cring, qmin, qmax, qmaxp, qi, qf, cpol,
                                    wire_k[d]):
                        dep = -2.0
                        if sharing == 1:
                            tag = max(vt[d], ctag[k]) + (8.0 * size / rates[d]) / cshare[k]
                            ctag[k] = tag
                            p_tag[pid] = tag
                        if wire[d] < 0:  # the link is idle: this packet goes on the wire now
                            wire[d] = _class_pop(k, ch, cring, qs, p_col)
                            wire_k[d] = k
                            vt[d] = p_tag[pid]
                            E.push(ht, hk, hv, hn, t + 8.0 * size / rates[d], -2 + d, E.pack(EV_DEPART, d, 0))
                    elif inwin:
                        cst[k, 1] += 1
                ok = dep != -1.0
                if dep >= 0.0:  # a FIFO: the packet leaves at dep
                    if record and p_rec[pid] >= 0:
                        rec[p_rec[pid], _R_DEP] = dep
                    if ty == P_TCP:
                        _sched(ht, hk, hv, hn, ctr, dep + delay, EV_TCP_RX, pid, 0)
                    elif ty == P_ACK:
                        _sched(ht, hk, hv, hn, ctr, dep + delay + access[f], EV_TCP_ACK, pid, 0)
                    elif ty == P_TFRC:
                        _sched(ht, hk, hv, hn, ctr, dep + delay, EV_TFRC_RX, pid, 0)
                    elif ty >= P_SYN:  # the SYN-ACK reaches the client at the far router, the others the server
                        _sched(ht, hk, hv, hn, ctr, dep + delay + (0.0 if ty == P_SYNACK else access[f]), EV_HS_RX,
                               pid, 0)
                    else:
                        _sched(ht, hk, hv, hn, ctr, dep + delay + tacc[f], EV_TFRC_FB, pid, 0)
                if not ok and inwin:
                    if ty == P_ACK:
                        st[f, 6] += 1
                    elif ty == P_TCP:
                        st[f, 3] += 1
                        col_drop[c] += 1
                    elif ty == P_TFRC:
                        tst[f, 2] += 1
            elif ty == P_ACK and inwin:
                st[f, 6] += 1
            if not ok:
                if ty >= P_SYN:
                    hs[f, HS_DROPS] += 1.0
                if ty == P_TFRC and Q[f, F.MODE] == 1.0:
                    F.on_drop(Q, H, f, t)
                if record and p_rec[pid] >= 0:
                    rec[p_rec[pid], _R_DROP] = 1.0
                p_rec[pid] = -1
                _free(free, nfree, pid)
        elif kind == EV_TCP_RX:  # a data segment at its receiver
            pid = a
            f = p_f[pid]
            seq = p_s[pid]
            if record and p_rec[pid] >= 0:
                rec[p_rec[pid], _R_RX] = t
                p_rec[pid] = -1
            _free(free, nfree, pid)
            ack_now, delivered = T.on_data(S, RB, f, seq)
            if inwin:
                st[f, 1] += 1
                st[f, 0] += delivered
            if S[f, T.FILE] >= 0 and S[f, T.DONE_T] < 0 and S[f, T.RNXT] >= S[f, T.FILE]:
                S[f, T.DONE_T] = t
                if then[f] >= 0:  # the next file of this client (after a think time)
                    _sched(ht, hk, hv, hn, ctr, t + (np.random.exponential(think) if think > 0.0 else 0.0),
                           EV_START, then[f], 0)
            if ack_now == 0 and delack > 0.0:  # delack 0: no delayed ACKs, every segment acknowledged at once
                due = T.delack_arm(S, f, t, delack)
                if due < np.inf:
                    _sched(ht, hk, hv, hn, ctr, due, EV_DELACK, f, 0)
                continue
            pend = _ack(ht, hk, hv, hn, ctr, S, RB, f, seq, t, p_f, p_type, p_s, p_ns, p_sack, p_t, free, nfree,
                        sack_blocks, ul, up, mk, amark, acolour, header, p_col, udrop, inwin)
        elif kind == EV_TCP_ACK:  # an ACK at its sender
            pid = a
            f = p_f[pid]
            if inwin:
                st[f, 7] += 1
            _on_ack(S, SB, TS, f, t, p_s, p_sack, p_ns, pid, cand)
            _free(free, nfree, pid)
            nrec = _emit(ht, hk, hv, hn, ctr, S, SB, TS, f, t, cand, outb, p_f, p_type, p_s, p_t, p_rec, free, nfree,
                         access, up, upl, udrop, inwin, record and tr_tcp[f], rec, nrec)
        elif kind == EV_DEPART:  # the packet on direction a's wire has left; the scheduler picks the next
            d = a
            pid = wire[d]
            k = wire_k[d]
            if inwin:
                cst[k, 2] += p_size[pid]
                cst[k, 3] += 1
            if ch[k, 1] == 0:
                qs[2 + k, 9] = t
            ty = p_type[pid]
            f = p_f[pid]
            if record and p_rec[pid] >= 0:
                rec[p_rec[pid], _R_DEP] = t
            if ty == P_UDP:
                _sched(ht, hk, hv, hn, ctr, t + delay + uacc[f], EV_UDP_RX, pid, 0)
            elif ty == P_TCP:
                _sched(ht, hk, hv, hn, ctr, t + delay, EV_TCP_RX, pid, 0)
            elif ty == P_ACK:
                _sched(ht, hk, hv, hn, ctr, t + delay + access[f], EV_TCP_ACK, pid, 0)
            elif ty == P_TFRC:
                _sched(ht, hk, hv, hn, ctr, t + delay, EV_TFRC_RX, pid, 0)
            elif ty >= P_SYN:
                _sched(ht, hk, hv, hn, ctr, t + delay + (0.0 if ty == P_SYNACK else access[f]), EV_HS_RX, pid, 0)
            else:
                _sched(ht, hk, hv, hn, ctr, t + delay + tacc[f], EV_TFRC_FB, pid, 0)
            k = _class_next(d, sharing, dir_lv, lv_lo, lv_hi, lv_cur, lv_fresh, ch, cring, cdef, cquant, p_size,
                            p_tag)
            if k < 0:
                wire[d] = -1
                wire_k[d] = -1
            else:
                pid = _class_pop(k, ch, cring, qs, p_col)
                wire[d] = pid
                wire_k[d] = k
                vt[d] = p_tag[pid]
                E.push(ht, hk, hv, hn, t + 8.0 * p_size[pid] / rates[d], -2 + d, E.pack(EV_DEPART, d, 0))
        elif kind == EV_DELACK:  # delayed-ACK timer
            f = a
            due = T.delack_fire(S, f, t)
            if due == 2:
                _sched(ht, hk, hv, hn, ctr, S[f, T.DA_EV], EV_DELACK, f, 0)
            if due != 1:
                continue
            pend = _ack(ht, hk, hv, hn, ctr, S, RB, f, -1, t, p_f, p_type, p_s, p_ns, p_sack, p_t, free, nfree,
                        sack_blocks, ul, up, mk, amark, acolour, header, p_col, udrop, inwin)
        elif kind == EV_RTO:  # retransmission timer
            f = a
            due = T.on_timer(S, f, t)
            if due == 1:
                _sched(ht, hk, hv, hn, ctr, S[f, T.ARMED], EV_RTO, f, 0)
            if due != 2:
                continue
            T.on_timeout(S, SB, f, t, cand)
            nrec = _emit(ht, hk, hv, hn, ctr, S, SB, TS, f, t, cand, outb, p_f, p_type, p_s, p_t, p_rec, free, nfree,
                         access, up, upl, udrop, inwin, record and tr_tcp[f], rec, nrec)
        elif kind == EV_UDP_GEN:  # open-loop source a generates packet number b at its queue
            u = a
            gap = 8.0 * usize[u] / urate[u]
            nxt = ustart[u] + (b + 1) * gap if ukind[u] == 0 else t + (
                np.random.exponential(gap) if ukind[u] == 1 else gap)
            if ukind[u] == 2:
                while nxt >= u_end[u]:  # the on period ends: an off period, then the next on period
                    nxt = u_end[u] + np.random.exponential(uoff[u])
                    u_end[u] = nxt + np.random.exponential(uon[u])
            if nxt <= ustop[u]:
                _sched(ht, hk, hv, hn, ctr, nxt, EV_UDP_GEN, u, b + 1)
            packets += 1
            d = udir[u]
            size = usize[u]
            c = _colour(mkind, mstate, umark[u], ucol[u], t, size, False)
            if inwin:
                ust[u, 0] += 1
            pid = _alloc(free, nfree)
            if pid < 0:
                continue
            p_f[pid] = u
            p_type[pid] = P_UDP
            p_t[pid] = t
            p_size[pid] = size
            p_col[pid] = c
            r = -1
            if record and tr_udp[u]:
                r = nrec
                nrec += 1
                _rec_new(rec, r, P_UDP, u, t)
                rec[r, _R_DIR] = d
                rec[r, _R_COL] = c
                rec[r, _R_SIZE] = size
                rec[r, _R_ARR] = t
            p_rec[pid] = r
            if dmode[d] == 0:
                dep = _fifo_admit(t, size, c, d, fdep, fcol, fh, qs, qmin, qmax, qmaxp, qi, qf, rates[d])
                if dep >= 0.0:
                    if r >= 0:
                        rec[r, _R_DEP] = dep
                    _sched(ht, hk, hv, hn, ctr, dep + delay + uacc[u], EV_UDP_RX, pid, 0)
            else:
                k = ucls[u]
                if r >= 0:
                    rec[r, _R_CLS] = k
                if inwin:
                    cst[k, 0] += 1
                dep = -1.0
                if _class_offer(t, pid, c, k, rates[d], qs, ch, cring, qmin, qmax, qmaxp, qi, qf, cpol, wire_k[d]):
                    dep = -2.0
                    if sharing == 1:
                        tag = max(vt[d], ctag[k]) + (8.0 * size / rates[d]) / cshare[k]
                        ctag[k] = tag
                        p_tag[pid] = tag
                    if wire[d] < 0:
                        wire[d] = _class_pop(k, ch, cring, qs, p_col)
                        wire_k[d] = k
                        vt[d] = p_tag[pid]
                        E.push(ht, hk, hv, hn, t + 8.0 * size / rates[d], -2 + d, E.pack(EV_DEPART, d, 0))
                elif inwin:
                    cst[k, 1] += 1
            if dep == -1.0:
                if inwin:
                    ust[u, 1] += 1
                if r >= 0:
                    rec[r, _R_DROP] = 1.0
                p_rec[pid] = -1
                _free(free, nfree, pid)
        elif kind == EV_UDP_RX:  # an open-loop packet reaches its receiver
            pid = a
            u = p_f[pid]
            g = p_t[pid]
            if record and p_rec[pid] >= 0:
                rec[p_rec[pid], _R_RX] = t
                p_rec[pid] = -1
            if g >= w0 and g <= w1:
                ust[u, 2] += 1
                ust[u, 3] += usize[u]
                if nrec_u >= urec.shape[0]:
                    error = 3
                    break
                urec[nrec_u, 0] = u
                urec[nrec_u, 1] = g
                urec[nrec_u, 2] = t - g
                nrec_u += 1
            _free(free, nfree, pid)
        elif kind == EV_TFRC_SEND:  # TFRC sender a's pacing timer (generation b)
            j = a
            if b != int(Q[j, F.GEN]):
                continue  # superseded by a feedback's reschedule
            seq = F.on_send(Q, j, t)
            if inwin:
                tst[j, 0] += 1
            pid = _alloc(free, nfree)
            if pid >= 0:
                p_f[pid] = j
                p_type[pid] = P_TFRC
                p_s[pid] = seq
                p_t[pid] = t
                p_x[pid, 0] = Q[j, F.R]
                r = -1
                if record and tr_tfrc[j]:
                    r = nrec
                    nrec += 1
                    _rec_new(rec, r, P_TFRC, j, t)
                p_rec[pid] = r
                _sched(ht, hk, hv, hn, ctr, t + tacc[j], EV_QUEUE, pid, 0)
            if F.rate_due(Q, H, j, t) and inwin:
                tst[j, 6] += Q[j, F.R]
                tst[j, 7] += 1
            _sched(ht, hk, hv, hn, ctr, t + F.send_gap(Q, j), EV_TFRC_SEND, j, b)
        elif kind == EV_TFRC_RX:  # a TFRC packet reaches its receiver
            pid = a
            j = p_f[pid]
            if record and p_rec[pid] >= 0:
                rec[p_rec[pid], _R_RX] = t
                p_rec[pid] = -1
            if inwin:
                tst[j, 4] += 1
                tst[j, 5] += p_size[pid]
            if Q[j, F.MODE] == 1.0:  # the sender learns the RTT sample at once
                F.rtt_sample(Q, j, t - p_t[pid] + delay + tacc[j])
                _free(free, nfree, pid)
                continue
            due = F.rx_packet(Q, H, j, t, p_s[pid], p_t[pid], p_size[pid], p_x[pid, 0])
            _free(free, nfree, pid)
            if due == 2:
                _sched(ht, hk, hv, hn, ctr, t + F.rx_rtt(Q, j), EV_TFRC_TIMER, j, 0)
            if due > 0:
                pend = _feedback(ht, hk, hv, hn, ctr, Q, j, t, p_f, p_type, p_x, free, nfree)
        elif kind == EV_TFRC_TIMER:  # the TFRC receiver's once-per-RTT feedback timer
            j = a
            _sched(ht, hk, hv, hn, ctr, t + F.rx_rtt(Q, j), EV_TFRC_TIMER, j, 0)
            if F.rx_timer_due(Q, j):
                pend = _feedback(ht, hk, hv, hn, ctr, Q, j, t, p_f, p_type, p_x, free, nfree)
        elif kind == EV_TFRC_FB:  # a feedback reaches its TFRC sender
            pid = a
            j = p_f[pid]
            F.on_feedback(Q, j, t, p_x[pid, 0], p_x[pid, 1], p_x[pid, 2], p_x[pid, 3])
            _free(free, nfree, pid)
            if inwin:
                tst[j, 6] += Q[j, F.R]
                tst[j, 7] += 1
            _sched(ht, hk, hv, hn, ctr, F.next_send(Q, j, t), EV_TFRC_SEND, j, int(Q[j, F.GEN]))
        elif kind == EV_WINDOW:  # the measurement window opens: note the counters
            for f in range(n):
                snap[f, 0] = S[f, T.N_SENT]
                snap[f, 1] = S[f, T.N_RETX]
                snap[f, 2] = S[f, T.N_RTO]
                snap[f, 3] = S[f, T.N_FR]
            for j in range(nt):
                tsnap[j, 0] = Q[j, F.N_SENT]
                tsnap[j, 1] = Q[j, F.N_RECV]
                tsnap[j, 2] = Q[j, F.N_LOST]
                tsnap[j, 3] = Q[j, F.N_EVENTS]
        elif kind == EV_HS_RX:  # a handshake segment at its end
            pid = a
            f = p_f[pid]
            ty = p_type[pid]
            _free(free, nfree, pid)
            if hs[f, HS_PHASE] == 1.0 and ty == P_SYN:  # the server answers every SYN (its SYN-ACK after its access)
                _hs_send(ht, hk, hv, hn, ctr, f, P_SYNACK, t, t + access[f], p_f, p_type, p_t, p_rec, free, nfree)
            elif hs[f, HS_PHASE] == 1.0 and ty == P_SYNACK:  # established: the client sends its request
                hs[f, HS_PHASE] = 2.0
                hs[f, HS_EST] = t
                _hs_arm(ht, hk, hv, hn, ctr, hs, f, t, syn_rto)
                _hs_send(ht, hk, hv, hn, ctr, f, P_REQ, t, t, p_f, p_type, p_t, p_rec, free, nfree)
            elif hs[f, HS_PHASE] == 2.0 and ty == P_REQ:  # the request at the server: the transfer starts
                hs[f, HS_PHASE] = 3.0
                nrec = _emit(ht, hk, hv, hn, ctr, S, SB, TS, f, t, cand, outb, p_f, p_type, p_s, p_t, p_rec, free,
                             nfree, access, up, upl, udrop, inwin, record and tr_tcp[f], rec, nrec)
        elif kind == EV_HS_TIMER:  # the client's handshake timer: retransmit the SYN or the request, back off
            f = a
            if b != int(hs[f, HS_ATTEMPT]) or (hs[f, HS_PHASE] != 1.0 and hs[f, HS_PHASE] != 2.0):
                continue
            hs[f, HS_RETX] += 1.0
            _hs_arm(ht, hk, hv, hn, ctr, hs, f, t, min(2.0 * hs[f, HS_RTO], 60.0))
            _hs_send(ht, hk, hv, hn, ctr, f, P_SYN if hs[f, HS_PHASE] == 1.0 else P_REQ, t, t, p_f, p_type, p_t,
                     p_rec, free, nfree)
        else:  # a TCP flow starts
            f = a
            started[f] = t
            if handshake:  # the client opens the connection: SYN now (it sits at the far router), its timer armed
                hs[f, HS_PHASE] = 1.0
                _hs_arm(ht, hk, hv, hn, ctr, hs, f, t, syn_rto)
                _hs_send(ht, hk, hv, hn, ctr, f, P_SYN, t, t, p_f, p_type, p_t, p_rec, free, nfree)
                continue
            nrec = _emit(ht, hk, hv, hn, ctr, S, SB, TS, f, t, cand, outb, p_f, p_type, p_s, p_t, p_rec, free, nfree,
                         access, up, upl, udrop, inwin, record and tr_tcp[f], rec, nrec)
    ls[0] = t
    ls[1] = 1.0 if inwin else 0.0
    ls[2] = pend
    ls[3] = packets
    ls[4] = events
    ls[5] = nrec
    ls[6] = nrec_u
    return error


@njit(cache=True, error_model="numpy", _nrt=False)
def _rec_new(rec, r, ty, src, t_sent):
    rec[r, _R_TYPE] = ty
    rec[r, _R_SRC] = src
    rec[r, _R_DIR] = -1.0
    rec[r, _R_CLS] = -1.0
    rec[r, _R_COL] = 0.0
    rec[r, _R_SIZE] = 0.0
    rec[r, _R_SENT] = t_sent
    rec[r, _R_ARR] = np.nan
    rec[r, _R_DEP] = np.nan
    rec[r, _R_DROP] = 0.0
    rec[r, _R_RX] = np.nan


@njit(cache=True, error_model="numpy", _nrt=False)
def _emit(ht, hk, hv, hn, ctr, S, SB, TS, f, t, cand, outb, p_f, p_type, p_s, p_t, p_rec, free, nfree, access, up,
          upl, udrop, inwin, traced, rec, nrec):
    """Let TCP flow ``f`` send what its window allows now (toward its bottleneck queue) and keep its timer armed.
    With uplinks (``utx`` > 0: one data segment's transmission time on them) the segments queue for the uplink
    ``up[f]`` of the flow's node before the access delay (``upl``: the uplinks' state and what colours a segment): a
    drop-tail FIFO holding ``ulim`` segments or, with the uplink AQM (``ul``), the node's marker colours each segment
    now and the uplink's dropper of the segment's bottleneck queue judges it (:func:`_uplink_admit`). A traced flow's segments take packet-record rows from
    ``nrec`` on (the caller leaves room for a window). Returns the record rows in use."""
    ufree, utx, ulim, ul, mkind, mstate, colour, dmark, maware, data_size, p_col = upl
    k = T.send_batch(S, SB, TS, f, t, cand, outb)
    g = up[f]
    aqm = ul[0][0] != 0.0
    c = 0
    dep = 0.0
    for j in range(k):
        if aqm:
            c = _colour(mkind, mstate, dmark[f], colour[f], t, data_size, maware)
            if inwin:
                udrop[f, 1 + c] += 1
            dep = _uplink_admit(ul, g, ul[11][f], ul[13][f], c, data_size, t)
            if dep < 0.0:
                if inwin:
                    udrop[f, 0] += 1
                    udrop[f, 4 + c] += 1
                continue
        elif utx > 0.0:
            if ufree[g] - t >= ulim * utx - 1e-12:
                if inwin:
                    udrop[f, 0] += 1
                continue
        pid = _alloc(free, nfree)
        if pid < 0:
            return nrec
        p_f[pid] = f
        p_type[pid] = P_TCP
        p_s[pid] = outb[j]
        p_t[pid] = t
        if traced:
            _rec_new(rec, nrec, P_TCP, f, t)
            p_rec[pid] = nrec
            nrec += 1
        else:
            p_rec[pid] = -1
        if aqm:
            p_col[pid] = c
            _sched(ht, hk, hv, hn, ctr, dep + access[f], EV_QUEUE, pid, 0)
        elif utx > 0.0:
            ufree[g] = max(t, ufree[g]) + utx
            _sched(ht, hk, hv, hn, ctr, ufree[g] + access[f], EV_QUEUE, pid, 0)
        else:
            _sched(ht, hk, hv, hn, ctr, t + access[f], EV_QUEUE, pid, 0)
    d = T.timer_to_arm(S, f)
    if d < np.inf:
        _sched(ht, hk, hv, hn, ctr, d, EV_RTO, f, 0)
    return nrec


# ---- the node uplinks' AQM --------------------------------------------------------------------------------------
#
# ``ul`` (built by _uplink_state): [0] (flag, uplink rate bit/s, rows R, packets an uplink holds), [1] ring
# departure times (G, cap), [2] ring rows, [3] ring colours, [4] ring [head, count] per uplink, [5] last departure per uplink, [6] per
# (uplink, row) state as the bottleneck's qs rows, [7..10] the rows' qmin, qmax, qmaxp, qi tiled per uplink, [12]
# qf tiled; per flow [11] its data's row, [13] its data's policer, [14] its ACKs' row, [15] its ACKs' policer.

@njit(cache=True, error_model="numpy")
def _uplink_state(ip, fp, up, qi, qmin, qmax, qmaxp, qf, dmode, fdir, dcls, acls, cpol):
    """The node uplinks' AQM state (all zero-sized but the flag when the option is off)."""
    n = fdir.shape[0]
    on = ip[9] != 0 and fp[9] > 0.0
    R = qi.shape[0]
    G = 1
    cap = 2
    GR = 1
    head = np.zeros(4)
    if on:
        G = up.max() + 1
        tot = 0
        for q in range(R):
            tot += qi[q, 0]
        cap = min(ip[3], tot) + 2
        GR = G * R
        head[0] = 1.0
        head[1] = 8.0 * fp[11] / fp[9]
        head[2] = R
        head[3] = ip[3]
    rt = np.zeros((G, cap))
    rr = np.zeros((G, cap), np.int64)
    rc = np.zeros((G, cap), np.int64)
    rh = np.zeros((G, 2), np.int64)
    last = np.zeros(G)
    uqs = np.zeros((GR, 10))
    uqmin = np.zeros((GR, 3))
    uqmax = np.zeros((GR, 3))
    uqmaxp = np.zeros((GR, 3))
    uqi = np.zeros((GR, qi.shape[1]), np.int64)
    uqf = np.zeros((GR, qf.shape[1]))
    if on:
        for g in range(G):
            for q in range(R):
                r = g * R + q
                uqmin[r] = qmin[q]
                uqmax[r] = qmax[q]
                uqmaxp[r] = qmaxp[q]
                uqi[r] = qi[q]
                uqf[r] = qf[q]
    drow = np.zeros(n, np.int64)
    arow = np.zeros(n, np.int64)
    dpol = np.full(n, 3, np.int64)
    apol = np.full(n, 3, np.int64)
    for f in range(n):
        d = fdir[f]
        if dmode[d] == 0:
            drow[f] = d
        else:
            drow[f] = 2 + dcls[f]
            dpol[f] = cpol[dcls[f]]
        if dmode[1 - d] == 0:
            arow[f] = 1 - d
        else:
            arow[f] = 2 + acls[f]
            apol[f] = cpol[acls[f]]
    return (head, rt, rr, rc, rh, last, uqs, uqmin, uqmax, uqmaxp, uqi, drow, uqf, dpol, arow, apol)


@njit(cache=True, error_model="numpy", _nrt=False)
def _uplink_admit(ul, g, q, pol, col, size, t):
    """Offer a ``size``-byte packet of colour ``col``, bound for bottleneck queue row ``q`` (policer ``pol``), to node
    uplink ``g``: one FIFO served at the uplink rate, whose arrivals of row ``q`` meet row ``q``'s dropper with its
    own averages per uplink (they see the row's packets in the uplink, the one on the wire excluded, and decay after
    the row has had none since its last departure). Drops: a colour at or above the policer's, the dropper, or no
    room (``Dumbbell.uplink_limit`` packets of the uplink waiting, or the row's limit). Returns the departure time (the
    last bit leaves the node), or -1."""
    if col >= pol:
        return -1.0
    head, rt, rr, rc, rh, last, uqs, uqmin, uqmax, uqmaxp, uqi, uqf = (ul[0], ul[1], ul[2], ul[3], ul[4], ul[5],
                                                                    ul[6], ul[7], ul[8], ul[9], ul[10], ul[12])
    urate = head[1]
    R = int(head[2])
    ulim = head[3]
    cap = rt.shape[1]
    h = rh[g, 0]
    n = rh[g, 1]
    while n > 0 and rt[g, h] <= t:  # packets whose last bit left before t are gone
        uqs[g * R + rr[g, h], rc[g, h]] -= 1.0
        h += 1
        if h == cap:
            h = 0
        n -= 1
    rh[g, 0] = h
    rh[g, 1] = n
    row = g * R + q
    s0 = uqs[row, 0]
    s1 = uqs[row, 1]
    s2 = uqs[row, 2]
    if s0 + s1 + s2 == 0.0:
        _decay(uqs, row, t, urate, uqf)
    if n > 0 and rr[g, h] == q:  # the packet on the wire is not waiting
        s0, s1, s2 = _uncount(s0, s1, s2, rc[g, h])
    waiting = n - 1 if n > 0 else 0
    full = waiting >= ulim or s0 + s1 + s2 >= uqi[row, 0]
    if _red_drop(uqs, row, s0, s1, s2, col, full, uqmin, uqmax, uqmaxp, uqi, uqf[row, 0]):
        return -1.0
    start = t if n == 0 else max(t, last[g])
    dep = start + 8.0 * size / urate
    last[g] = dep
    uqs[row, 9] = dep
    pos = h + n
    if pos >= cap:
        pos -= cap
    rt[g, pos] = dep
    rr[g, pos] = q
    rc[g, pos] = col
    rh[g, 1] = n + 1
    uqs[row, col] += 1.0
    return dep


@njit(cache=True, error_model="numpy", _nrt=False)
def _hs_send(ht, hk, hv, hn, ctr, f, ty, t, at, p_f, p_type, p_t, p_rec, free, nfree):
    """A handshake segment of TCP flow ``f`` (SYN, SYN-ACK or request, sent at ``t``) reaches its bottleneck queue
    at ``at``."""
    pid = _alloc(free, nfree)
    if pid < 0:
        return
    p_f[pid] = f
    p_type[pid] = ty
    p_t[pid] = t
    p_rec[pid] = -1
    _sched(ht, hk, hv, hn, ctr, at, EV_QUEUE, pid, 0)


@njit(cache=True, error_model="numpy", _nrt=False)
def _hs_arm(ht, hk, hv, hn, ctr, hs, f, t, rto):
    """(Re)arm flow ``f``'s handshake timer ``rto`` seconds from ``t`` (earlier timer events become stale)."""
    hs[f, HS_ATTEMPT] += 1.0
    hs[f, HS_RTO] = rto
    _sched(ht, hk, hv, hn, ctr, t + rto, EV_HS_TIMER, f, int(hs[f, HS_ATTEMPT]))


@njit(cache=True, error_model="numpy", _nrt=False)
def _ack(ht, hk, hv, hn, ctr, S, RB, f, trigger, t, p_f, p_type, p_s, p_ns, p_sack, p_t, free, nfree, sack_blocks,
         ul, up, mk, amark, acolour, header, p_col, udrop, inwin):
    """The receiver of TCP flow ``f`` sends an ACK now (cumulative ACK and SACK blocks) toward its queue; the
    delayed-ACK timer is cancelled. With the uplink AQM and an uplink for the receiver's ACKs (``up[n + f]`` >= 0)
    the ACK is coloured at the receiver's node and offered to that uplink first (:func:`_uplink_admit`). Returns
    the packet when the loop hands it to its queue at once, else -1."""
    T.ack_sent(S, f)
    pid = _alloc(free, nfree)
    if pid < 0:
        return -1
    p_f[pid] = f
    p_type[pid] = P_ACK
    p_s[pid] = int(S[f, T.RNXT])
    p_ns[pid] = T.build_sack(S, RB, f, trigger, p_sack[pid], sack_blocks)
    p_t[pid] = t
    n = S.shape[0]
    if ul[0][0] != 0.0 and up[n + f] >= 0:
        nb = p_ns[pid]
        size = header + (8.0 * nb + 4.0 if nb > 0 else 0.0)
        c = _colour(mk[0], mk[1], amark[f], acolour[f], t, size, False)
        dep = _uplink_admit(ul, up[n + f], ul[14][f], ul[15][f], c, size, t)
        if dep < 0.0:
            if inwin:
                udrop[f, 7] += 1
            _free(free, nfree, pid)
            return -1
        p_col[pid] = c
        _sched(ht, hk, hv, hn, ctr, dep, EV_QUEUE, pid, 0)
        return -1
    return _now_or_later(ht, hk, hv, hn, ctr, t, pid)


@njit(cache=True, error_model="numpy", _nrt=False)
def _feedback(ht, hk, hv, hn, ctr, Q, j, t, p_f, p_type, p_x, free, nfree):
    """The TFRC receiver of flow ``j`` sends a feedback now toward its queue. Returns the packet when the loop hands
    it to its queue at once, else -1."""
    pid = _alloc(free, nfree)
    if pid < 0:
        return -1
    p_f[pid] = j
    p_type[pid] = P_FB
    F.make_feedback(Q, j, t, p_x, pid)
    return _now_or_later(ht, hk, hv, hn, ctr, t, pid)
