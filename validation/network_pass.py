"""One replication of the chained network simulator in compiled loops over flat arrays: a port's pass
(:func:`port_pass`: its flows' live packets merged in arrival order, the port kernel run on them, their departures
forwarded) and the end-to-end tally (:func:`tally`). :func:`qosbound.validation.network_sim.simulate` calls them;
its module docstring states the semantics.

**The replication's packets** lie in flat arrays: flow ``k``'s are ``start[k] .. start[k] + count[k]`` in the
order its source made them (a saturated flow's once its first port has admitted them), with their first arrival
``t_first`` (s), size (B), arrival at the port they are at or going to ``t_cur`` (s) and whether they are
``alive`` (not dropped). A packet is **counted** when its first arrival lies in ``[lo, hi)``.

**Arrival order at a port.** The port's member flows (in the order of :attr:`NetworkConfig.members`) each give
their live packets in index order -- a segment; the feed is the stable sort of the segments' concatenation by
arrival time (ties by segment, then by position). Each segment is already in time order (a flow's packets leave
a port in the order they came: one class, FIFO), so the stable sort is a merge of the segments (:func:`merge`, a
tournament of losers, ``log2 S`` comparisons per packet for ``S`` segments); a segment found out of order falls
back to a stable sort.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from qosbound.validation.port_kernels import N_CS, N_G, run_port

__all__ = ["merge", "port_pass", "tally"]


@njit(cache=True, nogil=True)
def _less(ht, a, b):
    """Segment ``a``'s head before segment ``b``'s: earlier, or as early and the lower segment."""
    return ht[a] < ht[b] or (ht[a] == ht[b] and a < b)


@njit(cache=True, nogil=True)
def merge(tt, so, out_pos, out_seg):
    """The stable sort of ``tt`` (s) by time, ``tt`` being ``S`` segments ``so[j] .. so[j + 1]`` each in time
    order: ``out_pos[o]`` the position in ``tt`` of the ``o``-th packet in arrival order, ``out_seg[o]`` its
    segment. A tree of losers over the segments' heads (an exhausted segment's head at +inf); ties go to the lower
    segment, and within a segment to the earlier packet, as the stable sort orders them. Returns False, writing
    nothing, when a segment is not in time order."""
    S = so.shape[0] - 1
    n = so[S]
    for j in range(S):
        for i in range(so[j] + 1, so[j + 1]):
            if not (tt[i] >= tt[i - 1]):
                return False
    if S == 1:
        for o in range(n):
            out_pos[o] = o
            out_seg[o] = 0
        return True
    if n == 0:
        return True
    pos = so[:S].copy()
    ht = np.empty(S)
    for j in range(S):
        ht[j] = tt[pos[j]] if pos[j] < so[j + 1] else np.inf
    # tree[1 .. S-1] hold the losers of the matches, leaves S .. 2S-1 are the segments; tree[0] the winner
    tree = np.empty(S, np.int64)
    win = np.empty(2 * S, np.int64)
    for j in range(S):
        win[S + j] = j
    for node in range(S - 1, 0, -1):
        a = win[2 * node]
        b = win[2 * node + 1]
        if _less(ht, b, a):
            win[node] = b
            tree[node] = a
        else:
            win[node] = a
            tree[node] = b
    cur = win[1]
    for o in range(n):
        out_pos[o] = pos[cur]
        out_seg[o] = cur
        pos[cur] += 1
        ht[cur] = tt[pos[cur]] if pos[cur] < so[cur + 1] else np.inf
        node = (cur + S) >> 1
        while node >= 1:
            other = tree[node]
            if _less(ht, other, cur):
                tree[node] = cur
                cur = other
            node >>= 1
    return True


@njit(cache=True, nogil=True)
def port_pass(rng, Q_t, unit, per_packet, incl_ring, port, shaper, mem_k, mem_h, cls_of, prec_of, sat_k, extra,
              tick, prop, H, lo, hi, start, count, t_first, size, t_cur, alive, hoff, hop_max, hop_lost, wi, wf, tr):
    """Port ``p``'s pass in one replication: its member flows' live packets (member ``j``: flow ``mem_k[j]`` at
    its hop ``mem_h[j]``, class ``cls_of[j]``, precedence ``prec_of[j]``) fed in arrival order to the port kernel
    (``rng`` its generator; ``Q_t .. incl_ring``, ``port`` -- the kernel's 35 configuration arrays, no sources --
    and ``shaper`` its configuration; ``extra`` trace rows for the packets of its saturated classes, given to the
    flows ``sat_k`` that start there). Per packet: dropped, it is dead (counted: ``hop_lost`` of its hop + 1);
    sent, its hop's largest delay ``hop_max`` takes it in (counted ones) and it arrives at its next port
    ``prop`` s after its last bit left. ``hoff[k] + h`` indexes flow ``k``'s hop ``h`` in ``hop_max``/``hop_lost``.
    ``wi``, ``wf``: work arrays of 5 and 3 rows of at least the fed packets; ``tr``: the kernel's six trace
    arrays, at least ``n + extra`` rows. Returns the packet-hops (fed packets and saturated rows), or ``-n - 1``
    when the work or trace arrays are too short for ``n`` fed packets (nothing done)."""
    S = mem_k.shape[0]
    so = np.zeros(S + 1, np.int64)
    for j in range(S):
        k = mem_k[j]
        a = start[k]
        live = 0
        for i in range(a, a + count[k]):
            if alive[i]:
                live += 1
        so[j + 1] = so[j] + live
    n = so[S]
    rows_max = n + extra
    if wi.shape[1] < n or wf.shape[1] < n or tr[0].shape[0] < rows_max:
        return -n - 1
    idx = wi[0]
    out_pos = wi[1]
    out_seg = wi[2]
    tt = wf[0]
    feed_t = wf[1]
    for j in range(S):
        k = mem_k[j]
        a = start[k]
        o = so[j]
        for i in range(a, a + count[k]):
            if alive[i]:
                idx[o] = i
                tt[o] = t_cur[i]
                o += 1
    if not merge(tt, so, out_pos, out_seg):  # a segment out of time order: the stable sort itself
        order = np.argsort(tt[:n], kind="mergesort")
        seg = np.empty(n, np.int64)
        for j in range(S):
            seg[so[j]:so[j + 1]] = j
        for o in range(n):
            out_pos[o] = order[o]
            out_seg[o] = seg[order[o]]
    tr_cls, tr_prec, tr_size, tr_arr, tr_dep, tr_drop = tr
    feed_cls = wi[3]
    feed_prec = wi[4]
    feed_size = wf[2]
    for o in range(n):
        q = out_pos[o]
        j = out_seg[o]
        feed_t[o] = tt[q] / tick
        feed_cls[o] = cls_of[j]
        feed_size[o] = size[idx[q]]
        feed_prec[o] = prec_of[j]
    for r in range(rows_max):
        tr_dep[r] = np.nan
        tr_drop[r] = False
    m = port[0].shape[0]
    # a fed port keeps no delay statistics: its histograms are never written, so one bin each is enough
    rows = run_port(rng, Q_t, unit, per_packet, incl_ring, 0, 0, np.int64(rows_max), *port, np.zeros(0),
                    np.zeros((m, N_CS)), np.zeros((m, 3, 2)), np.zeros((m, 1), np.int64), np.zeros((m, 1)),
                    np.zeros((m, 1)), np.zeros((m, 0), np.int64), np.zeros(N_G), tr_cls, tr_prec, tr_size, tr_arr,
                    tr_dep, tr_drop, feed_t[:n], feed_cls[:n], feed_size[:n], feed_prec[:n], H / tick, shaper)
    for o in range(n):
        i = idx[out_pos[o]]
        j = out_seg[o]
        hk = hoff[mem_k[j]] + mem_h[j]
        counted = t_first[i] >= lo and t_first[i] < hi
        if tr_drop[o]:
            alive[i] = False
            if counted:
                hop_lost[hk] += 1.0
        else:
            d = tr_dep[o] * tick
            if counted:
                x = d - t_cur[i]
                if x > hop_max[hk]:
                    hop_max[hk] = x
            t_cur[i] = d + prop
    for k in sat_k:  # a saturated flow's packets, from their admission at its first port
        a = start[k]
        for q in range(rows - n):
            r = n + q
            d = tr_dep[r] * tick
            t_first[a + q] = tr_arr[r] * tick
            size[a + q] = tr_size[r]
            alive[a + q] = d == d
            t_cur[a + q] = d + prop if d == d else np.nan
        count[k] = rows - n
    return rows


@njit(cache=True, nogil=True)
def tally(start, count, t_first, size, t_cur, alive, lo, hi, sent, lost, nbytes):
    """The replication's end-to-end counts per flow: its counted packets ``sent``, those of them ``lost``, the
    bytes delivered (summed in packet order: exact for whole bytes), and the delivered counted packets' delays
    (s) in packet order, flow ``k``'s ``doff[k] .. doff[k + 1]`` of the returned array. Returns (delays, doff)."""
    F = start.shape[0]
    total = 0
    for k in range(F):
        total += count[k]
    D = np.empty(total)
    doff = np.zeros(F + 1, np.int64)
    o = 0
    for k in range(F):
        a = start[k]
        s = 0
        ls = 0
        b = 0.0
        for i in range(a, a + count[k]):
            if t_first[i] >= lo and t_first[i] < hi:
                s += 1
                if alive[i]:
                    b += size[i]
                    D[o] = t_cur[i] - t_first[i]
                    o += 1
                else:
                    ls += 1
        sent[k] = s
        lost[k] = ls
        nbytes[k] = b
        doff[k + 1] = o
    return D[:o], doff
