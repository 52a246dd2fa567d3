"""The experiments of ``qosbound reproduce qstp2008`` (Jourjon, Lochin & Sénac, "Design, Implementation and
Evaluation of a QoS-aware Transport Protocol", 2008): the test bed's settings and each figure's runs on the
packet simulator (:mod:`qosbound.validation.qstp_sim`), summarised per protocol and replication.

* :func:`fig4` -- Fig. 4: one flow with g = 500 kbit/s against 15 TCP flows marked at 300 kbit/s.
* :func:`recovery` -- Fig. 4(b)'s slow recovery after a transient congestion (qosbound's episode,
  :data:`RECOVERY_UDP`), with :func:`recovery_time` and the TFRC equation's :func:`fluid_recovery_time`.
* :func:`sweep` -- Figs. 5 / 6: g = 400 kbit/s against 1..20 TCP flows.
* :func:`clamp` -- the sensitivity run where gTFRC's clamp binds (:data:`CLAMP_CASE`).
* :func:`fig7` -- Fig. 7: CBQ's 300 kbit/s pipe against a UDP flow.
* :func:`rto_sensitivity` -- Fig. 4 again with ns-2's whole-RTO floor instead of the test bed's Linux rule
  (:data:`RTO_FLOOR`).

:func:`results` runs them all. Throughputs are bit/s, times s.
"""

from __future__ import annotations

import math

import numpy as np

from qosbound.analytic.tfrc import LOSS_WEIGHTS, mean_loss_interval, sqrt_law_rate
from qosbound.validation.qstp_sim import QstpConfig, jitter, replicate
from qosbound.validation.stats import t_quantile, two_sided_t

__all__ = ["settings", "sweep", "fig4", "recovery", "recovery_time", "fluid_recovery_time", "fig7", "clamp",
           "results", "rto_sensitivity", "RTO_FLOOR", "RTO_SENSITIVITY", "PACKET_SIZE", "CASES", "PROTOCOLS", "NAMES",
           "FIG4_TCP", "FIG7_PIPE", "FIG7_UDP", "FIG7_CONGESTION", "RECOVERY_EPISODE", "RECOVERY_UDP",
           "RECOVERY_EPISODES", "RECOVERY_BEFORE", "RECOVERY_AFTER", "EPISODE_NAMES", "CLAMP_CASE"]

#: Packet size, bytes: "the packet size is fixed to 1500 bytes" (section 5.1).
PACKET_SIZE = 1500.0

#: (target g, aggregate's target), bit/s: Fig. 5 and Fig. 4.
CASES = ((400e3, 400e3), (500e3, 300e3))

#: The TCP RTO rule of the test bed: its end hosts "run GNU/Linux" (section 5.1), whose RTO floors the variance
#: term, RTO = srtt + max(200 ms, 4 rttvar) (RFC 6298 with Linux's tcp_rto_min; :mod:`qosbound.validation.tcp`),
#: not the whole RTO as ns-2 and ns-3 do (``"rto"``). Every experiment runs with it.
RTO_FLOOR = "rttvar"
#: The sensitivity run's rule: ns-2's and ns-3's, the whole RTO at least 200 ms.
RTO_SENSITIVITY = "rto"

#: The studied flow's protocols, in the paper's order (a, b, c).
PROTOCOLS = ("tcp", "tfrc", "gtfrc")
NAMES = {"tcp": "TCP", "tfrc": "TFRC", "gtfrc": "gTFRC (QSTP)"}

#: Fig. 4's aggregate size.
FIG4_TCP = 15
#: Fig. 7: the guaranteed pipe (bit/s) and the UDP profile ((from t, rate bit/s), ...).
FIG7_PIPE = 300e3
FIG7_UDP = ((0.0, 300e3), (60.0, 1000e3), (120.0, 300e3))
FIG7_CONGESTION = (60.0, 120.0)


def settings(quick: bool) -> dict:
    """Run lengths and replications: quick (CI) and full (the paper's 180-s runs, 10 measurements)."""
    if quick:
        return {"n_values": (1, 4, 8, 12, 16, 20), "replications": 4, "duration": 80.0, "warmup": 30.0,
                "fig7_replications": 2, "fig7_duration": 180.0, "recovery_replications": 4,
                "recovery_duration": 100.0}
    return {"n_values": (1, 2) + tuple(range(4, 21, 2)), "replications": 10, "duration": 180.0, "warmup": 30.0,
            "fig7_replications": 10, "fig7_duration": 180.0, "recovery_replications": 10,
            "recovery_duration": 180.0}


