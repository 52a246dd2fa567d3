"""The PQ + TxQ system (Ferrari et al. 2001) as a PRISM-language DTMC, rendered from a template and solved on Storm.

Model (``models/templates/pq_txq.prism``): slotted time, one slot = the time to
send one *granule* (the gcd of all packet sizes, or a coarser size when that
gives too many granules; sizes are then rounded up and the rounding is
reported). Because best effort is saturated, the line never idles and the TxQ
content changes only at slot boundaries, so the DTMC observed at slot starts is
exact for Poisson, CBR and Bernoulli EF arrivals alike; only the arrival count
per slot differs.

EF delay (tagged-arrival construction). EF is FIFO among itself, no BE packet
enters the TxQ while an EF packet waits, and the line never idles, so an EF
packet arriving a fraction ``u`` into a slot that started in a state with
``w`` granules of TxQ work and ``n`` EF packets in the PQ, after ``j`` earlier
EF arrivals in the same slot, leaves after exactly

    D = (w - u + (n + j + 1) * GEF) slots,

and is accepted iff ``n + j < PQ``. The delay distribution is therefore a sum
over Storm's stationary distribution of tick states; for Poisson arrivals the
integral over ``u`` has a closed form in the regularised incomplete gamma
function (arrivals at ``u`` with ``j`` predecessors have intensity
``a * Pois(j; a u)``). The mean is checked against Little's law.
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
from scipy.optimize import brentq

from qosbound.errors import ScenarioError
from qosbound.models.engine import MODELS_DIR, steady_state
from qosbound.results import Interval, Result

__all__ = ["Rendered", "render", "write_files", "model_results", "delay_distribution", "PROPS_TEXT"]

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


def _as_int_bytes(x: float, what: str) -> int:
    if abs(x - round(x)) > 1e-9:
        raise ScenarioError(f"{what} must be a whole number of bytes for the model, got {x:g}", field=what)
    return int(round(x))


def _granule(sizes: list[int], requested, max_granules: int) -> tuple[int, bool]:
    if requested != "auto":
        g = _as_int_bytes(float(requested), "methods.model-checked.granule")
        if g <= 0:
            raise ScenarioError("granule must be positive", field="methods.model-checked.granule")
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


def render(p, opts, scenario_name: str = "") -> Rendered:
    """Render the PRISM model for scenario parameters ``p`` (a :class:`qosbound.systems.pq_txq.Params`)."""
    ef = _as_int_bytes(p.ef_size, "traffic.EF.size")
    be = [_as_int_bytes(s, "traffic.BE.sizes") for s in p.be_sizes]
    g, rounded = _granule([ef] + be, getattr(opts, "granule", "auto"), getattr(opts, "max_granules", 64))
    gef = math.ceil(ef / g)
    gbe = [math.ceil(s / g) for s in be]
    kef = math.ceil(ef / p.unit - 1e-12)
    kbe = [int(math.ceil(s / p.unit - 1e-12)) for s in be]
    slot = g * 8.0 / p.C
    a = p.lam * slot
    QT, PQ, K = p.Q_t, p.pq_cap, len(be)
    N = QT  # at most QT packets: each takes >= 1 unit and the fill stops at QT units
    cbr = None
    if p.arrivals == "bernoulli" and a > 1:
        raise ScenarioError(f"Bernoulli arrivals need at most one EF packet per {g}-byte slot; rate gives {a:.3g}",
                            field="traffic.EF.arrivals")
    if p.arrivals == "cbr":
        fr = Fraction(a).limit_denominator(1000)
        if abs(float(fr) - a) > 1e-9 * a:
            raise ScenarioError(f"CBR arrivals per slot ({a:.12g}) are not a ratio of small integers; the model "
                                "needs a rational rate (or use arrivals: poisson)", field="traffic.EF.rate")
        cbr = (fr.numerator, fr.denominator)

    kinds = [(1, "KEF", "GEF")] + [(i + 2, f"KB{i + 1}", f"GB{i + 1}") for i in range(K)]
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

    def kind_sum(slot_i: int, which: int) -> str:
        terms = [f"(s{slot_i}={code}?{(u if which == 0 else gg)}:0)" for code, u, gg in kinds]
        return " + ".join(terms)

    unit_formulas = []
    for i in range(1, N + 1):
        unit_formulas.append(f"formula u{i} = {kind_sum(i, 0)};   // units of packet {i}")
        unit_formulas.append(f"formula g{i} = {kind_sum(i, 1)};   // granules of packet {i}")
    occ_sum = " + ".join(f"u{i}" for i in range(1, N + 1))
    npk_sum = " + ".join(f"(s{i}>0?1:0)" for i in range(1, N + 1))
    nef_sum = " + ".join(f"(s{i}=1?1:0)" for i in range(1, N + 1))
    work_tail = "".join(f" + g{i}" for i in range(2, N + 1))
    slot_decls = "\n".join(f"  s{i} : [0..{K + 1}] init 0;   // packet {i} of the TxQ" for i in range(1, N + 1))

    # Arrivals per slot.
    if p.arrivals == "poisson":
        # P(k arrivals) for k < PQ and the tail P(>= PQ); the most probable outcome's constant is written as the
        # complement of the others, so the distribution sums to one exactly (also in exact arithmetic) and no
        # constant goes negative through rounding.
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
        cbr_decl, cbr_doc = "", ""
    elif p.arrivals == "bernoulli":
        truncated = 0.0
        arrival_consts = [f"const double AEF = {_fmt(a)};   // P(an EF packet arrives in a slot) (Bernoulli)"]
        outcomes = [("1-AEF", "(pq'=pq)"), ("AEF", "(pq'=min(PQ,pq+1))")]
        lost_rewards = "  ph=0 & pq=PQ : AEF;"
        accepted_rewards = "  ph=0 & pq<PQ : AEF;"
        cbr_decl, cbr_doc = "", ""
    else:
        truncated = 0.0
        P_, Q_ = cbr
        arrival_consts = [f"const int CP = {P_};   // CBR: EF arrivals per slot = CP/CQ = {_fmt(a)}",
                          f"const int CQ = {Q_};   // CBR credit resolution (credit counter c in 0..CQ-1)"]
        outcomes = [("1", "(pq'=min(PQ,pq+floor((c+CP)/CQ)))&(c'=mod(c+CP,CQ))")]
        lost_rewards = "  ph=0 : max(0, floor((c+CP)/CQ) - (PQ-pq));"
        accepted_rewards = "  ph=0 : min(floor((c+CP)/CQ), PQ-pq);"
        cbr_decl = "  c  : [0..CQ-1] init 0;   // CBR credit: the next arrival comes when c+CP*u reaches CQ\n"
        cbr_doc = ("//        c      CBR credit in 1/CQ of a packet: the slot's arrivals come at u = (i*CQ - c)/CP,"
                   " i = 1, 2, ... (u in (0,1])")

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
    gmax = max([gef] + gbe)
    rounding = "" if not rounded else " (sizes rounded UP to whole granules: the model's times are upper estimates)"
    text = Template(TEMPLATE.read_text()).substitute(
        scenario=scenario_name or "(unnamed)", granule_bytes=g, slot_us=f"{slot * 1e6:.6g}",
        link=f"{p.C:g} bit/s", rounding=rounding, arrivals=p.arrivals, cbr_state_doc=cbr_doc,
        QT=QT, PQ=PQ, GMAX=gmax, unit_bytes=f"{p.unit:g}", KEF=kef, GEF=gef, ef_bytes=ef,
        be_consts="\n".join(be_consts), arrival_consts="\n".join(arrival_consts),
        unit_formulas="\n".join(unit_formulas), occ_sum=occ_sum, npk_sum=npk_sum, nef_sum=nef_sum,
        work_tail=work_tail, slot_decls=slot_decls, cbr_decl=cbr_decl, tick_commands=tick_commands,
        fill_ef_commands="\n".join(fill_ef), fill_be_commands="\n".join(fill_be),
        lost_rewards=lost_rewards, accepted_rewards=accepted_rewards)
    return Rendered(text, g, slot, gef, kef, gbe, kbe, probs, p.arrivals, a, cbr, QT, PQ, rounded, truncated)


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


@dataclass
class DelayDistribution:
    """EF delay of accepted packets, from the stationary distribution (times in seconds)."""

    slot: float
    a: float
    arrivals: str
    n: np.ndarray  # PQ occupancy at slot start, per aggregated state
    w: np.ndarray  # TxQ work in granules
    c: np.ndarray  # CBR credit (zeros otherwise)
    pi: np.ndarray  # probability of the aggregated state among tick states
    ef_gran: int
    PQ: int
    cbr: tuple[int, int] | None
    accepted_per_slot: float
    ef_in_system: float  # mean EF count at slot starts
    tv_bound: float = 0.0  # TRUE bound on the L1 error of pi (float solve; 0 in exact mode)

    @property
    def max_arrivals(self) -> float:
        """Upper bound on the accepted EF arrivals per slot from any state (the weights behind every ratio)."""
        if self.arrivals == "cbr":
            P_, Q_ = self.cbr
            return float((Q_ - 1 + P_) // Q_)
        return float(self.a)

    def error_bounds(self, quantiles, ccdf_at, extra: float = 0.0) -> dict:
        """TRUE intervals of the metrics from ``tv_bound`` (each metric is a ratio N/D of linear functionals of
        pi whose per-state coefficients are bounded by ``max_arrivals`` (D), by that times the largest delay
        (N of the mean) or by D's (N of the CCDF); quantiles follow from a CCDF error uniform in t)."""
        e = (self.tv_bound + extra) * self.max_arrivals
        D = self.accepted_per_slot
        out = {}
        if not D - e > 0:
            return {}
        dmax = self.support_max() / self.slot
        shift = 0.5 * self._spread
        m = self.mean() / self.slot - shift
        out["mean"] = (max(0.0, (m * D - e * dmax) / (D + e) + shift) * self.slot,
                       ((m * D + e * dmax) / (D - e) + shift) * self.slot)
        delta = 2 * e / (D - e)
        for t in ccdf_at:
            c = self.ccdf(t)
            out[("ccdf", t)] = (max(0.0, (c * D - e) / (D + e)), min(1.0, (c * D + e) / (D - e)))
        for q in quantiles:
            lo_q, hi_q = q - delta, q + delta
            tol = 2e-12 * self.support_max()  # brentq's tolerance in quantile()
            lo = max(0.0, self.quantile(lo_q) - tol) if lo_q > 0 else 0.0
            hi = self.quantile(hi_q) + tol if hi_q < 1 else self.support_max()
            out[("quantile", q)] = (lo, hi)
        out["loss"] = (max(0.0, self.loss - e / self.a), min(1.0, self.loss + e / self.a))
        return out

    def _terms(self):
        """Arrival atoms (weight, D0) of deterministic arrivals, delays in slots.

        Bernoulli arrivals come at the end of a slot: D = D0. CBR arrivals come at ``u_i = (i*CQ - c -
        phi)/CP`` with a phase ``phi`` uniform on [0, 1) (a CBR source's phase is uniform against the slot
        grid): the arrival counts per slot do not depend on ``phi``, and D = D0 + phi/CP, uniform on
        [D0, D0 + 1/CP).
        """
        if self.arrivals == "bernoulli":
            ok = self.n < self.PQ
            return self.pi[ok] * self.a, (self.w[ok] - 1 + (self.n[ok] + 1) * self.ef_gran).astype(float)
        P_, Q_ = self.cbr
        ws, ds = [], []
        kmax = (Q_ - 1 + P_) // Q_
        for i in range(1, kmax + 1):
            u = (i * Q_ - self.c) / P_
            ok = (u <= 1 + 1e-12) & (self.n + i - 1 < self.PQ)
            ws.append(self.pi[ok])
            ds.append(self.w[ok] - u[ok] + (self.n[ok] + i) * self.ef_gran)
        return np.concatenate(ws), np.concatenate(ds)

    @property
    def _spread(self) -> float:
        """Width (slots) of the uniform phase spread of each atom: 1/CP for CBR, 0 otherwise."""
        return 1.0 / self.cbr[0] if self.arrivals == "cbr" else 0.0

    def mean(self) -> float:
        if self.arrivals == "poisson":
            a, e = self.a, self.ef_gran
            num = den = 0.0
            for j in range(self.PQ):
                ok = self.n + j < self.PQ
                pj1 = special.gammainc(j + 1, a)  # P(Pois(a) >= j+1)
                pj2 = special.gammainc(j + 2, a)
                base = self.w[ok] + (self.n[ok] + j + 1) * e
                num += np.sum(self.pi[ok] * (base * pj1 - (j + 1) / a * pj2))
                den += np.sum(self.pi[ok]) * pj1
            return float(num / den) * self.slot
        wt, d = self._terms()
        return float(np.sum(wt * d) / np.sum(wt) + 0.5 * self._spread) * self.slot

    def ccdf(self, t: float) -> float:
        """P(D > t) for an accepted EF packet."""
        x = t / self.slot
        if self.arrivals == "poisson":
            a, e = self.a, self.ef_gran
            num = den = 0.0
            for j in range(self.PQ):
                ok = self.n + j < self.PQ
                c = np.clip(self.w[ok] + (self.n[ok] + j + 1) * e - x, 0.0, 1.0)
                num += np.sum(self.pi[ok] * special.gammainc(j + 1, a * c))
                den += np.sum(self.pi[ok]) * special.gammainc(j + 1, a)
            return float(min(max(num / den, 0.0), 1.0))
        wt, d = self._terms()
        h = self._spread
        if h > 0:
            return float(np.sum(wt * np.clip((d + h - x) / h, 0.0, 1.0)) / np.sum(wt))
        return float(np.sum(wt[d > x + 1e-12]) / np.sum(wt))

    def support_max(self) -> float:
        return float(np.max(self.w + (self.n + 1) * self.ef_gran + self.PQ * self.ef_gran) + 1) * self.slot

    def quantile(self, q: float) -> float:
        """Smallest t with P(D > t) <= 1 - q."""
        target = 1.0 - q
        hi = self.support_max()
        if self.arrivals == "bernoulli":
            wt, d = self._terms()
            order = np.argsort(d)
            cum = np.cumsum(wt[order]) / np.sum(wt)
            idx = int(np.searchsorted(cum, q - 1e-12))
            return float(d[order][min(idx, len(d) - 1)]) * self.slot
        f = lambda t: self.ccdf(t) - target  # noqa: E731
        if f(0.0) <= 0:
            return 0.0
        return float(brentq(f, 0.0, hi, xtol=1e-12 * hi, rtol=1e-12))

    @property
    def loss(self) -> float:
        return float(max(0.0, 1.0 - self.accepted_per_slot / self.a))

    def little_mean(self) -> float:
        """Mean delay by Little's law: time-average EF in system / accepted rate."""
        if self.arrivals == "poisson":
            # Time-average count = count at slot start + accepted arrivals' presence (1-u) within the slot.
            extra = 0.0
            for n in np.unique(self.n):
                m = self.PQ - int(n)
                if m <= 0:
                    continue
                pn = np.sum(self.pi[self.n == n])
                # int_0^1 (1-u) a P(N(u) < m) du
                uu, ww = np.polynomial.legendre.leggauss(40)
                u = 0.5 * (uu + 1)
                val = 0.5 * np.sum(ww * (1 - u) * self.a * special.gammaincc(m, self.a * u))
                extra += pn * val
            return (self.ef_in_system + extra) / self.accepted_per_slot * self.slot
        if self.arrivals == "cbr":
            wt, d = self._terms()
            # each accepted arrival at u is present for (1-u) of its arrival slot
            P_, Q_ = self.cbr
            extra = 0.0
            kmax = (Q_ - 1 + P_) // Q_
            for i in range(1, kmax + 1):
                u = (i * Q_ - self.c) / P_
                ok = (u <= 1 + 1e-12) & (self.n + i - 1 < self.PQ)
                extra += np.sum(self.pi[ok] * (1 - u[ok] + 0.5 * self._spread))
            return (self.ef_in_system + extra) / self.accepted_per_slot * self.slot
        return self.ef_in_system / self.accepted_per_slot * self.slot


def delay_distribution(rendered: Rendered, *, exact: bool = False, precision: float = 1e-10):
    """Solve the rendered model on Storm and return (DelayDistribution, built model info)."""
    vals, pi, built = steady_state(rendered.text, {}, exact=exact, precision=precision)
    tick = vals["ph"] == 0
    pt = pi[tick]
    T = float(pt.sum())
    if not T > 0:
        raise ScenarioError("the model has no time-advancing states")  # pragma: no cover
    pt = pt / T
    N = rendered.QT
    kinds = np.stack([vals[f"s{i}"][tick] for i in range(1, N + 1)], axis=1)
    gran = rendered.kinds_gran[kinds]
    w = vals["r"][tick] + gran[:, 1:].sum(axis=1)
    n = vals["pq"][tick]
    c = vals["c"][tick] if "c" in vals else np.zeros_like(n)
    nef = (kinds == 1).sum(axis=1)
    ef_in_system = float(np.sum(pt * (n + nef)))
    # Accepted arrivals per slot, by arrival process.
    if rendered.arrivals == "poisson":
        acc = np.array([rendered.a - poisson_excess(rendered.a, rendered.PQ - k) for k in range(rendered.PQ + 1)])
        accepted = float(np.sum(pt * acc[n]))
    elif rendered.arrivals == "bernoulli":
        accepted = float(np.sum(pt[n < rendered.PQ])) * rendered.a
    else:
        P_, Q_ = rendered.cbr
        accepted = float(np.sum(pt * np.minimum((c + P_) // Q_, rendered.PQ - n)))
    # Aggregate states with equal (n, w, c).
    key = np.stack([n, w, c], axis=1)
    uniq, inv = np.unique(key, axis=0, return_inverse=True)
    agg = np.bincount(inv.ravel(), weights=pt, minlength=len(uniq))
    dd = DelayDistribution(rendered.slot, rendered.a, rendered.arrivals, uniq[:, 0], uniq[:, 1], uniq[:, 2], agg,
                           rendered.ef_gran, rendered.PQ, rendered.cbr, accepted, ef_in_system)
    if not exact:
        dd.tv_bound = _tv_bound(built.stationary, np.flatnonzero(tick), inv.ravel(), agg)
    return dd, built


def _tv_bound(st, tick_idx: np.ndarray, inv: np.ndarray, agg: np.ndarray, chunk: int = 256) -> float:
    """TRUE bound on sum_a |p_a - agg_a|, p_a the exact probability of aggregated state a given a tick state:
    each p_a = pi(a) / pi(tick) is bracketed by the a-posteriori brackets of the solve."""
    n = st.states
    S = len(agg)
    Ft = np.zeros((n, 1))
    Ft[tick_idx, 0] = 1.0
    _, tlo, thi = st.values(Ft)
    if not tlo[0] > 0:
        return math.inf
    total = 0.0
    for s0 in range(0, S, chunk):
        cols = np.arange(s0, min(s0 + chunk, S))
        F = np.zeros((n, len(cols)))
        sel = (inv >= s0) & (inv < s0 + len(cols))
        F[tick_idx[sel], inv[sel] - s0] = 1.0
        _, lo, hi = st.values(F)
        plo, phi = lo / thi[0], hi / tlo[0]
        a = agg[cols]
        total += float(np.sum(np.maximum(np.maximum(phi - a, a - plo), 0.0)))
    return total


def model_results(p, opts, ccdf_at: list[float], quantiles: list[float], progress) -> list[Result]:
    """EF delay metrics by model checking (method 'model-checked')."""
    from qosbound.systems.base import ccdf_name, quantile_name

    advance = progress.task("model checking (Storm)", total=2)
    rendered = render(p, opts)
    advance()
    if opts.engine == "prism":
        from qosbound.errors import EngineError
        from qosbound.models.engine import prism_available

        if not prism_available():
            raise EngineError("engine 'prism' needs a 'prism' executable on PATH; use engine: storm")
        raise EngineError("engine 'prism' computes the .props properties only: run `qosbound model check` on the "
                          "rendered files; the delay distribution needs Storm's stationary vector")
    dd, built = delay_distribution(rendered, exact=opts.exact, precision=opts.precision)
    advance()
    mean = dd.mean()
    little = dd.little_mean()
    little_rel = abs(mean - little) / mean
    bounds = {} if opts.exact else dd.error_bounds(quantiles, ccdf_at, extra=rendered.truncated_mass)
    note = ("exact (rational) stationary distribution" if opts.exact else
            f"direct sparse solve; a-posteriori bound: L1 error of the slot-state distribution <= {dd.tv_bound:.2g}"
            + (f", plus {rendered.truncated_mass:.2g} of arrival probability per slot left out (each outcome "
               f"< {TINY:g})" if rendered.truncated_mass else ""))
    prov = {"model": "models/templates/pq_txq.prism (rendered)", "engine": "storm", "states": built.states,
            "transitions": built.transitions, "seconds": round(built.seconds, 4), "granule_bytes": rendered.granule,
            "slot_s": rendered.slot, "arrivals": rendered.arrivals,
            "construction": "stationary distribution of tick states x tagged-arrival delay",
            "error_bound_l1": dd.tv_bound, "truncated_arrival_mass": rendered.truncated_mass}
    rounded_note = ""
    if rendered.rounded:
        rounded_note = (f"packet sizes rounded up to whole {rendered.granule}-byte granules: every transmission is "
                        "at least as long as the scenario's, so delays (mean, quantiles, CCDF) and loss are upper "
                        "bounds on the scenario's (by sample-path coupling; the argument assumes no EF packet is lost "
                        f"at the PQ, model loss here {dd.loss:.3g}); the numerical error ({note}) is added")
        prov["note"] = "sizes rounded up to whole granules: model results are upper bounds"

    def iv(v: float, key) -> tuple[float, Interval]:
        """(value, interval) of a model number: the numerical bracket of the direct solve, or, when sizes were
        rounded up, an upper bound on the scenario's value (the bracket's upper end)."""
        if opts.exact:
            lo = hi = v
        else:
            lo, hi = bounds.get(key, (-math.inf, math.inf))
            lo, hi = min(lo, v), max(hi, v)
        if rendered.rounded:
            if math.isfinite(hi):
                return hi, Interval.upper_bound(hi, note=rounded_note)
            return v, Interval.approximation(v, neglects="the numerical error of the solve (no bound available); "
                                                      "sizes rounded up make it an upper estimate", note=note)
        if opts.exact:
            return v, Interval.exact(v, note=note)
        return v, Interval.numerical(lo, hi, note=note)

    out = []
    v, i = iv(mean, "mean")
    out.append(Result("EF.delay.mean", "model-checked", v, "s", i,
                      {**prov, "source": f"Storm, {built.states} states; Little's law gives {little:.9g} s",
                       "little_law_mean": little, "little_law_rel_diff": little_rel}))
    for q in quantiles:
        v, i = iv(dd.quantile(q), ("quantile", q))
        out.append(Result(f"EF.delay.{quantile_name(q)}", "model-checked", v, "s", i,
                          {**prov, "source": f"Storm, {built.states} states"}))
    for t in ccdf_at:
        v, i = iv(dd.ccdf(t), ("ccdf", t))
        out.append(Result(ccdf_name("EF.delay", t), "model-checked", v, "1", i,
                          {**prov, "source": f"Storm, {built.states} states"}))
    v, i = iv(dd.loss, "loss")
    out.append(Result("EF.loss", "model-checked", v, "1", i,
                      {**prov, "source": f"Storm, {built.states} states"}))
    return out
