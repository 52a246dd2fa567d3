"""Every flow's sources drawn in one compiled call (``draw_flows``) are the packets the readable NumPy version
(``network_sim.generate``, per stream, from ``Generator(PCG64(child))``) draws, bit for bit, for every arrival
process and size law, a flow of several streams included; flows not drawn have no packets, and a saturated flow's
reserved rows follow the drawn packets."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.validation.network_sim import (CBR, ON_OFF, POISSON, SATURATED, FlowSpec, NetworkConfig, SourceSpec,
                                             _Run, _source)
from qosbound.validation.network_sources import draw_flows
from qosbound.validation.stats import generator_of, seed_sequences, spawned_words

MIX = ((40.0, 576.0, 1500.0), (0.5833333333333334, 0.3333333333333333, 0.08333333333333333))

STREAMS = {
    "poisson, one size": SourceSpec(POISSON, 2e6, (500.0,), (1.0,)),
    "poisson, a size mix": SourceSpec(POISSON, 60e6, *MIX),
    "poisson, exponential sizes": SourceSpec(POISSON, 3e6, (700.0,), (1.0,), exponential=True),
    "poisson, sparse": SourceSpec(POISSON, 1e3, (1000.0,), (1.0,)),
    "cbr, one call": SourceSpec(CBR, 400e3, (500.0,), (1.0,)),
    "cbr, a given phase": SourceSpec(CBR, 100e3, (125.0,), (1.0,), phase=0.0005),
    "cbr, 37 calls": SourceSpec(CBR, 80e3, (200.0,), (1.0,), count=37),
    "cbr, 5 calls at one phase": SourceSpec(CBR, 80e3, (200.0,), (1.0,), count=5, phase=0.001),
    "cbr, 3 calls of two sizes": SourceSpec(CBR, 80e3, (200.0, 1000.0), (0.5, 0.5), count=3),
    "on-off": SourceSpec(ON_OFF, 1e6, (1200.0,), (1.0,), on=0.02, off=0.03),
    "on-off, a size mix": SourceSpec(ON_OFF, 3e6, *MIX, on=0.05, off=0.05),
}


def _config(flows):
    return NetworkConfig([], np.zeros(0), [FlowSpec((0,), (0,), (0,), tuple(f), any(s.kind == SATURATED for s in f))
                                           for f in flows])


def _drawn(net, H, words, keep=None, reserve=None, room=16):
    """``draw_flows`` on the source tables the simulator builds (a configuration without ports)."""
    F = len(net.flows)
    tables = _Run.of(net, H, keep, None).sources
    reserve = np.zeros(F, np.int64) if reserve is None else reserve
    return draw_flows(words[:F], *tables, H, reserve, np.empty(room), np.empty(room), np.empty(room))


@pytest.mark.parametrize("name", sorted(STREAMS))
@pytest.mark.parametrize("H", [0.7, 3.0])
def test_each_arrival_process_is_drawn_as_numpy_draws_it(name, H):
    """One flow of one stream: the same times and sizes as ``generate`` from the same child's Generator."""
    net = _config([[STREAMS[name]]])
    for w in spawned_words(seed_sequences(11, 1)[0], 4):
        T, Z, TC, start, n = _drawn(net, H, w[None, :])
        want_t, want_z = _source(generator_of(w), net.flows[0], H)
        assert n[0] > 0 or name == "poisson, sparse"
        np.testing.assert_array_equal(T[start[0]:start[0] + n[0]], want_t)
        np.testing.assert_array_equal(Z[start[0]:start[0] + n[0]], want_z)
        np.testing.assert_array_equal(TC[:n[0]], want_t)


def test_many_flows_of_several_streams_are_drawn_each_from_its_own_child():
    """Eight flows, some of two or three streams (merged in time order by a stable sort), one saturated (no draws,
    its reserved rows after the others), one left out: each drawn flow as NumPy draws it from its own child; the
    arrays grown from 16 rows."""
    names = sorted(STREAMS)
    flows = [[STREAMS[names[i]], STREAMS[names[(i + 3) % len(names)]]][:1 + i % 2] for i in range(6)]
    flows.append([STREAMS["cbr, one call"], STREAMS["poisson, a size mix"], STREAMS["on-off"]])
    flows.append([SourceSpec(SATURATED, 0.0, (1500.0,), (1.0,))])
    net = _config(flows)
    words = spawned_words(seed_sequences(5, 1)[0], len(flows))
    keep = [k for k in range(len(flows)) if k != 2]
    reserve = np.zeros(len(flows), np.int64)
    reserve[7] = 100
    T, Z, TC, start, n = _drawn(net, 2.0, words, keep, reserve)
    for k, f in enumerate(net.flows):
        if k == 2 or f.saturated:
            assert n[k] == 0
            continue
        want_t, want_z = _source(generator_of(words[k]), f, 2.0)
        np.testing.assert_array_equal(T[start[k]:start[k] + n[k]], want_t)
        np.testing.assert_array_equal(Z[start[k]:start[k] + n[k]], want_z)
    drawn = int(n.sum())
    assert start[7] == drawn and T.shape[0] >= drawn + 100
