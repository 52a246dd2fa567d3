"""The claim rows and the claims report shared by every ``qosbound reproduce`` target.

Two levels:

*Result rows* (:class:`Claim`): what a target's code computes and checks -- the paper's value, qosbound's value
(with units, the confidence interval, a one-sided test's p-value and power where it has one) and the row's own
check (``reproduced``; ``differs from the paper``, a difference the row documents; ``NOT MET``). :func:`judge`
and :func:`compare` build them.

*Claims* (:mod:`qosbound.reproduce.claimsfile`): every distinct claim of the paper, listed with its rule in the
paper's claims file before any result. :func:`evaluate` maps the rows onto the claims and gives each claim one
verdict:

``reproduced``     the claim's rule is met (a statistical rule: its one-sided test rejects "the claim is false"
                   at the family level after Holm-Bonferroni)
``NOT MET``        the rule is not met: contradicted, or not shown (the stated power says whether the test
                   could have shown it); also a difference from the paper whose cause is untested
``finding``        the rule is not met, and the cause the claims file names is a hypothesis that is itself
                   reproduced (a tested cause)
``not attempted``  qosbound does not judge the claim; the claims file says why

:func:`report` prints the claims by kind (behaviour, arithmetic and transcription checks, the project's own
hypotheses) with a summary that counts each kind, or the ``--json`` document (``docs/results.md``), and
returns the exit code: 1 when any claim is NOT MET, else 0.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

from qosbound import report as reporting
from qosbound.reproduce import claimsfile as F
from qosbound.reproduce import rules as R
from qosbound.reproduce.claimsfile import KINDS, RULE_TYPES, fingerprint
from qosbound.units import format_quantity

__all__ = ["curve_lines", "fmt", "Claim", "REPRODUCED", "FINDING", "NOT_MET", "VERDICTS", "EXIT_MET", "EXIT_NOT_MET",
           "judge", "compare", "interval", "exit_code", "print_table", "document", "summary", "CLAIM_VERDICTS",
           "CLAIM_REPRODUCED", "CLAIM_NOT_MET", "CLAIM_FINDING", "NOT_ATTEMPTED", "Judged", "Evaluation", "evaluate",
           "report", "report_document", "print_report"]

REPRODUCED = "reproduced"
FINDING = "differs from the paper"
NOT_MET = "NOT MET"

#: Every verdict and what it means (printed in ``--json`` output).
VERDICTS = {
    REPRODUCED: "qosbound's value meets the paper's claim under the stated rule",
    FINDING: "a result row: qosbound finds otherwise than the paper, with the evidence; the claim it belongs to "
             "is a finding only when the claims file's cause for it is a reproduced hypothesis, else NOT MET",
    NOT_MET: "qosbound's value does not meet the claim (or no longer shows the documented finding): exit 1",
}

EXIT_MET = 0
EXIT_NOT_MET = 1


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, checked by qosbound."""

    claim: str                      #: what the paper says, in a few words
    source: str                     #: where it says it (table, section, figure)
    paper: str                      #: the paper's value, as text with its unit
    qosbound: str                   #: qosbound's value, as text with its unit (and interval)
    verdict: str                    #: REPRODUCED, FINDING or NOT_MET
    rule: str                       #: how the verdict is decided
    paper_value: float | None = None   #: the paper's number, SI (or the unit below), when it prints one
    value: float | None = None      #: qosbound's number, in the same unit
    unit: str = ""
    interval: dict | None = None    #: {"low", "high", "kind"} of a simulated (or otherwise uncertain) value
    evidence: str = ""              #: a finding's evidence and most likely cause; a failure's explanation
    p_value: float | None = None    #: a one-sided test's p-value (H0: the claim is false), before adjustment
    test: str = ""                  #: that test in words
    power: float | None = None      #: the test's power at ``effect`` and the claim's level
    effect: float | None = None     #: the difference the power refers to (the claim's unit)
    se: float | None = None         #: the standard error of ``value`` (for the claims file's own tests)
    dof: float | None = None        #: its degrees of freedom (None: normal)

    @property
    def met(self) -> bool:
        return self.verdict != NOT_MET

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("paper_value", "value", "p_value", "power", "effect", "se", "dof"):
            if d[k] is not None and not math.isfinite(d[k]):
                d[k] = str(d[k])
        return d


