"""Where the PQ + TxQ system meets the layers below it.

The model layer (:func:`qosbound.models.pq_txq.solve`) and the packet simulator
(:func:`qosbound.validation.pq_txq_sim.run_replications`) return plain numbers
and arrays, and name a bad parameter by its attribute of
:class:`qosbound.params.Params` (or of the method's options). Here, in the
system layer and nowhere below it, the numbers become named metrics
(:class:`~qosbound.results.Result`: names, units, interval kinds, provenance)
and the parameter names become the scenario fields a user wrote.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import replace

import numpy as np

from qosbound.errors import ScenarioError
from qosbound.metric_names import ccdf_name, quantile_name
from qosbound.results import Interval, Kind, Result
from qosbound.systems.curves import function_ccdf, histogram_ccdf

__all__ = ["PARAM_FIELDS", "scenario_fields", "model_results", "simulated_results", "render", "write_files",
           "simulate_trace"]

#: The scenario field each attribute of :class:`qosbound.params.Params` comes from.
PARAM_FIELDS = {"C": "link.rate", "Q_t": "txq.units", "unit": "txq.unit_size", "pq_cap": "pq.capacity",
                "ef_size": "traffic.EF.size", "ef_rate": "traffic.EF.rate", "lam": "traffic.EF.rate",
                "arrivals": "traffic.EF.arrivals", "be_sizes": "traffic.BE.sizes", "be_probs": "traffic.BE.sizes",
                "burst": "traffic.EF.burst", "be_rate": "traffic.BE.rate", "ef_streams": "traffic.EF.streams"}


@contextmanager
def scenario_fields(options: str | None = None):
    """Re-raise a lower layer's ScenarioError against the scenario field its parameter comes from: a
    :class:`~qosbound.params.Params` attribute by :data:`PARAM_FIELDS`, any other name as an option of the
    ``options`` section (e.g. ``methods.simulated``); other errors pass unchanged."""
    try:
        yield
    except ScenarioError as e:
        if e.file is not None or not e.field:
            raise
        field = PARAM_FIELDS.get(e.field) or (f"{options}.{e.field}" if options else None)
        if field is None:
            raise
        raise type(e)(e.problem, field=field) from None  # a ResourceError stays one (exit 4)


def render(p, opts, scenario_name: str = ""):
    """The scenario's rendered PRISM model (:func:`qosbound.models.pq_txq.render`), errors naming its fields."""
    from qosbound.models.pq_txq import render as render_model

    with scenario_fields("methods.model-checked"):
        return render_model(p, opts, scenario_name)


def write_files(rendered, out_dir):
    """Write a rendered model and its property file (:func:`qosbound.models.pq_txq.write_files`)."""
    from qosbound.models.pq_txq import write_files as write

    return write(rendered, out_dir)


def simulate_trace(p, packets: int, seed: int):
    """A per-packet simulator trace (:func:`qosbound.validation.pq_txq_sim.simulate_trace`), errors naming the
    scenario's fields."""
    from qosbound.validation.pq_txq_sim import simulate_trace as sim

    with scenario_fields():
        return sim(p, packets, seed)


