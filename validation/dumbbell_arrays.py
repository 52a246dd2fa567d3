"""A :class:`qosbound.validation.dumbbell_config.Dumbbell` as the event loop's inputs: flat arrays grouped by what
they describe (:class:`KernelInputs`), checked on the way (a bad parameter raises ``ValueError`` naming it).

The queues of both directions become rows of one table (rows 0 and 1 the FIFOs, then the class queues sorted by
falling priority within a direction), every marker a row of one marker table that sources refer to, and the
open-loop and TFRC sources arrays indexed by source. :func:`kernel_inputs` returns these with the
:class:`Layout` that maps the rows back to the dumbbell's classes and source names.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from qosbound.validation import tcp as T
from qosbound.validation import tfrc_sender as TF
from qosbound.validation.droppers import MODES
from qosbound.validation.dumbbell_config import UDP_KINDS, Class, Dumbbell, Marker, Queue, Tfrc, Udp
from qosbound.validation.markers import KINDS

__all__ = ["KernelInputs", "Layout", "MarkerTable", "kernel_inputs"]


class KernelInputs(NamedTuple):
    """The arguments of :func:`qosbound.validation.dumbbell_loop.run`, in its order: the generator's seed; ``fp``
    (float parameters) and ``ip`` (integer parameters) of the run; the TCP flows (state and per-flow arrays); the
    marker table (kinds, states); the queues' dropper parameters; the schedulers' arrays; the open-loop sources; the
    TFRC flows (state and per-flow arrays); ``out``, the arrays the loop fills (counters, records)."""

    seed: int
    fp: np.ndarray
    ip: np.ndarray
    tcp: tuple
    markers: tuple
    queues: tuple
    schedulers: tuple
    udp: tuple
    tfrc: tuple
    out: tuple


class Layout(NamedTuple):
    """How the arrays map back to the dumbbell: ``order[i]`` the (direction, index) of internal class ``i``,
    ``classes`` the :class:`Class` objects in that order, ``names`` the sources' names (TCP, TFRC, open-loop)."""

    order: list
    classes: list
    names: tuple


def _queue_row(q: Queue):
    """One queue's dropper parameters: thresholds per colour, [limit, mode, gentle, count spacing, uncounted],
    [alpha, mean size]."""
    if q.mode not in MODES:
        raise ValueError(f"queue mode {q.mode!r}: one of {sorted(MODES)}")
    if q.spacing not in ("bernoulli", "count"):
        raise ValueError("spacing is 'bernoulli' or 'count'")
    return (np.asarray(q.min_th, float), np.asarray(q.max_th, float), np.asarray(q.max_p, float),
            np.array([q.limit, MODES[q.mode], int(q.gentle), int(q.spacing == "count"), q.uncounted], np.int64),
            np.array([q.alpha, q.mean_size]))


def _classes(net: Dumbbell):
    """The queues of both directions as flat arrays: rows 0 and 1 the FIFOs ``fwd`` and ``rev``, rows 2 + i the class
    queues, classes sorted by falling priority within a direction (one level = a run of equal priorities). Returns
    (queue parameters, scheduler arrays, class capacity, order, classes, index) where ``order[i]`` is the
    (direction, index) of internal class ``i`` and ``index`` maps (direction, index) back to ``i``."""
    dmode = np.zeros(2, np.int64)
    order, levels, dir_lv = [], [], np.zeros((2, 2), np.int64)
    where = {}
    for d, classes in enumerate((net.fwd_classes, net.rev_classes)):
        classes = tuple(classes)
        dir_lv[d, 0] = len(levels)
        if classes:
            dmode[d] = 1
            for c in classes:
                if not isinstance(c, Class):
                    raise ValueError("fwd_classes / rev_classes hold Class objects")
                if not (c.weight > 0 and c.quantum > 0) or c.police not in (0, 1, 2, 3):
                    raise ValueError(f"class {c.name!r}: weight and quantum > 0, police 0..3")
            idx = sorted(range(len(classes)), key=lambda i: -classes[i].priority)
            for i in idx:
                if not levels or levels[-1][2] != d or classes[i].priority != classes[order[levels[-1][0]][1]].priority:
                    levels.append([len(order), len(order) + 1, d])
                else:
                    levels[-1][1] = len(order) + 1
                where[(d, i)] = len(order)
                order.append((d, i))
        dir_lv[d, 1] = len(levels)
    cl = [(net.fwd_classes, net.rev_classes)[d][i] for d, i in order]
    rows = [_queue_row(net.fwd), _queue_row(net.rev)] + [_queue_row(c.queue) for c in cl]
    qp = (np.array([r[0] for r in rows], float).reshape(-1, 3), np.array([r[1] for r in rows], float).reshape(-1, 3),
          np.array([r[2] for r in rows], float).reshape(-1, 3), np.array([r[3] for r in rows], np.int64).reshape(-1, 5),
          np.array([r[4] for r in rows], float).reshape(-1, 2))
    K = len(cl)
    cquant, cshare = np.zeros(K), np.zeros(K)
    lv_lo = np.array([lv[0] for lv in levels], np.int64)
    lv_hi = np.array([lv[1] for lv in levels], np.int64)
    for lo, hi in zip(lv_lo, lv_hi):
        wmin = min(cl[k].weight for k in range(lo, hi))
        wsum = sum(cl[k].weight for k in range(lo, hi))
        for k in range(lo, hi):
            cquant[k] = cl[k].quantum * cl[k].weight / wmin
            cshare[k] = cl[k].weight / wsum
    sch = (dmode, np.array([c.police for c in cl], np.int64), cquant, cshare, dir_lv, lv_lo, lv_hi)
    ccap = max([c.queue.limit for c in cl], default=0) + 2
    return qp, sch, int(ccap), order, cl, where


