"""One abstraction's bounding process and the searches on it that the ring bound's metrics come from: each ratio
proved by a certificate, the CCDF at a lattice point, and the smallest lattice point proved to hold a quantile.

The process and the proof are those of :mod:`qosbound.models.pq_txq_ring_bound` (steps 1-5 of its docstring): the
rewards of :class:`~qosbound.models.pq_txq_ring_rewards.DepartureRewards` at each state (label, n) of an
abstraction of :mod:`qosbound.models.ring_abstraction`, Little's law for the ring as the constraint ``x . C = 0``,
and :class:`~qosbound.models.ratio_mdp.ChoiceMDP`'s certificates. The searches (multipliers, policy iteration,
bisection, false position) only choose what to certify; every value they return is certified.
"""

from __future__ import annotations

import math

import numpy as np

from qosbound.models import ring_abstraction as ra
from qosbound.models.pq_txq_ring_rewards import DepartureRewards
from qosbound.models.ratio_mdp import ChoiceMDP

__all__ = ["BoundProcess", "REL", "FALLBACK_GAP", "FALLBACK_STATES"]

#: Bisections stop when the proved value is within this relative distance of the last value not proved.
REL = 2e-3
#: A full search (no target) whose proved value is above its estimate by more than this (relative) is tried again
#: with the linear programme (:meth:`BoundProcess.ratio`).
FALLBACK_GAP = 1e-3
#: ... on processes of at most this many states (measured on wan100: a programme of front_run(0)'s 1 152 states takes
#: ~0.3 s, one of front_run(6)'s 7 848 states 10-25 s; above it the Lagrangian's proved value stands).
FALLBACK_STATES = 3000


