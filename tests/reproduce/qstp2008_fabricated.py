"""Fabricated results of ``qosbound reproduce qstp2008``'s experiments, in the shape of
:func:`qosbound.reproduce.qstp2008_experiments.results`, so that the claims, the JSON, the figures and the exit
code are tested in seconds."""

from __future__ import annotations

import math

from qosbound.reproduce.qstp2008_experiments import CLAMP_CASE, PROTOCOLS


def results(tcp=0.8, tfrc=1.01, gtfrc=1.03, std=(20e3, 5e3, 3e3), pipe=(1.0, 1.0), jit=(0.022, 0.006),
            ranges=(60e3, 30e3, 10e3), aggregate=1.3):
    """Throughputs as fractions of g per protocol; std per protocol (bit/s); Fig. 7's pipe fractions and jitters;
    Fig. 5's min/max range per protocol (bit/s, +-10 % from size to size); the aggregate's throughput as a fraction
    of its target (three replications at +-2 %)."""
    frac = {"tcp": tcp, "tfrc": tfrc, "gtfrc": gtfrc}
    sd = dict(zip(PROTOCOLS, std))
    width = dict(zip(PROTOCOLS, ranges))

    def agg(target):
        return [aggregate * target * (1 + e) for e in (-0.02, 0.0, 0.02)]
    fig4 = [{"target": 500e3, "aggregate_target": 300e3, "protocol": p, "n_tcp": 15, "replications": 3,
             "throughput_mean": frac[p] * 500e3, "upper_95": frac[p] * 500e3 + 1e3, "throughput_std": sd[p],
             "predicted_mean": 520e3, "loss_event_rate": 0.01, "rtt": 0.26, "windows_below_target": 0.3,
             "tcp_timeouts": 500.0, "tcp_fast_recoveries": 100.0, "series": [frac[p] * 500e3] * 10,
             "aggregate_per_replication": agg(300e3)}
            for p in PROTOCOLS]
    fig5 = []
    for p in PROTOCOLS:
        for n, k in zip((1, 10, 20), (0.9, 1.0, 1.1)):
            m = frac[p] * 400e3 * (1.2 if (p == "tcp" and n == 1) else 1.0)
            fig5.append({"target": 400e3, "aggregate_target": 400e3, "protocol": p, "n_tcp": n, "replications": 3,
                         "throughput_mean": m, "upper_95": m + 1e3, "throughput_std": sd[p],
                         "throughput_min": m - k * width[p] / 2, "throughput_max": m + k * width[p] / 2,
                         "aggregate_mean": 1e6 - m, "aggregate_per_replication": agg(400e3), "predicted_mean": None,
                         "loss_event_rate": 0.01, "rtt": 0.26})
    fig7 = [{"protocol": p, "replications": 2, "pipe": 300e3, "throughput": 5e5,
             "congestion_throughput": (f * 300e3, f * 300e3 - 1e3, f * 300e3 + 1e3),
             "congestion_throughput_min": f * 300e3, "jitter": (j, 0.95 * j, 1.05 * j),
             "jitter_congestion": (j, j, j), "sent_series": [1.0, math.nan], "received_series": [1.0, 2.0],
             "ipdv_series": [math.nan, 0.01]}
            for p, f, j in zip(("tcp", "gtfrc"), pipe, jit)]
    return {"fig4": fig4, "fig5": fig5, "fig7": fig7}


def clamp(tfrc=0.93, equation=0.92, gtfrc=1.0):
    g = CLAMP_CASE[0]
    return [{"target": g, "aggregate_target": CLAMP_CASE[1], "protocol": "tfrc", "replications": 4,
             "throughput_mean": tfrc * g, "upper_95": tfrc * g + 5e3, "lower_95": tfrc * g - 5e3,
             "predicted_mean": equation * g},
            {"target": g, "aggregate_target": CLAMP_CASE[1], "protocol": "gtfrc", "replications": 4,
             "throughput_mean": gtfrc * g, "upper_95": gtfrc * g + 2e3, "lower_95": gtfrc * g - 2e3,
             "predicted_mean": g}]


def recovery(main=(0, 0, 1, 0), in_ep=(30, 33, 28, 31), in_drops=(0, 0, 0, 0), during=1.0):
    """Fabricated rows of the recovery experiment: recovery times (s) per run of TFRC after the aggregate-class
    episode (``main``) and after the IN-marked one (``in_ep``); the flow's IN drops and throughput (fraction of g)
    during the main episode."""
    g = 500e3

    def row(kind, proto, times):
        n = len(times)
        return {"protocol": proto, "episode_kind": kind, "target": g, "aggregate_target": 300e3, "n_tcp": 15,
                "replications": n, "duration": 100.0, "episode": [30.0, 40.0], "udp_rate": 1e6,
                "in_drops_during": list(in_drops) if kind == "aggregate" else [50] * n,
                "drops_during": [9] * n, "drops_after": [20] * n, "recovery_times": [float(t) for t in times],
                "censored": 0, "rtt": [0.27] * n, "fluid_recovery": [23.6] * n if proto == "tfrc" else None,
                "before": [g] * n, "during": [during * g] * n, "after": [0.8 * g] * n, "after_below_target": 0.6,
                "series_mean": [g] * 100, "series_low": [g] * 100, "series_high": [g] * 100}

    return [row("aggregate", "tfrc", main), row("aggregate", "gtfrc", (0,) * len(main)),
            row("in", "tfrc", in_ep), row("in", "gtfrc", (1,) * len(in_ep))]


def rto_ns2(tcp=0.8, tfrc=1.01, gtfrc=1.03):
    """Fig. 4's rows under ns-2's RTO rule (the sensitivity run), throughputs as fractions of g."""
    rows = [dict(r, rto_floor="rto", tcp_timeouts=900.0, tcp_drops=1800.0) for r in results(tcp=tcp, tfrc=tfrc, gtfrc=gtfrc)["fig4"]]
    return rows
