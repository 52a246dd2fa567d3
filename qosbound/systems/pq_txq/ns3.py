"""The ns-3 counterpart of a ``pq_txq`` scenario (``qosbound validate --ns3``): a priority queue in front of a device
queue of packets, with what it models stated beside its trace."""

from __future__ import annotations

import dataclasses
import importlib.metadata

from qosbound.systems.pq_txq.params import params
from qosbound.systems.pq_txq.schema import Scenario
from qosbound.systems.solve_cache import cached
from qosbound.validation import ns3_runner

__all__ = ["NS3_BE_BAND", "ns3_trace"]


#: ns-3's BE band (packets) for a BE load: the scenario's BE queue is unbounded.
NS3_BE_BAND = 100_000


def _ns3_version() -> str:
    try:
        return importlib.metadata.version("ns3")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"  # run_pq then says so


def _run_pq(cfg: ns3_runner.PqConfig, ns3_version: str):
    """ns-3's run of ``cfg`` (the version in the key: with QOSBOUND_CACHE_DIR set, a run is kept and read back
    for the same configuration, ns-3 wheel and code; ns-3 is deterministic for a given seed)."""
    return ns3_runner.run_pq(cfg)


def ns3_trace(scn: Scenario, ef_packets: int):
    """A per-packet trace of the ns-3 counterpart (``qosbound validate --ns3``), with what it models."""
    p = params(scn)
    cfg = ns3_runner.pq_config_from_params(p, duration=ef_packets / p.lam, seed=int(scn.methods.simulated.seed))
    be = "saturated BE (offered at 1.2 x the link, 64-packet BE band)"
    if not p.be_saturated:
        # the BE load as Poisson packets of the mix, and a BE band large enough to stand for the unbounded queue
        cfg = dataclasses.replace(cfg, be_load=p.rho_be, be_capacity=NS3_BE_BAND)
        be = f"BE offered at {p.rho_be:.4g} of the link, Poisson, BE band of {NS3_BE_BAND} packets"
    (table, info), read_back = cached(_run_pq, cfg, _ns3_version())
    if read_back:
        info = dict(info, cache="read back (QOSBOUND_CACHE_DIR; run_seconds: the original run)")
    info.update(kind="ns-3", device_queue_packets=cfg.device_queue, duration=cfg.duration,
                semantics=f"device queue {cfg.device_queue} packets + 1 on the wire = Q_t {p.Q_t} units of one "
                          f"packet each; {be}")
    return table, info
