"""The CBR-call loss bound (qosbound.analytic.cbr_loss): an upper bound on EF.loss, checked against the
packet simulator on adversarial ports (small PQ, EF large and small against BE, bimodal BE, small rings)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from qosbound.analytic import cbr_loss, ef_bound
from qosbound.systems.pq_txq.closed_form import closed_form_results
from qosbound.isolate import run_isolated
from qosbound.results import Kind
from qosbound.scenario import build
from qosbound.systems.pq_txq import params
from qosbound.validation.pq_txq_sim import S_ARRIVALS, S_LOST, run_replications
from qosbound.validation.stats import t_interval

IMIX = [{"size": "40 B", "p": 0.5833333333333334}, {"size": "576 B", "p": 0.3333333333333333},
        {"size": "1500 B", "p": 0.08333333333333333}]
SMALL = [{"size": "40 B", "p": 1.0}]
BIMODAL = [{"size": "40 B", "p": 0.9}, {"size": "1500 B", "p": 0.1}]


def port(rate, units, unit, pq, calls, call_rate, size, be, **ef):
    return params(build({
        "name": "x", "system": "pq_txq", "link": {"rate": rate}, "txq": {"units": units, "unit_size": unit},
        "pq": {"capacity": pq}, "slos": [],
        "traffic": {"EF": {"calls": calls, "call": {"rate": call_rate, "size": size, "arrivals": "cbr", **ef}},
                    "BE": {"saturated": True, "sizes": be}}}))


def bound(p) -> float:
    (r,) = [r for r in closed_form_results(p) if r.metric == "EF.loss.cbr_bound"]
    assert r.interval.kind is Kind.UPPER_BOUND and r.bounds == ("EF.loss",) and r.method == "closed-form"
    return r.value


#: Ports where the bound is below 1 and the simulator sees loss (or could): name, parameters.
ADVERSARIAL = [
    ("small PQ, 4-packet ring, IMIX", ("10 Mbit/s", 4, "1500 B", 4, 15, "80 kbit/s", "200 B", IMIX)),
    ("small PQ, 4-packet ring, IMIX, fewer calls", ("10 Mbit/s", 4, "1500 B", 4, 10, "80 kbit/s", "200 B", IMIX)),
    ("EF of 1500 B against 40 B best effort", ("10 Mbit/s", 8, "1500 B", 3, 15, "240 kbit/s", "1500 B", SMALL)),
    ("EF of 1500 B against 40 B best effort, loaded", ("10 Mbit/s", 8, "1500 B", 3, 20, "240 kbit/s", "1500 B",
                                                       SMALL)),
    ("bimodal best effort", ("10 Mbit/s", 8, "1500 B", 6, 15, "80 kbit/s", "200 B", BIMODAL)),
    ("512-byte units, EF small", ("2 Mbit/s", 5, "512 B", 3, 4, "64 kbit/s", "200 B", BIMODAL)),
]


@pytest.mark.parametrize("name,args", ADVERSARIAL, ids=[a[0] for a in ADVERSARIAL])
def test_the_bound_is_above_the_simulated_loss(name, args):
    """The simulated loss (mean over 32 replications, each with its own random phases) is never significantly
    above the bound: its 99 % confidence interval starts below it."""
    p = port(*args)
    b = bound(p)
    assert 0 < b < 1, b  # a port where the bound says something
    est = t_interval(run_isolated(_losses, p, what="simulation"), 0.99)  # numba's threads stay in a child
    assert est.low <= b, (name, est.mean, est.low, b)


def _losses(p):
    rep = run_replications(p, 50_000, 32, 5, 0.01, [])
    return rep.stats[:, S_LOST] / rep.stats[:, S_ARRIVALS]


def test_no_loss_when_the_calls_fit_in_the_pq():
    """With no more calls than the PQ holds, no packet can be lost (the derivation's windows shorter than a
    period hold at most one packet per other call): the bound is exactly 0."""
    for n in (1, 3, 8):
        assert bound(port("10 Mbit/s", 8, "1500 B", 8, n, "80 kbit/s", "200 B", IMIX)) == 0.0


def test_the_bound_grows_with_the_calls_and_shrinks_with_the_pq():
    few, many = (bound(port("10 Mbit/s", 4, "1500 B", 4, n, "80 kbit/s", "200 B", IMIX)) for n in (10, 15))
    assert few < many
    small, large = (bound(port("10 Mbit/s", 4, "1500 B", k, 15, "80 kbit/s", "200 B", IMIX)) for k in (4, 8))
    assert large < small


def test_the_one_gigabit_voice_port_is_proved_up_to_about_1600_calls():
    """The shipped 1 Gbit/s example: the bound proves EF.loss <= 1e-5 up to 1661 calls and not at 1662 (the
    admission search's bound-decided answer), far below the simulated boundary (about 10,300 calls)."""
    base = dict(rate="1 Gbit/s", units=128, unit="1500 B", pq=64, call_rate="80 kbit/s", size="200 B", be=IMIX)
    at = {n: bound(port(calls=n, **base)) for n in (1661, 1662)}
    assert at[1661] <= 1e-5 < at[1662]


def test_the_bound_applies_only_to_identical_random_phase_cbr_calls():
    p = port("10 Mbit/s", 4, "1500 B", 4, 10, "80 kbit/s", "200 B", IMIX)
    assert cbr_loss.applies(p)
    assert not cbr_loss.applies(dataclasses.replace(p, ef_streams=((80e3, "cbr", 0.001),) * 10))  # given phases
    assert not cbr_loss.applies(dataclasses.replace(p, ef_streams=((80e3, "poisson", -1.0),) * 10))
    assert not cbr_loss.applies(dataclasses.replace(p, ef_streams=((80e3, "cbr", -1.0), (64e3, "cbr", -1.0))))


def test_any_cut_is_sound_and_the_finest_is_tightest(monkeypatch):
    """Coarsening the cut of [0, x_end] (the module caps the cells) still bounds the loss, never below the
    finest cut's value (each coarse cell's event contains the fine cells' events)."""
    p = port("10 Mbit/s", 4, "1500 B", 4, 15, "80 kbit/s", "200 B", IMIX)
    sizes = np.concatenate([p.be_sizes, [p.ef_size]])
    V = ef_bound.txq_work(p.Q_t, p.unit, p.C, float(sizes.max()), ef_bound.fill_fraction(sizes, p.unit))
    fine, info = cbr_loss.loss_bound(p, V)
    monkeypatch.setattr(cbr_loss, "MAX_CELLS", max(2, info["cells"] // 7))
    coarse, info2 = cbr_loss.loss_bound(p, V)
    assert info2["cells"] < info["cells"] and coarse >= fine
