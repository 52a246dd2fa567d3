"""The compiled (numba) kernel of the port simulator: strict-priority levels and DRR classes above a tx-ring.

One event loop for the whole port, the semantics of :mod:`qosbound.systems.port` (and of the closed forms
of :mod:`qosbound.analytic.port`), each choice written where it is made below:

* Time is counted in ticks of one byte time at line rate (``8 / C`` s): a packet of ``L`` bytes is on the wire
  for ``L`` ticks.
* **Ring.** A FIFO of at most ``Q_t`` packets at line rate; a packet of ``L`` bytes takes ``units(L)`` of its
  ``Q_t`` units (``ceil(L / unit)``, or 1 for a ring counted in packets) from its admission until its LAST bit
  leaves the wire: the ring holds the packet on the wire. The head starts when the previous packet's last bit
  leaves (or, the ring being empty, at its admission), so the line never idles while the ring holds a packet.
  Without a ring ``Q_t = 1``: the one packet in the "ring" is the packet on the wire.
* **Scheduler.** Whenever fewer than ``Q_t`` units are occupied it moves one packet into the ring, and again
  while room remains: the head packet of the first strict-priority level with a packet waiting (FIFO by
  arrival time within a level: the class whose head arrived first, the lower class index on a tie), else the
  packet deficit round robin picks among the weighted classes (:mod:`qosbound.analytic.drr`: quantum added
  at the start of a turn, head sent while it fits the deficit, the class moved to the tail when it does not,
  its deficit reset to 0 when its queue empties, a class joining the list at its tail with deficit 0;
  saturated classes are always in the list). The scheduler runs at every departure (refill) and at an
  arrival that finds room (then every queue was empty). **Arrivals at the same instant as a departure are
  handled after it** (after its refill).
* **Arrival of a packet** to class ``c`` (in this order): its size is drawn from its stream's law and its
  precedence from the class's mix; a **marker** meters it (buckets refilled continuously up to their depths,
  RFC 2697/2698, :func:`qosbound.validation.markers.mark`) and its colour becomes a precedence; a **policer**
  meters it -- a conditional policer only when the port is congested, i.e. the ring is full (``Q_t`` units or
  more occupied; without a ring: the link busy) at the arrival, and otherwise the packet passes and the
  buckets only refill -- and applies its colour's action: ``drop`` (lost, counted as ``loss.police``; it
  never reaches the queue, so it does not update the dropper's average), ``transmit``, or ``remark`` (its
  precedence becomes the action's); then the **queue**: a RED-family dropper first updates its averages
  ``avg <- (1 - alpha) avg + alpha q`` with ``q`` the class's packets per precedence held at the arrival (on
  every arrival that reaches the queue, those about to be dropped included), then the packet is dropped if
  the class holds ``queue_limit`` packets, else with the RED probability of its precedence's average
  (:func:`qosbound.validation.droppers.colour_drop_prob`); both count as ``loss.queue`` and in the
  precedence's ``drop``. What "the class holds" counts: its queue, and -- without a ring only -- its packet on
  the wire (as ``af`` counts a buffer).
* **Parent shaper** (``shaper``; absent, none): a token bucket of depth ``bc`` bytes, full at time 0, refilled
  continuously at the shaper's rate ``C`` -- the port's ``link.rate``, one byte per tick -- gates the
  scheduler's output towards the ring. When the scheduler has chosen a packet of ``L`` bytes (the head of the
  first non-empty level, or the one DRR picks) and the ring has room, the packet enters the ring if the bucket
  holds ``L`` tokens (``bc`` tokens, a full bucket, when ``L > bc``: it leaves the bucket in debt) and takes
  ``L`` of them; otherwise it stays at its queue's head, DRR's deficit untouched, and the scheduler chooses
  again when the bucket will hold enough for it (or at the next departure or arrival: a priority packet
  arriving meanwhile is chosen first, as tbf's watchdog peeks again). Events at one instant: departures,
  then arrivals, then the shaper's release. The ring drains at the interface's rate ``C_line >= C`` (a byte
  is ``C / C_line`` ticks on the wire). A shaped port is congested, for a conditional policer, when its ring
  is full or its shaper holds a packet back.
* **Saturated classes** always have a packet: its size is drawn when it becomes the class's head for DRR
  and kept until sent. Their packets count towards the packets a replication runs for, at admission.
* **Sources.** Poisson (exponential gaps), CBR (``phase + k / rate``), on-off (a CBR clock at the peak rate,
  uniform phase, ticks kept only while an alternating process of exponential on/off periods, started in its
  stationary state, is on); each stream its own source; the next arrival is the earliest over a binary heap.

A replication generates ``max_packets`` packets (arrivals and saturated admissions); the first ``warm`` are
not counted. Statistics mode then stops new arrivals, lets saturated classes keep the ring full, and runs
until every queued or ringed packet of the other classes has left (so none is cut off). Trace mode records a
row per packet (a saturated one's arrival is its admission) and drains without saturated packets.
Throughput counts the bits that leave between the first counted packet and the last generated one.

Delays are recorded in log-linear bins (``SUB`` bins per octave of ticks, each bin's smallest and largest
delay kept, so quantiles interpolate between values seen): relative resolution ``1 / SUB``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)

from qosbound.validation.droppers import colour_drop_prob, update_averages
from qosbound.validation.markers import mark

__all__ = ["SUB", "OCTAVES", "NBINS", "NEVER", "CS_ARRIVALS", "CS_POLICE", "CS_QUEUE", "CS_DELIVERED", "CS_SUM",
           "CS_MAX", "CS_BITS", "N_CS", "G_PACKETS", "G_WINDOW", "G_TIME", "N_G", "ACT_TRANSMIT", "ACT_DROP",
           "ACT_REMARK", "SH_BC", "SH_WIRE", "N_SH", "bin_of", "run_port"]

#: Histogram bins per octave of delay (ticks) and octaves covered (delays up to 2^63 ticks).
SUB = 256
OCTAVES = 63
NBINS = SUB * OCTAVES + 1
#: ``max_rows`` of a statistics run: no trace.
NEVER = np.int64(2**62)
#: Columns of the per-class statistics: counted arrivals, police drops, queue drops, delivered packets, delay
#: sum (ticks), largest delay (ticks), bits delivered in the throughput window.
CS_ARRIVALS, CS_POLICE, CS_QUEUE, CS_DELIVERED, CS_SUM, CS_MAX, CS_BITS = range(7)
N_CS = 7
#: Global statistics: packets handled (departures and drops), throughput window (ticks), simulated time.
G_PACKETS, G_WINDOW, G_TIME = range(3)
N_G = 3
#: Policer actions.
ACT_TRANSMIT, ACT_DROP, ACT_REMARK = 0, 1, 2
#: The parent shaper's parameters: the bucket's depth (bytes) and a byte's wire time at the interface's rate (ticks).
SH_BC, SH_WIRE = range(2)
N_SH = 2


@njit(cache=True, inline="always")
def bin_of(d):
    """Log-linear bin of a delay of ``d`` ticks: bin 0 below one tick, then ``SUB`` bins per octave: with
    ``d = m 2^e``, ``1/2 <= m < 1``, bin ``(e - 1) SUB + floor((m - 1/2) 2 SUB) + 1``."""
    if d < 1.0:
        return 0
    m, e = math.frexp(d)
    b = (e - 1) * SUB + int((m - 0.5) * (2 * SUB)) + 1
    if b >= NBINS:
        b = NBINS - 1
    return b


@njit(cache=True, inline="always")
def _bin_bits(d, fbuf, ibuf):
    """:func:`bin_of` read off the IEEE-754 bits (``d = (1 + f) 2^E``: the exponent and the top 8 bits of ``f``
    are ``bits >> 44``), without a call to frexp; ``fbuf``/``ibuf`` are one float64 and its int64 view."""
    if d < 1.0:
        return 0
    fbuf[0] = d
    b = (ibuf[0] >> 44) - (1023 << 8) + 1
    if b >= NBINS:
        b = NBINS - 1
    return b


@njit(cache=True, inline="always")
def _draw_size(rng, law, law_sizes, law_cum, law_n, law_exp):
    if law_exp[law]:
        s = -math.log(1.0 - rng.random()) * law_sizes[law, 0]
        if s < 1.0:
            s = 1.0
        elif s > 65535.0:
            s = 65535.0
        return s
    n = law_n[law]
    if n == 1:
        return law_sizes[law, 0]
    u = rng.random()
    j = 0
    while j < n - 1 and u >= law_cum[law, j]:
        j += 1
    return law_sizes[law, j]


@njit(cache=True, inline="always")
def _sift_down(h_t, h_s, n, i):
    while True:
        a = 2 * i + 1
        if a >= n:
            return
        b = a + 1
        j = a
        if b < n and (h_t[b] < h_t[a] or (h_t[b] == h_t[a] and h_s[b] < h_s[a])):
            j = b
        if h_t[j] < h_t[i] or (h_t[j] == h_t[i] and h_s[j] < h_s[i]):
            tt = h_t[i]
            ss = h_s[i]
            h_t[i] = h_t[j]
            h_s[i] = h_s[j]
            h_t[j] = tt
            h_s[j] = ss
            i = j
        else:
            return


@njit(cache=True)
def _oo_emit(rng, s, x_k, src_rate, src_phase, oo_on, oo_until, src_on, src_off):
    """The first tick ``k >= x_k`` of on-off source ``s``'s clock that falls in an on period (advancing the
    on/off process); returns k."""
    period = 1.0 / src_rate[s]
    k = x_k
    while True:
        x = src_phase[s] + k * period
        while oo_until[s] <= x:
            oo_on[s] = not oo_on[s]
            oo_until[s] += rng.exponential(src_on[s] if oo_on[s] else src_off[s])
        if oo_on[s]:
            return k
        k = max(k + 1.0, math.ceil((oo_until[s] - src_phase[s]) / period))


@njit(cache=True)
def _next_time(rng, s, src_kind, src_rate, src_phase, src_k, oo_on, oo_until, src_on, src_off, prev):
    """Time of source ``s``'s next arrival after one at ``prev`` (ticks)."""
    kind = src_kind[s]
    if kind == 0:
        return prev + rng.exponential(1.0 / src_rate[s])
    src_k[s] += 1.0
    if kind == 2:
        src_k[s] = _oo_emit(rng, s, src_k[s], src_rate, src_phase, oo_on, oo_until, src_on, src_off)
    return src_phase[s] + src_k[s] / src_rate[s]


