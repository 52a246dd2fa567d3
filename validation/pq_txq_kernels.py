"""The compiled (numba) kernels of the PQ + TxQ packet simulator (Ferrari, Pau & Raffaelli 2001, "Measurement Based Analysis of Delay in Priority Queueing").

Semantics (the same as the closed forms and the PRISM model; DESIGN.md,
"Priority queue + transmission queue"):

* time is continuous; with saturated best effort (BE) the line is always busy
  and the transmission queue (TxQ) always holds packets;
* with a BE load (``be_lam_tick > 0``) BE packets arrive as a Poisson process
  and wait in an unbounded FIFO BE queue (a counter: a BE packet's size is
  drawn i.i.d. from the size mix when it enters the TxQ, which has the same
  law as drawing it on arrival); the scheduler takes a BE packet only when the
  PQ is empty and the BE queue is not, so the TxQ may empty and the line idle;
  an arrival (EF or BE) finding fewer than ``Q_t`` units occupied enters the
  TxQ at once (an arrival at the very instant of a departure is handled after
  it, as below);
* a packet of ``size`` bytes occupies ``ceil(size/unit)`` units of the TxQ;
* when the last bit of the head packet leaves at time ``t`` its units are freed;
  then every EF arrival with arrival time ``<= t`` joins the priority queue (PQ),
  or is lost when the PQ already holds ``pq_cap`` packets; then the scheduler
  moves packets into the TxQ while fewer than ``Q_t`` units are occupied: the
  head EF packet if the PQ is non-empty, else a BE packet whose size is drawn
  i.i.d. from the BE size distribution (with a BE load: only if one waits),
  and BE arrivals up to ``t`` join the BE queue before that refill;
* at time 0 the TxQ is filled with BE packets (drawn) and the PQ is empty (with
  a BE load: every queue is empty);
* EF delay = departure of its last bit - its arrival.

EF arrival processes: ``poisson`` (exponential inter-arrival times, rate
``lam``), ``cbr`` (period ``1/lam``, first arrival at a uniform random phase in
one period), ``bernoulli`` (slotted: at each time ``k * tau``, k = 1, 2, ..., an
arrival with probability ``lam * tau``; ``tau = g*8/C`` where ``g`` is the gcd in
bytes of the EF size and all BE sizes), ``aggregate`` (the superposition of
several streams, Ferrari et al. 2001 section V: stream ``i`` is Poisson of rate
``s_rate[i]`` or CBR of period ``1/s_rate[i]`` whose first arrival is at
``s_phase[i]``, or at a uniform random phase in one period, drawn independently
per stream and replication, when ``s_phase[i] < 0``; the next arrival of the
aggregate is the earliest next arrival of its streams, ties to the lower index; the streams are kept in a
binary heap on (next arrival, index), so an arrival costs O(log streams), not O(streams); CBR streams of one
rate whose phases lie within one period arrive in phase order round after round, O(1) per arrival, the
order of two arrivals whose times round to the same float going to the lower phase).
Every EF packet carries its stream's index (0 for the single-stream processes);
``sstats[i]`` counts stream ``i``'s arrivals, losses, delays and delay sum.

Time inside the kernels is counted in ticks of ``g*8/C`` (one byte time when a
size is not a whole number of bytes), so with whole-byte sizes every departure
time is an exact integer number of ticks and Bernoulli delays are exact.

:mod:`qosbound.validation.pq_txq_sim` converts parameters for these kernels and
runs them; :mod:`qosbound.validation.pq_txq_reference` is a plain-Python loop of
the same semantics that the tests compare them with.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)

__all__ = ["ARRIVALS", "NEVER", "N_STATS", "N_SSTATS", "SS_ARRIVALS", "SS_LOST", "SS_DELAYS", "SS_SUM",
           "S_ARRIVALS", "S_LOST", "S_DELAYS", "S_SUM", "S_SUMSQ", "S_MAX",
           "S_OVERFLOW", "S_PACKETS", "S_TIME", "simulate_one", "simulate_batch"]

#: Arrival process codes of the kernels.
ARRIVALS = {"poisson": 0, "cbr": 1, "bernoulli": 2, "aggregate": 3}
#: ``max_rows`` of a statistics run (no trace) and ``max_ef`` of a trace run: never reached.
NEVER = np.int64(2**62)

# Indices into a replication's statistics vector.
S_ARRIVALS, S_LOST, S_DELAYS, S_SUM, S_SUMSQ, S_MAX, S_OVERFLOW, S_PACKETS, S_TIME = range(9)
N_STATS = 9
#: Columns of a replication's per-stream statistics ``sstats[stream]``: arrivals, losses, delays, delay sum.
SS_ARRIVALS, SS_LOST, SS_DELAYS, SS_SUM = range(4)
N_SSTATS = 4


@njit(cache=True)
def _next_arrival(kind, lam_tick, p_slot, phase, k, prev):
    """Arrival time (ticks) of EF packet number k (0-based), given the previous one."""
    if kind == 0:
        return prev + np.random.exponential(1.0 / lam_tick)
    elif kind == 1:
        return phase + k / lam_tick
    else:
        return prev + np.float64(np.random.geometric(p_slot))


@njit(cache=True)
def _stream_next(i, s_kind, s_rate, s_phase, s_count, prev):
    """Next arrival time (ticks) of aggregate stream ``i`` after its ``s_count[i]`` arrivals so far."""
    if s_kind[i] == 0:
        return prev + np.random.exponential(1.0 / s_rate[i])
    return s_phase[i] + s_count[i] / s_rate[i]


@njit(cache=True)
def _before(s_next, i, j):
    """Stream ``i``'s next arrival comes before stream ``j``'s (ties to the lower index)."""
    return s_next[i] < s_next[j] or (s_next[i] == s_next[j] and i < j)


@njit(cache=True)
def _sift_down(heap, s_next, k):
    """Restore the heap order of ``heap`` (stream indices keyed by their next arrival) below position ``k``."""
    n = heap.shape[0]
    while True:
        c = 2 * k + 1
        if c >= n:
            return
        if c + 1 < n and _before(s_next, heap[c + 1], heap[c]):
            c += 1
        if _before(s_next, heap[c], heap[k]):
            tmp = heap[k]
            heap[k] = heap[c]
            heap[c] = tmp
            k = c
        else:
            return


@njit(cache=True)
def _one_period(s_kind, s_rate, s_ph):
    """Whether every stream is CBR of one rate with its phases within one period (its arrivals then come in
    the order of the phases, round after round)."""
    n = s_kind.shape[0]
    lo = s_ph[0]
    hi = s_ph[0]
    for i in range(n):
        if s_kind[i] != 1 or s_rate[i] != s_rate[0]:
            return False
        lo = min(lo, s_ph[i])
        hi = max(hi, s_ph[i])
    return hi - lo < 1.0 / s_rate[0]


@njit(cache=True)
def _heapify(heap, s_next):
    """Order ``heap`` (a permutation of the stream indices) so that ``heap[0]`` is the earliest stream."""
    for k in range(heap.shape[0] // 2 - 1, -1, -1):
        _sift_down(heap, s_next, k)


@njit(cache=True)
def _draw_be(cum):
    u = np.random.random()
    j = 0
    n = cum.shape[0]
    while j < n - 1 and u >= cum[j]:
        j += 1
    return j


@njit(cache=True)
def simulate_one(seed, kind, lam_tick, p_slot, ef_ticks, ef_units, be_ticks, be_units, be_cum, be_lam_tick, Q_t,
              pq_cap, max_ef, warm, max_rows, width_ticks, thresholds,
              counts, bmin, bmax, above, stats,
              tr_cls, tr_size, tr_arr, tr_dep, tr_drop, tr_work, tr_ahead,
              s_kind, s_rate, s_phase, sstats, tr_stream):
    """One replication. Statistics mode: ``max_ef`` EF arrivals, the first ``warm`` not counted, run until
    every accepted EF packet has left. Trace mode (``max_rows`` < 2^62): stop creating packets after
    ``max_rows`` rows, then drain; rows go to the ``tr_*`` arrays (cls 0 = EF, 1 = BE; a BE row's arrival is the
    time it entered the TxQ; ``tr_stream`` the EF stream). ``be_lam_tick``: BE packets per tick, 0 for saturated
    best effort. ``s_kind`` (0 Poisson, 1 CBR), ``s_rate`` (per tick) and ``s_phase`` (ticks, < 0 random) describe
    the streams of ``kind`` 3 (aggregate); ``sstats`` (streams x N_SSTATS) receives per-stream counts."""
    np.random.seed(seed)
    tracing = max_rows < 4611686018427387904
    nbins = counts.shape[0]
    nthr = thresholds.shape[0]
    inv_width = 1.0 / width_ticks
    # TxQ ring buffer (at most Q_t packets: each takes >= 1 unit and entry needs occupied < Q_t).
    q_tx = np.empty(Q_t, np.float64)
    q_units = np.empty(Q_t, np.int64)
    q_arr = np.empty(Q_t, np.float64)  # EF arrival time, or -1 for BE
    q_row = np.empty(Q_t, np.int64)
    q_str = np.zeros(Q_t, np.int64)  # EF stream index
    q_head = 0
    q_tail = 0
    q_n = 0
    occupied = 0
    # PQ ring buffer.
    p_arr = np.empty(pq_cap, np.float64)
    p_row = np.empty(pq_cap, np.int64)
    p_str = np.zeros(pq_cap, np.int64)
    p_head = 0
    p_tail = 0
    p_n = 0
    rows = 0
    t = 0.0
    work = 0.0  # total transmission time in the TxQ from t on (ticks)
    ef_in = 0  # accepted EF packets not yet departed
    ef_gen = 0
    phase = 0.0
    n_str = s_kind.shape[0]
    s_next = np.zeros(n_str, np.float64)
    s_count = np.zeros(n_str, np.float64)
    s_ph = s_phase.copy()
    s_heap = np.arange(n_str)  # the streams as a binary heap on (next arrival, index), or in phase order
    s_pos = 0  # position in phase order (cyclic streams)
    cyclic = False
    cur = 0  # stream of the next arrival
    if kind == 1:
        phase = np.random.random() / lam_tick
    if kind == 3:
        for i in range(n_str):
            if s_kind[i] == 1 and s_ph[i] < 0.0:
                s_ph[i] = np.random.random() / s_rate[i]
            s_next[i] = _stream_next(i, s_kind, s_rate, s_ph, s_count, 0.0)
        # CBR streams of one period whose phases lie within one period arrive in the same order every round:
        # sorted by phase (ties to the lower index), O(1) per arrival. Otherwise the heap, O(log streams).
        cyclic = _one_period(s_kind, s_rate, s_ph)
        if cyclic:
            s_heap = np.argsort(s_ph, kind="mergesort")
        else:
            _heapify(s_heap, s_next)
        cur = s_heap[0]
        next_arr = s_next[cur]
    else:
        next_arr = _next_arrival(kind, lam_tick, p_slot, phase, 0, 0.0)
    gen_done = max_ef <= 0
    lost_all = 0
    packets = 0
    n_arr = 0
    n_lost = 0
    n_del = 0
    s_sum = 0.0
    s_sq = 0.0
    s_max = 0.0
    overflow = 0
    saturated = be_lam_tick <= 0.0
    be_wait = 0  # BE packets waiting (BE load only)
    next_be = np.inf
    if not saturated:
        next_be = np.random.exponential(1.0 / be_lam_tick)
    now = 0.0  # the instant being handled: a departure (saturated: always), or an arrival to a TxQ with room
    first = True
    while True:
        if first:
            first = False  # the initial fill below, at t = 0, with the PQ empty
        else:
            departure = True
            if not saturated:
                # Next event: the head's departure, or an arrival finding the TxQ with room (after a refill,
                # room means the PQ and the BE queue are empty); other arrivals wait for the next departure.
                t_dep = t + q_tx[q_head] if q_n > 0 else np.inf
                a = np.inf
                if not gen_done and rows < max_rows:
                    a = next_arr
                if rows < max_rows and (tracing or not gen_done) and next_be < a:
                    a = next_be
                if occupied < Q_t and a < t_dep:
                    departure = False
                    if q_n == 0:
                        t = a  # the line was idle; the packet starts at once
                        work = 0.0
                    now = a
                elif q_n == 0:
                    break  # idle and no arrival left
            if departure:
                if q_n == 0:
                    break
                # The head packet's last bit leaves.
                tx = q_tx[q_head]
                t += tx
                work -= tx
                occupied -= q_units[q_head]
                a = q_arr[q_head]
                r = q_row[q_head]
                si = q_str[q_head]
                q_head += 1
                if q_head == Q_t:
                    q_head = 0
                q_n -= 1
                packets += 1
                if tracing:
                    tr_dep[r] = t
                if a >= 0.0:
                    ef_in -= 1
                    if not tracing and r >= warm:  # r is the EF sequence number in statistics mode
                        d = t - a
                        n_del += 1
                        s_sum += d
                        s_sq += d * d
                        if d > s_max:
                            s_max = d
                        b = np.int64(d * inv_width)
                        if b >= nbins:
                            overflow += 1
                        else:
                            counts[b] += 1
                            if d < bmin[b]:
                                bmin[b] = d
                            if d > bmax[b]:
                                bmax[b] = d
                        for i in range(nthr):
                            if d > thresholds[i]:
                                above[i] += 1
                        sstats[si, 2] += 1.0
                        sstats[si, 3] += d
                now = t
            # EF arrivals up to and including now join the PQ or are lost.
            while not gen_done and next_arr <= now and rows < max_rows:
                seq = ef_gen
                ef_gen += 1
                counted = (not tracing) and seq >= warm
                if counted:
                    n_arr += 1
                    sstats[cur, 0] += 1.0
                rid = rows if tracing else seq
                if tracing:
                    tr_cls[rows] = 0
                    tr_size[rows] = -1
                    tr_arr[rows] = next_arr
                    tr_work[rows] = work + (t - next_arr)  # the head left at t; work counts the rest
                    tr_ahead[rows] = p_n
                    tr_stream[rows] = cur
                    rows += 1
                if p_n < pq_cap:
                    p_arr[p_tail] = next_arr
                    p_row[p_tail] = rid
                    p_str[p_tail] = cur
                    p_tail += 1
                    if p_tail == pq_cap:
                        p_tail = 0
                    p_n += 1
                    ef_in += 1
                    if tracing:
                        tr_drop[rid] = False
                else:
                    lost_all += 1
                    if counted:
                        n_lost += 1
                        sstats[cur, 1] += 1.0
                    if tracing:
                        tr_drop[rid] = True
                        tr_dep[rid] = np.nan
                if ef_gen >= max_ef:
                    gen_done = True
                elif kind == 3:
                    s_count[cur] += 1.0
                    s_next[cur] = _stream_next(cur, s_kind, s_rate, s_ph, s_count, s_next[cur])
                    if cyclic:  # the next stream in phase order (after the last, the first, one period on)
                        s_pos += 1
                        if s_pos == n_str:
                            s_pos = 0
                        cur = s_heap[s_pos]
                    else:
                        _sift_down(s_heap, s_next, 0)  # cur is at the root: O(log streams) per arrival
                        cur = s_heap[0]
                    next_arr = s_next[cur]
                else:
                    next_arr = _next_arrival(kind, lam_tick, p_slot, phase, ef_gen, next_arr)
            # BE arrivals up to and including now join the BE queue.
            while next_be <= now and rows < max_rows and (tracing or not gen_done):
                be_wait += 1
                next_be += np.random.exponential(1.0 / be_lam_tick)
            if gen_done and not tracing and ef_in == 0:
                break
        # Refill: head EF first, else a fresh BE packet.
        while occupied < Q_t:
            if p_n > 0:
                q_tx[q_tail] = ef_ticks
                q_units[q_tail] = ef_units
                q_arr[q_tail] = p_arr[p_head]
                q_row[q_tail] = p_row[p_head]
                q_str[q_tail] = p_str[p_head]
                p_head += 1
                if p_head == pq_cap:
                    p_head = 0
                p_n -= 1
                occupied += ef_units
                work += ef_ticks
            elif rows < max_rows and (saturated or be_wait > 0):
                if not saturated:
                    be_wait -= 1
                j = _draw_be(be_cum)
                q_tx[q_tail] = be_ticks[j]
                q_units[q_tail] = be_units[j]
                q_arr[q_tail] = -1.0
                q_row[q_tail] = rows
                if tracing:
                    tr_cls[rows] = 1
                    tr_size[rows] = j
                    tr_arr[rows] = now
                    tr_drop[rows] = False
                rows += 1
                occupied += be_units[j]
                work += be_ticks[j]
            else:
                break
            q_tail += 1
            if q_tail == Q_t:
                q_tail = 0
            q_n += 1
    stats[S_ARRIVALS] = n_arr
    stats[S_LOST] = n_lost
    stats[S_DELAYS] = n_del
    stats[S_SUM] = s_sum
    stats[S_SUMSQ] = s_sq
    stats[S_MAX] = s_max
    stats[S_OVERFLOW] = overflow
    stats[S_PACKETS] = packets + lost_all
    stats[S_TIME] = t
    return rows


@njit(cache=True, parallel=True)
def simulate_batch(seeds, kind, lam_tick, p_slot, ef_ticks, ef_units, be_ticks, be_units, be_cum, be_lam_tick, Q_t,
                   pq_cap, max_ef, warm, width_ticks, thresholds, counts, bmin, bmax, above, stats,
                   s_kind, s_rate, s_phase, sstats):
    """Independent replications in parallel, one per seed; row r of each output array is replication r."""
    dummy_i8 = np.zeros(1, np.int8)
    dummy_i64 = np.zeros(1, np.int64)
    dummy_f = np.zeros(1, np.float64)
    dummy_b = np.zeros(1, np.bool_)
    for r in prange(seeds.shape[0]):
        simulate_one(seeds[r], kind, lam_tick, p_slot, ef_ticks, ef_units, be_ticks, be_units, be_cum, be_lam_tick,
                     Q_t, pq_cap, max_ef, warm, NEVER, width_ticks, thresholds, counts[r], bmin[r], bmax[r], above[r],
                     stats[r], dummy_i8, dummy_i64, dummy_f, dummy_f, dummy_b, dummy_f, dummy_i64,
                     s_kind, s_rate, s_phase, sstats[r], dummy_i64)