def rounding_neglects(p, rendered) -> str:
    """What a chain with packet sizes rounded up to whole granules neglects (Interval.approximation's text).

    Why it is not a bound. Rounding makes every transmission at least as long, and the sample-path coupling that
    would make every delay at least as long (same arrival times, BE sizes by admission index) holds only while
    the two systems admit the same kinds. Its induction fails at the first departure where the slower system's
    PQ is not empty and the faster one's is: the slower one admits an EF packet where the other admits a BE one
    (saturated BE is not a fixed set of packets: the BE work admitted falls as the EF backlog rises), so from
    then on its ring can hold LESS work and its later departures come earlier. Longer EF transmissions alone
    LOWER the EF loss and p99 (``tests/test_pq_txq_model.py`` pins the case: 2 Mbit/s, ring of 4 x 1500 B, PQ
    4, EF 200 B Poisson at 800 kbit/s, BE 40 / 1500 B at 0.5 / 0.5: rounded to 24-byte granules the loss is
    0.1732, the exact chain's 0.1781; EF 200 B as 216 B alone gives 0.1717)."""
    g = rendered.granule
    sizes = [("EF", p.ef_size, rendered.ef_gran * g)] + [("BE", b, n * g) for b, n in zip(p.be_sizes, rendered.be_gran)]
    changed = ", ".join(f"{k} {a:g} B as {b:g} B" for k, a, b in sizes if abs(a - b) > 1e-9)
    return (f"the packet sizes rounded up to whole {rendered.granule}-byte granules ({changed}; raise "
            "methods.model-checked.max_granules to avoid it): not a bound either way -- longer transmissions "
            "let EF be admitted in place of BE more often, which can lower the work ahead and so the delay "
            "and loss (measured: EF loss 0.1732 against the exact 0.1781 on a 2 Mbit/s port, "
            "tests/test_pq_txq_model.py)")


def model_results(p, opts, ccdf_at: list[float], quantiles: list[float], progress) -> list[Result]:
    """EF delay metrics by model checking (method 'model-checked')."""
    from qosbound.models.pq_txq import TINY, solve

    with scenario_fields("methods.model-checked"):
        sol = solve(p, opts, ccdf_at, quantiles, progress)
    rendered, dd = sol.rendered, sol.dist
    little_rel = abs(sol.mean - sol.little_mean) / sol.mean
    note = ("exact (rational) stationary distribution" if opts.exact else
            f"direct sparse solve; a-posteriori bound: L1 error of the slot-state distribution <= {dd.tv_bound:.2g}"
            + (f", plus {rendered.truncated_mass:.2g} of arrival probability per slot left out (each outcome "
               f"< {TINY:g})" if rendered.truncated_mass else ""))
    prov = {"model": "models/templates/pq_txq.prism (rendered)", "engine": "storm", "states": sol.states,
            "transitions": sol.transitions, "seconds": round(sol.seconds, 4), "granule_bytes": rendered.granule,
            "slot_s": rendered.slot, "arrivals": rendered.arrivals,
            "construction": "stationary distribution of tick states x tagged-arrival delay",
            "error_bound_l1": dd.tv_bound, "truncated_arrival_mass": rendered.truncated_mass}
    neglects = rounding_neglects(p, rendered) if rendered.rounded else ""
    if rendered.rounded:
        prov["note"] = "sizes rounded up to whole granules: model results are approximations (not bounds)"

    def iv(v: float, key) -> tuple[float, Interval]:
        """(value, interval) of a model number: the numerical bracket of the direct solve (its exact value, or its
        error bound), or, when sizes were rounded up, an approximation of the scenario's value."""
        if opts.exact:
            lo = hi = v
        else:
            lo, hi = sol.bounds.get(key, (-math.inf, math.inf))
            lo, hi = min(lo, v), max(hi, v)
        if rendered.rounded:
            bracket = f"; the rounded chain's own value lies in [{lo:.9g}, {hi:.9g}]" if math.isfinite(hi - lo) else ""
            return v, Interval.approximation(v, neglects=neglects, note=note + bracket)
        if opts.exact:
            return v, Interval.exact(v, note=note)
        return v, Interval.numerical(lo, hi, note=note)

    source = {**prov, "source": f"Storm, {sol.states} states"}
    out = []
    v, i = iv(sol.mean, "mean")
    out.append(Result("EF.delay.mean", "model-checked", v, "s", i,
                      {**prov, "source": f"Storm, {sol.states} states; Little's law gives {sol.little_mean:.9g} s",
                       "little_law_mean": sol.little_mean, "little_law_rel_diff": little_rel},
                      curve=_model_curve(sol, opts, note, neglects)))
    for q in quantiles:
        v, i = iv(sol.quantiles[q], ("quantile", q))
        out.append(Result(f"EF.delay.{quantile_name(q)}", "model-checked", v, "s", i, dict(source)))
    for t in ccdf_at:
        v, i = iv(sol.ccdf[t], ("ccdf", t))
        out.append(Result(ccdf_name("EF.delay", t), "model-checked", v, "1", i, dict(source)))
    v, i = iv(sol.loss, "loss")
    out.append(Result("EF.loss", "model-checked", v, "1", i, dict(source)))
    return out


