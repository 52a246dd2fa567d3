"""One replication of the chained network simulator in compiled loops over flat arrays: a port's pass
(:func:`port_pass`: its flows' packets merged in arrival order, the port kernel run on them, the survivors
forwarded) and the end-to-end tally (:func:`tally`). :func:`qosbound.validation.network_sim.simulate` calls them;
its module docstring states the semantics, which these loops keep exactly (the same samples, bit for bit, as the
former per-flow NumPy code; ``tests/validation/test_network_pass.py``).

**The replication's packets** lie in flat arrays: flow ``k``'s live packets are ``start[k] .. start[k] + count[k]``
in the order its source made them (a saturated flow's once its first port has admitted them), with their first
arrival ``t_first`` (s), size (B) and arrival at the port they are going to ``t_cur`` (s). A packet dropped at a
port is removed from its flow's range (the survivors keep their order); a packet is **counted** when its first
arrival lies in ``[lo, hi)``, and a counted packet dropped adds one to its flow's ``lost`` and to its hop's
``hop_lost``.

**Arrival order at a port.** The port's member flows (in the order of ``NetworkConfig.members``) each give their
packets in index order -- a segment; the feed is the stable sort of the segments' concatenation by arrival time
(ties by segment, then by position). Each segment is already in time order (a flow's packets leave a port in the
order they came: one class, FIFO), so for a few segments the stable sort is a merge of them (:func:`merge`, a tree
of losers, ``log2 S`` comparisons per packet for ``S`` segments; a segment found out of order falls back to a
stable sort); for more than :data:`MERGE_MAX`, buckets of time (:func:`bucket_order`, a few operations per packet
whatever ``S``). Both give the stable sort exactly.

**Generators.** Port ``p`` draws (RED drops, a saturated class's sizes) from a compiled ``PCG64`` seeded by its
child's state words (:class:`qosbound.validation.pcg64.PCG64`): the draws of ``Generator(PCG64(child))``.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)

from qosbound.validation.pcg64 import PCG64, seeded
from qosbound.validation.port_kernels import N_CS, N_G, run_port

__all__ = ["merge", "bucket_order", "port_pass", "tally", "MERGE_MAX"]

#: Segments up to which a port's arrival order is merged (:func:`merge`); above, sorted by buckets
#: (:func:`bucket_order`), faster with many segments (measured: ``benchmarks/bench_network.py --compare``).
MERGE_MAX = 4


@njit(cache=True, nogil=True)
def _less(ht, a, b):
    """Segment ``a``'s head before segment ``b``'s: earlier, or as early and the lower segment."""
    return ht[a] < ht[b] or (ht[a] == ht[b] and a < b)


@njit(cache=True, nogil=True)
def merge(t, seg_start, seg_n, out_idx, out_seg, out_t):
    """The stable sort by time of ``S`` segments of ``t`` (s), segment ``j`` being ``t[seg_start[j] ..
    seg_start[j] + seg_n[j]]``, taken one after the other: ``out_idx[o]`` the index in ``t`` of the ``o``-th packet
    in arrival order, ``out_seg[o]`` its segment, ``out_t[o]`` its time. When every segment is in time order, a
    tree of losers over the segments' heads (an exhausted segment's head at +inf; ties to the lower segment, and
    within a segment to the earlier packet, as the stable sort orders them); otherwise the stable sort itself.
    Returns the packets ordered."""
    S = seg_start.shape[0]
    n = 0
    ordered = True
    for j in range(S):
        a = seg_start[j]
        n += seg_n[j]
        for i in range(a + 1, a + seg_n[j]):
            if not (t[i] >= t[i - 1]):
                ordered = False
    if not ordered:
        cat = np.empty(n)
        idx = np.empty(n, np.int64)
        seg = np.empty(n, np.int64)
        o = 0
        for j in range(S):
            for i in range(seg_start[j], seg_start[j] + seg_n[j]):
                cat[o] = t[i]
                idx[o] = i
                seg[o] = j
                o += 1
        order = np.argsort(cat, kind="mergesort")
        for o in range(n):
            out_idx[o] = idx[order[o]]
            out_seg[o] = seg[order[o]]
            out_t[o] = cat[order[o]]
        return n
    if n == 0:
        return 0
    pos = seg_start.copy()
    end = seg_start + seg_n
    ht = np.empty(S)
    for j in range(S):
        ht[j] = t[pos[j]] if pos[j] < end[j] else np.inf
    # tree[1 .. S-1] hold the losers of the matches, the leaves S .. 2S-1 are the segments; cur the winner
    tree = np.empty(max(S, 1), np.int64)
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
    cur = win[1] if S > 1 else 0
    for o in range(n):
        p = pos[cur]
        out_idx[o] = p
        out_seg[o] = cur
        out_t[o] = ht[cur]
        p += 1
        pos[cur] = p
        ht[cur] = t[p] if p < end[cur] else np.inf
        node = (cur + S) >> 1
        while node >= 1:
            other = tree[node]
            if _less(ht, other, cur):
                tree[node] = cur
                cur = other
            node >>= 1
    return n


@njit(cache=True, nogil=True)
def bucket_order(t, seg_start, seg_n, out_idx, out_seg, out_t, cnt):
    """The same order as :func:`merge` by buckets of time: ``n / 2`` buckets of equal width between the segments'
    first and last times (``b(t) = int((t - lo) nb / (hi - lo))``, clamped; non-decreasing in ``t``), the packets
    counted per bucket and placed bucket by bucket in segment order, then each bucket sorted by time with ties left
    in place (an insertion sort; a stable sort for a bucket of more than 32). The result is the stable sort by time
    of the segments' concatenation whether or not the segments are in time order. ``cnt``: at least ``n / 2 + 1``
    integers of work. Returns the packets ordered."""
    S = seg_start.shape[0]
    n = 0
    lo = np.inf
    hi = -np.inf
    for j in range(S):
        c = seg_n[j]
        if c > 0:
            n += c
            a = seg_start[j]
            lo = min(lo, t[a])
            hi = max(hi, t[a + c - 1])
    if n == 0:
        return 0
    nb = max(1, n >> 1)
    inv = nb / (hi - lo) if hi > lo else 0.0
    top = nb - 1
    for b in range(nb + 1):
        cnt[b] = 0
    for j in range(S):
        a = seg_start[j]
        for i in range(a, a + seg_n[j]):
            b = np.int64((t[i] - lo) * inv)
            b = 0 if b < 0 else (top if b > top else b)
            cnt[b + 1] += 1
    for b in range(nb):
        cnt[b + 1] += cnt[b]
    for j in range(S):
        a = seg_start[j]
        for i in range(a, a + seg_n[j]):
            x = t[i]
            b = np.int64((x - lo) * inv)
            b = 0 if b < 0 else (top if b > top else b)
            q = cnt[b]
            out_t[q] = x
            out_idx[q] = i
            out_seg[q] = j
            cnt[b] = q + 1
    a = 0
    for b in range(nb):  # bucket b is now a .. cnt[b]
        e = cnt[b]
        if e - a > 32:
            o = np.argsort(out_t[a:e], kind="mergesort")
            xt = out_t[a:e][o]
            xi = out_idx[a:e][o]
            xj = out_seg[a:e][o]
            out_t[a:e] = xt
            out_idx[a:e] = xi
            out_seg[a:e] = xj
        else:
            for q in range(a + 1, e):
                x = out_t[q]
                if out_t[q - 1] > x:
                    vi = out_idx[q]
                    vj = out_seg[q]
                    r = q - 1
                    while r >= a and out_t[r] > x:
                        out_t[r + 1] = out_t[r]
                        out_idx[r + 1] = out_idx[r]
                        out_seg[r + 1] = out_seg[r]
                        r -= 1
                    out_t[r + 1] = x
                    out_idx[r + 1] = vi
                    out_seg[r + 1] = vj
        a = e
    return n


@njit(cache=True, nogil=True)
def port_pass(words, Q_t, unit, per_packet, incl_ring, port, shaper, mem_k, hk_of, cls_of, prec_of, sat_k, sat_c,
              extra, tick, prop, H, lo, hi, start, count, t_first, size, t_cur, hop_max, hop_lost, lost, wi, wf, tr):
    """A port's pass in one replication (module docstring): its member flows' packets (member ``j``: flow
    ``mem_k[j]`` in class ``cls_of[j]`` with precedence ``prec_of[j]``, its hop's index ``hk_of[j]`` in
    ``hop_max``/``hop_lost``) fed in arrival order to the port kernel -- ``Q_t .. incl_ring``, ``port`` (the
    kernel's 35 configuration arrays, no sources) and ``shaper`` its configuration, a ``PCG64`` seeded by
    ``words`` its generator, ``extra`` trace rows for its saturated classes' packets: those of class ``sat_c[q]``
    start flow ``sat_k[q]``. A packet dropped is removed (counted: ``hop_lost`` and ``lost`` + 1); one sent has its
    hop's delay taken into ``hop_max`` (counted ones) and arrives at its next port ``prop`` s after its last bit
    left. ``wi``, ``wf``: work arrays of 5 and 3 rows of at least the fed packets; ``tr``: the kernel's six trace arrays, at
    least ``n + extra`` rows. Returns the packet-hops (fed packets and saturated rows), or ``-n - 1`` when the work
    or trace arrays are too short for ``n`` fed packets (nothing done)."""
    S = mem_k.shape[0]
    seg_start = np.empty(S, np.int64)
    seg_n = np.empty(S, np.int64)
    n = 0
    for j in range(S):
        seg_start[j] = start[mem_k[j]]
        seg_n[j] = count[mem_k[j]]
        n += seg_n[j]
    rows_max = n + extra
    if wi.shape[1] < n or wf.shape[1] < n or tr[0].shape[0] < rows_max:
        return -n - 1
    gidx = wi[0]
    gseg = wi[1]
    feed_cls = wi[2]
    feed_prec = wi[3]
    feed_t = wf[0]
    feed_size = wf[1]
    tt = wf[2]
    if S <= MERGE_MAX:
        merge(t_cur, seg_start, seg_n, gidx, gseg, tt)
    else:
        bucket_order(t_cur, seg_start, seg_n, gidx, gseg, tt, wi[4])
    for o in range(n):
        j = gseg[o]
        feed_t[o] = tt[o] / tick
        feed_cls[o] = cls_of[j]
        feed_size[o] = size[gidx[o]]
        feed_prec[o] = prec_of[j]
    tr_cls, tr_prec, tr_size, tr_arr, tr_dep, tr_drop = tr  # the kernel sets every row it writes
    m = port[0].shape[0]
    # a fed port keeps no delay statistics: its histograms are never written, so one bin each is enough
    rows = run_port(PCG64(seeded(words)), Q_t, unit, per_packet, incl_ring, 0, 0, np.int64(rows_max), *port,
                    np.zeros(0), np.zeros((m, N_CS)), np.zeros((m, 3, 2)), np.zeros((m, 1), np.int64),
                    np.zeros((m, 1)), np.zeros((m, 1)), np.zeros((m, 0), np.int64), np.zeros(N_G), tr_cls, tr_prec,
                    tr_size, tr_arr, tr_dep, tr_drop, feed_t[:n], feed_cls[:n], feed_size[:n], feed_prec[:n],
                    H / tick, shaper)
    drops = np.zeros(S, np.int64)
    for o in range(n):
        i = gidx[o]
        j = gseg[o]
        counted = t_first[i] >= lo and t_first[i] < hi
        if tr_drop[o]:
            t_cur[i] = np.nan
            drops[j] += 1
            if counted:
                hop_lost[hk_of[j]] += 1.0
                lost[mem_k[j]] += 1.0
        else:
            d = tr_dep[o] * tick
            if counted:
                x = d - t_cur[i]
                if x > hop_max[hk_of[j]]:
                    hop_max[hk_of[j]] = x
            t_cur[i] = d + prop
    for j in range(S):  # the flows that lost packets here keep their survivors, in order
        if drops[j] > 0:
            k = mem_k[j]
            a = start[k]
            w = a
            for i in range(a, a + count[k]):
                if t_cur[i] == t_cur[i]:
                    t_first[w] = t_first[i]
                    size[w] = size[i]
                    t_cur[w] = t_cur[i]
                    w += 1
            count[k] = w - a
    for q in range(sat_k.shape[0]):  # a saturated flow's packets, from their admission at its first port
        k = sat_k[q]
        a = start[k]
        w = a
        for r in range(n, rows):
            if tr_cls[r] != sat_c[q]:
                continue
            d = tr_dep[r] * tick
            t0 = tr_arr[r] * tick
            if d == d:
                t_first[w] = t0
                size[w] = tr_size[r]
                t_cur[w] = d + prop
                w += 1
            elif t0 >= lo and t0 < hi:  # admitted, never sent: lost on the path, at no hop
                lost[k] += 1.0
        count[k] = w - a
    return rows


@njit(cache=True, nogil=True)
def tally(start, count, t_first, size, t_cur, lo, hi, sent, lost, nbytes):
    """The replication's end-to-end counts per flow: its counted packets ``sent`` (those delivered and the
    ``lost`` ones), the bytes delivered (summed in packet order: exact for whole bytes) and the delivered counted
    packets' delays (s) in packet order, flow ``k``'s ``doff[k] .. doff[k + 1]`` of the returned array. Returns
    (delays, doff)."""
    F = start.shape[0]
    total = 0
    for k in range(F):
        total += count[k]
    D = np.empty(total)
    doff = np.zeros(F + 1, np.int64)
    o = 0
    for k in range(F):
        a = start[k]
        b = 0.0
        for i in range(a, a + count[k]):
            if t_first[i] >= lo and t_first[i] < hi:
                b += size[i]
                D[o] = t_cur[i] - t_first[i]
                o += 1
        sent[k] = (o - doff[k]) + lost[k]
        nbytes[k] = b
        doff[k + 1] = o
    return D[:o], doff