def _class_of(where, dmode, d, u, what):
    """Internal index of class ``u`` of direction ``d`` (0 when the direction is one FIFO)."""
    if dmode[d] == 0:
        return 0
    if (d, int(u)) not in where:
        raise ValueError(f"{what}: class {int(u)} does not exist in direction {d}")
    return where[(d, int(u))]


class MarkerTable:
    """Every marker of the run in one table (kinds, states); sources refer to rows (-1: a fixed colour)."""

    def __init__(self):
        self.kinds, self.states = [], []

    def add(self, m: Marker | None) -> int:
        if m is None:
            return -1
        if not isinstance(m, Marker):
            raise ValueError("a marker is a Marker (or, for an open-loop or TFRC source, the index of a shared one)")
        self.kinds.append(KINDS[m.kind])
        self.states.append(m.state())
        return len(self.kinds) - 1

    def arrays(self):
        return (np.array(self.kinds or [0], np.int64),
                np.array(self.states, float).reshape(-1, 7) if self.states else np.zeros((1, 7)))


def _markers(net: Dumbbell, table: MarkerTable):
    """Rows of the TCP flows' data and ACK markers, and the rows ``Dumbbell.marker``'s entries got (for sources that
    share one)."""
    n = net.n
    if net.marker_of:
        groups = max(len(net.marker), 1)
        of = np.asarray(net.per_flow(net.marker_of, "marker_of"), np.int64)
        if (of < 0).any() or (of >= groups).any():
            raise ValueError("marker_of: an index into marker per flow")
    else:  # one marker per flow (with no TCP flow, the entries are there for other sources to share)
        groups, of = (n if n else len(net.marker)), np.arange(n, dtype=np.int64)
    if len(net.marker) > groups:
        raise ValueError("marker: at most one marker per flow")
    entries = tuple(net.marker) + (None,) * (groups - len(net.marker))
    rows = np.array([table.add(m) for m in entries], np.int64)
    dmark = rows[of] if n else np.zeros(0, np.int64)
    if len(net.ack_marker) > n:
        raise ValueError("ack_marker: at most one marker per flow")
    amark = np.array([table.add(m) for m in tuple(net.ack_marker) + (None,) * (n - len(net.ack_marker))], np.int64)
    return dmark, amark, rows


def _source_marker(m, table: MarkerTable, shared, what):
    if isinstance(m, (int, np.integer)) and not isinstance(m, bool):
        if not 0 <= m < len(shared) or shared[m] < 0:
            raise ValueError(f"{what}: marker {m} is not an entry of the dumbbell's markers")
        return int(shared[m])
    return table.add(m)