def _model_curve(sol, opts, note: str, neglects: str):
    """The model's whole EF delay CCDF (:func:`qosbound.systems.curves.function_ccdf`), of the kind its metrics
    have: exact, numerical with the solve's error bound, or an approximation when sizes were rounded up
    (``neglects``: :func:`rounding_neglects`; the rounded chain's error bound is not an interval on the
    scenario's curve, so none is drawn)."""
    dd, rendered = sol.dist, sol.rendered
    if rendered.rounded:
        return function_ccdf("EF.delay.ccdf", "model-checked", dd.ccdf, dd.support_max(), Kind.APPROXIMATION,
                             neglects=neglects, note="the stationary delay law of accepted EF packets of the chain "
                             f"with rounded sizes, at evenly spaced delays; {note}")
    if opts.exact:
        kind, brackets = Kind.EXACT, None
    else:
        kind = Kind.NUMERICAL

        def brackets(ts):
            b = dd.error_bounds([], ts, extra=rendered.truncated_mass)
            return [b.get(("ccdf", t), (0.0, 1.0)) for t in ts]
    return function_ccdf("EF.delay.ccdf", "model-checked", dd.ccdf, dd.support_max(), kind, brackets=brackets,
                         note=f"the stationary delay law of accepted EF packets at evenly spaced delays; {note}")


def simulated_results(p, opts, ccdf: list[float], qs: list[float], progress) -> list[Result]:
    """Every simulated EF metric with a Student-t interval across independent replications.

    Metrics: ``EF.delay.mean``, ``EF.delay.pNN`` for each quantile, ``EF.delay.ccdf@D`` (among accepted
    EF packets) for each point, ``EF.delay.max`` (observed maximum over all replications; no interval)
    and ``EF.loss`` (fraction of EF arrivals lost).
    """
    from qosbound.validation.pq_txq_sim import S_ARRIVALS, S_DELAYS, S_LOST, S_MAX, S_SUM, run_replications
    from qosbound.validation.stats import hist_quantile, proportion_interval, proportion_se, t_interval

    advance = progress.task(f"simulating {opts.replications} x {opts.packets:,} EF packets", opts.replications)
    with scenario_fields("methods.simulated"):
        rep = run_replications(p, opts.packets, opts.replications, opts.seed, opts.warmup, ccdf, advance=advance)
    st = rep.stats
    n = st[:, S_DELAYS]
    s = rep.setup
    conf = opts.confidence
    R = opts.replications
    base = {"replications": R, "packets": opts.packets * R,
            "packets_per_replication": opts.packets, "seed": opts.seed, "warmup": opts.warmup,
            "arrivals": p.arrivals, "simulator": "qosbound.validation.pq_txq_sim",
            "seeding": "numpy SeedSequence(seed).spawn(replications)"}
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
    from qosbound.systems.pq_txq import per_stream, stream_prefix
    from qosbound.validation.pq_txq_kernels import SS_ARRIVALS, SS_DELAYS, SS_LOST, SS_SUM

    for i in range(rep.sstats.shape[1] if per_stream(p) else 0):  # EF aggregates: each stream's own statistics
        ss = rep.sstats[:, i]
        if np.all(ss[:, SS_DELAYS] > 0):
            add(f"{stream_prefix(i)}.delay.mean", "s", ss[:, SS_SUM] / ss[:, SS_DELAYS],
                "mean of per-replication sample means of the stream's packets", stream=i + 1)
        add_fraction(f"{stream_prefix(i)}.loss", ss[:, SS_LOST], np.maximum(ss[:, SS_ARRIVALS], 1.0),
                     "mean of per-replication fractions of the stream's arrivals lost at the PQ", stream=i + 1)
    return out
