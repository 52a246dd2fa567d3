"""Every rule of the claims files can fail (qosbound/reproduce/rules.py, claims.evaluate): for each rule type a
result on the wrong side gives NOT MET; statistical claims are one-sided tests under Holm-Bonferroni, with their
power; a finding needs a reproduced hypothesis; an unjudged claim is "not attempted" with its reason."""

from __future__ import annotations

import math

import pytest

from qosbound.reproduce import claims as C
from qosbound.reproduce import claimsfile as F
from qosbound.reproduce import rules as R

HEAD = "paper: t\ntitle: test\nfamily_level: 0.05\nclaims:\n"


def _file(*claims: str) -> F.ClaimsFile:
    return F.load("t", HEAD + "".join(claims))


def _claim(cid, rule, kind="behaviour", extra=""):
    return (f"  - {{id: {cid}, kind: {kind}, where: Fig. 1, claim: c, quantity: q, rule: {rule}, "
            f"rows: ['^{cid}$']{extra}}}\n")


def _row(name, verdict=C.REPRODUCED, **kw):
    return C.Claim(name, "Fig. 1", "paper", "qosbound", verdict, "code rule", **kw)


def _verdict(cf, *rows):
    return {j.spec.id: j.verdict for j in C.evaluate(cf, list(rows)).claims}


# --- one test per rule type: the wrong side is NOT MET ------------------------------------------------------

def test_tolerance():
    cf = _file(_claim("a", "{type: tolerance, threshold: 0.01, text: t}", "arithmetic", ", paper_value: 1.0"))
    assert _verdict(cf, _row("a", value=1.005)) == {"a": C.CLAIM_REPRODUCED}
    assert _verdict(cf, _row("a", value=1.02)) == {"a": C.CLAIM_NOT_MET}
    # the file's rule decides, not the row's own check
    assert _verdict(cf, _row("a", C.NOT_MET, value=1.005)) == {"a": C.CLAIM_REPRODUCED}
    assert _verdict(cf, _row("a", value=float("nan"))) == {"a": C.CLAIM_REPRODUCED}   # falls back to the row
    assert _verdict(cf, _row("a", C.NOT_MET, value=float("nan"))) == {"a": C.CLAIM_NOT_MET}


def test_bound():
    cf = _file(_claim("a", "{type: bound, direction: '>=', threshold: 0, text: t}", "arithmetic"))
    assert _verdict(cf, _row("a", value=0.5)) == {"a": C.CLAIM_REPRODUCED}
    assert _verdict(cf, _row("a", value=-0.5)) == {"a": C.CLAIM_NOT_MET}


def test_one_sided_from_a_confidence_interval():
    """Mean above 1: shown by a 95 % interval well above; NOT MET at 0.9 (contradicted) and at 1.01 with a wide
    interval (not shown), with the power at the stated effect on the claim."""
    cf = _file(_claim("a", "{type: one-sided, direction: '>', threshold: 1, level: 0.05, effect: 0.1, text: t}"))
    iv = C.interval
    assert _verdict(cf, _row("a", value=1.5, interval=iv(1.4, 1.6, "95% CI"), dof=9)) == {"a": C.CLAIM_REPRODUCED}
    assert _verdict(cf, _row("a", value=0.9, interval=iv(0.8, 1.0, "95% CI"), dof=9)) == {"a": C.CLAIM_NOT_MET}
    ev = C.evaluate(cf, [_row("a", value=1.01, interval=iv(0.5, 1.52, "95% CI"), dof=4)])
    j = ev.claims[0]
    assert j.verdict == C.CLAIM_NOT_MET and j.p_value > 0.4 and j.power < 0.2 and "power" in j.reason


def test_order_and_largest_from_the_rows_p_values():
    """An ordering (or 'X is largest') row carries its intersection-union p-value; p = 0.3 is NOT MET whatever
    the row's own check said."""
    for t in ("{type: order, direction: increasing, level: 0.05, text: t}",
              "{type: largest, direction: largest, level: 0.05, text: t}"):
        cf = _file(_claim("a", t))
        assert _verdict(cf, _row("a", p_value=0.001)) == {"a": C.CLAIM_REPRODUCED}
        assert _verdict(cf, _row("a", C.REPRODUCED, p_value=0.3)) == {"a": C.CLAIM_NOT_MET}


