"""The ring method's upper bound (models/pq_txq_ring_bound.py): never below the exact chain on small rings (a grid
with large BE packets and high EF shares), the exact chain itself when every stage is one position, never below the
simulator on a big ring, and wired in as ``upper bound`` results that SLOs and admission judge on."""

from __future__ import annotations

import json

import pytest
import yaml

from qosbound.cli import main
from qosbound.models import pq_txq_ring as ring
from qosbound.models import pq_txq_ring_bound as rb
from qosbound.progress import QUIET
from qosbound.results import Kind
from qosbound.scenario import build
from qosbound.systems import pq_txq
from tests.test_pq_txq_ring import FERRARI_BE, IMIX, raw

QS = (0.99, 0.999)

# (EF rate, EF size, BE mix, PQ, link): Ferrari's sizes; EF the size of the smallest BE packet; one large BE size
# (EF most of the departures: the approximation's worst case); IMIX with EF at 40 and 70 % of the link.
GRID = {"ferrari": ("300 kbit/s", 128, FERRARI_BE, 10, "2 Mbps"),
        "ef-as-small-be": ("400 kbit/s", 512, [(512, 0.5), (1536, 0.5)], 8, "2 Mbps"),
        "large-be": ("300 kbit/s", 128, [(1536, 1.0)], 10, "2 Mbps"),
        "imix-ef40": ("4 Mbit/s", 200, IMIX, 12, "10 Mbps"),
        "imix-ef70": ("7 Mbit/s", 200, IMIX, 16, "10 Mbps")}
CASES = [(c, QT, S) for c in GRID for QT, S in ((3, 1), (5, 1), (5, 2))]


def _params(cfg, QT):
    rate, size, be, PQ, link = GRID[cfg]
    return pq_txq.params(build(raw(QT, rate, size, be, PQ, link=link)))


@pytest.mark.parametrize("cfg,QT,S", CASES, ids=[f"{c}-Q{q}-S{s}" for c, q, s in CASES])
def test_the_bound_is_never_below_the_exact_chain(cfg, QT, S):
    """Mean, p99, p99.9 and loss of the MDP bound with S stages against the exact chain (the staged chain with one
    position per stage, itself checked against the PRISM chain in test_pq_txq_ring.py)."""
    p = _params(cfg, QT)
    e = ring.solve(p, [], QS, stages=QT)
    b = rb.solve_bound(p, [], QS, stages=S)
    assert b.stages == S < QT
    assert b.mean >= e.mean * (1 - 1e-9)
    for q in QS:
        assert b.quantiles[q] >= e.quantile_brackets[q][0], (q, b.quantiles[q], e.quantiles[q])
    assert b.loss >= e.loss * (1 - 1e-9) and (e.loss > 1e-9 or cfg.startswith("imix"))


@pytest.mark.parametrize("cfg", ["ferrari", "large-be"])
def test_with_one_position_per_stage_the_bound_is_the_exact_chain(cfg):
    """No choice is left to the adversary: the MDP is the exact chain, and the bound meets it (up to the value
    iteration's stopping bracket and one lattice step)."""
    p = _params(cfg, 4)
    e = ring.solve(p, [], QS, stages=4)
    b = rb.solve_bound(p, [], QS, stages=4)
    assert b.mean == pytest.approx(e.mean, rel=3 * rb.REL_GAP)
    assert b.loss == pytest.approx(e.loss, rel=3 * rb.REL_GAP)
    for q in QS:
        assert e.quantile_brackets[q][0] <= b.quantiles[q] <= e.quantile_brackets[q][1] + 2 * b.slot


def test_more_stages_tighten_the_bound():
    p = _params("large-be", 5)
    m = [rb.solve_bound(p, [], [0.99], stages=S) for S in (1, 2)]
    e = ring.solve(p, [], [0.99], stages=5)
    assert m[0].mean > m[1].mean >= e.mean and m[0].loss > m[1].loss >= e.loss


def _admit_port(tmp_path):
    """A 16-packet ring, PQ 8, on a budget of 300 states: the exact chain is refused, the ring chain takes one
    stage (153 states) and so does the bound."""
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