def _summary(runs, g) -> dict:
    thr = np.array([r.throughput for r in runs])
    k = len(thr)
    sd = float(thr.std(ddof=1)) if k > 1 else 0.0
    upper = float(thr.mean() + t_quantile(0.95, k - 1) * sd / math.sqrt(k)) if k > 1 else float(thr.mean())
    pred = np.array([r.predicted for r in runs])
    win = np.concatenate([r.windows for r in runs])
    return {"replications": k, "throughput_mean": float(thr.mean()), "throughput_std": sd,
            "throughput_min": float(thr.min()), "throughput_max": float(thr.max()), "upper_95": upper,
            "per_replication": [float(x) for x in thr],
            "aggregate_mean": float(np.mean([r.aggregate for r in runs])),
            "aggregate_per_replication": [float(r.aggregate) for r in runs],
            "loss_event_rate": float(np.mean([r.loss_event_rate for r in runs])),
            "loss_rate": float(np.mean([r.loss_rate for r in runs])),
            "rtt": float(np.mean([r.rtt for r in runs])),
            "predicted_mean": float(np.nanmean(pred)) if np.any(np.isfinite(pred)) else None,
            "windows_below_target": float(np.mean(win < g)) if win.size else None,
            "window_std": float(np.mean([np.std(r.windows) for r in runs])),
            "in_fraction": float(np.mean([r.in_fraction for r in runs])),
            "tcp_timeouts": float(np.mean([r.extra["tcp_timeouts"] for r in runs])),
            "tcp_fast_recoveries": float(np.mean([r.extra["tcp_fast_recoveries"] for r in runs])),
            # the aggregate's data packets dropped at the bottleneck in the measurement window (as its timeouts and
            # fast recoveries)
            "tcp_drops": float(np.mean([r.extra["tcp_drops"] for r in runs]))}


def sweep(quick: bool = True, seed: int = 2008, progress=None) -> list[dict]:
    """Fig. 5 / 6: rows of (protocol, n) at g = 400 kbit/s with the throughput's mean, std, min/max (bit/s, SI)."""
    st = settings(quick)
    g, g_agg = CASES[0]
    rows = []
    for k, proto in enumerate(PROTOCOLS):
        for n in st["n_values"]:
            cfg = QstpConfig(protocol=proto, target=g, aggregate_target=g_agg, n_tcp=n, duration=st["duration"],
                             warmup=st["warmup"], size=PACKET_SIZE, rto_floor=RTO_FLOOR)
            runs = replicate(cfg, st["replications"], seed, stream=(5, k, n))
            rows.append({"target": g, "aggregate_target": g_agg, "protocol": proto, "n_tcp": n, "size": cfg.size,
                         "duration": cfg.duration, "warmup": cfg.warmup, **_summary(runs, g)})
            if progress is not None:
                progress()
    return rows


def fig4(quick: bool = True, seed: int = 2008, progress=None) -> list[dict]:
    """Fig. 4: g = 500 kbit/s against 15 TCP flows marked at 300 kbit/s, per protocol: the replications' summary
    and the first replication's throughput per second (bit/s) over the whole run."""
    st = settings(quick)
    g, g_agg = CASES[1]
    rows = []
    for k, proto in enumerate(PROTOCOLS):
        cfg = QstpConfig(protocol=proto, target=g, aggregate_target=g_agg, n_tcp=FIG4_TCP, duration=st["duration"],
                         warmup=st["warmup"], size=PACKET_SIZE, rto_floor=RTO_FLOOR)
        runs = replicate(cfg, st["replications"], seed, stream=(4, k))
        rows.append({"target": g, "aggregate_target": g_agg, "protocol": proto, "n_tcp": FIG4_TCP,
                     "rto_floor": RTO_FLOOR, "duration": cfg.duration, "warmup": cfg.warmup, **_summary(runs, g),
                     "series": [float(x) for x in runs[0].extra["received_per_second"]],
                     # the control of Fig. 4(b)'s recovery: the same test bed without the episode, read from t = 40 s
                     "recovery_control": [recovery_time(r.extra["received_per_second"], g, RECOVERY_EPISODE[1])[0]
                                          for r in runs]})
        if progress is not None:
            progress()
    return rows


