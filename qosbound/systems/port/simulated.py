"""The port by simulation: the port's elements as the kernel's arrays, replications with intervals per class,
and a per-packet trace for ``validate --simulate``."""

from __future__ import annotations

import numpy as np

from qosbound.metric_names import ccdf_name, quantile_name
from qosbound.results import Interval, Result
from qosbound.systems.port.elements import Port, Stream, TrafficClass
from qosbound.systems.port.metrics import carried_precedences
from qosbound.systems.solve_cache import READ_BACK, cached_replications
from qosbound.validation.markers import KINDS, new_state
from qosbound.validation.droppers import MODES
from qosbound.validation.port_kernels import (ACT_DROP, ACT_REMARK, ACT_TRANSMIT, CS_ARRIVALS, CS_BITS,
                                              CS_DELIVERED, CS_MAX, CS_POLICE, CS_QUEUE, CS_SUM, G_WINDOW, N_SH,
                                              SH_BC, SH_WIRE)
from qosbound.validation.port_sim import PortConfig, run_replications, simulate_trace as sim_trace, tick_of
from qosbound.validation.stats import hist_quantile, proportion_interval, proportion_se, t_interval
from qosbound.validation.trace import make_table

__all__ = ["config", "simulated", "simulate_trace"]

_ACT = {"transmit": ACT_TRANSMIT, "drop": ACT_DROP, "remark": ACT_REMARK}


def _laws(port: Port):
    """Every size law of the port, deduplicated: (index by law, sizes, cum, n, exponential)."""
    laws = []
    for c in port.classes:
        for s in c.streams:
            if s.sizes not in laws:
                laws.append(s.sizes)
    K = max((len(x.sizes) for x in laws), default=1)
    sizes = np.zeros((max(len(laws), 1), K))
    cum = np.ones((max(len(laws), 1), K))
    n = np.ones(max(len(laws), 1), np.int64)
    exp = np.zeros(max(len(laws), 1), np.bool_)
    for i, law in enumerate(laws):
        sizes[i, :len(law.sizes)] = law.sizes
        c = np.cumsum(law.probs)
        c[-1] = 1.0
        cum[i, :len(c)] = c
        n[i] = len(law.sizes)
        exp[i] = law.exponential
    return laws, sizes, cum, n, exp


def _meter_state(kind: str, cir: float, cbs: float, second_rate: float, second_depth: float, tick: float):
    """A meter's state with its rates in bits per tick (the kernel's time unit)."""
    per_tick = tick  # bit/s * s/tick
    if kind == "trtcm":
        return new_state(kind, cir * per_tick, cbs, second_rate * per_tick, second_depth)
    return new_state(kind, cir * per_tick, cbs, second_depth if kind == "srtcm" else 0.0)


def config(port: Port) -> PortConfig:
    """The kernel's arrays for a port (semantics: :mod:`qosbound.validation.port_kernels`): its scheduling, its
    size laws and precedence mixes, its sources, its meters, its droppers and its parent shaper."""
    tick = tick_of(port.rate)
    cls = port.classes
    laws, law_sizes, law_cum, law_n, law_exp = _laws(port)
    sat_law = np.array([laws.index(c.streams[0].sizes) if c.saturated else -1 for c in cls], np.int64)
    ring = port.ring
    return PortConfig(
        C=port.rate, Q_t=port.Q_t, unit=port.unit, per_packet=ring is None or ring.per_packet,
        incl_ring=ring is None, **_scheduling(port), sat_law=sat_law, **_mixes(port), law_sizes=law_sizes,
        law_cum=law_cum, law_n=law_n, law_exp=law_exp, **_sources(port, laws, tick), **_meters(port, tick),
        **_droppers(port), names=[c.name for c in cls], shaper=_shaper(port))