def judge(claim: str, source: str, paper: str, qosbound: str, ok: bool, rule: str, *,
          finding: str | None = None, failure: str = "", **numbers) -> Claim:
    """A claim whose check ``ok`` qosbound has evaluated.

    ``ok`` says whether qosbound's result is the one qosbound expects: the paper's claim, or --
    when ``finding`` is given -- the documented finding (then ``finding`` holds the evidence and
    the most likely cause, and the verdict is FINDING while ``ok``). ``failure`` explains a NOT MET.
    """
    if ok:
        return Claim(claim, source, paper, qosbound, FINDING if finding else REPRODUCED, rule,
                     evidence=finding or "", **numbers)
    why = failure
    if finding:
        why = ("qosbound no longer shows the documented finding (" + finding + ")" + (f"; {failure}" if failure
                                                                                         else ""))
    return Claim(claim, source, paper, qosbound, NOT_MET, rule, evidence=why, **numbers)


def compare(claim: str, source: str, paper_value: float, value: float, tolerance: float, unit: str, *,
            digits: int = 4, rule: str | None = None, scale: float = 1.0, shown_unit: str | None = None,
            paper_digits: int | None = None) -> Claim:
    """A printed number recomputed: reproduced when ``|value - paper_value| <= tolerance`` (same unit).

    ``scale`` and ``shown_unit`` only change how the numbers are shown (e.g. seconds as microseconds).
    """
    ok = math.isfinite(value) and abs(value - paper_value) <= tolerance
    show = shown_unit if shown_unit is not None else unit

    def txt(x: float, d: int = digits) -> str:
        return f"{x * scale:.{d}f} {show}".rstrip() if shown_unit is not None else fmt(x, unit, d)

    rule = rule or f"|qosbound - paper| <= {tolerance * scale:g} {show}".rstrip()
    shown_paper = txt(paper_value, digits if paper_digits is None else paper_digits)
    return judge(claim, source, shown_paper, txt(value), ok, rule, paper_value=paper_value, value=value,
                 unit=unit, failure=f"differs by {(value - paper_value) * scale:+.4g} {show}".rstrip())


def interval(low: float, high: float, kind: str) -> dict:
    """The ``interval`` of a claim: e.g. ``interval(lo, hi, "95% CI")``."""
    return {"low": float(low), "high": float(high), "kind": kind}


def fmt(x: float | None, unit: str, digits: int = 4) -> str:
    """``x`` with its unit, ``digits`` significant digits (:func:`qosbound.units.format_quantity`)."""
    return format_quantity(x, unit, digits)




def with_interval(value: float, unit: str, iv: dict | None, digits: int = 4) -> str:
    """``'404.5 kbit/s [401.2 kbit/s, 407.8 kbit/s] 95% CI'``."""
    s = fmt(value, unit, digits)
    if iv:
        s += f" [{fmt(iv['low'], unit, digits)}, {fmt(iv['high'], unit, digits)}] {iv['kind']}"
    return s


def exit_code(claims: list[Claim]) -> int:
    """0 when every claim is reproduced or a documented finding, 1 when any is NOT MET."""
    return EXIT_NOT_MET if any(not c.met for c in claims) else EXIT_MET


def summary(claims: list[Claim]) -> str:
    n = {v: sum(c.verdict == v for c in claims) for v in VERDICTS}
    code = exit_code(claims)
    return (f"{len(claims)} claims: {n[REPRODUCED]} reproduced, {n[FINDING]} documented findings (differ from "
            f"the paper), {n[NOT_MET]} NOT MET -> exit {code}")


def curve_lines(curves: dict, points, width: int) -> list[str]:
    """A drop-probability table: a header of the average queues ``points`` and one row per curve."""
    return ["avg".ljust(width) + "".join(f"{a:>7d}" for a in points)] + \
        [f"{k:<{width}}" + "".join(f"{x:7.3f}" for x in v) for k, v in curves.items()]


