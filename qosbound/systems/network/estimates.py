"""What the simulated estimates of a network need from each replication, reduced where the replication ran.

Every simulated metric (:mod:`.simulated`) is formed from per-replication values or counts, never from the
packets of several replications pooled:

* ``F.delay.mean``, ``F.delay.pNN``, ``F.delay.jitter``: Student t intervals over the replications' sample
  mean, sample quantiles (numpy's linear interpolation) and spread (largest less smallest delay);
* ``F.delay.max``: the largest of the replications' largest delays; ``F.hop.<port>.delay.max``: the largest of
  the replications' per-hop maxima;
* ``F.loss``: Student t over the replications' lost / counted fractions, widened to the Clopper-Pearson
  interval of the pooled counts (sums of the per-replication counts); ``F.throughput``: Student t over the
  replications' delivered bytes / the counted window.

So one replication reduces to, per flow, ``5 + Q`` numbers, the four counts and two per-hop rows -- O(flows x
statistics), whatever the packets -- and the reduction of a replication run alone (``simulate(..., only=[r])``)
is row ``r`` of the reduction of the whole run: the same delays in, the same arithmetic on them. No statistic
needs the pooled samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qosbound.validation.network_sim import FlowSample

__all__ = ["FlowEstimates", "reduce_samples", "join_estimates"]


@dataclass
class FlowEstimates:
    """One flow over ``R`` replications (rows in replication order): the delivered packets counted, the sample
    mean, quantiles (``R x Q``, the ``quantiles`` given), spread and largest of their end-to-end delays (s; NaN
    for a replication that delivered none), the packets counted and lost, the delivered bytes, each hop's largest
    delay and losses (``R x hops``), and the counted window (s)."""

    quantiles: tuple
    delivered: np.ndarray
    mean: np.ndarray
    quantile: np.ndarray
    jitter: np.ndarray
    max: np.ndarray
    sent: np.ndarray
    lost: np.ndarray
    bytes: np.ndarray
    hop_max: np.ndarray
    hop_lost: np.ndarray
    window: float


def _one(s: FlowSample, quantiles: tuple) -> FlowEstimates:
    R = len(s.delays)
    nan = np.full(R, np.nan)
    out = FlowEstimates(quantiles, np.array([d.shape[0] for d in s.delays], np.int64), nan.copy(),
                        np.full((R, len(quantiles)), np.nan), nan.copy(), nan.copy(), s.sent.copy(), s.lost.copy(),
                        s.bytes.copy(), s.hop_max.copy(), s.hop_lost.copy(), s.window)
    for r, d in enumerate(s.delays):
        if d.shape[0] == 0:
            continue
        out.mean[r] = float(d.mean())
        for j, q in enumerate(quantiles):
            out.quantile[r, j] = float(np.quantile(d, q))
        hi, lo = float(d.max()), float(d.min())
        out.max[r] = hi
        out.jitter[r] = hi - lo
    return out


def reduce_samples(samples: list[FlowSample], quantiles) -> list[FlowEstimates]:
    """Per flow, its replications' values the estimates are formed from (module docstring)."""
    qs = tuple(float(q) for q in quantiles)
    return [_one(s, qs) for s in samples]


def join_estimates(parts: list[list[FlowEstimates]]) -> list[FlowEstimates]:
    """The reductions of replications run apart, as one, the parts' replications in the order given."""
    out = []
    for k, first in enumerate(parts[0]):
        each = [p[k] for p in parts]

        def cat(name):
            return np.concatenate([getattr(e, name) for e in each])
        out.append(FlowEstimates(first.quantiles, cat("delivered"), cat("mean"), cat("quantile"), cat("jitter"),
                                 cat("max"), cat("sent"), cat("lost"), cat("bytes"), cat("hop_max"), cat("hop_lost"),
                                 first.window))
    return out
