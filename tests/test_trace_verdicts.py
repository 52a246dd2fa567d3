"""Tests for qosbound/trace_verdicts.py: a trace's estimates judged against the methods' results and bounds."""

from __future__ import annotations

from qosbound.results import Interval, Result
from qosbound.trace_verdicts import compare


def test_compare_agreement_and_bounds():
    """An estimate within its standard errors agrees; one far off disagrees; a bound below the observed mean fails."""
    est = Result("EF.delay.mean", "trace", 0.0102, "s", Interval(0.0098, 0.0106, "95% CI"),
                 {"std_error": 0.0002, "replications": 20})
    good = Result("EF.delay.mean", "model-checked", 0.0100, "s", Interval(0.0100, 0.0100, "precision 1e-10"))
    bad = Result("EF.delay.mean", "model-checked", 0.0120, "s", Interval(0.0120, 0.0120, "precision 1e-10"))
    bound = Result("EF.delay.worst_case_mean", "closed-form", 0.009, "s", Interval.upper_bound(0.009),
                   bounds=("EF.delay.mean",))
    v = {x.method: x for x in compare([good, bound], [est])}
    assert v["trace vs model-checked"].status == "agree" and v["closed-form vs trace"].status == "disagree"
    assert compare([bad], [est])[0].status == "disagree"