class BoundProcess:
    """One abstraction's process with its rewards: per state (label, n), the accepted (``acc``), lost (``lost``)
    and arriving (``arr``) EF per departure, and Little's law's ``C`` (module docstring); ``cut``: the PQ levels
    solved (:func:`~qosbound.models.pq_txq_ring_bound_budget.solved_levels`; None: all)."""

    def __init__(self, sv: DepartureRewards, ab: ra.Abstraction, cut: int | None = None):
        self.sv, self.ab = sv, ab
        QT = sv.QT
        self.mdp = ChoiceMDP(ab.head, ab.post, sv.transitions(), slack=sv.slack, cut=cut)
        self.Ep = np.clip(ab.ef - ab.head, 0, QT - 1)
        full = lambda arr: np.broadcast_to(arr[:, :, None], arr.shape + (QT,))  # noqa: E731
        self.acc = self.rew(full(sv.acc))
        self.lost = self.rew(full(sv.lost))
        arr = np.concatenate([[sv.a * sv.gef], sv.a * sv.gbe.astype(float)])
        self.arr = self.rew(np.broadcast_to(arr[:, None, None], (sv.K + 1, sv.PQ, QT)))
        p0_be, p0_ef = sv.no_arrival()
        p0 = np.where(ab.head == 1, p0_ef, p0_be)
        n = np.arange(sv.PQ)
        admit = 1.0 - (n[None, :] == 0) * p0[:, None]
        self.C = ab.ef[:, None].astype(float) - QT * admit
        self.mus: dict = {}  # metric -> the multiplier of its last proved bound (a warm start; see ratio)
        self.memo: dict = {}  # lattice point -> (proved CCDF bound, estimate, whether searched to the end)

    def rew(self, per: np.ndarray) -> np.ndarray:
        """Per state (label, n): per[k, n, E'] at the label's head (EF: k = 0; BE: averaged over the mix)."""
        sv, ab = self.sv, self.ab
        out = np.empty((ab.size, sv.PQ))
        ef = ab.head == 1
        out[ef] = per[0][:, self.Ep[ef]].T
        be = ~ef
        out[be] = sum(sv.pbe[k] * per[k + 1][:, self.Ep[be]].T for k in range(sv.K))
        return out

    def ratio(self, N, D, key: str, target: float | None = None) -> tuple[float, float]:
        """(a proved upper bound on (x . N) / (x . D) for the exact chain's frequencies x, an estimate of the best
        such bound): :meth:`~qosbound.models.ratio_mdp.ChoiceMDP.lagrange_bound`, its multiplier search started
        at the last multiplier of the same ``key`` (of this process, else of the process solved before it: a
        warm start only, every multiplier gives a certified bound). ``target``: a sign test (stop as soon as the
        bound is at most the target, or the estimate above it)."""
        if not np.any(N > 0):
            return 0.0, 0.0
        rho, mu, est = self.mdp.lagrange_bound(N, D, self.C, mu=self.mus.get(key, 0.0), target=target)
        self.mus[key] = mu
        undecided = rho > target >= est if target is not None else rho > est * (1.0 + FALLBACK_GAP)
        # policy iteration left a gap (it cycles on some multichain processes): the linear programme, certified the
        # same way
        if undecided and self.mdp.size <= FALLBACK_STATES:
            lp, mu2 = self.mdp.lp_bound(N, D, self.C, polish=False)
            if lp < rho:
                rho, self.mus[key] = lp, mu2
        return max(rho, 0.0), est

    def ccdf(self, X: int, target: float | None = None) -> tuple[float, float]:
        """(a proved upper bound on P(D > X lattice steps | accepted), an estimate of the best one); with a
        ``target`` the search may stop once it knows on which side of the target the bound is (see ratio)."""
        got = self.memo.get(X)
        if got is not None and (got[2] or (target is not None and (got[0] <= target or got[1] > target))):
            return got[0], got[1]
        v, est = self.ratio(self.rew(self.sv.per_ccdf(X)), self.acc, "ccdf", target)
        v = min(1.0, v)
        if got is not None and got[0] < v:  # an earlier search proved less: keep it (each is proved)
            v = got[0]
        self.memo[X] = (v, est, target is None or (v > target and est <= target))
        return v, est

    def quantile(self, q: float, start: int, hi: int | None = None) -> int:
        """The smallest lattice point proved (within REL) to have P(D > X) <= 1 - q, or ``hi`` (a point already
        proved otherwise, e.g. by another process: only points below it are sought). The CCDF bound is
        non-increasing in X (each point is proved on its own, so any point proved is a valid answer): the
        bracket [lo not proved, hi proved] starts from every point already evaluated; each point is a sign test
        (:meth:`ccdf` with the target); each round tries the false-position point on log P (with the estimate
        where the bound is above the target), then nudges by REL towards the side it did not reach (an
        interpolation that lands just short of the target closes the bracket at the next try)."""
        target = 1.0 - q
        ltarget = math.log(target)
        lo, top = 0, self.sv.top if hi is None else min(hi, self.sv.top)
        hi = top  # lo: not proved (P(D > 0) = 1); hi: proved (no delay reaches the top, or proved elsewhere)
        flo, fhi = 0.0, None  # (hi = top is proved without an evaluation here: no value to interpolate with)

        def level(v, est):
            return math.log(max(v if v <= target or est <= target else est, 1e-300))

        for X, (v, est, full) in self.memo.items():
            if v <= target and X < hi:
                hi, fhi = X, level(v, est)
            elif v > target and (full or est > target) and X > lo:
                lo, flo = X, level(v, est)
        X = min(max(start, 2 * lo if fhi is None else lo + 1), hi - 1)
        nudge, nudged = 0, False
        while hi - lo > max(1, REL * hi):
            v, est = self.ccdf(X, target)
            fx = level(v, est)
            if v <= target:
                hi, fhi, nudge = X, fx, -1
            else:
                lo, flo, nudge = X, fx, 1
            if hi - lo <= max(1, REL * hi):
                break
            step = max(1, int(REL * X))
            if fhi is not None and lo < X + nudge * step < hi and not nudged:
                X, nudged = X + nudge * step, True
                continue
            nudged = False
            if fhi is None:  # no proved point evaluated yet: search upwards (or towards the proved limit)
                X = 2 * X if hi == self.sv.top else (X + hi) // 2
            elif fhi >= flo or flo - fhi < 1e-12:
                X = (lo + hi) // 2
            else:
                X = int(round(lo + (hi - lo) * (flo - ltarget) / (flo - fhi)))
            X = min(max(X, lo + 1), hi - 1)
        return hi