def test_variance_ratio_is_a_one_sided_f_test():
    """F = 4 on (9, 9) dof: p = 0.0255 (scipy's F distribution); the ratio the other way is the mirror image; the
    power at the stated ratio grows with it; without two replications nothing is shown."""
    up = R.variance_ratio((4.0, 10), (1.0, 10), ">", effect=4.0)
    assert up.p == pytest.approx(0.025502, abs=1e-5) and 0.5 < up.power < 0.8
    assert R.variance_ratio((1.0, 10), (4.0, 10), ">").p == pytest.approx(1 - up.p)
    assert R.variance_ratio((1.0, 10), (4.0, 10), "<").p == pytest.approx(up.p)
    assert R.variance_ratio((4.0, 10), (1.0, 10), ">", effect=9.0).power > up.power
    assert R.variance_ratio((4.0, 1), (1.0, 10), ">").p == 1.0


def test_band():
    cf = _file(_claim("a", "{type: band, low: 0.98, high: 1.02, level: 0.05, text: t}"))
    iv = C.interval
    assert _verdict(cf, _row("a", value=1.0, interval=iv(0.995, 1.005, "95% CI"))) == {"a": C.CLAIM_REPRODUCED}
    assert _verdict(cf, _row("a", value=1.03, interval=iv(1.025, 1.035, "95% CI"))) == {"a": C.CLAIM_NOT_MET}
    assert _verdict(cf, _row("a", value=1.0, interval=iv(0.9, 1.1, "95% CI"))) == {"a": C.CLAIM_NOT_MET}


def test_condition():
    cf = _file(_claim("a", "{type: condition, text: t}"))
    assert _verdict(cf, _row("a")) == {"a": C.CLAIM_REPRODUCED}
    assert _verdict(cf, _row("a", C.NOT_MET)) == {"a": C.CLAIM_NOT_MET}
    assert _verdict(cf, _row("a", C.FINDING)) == {"a": C.CLAIM_NOT_MET}   # a difference from the paper


def test_all_rows_must_meet_an_all_claim_and_one_an_any_claim():
    cf = _file(_claim("a", "{type: condition, text: t}").replace("'^a$'", "'^a'"),
               _claim("b", "{type: condition, text: t}", "hypothesis", ", combine: any").replace("'^b$'", "'^b'"))
    assert _verdict(cf, _row("a1"), _row("a2", C.NOT_MET), _row("b1", C.NOT_MET), _row("b2")) == \
        {"a": C.CLAIM_NOT_MET, "b": C.CLAIM_REPRODUCED}


# --- multiple testing ---------------------------------------------------------------------------------------

def test_holm_bonferroni_controls_the_family():
    """Three tests at p = 0.03, 0.04, 0.045: each below 0.05 alone, none after Holm (0.09, 0.09, 0.09)."""
    adj = R.holm({"a": 0.03, "b": 0.04, "c": 0.045}, 0.05)
    assert {k: round(v[0], 3) for k, v in adj.items()} == {"a": 0.09, "b": 0.09, "c": 0.09}
    assert not any(v[1] for v in adj.values())
    assert R.holm({"a": 0.001, "b": 0.04}, 0.05) == {"a": (0.002, True), "b": (0.04, True)}
    rule = "{type: order, direction: increasing, level: 0.05, text: t}"
    cf = _file(_claim("a", rule), _claim("b", rule), _claim("c", rule))
    ev = C.evaluate(cf, [_row("a", p_value=0.03), _row("b", p_value=0.04), _row("c", p_value=0.045)])
    assert [j.verdict for j in ev.claims] == [C.CLAIM_NOT_MET] * 3
    assert "3 claims judged by one-sided tests" in ev.multiple_testing() and "Holm-Bonferroni" in ev.multiple_testing()


def test_power_of_the_tests():
    """The one-sided t test's power grows with the effect and equals the level at no effect."""
    assert R.power(0.0, 1.0, None, 0.05) == pytest.approx(0.05)
    assert R.power(1.645 + 1.282, 1.0, None, 0.05) == pytest.approx(0.90, abs=0.005)
    assert R.power(1.0, 1.0, 4, 0.05) < R.power(1.0, 1.0, 40, 0.05) < R.power(1.0, 1.0, None, 0.05)
    assert R.spearman_power(0.0, 20, 0.05) == pytest.approx(0.05)
    assert R.spearman_power(0.5, 40, 0.05) > R.spearman_power(0.5, 10, 0.05)