def _udp_arrays(net: Dumbbell, where, dmode, table, shared, traced):
    """The open-loop sources as arrays for the event loop (each one's class as an internal index), and the empty
    statistics (per source: sent, dropped, delivered, bytes) and delay record."""
    m = len(net.udp)
    ukind = np.zeros(m, np.int64)
    ucls = np.zeros(m, np.int64)
    f = np.zeros((9, m))  # rate, size, start, stop, on, off, access, direction, colour
    mk = np.full(m, -1, np.int64)
    cap = 16
    win = net.duration - net.warmup
    for i, u in enumerate(net.udp):
        if not isinstance(u, Udp):
            raise ValueError("udp holds Udp objects")
        if u.kind not in UDP_KINDS:
            raise ValueError(f"udp {i}: kind one of {sorted(UDP_KINDS)}")
        if not (u.rate > 0 and u.size > 0 and u.start >= 0 and u.access >= 0 and u.direction in (0, 1)
                and u.colour in (0, 1, 2) and (u.kind != "onoff" or (u.on > 0 and u.off > 0))):
            raise ValueError(f"udp {i}: rate and size > 0, start and access >= 0, direction 0 or 1, colour 0..2, "
                             "on and off > 0")
        ukind[i] = UDP_KINDS[u.kind]
        ucls[i] = _class_of(where, dmode, u.direction, u.cls, f"udp {i}")
        f[:, i] = (u.rate, u.size, u.start, min(u.stop, net.duration), u.on, u.off, u.access, u.direction, u.colour)
        mk[i] = _source_marker(u.marker, table, shared, f"udp {i}")
        expect = u.rate * win / (8.0 * u.size)
        cap += int(expect + 10.0 * math.sqrt(expect) + 100) if u.kind == "poisson" else int(expect) + 2
    return (ukind, f[0].copy(), f[1].copy(), f[7].astype(np.int64), ucls, f[8].astype(np.int64), mk, f[2].copy(),
            f[3].copy(), f[4].copy(), f[5].copy(), f[6].copy(), np.asarray(traced, bool)), np.zeros((m, 4)), \
        np.zeros((cap, 3))


def _tfrc_arrays(net: Dumbbell, where, dmode, table, shared, traced):
    """The TFRC flows as the kernels' state (:func:`qosbound.validation.tfrc_sender.new_state`) and arrays."""
    fl = tuple(net.tfrc)
    for i, x in enumerate(fl):
        if not isinstance(x, Tfrc):
            raise ValueError("tfrc holds Tfrc objects")
        if x.feedback not in TF.FEEDBACK:
            raise ValueError(f"tfrc {i}: feedback one of {sorted(TF.FEEDBACK)}")
        if not (x.size > 0 and x.fb_size > 0 and x.target >= 0 and x.max_rate > 0 and x.access >= 0 and x.start >= 0
                and x.direction in (0, 1) and x.colour in (0, 1, 2)):
            raise ValueError(f"tfrc {i}: size, fb_size and max_rate > 0; target, access and start >= 0; direction "
                             "0 or 1; colour 0..2")
    rrate = net.rev_rate or net.rate
    base = [2 * (x.access + net.delay) + 8 * x.size / (net.rate if x.direction == 0 else rrate)
            + 8 * x.fb_size / (rrate if x.direction == 0 else net.rate) for x in fl]
    Q, H = TF.new_state([float(x.size) for x in fl], [x.target / 8.0 for x in fl], [x.max_rate / 8.0 for x in fl],
                        base, [x.feedback for x in fl], [x.header_rtt for x in fl])
    ints = np.array([[x.direction, _class_of(where, dmode, x.direction, x.cls, f"tfrc {i}"),
                      _class_of(where, dmode, 1 - x.direction, x.fb_class, f"tfrc {i} fb_class"), x.colour,
                      _source_marker(x.marker, table, shared, f"tfrc {i}")] for i, x in enumerate(fl)],
                    np.int64).reshape(-1, 5)
    return (Q, H, np.array([x.access for x in fl], float), ints[:, 0].copy(), ints[:, 1].copy(), ints[:, 2].copy(),
            ints[:, 3].copy(), ints[:, 4].copy(), np.array([x.start for x in fl], float),
            np.array([x.fb_size for x in fl], float), np.asarray(traced, bool))


def _names(net: Dumbbell):
    """Every source's name: TCP flows ``tcp<i>``, TFRC flows and open-loop sources their name or ``tfrc<j>`` /
    ``udp<u>``."""
    return ([f"tcp{i}" for i in range(net.n)], [x.name or f"tfrc{j}" for j, x in enumerate(net.tfrc)],
            [u.name or f"udp{u_}" for u_, u in enumerate(net.udp)])


