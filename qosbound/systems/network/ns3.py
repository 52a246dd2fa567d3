"""The ns-3 counterpart of a network (``qosbound validate NETWORK --ns3``): the network built in ns-3
(:mod:`qosbound.validation.ns3_network`: a node per node, a point-to-point link per port, each port's classes as a
``PrioQueueDisc`` over the device queue that plays its ring), run for the scenario's replications, and reduced per
flow by the same estimators as the chained simulation (:mod:`.estimates`, :func:`.simulated.results`), as method
``ns-3``.

What ns-3 can express, per port, is the port system's ns-3 mapping (:func:`qosbound.systems.port.ns3_gap`: at
most one priority class and one other class, no policer, marker or RED; the ring counted in packets,
:func:`qosbound.validation.ns3_runner.device_queue_packets`: ``txq.units - 1`` device-queue packets plus the one on
the wire, every packet within one unit), and per flow: one class kind (priority or not) along its whole path (the
band follows the packet's ToS), sources CBR with random phases, Poisson or saturated, sizes a discrete law of
34-1900 B on the wire. Anything else is refused with a ScenarioError naming the field and what ns-3 lacks.

The two simulators share the scenario and the statistics (the counted window by first arrival, Student t over
replications), nothing of the queueing: ns-3's own queue discs, device queues, IP forwarding, channels and
timestamps; its traffic is drawn by its own generators (:func:`qosbound.validation.ns3_runner.send_schedule`).
"""

from __future__ import annotations

import importlib.metadata

import numpy as np

from qosbound.errors import ScenarioError
from qosbound.results import Result
from qosbound.systems.network.elements import Network, network
from qosbound.systems.network.metrics import quantiles_of
from qosbound.systems.network.estimates import reduce_samples
from qosbound.systems.network.simulated import results
from qosbound.systems.port import ns3_gap
from qosbound.systems.solve_cache import cached
from qosbound.validation.network_sim import FlowSample
from qosbound.validation.ns3_network import SATURATION, FlowSpec, NetConfig, PortSpec, run_network
from qosbound.validation.ns3_runner import device_queue_packets
from qosbound.validation.trace import make_table

__all__ = ["ns3_config", "ns3_results", "samples_of", "ns3_trace"]

_KINDS = ("cbr", "poisson", "saturated")


def _version() -> str:
    try:
        return importlib.metadata.version("ns3")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _run(cfg: NetConfig, ns3_version: str):
    """ns-3's run of ``cfg`` (the version in the key: with QOSBOUND_CACHE_DIR set, a run is kept and read back for
    the same configuration, ns-3 wheel and code; the runs are deterministic for a given seed)."""
    return run_network(cfg)


def ns3_config(net: Network, opts, path=None) -> NetConfig:
    """The ns-3 network of ``net`` for the simulation options ``opts`` (duration, replications, seed); refusals
    name the field (module docstring)."""
    node = {n: i for i, n in enumerate(net.nodes)}
    index = {p: i for i, p in enumerate(net.order)}
    ports = []
    for p in net.order:
        port = net.ports[p]
        k_max = max(port.units_of(z) for c in port.active for s in c.streams
                    for z in (s.sizes.sizes if not s.sizes.exponential else (65535.0,)))
        try:
            devq = device_queue_packets(port.Q_t, k_max, port.unit, field=f"ports.{p}.txq")
        except ScenarioError as e:
            raise ScenarioError(f"port {p}: {e.problem}", file=path, field=e.field) from None
        why = ns3_gap(port, both=False)
        if why:
            raise ScenarioError(f"ns-3 cannot express port {p}: {why}", file=path, field=f"ports.{p}.classes")
        bands = [1, 1]
        for c in port.active:
            bands[0 if c.priority is not None else 1] = int(c.queue_limit)
        a, b = p.split("->", 1)
        ports.append(PortSpec(node[a], node[b], float(port.rate), float(port.delay), devq, bands))
    flows = []
    for k, f in enumerate(net.flows):
        kinds = {net.ports[h.port].classes[h.index].priority is not None for h in f.hops}
        if len(kinds) > 1:
            raise ScenarioError(f"flow {f.name} is in a priority class at some ports and not at others: ns-3 puts a "
                                "packet in the band its ToS selects, the same at every port", file=path,
                                field=f"flows.{k}")
        sources = []
        for s in f.streams:
            if s.kind not in _KINDS or (s.kind == "cbr" and s.phase is not None):
                raise ScenarioError(f"flow {f.name}: ns-3 runs take CBR (random phases), Poisson and saturated "
                                    f"traffic, not {s.kind}{' with a fixed phase' if s.phase is not None else ''}",
                                    file=path, field=f"flows.{k}.traffic")
            if s.sizes.exponential:
                raise ScenarioError(f"flow {f.name}: ns-3 runs take a discrete size law, not exponential sizes",
                                    file=path, field=f"flows.{k}.traffic.sizes")
            sources.append({"kind": s.kind, "rate": float(s.rate), "count": int(s.count),
                            "sizes": [int(round(z)) for z in s.sizes.sizes], "probs": [float(x) for x in s.sizes.probs]})
        flows.append(FlowSpec([index[h.port] for h in f.hops], 0 if kinds == {True} else 1, sources))
    return NetConfig(len(net.nodes), ports, flows, float(opts.duration), int(opts.replications), int(opts.seed))


