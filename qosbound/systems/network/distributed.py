"""The replications of one network simulation on Dask: each replication one task, run on a local cluster of
``workers`` processes, a cluster at ``scheduler`` or an open client, by the sweep's Dask runner
(:func:`qosbound.sweep.execute.run_dask`).

Replication ``r`` is the run the serial :func:`qosbound.validation.network_sim.simulate` makes as its ``r``-th:
its own seed sequence, the ``r``-th spawned from the scenario's seed, drives every draw, so what it gives equals
the serial run's exactly, whatever the number of workers or the order they finish in.

* :func:`estimates_on_dask` (what ``plan --workers N`` / ``--scheduler ADDRESS`` runs, through
  :func:`replications_on`): each task reduces its replication to the values the estimates are formed from
  (:mod:`.estimates`: per flow ``5 + Q`` numbers, four counts and two per-hop rows) before it returns, so a task
  sends back O(flows x statistics) bytes whatever its packets; the results equal the serial run's.
* :func:`simulate_on_dask`: each task sends back its samples whole (every counted packet's delay: 56 MB pickled
  for the WAN example's 200 s replication), the serial :func:`~qosbound.validation.network_sim.simulate`'s
  result exactly; for callers that need the delays themselves.

Independent sub-networks (:func:`~qosbound.validation.network_sim.components`: ports linked by flows) of one
replication are tasks of their own: each flow and port draws from its own generator, so a sub-network simulated
alone gives its flows the whole run's samples. What it does not split: one sub-network's replication is one task
in one process, holding all its packets in memory (about 120 bytes per packet and hop).
"""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from dataclasses import dataclass

from qosbound.errors import ScenarioError
from qosbound.progress import QUIET
from qosbound.sweep.cache import Cache
from qosbound.sweep.execute import run_dask
from qosbound.systems.network.estimates import FlowEstimates, join_estimates, reduce_samples
from qosbound.validation.network_sim import FlowSample, NetworkConfig, components, join, simulate

__all__ = ["Executor", "dask_installed", "estimates_on_dask", "executor", "replication_record", "replications_on",
           "simulate_on_dask"]


@dataclass(frozen=True)
class Executor:
    """Where a run's network replications go: a local cluster of ``workers`` processes, or the cluster at
    ``scheduler``; set in process ``pid``, which had (``dask_loaded``) or had not imported Dask's distributed."""

    workers: int = 2
    scheduler: str | None = None
    pid: int = 0
    dask_loaded: bool = False

    def check(self) -> None:
        """Refuse to start Dask in a child forked from a process that had loaded it: the child inherits
        distributed's thread pools without their threads, and its tasks' results never arrive (a hang). ``plan``'s
        own process does not load it before its evaluation forks; a program that used Dask itself and then calls
        ``plan`` in process meets this."""
        if self.dask_loaded and os.getpid() != self.pid:
            raise ScenarioError("Dask's distributed was loaded in this process before plan's evaluation was forked "
                                "from it (a forked Dask client hangs): run qosbound plan in a process of its own",
                                field="--scheduler" if self.scheduler else "--workers")


_current: list[Executor] = []


@contextlib.contextmanager
def replications_on(workers: int, scheduler: str | None):
    """Within the block, the network simulations this process runs (or a child it forks: ``plan`` evaluates in
    a forked child) send their replications to Dask (:class:`Executor`)."""
    _current.append(Executor(workers, scheduler, os.getpid(), "distributed" in sys.modules))
    try:
        yield _current[-1]
    finally:
        _current.pop()


def executor() -> Executor | None:
    """The executor :func:`replications_on` set, or None (serial)."""
    return _current[-1] if _current else None


def dask_installed() -> bool:
    """Whether Dask's distributed scheduler can be imported."""
    try:
        import distributed  # noqa: F401 - optional (the dask extra): is it installed?
    except ImportError:
        return False
    return True


