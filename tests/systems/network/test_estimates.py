"""A replication reduced to what the estimates need: the same values the samples give, row r of the whole run's
reduction when run alone, and the simulated results formed from them alone."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.scenario import load
from qosbound.systems.network import network
from qosbound.systems.network.estimates import join_estimates, reduce_samples
from qosbound.systems.network.simulated import network_config, results
from qosbound.validation.network_sim import simulate
from tests.helpers import example

QS = (0.5, 0.99, 0.999)


@pytest.fixture(scope="module")
def wan():
    net = network(load(example("network_wan")))
    cfg = network_config(net)
    samples, hops = simulate(cfg, 1.0, 3, seed=5)
    return net, cfg, samples, hops


def test_each_row_is_its_replications_sample_statistics(wan):
    net, _, samples, _ = wan
    for f, s, e in zip(net.flows, samples, reduce_samples(samples, QS)):
        for r, d in enumerate(s.delays):
            assert e.delivered[r] == d.shape[0]
            if f.saturated or d.shape[0] == 0:
                continue
            assert e.mean[r] == d.mean() and e.max[r] == d.max() and e.jitter[r] == d.max() - d.min()
            assert list(e.quantile[r]) == [np.quantile(d, q) for q in QS]
        np.testing.assert_array_equal(e.sent, s.sent)
        np.testing.assert_array_equal(e.lost, s.lost)
        np.testing.assert_array_equal(e.hop_max, s.hop_max)
        np.testing.assert_array_equal(e.hop_lost, s.hop_lost)


def test_replications_reduced_apart_and_joined_are_the_whole_runs_reduction(wan):
    _, cfg, samples, _ = wan
    whole = reduce_samples(samples, QS)
    parts = join_estimates([reduce_samples(simulate(cfg, 1.0, 3, seed=5, only=[r])[0], QS) for r in (0, 1, 2)])
    for a, b in zip(whole, parts):
        for field in ("delivered", "mean", "quantile", "jitter", "max", "sent", "lost", "bytes", "hop_max",
                      "hop_lost"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_a_replication_that_delivered_nothing_has_no_delay_values(wan):
    _, _, samples, _ = wan
    s = samples[0]
    empty = type(s)([d[:0] for d in s.delays], s.sent, s.lost, s.bytes, s.hop_max, s.window, s.hop_lost)
    e = reduce_samples([empty], QS)[0]
    assert (e.delivered == 0).all() and np.isnan(e.mean).all() and np.isnan(e.quantile).all()


def test_the_results_need_only_the_reduction(wan):
    """The figures plan reports come from the per-replication values: the mean's estimate is their mean, the
    maximum their largest, the loss's events the summed counts."""
    net, _, samples, hops = wan
    opts = load(example("network_wan")).methods.simulated.model_copy(update={"replications": 3, "duration": 1.0,
                                                                           "seed": 5})
    est = reduce_samples(samples, QS)
    out = {r.metric: r for r in results(net, est, hops, opts, list(QS))}
    v = next(k for k, f in enumerate(net.flows) if f.name == "voip-ab")
    assert out["voip-ab.delay.mean"].value == pytest.approx(np.mean([d.mean() for d in samples[v].delays]), rel=1e-12)
    assert out["voip-ab.delay.max"].value == max(d.max() for d in samples[v].delays)
    assert out["voip-ab.loss"].provenance["trials"] == int(samples[v].sent.sum())
    assert out["voip-ab.delay.p99.9"].provenance["packet_hops"] == hops