def print_table(title: str, claims: list[Claim], file=None) -> None:
    """Print ``claim | paper | qosbound | verdict``, then the rules and findings as numbered notes."""
    from rich.markup import escape  # rich: a costly import, needed only for the terminal table
    from rich.table import Table

    notes: list[str] = []

    def note(text: str) -> str:
        if text not in notes:
            notes.append(text)
        return f"[{notes.index(text) + 1}]"

    t = Table(title=title, title_justify="left")
    t.add_column("claim (where)", min_width=len("claim (where)"))  # the header never wraps
    t.add_column("paper", justify="right")
    t.add_column("qosbound", justify="right")
    t.add_column("verdict")
    for c in claims:
        refs = note("rule: " + c.rule)
        if c.evidence:
            refs += " " + note(("finding: " if c.verdict == FINDING else "why: ") + c.evidence)
        style = {REPRODUCED: "green", FINDING: "yellow", NOT_MET: "bold red"}[c.verdict]
        t.add_row(escape(f"{c.claim} ({c.source})"), escape(c.paper), escape(c.qosbound),
                  f"[{style}]{escape(c.verdict)}[/{style}] {escape(refs)}")
    con = reporting.console(file)
    con.print(t)
    for i, text in enumerate(notes, 1):
        con.print(f"  [{i}] {text}", highlight=False, markup=False)
    con.print(summary(claims), highlight=False, markup=False)


def document(paper: str, claims: list[Claim], **extra) -> dict:
    """The ``--json`` form: the same rows, the verdict legend and the exit code, plus target-specific data."""
    return {"paper": paper, "claims": [c.to_dict() for c in claims], "verdicts": VERDICTS,
            "summary": summary(claims), "exit_code": exit_code(claims), **extra}


# ------------------------------------------------------------------------------------------- claims

CLAIM_REPRODUCED = "reproduced"
CLAIM_NOT_MET = "NOT MET"
CLAIM_FINDING = "finding"
NOT_ATTEMPTED = "not attempted"

#: Every verdict of a claim (printed in ``--json`` output).
CLAIM_VERDICTS = {
    CLAIM_REPRODUCED: "the claim's rule is met; a statistical rule's one-sided test rejects 'the claim is false' at "
                      "the family level after Holm-Bonferroni",
    CLAIM_NOT_MET: "the rule is not met: contradicted, or not shown (see the test's power), or a difference from the "
                   "paper whose cause is untested; exit 1",
    CLAIM_FINDING: "the rule is not met and the cause the claims file names is a reproduced hypothesis (a tested "
                   "cause)",
    NOT_ATTEMPTED: "qosbound does not judge this claim; the reason is given",
}

_STATISTICAL = F.STATISTICAL


@dataclass
class Judged:
    """One claim of the claims file with its verdict."""

    spec: object                    #: the :class:`qosbound.reproduce.claimsfile.ClaimSpec`
    verdict: str
    reason: str = ""                #: why NOT MET / not attempted; a finding's tested cause
    rows: list = None               #: the result rows that judge it, each (row, met by the claim's rule)
    p_value: float | None = None    #: the claim's one-sided p-value before adjustment
    p_adjusted: float | None = None  #: Holm-adjusted
    power: float | None = None
    test: str = ""

    def to_dict(self) -> dict:
        sp = self.spec
        return {"id": sp.id, "kind": sp.kind, "where": sp.where, "claim": sp.claim, "quantity": sp.quantity,
                "paper_value": sp.paper_value, "rule": sp.rule.as_dict(), "combine": sp.combine,
                "fingerprint": fingerprint(sp), "verdict": self.verdict, "reason": self.reason,
                "p_value": _finite(self.p_value), "p_adjusted": _finite(self.p_adjusted),
                "power": _finite(self.power), "effect": sp.rule.effect, "test": self.test,
                "finding": sp.finding,
                "rows": [dict(r.to_dict(), meets_rule=ok) for r, ok in (self.rows or [])]}


def _finite(x):
    return None if x is None or not math.isfinite(x) else float(x)


