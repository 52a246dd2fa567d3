"""What a proved bound implies (qosbound/implication.py) and how SLO verdicts use it (qosbound/verdicts.py): each
rule that implies, the ones that must not (a p99 bound says nothing about p99.9; a mean bounds no quantile; an
approximation or an interval proves nothing), and the verdict that names the proof that decided it."""

from __future__ import annotations

import pytest

from qosbound.implication import implied_lower, implied_upper, split_metric
from qosbound.results import Interval, Result
from qosbound.scenario import SLO
from qosbound.verdicts import judge_slo


def up(metric, v, method="closed-form", bounds=()):
    return Result(metric, method, v, "1" if ".ccdf@" in metric else "s", Interval.upper_bound(v), {},
                  bounds=bounds)


def test_metric_names_split_into_delay_and_statistic():
    assert split_metric("EF.delay.p99") == ("EF.delay", "quantile", 0.99)
    assert split_metric("EF.delay.p99.9") == ("EF.delay", "quantile", pytest.approx(0.999))
    assert split_metric("EF.delay.ccdf@10ms") == ("EF.delay", "ccdf", pytest.approx(0.01))
    assert split_metric("EF.delay.max") == ("EF.delay", "max", None)
    assert split_metric("EF.loss") is None


def test_a_max_bound_bounds_the_mean_every_quantile_and_the_ccdf_beyond_it():
    r = up("EF.delay.max", 1.638e-3)
    for m in ("EF.delay.mean", "EF.delay.p50", "EF.delay.p99", "EF.delay.p99.999"):
        assert implied_upper(r, m)[0] == 1.638e-3
    assert implied_upper(r, "EF.delay.ccdf@2ms")[0] == 0.0
    assert implied_upper(r, "EF.delay.ccdf@1ms") is None  # below the bound: no statement
    assert implied_upper(r, "BE.delay.p99") is None  # another delay


def test_a_quantile_bound_bounds_lower_quantiles_only():
    r = up("EF.delay.p99", 3e-3)
    assert implied_upper(r, "EF.delay.p90")[0] == 3e-3
    assert implied_upper(r, "EF.delay.p99.9") is None  # a bound on p99 says nothing about p99.9
    assert implied_upper(r, "EF.delay.max") is None and implied_upper(r, "EF.delay.mean") is None
    assert implied_upper(r, "EF.delay.ccdf@5ms")[0] == pytest.approx(0.01)
    assert implied_upper(r, "EF.delay.ccdf@2ms") is None


def test_a_ccdf_bound_bounds_later_points_and_the_quantiles_it_reaches():
    r = up("EF.delay.ccdf@5ms", 1e-4)
    assert implied_upper(r, "EF.delay.ccdf@8ms")[0] == 1e-4
    assert implied_upper(r, "EF.delay.ccdf@4ms") is None
    assert implied_upper(r, "EF.delay.p99.9")[0] == pytest.approx(5e-3)
    assert implied_upper(r, "EF.delay.p99.999") is None  # 1e-4 > 1e-5


def test_a_mean_bounds_no_quantile_and_estimates_prove_nothing():
    r = up("EF.delay.mean", 1e-3)
    assert all(implied_upper(r, m) is None for m in ("EF.delay.p50", "EF.delay.max", "EF.delay.ccdf@1s"))
    approx = Result("EF.delay.max", "model-checked", 1e-3, "s", Interval.approximation(1e-3, neglects="x"), {})
    ci = Result("EF.delay.max", "simulated", 1e-3, "s", Interval.ci(0.9e-3, 1.1e-3, 0.95), {})
    assert implied_upper(approx, "EF.delay.p99") is None and implied_upper(ci, "EF.delay.p99") is None


def test_a_lower_bound_implies_only_its_own_metric():
    r = Result("EF.delay.max", "simulated", 5e-3, "s", Interval.lower_bound(5e-3), {})
    assert implied_lower(r, "EF.delay.max")[0] == 5e-3
    assert implied_lower(r, "EF.delay.p99") is None


def _sim(metric, v, half=1e-4):
    return Result(metric, "simulated", v, "s", Interval.ci(v - half, v + half, 0.95), {})


