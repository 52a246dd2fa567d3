"""The simulator's kernels on EF aggregates: the next arrival of many streams, found in O(1) (calls of one
period, in phase order) or O(log streams) (a heap), is the earliest next arrival of the streams, and the
departures are those of the plain-Python loop of the same semantics (qosbound.validation.pq_txq_reference)."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.scenario import build
from qosbound.systems import pq_txq
from qosbound.validation import pq_txq_sim as sim
from qosbound.validation.pq_txq_reference import reference_departures

BE_IMIX = [{"size": "40 B", "p": 7 / 12}, {"size": "576 B", "p": 4 / 12}, {"size": "1500 B", "p": 1 / 12}]


def params(ef, pq=4):
    return pq_txq.params(build({"name": "k", "system": "pq_txq", "link": {"rate": "2 Mbps"},
                                "txq": {"units": 5, "unit_size": "512 B"}, "pq": {"capacity": pq},
                                "traffic": {"EF": ef, "BE": {"saturated": True, "sizes": BE_IMIX}}}, None))


def check_trace(p, packets: int, seed: int, periods: dict[str, float]):
    """Each stream's packets one period apart, the aggregate in time order, and the reference loop's
    departures for the same arrivals."""
    table = sim.simulate_trace(p, packets, seed)
    flow = np.array(table["flow"].to_pylist())
    cls = np.array(table["cls"].to_pylist())
    arr = table["arrival"].to_numpy()
    dep = table["departure"].to_numpy(zero_copy_only=False).astype(float)
    drop = table["dropped"].to_numpy(zero_copy_only=False)
    size = table["size"].to_numpy()
    is_ef = cls == "EF"
    assert np.all(np.diff(arr[is_ef]) >= 0)
    for name, period in periods.items():
        a = arr[flow == name]
        assert a.size > 5, name
        np.testing.assert_allclose(np.diff(a), period, rtol=0, atol=1e-9)
    be_order = np.lexsort((np.arange(arr.size), arr))
    ef_dep, ef_drop, _ = reference_departures(p, arr[is_ef], size[be_order][~is_ef[be_order]])
    assert np.array_equal(ef_drop, drop[is_ef])
    np.testing.assert_allclose(ef_dep[~ef_drop], dep[is_ef & ~drop], rtol=0, atol=1e-9)
    return drop[is_ef].sum()


def test_calls_of_one_period_arrive_in_phase_order_round_after_round():
    """Identical calls with random phases (the kernel's O(1) path): every call's packets one period apart,
    and a PQ small enough that some are lost, as the reference loop loses them."""
    p = params({"calls": 40, "call": {"rate": "40 kbit/s", "size": "128 B", "arrivals": "cbr"}}, pq=2)
    lost = check_trace(p, 6000, 4, {f"EF.s{i}": 128 * 8 / 40e3 for i in (1, 7, 40)})
    assert lost > 0


@pytest.mark.parametrize("phases", [["0 ms", "12.8 ms", "38.4 ms"], ["1 ms", "1 ms", "0.5 ms"]],
                         ids=["beyond one period", "tied phases"])
def test_streams_of_one_rate_with_given_phases_are_merged_in_time_order(phases):
    """Equal rates with phases beyond one period (the heap's path) or tied: still the earliest arrival first,
    ties to the lower stream index, one period apart each."""
    ef = {"streams": [{"rate": "40 kbit/s", "size": "128 B", "arrivals": "cbr", "phase": ph} for ph in phases]}
    p = params(ef)
    check_trace(p, 3000, 5, {f"EF.s{i + 1}": 128 * 8 / 40e3 for i in range(3)})
    table = sim.simulate_trace(p, 3000, 5)
    flow = np.array(table["flow"].to_pylist())
    first = [f for f in flow if f != "BE"][:3]
    order = sorted(range(3), key=lambda i: (float(phases[i].split()[0]), i))
    if len(set(phases)) == 3:
        assert first == ["EF.s1", "EF.s2", "EF.s1"]  # 0, 12.8 (= s1's second), 25.6 ... s3 starts at 38.4
    else:
        assert first == [f"EF.s{i + 1}" for i in order]


def test_more_replications_reuse_the_ones_just_run():
    """An admission search's sequential looks ask for 4, then 8 replications of the same inputs: the first 4
    are reused, and the 8 are those of one run of 8 (same seeds)."""
    p = params({"calls": 10, "call": {"rate": "40 kbit/s", "size": "128 B", "arrivals": "cbr"}})
    sim._KEPT.clear()
    a = sim.run_replications(p, 5000, 4, 7)
    calls = []
    b = sim.run_replications(p, 5000, 8, 7, advance=calls.append)
    assert calls[0] == 4  # the kept replications count as done at once
    np.testing.assert_array_equal(a.stats, b.stats[:4])
    sim._KEPT.clear()
    c = sim.run_replications(p, 5000, 8, 7)
    np.testing.assert_array_equal(b.stats, c.stats)
    np.testing.assert_array_equal(b.counts, c.counts)
    assert not np.array_equal(c.stats, sim.run_replications(p, 5000, 8, 8).stats)  # another seed: new runs


def _signatures_after(calls_list):
    from qosbound.validation.pq_txq_kernels import simulate_batch

    for n in calls_list:
        p = params({"calls": n, "call": {"rate": "4 kbit/s", "size": "128 B", "arrivals": "cbr"}})
        sim.run_replications(p, 3000, 2, n)
    p = params({"rate": "300 kbit/s", "size": "128 B", "arrivals": "poisson"})
    sim.run_replications(p, 3000, 2, 1)
    return len(simulate_batch.signatures)


def test_every_port_size_runs_the_same_compiled_kernel():
    """An admission search simulates many numbers of calls: the kernel is compiled once (one signature), not per
    evaluation (in a child, as the CLI runs it)."""
    from qosbound.isolate import run_isolated

    assert run_isolated(_signatures_after, [5, 50, 400], what="simulations") == 1
