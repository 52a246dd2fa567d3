"""A network by the chained simulation (:mod:`qosbound.validation.network_sim`): per flow the end-to-end delay's
mean and quantiles (Student t over the replications' estimates), its largest value observed (a lower bound on the
maximum), its jitter (the spread, largest less smallest, per replication), the loss on the path and the
throughput; per hop the largest delay observed at each port."""

from __future__ import annotations

import numpy as np

from qosbound.errors import ResourceError
from qosbound.metric_names import quantile_name
from qosbound.results import Interval, Result
from qosbound.systems.network import distributed as _distributed
from qosbound.systems.network.elements import Network
from qosbound.systems.network.estimates import reduce_samples
from qosbound.systems.port.simulated import config as port_config
from qosbound.validation.network_sim import (CBR, ON_OFF, POISSON, FlowSpec, NetworkConfig, SourceSpec,
                                             simulate)
from qosbound.validation.stats import proportion_interval, proportion_se, t_interval

__all__ = ["network_config", "simulated", "results", "packet_hops"]

_KIND = {"poisson": POISSON, "cbr": CBR, "on-off": ON_OFF}


def network_config(net: Network) -> NetworkConfig:
    """The simulator's arrays: the ports in the network's feed-forward order."""
    index = {p: i for i, p in enumerate(net.order)}
    ports = []
    for p in net.order:
        cfg = port_config(net.ports[p])
        ports.append(cfg)
    flows = []
    for f in net.flows:
        srcs = tuple(SourceSpec(_KIND[s.kind], s.rate, tuple(s.sizes.sizes), tuple(s.sizes.probs), s.sizes.exponential,
                                s.count, s.phase, s.on, s.off) for s in f.streams if s.kind != "saturated")
        if f.saturated:
            srcs = tuple(SourceSpec(3, 0.0, tuple(s.sizes.sizes), tuple(s.sizes.probs), s.sizes.exponential)
                         for s in f.streams)
        flows.append(FlowSpec(tuple(index[h.port] for h in f.hops), tuple(h.index for h in f.hops),
                              tuple(h.prec for h in f.hops), srcs, f.saturated))
    prop = np.array([net.ports[p].delay for p in net.order], float)
    return NetworkConfig(ports, prop, flows)


def packet_hops(net: Network, duration: float) -> float:
    """Packets x hops one replication simulates, estimated from the offered rates (saturated flows at their first
    link's rate in packets of their smallest size)."""
    tot = 0.0
    for f in net.flows:
        size = f.smallest if f.saturated else (f.sizes.mean if f.sizes else 1500.0)
        tot += f.offered / (8.0 * size) * duration * len(f.hops)
    return tot


def _ci(metric, unit, per_rep, conf, base, estimator, method="simulated"):
    e = t_interval(per_rep, conf)
    lo = max(0.0, e.low) if unit in ("s", "bit/s") else e.low
    iv = Interval.ci(min(lo, e.mean), max(e.high, e.mean), conf, se=e.std_error, dof=e.dof,
                     note=f"Student t over {len(per_rep)} replications")
    return Result(metric, method, e.mean, unit, iv, dict(base, std_error=e.std_error, estimator=estimator))


def simulated(net: Network, opts, quantiles, progress) -> list[Result]:
    """Every simulated metric of every flow (module docstring). The replications run one after another here, or
    as Dask tasks when the run asked for it (:func:`.distributed.replications_on`, ``plan --workers`` /
    ``--scheduler``): each reduced to its estimates where it ran (:mod:`.estimates`), the same figures either way."""
    est = packet_hops(net, opts.duration) * opts.replications
    if est > opts.max_packet_hops:
        raise ResourceError(f"about {est:.3g} packet-hops ({opts.replications} x {opts.duration:g} s), above the "
                            f"budget of {opts.max_packet_hops:.3g}: shorten methods.simulated.duration or raise "
                            "methods.simulated.max_packet_hops", field="methods.simulated.duration")
    cfg = network_config(net)
    on = _distributed.executor()
    args = (cfg, opts.duration, opts.replications, opts.seed, opts.warmup, opts.cooldown)
    if on is None:
        advance = progress.task(f"simulating {opts.replications} x {opts.duration:g} s of the network",
                                opts.replications)
        samples, hops = simulate(*args, advance)
        estimates = reduce_samples(samples, quantiles)
    else:
        on.check()
        estimates, hops = _distributed.estimates_on_dask(*args, quantiles=quantiles, workers=on.workers,
                                                         scheduler=on.scheduler, progress=progress)
    return results(net, estimates, hops, opts, quantiles)


