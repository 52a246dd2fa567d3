"""The ``simulated`` results of a ``pq_txq`` scenario (:mod:`qosbound.validation.pq_txq_sim`, independent
replications) and the per-packet trace of ``validate --simulate``: the simulator returns counts and arrays and names
a bad parameter by its attribute; here they become named metrics with Student-t (and Clopper-Pearson) intervals
and the scenario's fields.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from qosbound.metric_names import ccdf_name, quantile_name
from qosbound.results import Interval, Result
from qosbound.systems.curves import histogram_ccdf
from qosbound.systems.pq_txq.metrics import per_stream, stream_prefix
from qosbound.systems.pq_txq.params import scenario_fields
from qosbound.systems.solve_cache import READ_BACK, cached_replications
from qosbound.validation.pq_txq_kernels import SS_ARRIVALS, SS_DELAYS, SS_LOST, SS_SUM
from qosbound.validation.pq_txq_sim import S_ARRIVALS, S_DELAYS, S_LOST, S_MAX, S_SUM, run_replications
from qosbound.validation.pq_txq_sim import simulate_trace as sim
from qosbound.validation.stats import hist_quantile, proportion_interval, proportion_se, t_interval

__all__ = ["simulated_results", "simulate_trace"]


def simulate_trace(p, packets: int, seed: int):
    """A per-packet simulator trace (:func:`qosbound.validation.pq_txq_sim.simulate_trace`), errors naming the
    scenario's fields."""
    with scenario_fields():
        return sim(p, packets, seed)


def simulated_results(p, opts, ccdf: list[float], qs: list[float], progress) -> list[Result]:
    """Every simulated EF metric with a Student-t interval across independent replications.

    Metrics: ``EF.delay.mean``, ``EF.delay.pNN`` for each quantile, ``EF.delay.ccdf@D`` (among accepted
    EF packets) for each point, ``EF.delay.max`` (observed maximum over all replications; no interval)
    and ``EF.loss`` (fraction of EF arrivals lost).
    """
    advance = progress.task(f"simulating {opts.replications} x {opts.packets:,} EF packets", opts.replications)
    with scenario_fields("methods.simulated"):
        # kept under QOSBOUND_CACHE_DIR: each replication's generator is spawned from the seed, whatever the
        # thread count
        rep, read_back = cached_replications(run_replications, p, opts.packets, opts.replications, opts.seed,
                                             opts.warmup, [float(x) for x in ccdf], replications=opts.replications,
                                             advance=advance)
    st = rep.stats
    n = st[:, S_DELAYS]
    s = rep.setup
    conf = opts.confidence
    R = opts.replications
    base = {"replications": R, "packets": opts.packets * R,
            "packets_per_replication": opts.packets, "seed": opts.seed, "warmup": opts.warmup,
            "arrivals": p.arrivals, "simulator": "qosbound.validation.pq_txq_sim",
            "seeding": "numpy SeedSequence(seed).spawn(replications)",
            **({"cache": READ_BACK} if read_back else {})}
    out: list[Result] = []

    def add(metric, unit, per_rep, estimator, **extra):
        e = t_interval(per_rep, conf)
        prov = dict(base, std_error=e.std_error, estimator=estimator, **extra)
        out.append(Result(metric, "simulated", e.mean, unit, e.interval(note=f"Student t over {R} replications"),
                          prov))

    def add_fraction(metric, k, n_per_rep, estimator, **extra):
        """A fraction: the replication t-interval, widened to the pooled Clopper-Pearson interval, with the
        standard error floored at the binomial one (with (k+1)/(N+2)), so rare events seen zero times
        still get an honest interval."""
        e = t_interval(k / n_per_rep, conf)
        K, N = int(k.sum()), int(n_per_rep.sum())
        lo, hi = proportion_interval(K, N, conf)
        se = max(e.std_error, proportion_se(K, N))
        prov = dict(base, std_error=se, estimator=estimator, events=K, trials=N, **extra)
        iv = Interval.ci(max(0.0, min(e.low, lo)), min(1.0, max(e.high, hi)), conf, se=se, dof=R - 1,
                         note=f"Student t over {R} replications, widened to the pooled Clopper-Pearson interval")
        out.append(Result(metric, "simulated", e.mean, "1", iv, prov))

    if np.all(n > 0):
        add("EF.delay.mean", "s", st[:, S_SUM] / n, "mean of per-replication sample means")
        out[-1] = replace(out[-1], curve=histogram_ccdf("EF.delay.ccdf", rep.counts, s.bin_width, conf))
        for q in qs:
            per = [hist_quantile(rep.counts[r], 0.0, s.bin_width, q, rep.bin_min[r], rep.bin_max[r])
                   for r in range(R)]
            add(f"EF.delay.{quantile_name(q)}", "s", per, "mean of per-replication histogram quantiles "
                "(interpolated between the smallest and largest delay in the bin)", bin_width=s.bin_width)
        for i, d in enumerate(rep.ccdf):
            add_fraction(ccdf_name("EF.delay", float(d)), rep.above[:, i].astype(float), n,
                         "mean of per-replication fractions of accepted EF packets with delay > d (exact count)")
        mx = float(st[:, S_MAX].max())
        out.append(Result("EF.delay.max", "simulated", mx, "s",
                          Interval.lower_bound(mx, note="the largest delay observed over all replications: the "
                                                        "true maximum is at least this"),
                          dict(base, estimator="largest delay observed over all replications", bound=s.bound)))
        omitted = {}
    else:
        # no accepted EF packet in some replication: a delay statistic has no value there
        empty = int((n == 0).sum())
        omitted = {"EF.delay.*": f"{empty} of {R} replications delivered no EF packet (every one was lost at the "
                                 "PQ): the delay has no value; simulate more packets or check the load"}
    add_fraction("EF.loss", st[:, S_LOST], np.maximum(st[:, S_ARRIVALS], 1.0),
                 "mean of per-replication fractions of EF arrivals lost at the PQ",
                 **({"omitted": omitted} if omitted else {}))

    for i in range(rep.sstats.shape[1] if per_stream(p) else 0):  # EF aggregates: each stream's own statistics
        ss = rep.sstats[:, i]
        if np.all(ss[:, SS_DELAYS] > 0):
            add(f"{stream_prefix(i)}.delay.mean", "s", ss[:, SS_SUM] / ss[:, SS_DELAYS],
                "mean of per-replication sample means of the stream's packets", stream=i + 1)
        add_fraction(f"{stream_prefix(i)}.loss", ss[:, SS_LOST], np.maximum(ss[:, SS_ARRIVALS], 1.0),
                     "mean of per-replication fractions of the stream's arrivals lost at the PQ", stream=i + 1)
    return out
