"""The port simulator: a port reduced to the kernel's arrays (:class:`PortConfig`), independent replications
and per-packet traces. The semantics and the event loop are in :mod:`qosbound.validation.port_kernels`; the
system layer (:mod:`qosbound.systems.port.simulated`) builds the configuration and names the estimates.

Replications are independent: replication ``r`` runs on its own NumPy ``Generator`` (PCG64) seeded by the
``r``-th of ``numpy.random.SeedSequence(seed).spawn(replications)``
(:func:`qosbound.validation.stats.seed_sequences`), passed into the kernel; they run in parallel threads (the
kernel releases the GIL), and the results do not depend on the thread count.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

import numba
import numpy as np

from qosbound.errors import ScenarioError
from qosbound.validation.port_kernels import (CS_MAX, CS_SUM, G_TIME, G_WINDOW, N_CS, N_G, NBINS, NEVER,
                                              run_port)
from qosbound.validation.stats import seed_sequences

__all__ = ["PortConfig", "PortReplications", "run_replications", "simulate_trace", "tick_of"]


@dataclass
class PortConfig:
    """A port as the kernel's arrays (times in ticks of ``8 / C`` s; rates per tick; sizes in bytes)."""

    C: float  # bit/s
    Q_t: int
    unit: float  # bytes (unused when per_packet)
    per_packet: bool
    incl_ring: bool  # no ring: a class holds its packet on the wire
    cls_level: np.ndarray  # (m,) level rank, -1 weighted
    lvl_start: np.ndarray  # (levels + 1,)
    lvl_cls: np.ndarray  # class indices by level
    drr_q: np.ndarray  # (m,) quanta, bytes
    qlimit: np.ndarray  # (m,)
    sat_law: np.ndarray  # (m,) size law of a saturated class, -1 otherwise
    mix_cum: np.ndarray  # (m, 3)
    nprec: np.ndarray  # (m,)
    law_sizes: np.ndarray  # (laws, K)
    law_cum: np.ndarray  # (laws, K)
    law_n: np.ndarray  # (laws,)
    law_exp: np.ndarray  # (laws,)
    src_cls: np.ndarray  # (n,)
    src_kind: np.ndarray  # (n,) 0 Poisson, 1 CBR, 2 on-off
    src_rate: np.ndarray  # (n,) packets (clock ticks) per tick
    src_law: np.ndarray  # (n,)
    src_phase: np.ndarray  # (n,) ticks, < 0 random
    src_on: np.ndarray  # (n,) ticks
    src_off: np.ndarray  # (n,) ticks
    mk_kind: np.ndarray  # (m,) -1 none
    mk_state: np.ndarray  # (m, 7), rates in bits per tick
    mk_aware: np.ndarray  # (m,)
    mk_to: np.ndarray  # (m, 3)
    po_kind: np.ndarray
    po_state: np.ndarray
    po_cond: np.ndarray
    po_act: np.ndarray  # (m, 3)
    po_rem: np.ndarray  # (m, 3)
    dr_red: np.ndarray
    dr_mode: np.ndarray
    dr_gentle: np.ndarray
    dr_alpha: np.ndarray
    dr_min: np.ndarray  # (m, 3)
    dr_max: np.ndarray
    dr_maxp: np.ndarray
    names: list = field(default_factory=list)
    #: a parent shaper as the kernel takes it (``[SH_BC, SH_WIRE]``: bucket depth, bytes; a byte's wire time at
    #: the interface's rate, ticks); None: none
    shaper: np.ndarray | None = None

    @property
    def tick(self) -> float:
        return tick_of(self.C)

    @property
    def classes(self) -> int:
        return int(self.cls_level.shape[0])

    def shaping(self) -> dict:
        """The kernel's shaper argument: none for an unshaped port (its kernel compiles without shaper code)."""
        return {} if self.shaper is None else {"shaper": self.shaper}

    def args(self) -> tuple:
        """The kernel's arguments for one run. The meters' states (``mk_state``, ``po_state``: bucket levels and
        last update times, which the kernel advances in place) are fresh copies each call, so every run starts
        with full buckets at time 0 whatever ran before it with this configuration -- in sequence or in another
        thread at the same time."""
        return (self.cls_level, self.lvl_start, self.lvl_cls, self.drr_q, self.qlimit, self.sat_law, self.mix_cum,
                self.nprec, self.law_sizes, self.law_cum, self.law_n, self.law_exp, self.src_cls, self.src_kind,
                self.src_rate, self.src_law, self.src_phase, self.src_on, self.src_off, self.mk_kind,
                self.mk_state.copy(), self.mk_aware, self.mk_to, self.po_kind, self.po_state.copy(), self.po_cond,
                self.po_act, self.po_rem,
                self.dr_red, self.dr_mode, self.dr_gentle, self.dr_alpha, self.dr_min, self.dr_max, self.dr_maxp)


def tick_of(rate: float) -> float:
    """Seconds per tick: one byte time at ``rate`` bit/s."""
    return 8.0 / float(rate)