@dataclass
class Evaluation:
    """The claims of one paper judged on one run's result rows."""

    paper: str
    title: str
    family_level: float
    claims: list[Judged]
    unlisted: list[Claim]           #: result rows no claim of the file names (a test fails on any)
    rows: list[Claim] = None        #: every result row of the run, in its order
    across: int | None = None       #: attempted claims with a statistical rule across every paper's claims file

    def counts(self) -> dict[str, dict[str, int]]:
        return {k: {v: sum(j.spec.kind == k and j.verdict == v for j in self.claims) for v in CLAIM_VERDICTS}
                for k in KINDS}

    def tests(self) -> int:
        return sum(j.p_value is not None for j in self.claims)

    def exit_code(self) -> int:
        return EXIT_NOT_MET if any(j.verdict == CLAIM_NOT_MET for j in self.claims) else EXIT_MET

    def rejections(self) -> tuple[int, int]:
        """(rejections at this run's family level after Holm, those kept by Bonferroni over :attr:`across` tests --
        an upper bound of Holm's adjusted p-values were the five papers' claims one family)."""
        rej = [j for j in self.claims if j.p_adjusted is not None and j.p_adjusted <= self.family_level]
        n = max(self.across or 0, self.tests())
        return len(rej), sum(min(1.0, n * j.p_value) <= self.family_level for j in rej)

    def multiple_testing(self) -> str:
        text = (f"{self.tests()} claims judged by one-sided tests (p-values); Holm-Bonferroni holds their "
                f"family-wise error at {100 * self.family_level:g} %. Claims judged by interval or exact rules carry "
                f"no p-value and are outside this family.")
        if self.across:
            r, kept = self.rejections()
            text += (f" Across the five papers' claims files {self.across} attempted claims carry such tests; as one "
                     f"family (Bonferroni over {max(self.across, self.tests())}, an upper bound of Holm's adjusted "
                     f"p-values) {kept} of this run's {r} rejections would stand.")
        return text

    def summary(self) -> str:
        names = {"behaviour": "behaviour", "arithmetic": "arithmetic/transcription", "hypothesis": "own hypotheses"}
        parts = []
        for kind, n in self.counts().items():
            total = sum(n.values())
            parts.append(f"{names[kind]} {total}: {n[CLAIM_REPRODUCED]} reproduced, {n[CLAIM_NOT_MET]} NOT MET, "
                         f"{n[CLAIM_FINDING]} findings, {n[NOT_ATTEMPTED]} not attempted")
        return f"{len(self.claims)} claims -- " + "; ".join(parts) + f" -> exit {self.exit_code()}"


def _row_meets(spec, row: Claim) -> tuple[bool, float | None, str, float | None]:
    """(met by the claim's rule, p-value, test, power) of one result row."""
    rule = spec.rule
    v = row.value
    if rule.type == "tolerance" and v is not None and math.isfinite(v):
        ref = spec.paper_value if isinstance(spec.paper_value, (int, float)) else row.paper_value
        if ref is not None:
            return abs(v - float(ref)) <= float(rule.threshold), None, "", None
    if rule.type == "bound" and rule.threshold is not None and v is not None and math.isfinite(v):
        t = float(rule.threshold)
        ok = {">": v > t, ">=": v >= t, "<": v < t, "<=": v <= t}[rule.direction]
        return ok, None, "", None
    if rule.type in _STATISTICAL:
        if row.p_value is not None:
            return True, float(row.p_value), row.test, row.power
        if rule.type in ("one-sided", "band") and v is not None and math.isfinite(v):
            se = row.se
            if se is None and row.interval and "95%" in row.interval.get("kind", "") \
                    and "one-sided" not in row.interval.get("kind", ""):
                se = R.se_from_interval(v, row.interval["low"], row.interval["high"], 0.95, row.dof)
            if se is not None:
                alpha = float(rule.level)
                if rule.type == "band":
                    t = R.band(v, se, row.dof, float(rule.low), float(rule.high), alpha=alpha)
                else:
                    t = R.one_sided(v, se, row.dof, float(rule.threshold), rule.direction, alpha=alpha,
                                    effect=rule.effect)
                return True, t.p, t.what, t.power
    return row.verdict == REPRODUCED, None, "", None