def results(net: Network, estimates: list, hops: int, opts, quantiles, *, method: str = "simulated",
            provenance: dict | None = None) -> list[Result]:
    """The simulated results from each flow's per-replication estimates (:class:`.estimates.FlowEstimates`); they
    do not depend on where the replications ran. ``method``/``provenance``: another simulator's replications
    reduced the same way (ns-3's, :mod:`.ns3`: no per-hop maxima, NaN there, are reported)."""
    conf = opts.confidence
    R = opts.replications
    base = {"replications": R, "duration": opts.duration, "seed": opts.seed, "warmup": opts.warmup,
            "cooldown": opts.cooldown, "packet_hops": hops, "simulator": "qosbound.validation.network_sim",
            "seeding": "numpy SeedSequence(seed).spawn(replications), then one Generator per flow and per port"}
    if provenance is not None:
        base = dict(base, **provenance)
    out: list[Result] = []
    for k, f in enumerate(net.flows):
        s = estimates[k]
        n = f.name
        if s.window > 0:
            out.append(_ci(f"{n}.throughput", "bit/s", 8.0 * s.bytes / s.window, conf, base,
                           "delivered bits of the counted packets / the counted window", method))
        if f.saturated:
            continue
        if np.all(s.delivered >= 2):
            out.append(_ci(f"{n}.delay.mean", "s", [float(x) for x in s.mean], conf, base,
                           "mean of per-replication sample means", method))
            for j, q in enumerate(quantiles):
                out.append(_ci(f"{n}.delay.{quantile_name(q)}", "s", [float(x) for x in s.quantile[:, j]],
                               conf, base, "mean of per-replication sample quantiles (numpy's linear interpolation)",
                               method))
            out.append(_ci(f"{n}.delay.jitter", "s", [float(x) for x in s.jitter], conf, base,
                           "mean of per-replication spreads (largest less smallest delay)", method))
            mx = float(s.max.max())
            out.append(Result(f"{n}.delay.max", method, mx, "s",
                              Interval.lower_bound(mx, note="the largest delay observed over all replications: the "
                                                            "true maximum is at least this"),
                              dict(base, estimator="largest end-to-end delay observed over all replications")))
            for h, hop in enumerate(f.hops):
                if np.isnan(s.hop_max[:, h]).all():
                    continue
                hm = float(s.hop_max[:, h].max())
                out.append(Result(f"{n}.hop.{hop.port}.delay.max", method, hm, "s",
                                  Interval.lower_bound(hm, note="the largest delay at the port observed"),
                                  dict(base, estimator="largest delay at the port (arrival to last bit on the wire)")))
        if np.all(s.sent > 0):
            K, N = int(s.lost.sum()), int(s.sent.sum())
            e = t_interval(s.lost / s.sent, conf)
            lo, hi = proportion_interval(K, N, conf)
            se = max(e.std_error, proportion_se(K, N))
            iv = Interval.ci(max(0.0, min(e.low, lo, e.mean)), min(1.0, max(e.high, hi, e.mean)), conf, se=se, dof=R - 1,
                             note=f"Student t over {R} replications, widened to the pooled Clopper-Pearson interval")
            where = {}
            if not np.isnan(s.hop_lost).any():  # a simulator that says where it drops
                where = {"lost_per_port": {hop.port: int(s.hop_lost[:, h].sum()) for h, hop in enumerate(f.hops)}}
            out.append(Result(f"{n}.loss", method, e.mean, "1", iv,
                              dict(base, std_error=se, events=K, trials=N, **where,
                                   estimator="per-replication fraction of the counted packets lost on the path")))
    return out