def samples_of(net: Network, reps: list, H: float, warmup: float, cooldown: float) -> list[FlowSample]:
    """ns-3's packets per replication and flow as the chained simulation's :class:`FlowSample` (the counted
    window by first arrival, ``[warmup H, (1 - cooldown) H)``); no per-hop figures (NaN)."""
    lo, hi = warmup * H, (1.0 - cooldown) * H
    R = len(reps)
    out = []
    for k, f in enumerate(net.flows):
        K = len(f.hops)
        s = FlowSample([], np.zeros(R), np.zeros(R), np.zeros(R), np.full((R, K), np.nan), hi - lo,
                       np.full((R, K), np.nan))
        for r, flows in enumerate(reps):
            d = flows[k]
            w = (d["send"] >= lo) & (d["send"] < hi)
            ok = w & ~np.isnan(d["recv"])
            s.sent[r] = np.count_nonzero(w)
            s.lost[r] = np.count_nonzero(w & np.isnan(d["recv"]))
            s.bytes[r] = float(d["size"][ok].sum())
            s.delays.append(d["recv"][ok] - d["send"][ok])
        out.append(s)
    return out


def ns3_results(net: Network, opts, quantiles, path=None) -> tuple[list[Result], dict, list]:
    """ns-3's replications of the network reduced per flow as the simulation's (method ``ns-3``), what ns-3
    modelled, and ns-3's packets (per replication and flow, as :func:`run_network` returns them)."""
    cfg = ns3_config(net, opts, path)
    (reps, info), read_back = cached(_run, cfg, _version())
    if read_back:
        info = dict(info, cache="read back (QOSBOUND_CACHE_DIR; run_seconds: the original run)")
    samples = samples_of(net, reps, cfg.duration, float(opts.warmup), float(opts.cooldown))
    hops = int(sum(len(d["send"]) * len(f.hops) for flows in reps for f, d in zip(net.flows, flows)))
    prov = {"simulator": f"ns-3 {_version()} (qosbound.validation.ns3_network)",
            "seeding": "numpy default_rng([seed, replication, flow]) per flow's send times and sizes"}
    out = results(net, reduce_samples(samples, quantiles), hops, opts, quantiles, method="ns-3", provenance=prov)
    sat = [f.name for f in net.flows if f.saturated]
    info = dict(info, kind="ns-3", replications=cfg.replications, duration=cfg.duration,
                semantics="a node per node, a point-to-point link per port (rate, propagation delay), each port a "
                          "PrioQueueDisc of two FIFO bands (the classes' queue limits) over a device queue of "
                          + ", ".join(f"{p}: {q.device_queue}" for p, q in zip(net.order, cfg.ports))
                          + " packets (+ 1 on the wire = txq.units); end-to-end delay from the send to the receiving "
                            "socket (the last bit at the destination)"
                          + (f"; saturated flows ({', '.join(sat)}) offered as Poisson at {SATURATION:g} x their "
                             "first link's rate" if sat else ""))
    return out, info, reps


def ns3_trace(scn, ef_packets: int):
    """``qosbound validate NETWORK --ns3``: ns-3 runs the scenario's ``methods.simulated`` replications and duration
    (``ef_packets``, the port systems' run length, does not apply). Returns the end-to-end trace of the counted
    packets (flow and class columns: the flow's name; replication ``r``'s times shifted by ``r`` durations, so the
    replications follow one another) for the plots, and an info dict whose ``results`` are ns-3's estimates formed
    per replication (:func:`ns3_results`) and ``compare_with`` the method they are judged against: the chained
    simulation's estimates of the same replications and duration."""
    opts = scn.methods.simulated
    net = network(scn)
    res, info, reps = ns3_results(net, opts, quantiles_of(scn), scn.path)
    H = float(opts.duration)
    lo, hi = float(opts.warmup) * H, (1.0 - float(opts.cooldown)) * H
    parts = {"flow": [], "size": [], "arrival": [], "departure": []}
    for r, flows in enumerate(reps):
        for f, d in zip(net.flows, flows):
            w = (d["send"] >= lo) & (d["send"] < hi)
            parts["flow"].append(np.full(int(w.sum()), f.name, dtype=object))
            parts["size"].append(d["size"][w])
            parts["arrival"].append(d["send"][w] + r * H)
            parts["departure"].append(d["recv"][w] + r * H)
    cat = {k: np.concatenate(v) for k, v in parts.items()}
    table = make_table(flow=cat["flow"], cls=cat["flow"], size=cat["size"], arrival=cat["arrival"],
                       departure=cat["departure"], dropped=np.isnan(cat["departure"]))
    return table, dict(info, results=res, compare_with=["simulated"])