def _traced(net: Dumbbell, names):
    want = set(net.trace)
    every = "*" in want
    known = set().union(*map(set, names))
    if not every and not want <= known:
        raise ValueError(f"trace: unknown sources {sorted(want - known)} (known: tcp<i>, TFRC and UDP names, '*')")
    return [[every or x in want for x in group] for group in names]


def _check(net: Dumbbell) -> None:
    """The run's scalar parameters."""
    if net.n < (0 if (net.udp or net.tfrc) else 1) or net.rate <= 0 or net.mss <= 0 \
            or not 0 <= net.warmup < net.duration:
        raise ValueError("invalid dumbbell: n >= 1 (0 with open-loop or TFRC sources), positive rate and mss, "
                         "0 <= warmup < duration")
    if not (0 <= net.loss < 1 and 0 <= net.ack_loss < 1):
        raise ValueError("loss probabilities lie in [0, 1)")
    if net.sharing not in ("drr", "scfq") or net.header < 0:
        raise ValueError("sharing is 'drr' or 'scfq'; header >= 0")
    if not (net.syn_rto > 0 and net.request >= 0):
        raise ValueError("syn_rto > 0 and request >= 0 (bytes of the HTTP request)")


def _starts(net: Dumbbell, seed: int) -> np.ndarray:
    """The TCP flows' start times: ``net.starts``, or drawn from the run's seed."""
    rng = np.random.default_rng(seed)
    starts = np.asarray(net.starts if net.starts is not None else rng.uniform(0, net.start_spread, net.n), float)
    if starts.shape != (net.n,) or np.isnan(starts).any():
        raise ValueError("starts: one per flow (inf: started only by another flow's ``then``)")
    return starts


def _colours_and_directions(net: Dumbbell):
    """Per TCP flow: its data's and its ACKs' fixed colours, and its direction."""
    colour = np.asarray(net.per_flow(net.colour, "colour"), np.int64)
    acolour = np.asarray(net.per_flow(net.ack_colour, "ack_colour"), np.int64)
    if ((colour < 0) | (colour > 2) | (acolour < 0) | (acolour > 2)).any():
        raise ValueError("colours are 0, 1 or 2")
    fdir = np.asarray(net.per_flow(net.direction, "direction"), np.int64)
    if ((fdir != 0) & (fdir != 1)).any():
        raise ValueError("direction: 0 (R1 -> R2) or 1 (R2 -> R1) per flow")
    return colour, acolour, fdir


def _routes(net: Dumbbell, fdir, where, dmode):
    """Per TCP flow: its data's and its ACKs' internal class, its node's uplink (then, per flow, the uplink its ACKs
    take: -1 none) and the flow it starts (``then``)."""
    n = net.n
    dcls_u = net.per_flow(net.data_class, "data_class")
    acls_u = net.per_flow(net.ack_class, "ack_class")
    dcls = np.array([_class_of(where, dmode, fdir[f], dcls_u[f], "data_class") for f in range(n)], np.int64)
    acls = np.array([_class_of(where, dmode, 1 - fdir[f], acls_u[f], "ack_class") for f in range(n)], np.int64)
    up = np.asarray(net.per_flow(net.uplink_of, "uplink_of") if net.uplink_of else range(n), np.int64)
    if net.uplink_rate < 0 or (up < 0).any():
        raise ValueError("uplink_rate >= 0; uplink_of: a node index >= 0 per flow")
    aup = np.asarray(net.per_flow(net.ack_uplink_of, "ack_uplink_of") if net.ack_uplink_of else (-1,) * n, np.int64)
    if (aup < -1).any() or (net.uplink_aqm and net.uplink_rate <= 0) or (not net.uplink_aqm and (aup >= 0).any()):
        raise ValueError("uplink_aqm needs uplink_rate > 0; ack_uplink_of: -1 or a node index per flow, only with "
                         "uplink_aqm")
    up = np.concatenate([up, aup])  # per flow its data's uplink, then per flow its ACKs' uplink (-1: none)
    then = np.asarray(net.per_flow(net.then, "then") if net.then else (-1,) * n, np.int64)
    if ((then < -1) | (then >= n)).any() or net.think < 0:
        raise ValueError("then: -1 or a flow index per flow; think >= 0")
    return dcls, acls, up, then


