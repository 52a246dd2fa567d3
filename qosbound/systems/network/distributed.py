"""The replications of one network simulation on Dask: each replication one task, run on a local cluster of
``workers`` processes, a cluster at ``scheduler`` or an open client, by the sweep's Dask runner
(:func:`qosbound.sweep.execute.run_dask`).

Replication ``r`` is the run the serial :func:`qosbound.validation.network_sim.simulate` makes as its ``r``-th:
its own seed sequence, the ``r``-th spawned from the scenario's seed, drives every draw, so the joined samples
equal the serial run's exactly, whatever the number of workers or the order they finish in. What it does not
split: one replication is one task in one process, holding all its packets in memory (about 100 bytes per
packet and hop); independent sub-networks of one replication are not separated.
"""

from __future__ import annotations

from qosbound.progress import QUIET
from qosbound.sweep.cache import Cache
from qosbound.sweep.execute import run_dask
from qosbound.validation.network_sim import FlowSample, NetworkConfig, join, simulate

__all__ = ["simulate_on_dask"]


def _replication(task: tuple, path, methods) -> dict:
    """One replication (the runner's ``evaluate(raw, path, methods)``; the task in place of a raw scenario)."""
    net, H, replications, seed, warmup, cooldown, r = task
    samples, hops = simulate(net, H, replications, seed, warmup, cooldown, only=[r])
    return {"status": "ok", "samples": samples, "hops": hops}


def simulate_on_dask(net: NetworkConfig, H: float, replications: int, seed: int, warmup: float = 0.05,
                     cooldown: float = 0.05, *, workers: int = 2, scheduler: str | None = None, client=None,
                     progress=QUIET) -> tuple[list[FlowSample], int]:
    """:func:`~qosbound.validation.network_sim.simulate`'s result, its replications run as Dask tasks (module
    docstring): per flow its sample (replications in index order) and the packet-hops simulated."""
    tasks = [(f"replication-{r}", (net, H, replications, seed, warmup, cooldown, r)) for r in range(replications)]
    recs = run_dask(tasks, None, [], Cache(None), progress, workers=workers, scheduler=scheduler, client=client,
                    evaluate=_replication, label=f"network simulation: {replications} replications on Dask")
    parts = [recs[f"replication-{r}"] for r in range(replications)]
    return join([p["samples"] for p in parts]), sum(p["hops"] for p in parts)
