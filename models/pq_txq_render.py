"""The PQ + TxQ system (Ferrari et al. 2001) rendered as a PRISM-language DTMC from a template.

Model (``models/templates/pq_txq.prism``): slotted time, one slot = the time to
send one *granule* (the gcd of all packet sizes, or a coarser size when that
gives too many granules; sizes are then rounded up and the rounding is
reported). Because best effort is saturated, the line never idles and the TxQ
content changes only at slot boundaries, so the DTMC observed at slot starts is
exact for Poisson, CBR and Bernoulli EF arrivals alike; only the arrival count
per slot differs. :mod:`qosbound.models.pq_txq_delay` turns Storm's stationary
distribution of the rendered model into the EF delay distribution.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import reduce
from pathlib import Path
from string import Template

import numpy as np
from scipy import special

from qosbound.errors import ScenarioError
from qosbound.models.engine import MODELS_DIR

__all__ = ["Layout", "layout", "Rendered", "render", "write_files", "poisson_excess", "PROPS_TEXT", "TEMPLATE", "TINY"]

TEMPLATE = MODELS_DIR / "templates" / "pq_txq.prism"

PROPS_TEXT = """\
// Properties of the PQ + TxQ DTMC (models/pq_txq.prism). Time averages over slots are
// long-run rewards divided by "tick" (the long-run fraction of steps that are slots).
"tick": S=? [ ph=0 ]                      // fraction of DTMC steps that are slots
"ef_in_system": R{"ef_in_system"}=? [ S ] // EF in system per step; / tick = mean EF count at slot starts
"ef_lost": R{"ef_lost"}=? [ S ]           // EF lost per step; / (tick * arrivals per slot) = loss probability
"ef_accepted": R{"ef_accepted"}=? [ S ]   // EF accepted per step; with ef_in_system gives the mean delay (Little)
"pq_full": S=? [ "pq_at_capacity" ]       // / tick = probability that a slot starts with a full PQ
"occupancy": R{"occupancy"}=? [ S ]       // / tick = mean occupied TxQ units at slot starts
"""


@dataclass
class Rendered:
    """A rendered model and the numbers needed to interpret its states."""

    text: str
    granule: int  # bytes
    slot: float  # seconds
    ef_gran: int
    ef_units: int
    be_gran: list[int]
    be_units: list[int]
    be_probs: list[float]
    arrivals: str
    a: float  # mean EF arrivals per slot
    cbr: tuple[int, int] | None  # (P, Q): a = P/Q
    QT: int
    PQ: int
    rounded: bool
    truncated_mass: float = 0.0  # probability per slot of the arrival outcomes left out (each < TINY)

    @property
    def kinds_gran(self) -> np.ndarray:
        """Granules by packet kind code (0 empty, 1 EF, 2.. BE classes)."""
        return np.array([0, self.ef_gran] + self.be_gran, dtype=np.int64)

    @property
    def kinds_units(self) -> np.ndarray:
        return np.array([0, self.ef_units] + self.be_units, dtype=np.int64)


def _as_int_bytes(x: float, what: str, field: str) -> int:
    if abs(x - round(x)) > 1e-9:
        raise ScenarioError(f"{what} must be a whole number of bytes for the model, got {x:g}", field=field)
    return int(round(x))


def _granule(sizes: list[int], requested, max_granules: int) -> tuple[int, bool]:
    if requested != "auto":
        g = _as_int_bytes(float(requested), "the granule", "granule")
        if g <= 0:
            raise ScenarioError("granule must be positive", field="granule")
        return g, any(s % g for s in sizes)
    g = reduce(math.gcd, sizes)
    if max(sizes) // g <= max_granules:
        return g, False
    g = math.ceil(max(sizes) / max_granules)
    return g, any(s % g for s in sizes)


# Smallest probability or reward written into a model (see render): well inside the normal doubles.
TINY = 1e-300


def _fmt(x: float) -> str:
    return repr(float(x))


@dataclass(frozen=True)
class Layout:
    """The chain's numbers before any text is written: granule, per-kind units and granules, CBR ratio."""

    granule: int  # bytes
    rounded: bool  # sizes rounded up to whole granules
    ef: int  # EF size, bytes
    be: list[int]  # BE sizes, bytes
    gef: int
    gbe: list[int]
    kef: int
    kbe: list[int]
    slot: float  # seconds
    a: float  # mean EF arrivals per slot
    cbr: tuple[int, int] | None  # (P, Q): a = P/Q

    @property
    def credits(self) -> int:
        """Values of the CBR credit counter (1 without CBR)."""
        return self.cbr[1] if self.cbr else 1