def test_a_closed_form_max_below_the_limit_proves_a_p99_slo_whatever_the_simulation_says():
    """The issue's 1 Gbit/s port: the closed-form maximum of 1.638 ms proves EF.delay.p99 <= 2 ms; a simulated
    p99 above the limit (a wrong estimate) does not overturn it, and the detail names the proof."""
    slo = SLO(metric="EF.delay.p99", max="2 ms")
    res = [up("EF.delay.max", 1.638e-3, bounds=("EF.delay.p*", "EF.delay.mean")), _sim("EF.delay.p99", 2.1e-3)]
    (v,) = judge_slo(slo, 2e-3, res, "s")
    assert v.status == "holds" and v.method == "closed-form" and v.value == 1.638e-3
    assert "proved by closed-form EF.delay.max" in v.detail and "simulated" in v.detail
    assert v.result_kind.startswith("proof")


def test_a_proof_verdict_keeps_the_slo_side_it_judged():
    """A verdict decided by a proof says which side of its limit the SLO is (what the HTML page needs to draw
    the limit), like every other verdict: 'max' for a ceiling, 'min' for a floor."""
    res = [up("EF.delay.max", 1.638e-3, bounds=("EF.delay.p*", "EF.delay.mean"))]
    (v,) = judge_slo(SLO(metric="EF.delay.p99", max="2 ms"), 2e-3, res, "s")
    assert v.result_kind.startswith("proof") and v.bound == "max" and v.to_json()["bound"] == "max"
    low = [Result("EF.delay.max", "simulated", 7e-3, "s", Interval.lower_bound(7e-3), {})]
    (w,) = judge_slo(SLO(metric="EF.delay.max", min="6 ms"), 6e-3, low, "s")
    assert w.result_kind.startswith("proof") and w.status == "holds" and w.bound == "min"


def test_without_a_proof_below_the_limit_the_estimates_judge():
    """The max bound above the limit proves nothing: each method's own verdict stands."""
    slo = SLO(metric="EF.delay.p99", max="2 ms")
    res = [up("EF.delay.max", 2.5e-3, bounds=("EF.delay.p*",)), _sim("EF.delay.p99", 1.5e-3)]
    (v,) = judge_slo(slo, 2e-3, res, "s")
    assert v.status == "holds" and v.method == "simulated" and v.result_kind == "95% CI"


def test_a_p99_bound_does_not_decide_a_p999_slo():
    slo = SLO(metric="EF.delay.p99.9", max="2 ms")
    res = [up("EF.delay.p99", 1e-3, method="model-checked"), _sim("EF.delay.p99.9", 2.5e-3)]
    (v,) = judge_slo(slo, 2e-3, res, "s")
    assert v.status == "violated" and v.method == "simulated"


def test_a_lower_bound_above_the_limit_proves_a_violation():
    slo = SLO(metric="EF.delay.max", max="4 ms")
    res = [Result("EF.delay.max", "simulated", 5e-3, "s", Interval.lower_bound(5e-3), {})]
    (v,) = judge_slo(slo, 4e-3, res, "s")
    assert v.status == "violated" and "proved by simulated" in v.detail


def test_contradicting_proofs_both_appear_and_the_slo_fails():
    """An upper bound below the limit and a lower bound above it cannot both be right: both are shown."""
    slo = SLO(metric="EF.delay.max", max="4 ms")
    res = [up("EF.delay.max", 3e-3), Result("EF.delay.max", "simulated", 5e-3, "s", Interval.lower_bound(5e-3), {})]
    vs = judge_slo(slo, 4e-3, res, "s")
    assert sorted(v.status for v in vs) == ["holds", "violated"]


def test_verify_judges_a_p99_slo_by_the_closed_form_maximum(tmp_path, capsys):
    """The issue's 1 Gbit/s port (ring 128, PQ 64, IMIX, EF 200 B at 15 %): the closed-form maximum, 1.638 ms,
    proves EF.delay.p99 <= 2 ms with no model and no simulation; it proves nothing about p99.9 <= 1 ms (above
    it), which stays missing."""
    import json

    import yaml

    from qosbound.cli import main
    from tests.models.test_pq_txq_ring import IMIX, raw

    d = raw(128, "150 Mbit/s", 200, IMIX, 64, link="1 Gbps")
    d["slos"] = [{"metric": "EF.delay.p99", "max": "2 ms"}, {"metric": "EF.delay.p99.9", "max": "1 ms"}]
    path = tmp_path / "port.yaml"
    path.write_text(yaml.safe_dump(d))
    assert main(["verify", str(path), "--methods", "closed-form", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    v = {x["metric"]: x for x in doc["verdicts"] if x["kind"] == "slo"}
    assert v["EF.delay.p99"]["status"] == "holds" and v["EF.delay.p99"]["value"] == pytest.approx(1.6384e-3)
    assert v["EF.delay.p99"]["detail"].startswith("proved by closed-form EF.delay.max")
    assert v["EF.delay.p99.9"]["status"] == "missing"
