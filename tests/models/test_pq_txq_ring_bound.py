"""The ring method's upper bound (models/pq_txq_ring_bound.py): never below the exact chain on small rings (a grid
with large BE packets and high EF shares), equal to it where the abstraction keeps the whole pattern, proved
intervals around the exact chain, and wired in as ``upper bound`` results that SLOs and admission judge on."""

from __future__ import annotations

import json

import pytest
import yaml

from qosbound.cli import main
from qosbound.models import pq_txq_ring as ring
from qosbound.models import pq_txq_ring_bound as rb
from qosbound.models import ring_abstraction as ra
from qosbound.models.pq_txq_ring_bound_search import REL
from qosbound.progress import QUIET
from qosbound.results import Kind
from qosbound.scenario import build
from qosbound.systems import pq_txq
from tests.models.test_pq_txq_ring import FERRARI_BE, IMIX, raw

QS = (0.99, 0.999)

# (EF rate, EF size, BE mix, PQ, link): Ferrari's sizes; EF the size of the smallest BE packet; one large BE size
# (EF most of the departures: the approximation's worst case); IMIX with EF at 70 % of the link.
GRID = {"ferrari": ("300 kbit/s", 128, FERRARI_BE, 10, "2 Mbps"),
        "ef-as-small-be": ("400 kbit/s", 512, [(512, 0.5), (1536, 0.5)], 8, "2 Mbps"),
        "large-be": ("300 kbit/s", 128, [(1536, 1.0)], 10, "2 Mbps"),
        "imix-ef70": ("7 Mbit/s", 200, IMIX, 16, "10 Mbps")}
ABSTRACTIONS = {"stages(1)": lambda QT: ra.stages(QT, 1), "front_run": lambda QT: ra.front_run(QT, 1),
                "blocks(2)": lambda QT: ra.blocks(QT, 2)}
CASES = [(c, QT, a) for c in GRID for QT in (4, 6) for a in ABSTRACTIONS]


def _params(cfg, QT):
    rate, size, be, PQ, link = GRID[cfg]
    return pq_txq.params(build(raw(QT, rate, size, be, PQ, link=link)))


@pytest.mark.parametrize("cfg,QT,name", CASES, ids=[f"{c}-Q{q}-{a}" for c, q, a in CASES])
def test_the_bound_is_never_below_the_exact_chain(cfg, QT, name):
    """Mean, p99, p99.9, a CCDF point and loss of every abstraction's bound against the exact chain (the staged
    chain with one position per stage, itself checked against the PRISM chain in test_pq_txq_ring.py)."""
    p = _params(cfg, QT)
    e = ring.solve(p, [0.01], QS, stages=QT)
    b = rb.solve_bound(p, [0.01], QS, only=[(name, lambda: ABSTRACTIONS[name](QT))])
    assert b.decided["mean"] in (name, rb.CAPPED)
    assert b.mean >= e.mean * (1 - 1e-9)
    for q in QS:
        assert b.quantiles[q] >= e.quantile_brackets[q][0], (q, b.quantiles[q], e.quantiles[q])
    assert b.ccdf[0.01] >= e.ccdf_bracket(0.01)[0] - 1e-12
    assert b.loss >= e.loss * (1 - 1e-9) and e.loss > 1e-9


@pytest.mark.parametrize("cfg", ["ferrari", "large-be"])
def test_where_the_abstraction_keeps_the_whole_pattern_the_bound_is_the_exact_chain(cfg):
    """No choice is left to the adversary: the bound meets the exact chain (to the bisection's relative REL and
    one lattice step)."""
    p = _params(cfg, 4)
    e = ring.solve(p, [], QS, stages=4)
    b = rb.solve_bound(p, [], QS, only=[("exact", lambda: ra.exact(4))])
    assert b.mean == pytest.approx(e.mean, rel=1e-9)
    assert b.loss == pytest.approx(e.loss, rel=1e-9)
    for q in QS:
        assert e.quantile_brackets[q][0] <= b.quantiles[q] <= e.quantile_brackets[q][1] * (1 + REL) + b.slot


def test_blocks_and_the_front_run_are_tighter_than_one_stage_where_ef_is_most_of_the_ring():
    """One BE size of 1536 B against EF 128 B: the staged abstraction lets the adversary reorder the whole ring."""
    p = _params("large-be", 6)
    one = rb.solve_bound(p, [], [0.99], only=[("stages(1)", lambda: ra.stages(6, 1))])
    fine = rb.solve_bound(p, [], [0.99], only=[("blocks(2)", lambda: ra.blocks(6, 2))])
    e = ring.solve(p, [], [0.99], stages=6)
    assert one.mean > fine.mean >= e.mean and one.loss > fine.loss >= e.loss


@pytest.mark.parametrize("cfg", ["ferrari", "imix-ef70"])
def test_exact_intervals_hold_the_exact_chain_and_are_narrow(cfg):
    """The intervals proved on the pattern chain hold the staged chain's values (solved independently, by its own
    code) and are narrow: floating-point width for mean and loss, one lattice step for quantiles."""
    p = _params(cfg, 5)
    e = ring.solve(p, [0.01], QS, stages=5)
    iv = rb.exact_intervals(p, [0.01], QS)
    for (lo, hi), v in ((iv.mean, e.mean), (iv.loss, e.loss)):
        assert lo <= v * (1 + 1e-9) and v <= hi * (1 + 1e-9) and hi - lo <= 1e-9 * hi
    for q in QS:
        lo, hi = iv.quantiles[q]
        elo, ehi = e.quantile_brackets[q]
        assert lo <= ehi and elo <= hi and hi - lo <= 2 * e.slot + 1e-12
    lo, hi = iv.ccdf[0.01]
    elo, ehi = e.ccdf_bracket(0.01)
    assert lo <= ehi + 1e-12 and elo <= hi + 1e-12