class _Counting:
    """The runner's view of a progress: its counted task and its ticks, not its partial records (a replication's
    record is no part of the run's partial report)."""

    def __init__(self, progress):
        self._progress = progress

    def task(self, label, total):
        return self._progress.task(label, total)

    def tick(self):
        tick = getattr(self._progress, "tick", None)
        if tick is not None:
            tick()


def replication_record(task: tuple, path=None, methods=()) -> dict:
    """One replication of one sub-network (the runner's ``evaluate(raw, path, methods)``; the task in place of a
    raw scenario): its flows' samples whole, or (``quantiles`` given) reduced to their estimates here."""
    net, H, replications, seed, warmup, cooldown, r, quantiles, flows = task
    samples, hops = simulate(net, H, replications, seed, warmup, cooldown, only=[r], flows=flows)
    if flows is not None:
        samples = [samples[k] for k in flows]
    if quantiles is None:
        return {"status": "ok", "samples": samples, "hops": hops}
    return {"status": "ok", "estimates": reduce_samples(samples, quantiles), "hops": hops}


def _run(net, H, replications, seed, warmup, cooldown, quantiles, workers, scheduler, client, progress, what, key):
    """Every (replication, sub-network) as one task; per replication, every flow's part (``key`` of a record:
    its list of per-flow parts), in flow order, and the packet-hops."""
    groups = components(net)
    parts = [None] if len(groups) == 1 else groups  # one sub-network: the whole network, as the serial run
    # keys of this run alone: a cluster (or client) shared by several runs would hand back another run's result
    # for a key it still holds
    run_id = uuid.uuid4().hex[:12]
    tasks = [(f"replication-{run_id}-{r}-{c}", (net, H, replications, seed, warmup, cooldown, r, quantiles, flows))
             for r in range(replications) for c, flows in enumerate(parts)]
    n = f"{replications} x {len(parts)} sub-networks" if len(parts) > 1 else f"{replications}"
    recs = run_dask(tasks, None, [], Cache(None), _Counting(progress), workers=workers, scheduler=scheduler,
                    client=client, evaluate=replication_record,
                    label=f"network simulation: {n} x {H:g} s on Dask ({what})")
    per_rep, hops = [], 0
    for r in range(replications):
        flow_parts = [None] * len(net.flows)
        for c, flows in enumerate(parts):
            rec = recs[f"replication-{run_id}-{r}-{c}"]
            hops += rec["hops"]
            for k, part in zip(range(len(net.flows)) if flows is None else flows, rec[key]):
                flow_parts[k] = part
        per_rep.append(flow_parts)
    return per_rep, hops


def estimates_on_dask(net: NetworkConfig, H: float, replications: int, seed: int, warmup: float = 0.05,
                      cooldown: float = 0.05, *, quantiles, workers: int = 2, scheduler: str | None = None, client=None,
                      progress=QUIET) -> tuple[list[FlowEstimates], int]:
    """Per flow its replications' estimates (:func:`.estimates.reduce_samples` of the serial run's samples, each
    replication reduced on its worker) and the packet-hops simulated."""
    per_rep, hops = _run(net, H, replications, seed, warmup, cooldown, tuple(quantiles), workers, scheduler, client,
                         progress, "estimates reduced on the workers", "estimates")
    return join_estimates(per_rep), hops


def simulate_on_dask(net: NetworkConfig, H: float, replications: int, seed: int, warmup: float = 0.05,
                     cooldown: float = 0.05, *, workers: int = 2, scheduler: str | None = None, client=None,
                     progress=QUIET) -> tuple[list[FlowSample], int]:
    """:func:`~qosbound.validation.network_sim.simulate`'s result, its replications run as Dask tasks (module
    docstring): per flow its sample (replications in index order) and the packet-hops simulated."""
    per_rep, hops = _run(net, H, replications, seed, warmup, cooldown, None, workers, scheduler, client, progress,
                         "every delay sent back", "samples")
    return join(per_rep), hops
