"""The claims files (qosbound/reproduce/claimsfile.py): every paper's claims listed with their rules, fixed in
advance -- a rule that differs from the fingerprint its file's changelog last recorded fails here."""

from __future__ import annotations

import dataclasses
import datetime

import pytest

from qosbound.cli import PAPERS
from qosbound.errors import ScenarioError
from qosbound.reproduce import claimsfile as F


@pytest.fixture(scope="module", params=sorted(PAPERS))
def cf(request):
    return F.load(request.param)


def test_every_paper_of_reproduce_has_a_claims_file():
    assert F.papers() == sorted(PAPERS)


def test_no_rule_differs_from_its_recorded_fingerprint(cf):
    """Every claim's rule (kind, quantity, paper value, rule, combination) has the fingerprint the last changelog
    entry naming it recorded. To change a rule: add a dated entry saying why, with the new fingerprints
    (``python -m qosbound.reproduce.claimsfile`` prints them)."""
    assert F.unrecorded(cf) == [], f"{cf.paper}: rules changed without a changelog entry: {F.unrecorded(cf)}"


def test_a_changed_rule_without_a_changelog_entry_is_caught(cf):
    """Moving one threshold (or any rule field) changes the fingerprint; only a new dated entry records it."""
    spec = next(s for s in cf.claims if s.rows)
    moved = dataclasses.replace(spec, rule=dataclasses.replace(spec.rule, text=spec.rule.text + " (moved)"))
    changed = dataclasses.replace(cf, claims=[moved if s is spec else s for s in cf.claims])
    assert F.unrecorded(changed) == [spec.id]
    entry = {"date": "2099-01-01", "why": "test", "rules": {spec.id: F.fingerprint(moved)}}
    assert F.unrecorded(dataclasses.replace(changed, changelog=cf.changelog + [entry])) == []


def test_the_changelog_is_dated_in_order_and_says_why(cf):
    dates = [datetime.date.fromisoformat(str(e["date"])) for e in cf.changelog]
    assert dates == sorted(dates) and dates
    assert all(len(e["why"]) > 20 for e in cf.changelog)


def test_every_claim_is_judged_or_says_why_not(cf):
    """A claim names the result rows that judge it, or why qosbound does not judge it; a finding names the
    hypothesis that tests its cause."""
    for s in cf.claims:
        assert bool(s.rows) != bool(s.not_attempted), s.id
        assert s.kind in F.KINDS and s.rule.type in F.RULE_TYPES
        if s.not_attempted:
            assert len(s.not_attempted) > 20, s.id
    assert any(s.kind == "behaviour" for s in cf.claims)


def test_statistical_rules_state_their_level():
    for paper in F.papers():
        for s in F.load(paper).claims:
            if s.rule.type in ("one-sided", "order", "largest", "band"):
                assert 0 < s.rule.level < 0.5, (paper, s.id)


def test_the_spearman_effect_of_the_file_is_the_code_s():
    """The power of TSQ's trend tests is computed at the code's SPEARMAN_EFFECT: the file must say the same."""
    from qosbound.reproduce import tsq

    rules = [s.rule for s in F.load("tsq").claims if s.rule.test and "Spearman" in s.rule.test]
    assert rules and all(r.effect == tsq.SPEARMAN_EFFECT for r in rules)


@pytest.mark.parametrize("text,field", [
    ("paper: x\nclaims:\n  - {id: a, kind: opinion, where: w, claim: c, quantity: q, rule: {type: condition, "
     "text: t}, rows: [a]}\n", "a.kind"),
    ("paper: x\nclaims:\n  - {id: a, kind: behaviour, where: w, claim: c, quantity: q, rule: {type: order, "
     "text: t, direction: increasing}, rows: [a]}\n", "a.rule.level"),
    ("paper: x\nclaims:\n  - {id: a, kind: behaviour, where: w, claim: c, quantity: q, rule: {type: condition, "
     "text: t}}\n", "a"),
    ("paper: x\nclaims:\n  - {id: a, kind: behaviour, where: w, claim: c, quantity: q, rule: {type: condition, "
     "text: t}, rows: [a], finding: {cause: z, tested_by: [b]}}\n", "a.finding.tested_by"),
    ("paper: x\nclaims: []\nchangelog:\n  - {date: yesterday, why: because, rules: {}}\n", "changelog[0].date"),
])
def test_a_malformed_claims_file_is_one_clear_error(text, field):
    with pytest.raises(ScenarioError) as e:
        F.load("x", text)
    assert f"field '{field}'" in str(e.value) and "claims/x.yaml" in str(e.value) and "\n" not in str(e.value)


def test_the_shrink_effect_of_the_file_is_the_code_s():
    """The power of Koehler's "differences shrink" tests is computed at the code's SHRINK_EFFECT."""
    from qosbound.reproduce import koehler1999_tcp

    by = F.load("koehler1999").by_id()
    assert by["twobit-differences-shrink"].rule.effect == by["af-differences-shrink"].rule.effect == \
        koehler1999_tcp.SHRINK_EFFECT
