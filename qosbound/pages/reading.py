"""Reading the commands' JSON documents for people: which SLOs fail, which verdict decided each, what comes
first, which results belong to which class or flow, and what each says about a delay distribution.

Everything here works on the documents (``--json``), not on the objects behind them, so a page can be made for
any system and any command whose document follows docs/results.md. The rules:

* **An SLO's outcome** is the one ``verify`` counts (:func:`qosbound.report.slo_outcomes`): it fails when a
  verdict on it fails, is inconclusive when a confidence interval straddles its limit, else holds.
* **The deciding verdict** of an SLO is the one its outcome rests on: a failing verdict when it fails (the
  furthest past the limit), else an inconclusive one, else the verdict nearest the limit (the smallest slack
  relative to the limit). The others are shown beside it.
* **What fails first**: SLOs in the order violated or not judged, inconclusive, holding; within each, by their
  slack relative to the limit, smallest first. Scenarios by their exit code's seriousness (that of a batch:
  70, 2, 4, 1, 3, 0), then by their tightest SLO. Agreement checks: disagreements, then approximations, then
  agreements.
* **A subject** is what a metric is about: the first part of its name (a class ``EF``, a flow ``voip-ab``);
  an estimate of another metric (``estimates``) belongs to that metric's subject.
* **A delay family** is the prefix before ``.delay.`` (``EF.delay``, ``voice.delay``); the points of its CCDF
  ``P(delay > x)`` are read from its results: ``ccdf@t`` gives ``(t, value)``, a quantile ``pQ`` gives
  ``(value, 1 - Q)``, and ``max`` of upper-bound kind says the CCDF is 0 beyond it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from qosbound.metric_names import parse_ccdf_name, parse_quantile_name
from qosbound.anchors import scenario_anchor, slo_anchor
from qosbound.report import slo_outcomes
from qosbound.results import Verdict

__all__ = ["SEVERITY", "EXIT_MEANING", "SloRow", "ScenarioView", "CcdfPoint", "SloLimit", "Family",
           "relative_margin", "slo_rows", "sorted_agreements", "subject_of", "family_of", "scenario_view",
           "families", "is_failing_code"]

#: Exit codes from the most to the least serious (a batch exits with the first any scenario has).
SEVERITY = (70, 2, 4, 1, 3, 0)

#: What each exit code means, in the words of the README.
EXIT_MEANING = {0: "every SLO holds and the methods agree", 1: "an SLO is violated", 2: "bad input",
                3: "every SLO holds, but two methods disagree", 4: "a resource limit was reached",
                70: "internal error", 130: "interrupted", 143: "terminated"}

_STATUS_RANK = {"violated": 0, "missing": 0, "inconclusive": 1, "holds": 2}
_AGREE_RANK = {"disagree": 0, "approximate": 1, "agree": 2}
_VERDICT_FIELDS = {f.name for f in dataclasses.fields(Verdict)}


def is_failing_code(code) -> bool:
    return code not in (0, None)


def _severity(code) -> int:
    return SEVERITY.index(code) if code in SEVERITY else -1  # an unknown code ranks first


def relative_margin(v: dict) -> float:
    """A verdict's slack relative to its limit (the slack itself when the limit is 0); -inf when it has none
    (a metric no method produced)."""
    m, lim = v.get("margin"), v.get("limit")
    if m is None:
        return -math.inf
    return m / abs(lim) if lim else m


@dataclass
class SloRow:
    """One SLO: its outcome, the verdict that decided it and the others (one per method)."""

    name: str
    metric: str
    status: str  # violated, missing, inconclusive, holds
    deciding: dict
    verdicts: list[dict]  # every method's verdict, the deciding one first
    anchor: str

    @property
    def failed(self) -> bool:
        return self.status in ("violated", "missing")

    @property
    def bound(self) -> str:
        return self.deciding.get("bound") or ""

    @property
    def limit(self):
        return self.deciding.get("limit")

    @property
    def unit(self) -> str:
        return self.deciding.get("unit") or ""

    @property
    def sort_key(self) -> tuple:
        return (_STATUS_RANK.get(self.status, 0), relative_margin(self.deciding))


def _deciding_first(vs: list[dict]) -> list[dict]:
    def key(v):
        st = v.get("status")
        rank = 0 if st in ("violated", "missing") else 1 if st == "inconclusive" else 2
        return (rank, relative_margin(v))

    return sorted(vs, key=key)


def slo_rows(slo_verdicts: list[dict], suite: str) -> list[SloRow]:
    """The SLOs of one scenario, what fails first (see the module docstring)."""
    objs = [Verdict(**{k: v for k, v in d.items() if k in _VERDICT_FIELDS}) for d in slo_verdicts]
    by_obj = {id(o): d for o, d in zip(objs, slo_verdicts)}
    rows = []
    for name, status, vs in slo_outcomes(objs):
        docs = _deciding_first([by_obj[id(v)] for v in vs])
        rows.append(SloRow(name, docs[0].get("metric", ""), status, docs[0], docs, slo_anchor(suite, name)))
    return sorted(rows, key=lambda r: r.sort_key)


def sorted_agreements(agreements: list[dict]) -> list[dict]:
    """Disagreements first, then approximations, then agreements (each group in document order)."""
    return sorted(agreements, key=lambda v: _AGREE_RANK.get(v.get("status"), 0))


def subject_of(metric: dict | str) -> str:
    """The class or flow a result is about (see the module docstring)."""
    name = metric if isinstance(metric, str) else (metric.get("estimates") or metric.get("metric") or "")
    return name.split(".", 1)[0]


def family_of(name: str) -> tuple[str, str] | None:
    """('EF.delay', 'p99') for 'EF.delay.p99'; None for a metric that is not a delay statistic."""
    head, sep, stat = name.rpartition(".delay.")
    if not sep or not head:
        return None
    return f"{head}.delay", stat


@dataclass
class CcdfPoint:
    """A point a result gives of its family's CCDF: ``y = P(delay > x)``; ``x_low/x_high`` an interval on x (a
    quantile), ``y_low/y_high`` one on y (a CCDF value)."""

    x: float
    y: float
    method: str
    label: str  # the result's kind label: 'upper bound', '95% CI', 'numerical'...
    kind: str
    metric: str
    x_low: float | None = None
    x_high: float | None = None
    y_low: float | None = None
    y_high: float | None = None


@dataclass
class SloLimit:
    """An SLO drawn on a CCDF: the CCDF must stay at or below ``y`` from ``x`` on (``y`` 0: the maximum)."""

    name: str
    x: float
    y: float
    status: str


@dataclass
class Family:
    """What a scenario's document says about one delay distribution."""

    name: str  # 'EF.delay'
    points: list[CcdfPoint] = field(default_factory=list)
    curves: list[dict] = field(default_factory=list)
    max_bounds: list[CcdfPoint] = field(default_factory=list)  # upper bounds on the maximum: CCDF 0 beyond
    limits: list[SloLimit] = field(default_factory=list)
    not_drawn: list[str] = field(default_factory=list)  # SLOs on this delay that are no point of its CCDF

    @property
    def drawable(self) -> bool:
        """A CCDF can be drawn: a curve or at least one point of it."""
        return bool(self.curves or self.points)