def _shaper(port: Port) -> np.ndarray | None:
    """A parent shaper as the kernel takes it: its bucket's depth (bytes) and a byte's time on the wire at the
    interface's rate, in ticks of the shaper's rate (``C / C_line``); None without a shaper."""
    if not port.shaper_burst:
        return None
    sh = np.zeros(N_SH)
    sh[SH_BC] = port.shaper_burst
    sh[SH_WIRE] = port.rate / (port.line_rate or port.rate)
    return sh


def _scheduling(port: Port) -> dict:
    """The priority levels (each class's level, the levels' classes), the DRR quanta and the queue limits."""
    cls = port.classes
    levels = port.levels
    lvl_cls, lvl_start = [], [0]
    for k in levels:
        lvl_cls += [c.index for c in port.level(k)]
        lvl_start.append(len(lvl_cls))
    cls_level = np.array([levels.index(c.priority) if (c.priority is not None and c.has_traffic) else -1
                          for c in cls], np.int64)
    drr_q = np.zeros(len(cls))
    weighted = port.weighted
    if weighted:
        for c, q in zip(weighted, port.quanta()):
            drr_q[c.index] = q
    return dict(cls_level=cls_level, lvl_start=np.array(lvl_start, np.int64), lvl_cls=np.array(lvl_cls, np.int64),
                drr_q=drr_q, qlimit=np.array([c.queue_limit for c in cls], np.int64))


def _mixes(port: Port) -> dict:
    """Each class's precedence mix as a cumulative distribution, and its number of precedences."""
    m = len(port.classes)
    mix_cum = np.ones((m, 3))
    nprec = np.ones(m, np.int64)
    for c in port.classes:
        cm = np.cumsum(c.mix)
        cm[-1] = 1.0
        mix_cum[c.index, :len(cm)] = cm
        nprec[c.index] = len(c.mix)
    return dict(mix_cum=mix_cum, nprec=nprec)


def _sources(port: Port, laws: list, tick: float) -> dict:
    """One source per stream (a call counts once each): its class, kind, clock rate, size law, phase and on/off
    periods, times in kernel ticks."""
    src = [(c, s) for c in port.classes for s in c.streams if s.kind != "saturated" for _ in range(s.count)]
    kinds = {"poisson": 0, "cbr": 1, "on-off": 2}

    def clock(s: Stream) -> float:  # packets (clock ticks) per kernel tick
        return s.peak / (8.0 * s.sizes.mean) * tick

    return dict(src_cls=np.array([c.index for c, _ in src], np.int64),
                src_kind=np.array([kinds[s.kind] for _, s in src], np.int64),
                src_rate=np.array([clock(s) for _, s in src], np.float64),
                src_law=np.array([laws.index(s.sizes) for _, s in src], np.int64),
                src_phase=np.array([s.phase / tick if s.phase is not None else -1.0 for _, s in src], np.float64),
                src_on=np.array([s.on / tick for _, s in src], np.float64),
                src_off=np.array([s.off / tick for _, s in src], np.float64))


def _meters(port: Port, tick: float) -> dict:
    """Each class's marker and policer: kind, bucket state, colour awareness or conditional metering, and the
    precedences or actions each colour maps to."""
    m = len(port.classes)
    mk_kind = np.full(m, -1, np.int64)
    mk_state = np.zeros((m, 7))
    mk_aware = np.zeros(m, np.bool_)
    mk_to = np.zeros((m, 3), np.int64)
    po_kind = np.full(m, -1, np.int64)
    po_state = np.zeros((m, 7))
    po_cond = np.zeros(m, np.bool_)
    po_act = np.zeros((m, 3), np.int64)
    po_rem = np.zeros((m, 3), np.int64)
    for c in port.classes:
        i = c.index
        if c.marker is not None:
            mk = c.marker
            mk_kind[i] = KINDS[mk.kind]
            mk_state[i] = _meter_state(mk.kind, mk.cir, mk.cbs, mk.second_rate, mk.second_depth, tick)
            mk_aware[i] = mk.aware
            mk_to[i] = mk.to_precedence
        if c.police is not None:
            p = c.police
            po_kind[i] = KINDS[p.kind]
            po_state[i] = _meter_state(p.kind, p.cir, p.cbs, p.second_rate, p.second_depth, tick)
            po_cond[i] = p.conditional
            po_act[i] = [_ACT[a] for a in p.actions]
            po_rem[i] = [max(r, 0) for r in p.remark]
    return dict(mk_kind=mk_kind, mk_state=mk_state, mk_aware=mk_aware, mk_to=mk_to, po_kind=po_kind,
                po_state=po_state, po_cond=po_cond, po_act=po_act, po_rem=po_rem)


