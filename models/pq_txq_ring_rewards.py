"""The per-departure rewards of the ring chain, by the head's kind, the EF waiting and the EF in the ring: what the
ring bound (:mod:`qosbound.models.pq_txq_ring_bound`, step 2 of its proof) takes ratios of.

The system and the notation are those of :mod:`qosbound.models.pq_txq_ring`. A Poisson arrival a time ``u`` into a
service of ``s`` granules, after ``j`` earlier arrivals of that service, with ``n`` EF waiting, is accepted iff
``n + j < PQ`` and leaves after ``D = (s - u) + (n + j + 1) GEF + E' GEF + S_1 + .. + S_{Q_t - 1 - E'}`` (``E'``
the EF among ring positions 2 .. Q_t, the ``S_i`` i.i.d. BE sizes independent of the rest given the pattern). So,
per departure, the expected numbers of arrivals, of lost ones, of accepted ones with ``D > X`` and the expected
sum of accepted delays depend only on the head's kind ``k`` (0 EF, 1 .. K the BE sizes), ``n`` and ``E'``:
:class:`DepartureRewards` computes them in closed form (the "head + PQ" part by regularised incomplete gamma
functions, :func:`~qosbound.models.pq_txq_ring.head_part`; the ring part's law by convolution on the granule
lattice), each an upper bound where the Poisson counts are cut (the accepted arrivals beyond the cut are added:
at most 1 each to a CCDF count, at most the largest delay each to the sum of delays).
"""

from __future__ import annotations

import numpy as np

from qosbound.errors import ResourceError, ScenarioError
from qosbound.models.pq_txq_render import poisson_excess
from qosbound.models.pq_txq_ring import MAX_LATTICE, head_part, refinement, ring_law, why_not

__all__ = ["DepartureRewards"]


