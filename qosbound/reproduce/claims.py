"""The claim table and exit code shared by every ``qosbound reproduce`` target.

Each target checks a list of the paper's claims. A :class:`Claim` holds, for one claim, the
paper's value, qosbound's value (with units, and the confidence interval for a simulated
value), the rule that decides it and one verdict:

``reproduced``
    qosbound's value meets the paper's claim under the stated rule (a tolerance set by the
    paper's printed precision, or a statistical test on simulated values).
``finding (differs from the paper)``
    qosbound finds something else than the paper, and that difference is a documented
    finding: the row states the evidence and the most likely cause. The row is still checked:
    it keeps this verdict only while qosbound's result is the one the finding documents.
``NOT MET``
    qosbound's value does not meet the claim, or no longer shows a documented finding: a
    regression (or a changed model) to look into. Any such row makes the command exit 1.

:func:`exit_code` is the command's exit code (0, or 1 when a claim is not met);
:func:`print_table` prints the rows as ``claim | paper | qosbound | verdict`` with the rules and
findings as numbered notes; :func:`document` is the ``--json`` form (the same rows).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

__all__ = ["curve_lines", "Claim", "REPRODUCED", "FINDING", "NOT_MET", "VERDICTS", "EXIT_MET", "EXIT_NOT_MET",
           "judge", "compare", "interval", "exit_code", "print_table", "document", "summary"]

REPRODUCED = "reproduced"
FINDING = "finding (differs from the paper)"
NOT_MET = "NOT MET"

#: Every verdict and what it means (printed in ``--json`` output).
VERDICTS = {
    REPRODUCED: "qosbound's value meets the paper's claim under the stated rule",
    FINDING: "qosbound finds otherwise than the paper; a documented finding, with its evidence and most "
             "likely cause; checked on every run (it turns NOT MET when qosbound no longer shows it)",
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

    @property
    def met(self) -> bool:
        return self.verdict != NOT_MET

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("paper_value", "value"):
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
        return f"{x * scale:.{d}f} {show}".rstrip() if shown_unit is not None else _fmt(x, unit, d)

    rule = rule or f"|qosbound - paper| <= {tolerance * scale:g} {show}".rstrip()
    shown_paper = txt(paper_value, digits if paper_digits is None else paper_digits)
    return judge(claim, source, shown_paper, txt(value), ok, rule, paper_value=paper_value, value=value,
                 unit=unit, failure=f"differs by {(value - paper_value) * scale:+.4g} {show}".rstrip())


def interval(low: float, high: float, kind: str) -> dict:
    """The ``interval`` of a claim: e.g. ``interval(lo, hi, "95% CI")``."""
    return {"low": float(low), "high": float(high), "kind": kind}


def _fmt(x: float | None, unit: str, digits: int = 4) -> str:
    from qosbound.units import format_quantity

    return format_quantity(x, unit, digits)


def with_interval(value: float, unit: str, iv: dict | None, digits: int = 4) -> str:
    """``'404.5 kbit/s [401.2 kbit/s, 407.8 kbit/s] 95% CI'``."""
    s = _fmt(value, unit, digits)
    if iv:
        s += f" [{_fmt(iv['low'], unit, digits)}, {_fmt(iv['high'], unit, digits)}] {iv['kind']}"
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
    from rich.markup import escape
    from rich.table import Table

    from qosbound.report import console

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
    con = console(file)
    con.print(t)
    for i, text in enumerate(notes, 1):
        con.print(f"  [{i}] {text}", highlight=False, markup=False)
    con.print(summary(claims), highlight=False, markup=False)


def document(paper: str, claims: list[Claim], **extra) -> dict:
    """The ``--json`` form: the same rows, the verdict legend and the exit code, plus target-specific data."""
    return {"paper": paper, "claims": [c.to_dict() for c in claims], "verdicts": VERDICTS,
            "summary": summary(claims), "exit_code": exit_code(claims), **extra}
