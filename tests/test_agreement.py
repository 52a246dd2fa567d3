"""The one agreement rule: every pair of methods on a metric is compared according to what kind of number each is."""

from __future__ import annotations

import json

import pytest
import yaml

from qosbound.agreement import agreements
from qosbound.cli import main
from qosbound.results import Interval, Kind, Result
from qosbound.scenario import load_raw
from qosbound.verdicts import EXIT_DISAGREE, EXIT_OK, EXIT_SLO, exit_code
from tests.helpers import ROOT


def R(metric, method, value, iv, bounds=()):
    return Result(metric, method, value, "s", iv, {}, bounds)


def test_a_result_outside_its_own_interval_is_refused():
    """An interval that does not contain its estimate (e.g. capped at 1) is an internal error, not a number."""
    with pytest.raises(ValueError, match="empty"):
        Interval.ci(13.07, 1.0, 0.95)
    with pytest.raises(ValueError, match="outside its own"):
        R("AF3.queue.mean", "simulated", 13.5, Interval.ci(12.0, 13.0, 0.95))


def test_every_interval_has_one_kind():
    assert Interval.exact(1.0).kind is Kind.EXACT
    assert Interval.numerical(0.9, 1.1).kind is Kind.NUMERICAL
    assert Interval.upper_bound(2.0).is_bound
    assert Interval.ci(0.9, 1.1, 0.95).label() == "95% CI"
    with pytest.raises(ValueError, match="neglects"):
        Interval.approximation(1.0, "")
    with pytest.raises(ValueError, match="level"):
        Interval(0.0, 1.0, Kind.CI)


def test_bound_exceeded_by_a_simulated_lower_limit_disagrees():
    b = R("EF.delay.max", "closed-form", 10e-3, Interval.upper_bound(10e-3), bounds=("EF.delay.p*",))
    sim_ok = R("EF.delay.p99", "simulated", 9e-3, Interval.ci(8.9e-3, 9.1e-3, 0.95, se=0.05e-3, dof=7))
    sim_bad = R("EF.delay.p99.9", "simulated", 12e-3, Interval.ci(11.9e-3, 12.1e-3, 0.95, se=0.05e-3, dof=7))
    v = {x.metric: x for x in agreements([b, sim_ok, sim_bad])}
    assert v["EF.delay.p99"].status == "agree"
    assert v["EF.delay.p99.9"].status == "disagree"
    assert exit_code(list(v.values())) == EXIT_DISAGREE


def test_bound_is_compared_with_the_credible_low_end_not_the_point():
    """A simulated estimate just above an upper bound is consistent when its lower confidence limit is below it."""
    b = R("EF.delay.mean", "closed-form", 10.0, Interval.upper_bound(10.0))
    s = R("EF.delay.mean", "simulated", 10.01, Interval.ci(9.99, 10.03, 0.95, se=0.01, dof=7))
    (v,) = agreements([b, s])
    assert v.status == "agree"


def test_numerical_value_inside_family_wise_interval_agrees_and_far_outside_disagrees():
    m = R("x", "model-checked", 1.0, Interval.numerical(1.0 - 1e-9, 1.0 + 1e-9))
    close = R("x", "simulated", 1.01, Interval.ci(0.99, 1.03, 0.95, se=0.01, dof=7))
    far = R("x", "ns-3", 1.2, Interval.ci(1.18, 1.22, 0.95, se=0.01, dof=7))
    v = {x.method: x for x in agreements([m, close, far])}
    assert v["simulated vs model-checked"].status == "agree"
    assert v["ns-3 vs model-checked"].status == "disagree"
    assert (v.get("simulated vs ns-3") or v["ns-3 vs simulated"]).status == "disagree"


def test_family_wise_level_widens_with_the_number_of_checks():
    """Bonferroni: a 3.5-standard-error gap disagrees alone but agrees as one of 100 checks at 99 %."""
    m = [R(f"m{i}", "model-checked", 0.0, Interval.exact(0.0)) for i in range(100)]
    s = [R(f"m{i}", "simulated", 3.5 if i == 0 else 0.0, Interval.ci(-1.0, 4.5, 0.95, se=1.0, dof=1000))
         for i in range(100)]
    alone = agreements([m[0], s[0]])
    many = [v for v in agreements(m + s) if v.metric == "m0"]
    assert alone[0].status == "disagree" and many[0].status == "agree"


def test_exact_values_that_differ_disagree():
    a = R("x", "closed-form", 1.0, Interval.exact(1.0))
    b = R("x", "model-checked", 1.001, Interval.numerical(1.0009, 1.0011))
    (v,) = agreements([a, b])
    assert v.status == "disagree"