def _droppers(port: Port) -> dict:
    """Each class's RED-family dropper (mode, gentle, EWMA weight, thresholds and maximum probabilities per
    precedence); tail drop where it has none."""
    m = len(port.classes)
    dr_red = np.zeros(m, np.bool_)
    dr_mode = np.zeros(m, np.int64)
    dr_gentle = np.zeros(m, np.bool_)
    dr_alpha = np.ones(m)
    dr_min = np.zeros((m, 3))
    dr_max = np.ones((m, 3))
    dr_maxp = np.ones((m, 3))
    for c in port.classes:
        i = c.index
        if c.dropper.red:
            prof = c.dropper.profile()
            dr_red[i] = True
            dr_mode[i] = MODES[prof.mode]
            dr_gentle[i] = prof.gentle
            dr_alpha[i] = prof.alpha
            dr_min[i] = prof.min_th
            dr_max[i] = prof.max_th
            dr_maxp[i] = prof.max_p
    return dict(dr_red=dr_red, dr_mode=dr_mode, dr_gentle=dr_gentle, dr_alpha=dr_alpha, dr_min=dr_min,
                dr_max=dr_max, dr_maxp=dr_maxp)


class _Builder:
    """Names per-replication arrays as results with Student-t intervals (proportions widened to the pooled
    Clopper-Pearson interval, their standard error floored at the binomial one, as pq_txq's simulator does)."""

    def __init__(self, opts, rep, out: list[Result]):
        self.opts, self.rep, self.out = opts, rep, out
        R = opts.replications
        self.base = {"replications": R, "packets": opts.packets * R, "packets_per_replication": opts.packets,
                     "seed": opts.seed, "warmup": opts.warmup, "simulator": "qosbound.validation.port_sim",
                     "seeding": "numpy SeedSequence(seed).spawn(replications), a PCG64 Generator each",
                     "scheduler": "strict priority levels above deficit round robin"}

    def mean(self, metric, unit, per_rep, estimator, **extra):
        e = t_interval(per_rep, self.opts.confidence)
        lo = max(0.0, e.low) if unit in ("s", "bit/s") else e.low
        iv = Interval.ci(min(lo, e.mean), max(e.high, e.mean), self.opts.confidence, se=e.std_error, dof=e.dof,
                         note=f"Student t over {self.opts.replications} replications")
        self.out.append(Result(metric, "simulated", e.mean, unit, iv,
                               dict(self.base, std_error=e.std_error, estimator=estimator, **extra)))

    def fraction(self, metric, k, n, estimator, **extra):
        conf = self.opts.confidence
        n = np.maximum(n, 1.0)
        e = t_interval(k / n, conf)
        K, N = int(k.sum()), int(n.sum())
        lo, hi = proportion_interval(K, N, conf)
        se = max(e.std_error, proportion_se(K, N))
        iv = Interval.ci(max(0.0, min(e.low, lo, e.mean)), min(1.0, max(e.high, hi, e.mean)), conf, se=se,
                         dof=self.opts.replications - 1,
                         note=f"Student t over {self.opts.replications} replications, widened to the pooled "
                              "Clopper-Pearson interval")
        self.out.append(Result(metric, "simulated", e.mean, "1", iv,
                               dict(self.base, std_error=se, estimator=estimator, events=K, trials=N, **extra)))


