"""EF delay of the PQ + TxQ DTMC (:mod:`qosbound.models.pq_txq_render`) from Storm's stationary distribution.

Tagged-arrival construction. EF is FIFO among itself, no BE packet enters the
TxQ while an EF packet waits, and the line never idles, so an EF packet
arriving a fraction ``u`` into a slot that started in a state with ``w``
granules of TxQ work and ``n`` EF packets in the PQ, after ``j`` earlier EF
arrivals in the same slot, leaves after exactly

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

import numpy as np
from scipy import special
from scipy.optimize import brentq

from qosbound.errors import ScenarioError
from qosbound.models.engine import steady_state
from qosbound.models.pq_txq_render import Rendered, poisson_excess

__all__ = ["DelayDistribution", "delay_distribution"]


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