#: Fig. 4(b)'s transient congestion. The paper names no cause beyond "as the bottleneck of the network becomes
#: loaded, the RTT and the losses in the network increase" and shows TFRC recovering slowly over t = [40, 100] s;
#: qosbound assumes the episode ends at 40 s and makes it the way the authors congest the same test bed in
#: section 5.4: a UDP flow at 1000 kbit/s (the bottleneck's capacity) for 10 s, [30, 40] s, in the aggregate's
#: class and marker. Its length (10 s) is an assumption: the paper does not give one.
RECOVERY_EPISODE = (30.0, 40.0)
RECOVERY_UDP = ((RECOVERY_EPISODE[0], 1000e3), (RECOVERY_EPISODE[1], 0.0))
#: The episodes: the main one (its UDP packets meter through the aggregate's marker, ``udp_colour`` -1) and the
#: sensitivity run, the same burst marked IN (``udp_colour`` 0): an in-profile overload that drops IN packets.
RECOVERY_EPISODES = (("aggregate", -1), ("in", 0))
#: The seconds read as "before" the episode (the flows settled, 15 s after the start).
RECOVERY_BEFORE = (15.0, 30.0)
#: The paper's window of the slow recovery, s.
RECOVERY_AFTER = (40.0, 100.0)


def recovery_time(series, g: float, t_end: float) -> tuple[float, bool]:
    """(T, censored): seconds from ``t_end`` to the start of the first whole 1-s window ``[s, s + 1)``, ``s >=
    t_end``, whose throughput ``series[s]`` (bit/s) is at least ``g``; if none before the series ends, T runs to
    its end and ``censored`` is True (T is then a lower bound of the true recovery time)."""
    x = np.asarray(series, dtype=float)
    s0 = int(math.ceil(t_end))
    hit = np.nonzero(x[s0:] >= g)[0]
    if hit.size:
        return float(s0 + hit[0] - t_end), False
    return float(max(len(x) - t_end, 0.0)), True


def fluid_recovery_time(size: float, rtt: float, g: float, dt: float = 0.01, horizon: float = 600.0) -> float:
    """The TFRC equation's own recovery time (s) from a loss history of short intervals, as a fluid model.

    After an episode of many loss events the eight closed loss intervals are a few packets each; take them as 0.
    With N(t) packets sent since the last loss event (the open interval I_0), RFC 5348's average is then
    ``I_mean = mean_loss_interval(N, (0,) * 8, 8) = w_0 N / W_tot`` (W_tot = sum of the weights = 6), the rate
    the square-root law ``X = sqrt_law_rate(size, rtt, min(1, 1 / I_mean))`` = s / (R sqrt(2 p / 3)) (bytes/s,
    b = 1) and ``dN/dt = X / size``, from N = 0; the result is the first t with 8 X >= g (g in bit/s), by Euler
    steps of ``dt``. This integrates in closed form: N = 3 t^2 / (8 W_tot R^2), so X / s = 3 t / (4 W_tot R^2)
    and T = 4 W_tot R^2 (g / 8 s) / 3 = 8 R^2 g / (8 s) with W_tot = 6: the recovery time grows with the square
    of the RTT. Neglected: the equation's t_RTO term (about 10 % of the rate where it reaches g = 500 kbit/s at
    R = 0.27 s, p = 0.012; it lengthens T), the pre-episode intervals still in the history (they shorten T), the
    2 X_recv receive limit, the once-per-RTT feedback and the rate at the episode's end, RTT changes."""
    closed = np.zeros(len(LOSS_WEIGHTS))
    n, t = 0.0, 0.0
    while t < horizon:
        imean = mean_loss_interval(n, closed, len(closed))
        x = float(sqrt_law_rate(size, rtt, 1.0 if imean <= 1.0 else 1.0 / imean))
        if 8.0 * x >= g:
            return t
        n += x / size * dt
        t += dt
    return math.inf


def recovery(quick: bool = True, seed: int = 2008, progress=None) -> list[dict]:
    """Fig. 4(b)'s slow recovery: Fig. 4's test bed (g = 500 kbit/s against 15 TCP flows marked at 300 kbit/s)
    with the transient congestion :data:`RECOVERY_UDP`, each of :data:`RECOVERY_EPISODES`, for TFRC and gTFRC.
    Per episode and protocol: the flow's packets dropped (all, and IN) during and after the episode per
    replication, the recovery time T of
    every replication (:func:`recovery_time` from the episode's end), how many are censored, the mean 1-s
    throughput before, during and after the episode per replication (bit/s), the share of 1-s windows below g
    over :data:`RECOVERY_AFTER`, and the mean series over the replications with its 95 % interval per second."""
    st = settings(quick)
    g, g_agg = CASES[1]
    rows = []
    for j, (kind, colour) in enumerate(RECOVERY_EPISODES):
        for k, proto in enumerate(("tfrc", "gtfrc")):
            cfg = QstpConfig(protocol=proto, target=g, aggregate_target=g_agg, n_tcp=FIG4_TCP,
                             duration=st["recovery_duration"], warmup=RECOVERY_BEFORE[0], size=PACKET_SIZE,
                             rto_floor=RTO_FLOOR, udp=RECOVERY_UDP, udp_colour=colour)
            runs = replicate(cfg, st["recovery_replications"], seed, stream=(9 + j, k))
            rows.append(_recovery_row(runs, proto, kind, g, g_agg, cfg.duration))
            if progress is not None:
                progress()
    return rows


