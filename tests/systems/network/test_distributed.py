"""The replications of one network simulation on Dask equal the serial run's, sample for sample (same seeds)."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.scenario import load
from qosbound.systems.network import network
from qosbound.systems.network.distributed import simulate_on_dask
from qosbound.systems.network.simulated import network_config
from qosbound.validation.network_sim import join, simulate
from tests.helpers import example

distributed = pytest.importorskip("distributed")


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert len(x.delays) == len(y.delays)
        for d, e in zip(x.delays, y.delays):
            np.testing.assert_array_equal(d, e)
        for field in ("sent", "lost", "bytes", "hop_max", "hop_lost"):
            np.testing.assert_array_equal(getattr(x, field), getattr(y, field))
        assert x.window == y.window


def test_replications_run_apart_and_joined_are_the_whole_run():
    """simulate(only=[r]) is the r-th replication of the whole run; joined in order they are the whole run."""
    cfg = network_config(network(load(example("network_wan"))))
    whole, hops = simulate(cfg, 1.0, 3, seed=11)
    parts = [simulate(cfg, 1.0, 3, seed=11, only=[r]) for r in (0, 1, 2)]
    _same(join([p[0] for p in parts]), whole)
    assert sum(p[1] for p in parts) == hops


def test_the_wan_on_a_local_cluster_of_two_workers_equals_the_serial_run():
    cfg = network_config(network(load(example("network_wan"))))
    serial, hops = simulate(cfg, 1.0, 4, seed=3)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        on_dask, hops_dask = simulate_on_dask(cfg, 1.0, 4, seed=3, client=client)
    _same(on_dask, serial)
    assert hops_dask == hops
    assert any(not np.array_equal(on_dask[0].delays[0], d) for d in on_dask[0].delays[1:])  # replications differ