def layout(p, opts) -> Layout:
    """Granule, units and granules per packet kind, arrivals per slot for parameters ``p``; a ScenarioError names
    the parameter at fault by its attribute of ``p`` (or ``granule`` of ``opts``)."""
    if getattr(p, "be_rate", None) is not None:
        # The chain is observed at slot starts, exact only while the line never idles (saturated best effort).
        raise ScenarioError("the PRISM model covers saturated best effort only; with a BE load the line may idle "
                            "and the slot-start chain is not exact", field="be_rate")
    ef = _as_int_bytes(p.ef_size, "the EF size", "ef_size")
    be = [_as_int_bytes(s, "a BE size", "be_sizes") for s in p.be_sizes]
    g, rounded = _granule([ef] + be, getattr(opts, "granule", "auto"), getattr(opts, "max_granules", 64))
    slot = g * 8.0 / p.C
    a = p.lam * slot
    cbr = None
    if p.arrivals == "bernoulli" and a > 1:
        raise ScenarioError(f"Bernoulli arrivals need at most one EF packet per {g}-byte slot; rate gives {a:.3g}",
                            field="arrivals")
    if p.arrivals == "cbr":
        fr = Fraction(a).limit_denominator(1000)
        if abs(float(fr) - a) > 1e-9 * a:
            raise ScenarioError(f"CBR arrivals per slot ({a:.12g}) are not a ratio of small integers; the model "
                                "needs a rational rate (or use arrivals: poisson)", field="ef_rate")
        cbr = (fr.numerator, fr.denominator)
    return Layout(g, rounded, ef, be, math.ceil(ef / g), [math.ceil(s / g) for s in be],
                  math.ceil(ef / p.unit - 1e-12), [int(math.ceil(s / p.unit - 1e-12)) for s in be], slot, a, cbr)


def render(p, opts, scenario_name: str = "") -> Rendered:
    """Render the PRISM model for scenario parameters ``p`` (a :class:`qosbound.systems.pq_txq.params.Params`).

    A ScenarioError names the parameter at fault by its attribute of ``p`` (or ``granule`` of ``opts``)."""
    lay = layout(p, opts)
    ef, g, rounded = lay.ef, lay.granule, lay.rounded
    gef, gbe, kef, kbe = lay.gef, lay.gbe, lay.kef, lay.kbe
    slot, a, cbr = lay.slot, lay.a, lay.cbr
    QT, PQ, K = p.Q_t, p.pq_cap, len(lay.be)
    N = QT  # at most QT packets: each takes >= 1 unit and the fill stops at QT units
    be_consts, probs = _be_constants(p, lay)
    txq = _txq_formulas(N, K)
    arr = _arrivals(p, a, cbr, PQ)
    tick_commands, fill_ef, fill_be = _commands(arr.outcomes, N, K)
    gmax = max([gef] + gbe)
    rounding = "" if not rounded else " (sizes rounded UP to whole granules: the model's times are upper estimates)"
    text = Template(TEMPLATE.read_text()).substitute(
        scenario=scenario_name or "(unnamed)", granule_bytes=g, slot_us=f"{slot * 1e6:.6g}",
        link=f"{p.C:g} bit/s", rounding=rounding, arrivals=p.arrivals, cbr_state_doc=arr.cbr_doc,
        QT=QT, PQ=PQ, GMAX=gmax, unit_bytes=f"{p.unit:g}", KEF=kef, GEF=gef, ef_bytes=ef,
        be_consts="\n".join(be_consts), arrival_consts="\n".join(arr.consts), **txq, cbr_decl=arr.cbr_decl,
        tick_commands=tick_commands, fill_ef_commands="\n".join(fill_ef), fill_be_commands="\n".join(fill_be),
        lost_rewards=arr.lost_rewards, accepted_rewards=arr.accepted_rewards)
    return Rendered(text, g, slot, gef, kef, gbe, kbe, probs, p.arrivals, a, cbr, QT, PQ, rounded, arr.truncated)


def _be_constants(p, lay: Layout) -> tuple[list[str], list[float]]:
    """The BE classes' constants (units, granules, probabilities; the last probability the complement of the
    others, so they sum to one exactly) and the probabilities as floats."""
    be, g, gbe, kbe = lay.be, lay.granule, lay.gbe, lay.kbe
    K = len(be)
    be_consts = []
    for i in range(K):
        be_consts.append(f"const int KB{i + 1} = {kbe[i]};   // units of BE class {i + 1} (code {i + 2}, "
                         f"{be[i]} bytes{', rounded up to ' + str(gbe[i] * g) + ' in time' if gbe[i] * g != be[i] else ''})")
        be_consts.append(f"const int GB{i + 1} = {gbe[i]};   // granules of BE class {i + 1}")
    probs = [float(x) for x in p.be_probs]
    for i in range(K):
        if i < K - 1:
            be_consts.append(f"const double PB{i + 1} = {_fmt(probs[i])};   // probability of BE class {i + 1}")
        else:
            rest = " - ".join(f"PB{j + 1}" for j in range(K - 1))
            be_consts.append(f"const double PB{K} = {'1 - ' + rest if rest else '1'};   // probability of BE "
                             f"class {K} ({_fmt(probs[i])})")
    return be_consts, probs