def _recovery_row(runs, proto: str, kind: str, g: float, g_agg: float, duration: float) -> dict:
    """One protocol's replications of one episode, summarised (see :func:`recovery`)."""
    (b0, b1), (e0, e1), (a0, a1) = RECOVERY_BEFORE, RECOVERY_EPISODE, RECOVERY_AFTER
    ser = np.array([r.extra["received_per_second"] for r in runs])
    rec = [recovery_time(x, g, e1) for x in ser]
    m = len(runs)
    h = two_sided_t(0.95, m - 1) * ser.std(axis=0, ddof=1) / math.sqrt(m) if m > 1 else np.zeros(ser.shape[1])
    mean = ser.mean(axis=0)

    def drops(key, t0, t1):
        return [int(r.extra[key][int(t0):int(t1)].sum()) for r in runs]

    return {"protocol": proto, "episode_kind": kind, "target": g, "aggregate_target": g_agg, "n_tcp": FIG4_TCP,
            "replications": m, "duration": duration, "episode": list(RECOVERY_EPISODE),
            "udp_rate": RECOVERY_UDP[0][1], "in_drops_during": drops("dropped_in_per_second", e0, e1),
            "drops_during": drops("dropped_per_second", e0, e1), "drops_after": drops("dropped_per_second", a0, a1),
            "recovery_times": [t for t, _ in rec], "censored": int(sum(c for _, c in rec)),
            "rtt": [float(r.rtt) for r in runs],
            "fluid_recovery": [fluid_recovery_time(PACKET_SIZE, r.rtt, g) for r in runs] if proto == "tfrc" else None,
            "before": [float(x[int(b0):int(b1)].mean()) for x in ser],
            "during": [float(x[int(e0):int(e1)].mean()) for x in ser],
            "after": [float(x[int(a0):int(a1)].mean()) for x in ser],
            "after_below_target": float(np.mean(ser[:, int(a0):int(a1)] < g)),
            "series_mean": [float(x) for x in mean], "series_low": [float(x) for x in mean - h],
            "series_high": [float(x) for x in mean + h]}


def fig7(quick: bool = True, seed: int = 2008, progress=None) -> list[dict]:
    """Fig. 7: CBQ (300 kbit/s pipe, borrow mode) against a UDP flow, TCP and QSTP (gTFRC, g = 300 kbit/s): the
    throughput during the congestion [60, 120] s, the jitter, and the first replication's series."""
    st = settings(quick)
    t0, t1 = FIG7_CONGESTION
    rows = []
    for k, proto in enumerate(("tcp", "gtfrc")):
        cfg = QstpConfig(protocol=proto, target=FIG7_PIPE, aggregate_target=FIG7_PIPE, n_tcp=0,
                         duration=st["fig7_duration"], warmup=10.0, size=PACKET_SIZE, rto_floor=RTO_FLOOR,
                         scheduler="cbq", cbq_share=FIG7_PIPE / 1000e3, udp=FIG7_UDP)
        runs = replicate(cfg, st["fig7_replications"], seed, stream=(7, k))
        during = np.array([np.mean(r.extra["received_per_second"][int(t0):int(t1)]) for r in runs])
        jit = np.array([r.extra["jitter"] for r in runs])
        jit_cong = np.array([jitter(r.extra["delays"], t0, t1) for r in runs])
        m = len(runs)

        def ci(x):
            h = two_sided_t(0.95, m - 1) * x.std(ddof=1) / math.sqrt(m) if m > 1 else 0.0
            return float(x.mean()), float(x.mean() - h), float(x.mean() + h)

        d = runs[0].extra["delays"]
        sel = (d[:, 0] >= 1.0)
        rows.append({"protocol": proto, "replications": m, "pipe": FIG7_PIPE,
                     "congestion_throughput": ci(during), "congestion_throughput_min": float(during.min()),
                     "jitter": ci(jit), "jitter_congestion": ci(jit_cong),
                     "throughput": float(np.mean([r.throughput for r in runs])),
                     "sent_series": [float(x) for x in runs[0].extra["sent_per_second"]],
                     "received_series": [float(x) for x in runs[0].extra["received_per_second"]],
                     "ipdv_series": _ipdv_per_second(d[sel], int(cfg.duration))})
        if progress is not None:
            progress()
    return rows