@dataclass
class PortReplications:
    """Raw per-replication output; times in seconds."""

    cst: np.ndarray  # (R, m, N_CS)
    pst: np.ndarray  # (R, m, 3, 2)
    hist: np.ndarray  # (R, m, NBINS)
    hmin: np.ndarray  # (R, m, NBINS), s; +inf where empty
    hmax: np.ndarray
    above: np.ndarray  # (R, m, thresholds)
    gst: np.ndarray  # (R, N_G)
    thresholds: np.ndarray  # s
    packets: int
    warmup: float
    seeds: list


def _outputs(m: int, nthr: int):
    return (np.zeros((m, N_CS)), np.zeros((m, 3, 2)), np.zeros((m, NBINS), np.int64), np.full((m, NBINS), np.inf),
            np.full((m, NBINS), -np.inf), np.zeros((m, nthr), np.int64), np.zeros(N_G))


def _no_trace():
    """A statistics run's trace arrays: None (the kernel then compiles without any trace code)."""
    return (None,) * 6


def _check(cfg: PortConfig, packets: int, warmup: float) -> None:
    if packets < 1:
        raise ScenarioError("packets must be positive", field="packets")
    if not 0 <= warmup < 1:
        raise ScenarioError("warm-up must be a fraction in [0, 1)", field="warmup")
    if cfg.src_cls.shape[0] == 0 and not np.any(cfg.sat_law >= 0):
        raise ScenarioError("no class has traffic to simulate", field="classes")


def run_replications(cfg: PortConfig, packets: int, replications: int, seed: int, warmup: float = 0.01,
                     ccdf=(), n_threads: int | None = None, advance=None) -> PortReplications:
    """``replications`` independent runs of ``packets`` packets each (the first ``warmup`` fraction not counted),
    in parallel threads; ``advance(1)`` after each; ``ccdf`` the delay points (s) counted exceeded per class."""
    _check(cfg, packets, warmup)
    if replications < 1:
        raise ScenarioError("replications must be positive", field="replications")
    tick = cfg.tick
    thr = np.asarray(list(ccdf), dtype=np.float64) / tick
    warm = int(warmup * packets)
    seqs = seed_sequences(seed, replications)
    m = cfg.classes
    outs = [_outputs(m, thr.shape[0]) for _ in range(replications)]

    def one(r: int):
        rng = np.random.Generator(np.random.PCG64(seqs[r]))
        run_port(rng, cfg.Q_t, float(cfg.unit), bool(cfg.per_packet), bool(cfg.incl_ring), int(packets), warm, NEVER,
                 *cfg.args(), thr, *outs[r], *_no_trace(), **cfg.shaping())

    workers = max(1, min(replications, n_threads or numba.config.NUMBA_NUM_THREADS))
    if workers == 1:
        for r in range(replications):
            one(r)
            if advance is not None:
                advance(1)
    else:  # progress is reported from this thread only (the callback is not thread-safe)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for f in as_completed([pool.submit(one, r) for r in range(replications)]):
                f.result()
                if advance is not None:
                    advance(1)
    cst = np.stack([o[0] for o in outs])
    cst[:, :, CS_SUM] *= tick
    cst[:, :, CS_MAX] *= tick
    gst = np.stack([o[6] for o in outs])
    gst[:, G_WINDOW] *= tick
    gst[:, G_TIME] *= tick
    return PortReplications(cst, np.stack([o[1] for o in outs]), np.stack([o[2] for o in outs]),
                            np.stack([o[3] for o in outs]) * tick, np.stack([o[4] for o in outs]) * tick,
                            np.stack([o[5] for o in outs]), gst, thr * tick, int(packets), float(warmup), seqs)


def simulate_trace(cfg: PortConfig, packets: int, seed: int) -> dict:
    """One run of ``packets`` packets recorded row by row: arrays ``cls`` (class index), ``prec`` (precedence
    index), ``size`` (bytes), ``arrival``, ``departure`` (s; NaN when dropped), ``dropped``, in arrival order."""
    _check(cfg, packets, 0.0)
    n = int(packets)
    tr = (np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n), np.zeros(n), np.full(n, np.nan),
          np.zeros(n, np.bool_))
    rng = np.random.Generator(np.random.PCG64(seed_sequences(seed, 1)[0]))
    out = _outputs(cfg.classes, 0)
    rows = run_port(rng, cfg.Q_t, float(cfg.unit), bool(cfg.per_packet), bool(cfg.incl_ring), n, 0, n, *cfg.args(),
                    np.zeros(0), *out, *tr, **cfg.shaping())
    cls, prec, size, arr, dep, drop = (x[:rows] for x in tr)
    order = np.argsort(arr, kind="stable")
    tick = cfg.tick
    return {"cls": cls[order], "prec": prec[order], "size": size[order], "arrival": arr[order] * tick,
            "departure": np.where(drop[order], np.nan, dep[order] * tick), "dropped": drop[order]}