def _txq_formulas(N: int, K: int) -> dict[str, str]:
    """The TxQ's formulas and slot variables for ``N`` packet slots and ``K`` BE classes (template fields)."""
    kinds = [(1, "KEF", "GEF")] + [(i + 2, f"KB{i + 1}", f"GB{i + 1}") for i in range(K)]

    def kind_sum(slot_i: int, which: int) -> str:
        terms = [f"(s{slot_i}={code}?{(u if which == 0 else gg)}:0)" for code, u, gg in kinds]
        return " + ".join(terms)

    unit_formulas = []
    for i in range(1, N + 1):
        unit_formulas.append(f"formula u{i} = {kind_sum(i, 0)};   // units of packet {i}")
        unit_formulas.append(f"formula g{i} = {kind_sum(i, 1)};   // granules of packet {i}")
    return dict(unit_formulas="\n".join(unit_formulas),
                occ_sum=" + ".join(f"u{i}" for i in range(1, N + 1)),
                npk_sum=" + ".join(f"(s{i}>0?1:0)" for i in range(1, N + 1)),
                nef_sum=" + ".join(f"(s{i}=1?1:0)" for i in range(1, N + 1)),
                work_tail="".join(f" + g{i}" for i in range(2, N + 1)),
                slot_decls="\n".join(f"  s{i} : [0..{K + 1}] init 0;   // packet {i} of the TxQ"
                                     for i in range(1, N + 1)))


@dataclass(frozen=True)
class _Arrivals:
    """The EF arrivals per slot as model text: constants, the tick's outcomes (probability, update), the lost and
    accepted rewards, the CBR credit's declaration and doc line, and the probability left out."""

    consts: list
    outcomes: list
    lost_rewards: str
    accepted_rewards: str
    cbr_decl: str
    cbr_doc: str
    truncated: float


def _arrivals(p, a: float, cbr, PQ: int) -> _Arrivals:
    """EF arrivals per slot: Poisson (truncated below TINY), Bernoulli, or CBR by a credit counter."""
    if p.arrivals == "poisson":
        return _poisson_arrivals(a, PQ)
    if p.arrivals == "bernoulli":
        return _Arrivals([f"const double AEF = {_fmt(a)};   // P(an EF packet arrives in a slot) (Bernoulli)"],
                         [("1-AEF", "(pq'=pq)"), ("AEF", "(pq'=min(PQ,pq+1))")],
                         "  ph=0 & pq=PQ : AEF;", "  ph=0 & pq<PQ : AEF;", "", "", 0.0)
    P_, Q_ = cbr
    return _Arrivals([f"const int CP = {P_};   // CBR: EF arrivals per slot = CP/CQ = {_fmt(a)}",
                      f"const int CQ = {Q_};   // CBR credit resolution (credit counter c in 0..CQ-1)"],
                     [("1", "(pq'=min(PQ,pq+floor((c+CP)/CQ)))&(c'=mod(c+CP,CQ))")],
                     "  ph=0 : max(0, floor((c+CP)/CQ) - (PQ-pq));", "  ph=0 : min(floor((c+CP)/CQ), PQ-pq);",
                     "  c  : [0..CQ-1] init 0;   // CBR credit: the next arrival comes when c+CP*u reaches CQ\n",
                     "//        c      CBR credit in 1/CQ of a packet: the slot's arrivals come at u = (i*CQ - c)/CP,"
                     " i = 1, 2, ... (u in (0,1])", 0.0)