def families(doc: dict, rows: list[SloRow]) -> list[Family]:
    """The delay families of a scenario's document, in the order their results come."""
    out: dict[str, Family] = {}

    def fam(name: str) -> Family:
        return out.setdefault(name, Family(name))

    for r in doc.get("metrics") or []:
        got = family_of(r.get("estimates") or r.get("metric") or "")
        if got is None or r.get("value") is None:
            continue
        name, stat = got
        iv = r.get("interval") or {}
        label, kind = iv.get("label") or r.get("kind") or "", r.get("kind") or ""
        t = parse_ccdf_name(stat)
        q = parse_quantile_name(stat)
        if t is not None:
            fam(name).points.append(CcdfPoint(t, r["value"], r["method"], label, kind, r["metric"],
                                              y_low=iv.get("low"), y_high=iv.get("high")))
        elif q is not None:
            fam(name).points.append(CcdfPoint(r["value"], 1.0 - q, r["method"], label, kind, r["metric"],
                                              x_low=iv.get("low"), x_high=iv.get("high")))
        elif stat == "max" and kind == "upper bound":
            fam(name).max_bounds.append(CcdfPoint(r["value"], 0.0, r["method"], label, kind, r["metric"]))
    for c in doc.get("curves") or []:
        got = family_of(c.get("metric") or "")
        if got is not None and got[1] == "ccdf" and c.get("x"):
            fam(got[0]).curves.append(c)
    for row in rows:
        got = family_of(row.metric)
        if got is None or got[0] not in out:
            continue
        name, stat = got
        t, q = parse_ccdf_name(stat), parse_quantile_name(stat)
        lim = row.limit
        if row.bound != "max" or lim is None:
            out[name].not_drawn.append(row.name)
        elif stat == "max":
            out[name].limits.append(SloLimit(row.name, lim, 0.0, row.status))
        elif q is not None:
            out[name].limits.append(SloLimit(row.name, lim, 1.0 - q, row.status))
        elif t is not None:
            out[name].limits.append(SloLimit(row.name, t, lim, row.status))
        else:
            out[name].not_drawn.append(row.name)
    return list(out.values())


@dataclass
class ScenarioView:
    """One scenario's document, read: its SLO rows and agreement checks in the order of what fails first, its
    results by subject, its delay families."""

    doc: dict
    name: str
    suite: str
    anchor: str
    exit_code: int | None
    error: str | None
    rows: list[SloRow]
    agreements: list[dict]
    subjects: dict[str, list[dict]]
    families: list[Family]

    @property
    def failed_slos(self) -> int:
        return sum(r.failed for r in self.rows)

    @property
    def tightest(self) -> SloRow | None:
        return self.rows[0] if self.rows else None

    @property
    def sort_key(self) -> tuple:
        m = relative_margin(self.rows[0].deciding) if self.rows else math.inf
        return (_severity(self.exit_code), m)


def scenario_view(doc: dict) -> ScenarioView:
    """Read one scenario's document (``plan``/``verify --json``, or one entry of a batch's ``scenarios``)."""
    name = str(doc.get("scenario") if doc.get("scenario") is not None else doc.get("file") or "scenario")
    suite = str(doc.get("suite") or name)
    rows = slo_rows(doc.get("slo_verdicts") or [], suite)
    subjects: dict[str, list[dict]] = {}
    for r in doc.get("metrics") or []:
        subjects.setdefault(subject_of(r), []).append(r)
    return ScenarioView(doc, name, suite, scenario_anchor(suite), doc.get("exit_code"), doc.get("error"), rows,
                        sorted_agreements(doc.get("agreement_verdicts") or []), subjects, families(doc, rows))
