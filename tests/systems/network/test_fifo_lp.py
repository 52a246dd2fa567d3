"""FIFO-LP (qosbound.systems.network.fifo_lp): the known exact results it reaches (one FIFO hop: the aggregate's own
bound; a flow alone on a tandem: pay bursts only once), never above SFA, and at or above the simulated maxima on a
tandem, a sink tree and random meshes (the network bounds' tests check every analysis; here the ones it wins)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from qosbound.analytic.network_curves import (R, T, b_x, fifo_residual_latency_expr, fifo_theta_latency_expr, r_x,
                                              sfa_delay, t, theta)
from qosbound.scenario import build
from qosbound.systems.network import network
from qosbound.systems.network.bounds import analyse
from qosbound.systems.network.fifo_lp import MAX_HOPS, LPPath, bound_at, solve
from qosbound.systems.network.generate import random_network, tandem
from qosbound.systems.network.simulated import network_config
from qosbound.validation.network_sim import simulate


def test_the_residual_family_is_a_delay_and_a_rate_latency_curve():
    """For theta >= T + 8 b_x / R the FIFO residual beyond theta is (R - r_x)(t - T'(theta)), and at the least theta
    T' is SFA's residual latency."""
    assert sp.simplify((R * (t - T) - 8 * b_x - r_x * (t - theta)) - (R - r_x) * (t - fifo_theta_latency_expr)) == 0
    assert sp.simplify(fifo_theta_latency_expr.subs(theta, T + 8 * b_x / R) - fifo_residual_latency_expr) == 0


def test_one_fifo_hop_is_the_aggregates_own_bound():
    """One hop: min over theta is T + 8 (b_x + e) / R -- the bound of the FIFO aggregate (Le Boudec & Thiran 2001,
    Theorem 1.4.2), which is exact for a rate-latency server -- below SFA's T + 8 b_x / R + 8 e / (R - r_x)."""
    p = LPPath((10e6,), (1e-3,), (2000.0,), (2e6,), (1000.0,), 200.0)
    (got, th), = solve([p])
    assert got == pytest.approx(1e-3 + 8 * 3000 / 10e6, rel=1e-9)
    assert th[0] == pytest.approx(got, rel=1e-9)
    sfa = 1e-3 + 8 * 2000 / 10e6 + 8 * 1000 / 8e6
    assert got < sfa


def test_a_flow_alone_pays_its_burst_once():
    """No cross traffic: the known tight bound sum T + 8 (e + (K - 1) L) / min R (pay bursts only once, with a
    packet per packetizer), SFA's, whatever theta."""
    p = LPPath((10e6, 5e6, 20e6), (1e-3, 2e-3, 0.5e-3), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (2000.0,) * 3, 200.0)
    (got, _), = solve([p])
    assert got == pytest.approx(sfa_delay(3.5e-3, 2000.0, 5e6, 3, 200.0), rel=1e-9)


def test_the_programme_never_ends_above_its_start_and_its_bound_is_recomputed():
    """On random paths: the bound at the solver's theta is B(theta) recomputed, at most B(theta0), which is at most
    SFA's bound."""
    rng = np.random.default_rng(3)
    paths = []
    for _ in range(40):
        K = int(rng.integers(1, 6))
        Rr = rng.uniform(5e6, 100e6, K)
        rx = Rr * rng.uniform(0.0, 0.6, K)
        paths.append(LPPath(tuple(Rr), tuple(rng.uniform(0, 3e-3, K)), tuple(rng.uniform(0, 2e4, K)), tuple(rx),
                            (1500.0,) * K, 1500.0))
    for p, (got, th) in zip(paths, solve(paths)):
        assert got == bound_at(p, th)
        assert np.all(th >= p.theta0())
        at0 = bound_at(p, p.theta0())
        assert got <= at0
        Rmin = min(a - c for a, c in zip(p.rate, p.cross_rate))
        assert at0 <= sfa_delay(float(p.theta0().sum()), 1500.0, Rmin, p.hops, 1500.0) * (1 + 1e-12)


def test_a_long_path_is_left_to_tfa_and_sfa_and_says_why():
    nb = analyse(network(build(tandem(MAX_HOPS + 1, ring=0))))
    fb = nb.flows["v"]
    assert math.isinf(fb.lp) and fb.why_lp == f"the path has {MAX_HOPS + 1} hops, more than {MAX_HOPS}"
    assert math.isfinite(fb.sfa)


@pytest.mark.parametrize("seed", [4, 6])
def test_where_fifo_lp_is_the_answer_it_is_above_the_simulated_maximum(seed):
    """Random meshes: every flow's FIFO-LP bound at or above its simulated maximum; on these it is the answer for
    some flows."""
    raw = random_network(5, 3, 80, seed=seed, rates=(10e6, 100e6), load=0.85, ring=8)
    net = network(build(raw))
    nb = analyse(net)
    samples, _ = simulate(network_config(net), 3.0, 2, seed)
    won = 0
    for f in net.flows:
        fb = nb.flows[f.name]
        mx = max(float(d.max()) for d in samples[f.index].delays if d.shape[0])
        if math.isfinite(fb.lp):
            assert mx <= fb.lp, (f.name, mx, fb.lp)
            assert fb.lp <= fb.sfa * (1 + 1e-9)
        won += fb.analysis == "FIFO-LP"
    assert won > 0
