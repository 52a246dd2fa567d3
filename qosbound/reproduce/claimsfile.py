"""The claims files: every claim of a source paper's evaluation and conclusions, with its rule, fixed in advance.

One YAML file per paper, shipped in the package (``qosbound/data/claims/<paper>.yaml``). Each entry of
``claims`` holds one distinct claim:

``id``            a short name, unique in the file
``kind``          ``behaviour`` (the paper's claim about what a mechanism does, judged on qosbound's simulated,
                  modelled or computed result), ``arithmetic`` (a recomputation or transcription check of the
                  paper's own numbers) or ``hypothesis`` (the project's own hypothesis, e.g. a candidate cause)
``where``         section, figure or table of the paper
``claim``         what the paper (or, for a hypothesis, the project) says, in a few words
``quantity``      the quantity the rule judges, with its unit
``paper_value``   the paper's own number(s) where it gives one (``null`` otherwise)
``rule``          ``type`` (one of :data:`RULE_TYPES`), ``text`` (the rule in words) and, by type,
                  ``direction``, ``threshold``, ``unit``, ``test``, ``level``, ``effect`` (the difference the
                  stated power refers to)
``rows``          regular expressions: the result rows of ``qosbound reproduce`` that judge this claim (searched
                  in the row's claim text)
``combine``       ``all`` (default: every row must meet the rule) or ``any`` (one candidate suffices, e.g. one of
                  several candidate explanations)
``not_attempted`` instead of ``rows``: why qosbound does not judge the claim
``finding``       ``cause`` and ``tested_by`` (ids of ``hypothesis`` claims): when the claim is not met and every
                  hypothesis it names is reproduced, the verdict is a finding; otherwise it stays NOT MET

A rule changes only with a dated entry in the file's ``changelog`` (``date``, ``why`` and ``rules``: the
:func:`fingerprint` of every claim the entry adds or changes). :func:`unrecorded` lists the claims whose rule
differs from the fingerprint last recorded for them; ``tests/reproduce/test_claimsfile.py`` fails on any.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from importlib import resources

import yaml

from qosbound.errors import ScenarioError

__all__ = ["KINDS", "RULE_TYPES", "STATISTICAL", "Rule", "ClaimSpec", "ClaimsFile", "load", "papers", "fingerprint",
           "recorded", "unrecorded", "statistical_claims"]

#: Every kind of claim and how the report names its section.
KINDS = {
    "behaviour": "the paper's claims about behaviour, judged on qosbound's results",
    "arithmetic": "arithmetic and transcription checks of the paper's own numbers",
    "hypothesis": "the project's own hypotheses (candidate causes, sensitivity runs)",
}

#: Every rule type and what decides it (:mod:`qosbound.reproduce.rules`).
RULE_TYPES = {
    "tolerance": "|qosbound - paper| <= threshold (a printed number recomputed)",
    "bound": "a value on the stated side of a threshold, without sampling error (closed form, model, the paper's "
             "own numbers)",
    "one-sided": "a one-sided test that the mean lies on the stated side of a threshold, at the family level",
    "order": "one-sided tests of every adjacent pair of an ordering (intersection-union), at the family level",
    "largest": "one-sided tests of the named case against every other case (intersection-union), at the family "
               "level",
    "band": "two one-sided tests that the mean lies inside [low, high] (equivalence), at the family level",
    "condition": "a deterministic condition on a computed or model-checked result, stated in the rule's text",
}

_RULE_KEYS = {"type", "text", "direction", "threshold", "unit", "test", "level", "effect", "low", "high"}
_CLAIM_KEYS = {"id", "kind", "where", "claim", "quantity", "paper_value", "rule", "rows", "combine", "not_attempted",
               "finding"}


@dataclass(frozen=True)
class Rule:
    type: str
    text: str
    direction: str | None = None
    threshold: float | None = None
    unit: str | None = None
    test: str | None = None
    level: float | None = None
    effect: float | None = None
    low: float | None = None
    high: float | None = None

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class ClaimSpec:
    id: str
    kind: str
    where: str
    claim: str
    quantity: str
    rule: Rule
    paper_value: object = None
    rows: tuple[str, ...] = ()
    combine: str = "all"
    not_attempted: str | None = None
    finding: dict | None = None

    def matches(self, text: str) -> bool:
        return any(re.search(p, text) for p in self.rows)


@dataclass
class ClaimsFile:
    paper: str
    title: str
    family_level: float
    claims: list[ClaimSpec]
    changelog: list[dict] = field(default_factory=list)

    def by_id(self) -> dict[str, ClaimSpec]:
        return {c.id: c for c in self.claims}


def _dir():
    return resources.files("qosbound") / "data" / "claims"


def papers() -> list[str]:
    """The papers that have a claims file."""
    return sorted(p.name[:-5] for p in _dir().iterdir() if p.name.endswith(".yaml"))


#: Rule types judged by a test with a p-value (the others are deterministic or interval rules).
STATISTICAL = ("one-sided", "order", "largest", "band")


def statistical_claims() -> int:
    """Claims across every paper's claims file whose rule is a test with a p-value and which are attempted: the
    size of the multiple-testing family if the five papers were judged as one."""
    return sum(1 for p in papers() for s in load(p).claims if s.rule.type in STATISTICAL and not s.not_attempted)


def _bad(paper: str, where: str, problem: str) -> ScenarioError:
    return ScenarioError(problem, file=f"claims/{paper}.yaml", field=where or None)


def _rule(paper: str, cid: str, raw) -> Rule:
    if not isinstance(raw, dict):
        raise _bad(paper, f"{cid}.rule", "must be a mapping")
    extra = set(raw) - _RULE_KEYS
    if extra:
        raise _bad(paper, f"{cid}.rule", f"unknown keys {sorted(extra)}")
    if raw.get("type") not in RULE_TYPES:
        raise _bad(paper, f"{cid}.rule.type", f"expected one of {', '.join(RULE_TYPES)}")
    if not raw.get("text"):
        raise _bad(paper, f"{cid}.rule.text", "the rule in words is required")
    rule = Rule(**raw)
    if rule.type in STATISTICAL:
        if rule.level is None or not 0 < float(rule.level) < 0.5:
            raise _bad(paper, f"{cid}.rule.level", "a statistical rule needs a level in (0, 0.5)")
    if rule.type in ("tolerance", "bound", "one-sided") and rule.threshold is None and rule.type != "bound":
        raise _bad(paper, f"{cid}.rule.threshold", "required for this rule type")
    if rule.type in ("bound", "one-sided", "order", "largest") and rule.direction is None:
        raise _bad(paper, f"{cid}.rule.direction", "required for this rule type")
    return rule


def load(paper: str, text: str | None = None) -> ClaimsFile:
    """The claims file of ``paper``, validated (``text``: read this YAML instead of the shipped file)."""
    if text is None:
        path = _dir().joinpath(f"{paper}.yaml")
        if not path.is_file():
            raise ScenarioError(f"no claims file for paper '{paper}'", file=f"claims/{paper}.yaml")
        text = path.read_text(encoding="utf-8")
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise _bad(paper, "", f"not YAML: {str(e).splitlines()[0]}") from None
    if not isinstance(raw, dict) or raw.get("paper") != paper:
        raise _bad(paper, "paper", f"must be '{paper}'")
    specs: list[ClaimSpec] = []
    seen = set()
    for i, c in enumerate(raw.get("claims") or []):
        if not isinstance(c, dict) or not c.get("id"):
            raise _bad(paper, f"claims[{i}]", "each claim needs an id")
        cid = str(c["id"])
        extra = set(c) - _CLAIM_KEYS
        if extra:
            raise _bad(paper, cid, f"unknown keys {sorted(extra)}")
        if cid in seen:
            raise _bad(paper, cid, "duplicate id")
        seen.add(cid)
        if c.get("kind") not in KINDS:
            raise _bad(paper, f"{cid}.kind", f"expected one of {', '.join(KINDS)}")
        for k in ("where", "claim", "quantity"):
            if not c.get(k):
                raise _bad(paper, f"{cid}.{k}", "required")
        rows = tuple(c.get("rows") or ())
        if bool(rows) == bool(c.get("not_attempted")):
            raise _bad(paper, cid, "give either rows (the results that judge it) or not_attempted (why not)")
        for p in rows:
            try:
                re.compile(p)
            except re.error as e:
                raise _bad(paper, f"{cid}.rows", f"bad pattern {p!r}: {e}") from None
        if c.get("combine", "all") not in ("all", "any"):
            raise _bad(paper, f"{cid}.combine", "expected all or any")
        finding = c.get("finding")
        if finding is not None and (not isinstance(finding, dict) or not finding.get("cause")
                                    or not finding.get("tested_by")):
            raise _bad(paper, f"{cid}.finding", "needs a cause and tested_by (hypothesis ids)")
        specs.append(ClaimSpec(cid, c["kind"], str(c["where"]), str(c["claim"]), str(c["quantity"]),
                               _rule(paper, cid, c.get("rule")), c.get("paper_value"), rows,
                               c.get("combine", "all"), c.get("not_attempted"), finding))
    ids = {s.id: s for s in specs}
    for s in specs:
        for h in (s.finding or {}).get("tested_by", []):
            if h not in ids or ids[h].kind != "hypothesis":
                raise _bad(paper, f"{s.id}.finding.tested_by", f"'{h}' is not a hypothesis claim of this file")
    log = raw.get("changelog") or []
    for i, e in enumerate(log):
        if not isinstance(e, dict) or not e.get("why") or not isinstance(e.get("rules"), dict):
            raise _bad(paper, f"changelog[{i}]", "each entry needs a date, why and rules (id: fingerprint)")
        try:
            datetime.date.fromisoformat(str(e.get("date")))
        except ValueError:
            raise _bad(paper, f"changelog[{i}].date", "an ISO date (YYYY-MM-DD)") from None
    return ClaimsFile(paper, str(raw.get("title", "")), float(raw.get("family_level", 0.05)), specs, log)


def fingerprint(spec: ClaimSpec) -> str:
    """A hash of what decides the verdict: the kind, quantity, paper value, rule and combination."""
    blob = json.dumps({"kind": spec.kind, "quantity": spec.quantity, "paper_value": spec.paper_value,
                       "rule": spec.rule.as_dict(), "combine": spec.combine}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def recorded(cf: ClaimsFile) -> dict[str, tuple[str, str]]:
    """claim id -> (fingerprint, date) of the last changelog entry that records it."""
    out: dict[str, tuple[str, str]] = {}
    for e in cf.changelog:
        for cid, fp in e["rules"].items():
            out[str(cid)] = (str(fp), str(e["date"]))
    return out


def unrecorded(cf: ClaimsFile) -> list[str]:
    """Claims whose rule differs from the last fingerprint recorded for them (or was never recorded)."""
    rec = recorded(cf)
    return [s.id for s in cf.claims if rec.get(s.id, ("", ""))[0] != fingerprint(s)]


def main(argv=None) -> int:
    """``python -m qosbound.reproduce.claimsfile [PAPER ...]``: the fingerprints a new changelog entry must record
    (``id: fingerprint`` of every claim whose rule differs from the last recorded one); exit 1 when any."""
    names = list(argv if argv is not None else sys.argv[1:]) or papers()
    pending = 0
    for paper in names:
        cf = load(paper)
        ids = unrecorded(cf)
        pending += len(ids)
        by = cf.by_id()
        print(f"{paper}: {len(ids)} rule(s) to record" + (":" if ids else ""))
        for cid in ids:
            print(f"      {cid}: {fingerprint(by[cid])}")
    return 1 if pending else 0


if __name__ == "__main__":
    raise SystemExit(main())