def evaluate(paper, rows: list[Claim]) -> Evaluation:
    """The claims of ``paper``'s claims file (a name, or a loaded
    :class:`~qosbound.reproduce.claimsfile.ClaimsFile`) judged on ``rows`` (see the module docstring)."""
    cf = F.load(paper) if isinstance(paper, str) else paper
    judged: dict[str, Judged] = {}
    raw: dict[str, tuple[bool, list]] = {}
    pvals: dict[str, float] = {}
    used: set[int] = set()
    for sp in cf.claims:
        if sp.not_attempted:
            judged[sp.id] = Judged(sp, NOT_ATTEMPTED, str(sp.not_attempted), [])
            continue
        mine = [r for r in rows if sp.matches(r.claim)]
        used.update(id(r) for r in mine)
        if not mine:
            judged[sp.id] = Judged(sp, NOT_ATTEMPTED, "this run produced no result for it (a mode that leaves it out)",
                                   [])
            continue
        checks = [(r, *_row_meets(sp, r)) for r in mine]
        ok_rows = [c[1] for c in checks]
        ps = [c[2] for c in checks if c[2] is not None]
        met = all(ok_rows) if sp.combine == "all" else any(ok_rows)
        j = Judged(sp, "", "", [(c[0], c[1]) for c in checks])
        if ps:
            if sp.combine == "all":       # intersection-union: every row's test must reject
                j.p_value = max(ps)
            else:                         # one of several candidates: Bonferroni within the claim
                j.p_value = min(1.0, len(ps) * min(ps))
            weakest = max((c for c in checks if c[2] is not None), key=lambda c: c[2])
            j.test, pws = weakest[3], [c[4] for c in checks if c[4] is not None]
            j.power = min(pws) if pws else None
            pvals[sp.id] = j.p_value
        raw[sp.id] = (met, checks)
        judged[sp.id] = j
    adjusted = R.holm(pvals, cf.family_level)
    level = cf.family_level
    for sid, (met, checks) in raw.items():
        j = judged[sid]
        if sid in adjusted:
            j.p_adjusted, rejected = adjusted[sid]
            met = met and rejected
        if met:
            j.verdict = CLAIM_REPRODUCED
            continue
        j.verdict = CLAIM_NOT_MET
        why = [c[0].evidence for c in checks if (not c[1] or c[0].verdict != REPRODUCED) and c[0].evidence]
        if sid in adjusted and not adjusted[sid][1]:
            pw = "" if j.power is None else f", power {100 * j.power:.0f} % at the stated effect"
            how = ("contradicted: the opposite one-sided test rejects" if j.p_value >= 1 - level else
                   "not shown at the family level")
            why.insert(0, f"{how}: p = {j.p_value:.3g}, Holm-adjusted {j.p_adjusted:.3g} > {level:g}{pw}")
        elif not why:
            why.append("the rule is not met: " + "; ".join(f"{c[0].claim}: {c[0].qosbound}" for c in checks
                                                            if not c[1]))
        j.reason = " | ".join(why)
    # findings: a claim not met whose cause is a reproduced hypothesis
    for j in judged.values():
        f = j.spec.finding
        if j.verdict != CLAIM_NOT_MET or not f:
            continue
        hyp = [judged[h] for h in f["tested_by"]]
        if all(h.verdict == CLAIM_REPRODUCED for h in hyp):
            j.verdict = CLAIM_FINDING
            j.reason = f"cause: {f['cause']} (tested: {', '.join(h.spec.id for h in hyp)} reproduced) | {j.reason}"
        else:
            tested = any(h.verdict == CLAIM_NOT_MET for h in hyp)
            j.reason += (f" | the named cause ({f['cause']}) is "
                         + ("not supported by its test: " if tested else "untested: ")
                         + ", ".join(f"{h.spec.id} {h.verdict}" for h in hyp))
    unlisted = [r for r in rows if id(r) not in used]
    return Evaluation(cf.paper, cf.title, cf.family_level, [judged[s.id] for s in cf.claims], unlisted, list(rows),
                      F.statistical_claims())