def _ipdv_per_second(d: np.ndarray, seconds: int) -> list:
    """Mean |delay difference| of consecutive packets per 1-s window (s; nan where fewer than two packets)."""
    out = []
    if len(d) < 2:
        return [math.nan] * seconds
    diffs = np.abs(np.diff(d[:, 1]))
    sec = d[1:, 0].astype(int)
    for s in range(seconds):
        v = diffs[sec == s]
        out.append(float(v.mean()) if v.size else math.nan)
    return out


#: The sensitivity run where gTFRC's clamp binds: Fig. 4's test bed with the studied flow's target raised to
#: 800 kbit/s and the aggregate's lowered to 150 kbit/s, so the TFRC equation at the flow's own loss and RTT gives
#: less than g (targets of 650 and 700 kbit/s against the aggregate's 300 did not: there the equation's rate
#: followed the target, the IN-marked share lowering the flow's loss).
CLAMP_CASE = (800e3, 150e3)


def clamp(quick: bool = True, seed: int = 2008, progress=None) -> list[dict]:
    """TFRC and gTFRC at :data:`CLAMP_CASE` against 15 TCP flows: the replications' summary per protocol (with
    ``lower_95``, the one-sided 95 % lower bound of the mean)."""
    st = settings(quick)
    g, g_agg = CLAMP_CASE
    rows = []
    for k, proto in enumerate(("tfrc", "gtfrc")):
        cfg = QstpConfig(protocol=proto, target=g, aggregate_target=g_agg, n_tcp=FIG4_TCP, duration=st["duration"],
                         warmup=st["warmup"], size=PACKET_SIZE, rto_floor=RTO_FLOOR)
        runs = replicate(cfg, st["replications"], seed, stream=(8, k))
        summ = _summary(runs, g)
        rows.append({"target": g, "aggregate_target": g_agg, "protocol": proto, "n_tcp": FIG4_TCP, **summ,
                     "lower_95": 2 * summ["throughput_mean"] - summ["upper_95"]})
        if progress is not None:
            progress()
    return rows


def rto_sensitivity(quick: bool = True, seed: int = 2008, progress=None) -> list[dict]:
    """Fig. 4's test bed with ns-2's RTO rule (:data:`RTO_SENSITIVITY`) in place of Linux's, the same seeds and
    streams as :func:`fig4` (common random numbers: the rule is the only difference): the replications' summary
    per protocol, with the rule named."""
    st = settings(quick)
    g, g_agg = CASES[1]
    rows = []
    for k, proto in enumerate(PROTOCOLS):
        cfg = QstpConfig(protocol=proto, target=g, aggregate_target=g_agg, n_tcp=FIG4_TCP, duration=st["duration"],
                         warmup=st["warmup"], size=PACKET_SIZE, rto_floor=RTO_SENSITIVITY)
        runs = replicate(cfg, st["replications"], seed, stream=(4, k))
        rows.append({"target": g, "aggregate_target": g_agg, "protocol": proto, "n_tcp": FIG4_TCP,
                     "rto_floor": RTO_SENSITIVITY, "duration": cfg.duration, "warmup": cfg.warmup,
                     **_summary(runs, g)})
        if progress is not None:
            progress()
    return rows


def results(quick: bool = True, seed: int = 2008, progress=None) -> dict:
    """Every figure's data: ``{"fig4": rows, "fig5": rows, "fig7": rows, "clamp": rows, "recovery": rows,
    "rto_ns2": rows}`` (the last: :func:`rto_sensitivity`)."""
    return {"fig4": fig4(quick, seed, progress), "fig5": sweep(quick, seed, progress),
            "fig7": fig7(quick, seed, progress), "clamp": clamp(quick, seed, progress),
            "recovery": recovery(quick, seed, progress), "rto_ns2": rto_sensitivity(quick, seed, progress)}


#: The episodes' names in the output ({rate}: the UDP flow's rate).
EPISODE_NAMES = {"aggregate": "UDP {rate} in the aggregate's class", "in": "UDP {rate} marked IN"}