class DepartureRewards:
    """Per-departure expectations, by the head's class ``k`` (0 EF, 1 .. K the BE sizes) and ``n`` waiting
    (0 .. PQ - 1), and the ring part's law by ``E'`` (module docstring). Times in granules, the lattice refined
    ``M`` times."""

    def __init__(self, p):
        why = why_not(p)
        if why is not None:
            raise ScenarioError(f"the ring method does not cover {why}", field="Q_t")
        law = ring_law(p)
        self.g, self.gef, self.gbe, self.pbe = law.g, law.gef, law.gbe, law.pbe
        self.slot_g = law.slot
        self.a = law.a
        self.QT, self.PQ = law.QT, law.PQ
        self.K = law.K
        self.serv = law.serv
        # Poisson arrivals per service, cut at POISSON_TAIL (the mass moved is the process's slack)
        self.pmfs, self.slack = law.pmfs, law.cut
        gmax = int(max(self.gbe.max(), self.gef))
        Y = int(self.serv.max() + (self.PQ + 1) * self.gef) + 1
        L = (self.QT - 1) * gmax + 1
        M = refinement(self.gef, L + Y)
        if (L + Y) * M > MAX_LATTICE:
            raise ResourceError(f"the ring bound's lattice would have {(L + Y) * M:.3g} points; above "
                                f"{MAX_LATTICE:.3g}", field="Q_t")
        self.M, self.Y, self.L = M, Y, L
        self.top = (L + Y) * M  # no delay reaches this many refined steps
        self._head_parts()
        self._ring_part()
        self.dmax = float(self.top) / M  # granules: above every delay
        self._per: dict = {}  # lattice point -> per_ccdf's array

    def _head_parts(self) -> None:
        """Per (k, n): the accepted, lost and missing (beyond the Poisson cut) arrivals, the sum of their "head +
        PQ" parts, and ``hn[k, n, i]``: the accepted arrivals whose head + PQ part exceeds i refined steps."""
        a, gef, PQ, M = self.a, self.gef, self.PQ, self.M
        K = self.K
        Yf = self.Y * M
        z = np.arange(Yf, dtype=float) / M
        self.acc = np.zeros((K + 1, PQ))
        self.lost = np.zeros((K + 1, PQ))
        self.missing = np.zeros((K + 1, PQ))  # accepted arrivals beyond the cut (not in acc)
        self.headsum = np.zeros((K + 1, PQ))
        self.hn = np.zeros((K + 1, PQ, Yf))
        for k in range(K + 1):
            s = self.serv[k]
            m = a * s
            Jall = min(PQ, len(self.pmfs[k]) + 1)
            jj = np.arange(Jall)
            F, pj1, pj2 = head_part(a, s, gef, Jall, z)
            for n in range(PQ):
                J = min(PQ - n, Jall)
                exact_acc = m - poisson_excess(m, PQ - n)  # E[min(A, PQ - n)]
                acc_n = float(np.sum(pj1[:J]))
                self.acc[k, n] = min(acc_n, exact_acc)
                self.missing[k, n] = max(exact_acc - self.acc[k, n], 0.0) if J < PQ - n else 0.0
                self.lost[k, n] = max(m - self.acc[k, n], 0.0)
                sh = n * gef * M
                self.hn[k, n, :sh] = F[J - 1, 0]
                self.hn[k, n, sh:] = F[J - 1, :Yf - sh]
                base = s + (n + jj[:J] + 1) * gef
                self.headsum[k, n] = float(np.sum(base * pj1[:J] - (jj[:J] + 1) / a * pj2[:J])) if a > 0 else 0.0

    def _ring_part(self) -> None:
        """The ring part R(E') = E' GEF + the sum of QT-1-E' BE sizes, on the granule lattice: its pmf and
        survival function by E', and its mean."""
        QT, L, gef = self.QT, self.L, self.gef
        pmfR = np.zeros((QT, L + 1))
        cur = np.zeros(L + 1)
        cur[0] = 1.0
        for nb in range(QT):
            Ep = QT - 1 - nb
            sh = Ep * gef
            pmfR[Ep, sh:] = cur[:L + 1 - sh]
            nxt = np.zeros(L + 1)
            for b, pb in zip(self.gbe, self.pbe):
                nxt[b:] += pb * cur[:L + 1 - b]
            cur = nxt
        self.pmfR = pmfR
        self.sfR = np.clip(1.0 - np.cumsum(pmfR, axis=1), 0.0, 1.0)
        ES = float(np.dot(self.pbe, self.gbe))
        self.ringmean = np.arange(QT) * gef + (QT - 1 - np.arange(QT)) * ES

    def transitions(self) -> list[np.ndarray]:
        """T[kind][n, a, n'] for a BE head (kind 0, the size drawn from the mix) and an EF head (kind 1)."""
        PQ = self.PQ
        out = []
        for classes in ([(k + 1, self.pbe[k]) for k in range(self.K)], [(0, 1.0)]):
            T = np.zeros((PQ, 2, PQ))
            for k, w in classes:
                pm = self.pmfs[k]
                for n in range(PQ):
                    n1 = np.minimum(PQ, n + np.arange(len(pm)))
                    adm = n1 > 0
                    np.add.at(T[n, 1], n1[adm] - 1, w * pm[adm])
                    T[n, 0, 0] += w * float(np.sum(pm[~adm]))
            out.append(T)
        return out

    def no_arrival(self) -> tuple[float, float]:
        """P(no EF arrival during the service) for a BE head (over the mix) and an EF head."""
        return float(sum(self.pbe[k] * self.pmfs[k + 1][0] for k in range(self.K))), float(self.pmfs[0][0])

    def per_ccdf(self, X: int) -> np.ndarray:
        """``per[k, n, E']``: accepted arrivals of a service with D > X refined lattice steps (an upper bound:
        the arrivals beyond the Poisson cut are counted). Kept per X: every process asks for the same points."""
        if X not in self._per:
            self._per[X] = self._per_ccdf(X)
        return self._per[X]

    def _per_ccdf(self, X: int) -> np.ndarray:
        M, Yf = self.M, self.hn.shape[2]
        rho = np.arange(self.L + 1)
        idx = X - rho * M
        inside = (idx >= 0) & (idx < Yf)
        r_in = rho[inside]
        G = self.hn[:, :, idx[inside]]  # (K + 1, PQ, points): one 2-D product (a 3-D @ 2-D one is ~40x slower)
        per = (G.reshape(G.shape[0] * G.shape[1], G.shape[2])
               @ np.ascontiguousarray(self.pmfR[:, r_in].T)).reshape(G.shape[0], G.shape[1], -1)
        above = X // M
        tail = self.sfR[:, above] if above <= self.L else np.zeros(self.QT)
        per += self.hn[:, :, 0][:, :, None] * tail[None, None, :]
        return per + self.missing[:, :, None]

    def per_sum(self) -> np.ndarray:
        """``per[k, n, E']``: the sum of accepted delays of a service (granules; an upper bound)."""
        return (self.headsum[:, :, None] + self.acc[:, :, None] * self.ringmean[None, None, :]
                + self.missing[:, :, None] * self.dmax)
