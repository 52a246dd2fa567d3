"""Certified upper bounds on ratios of long-run averages over the policies of a Markov decision process with
post-decision choices, with linear equality constraints by Lagrange multipliers.

The process. States are pairs ``(i, n)``: ``i`` one of ``N`` *labels* (an abstract state of a component whose
exact state is unknown), ``n`` in ``0 .. nn - 1`` (a component known exactly). Each label has a *kind*
``k = kind[i]`` in ``0 .. len(T) - 1``; one step from ``(i, n)`` draws ``(a, n')`` with probability
``T[k][n, a, n']``, then a *choice* picks the next label ``j`` from the set ``post[a]`` of label ``i`` (the
post-decision choice: it may depend on everything seen so far, the draw included). Rewards per step are
functions of the state.

What is computed. For per-step rewards ``N`` (numerator) and ``D > 0`` (denominator) and constraint rewards
``C_1 .. C_m``, a number ``rho`` such that every process whose long-run state frequencies ``x`` satisfy the
process's balance equations and ``x . C_l = 0`` has ``x . N <= rho x . D``. Proof (linear-programming duality,
one line): suppose ``h`` and ``mu`` satisfy, at every state ``s``,

    N(s) - rho D(s) + sum_l mu_l C_l(s) + sum_{a, n'} T[k][n, a, n'] max_{j in post[a](i)} h(j, n') - h(s) <= 0.

Multiply by ``x(s) >= 0`` and sum. The successor actually chosen at each step has ``h`` at most the maximum, and
the balance equations make the frequency-weighted ``h`` of successors equal to that of states, so the ``h``
terms cancel (leaving a non-positive remainder); ``x . C_l = 0`` removes the multipliers: ``x . N - rho x . D
<= 0``. Any ``h``, however it was found, is a certificate: :meth:`ChoiceMDP.certificate` evaluates the left
side's maximum over all states exactly (in floating point), and a bound is claimed only where it is <= 0. The
solver (policy iteration, each policy evaluated by a sparse LU factorisation, and a search over ``mu``) only
serves to find a good ``h``; its accuracy never enters the claim.

Truncation of the known component. When ``n`` drifts down above some level (every kind draws ``n' - n`` of
negative mean there), the process may be SOLVED on ``n < cut`` only -- the draws that would reach ``n' >= cut``
land on ``cut - 1`` with the extra reward ``kappa (n' - cut + 1)`` -- and the certificate is still checked on the
whole process, with ``h`` extended linearly: ``h(i, n) = h(i, cut - 1) + kappa (n - cut + 1)`` for ``n >= cut``.
Above the cut the inequality holds once ``kappa`` is large enough (the drift is negative); ``kappa`` is raised
and the solve repeated until it does. The truncation only saves work: the claim rests on the certificate.

Policy evaluation solves the policy's chain directly; where that system is singular (a policy with several
closed classes) the chain is made unichain by a restart of probability ``RESTART`` per step to state 0. The
restart changes only which ``h`` is found, not the certificate, which is evaluated on the process itself.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

__all__ = ["ChoiceMDP", "RESTART"]

#: Restart probability per step of the chains evaluated during policy iteration (not of the process bounded).
RESTART = 1e-9
#: At most this many policy-iteration steps per evaluation of a multiplier.
MAX_PI = 60
#: At most this many multipliers tried per sign test.
MAX_MU = 40
#: GMRES iterations tried, preconditioned by the last LU factorisation, before a policy gets its own.
GMRES_ITER = 25


class ChoiceMDP:
    """The process: ``kind`` (N,) ints, ``post`` a list over draws ``a`` of CSR pairs ``(indptr, idx)`` (the
    choice set of label ``i`` is ``idx[indptr[i]:indptr[i+1]]``, never empty), ``T`` a list over kinds of arrays
    ``(nn, A, nn)`` whose rows sum to 1. ``slack`` is a bound on the total-variation error of each row of ``T``
    (probability moved by a truncation), added to certificates as ``slack * span(h)``; ``cut`` solves on
    ``n < cut`` only (see the module docstring; ValueError where the drift above it is not negative)."""

    def __init__(self, kind: np.ndarray, post: list, T: list, slack: float = 0.0, cut: int | None = None):
        self.kind = np.asarray(kind, dtype=np.int64)
        self.N = self.kind.size
        self.post = [(np.asarray(p, dtype=np.int64), np.asarray(q, dtype=np.int64)) for p, q in post]
        self.Tfull = [np.asarray(t, dtype=float) for t in T]
        self.nf = self.Tfull[0].shape[0]
        self.A = self.Tfull[0].shape[1]
        self.cut = self.nf if cut is None or cut >= self.nf else int(cut)
        c = self.cut
        self.nn = c
        self.T, self.pen, self.drift = [], [], []
        nprime = np.arange(self.nf, dtype=float)
        for t in self.Tfull:
            ti = t[:c, :, :c].copy()
            ti[:, :, c - 1] += t[:c, :, c:].sum(axis=2)
            self.T.append(ti)
            self.pen.append(np.einsum("nam,m->n", t[:c, :, c:], nprime[c:] - c + 1))
            d = np.einsum("nam,m->n", t[c:], nprime) - nprime[c:]  # E[n'] - n above the cut
            if d.size and not np.all(d < 0):
                raise ValueError("the known component does not drift down above the cut")
            self.drift.append(d)
        self.kappa = 0.0
        self.slack = float(slack)
        self.size = self.N * self.nn
        for indptr, _ in self.post:
            if np.any(np.diff(indptr) < 1):
                raise ValueError("every label needs a non-empty choice set for every draw")
        # per draw: the group index of every entry of idx, and each entry's offset in its group
        self._grp = [np.repeat(np.arange(self.N), np.diff(p)) for p, _ in self.post]
        self._off = [np.arange(q.size) - p[g] for (p, q), g in zip(self.post, self._grp)]
        self._by_kind = [np.flatnonzero(self.kind == k) for k in range(len(self.T))]
        self._lu_key = None
        self._lu = None
        self._cur = None
        self.factorisations = 0
        self.evaluations = 0
        self.policy = None

    # ---- Bellman operator --------------------------------------------------------------------------------------
    def _best(self, h: np.ndarray, keep=None):
        """Per draw a: (max over the choice set of h(j, n') for every label and n', the arg max offsets)."""
        W, pol = [], []
        width = h.shape[1]
        for a, (indptr, idx) in enumerate(self.post):
            G = h[idx]  # (entries, width)
            mx = np.maximum.reduceat(G, indptr[:-1], axis=0)
            tol = 1e-13 * (1.0 + np.abs(mx))
            grp = self._grp[a]
            arg = np.minimum.reduceat(np.where(G >= mx[grp] - tol[grp], self._off[a][:, None], 1 << 40),
                                      indptr[:-1], axis=0)
            if keep is not None:  # keep the current choice where it is (numerically) a best one
                cur = G[indptr[:-1][:, None] + keep[a], np.arange(width)[None, :]]
                arg = np.where(cur >= mx - tol, keep[a], arg)
            W.append(mx)
            pol.append(arg)
        return W, pol

    def _expect(self, W: list, T: list) -> np.ndarray:
        """sum_{a, n'} T[kind][n, a, n'] W[a][i, n'] for every state."""
        out = np.empty((self.N, T[0].shape[0]))
        Wa = np.stack(W, axis=1)  # (N, A, width)
        for k, sel in enumerate(self._by_kind):
            if sel.size:
                out[sel] = np.einsum("iam,nam->in", Wa[sel], T[k], optimize=True)
        return out

    def _inner(self, R: np.ndarray) -> np.ndarray:
        """Rewards of the solved (truncated) process from the process's rewards (N, nf)."""
        if self.cut == self.nf:
            return R
        out = R[:, :self.cut].copy()
        for k, sel in enumerate(self._by_kind):
            out[sel] += self.kappa * self.pen[k][None, :]
        return out

    def _full(self, h: np.ndarray) -> np.ndarray:
        if self.cut == self.nf:
            return h
        ext = h[:, -1:] + self.kappa * np.arange(1, self.nf - self.cut + 1)[None, :]
        return np.concatenate([h, ext], axis=1)

    def _lhs(self, h: np.ndarray, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(R + max-choice P h - h on the whole process with h extended, the extended h)."""
        hf = self._full(h)
        W, _ = self._best(hf)
        return R + self._expect(W, self.Tfull) - hf, hf

    def _kappa_for(self, lhs: np.ndarray, limit: np.ndarray) -> float:
        """The kappa that brings the rows above the cut to ``lhs <= limit`` (0 if they are)."""
        c = self.cut
        if c == self.nf:
            return 0.0
        need = 0.0
        for k, sel in enumerate(self._by_kind):
            if sel.size:
                excess = lhs[sel, c:] - limit[sel, c:]
                need = max(need, float(np.max(excess / -self.drift[k][None, :])))
        return self.kappa + need if need > 0 else 0.0

    def certificate(self, h: np.ndarray, R: np.ndarray) -> float:
        """max over states of R + (max-choice) P h - h (h extended above the cut): a proved upper bound on the
        long-run average of R (per step) of every process of the class; with the truncation slack added."""
        lhs, hf = self._lhs(h, R)
        return float(np.max(lhs)) + self.slack * float(np.ptp(hf))

    # ---- policy evaluation -------------------------------------------------------------------------------------
    def _matrix(self, pol) -> sp.csc_matrix:
        """The policy's chain P (sparse, states x states)."""
        nn = self.nn
        rows, cols, vals = [], [], []
        for a, (indptr, idx) in enumerate(self.post):
            J = idx[indptr[:-1][:, None] + pol[a]]  # (N, nn): the chosen label per (i, n')
            for k, sel in enumerate(self._by_kind):
                if not sel.size:
                    continue
                Tk = self.T[k][:, a, :]
                nz_n, nz_m = np.nonzero(Tk)
                rows.append((sel[:, None] * nn + nz_n[None, :]).ravel())
                cols.append((J[sel][:, nz_m] * nn + nz_m[None, :]).ravel())
                vals.append(np.broadcast_to(Tk[nz_n, nz_m][None, :], (sel.size, nz_n.size)).ravel())
        return sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(self.size, self.size))

    def _system(self, P: sp.csc_matrix, restart: float) -> sp.csc_matrix:
        """[1 | (I - (1 - restart) P) without column 0]: unknowns (gain, h_1 .. h_last), h_0 = 0."""
        M = (sp.identity(self.size, format="csc") - (1.0 - restart) * P).tocsc()
        return sp.hstack([sp.csc_matrix(np.ones((self.size, 1))), M[:, 1:]], format="csc")

    def _solver(self, pol, fresh: bool = False):
        """(solve(b), solve_transposed(b)) for the policy's system: its own LU factorisation, or GMRES
        preconditioned by the last factorisation when that converges (a policy differing in a few choices)."""
        key = b"".join(p.tobytes() for p in pol)
        if key == self._lu_key and not fresh:
            return self._cur
        A = self._system(self._matrix(pol), 0.0)
        solvers = None
        if self._lu is not None and not fresh:
            lu = self._lu
            pre = spla.LinearOperator(A.shape, matvec=lu.solve)
            preT = spla.LinearOperator(A.shape, matvec=lambda v: lu.solve(v, trans="T"))
            AT = A.T.tocsr()

            def iterative(b, M, Amat):
                z, info = spla.gmres(Amat, b, M=M, rtol=1e-13, atol=0.0, restart=GMRES_ITER, maxiter=1)
                if info != 0:
                    raise ArithmeticError("gmres")
                return z
            try:
                probe = iterative(np.ones(self.size), pre, A)  # does the old factorisation precondition it?
                if np.all(np.isfinite(probe)):
                    solvers = (lambda b: iterative(b, pre, A), lambda b: iterative(b, preT, AT))
            except ArithmeticError:
                solvers = None
        if solvers is None:
            for restart in (0.0, RESTART):  # without a restart first: exact for a unichain policy
                try:
                    lu = spla.splu(A if restart == 0.0 else self._system(self._matrix(pol), restart),
                                   permc_spec="COLAMD")
                    break
                except RuntimeError:  # singular: the policy has several closed classes
                    continue
            self._lu = lu
            self.factorisations += 1
            solvers = (lu.solve, lambda b: lu.solve(b, trans="T"))
        self._lu_key, self._cur = key, solvers
        return solvers

    def evaluate(self, pol, R: np.ndarray):
        """(gain, h, stationary frequencies) of policy ``pol`` for rewards R."""
        e0 = np.zeros(self.size)
        e0[0] = 1.0
        try:
            solve, solve_t = self._solver(pol)
            z, x = solve(R.ravel()), solve_t(e0)
        except ArithmeticError:  # the preconditioned iteration did not converge: factorise this policy
            solve, solve_t = self._solver(pol, fresh=True)
            z, x = solve(R.ravel()), solve_t(e0)
        g = float(z[0])
        h = z.copy()
        h[0] = 0.0
        x = np.maximum(x, 0.0)
        x /= x.sum()
        self.evaluations += 1
        return g, h.reshape(self.N, self.nn), x.reshape(self.N, self.nn)

    def optimise(self, R: np.ndarray):
        """Policy iteration from the last policy: (gain, h, frequencies) of a best policy for R (the process's
        rewards, (N, nf); h and the frequencies are of the solved process, below the cut)."""
        R = self._inner(R)
        pol = self.policy
        if pol is None:
            pol = [np.zeros((self.N, self.nn), dtype=np.int64) for _ in self.post]
        for _ in range(MAX_PI):
            g, h, x = self.evaluate(pol, R)
            _, new = self._best(h, keep=pol)
            if all(np.array_equal(p, q) for p, q in zip(new, pol)):
                break
            pol = new
        self.policy = pol
        return g, h, x

    # ---- bounds ---------------------------------------------------------------------------------------------------
    def _solve(self, R: np.ndarray, D: np.ndarray | None = None):
        """Optimise for R, then raise kappa (and solve again) until the rows above the cut satisfy the
        certificate's inequality as well as the rows below: (g, h, x, lhs, extended h)."""
        for _ in range(6):
            g, h, x = self.optimise(R)
            lhs, hf = self._lhs(h, R)
            if self.cut == self.nf:
                break
            c = self.cut
            if D is None:
                limit = np.zeros_like(lhs)
            else:
                limit = float(np.max(lhs[:, :c] / D[:, :c])) * D
            need = self._kappa_for(lhs, limit)
            if need <= self.kappa:
                break
            self.kappa = max(2.0 * self.kappa, 1.5 * need)
        return g, h, x, lhs, hf

    def provable(self, N: np.ndarray, D: np.ndarray, rho: float, C: np.ndarray | None = None,
                 mu0: float = 0.0) -> tuple[bool, float]:
        """Whether ``rho`` is proved an upper bound on x.N / x.D (with x.C = 0 when C is given): a certificate
        <= 0 is found for some multiplier mu (searched: the optimal gain is convex in mu). Returns (proved, the
        multiplier to start the next search from)."""
        base = N - rho * D
        scale = max(float(np.mean(np.abs(rho * D))), 1e-300)
        c = self.cut
        if C is not None:
            cscale = max(float(np.mean(np.abs(C))), 1e-300)
            flat = 1e-6 * cscale  # a subgradient this small is zero (the restart alone moves it by ~RESTART)
            mu_max = 1e6 * max(float(np.max(np.abs(base))), 1e-300) / cscale

        def at(mu):
            R = base if mu == 0.0 else base + mu * C
            g, h, x, lhs, hf = self._solve(R)
            ok = g <= 0 and float(np.max(lhs)) + self.slack * float(np.ptp(hf)) <= 0
            s = float(np.sum(x * C[:, :c])) if C is not None else 0.0
            return ok, g, s

        mu = mu0 if C is not None else 0.0
        ok, g, s = at(mu)
        if ok:
            return True, mu
        if C is None:
            return False, mu
        pts = [(mu, g, s)]
        step = min(abs(g / s), mu_max) if abs(s) > flat else mu_max
        for _ in range(MAX_MU):
            lows = [q for q in pts if q[2] < 0]
            highs = [q for q in pts if q[2] > 0]
            if any(abs(q[2]) <= flat for q in pts):
                return False, mu  # a zero subgradient: mu is optimal and the gain is positive
            if not lows or not highs:  # not bracketed yet: step against the subgradient, doubling
                edge = max(pts, key=lambda q: q[0]) if not highs else min(pts, key=lambda q: q[0])
                step *= 2.0
                mu = edge[0] - math.copysign(step, edge[2])
            else:
                a = max(lows, key=lambda q: q[0])
                b = min(highs, key=lambda q: q[0])
                cross = (b[1] - a[1] + a[2] * a[0] - b[2] * b[0]) / (a[2] - b[2])
                lower = a[1] + a[2] * (cross - a[0])  # the convex gain's minimum is at least this
                if lower > 1e-9 * scale or b[0] - a[0] <= 1e-12 * max(1.0, abs(cross)):
                    return False, cross
                mu = cross if a[0] < cross < b[0] else 0.5 * (a[0] + b[0])
            if not abs(mu) <= mu_max:
                return False, 0.0
            ok, g, s = at(mu)
            if ok:
                return True, mu
            pts.append((mu, g, s))
        return False, mu

    def ratio_bound(self, N: np.ndarray, D: np.ndarray, C: np.ndarray | None = None, mu0: float = 0.0,
                    rel: float = 1e-3) -> tuple[float, float]:
        """A proved upper bound on x.N / x.D (x.C = 0 when C is given), near the smallest this process allows:
        (bound, multiplier). For each multiplier mu, Dinkelbach's iteration finds the largest ratio of N + mu C
        to D over the policies (a convex function of mu, whose slope is x.C / x.D at the best policy); mu is
        searched for its minimum; the bound is certified at the best mu found: the smallest rho with
        N - rho D + mu C + max-choice P h - h <= 0 at every state (plus the truncation slack)."""
        if np.any(D <= 0):
            raise ValueError("the denominator must be positive at every state")
        dmin = float(np.min(D))
        c = self.cut
        Din = D[:, :c]
        rho_guess = [None]

        def dinkelbach(mu):
            R0 = N if mu == 0.0 else N + mu * C
            rho = rho_guess[0] if rho_guess[0] is not None else float(np.sum(R0 * D) / np.sum(D * D))
            for _ in range(60):
                g, h, x = self.optimise(R0 - rho * D)
                new = rho + g / float(np.sum(x * Din))  # the policy's own ratio (its gain is x.(R0 - rho D))
                if abs(new - rho) <= 1e-12 * max(abs(new), 1e-300):
                    break
                rho = new
            rho_guess[0] = rho
            g, h, x, lhs, hf = self._solve(R0 - rho * D, D)  # the bias at the ratio found, kappa settled
            # certify: the smallest rho' proved with this h
            cert = rho + float(np.max(lhs / D)) + self.slack * float(np.ptp(hf)) / dmin
            slope = float(np.sum(x * C[:, :c]) / np.sum(x * Din)) if C is not None else 0.0
            return rho, cert, slope

        mu = mu0 if C is not None else 0.0
        rho, cert, s = dinkelbach(mu)
        best = (cert, mu)
        if C is None:
            return best
        cscale = max(float(np.mean(np.abs(C))), 1e-300)
        flat = 1e-6 * cscale / max(float(np.mean(D)), 1e-300)
        mu_max = 1e6 * max(float(np.max(np.abs(N))), abs(rho) * float(np.max(D)), 1e-300) / cscale
        pts = [(mu, rho, s)]
        step = min(abs(rho / s), mu_max) if abs(s) > flat else 0.0
        for _ in range(MAX_MU):
            if abs(s) <= flat:
                break
            lows = [q for q in pts if q[2] < 0]
            highs = [q for q in pts if q[2] > 0]
            if not lows or not highs:
                edge = max(pts, key=lambda q: q[0]) if not highs else min(pts, key=lambda q: q[0])
                step *= 2.0
                mu = edge[0] - math.copysign(step, edge[2])
            else:
                a = max(lows, key=lambda q: q[0])
                b = min(highs, key=lambda q: q[0])
                cross = (b[1] - a[1] + a[2] * a[0] - b[2] * b[0]) / (a[2] - b[2])
                lower = a[1] + a[2] * (cross - a[0])
                if best[0] - lower <= rel * abs(best[0]) or b[0] - a[0] <= 1e-12 * max(1.0, abs(cross)):
                    break
                mu = cross if a[0] < cross < b[0] else 0.5 * (a[0] + b[0])
            if not abs(mu) <= mu_max:
                break
            rho, cert, s = dinkelbach(mu)
            pts.append((mu, rho, s))
            if cert < best[0]:
                best = (cert, mu)
        return best
