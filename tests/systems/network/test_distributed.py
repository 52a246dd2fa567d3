"""The replications of one network simulation on Dask equal the serial run's, sample for sample (same seeds), and
reduced on the workers, value for value."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from qosbound.scenario import build, load
from qosbound.systems.network import network
from qosbound.systems.network.distributed import replication_record, estimates_on_dask, simulate_on_dask
from qosbound.systems.network.estimates import reduce_samples
from qosbound.systems.network.simulated import network_config
from qosbound.validation.network_sim import components, join, simulate
from tests.helpers import example
from tests.systems.network.sub_networks import two_wans

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


def _same_estimates(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for field in ("delivered", "mean", "quantile", "jitter", "max", "sent", "lost", "bytes", "hop_max",
                      "hop_lost"):
            np.testing.assert_array_equal(getattr(x, field), getattr(y, field))
        assert (x.window, x.quantiles) == (y.window, y.quantiles)


def test_estimates_reduced_on_two_workers_equal_the_serial_runs_reduction():
    """Each task returns its replication reduced (no delays): joined, the serial run's reduction exactly."""
    cfg = network_config(network(load(example("network_wan"))))
    qs = (0.5, 0.99, 0.999)
    serial, hops = simulate(cfg, 1.0, 4, seed=3)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        on_dask, hops_dask = estimates_on_dask(cfg, 1.0, 4, seed=3, quantiles=qs, client=client)
    _same_estimates(on_dask, reduce_samples(serial, qs))
    assert hops_dask == hops
    assert len(set(on_dask[0].quantile[:, 1])) > 1  # replications differ


def test_a_reduced_task_sends_back_o_flows_not_o_packets():
    """One replication's record: its estimates pickle to a few kB, its samples to 8 bytes per delivered packet."""
    cfg = network_config(network(load(example("network_wan"))))
    task = (cfg, 2.0, 4, 3, 0.05, 0.05, 1, None, None)
    whole = replication_record(task)
    reduced = replication_record(task[:7] + ((0.5, 0.99, 0.999), None))
    delivered = sum(d.shape[0] for s in whole["samples"] for d in s.delays)
    assert delivered > 10_000
    assert len(pickle.dumps(whole)) > 8 * delivered
    assert len(pickle.dumps(reduced)) < 5_000
    assert "samples" not in reduced and reduced["hops"] == whole["hops"]


def test_runs_sharing_one_client_each_get_their_own_replications():
    """Two runs on one client (different seeds, then the samples after the reductions) never hand one run the
    other's records: each run's task keys are its own."""
    cfg = network_config(network(load(example("network_wan"))))
    qs = (0.5,)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        a, _ = estimates_on_dask(cfg, 0.5, 2, seed=1, quantiles=qs, client=client)
        b, _ = estimates_on_dask(cfg, 0.5, 2, seed=2, quantiles=qs, client=client)
        samples, _ = simulate_on_dask(cfg, 0.5, 2, seed=2, client=client)
    _same_estimates(a, reduce_samples(simulate(cfg, 0.5, 2, seed=1)[0], qs))
    _same_estimates(b, reduce_samples(simulate(cfg, 0.5, 2, seed=2)[0], qs))
    _same(samples, simulate(cfg, 0.5, 2, seed=2)[0])


def test_independent_sub_networks_as_tasks_of_their_own_equal_the_serial_run():
    """Two WANs side by side: each (replication, sub-network) one task; joined, the serial run of the whole."""
    cfg = network_config(network(build(two_wans())))
    assert len(components(cfg)) == 2
    qs = (0.5, 0.999)
    serial, hops = simulate(cfg, 1.0, 3, seed=4)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        samples, hops_s = simulate_on_dask(cfg, 1.0, 3, seed=4, client=client)
        est, hops_e = estimates_on_dask(cfg, 1.0, 3, seed=4, quantiles=qs, client=client)
    _same(samples, serial)
    _same_estimates(est, reduce_samples(serial, qs))
    assert hops_s == hops_e == hops