@njit(cache=True, nogil=True)
def run_port(rng, Q_t, unit, per_packet, incl_ring, max_packets, warm, max_rows,
             cls_level, lvl_start, lvl_cls, drr_q, qlimit, sat_law, mix_cum, nprec,
             law_sizes, law_cum, law_n, law_exp,
             src_cls, src_kind, src_rate, src_law, src_phase, src_on, src_off,
             mk_kind, mk_state, mk_aware, mk_to, po_kind, po_state, po_cond, po_act, po_rem,
             dr_red, dr_mode, dr_gentle, dr_alpha, dr_min, dr_max, dr_maxp,
             thresholds, cst, pst, hist, hmin, hmax, above, gst,
             tr_cls, tr_prec, tr_size, tr_arr, tr_dep, tr_drop,
             feed_t=None, feed_cls=None, feed_size=None, feed_prec=None, sat_until=np.inf, shaper=None):
    """One replication (module docstring). ``rng`` is a NumPy Generator (spawned per replication). Per-class
    outputs: ``cst`` (m x N_CS), ``pst`` (m x 3 x 2: packets reaching the queue and queue drops per
    precedence), ``hist``/``hmin``/``hmax`` (m x NBINS), ``above`` (m x thresholds: delays above each);
    ``gst`` (N_G). Trace mode fills the ``tr_*`` rows, at most ``max_rows``, and returns their number;
    statistics mode passes ``None`` for them (``max_rows`` = NEVER).

    **Feed mode** (a port inside a network, :mod:`qosbound.validation.network_sim`): ``feed_t`` (ticks, sorted),
    ``feed_cls``, ``feed_size`` (bytes) and ``feed_prec`` give every arriving packet instead of the sources (the
    run has none: ``max_packets`` is 0); packets arriving at one instant are handled in the feed's order, each
    after any departure at that instant (as source arrivals are). Trace rows ``0 .. n - 1`` are the fed packets
    in feed order (their departure, or their drop); the packets saturated classes hand the ring are appended
    after them, while ``now < sat_until`` (ticks) and rows remain (``max_rows``): then the saturated classes
    leave the round as in trace mode. The run ends once the feed is exhausted and the port is empty. A fed port
    keeps no delay statistics (``cst``, ``hist``, ``above``): its trace rows are what the network reads.

    **Shaper** (a parent shaper, module docstring): ``shaper`` is ``[SH_BC, SH_WIRE]`` -- the bucket's depth
    (bytes) and the wire time of one byte at the interface's rate, in ticks (``C / C_line <= 1``; the tick is a
    byte time at the shaper's rate ``C``, which refills the bucket one byte per tick). ``None`` (an unshaped
    port) compiles without any shaper code."""
    m = cls_level.shape[0]
    nsrc = src_cls.shape[0]
    nlev = lvl_start.shape[0] - 1
    nthr = thresholds.shape[0]
    tracing = tr_cls is not None  # a compile-time constant: statistics runs pass None (no trace code at all)
    feeding = feed_t is not None  # likewise: only a network's ports are fed
    n_feed = 0
    fi = 0  # the next fed packet
    if feeding:
        n_feed = feed_t.shape[0]
    # ---- class queues: one circular buffer per class, capacity queue_limit, in one flat array
    q_off = np.zeros(m + 1, np.int64)
    for c in range(m):
        q_off[c + 1] = q_off[c] + qlimit[c]
    q_arr = np.empty(q_off[m], np.float64)
    q_size = np.empty(q_off[m], np.float64)
    q_prec = np.empty(q_off[m], np.int64)
    q_row = np.empty(q_off[m], np.int64)
    q_head = np.zeros(m, np.int64)
    q_n = np.zeros(m, np.int64)  # packets waiting in the queue
    held = np.zeros(m, np.int64)  # packets the class holds (the queue, plus without a ring its packet on the wire)
    qcol = np.zeros((m, 3), np.float64)  # ... per precedence, for the dropper's averages
    avgs = np.zeros((m, 3), np.float64)
    sat = np.zeros(m, np.bool_)
    for c in range(m):
        sat[c] = sat_law[c] >= 0
    pend = np.full(m, -1.0)  # a saturated class's head packet size, drawn when needed
    # ---- DRR list
    al = np.zeros(m, np.int64)
    al_head = 0
    al_n = 0
    in_al = np.zeros(m, np.bool_)
    dc = np.zeros(m, np.float64)  # deficits; a class's quantum is added when it becomes the head (its turn)
    for c in range(m):
        if sat[c]:
            al[al_n] = c
            al_n += 1
            in_al[c] = True
    if al_n > 0:
        dc[al[0]] = drr_q[al[0]]
    trimmed = False  # trace mode: saturated classes taken out of the round once generation ends
    # With one weighted class with traffic DRR always serves it: its deficits decide nothing (skipped, exactly)
    busy_w = np.zeros(m, np.bool_)
    for c in range(m):
        busy_w[c] = cls_level[c] < 0 and sat[c]
    for s in range(nsrc):
        if cls_level[src_cls[s]] < 0:
            busy_w[src_cls[s]] = True
    if feeding:
        for i in range(n_feed):
            if cls_level[feed_cls[i]] < 0:
                busy_w[feed_cls[i]] = True
    solo = busy_w.sum() == 1
    # ---- ring
    r_tx = np.empty(Q_t, np.float64)
    r_units = np.empty(Q_t, np.int64)
    r_cls = np.empty(Q_t, np.int64)
    r_arr = np.empty(Q_t, np.float64)
    r_row = np.empty(Q_t, np.int64)
    r_prec = np.zeros(Q_t, np.int64)
    r_head = 0
    r_n = 0
    occ = 0
    head_start = 0.0
    # ---- sources: a binary heap of next arrival times
    src_k = np.zeros(nsrc, np.float64)
    ph = src_phase.copy()
    oo_on = np.zeros(nsrc, np.bool_)
    oo_until = np.zeros(nsrc, np.float64)
    h_t = np.empty(nsrc, np.float64)
    h_s = np.empty(nsrc, np.int64)
    for s in range(nsrc):
        k = src_kind[s]
        if k == 0:
            h_t[s] = rng.exponential(1.0 / src_rate[s])
        else:
            if ph[s] < 0.0:
                ph[s] = rng.random() / src_rate[s]
            if k == 2:  # stationary on/off start; exponential residual of the current period
                oo_on[s] = rng.random() < src_on[s] / (src_on[s] + src_off[s])
                oo_until[s] = rng.exponential(src_on[s] if oo_on[s] else src_off[s])
                src_k[s] = _oo_emit(rng, s, 0.0, src_rate, ph, oo_on, oo_until, src_on, src_off)
            h_t[s] = ph[s] + src_k[s] / src_rate[s]
        h_s[s] = s
    for i in range(nsrc // 2 - 1, -1, -1):
        _sift_down(h_t, h_s, nsrc, i)
    gap = np.empty(nsrc, np.float64)  # mean gaps of the Poisson sources
    for s in range(nsrc):
        gap[s] = 1.0 / src_rate[s]
    fbuf = np.zeros(1, np.float64)
    ibuf = fbuf.view(np.int64)
    # ---- the parent shaper: a token bucket of depth sh_bc bytes refilled one byte per tick, full at time 0
    shaping = shaper is not None  # a compile-time constant, as tracing
    sh_bc = 0.0
    sh_wire = 1.0
    if shaping:
        sh_bc = shaper[SH_BC]
        sh_wire = shaper[SH_WIRE]
    sh_tok = sh_bc  # tokens at sh_t (negative: the debt of a packet larger than the bucket)
    sh_t = 0.0
    sh_next = np.inf  # when the bucket will pass the packet it holds back (inf: it holds none back)
    prio_waiting = 0  # packets waiting in the priority levels' queues
    n_gen = 0
    gen_done = max_packets <= 0
    in_sys = 0  # packets of non-saturated classes in a queue or the ring
    rows = n_feed  # feed mode: rows 0 .. n_feed - 1 are the fed packets
    packets = 0
    t_warm = -1.0
    t_end = -1.0
    t = 0.0
    first = True
    while True:
        # ------------------------------------------------------------------ next event
        now = 0.0
        arrival = False
        fed = False
        s = -1
        if first:
            first = False  # the initial refill at t = 0 (saturated classes fill the ring)
        else:
            if shaping:  # the packet's last bit leaves after its bytes at the interface's rate
                t_dep = head_start + r_tx[r_head] * sh_wire if r_n > 0 else np.inf
            else:
                t_dep = head_start + r_tx[r_head] if r_n > 0 else np.inf
            t_arr = h_t[0] if (nsrc > 0 and not gen_done) else np.inf
            if feeding:
                if fi < n_feed and feed_t[fi] < t_arr:
                    t_arr = feed_t[fi]
                    fed = True
            if shaping and sh_next < t_dep and sh_next < t_arr:
                # the shaper's release: the bucket now holds the held-back packet's tokens (departures and
                # arrivals at the same instant come first, and their refill releases it)
                now = sh_next
                t = now
            elif t_dep <= t_arr:  # a departure first at equal times: arrivals then see its refill
                if r_n == 0:
                    break
                now = t_dep
                t = now
                # ---- the head packet's last bit leaves
                c = r_cls[r_head]
                size = r_tx[r_head]
                occ -= r_units[r_head]
                packets += 1
                if tracing:
                    tr_dep[r_row[r_head]] = now
                if r_arr[r_head] >= 0.0:  # a counted packet (others carry -1)
                    d = now - r_arr[r_head]
                    cst[c, CS_DELIVERED] += 1.0
                    cst[c, CS_SUM] += d
                    if d > cst[c, CS_MAX]:
                        cst[c, CS_MAX] = d
                    b = _bin_bits(d, fbuf, ibuf)
                    hist[c, b] += 1
                    if d < hmin[c, b]:
                        hmin[c, b] = d
                    if d > hmax[c, b]:
                        hmax[c, b] = d
                    for i in range(nthr):
                        if d > thresholds[i]:
                            above[c, i] += 1
                if t_warm >= 0.0 and not gen_done:
                    cst[c, CS_BITS] += size  # bytes here; bits below
                if not sat[c]:
                    in_sys -= 1
                    if incl_ring:
                        held[c] -= 1
                        qcol[c, r_prec[r_head]] -= 1.0
                r_head += 1
                if r_head == Q_t:
                    r_head = 0
                r_n -= 1
                head_start = now
            else:
                arrival = True
                now = t_arr
                t = now
                if not fed:
                    s = h_s[0]
        if arrival:
            # ------------------------------------------------------------------ an arrival
            if fed:  # a packet from the network: its class, size and precedence are given
                c = feed_cls[fi]
                size = feed_size[fi]
                prec = feed_prec[fi]
                row = fi
                fi += 1
                counted = True
            else:
                c = src_cls[s]
                size = _draw_size(rng, src_law[s], law_sizes, law_cum, law_n, law_exp)
                n_gen += 1
                counted = n_gen > warm
                if counted and t_warm < 0.0:
                    t_warm = now
                if n_gen >= max_packets:
                    gen_done = True
                    t_end = now
                prec = 0
                if nprec[c] > 1:
                    u = rng.random()
                    while prec < nprec[c] - 1 and u >= mix_cum[c, prec]:
                        prec += 1
                row = rows
            if tracing:
                tr_cls[row] = c
                tr_size[row] = size
                tr_arr[row] = now
                tr_dep[row] = np.nan
                tr_drop[row] = False
                if not fed:
                    rows += 1
            if counted:
                cst[c, CS_ARRIVALS] += 1.0
            lost = False
            if mk_kind[c] >= 0:
                colour = mark(mk_state[c], mk_kind[c], now, size, prec, mk_aware[c])
                prec = mk_to[c, colour]
            if shaping:  # a shaped port is congested when its ring is full or its shaper holds a packet back
                congested = occ >= Q_t or sh_next < np.inf
            else:
                congested = occ >= Q_t
            if po_kind[c] >= 0 and (not po_cond[c] or congested):
                colour = mark(po_state[c], po_kind[c], now, size, 0, False)
                act = po_act[c, colour]
                if act == ACT_DROP:
                    lost = True
                    if counted:
                        cst[c, CS_POLICE] += 1.0
                elif act == ACT_REMARK:
                    prec = po_rem[c, colour]
            if not lost:
                if dr_red[c]:
                    update_averages(avgs[c], qcol[c], dr_alpha[c])
                drop = held[c] >= qlimit[c]
                if not drop and dr_red[c]:
                    p = colour_drop_prob(avgs[c], prec, dr_min[c], dr_max[c], dr_maxp[c], dr_mode[c], dr_gentle[c])
                    if p > 0.0 and rng.random() < p:
                        drop = True
                if counted:
                    pst[c, prec, 0] += 1.0
                    if drop:
                        pst[c, prec, 1] += 1.0
                        cst[c, CS_QUEUE] += 1.0
                if drop:
                    lost = True
                else:
                    j = q_head[c] + q_n[c]
                    if j >= qlimit[c]:
                        j -= qlimit[c]
                    j += q_off[c]
                    q_arr[j] = now
                    q_size[j] = size
                    q_prec[j] = prec
                    q_row[j] = row if tracing else (1 if counted else 0)  # stats mode: whether it is counted
                    q_n[c] += 1
                    if cls_level[c] >= 0:
                        prio_waiting += 1
                    held[c] += 1
                    qcol[c, prec] += 1.0
                    in_sys += 1
                    if cls_level[c] < 0 and not in_al[c]:  # joins the round at its tail, deficit 0
                        j = al_head + al_n
                        if j >= m:
                            j -= m
                        al[j] = c
                        al_n += 1
                        in_al[c] = True
                        dc[c] = drr_q[c] if al_n == 1 else 0.0  # alone: it is the head, its turn starts
            if tracing:
                tr_prec[row] = prec
                if lost:
                    tr_drop[row] = True
            if lost:
                packets += 1
            # the source's next arrival
            if not gen_done and not fed:
                if src_kind[s] == 0:  # Poisson, inline (the common case)
                    h_t[0] = now + rng.exponential(gap[s])
                else:
                    h_t[0] = _next_time(rng, s, src_kind, src_rate, ph, src_k, oo_on, oo_until, src_on, src_off, now)
                if nsrc > 1:
                    _sift_down(h_t, h_s, nsrc, 0)
            if occ >= Q_t:
                continue
        # ------------------------------------------------------------------ refill the ring
        if shaping:
            sh_next = np.inf  # set again below if the shaper holds the scheduler's packet back
        while occ < Q_t:
            c = -1
            for lv in range(nlev if prio_waiting > 0 else 0):
                best = -1
                for i in range(lvl_start[lv], lvl_start[lv + 1]):
                    cc = lvl_cls[i]
                    if q_n[cc] > 0 and (best < 0 or q_arr[q_off[cc] + q_head[cc]] < q_arr[q_off[best] + q_head[best]]):
                        best = cc
                if best >= 0:
                    c = best
                    break
            if c < 0:  # deficit round robin among the weighted classes
                if tracing and not trimmed and (now >= sat_until or rows >= max_rows if feeding else gen_done):
                    # trace mode drains without saturated packets (feed mode: from sat_until, or when the rows for
                    # them run out): take them out of the round, in order
                    trimmed = True
                    old_head = al[al_head] if al_n > 0 else -1
                    kept = 0
                    for i in range(al_n):
                        j = al_head + i
                        if j >= m:
                            j -= m
                        if not sat[al[j]]:
                            al[kept] = al[j]
                            kept += 1
                        else:
                            in_al[al[j]] = False
                    al_head = 0
                    al_n = kept
                    if al_n > 0 and al[0] != old_head:
                        dc[al[0]] += drr_q[al[0]]
                while al_n > 0:
                    cc = al[al_head]
                    if solo:
                        if sat[cc] and pend[cc] < 0.0:
                            pend[cc] = _draw_size(rng, sat_law[cc], law_sizes, law_cum, law_n, law_exp)
                        c = cc
                        break
                    if sat[cc]:
                        if pend[cc] < 0.0:
                            pend[cc] = _draw_size(rng, sat_law[cc], law_sizes, law_cum, law_n, law_exp)
                        L = pend[cc]
                    else:
                        L = q_size[q_off[cc] + q_head[cc]]
                    if L <= dc[cc]:
                        if not shaping:  # shaped: taken once the shaper passes the packet (below)
                            dc[cc] -= L
                        c = cc
                        break
                    # the head does not fit: the turn ends, the class moves to the tail, the next one's turn begins
                    j = al_head + al_n
                    if j >= m:
                        j -= m
                    al[j] = cc
                    al_head += 1
                    if al_head == m:
                        al_head = 0
                    dc[al[al_head]] += drr_q[al[al_head]]
            if c < 0:
                break
            if shaping:
                # ---- the shaper: the scheduler's packet passes when the bucket holds its size (or, larger than
                # the bucket, a full bucket, left in debt); else it waits, and the scheduler chooses again then
                sz = pend[c] if sat[c] else q_size[q_off[c] + q_head[c]]
                need = sz if sz < sh_bc else sh_bc
                tok = sh_tok + (now - sh_t)
                if tok > sh_bc:
                    tok = sh_bc
                if tok < need - 1e-12 * (now + 1.0):  # (a tolerance of rounding: 1e-12 of the time)
                    sh_next = now + (need - tok)
                    break
                sh_tok = (tok if tok > need else need) - sz
                sh_t = now
                if cls_level[c] < 0 and not solo:
                    dc[c] -= sz
            # ---- move class c's head packet into the ring
            if sat[c]:
                size = pend[c]
                pend[c] = -1.0
                n_gen += 1
                counted = n_gen > warm and not gen_done
                if counted and t_warm < 0.0:
                    t_warm = now
                if not gen_done and n_gen >= max_packets:
                    gen_done = True
                    t_end = now
                a_time = now
                pr = 0
                row = rows
                if tracing:
                    tr_cls[row] = c
                    tr_prec[row] = 0
                    tr_size[row] = size
                    tr_arr[row] = now
                    tr_dep[row] = np.nan
                    tr_drop[row] = False
                    rows += 1
                meas = False
            else:
                j = q_off[c] + q_head[c]
                size = q_size[j]
                a_time = q_arr[j]
                row = q_row[j]
                meas = (True if tracing else row == 1) and not feeding  # a fed port's trace is its statistics
                pr = q_prec[j]
                q_head[c] += 1
                if q_head[c] == qlimit[c]:
                    q_head[c] = 0
                q_n[c] -= 1
                if cls_level[c] >= 0:
                    prio_waiting -= 1
                if not incl_ring:
                    held[c] -= 1
                    qcol[c, pr] -= 1.0
                if q_n[c] == 0 and cls_level[c] < 0:  # DRR: an emptied class leaves the round, deficit reset
                    al_head += 1
                    if al_head == m:
                        al_head = 0
                    al_n -= 1
                    in_al[c] = False
                    dc[c] = 0.0
                    if al_n > 0:
                        dc[al[al_head]] += drr_q[al[al_head]]
            units = 1
            if not per_packet and size > unit:  # ceil(size / unit), without a division for the common sizes
                units = int(math.ceil(size / unit - 1e-12))
            k = r_head + r_n
            if k >= Q_t:
                k -= Q_t
            r_tx[k] = size
            r_units[k] = units
            r_cls[k] = c
            r_arr[k] = a_time if meas else -1.0
            if tracing:
                r_row[k] = row
            if incl_ring:
                r_prec[k] = pr
            if r_n == 0:
                head_start = now
            r_n += 1
            occ += units
        if gen_done and in_sys == 0 and (not tracing or r_n == 0) and fi >= n_feed:
            break
    for c in range(m):
        cst[c, CS_BITS] *= 8.0
    gst[G_PACKETS] = packets
    gst[G_WINDOW] = (t_end - t_warm) if (t_warm >= 0.0 and t_end > t_warm) else 0.0
    gst[G_TIME] = t
    return rows