def report_document(ev: Evaluation, **extra) -> dict:
    """The ``--json`` document (its shape: ``docs/results.md``)."""
    return {"paper": ev.paper, "title": ev.title, "claims_file": f"qosbound/data/claims/{ev.paper}.yaml",
            "claims": [j.to_dict() for j in ev.claims], "result_rows": [r.to_dict() for r in ev.rows],
            "unlisted_rows": [r.to_dict() for r in ev.unlisted],
            "verdicts": CLAIM_VERDICTS, "row_verdicts": VERDICTS, "kinds": KINDS, "rule_types": RULE_TYPES,
            "counts": ev.counts(),
            "multiple_testing": {"method": "Holm-Bonferroni", "family_level": ev.family_level, "tests": ev.tests(),
                                 "five_papers_tests": ev.across,
                                 "five_papers_rejections_kept": ev.rejections()[1] if ev.across else None,
                                 "statement": ev.multiple_testing()},
            "summary": ev.summary(), "exit_code": ev.exit_code(), **extra}


def print_report(title: str, ev: Evaluation, file=None) -> None:
    """One table per kind of claim -- one row per claim, its result rows beneath it -- then the notes, the
    multiple-testing statement and the summary."""
    from rich.markup import escape  # rich: a costly import, needed only for the terminal table
    from rich.table import Table

    con = reporting.console(file)
    notes: list[str] = []

    def note(text: str) -> str:
        if text not in notes:
            notes.append(text)
        return f"[{notes.index(text) + 1}]"

    style = {CLAIM_REPRODUCED: "green", CLAIM_FINDING: "yellow", CLAIM_NOT_MET: "bold red", NOT_ATTEMPTED: "dim"}
    con.print(f"{title} (claims file qosbound/data/claims/{ev.paper}.yaml)", highlight=False, markup=False, soft_wrap=True)
    for kind, what in KINDS.items():
        mine = [j for j in ev.claims if j.spec.kind == kind]
        if not mine:
            continue
        con.print(f"\n== {what} ({len(mine)}) ==", highlight=False, markup=False, soft_wrap=True)
        t = Table()
        t.add_column("claim (where)", min_width=len("claim (where)"))
        t.add_column("paper", justify="right")
        t.add_column("qosbound", justify="right")
        t.add_column("verdict")
        for j in mine:
            sp = j.spec
            refs = note(f"rule ({sp.rule.type}): {sp.rule.text}")
            if j.p_value is not None:
                pw = "" if j.power is None else f", power {100 * j.power:.0f} %"
                refs += " " + note(f"{j.test}: p = {j.p_value:.3g}, Holm-adjusted {j.p_adjusted:.3g}{pw}")
            if j.reason:
                refs += " " + note({CLAIM_FINDING: "finding: ", NOT_ATTEMPTED: "not attempted: "}.get(j.verdict, "why: ")
                                   + j.reason)
            paper = "" if sp.paper_value is None else str(sp.paper_value)
            rows = j.rows or []
            if len(rows) == 1:
                paper, shown = rows[0][0].paper, rows[0][0].qosbound
            else:
                shown = "" if not rows else f"{sum(ok for _, ok in rows)} of {len(rows)} results meet the rule"
            t.add_row(escape(f"{sp.id}: {sp.claim} ({sp.where})"), escape(paper), escape(shown),
                      f"[{style[j.verdict]}]{escape(j.verdict)}[/{style[j.verdict]}] {escape(refs)}")
            if len(rows) > 1:
                for r, ok in rows:
                    t.add_row(escape(f"  - {r.claim}"), escape(r.paper), escape(r.qosbound),
                              "meets the rule" if ok else "fails the rule")
        con.print(t)
    if ev.unlisted:
        con.print("Results no claim of the claims file names: " + "; ".join(r.claim for r in ev.unlisted),
                  highlight=False, markup=False, soft_wrap=True)
    for i, text in enumerate(notes, 1):
        con.print(f"  [{i}] {text}", highlight=False, markup=False, soft_wrap=True)
    con.print(ev.multiple_testing(), highlight=False, markup=False, soft_wrap=True)
    con.print(ev.summary(), highlight=False, markup=False, soft_wrap=True)


def report(paper: str, title: str, rows: list[Claim], as_json: bool, **extra) -> int:
    """Judge ``rows`` against ``paper``'s claims file, print the report (text or ``--json``), return the exit
    code."""
    ev = evaluate(paper, rows)
    if as_json:
        print(json.dumps(report_document(ev, **extra), indent=2, allow_nan=False, default=_json_default))
    else:
        print_report(title, ev)
    return ev.exit_code()


def _json_default(x):
    if isinstance(x, float):
        return None
    return str(x)