def _class_results(b: _Builder, c: TrafficClass, i: int, quantiles, ccdf) -> None:
    rep = b.rep
    n = c.name
    cst = rep.cst[:, i]
    win = rep.gst[:, G_WINDOW]
    if np.all(win > 0):
        b.mean(f"{n}.throughput", "bit/s", cst[:, CS_BITS] / win, "bits that left in the counted window / its length")
    if c.saturated:
        return
    arrivals = cst[:, CS_ARRIVALS]
    delivered = cst[:, CS_DELIVERED]
    if np.all(delivered > 0):
        b.mean(f"{n}.delay.mean", "s", cst[:, CS_SUM] / delivered, "mean of per-replication sample means")
        for q in quantiles:
            per = [hist_quantile(rep.hist[r, i], 0.0, 1.0, q, rep.hmin[r, i], rep.hmax[r, i])
                   for r in range(rep.hist.shape[0])]
            b.mean(f"{n}.delay.{quantile_name(q)}", "s", per, "mean of per-replication histogram quantiles "
                   "(log-linear bins of 1/256 octave, interpolated between the smallest and largest delay in the bin)")
        for k, d in enumerate(rep.thresholds):
            b.fraction(ccdf_name(f"{n}.delay", float(d)), rep.above[:, i, k].astype(float), delivered,
                       "mean of per-replication fractions of delivered packets with delay > d (exact count)")
        mx = float(cst[:, CS_MAX].max())
        b.out.append(Result(f"{n}.delay.max", "simulated", mx, "s",
                            Interval.lower_bound(mx, note="the largest delay observed over all replications: the "
                                                          "true maximum is at least this"),
                            dict(b.base, estimator="largest delay observed over all replications")))
    lost = cst[:, CS_POLICE] + cst[:, CS_QUEUE]
    b.fraction(f"{n}.loss", lost, arrivals, "per-replication fraction of the class's arrivals lost (every cause)")
    if c.police is not None:
        b.fraction(f"{n}.loss.police", cst[:, CS_POLICE], arrivals, "fraction of arrivals dropped by the policer")
    b.fraction(f"{n}.loss.queue", cst[:, CS_QUEUE], arrivals, "fraction of arrivals dropped at the queue")
    for p in carried_precedences(c):
        k = c.precedences.index(p)
        b.fraction(f"{n}.drop.{p}", rep.pst[:, i, k, 1], rep.pst[:, i, k, 0],
                   f"fraction of the packets reaching the queue as {p} that the queue drops")


def simulated(port: Port, opts, quantiles, ccdf, progress) -> list[Result]:
    """Every simulated metric of every class with traffic."""
    cfg = config(port)
    advance = progress.task(f"simulating {opts.replications} x {opts.packets:,} packets", opts.replications)
    # kept under QOSBOUND_CACHE_DIR: each replication has its own generator and its own copy of the meters' state
    rep, read_back = cached_replications(run_replications, cfg, opts.packets, opts.replications, opts.seed,
                                         opts.warmup, [float(x) for x in ccdf], replications=opts.replications,
                                         advance=advance)
    out: list[Result] = []
    b = _Builder(opts, rep, out)
    if read_back:
        b.base["cache"] = READ_BACK
    for c in port.active:
        _class_results(b, c, c.index, quantiles, ccdf)
    return out


def simulate_trace(port: Port, packets: int, seed: int):
    """One simulated run as a per-packet trace (``validate --simulate``): flow and class are the class name;
    ``colour`` is the precedence's position in the class's DSCP list."""
    cfg = config(port)
    tr = sim_trace(cfg, packets, seed)
    names = np.asarray([c.name for c in port.classes], dtype=object)[tr["cls"]]
    prec = [[p for p in c.precedences] for c in port.classes]
    flows = np.asarray([f"{names[i]}.{prec[tr['cls'][i]][tr['prec'][i]]}" for i in range(len(names))], dtype=object)
    return make_table(flow=flows, cls=names, colour=tr["prec"], size=np.maximum(np.round(tr["size"]), 1),
                      arrival=tr["arrival"], departure=tr["departure"], dropped=tr["dropped"])