def test_intersection_union_takes_the_weakest_test():
    a = R.difference((2.0, 0.1, 5), (1.0, 0.1, 5), ">", effect=0.5)
    b = R.difference((2.0, 0.1, 5), (1.95, 0.1, 5), ">", effect=0.5)
    t = R.intersection_union([a, b])
    assert t.p == b.p > 0.3 and t.power == min(a.power, b.power)
    assert R.one_sided(0.5, 0.0, None, 0.0, ">").p == 0.0 and R.one_sided(-0.5, 0.0, None, 0.0, ">").p == 1.0
    assert math.isclose(R.se_from_interval(1.0, 0.5, 1.5, 0.95, None), 0.5 / 1.959964, rel_tol=1e-5)


# --- findings, not attempted, exit code, report ---------------------------------------------------------------

def test_a_finding_needs_a_reproduced_hypothesis():
    cf = _file(_claim("a", "{type: condition, text: t}", extra=", finding: {cause: z, tested_by: [h]}"),
               _claim("h", "{type: condition, text: t}", "hypothesis"))
    assert _verdict(cf, _row("a", C.FINDING), _row("h")) == {"a": C.CLAIM_FINDING, "h": C.CLAIM_REPRODUCED}
    assert _verdict(cf, _row("a", C.FINDING), _row("h", C.NOT_MET)) == {"a": C.CLAIM_NOT_MET, "h": C.CLAIM_NOT_MET}
    ev = C.evaluate(cf, [_row("a", C.FINDING)])      # the hypothesis produced no result
    assert [j.verdict for j in ev.claims] == [C.CLAIM_NOT_MET, C.NOT_ATTEMPTED] and "untested" in ev.claims[0].reason


def test_unjudged_claims_are_not_attempted_with_their_reason_and_unlisted_rows_are_kept():
    cf = F.load("t", HEAD + "  - {id: a, kind: behaviour, where: w, claim: c, quantity: q, rule: {type: condition, "
                "text: t}, not_attempted: no model of it}\n" + _claim("b", "{type: condition, text: t}"))
    ev = C.evaluate(cf, [_row("zzz")])
    assert [(j.verdict, j.reason) for j in ev.claims] == [
        (C.NOT_ATTEMPTED, "no model of it"),
        (C.NOT_ATTEMPTED, "this run produced no result for it (a mode that leaves it out)")]
    assert [r.claim for r in ev.unlisted] == ["zzz"] and ev.exit_code() == 0


def test_the_report_separates_the_kinds_counts_them_and_exits_1_on_not_met(capsys):
    cf = _file(_claim("a", "{type: condition, text: t}"), _claim("b", "{type: condition, text: t}", "arithmetic"),
               _claim("h", "{type: condition, text: t}", "hypothesis"))
    ev = C.evaluate(cf, [_row("a", C.NOT_MET, evidence="it fell"), _row("b"), _row("h")])
    assert ev.exit_code() == 1
    assert ev.counts()["behaviour"][C.CLAIM_NOT_MET] == 1 and ev.counts()["arithmetic"][C.CLAIM_REPRODUCED] == 1
    C.print_report("Claims", ev)
    out = capsys.readouterr().out
    for text in (F.KINDS["behaviour"], F.KINDS["arithmetic"], F.KINDS["hypothesis"], "why: it fell",
                 "behaviour 1: 0 reproduced, 1 NOT MET", "own hypotheses 1: 1 reproduced", "-> exit 1",
                 "Holm-Bonferroni"):
        assert text in out, text
    doc = C.report_document(ev)
    assert [c["verdict"] for c in doc["claims"]] == [C.CLAIM_NOT_MET, C.CLAIM_REPRODUCED, C.CLAIM_REPRODUCED]
    assert doc["exit_code"] == 1 and doc["claims"][0]["rows"][0]["meets_rule"] is False
    assert doc["multiple_testing"]["method"] == "Holm-Bonferroni"
