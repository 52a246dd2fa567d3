"""The multiple-testing statement across the five papers: the family's size from the claims files, and which of a
run's rejections Bonferroni over that family keeps (an upper bound of Holm's adjusted p-values)."""

from __future__ import annotations

import qosbound.cli  # noqa: F401  (the command layer first: importing qosbound.report before qosbound.pages fails)
from qosbound.reproduce import claims as C
from qosbound.reproduce import claimsfile as F


def test_the_family_of_the_five_papers_counts_attempted_statistical_claims():
    n = F.statistical_claims()
    by_hand = sum(1 for p in F.papers() for s in F.load(p).claims
                  if s.rule.type in F.STATISTICAL and not s.not_attempted)
    assert n == by_hand and n >= max(C.evaluate(p, []).tests() for p in F.papers())
    assert set(F.papers()) == {"ferrari2001", "koehler1999", "qstp2008", "takeo2003", "tsq"}


def test_bonferroni_over_the_five_papers_keeps_only_the_strong_rejections():
    """Two rejections at this run's level (p = 0.0001 and 0.02, Holm over 2: 0.0002, 0.02): over a family of 29,
    0.0001 x 29 = 0.0029 stands, 0.02 x 29 = 0.58 does not."""
    ev = C.Evaluation("p", "t", 0.05, [], [], [], across=29)
    spec = F.load("qstp2008").claims[0]
    for p, adj in ((0.0001, 0.0002), (0.02, 0.02), (0.2, 0.2)):
        j = C.Judged(spec, C.CLAIM_REPRODUCED, "", [])
        j.p_value, j.p_adjusted = p, adj
        ev.claims.append(j)
    assert ev.tests() == 3 and ev.rejections() == (2, 1)
    assert "Across the five papers' claims files 29 attempted claims carry such tests" in ev.multiple_testing()
    assert "1 of this run's 2 rejections would stand" in ev.multiple_testing()


def test_the_json_document_states_the_five_paper_family():
    doc = C.report_document(C.evaluate("qstp2008", []))
    mt = doc["multiple_testing"]
    assert mt["five_papers_tests"] == F.statistical_claims() and mt["five_papers_rejections_kept"] == 0