def test_the_mean_bound_never_exceeds_the_largest_delay_or_the_integral_of_the_quantile_bounds():
    """With a closed-form largest delay given, every bound is capped by it and the mean by the CCDF's integral."""
    p = _params("large-be", 6)
    free = rb.solve_bound(p, [], QS, only=[("stages(1)", lambda: ra.stages(6, 1))])
    dmax = 0.9 * free.quantiles[0.999]
    t = 0.95 * free.quantiles[0.999]  # between the given largest delay and the MDP's own p99.9 bound
    b = rb.solve_bound(p, [t], QS, only=[("stages(1)", lambda: ra.stages(6, 1))], max_delay=dmax)
    assert b.max_delay == dmax and all(v <= dmax for v in b.quantiles.values())
    assert b.ccdf[t] == 0.0 and b.decided[("ccdf", t)] == rb.CLOSED_FORM
    assert b.mean <= min(free.mean, dmax, rb.mean_cap(b.quantiles, b.ccdf, dmax)) * (1 + 1e-12)


def test_the_mean_cap_is_the_integral_of_the_step_ccdf():
    """P(D > s) <= 1 below 2 ms, 0.01 from 2 ms (p99 <= 2 ms), 0.001 from 3 ms (p99.9 <= 3 ms), 0 from 10 ms:
    E[D] <= 2 + 0.01 x 1 + 0.001 x 7 ms; a CCDF point below the quantiles lowers it; a looser quantile bound
    (p90 above the p99 bound) does not raise it."""
    assert rb.mean_cap({0.99: 2e-3, 0.999: 3e-3}, {}, 10e-3) == pytest.approx(2.017e-3, rel=1e-12)
    assert rb.mean_cap({0.99: 2e-3, 0.9: 2.5e-3}, {1e-3: 0.5}, 10e-3) == pytest.approx(
        1e-3 + 0.5e-3 + 0.01 * 8e-3, rel=1e-12)
    assert rb.mean_cap({}, {}, 4e-3) == 4e-3 and rb.mean_cap({0.99: 5e-3}, {}, 4e-3) == 4e-3


def _admit_port(tmp_path):
    """A 16-packet ring, PQ 8, on a budget of 300 states: the exact chain is refused, the ring chain takes one
    stage and the bound is computed."""
    d = raw(16, "10 Mbit/s", 200, IMIX, 8, link="100 Mbps", max_states=300)
    d["methods"]["simulated"] = {"packets": 20_000, "replications": 2, "seed": 5}
    d["slos"] = [{"metric": "EF.loss", "max": 1e-6}]
    path = tmp_path / "port.yaml"
    path.write_text(yaml.safe_dump(d))
    return path, d


def test_admission_searches_on_the_bound_by_default(tmp_path, capsys):
    """Where the bound is computed, admit's default search runs on model-checked and judges the SLO on the bound
    (the metric's own name): at the admitted rate the bound meets the SLO and the approximation is below it."""
    path, d = _admit_port(tmp_path)
    assert main(["admit", str(path), "--vary", "traffic.EF.rate", "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["method"] == "model-checked" and doc["notes"] == [] and doc["binding_slo"] == "EF.loss <= 1e-06"
    d["traffic"]["EF"]["rate"] = doc["value"]
    res = {(r.metric, r.method): r for r in pq_txq.evaluate(build(d), ["model-checked"], QUIET)}
    bound, approx = res[("EF.loss", "model-checked")], res[("EF.approx.loss", "model-checked")]
    assert bound.kind is Kind.UPPER_BOUND and bound.value <= 1e-6 * (1 + 1e-6)
    assert approx.value <= bound.value


def test_on_the_issues_lossy_port_the_mean_bound_is_below_every_quantile_bound_and_the_maximum():
    """Issue 18: 10 Mbit/s, ring 16, PQ 4, EF 40 B at 30 % (about 45 % of EF lost): the previous bound's mean
    (49.7 ms) exceeded its own p99.9 bound and the closed-form maximum delay. Every bound is now the smallest of
    the processes solved and the closed form, and the mean is at most the integral of the proved CCDF."""
    from qosbound.systems.pq_txq.ring_results import closed_form_max

    p = pq_txq.params(build(raw(16, "3 Mbit/s", 40, IMIX, 4, link="10 Mbps")))
    dmax = closed_form_max(p)
    b = rb.solve_bound(p, [], QS, max_delay=dmax)
    assert dmax is not None and b.max_delay <= dmax
    assert b.mean <= b.quantiles[0.99] <= b.quantiles[0.999] <= dmax
    assert b.mean <= rb.mean_cap(b.quantiles, b.ccdf, b.max_delay) * (1 + 1e-12)
    assert 0.3 < b.loss < 1.0