def _capacities(net: Dumbbell, cl) -> tuple[int, int]:
    """Sizes of the packet pool and the event heap: enough for every packet that can be in the network at once."""
    rrate = float(net.rev_rate or net.rate)
    pool = net.n * (4 * net.rwnd + 16) + net.fwd.limit + net.rev.limit + 64 + sum(c.queue.limit + 1 for c in cl)
    # open-loop and TFRC packets on the links (their queues are counted above); TFRC sends at most about twice
    # what arrives, and a few feedbacks per RTT
    pool += sum(int(math.ceil(u.rate * (net.delay + u.access) / (8.0 * u.size))) + 2 for u in net.udp)
    pool += sum(int(math.ceil(2.0 * max(net.rate, rrate) * (net.delay + x.access + 1.0) / (8.0 * x.size))) + 64
                for x in net.tfrc)
    heap_cap = 2 * pool + 64 * (net.n + len(net.udp) + len(net.tfrc)) + 1024
    return pool, heap_cap


def kernel_inputs(net: Dumbbell, seed: int) -> tuple[KernelInputs, Layout]:
    """The event loop's inputs for one run of ``net`` with ``seed``, and their :class:`Layout`."""
    _check(net)
    n = net.n
    starts = _starts(net, seed)
    W = 1 << int(math.ceil(math.log2(2 * net.rwnd + 2)))
    files = np.asarray(net.per_flow(net.files, "files"), float)
    S, SB, TS, RB = T.new_state(n, W, init_cwnd=net.init_cwnd, rwnd=net.rwnd, min_rto=net.min_rto, files=files,
                                base_rtt=net.base_rtt(), window=(net.warmup, net.duration),
                                ssthresh_rule=net.ssthresh_rule, rto_floor=net.rto_floor)
    access = np.asarray(net.per_flow(net.access, "access"), float)
    table = MarkerTable()
    dmark, amark, shared = _markers(net, table)
    colour, acolour, fdir = _colours_and_directions(net)
    qp, sch, ccap, order, cl, where = _classes(net)
    dmode = sch[0]
    dcls, acls, up, then = _routes(net, fdir, where, dmode)
    names = _names(net)
    tr_tcp, tr_tfrc, tr_udp = _traced(net, names)
    ua, ust, urec = _udp_arrays(net, where, dmode, table, shared, tr_udp)
    ta = _tfrc_arrays(net, where, dmode, table, shared, tr_tfrc)
    pool, heap_cap = _capacities(net, cl)
    seed32 = int(np.random.SeedSequence(seed).generate_state(1)[0])
    started = np.where(np.isfinite(starts), starts, np.nan)
    nt = len(net.tfrc)
    out = (np.zeros((n, 8)), np.zeros(3), np.zeros(3), np.zeros((len(cl), 4)), np.zeros((n, 8)), ust, urec,
           np.zeros((nt, 9)), np.zeros((n, 4)), np.zeros((nt, 4)), started)
    fp = np.array([net.delay, net.rate, float(net.rev_rate or net.rate), net.delack, net.loss, net.ack_loss,
                   net.duration, net.warmup, net.duration,
                   8.0 * (net.mss + net.header) / net.uplink_rate if net.uplink_rate > 0 else 0.0,
                   net.think, float(net.mss + net.header), float(net.header), float(bool(net.handshake)),
                   net.syn_rto, float(net.header + net.request)], float)
    ip = np.array([min(net.sack_blocks, 4), int(net.marker_aware), pool, net.uplink_limit,
                   int(net.sharing == "scfq"), ccap, max(net.fwd.limit, net.rev.limit) + 2, heap_cap,
                   int(bool(net.trace)), int(bool(net.uplink_aqm))], np.int64)
    hs = np.zeros((n, 6))  # the handshake state (dumbbell_loop.HS_*)
    hs[:, 5] = np.nan
    tcp = (S, SB, TS, RB, access, starts, colour, acolour, dmark, amark, fdir, dcls, acls, then, up,
           np.asarray(tr_tcp, bool), hs)
    return (KernelInputs(seed32, fp, ip, tcp, table.arrays(), qp, sch, ua, ta, out),
            Layout(order, cl, tuple(names)))