def _poisson_arrivals(a: float, PQ: int) -> _Arrivals:
    """Poisson arrivals: P(k arrivals) for k < PQ and the tail P(>= PQ); the most probable outcome's constant is
    written as the complement of the others, so the distribution sums to one exactly (also in exact arithmetic)
    and no constant goes negative through rounding."""
    k_ = np.arange(PQ)
    pa = list(np.exp(-a + k_ * math.log(a) - special.gammaln(k_ + 1))) + [float(special.gammainc(PQ, a))]
    mode = int(np.argmax(pa))
    # Probabilities below TINY are left out (their mass goes to the complement): Storm evaluates constants
    # as rationals and its expression evaluator rejects subnormal doubles. The mass left out is reported.
    dropped = [k for k in range(PQ + 1) if k != mode and pa[k] < TINY]
    truncated = math.fsum(pa[k] for k in dropped) + sum(5e-324 for k in dropped if pa[k] == 0.0)
    kept = [k for k in range(PQ + 1) if k not in dropped]
    arrival_consts = [f"const double AEF = {_fmt(a)};   // mean EF arrivals per slot (Poisson), lambda * slot"]
    if dropped:
        arrival_consts.append(f"// P(k arrivals) for k in {{{', '.join(map(str, dropped[:3]))}{', ...' if len(dropped) > 3 else ''}}}"
                              f" ({len(dropped)} outcomes, each < {TINY:g}, {truncated:.3g} in total) is left out")
    for k in [j for j in kept if j != mode] + [mode]:  # the complement is declared last
        what = f"P({k} arrivals in a slot)" if k < PQ else f"P(>= {PQ} arrivals in a slot): fills the PQ"
        if k == mode:
            rest = " + ".join(f"PA{j}" for j in kept if j != mode) or "0"
            arrival_consts.append(f"const double PA{k} = 1 - ({rest});   // {what} = {_fmt(pa[k])}")
        else:
            arrival_consts.append(f"const double PA{k} = {_fmt(pa[k])};   // {what}")
    outcomes = [(f"PA{k}", f"(pq'=min(PQ,pq+{k}))") for k in kept]
    lost = [poisson_excess(a, PQ - n) for n in range(PQ + 1)]
    acc = [a - x for x in lost]
    truncated += math.fsum(x for x in lost if 0 < x < TINY)
    lost_rewards = "\n".join(f"  ph=0 & pq={n} : {_fmt(lost[n])};" for n in range(PQ + 1) if lost[n] >= TINY)
    accepted_rewards = "\n".join(f"  ph=0 & pq={n} : {_fmt(acc[n])};" for n in range(PQ + 1) if acc[n] > 0)
    return _Arrivals(arrival_consts, outcomes, lost_rewards, accepted_rewards, "", "", truncated)


def _commands(outcomes: list, N: int, K: int) -> tuple[str, list[str], list[str]]:
    """The tick commands (a granule leaves; the head packet departs and the FIFO shifts) and the fill commands
    (EF from the PQ first, else a BE packet of each class by its probability)."""
    def tick(extra: str) -> str:
        return " + ".join(f"{pr}:{upd}&{extra}" for pr, upd in outcomes) if len(outcomes) > 1 else \
            f"{outcomes[0][1]}&{extra}"

    shift = "&".join([f"(s{i}'=s{i + 1})" for i in range(1, N)] + [f"(s{N}'=0)"]) if N > 1 else "(s1'=0)"
    new_head_r = "g2" if N > 1 else "0"
    dec = tick("(r'=r-1)")
    dep = tick(shift + f"&(r'={new_head_r})&(ph'=(occ_after<QT?1:0))")
    tick_commands = "\n".join([
        f"  [] ph=0 & r>1 -> {dec};",
        "  // The head packet's last granule leaves: its units are freed, the FIFO shifts, EF arrivals join the PQ.",
        f"  [] ph=0 & r=1 -> {dep};",
    ])
    fill_ef, fill_be = [], []
    for n in range(N):
        set_r = "&(r'=GEF)" if n == 0 else ""
        fill_ef.append(f"  [] ph=1 & occ<QT & npk={n} & pq>0 -> (s{n + 1}'=1)&(pq'=pq-1)"
                       f"&(ph'=(occ+KEF<QT?1:0)){set_r};")
        terms = []
        for i in range(K):
            set_rb = f"&(r'=GB{i + 1})" if n == 0 else ""
            terms.append(f"PB{i + 1}:(s{n + 1}'={i + 2})&(ph'=(occ+KB{i + 1}<QT?1:0)){set_rb}")
        body = " + ".join(terms) if K > 1 else terms[0].split(":", 1)[1]
        fill_be.append(f"  [] ph=1 & occ<QT & npk={n} & pq=0 -> {body};")
    return tick_commands, fill_ef, fill_be


def poisson_excess(a: float, m: int) -> float:
    """E[(A - m)^+] for A ~ Poisson(a): expected arrivals beyond the first m."""
    if m <= 0:
        return a - m
    k = np.arange(m)
    pmf = np.exp(-a + k * np.log(a) - special.gammaln(k + 1)) if a > 0 else (k == 0).astype(float)
    return float(a - m + np.sum((m - k) * pmf))


def write_files(rendered: Rendered, out_dir: str | Path, stem: str = "pq_txq") -> tuple[Path, Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    mp = out / f"{stem}.prism"
    pp = out / f"{stem}.props"
    mp.write_text(rendered.text)
    pp.write_text(PROPS_TEXT)
    return mp, pp