def test_an_approximation_gap_is_reported_not_failed():
    a = R("AF1.drop", "closed-form", 0.286, Interval.approximation(0.286, "EWMA dynamics"))
    s = R("AF1.drop", "simulated", 0.170, Interval.ci(0.168, 0.172, 0.95, se=0.001, dof=7))
    (v,) = agreements([a, s])
    assert v.status == "approximate" and "EWMA dynamics" in v.detail
    assert exit_code([v]) == EXIT_OK


def test_an_slo_failure_outranks_a_disagreement():
    from qosbound.results import Verdict

    slo = Verdict("slo", "x <= 1", "x", "simulated", "violated")
    dis = Verdict("agreement", "a agrees with b", "x", "a vs b", "disagree")
    assert exit_code([slo, dis]) == EXIT_SLO
    assert not dis.failed and dis.disagrees


def test_a_result_named_differently_is_compared_with_the_metric_it_estimates():
    """Cobham's mean (EF.delay.cobham_mean) estimates EF.delay.mean: it is compared with the model's mean, as an
    approximation (a gap is 'approximate', never 'disagree'), and the verdict names both metrics."""
    cob = Result("EF.delay.cobham_mean", "closed-form", 7.96e-3, "s",
                 Interval.approximation(7.96e-3, "the PQ capacity"), {}, estimates="EF.delay.mean")
    m = R("EF.delay.mean", "model-checked", 7.876e-3, Interval.numerical(7.8759e-3, 7.8761e-3))
    (v,) = agreements([cob, m])
    assert v.metric == "EF.delay.mean" and v.status == "approximate"
    assert "EF.delay.cobham_mean" in v.name and "the PQ capacity" in v.detail and "µs" in v.detail
    with pytest.raises(ValueError, match="bounds"):
        Result("x.max", "closed-form", 1.0, "s", Interval.upper_bound(1.0), estimates="x.mean")


def test_two_bounds_from_one_side_give_no_verdict_and_crossing_bounds_disagree():
    a = R("m", "closed-form", 2.0, Interval.upper_bound(2.0))
    b = R("m", "model-checked", 1.5, Interval.upper_bound(1.5))
    assert agreements([a, b]) == []
    low = R("m", "simulated", 2.5, Interval.lower_bound(2.5))
    v = {x.method: x for x in agreements([a, b, low])}
    assert v["closed-form vs simulated"].status == "disagree" and v["model-checked vs simulated"].status == "disagree"


# `qosbound plan` on every shipped example: every metric computed by two or more methods gets at least one agreement
# verdict, so a new system cannot forget them, and the verdicts hold (agree, or approximate with what the approximation
# neglects); a disagreement must say why.


EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))


def _smaller(raw: dict) -> dict:
    """The example with shorter simulations (statistical checks stay family-wise valid at any size)."""
    sim = (raw.get("methods") or {}).get("simulated")
    if isinstance(sim, dict):
        if "packets" in sim or raw.get("system") == "pq_txq":
            sim["packets"] = min(int(float(sim.get("packets", 400_000))), 400_000)
        if "replications" in sim:
            sim["replications"] = min(int(sim["replications"]), 6)
    return raw


def _compared(metrics: list[dict]) -> dict[str, list[dict]]:
    """Metric -> the results that compute it (under its own name or as the metric they estimate)."""
    out: dict[str, list[dict]] = {}
    for m in metrics:
        out.setdefault(m.get("estimates") or m["metric"], []).append(m)
    return out


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_metric_computed_twice_has_agreement_verdicts(path, tmp_path, capsys):
    scn = tmp_path / path.name
    scn.write_text(yaml.safe_dump(_smaller(load_raw(path))))
    code = main(["plan", str(scn), "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    verdicts = doc["agreement_verdicts"]
    on = {}
    for v in verdicts:
        on.setdefault(v["metric"], []).append(v)
    for metric, results in _compared(doc["metrics"]).items():
        methods = {r["method"] for r in results}
        if len(methods) < 2:
            continue
        kinds = {r["kind"] for r in results}
        if kinds <= {"upper bound"} or kinds <= {"lower bound"}:
            continue  # two bounds from the same side cannot contradict each other: nothing to check
        assert metric in on, f"{path.stem}: {metric} by {sorted(methods)} has no agreement verdict"
    for v in verdicts:
        assert v["status"] in ("agree", "approximate", "disagree")
        if v["status"] == "approximate":
            assert "neglects" in v["detail"], v
        assert v["status"] != "disagree", f"{path.stem}: {v['name']}: {v['detail']}"
    assert code == doc["exit_code"] and code in (0, 1)
