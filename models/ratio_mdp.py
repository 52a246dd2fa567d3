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
land on ``cut - 1`` -- and the certificate is still checked on the whole process, with ``h`` extended linearly:
``h(i, n) = h(i, cut - 1) + kappa (n - cut + 1)`` for ``n >= cut``. The certificate's left side is then affine
in ``kappa`` at every state (increasing below the cut by the expected overshoot, decreasing above it by the
drift), and ``kappa >= 0`` is chosen to make its maximum smallest (a convex problem in one variable). The
truncation only saves work: the claim rests on the certificate, checked at every state.

Policy evaluation solves the policy's chain directly; where that system is singular (a policy with several
closed classes) the chain is made unichain by a restart of probability ``RESTART`` per step to state 0. The
restart changes only which ``h`` is found, not the certificate, which is evaluated on the process itself.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.optimize import linprog

__all__ = ["ChoiceMDP", "RESTART"]

#: Restart probability per step of the chains evaluated during policy iteration (not of the process bounded).
RESTART = 1e-9
#: At most this many policy-iteration steps per evaluation of a multiplier.
MAX_PI = 60
#: At most this many multipliers tried per ratio (ChoiceMDP.lagrange_bound).
MAX_MU = 40
#: A relative value this many times the largest reward marks a (nearly) singular solve.
HUGE = 1e9
#: Tolerance on the Little's-law row of the linear programme (per unit of x . D; see lp_bound).
LP_SLACK = 1e-9
#: The Lagrangian search (ChoiceMDP.lagrange_bound) stops when the proved value is within this relative distance
#: of its estimate of the best value (the linear programme's).
LAGRANGE_GAP = 1e-5
#: A policy's factorisation is made again with a fill-reducing order of its own (COLAMD) where the factors in the
#: order reused (computed for an earlier policy) have more than this many times the nonzeros they had there.
REORDER_FILL = 1.5
#: Whether policy evaluations reuse one fill-reducing order (ChoiceMDP._factor): about four times faster on the
#: largest ring-bound processes, the same certificates, but not the same rounding as an order of each system's
#: own, and the searches over multipliers and lattice points that pick what to certify follow the rounding (ties
#: among optimal policies): bounds proved may then differ in their fourth digit (benchmarks/bench_ring_bound.py).
REUSE_ORDER = False


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
        self.T, self.coef = [], []
        nprime = np.arange(self.nf, dtype=float)
        for t in self.Tfull:
            ti = t[:c, :, :c].copy()
            ti[:, :, c - 1] += t[:c, :, c:].sum(axis=2)
            self.T.append(ti)
            over = np.einsum("nam,m->n", t[:c, :, c:], nprime[c:] - c + 1)  # E[(n' - cut + 1)^+] below the cut
            drift = np.einsum("nam,m->n", t[c:], nprime) - nprime[c:]  # E[n'] - n above the cut
            if drift.size and not np.all(drift < 0):
                raise ValueError("the known component does not drift down above the cut")
            self.coef.append(np.concatenate([over, drift]))  # d(left side)/d(kappa) at each level
        self.kappa = 0.0  # the charge per level passed in the solved process (see _inner)
        self.slack = float(slack)
        self.size = self.N * self.nn
        for indptr, _ in self.post:
            if np.any(np.diff(indptr) < 1):
                raise ValueError("every label needs a non-empty choice set for every draw")
        # per draw: the group index of every entry of idx, and each entry's offset in its group
        self._grp = [np.repeat(np.arange(self.N), np.diff(p)) for p, _ in self.post]
        self._off = [np.arange(q.size) - p[g] for (p, q), g in zip(self.post, self._grp)]
        self._by_kind = [np.flatnonzero(self.kind == k) for k in range(len(self.T))]
        self._entries = None
        self._lu_key = None  # (policy, restart) of the last factorisation, and its solvers
        self._cur = None
        self._perm = self._perm_inv = None  # the order of the unknowns reused by the factorisations (_factor)
        self._fill = 0
        self.reuse_order = REUSE_ORDER
        self.factorisations = 0
        self.orderings = 0
        self.evaluations = 0
        self.lps = 0
        self._lp = None
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
        """Rewards of the solved (truncated) process from the process's rewards (N, nf): the draws that would
        pass the cut are charged ``kappa`` per level passed (the last certificate's best kappa), so that the
        solved h sees what the extension above the cut will cost."""
        if self.cut == self.nf:
            return R
        out = R[:, :self.cut].copy()
        if self.kappa:
            for k, sel in enumerate(self._by_kind):
                out[sel] += self.kappa * self.coef[k][None, :self.cut]
        return out

    def _certify(self, h: np.ndarray, R: np.ndarray, D: np.ndarray | None = None) -> float:
        """The certificate of ``h`` (solved below the cut) for rewards R on the whole process: the smallest over
        kappa >= 0 of max over states of the left side R + max-choice P h_kappa - h_kappa (divided by D when
        given: then the amount by which the ratio tested must be raised), plus the truncation slack."""
        c, nf = self.cut, self.nf
        if c < nf:
            hf = np.concatenate([h, np.repeat(h[:, -1:], nf - c, axis=1)], axis=1)  # kappa = 0
        else:
            hf = h
        W, _ = self._best(hf)
        lhs = R + self._expect(W, self.Tfull) - hf
        scale = D if D is not None else 1.0
        pad_unit = self.slack / (float(np.min(D)) if D is not None else 1.0)
        if c == nf:
            return float(np.max(lhs / scale)) + pad_unit * float(np.ptp(h))
        coef = np.empty_like(lhs)
        for k, sel in enumerate(self._by_kind):
            coef[sel] = self.coef[k][None, :]
        a, b = (lhs / scale).ravel(), (coef / scale).ravel()
        span = float(np.ptp(h))

        def f(kappa):
            return float(np.max(a + kappa * b)) + pad_unit * (span + kappa * (nf - c))

        lo, hi = 0.0, max(1.0, 2.0 * self.kappa)
        while f(2.0 * hi) < f(hi) and hi < 1e30:
            hi *= 2.0
        hi *= 2.0
        for _ in range(100):  # ternary search of the convex function on [0, hi]
            m1, m2 = lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0
            if f(m1) <= f(m2):
                hi = m2
            else:
                lo = m1
        best = lo if f(lo) <= f(0.0) else 0.0
        self.kappa = min(best, 4.0 * self.kappa) if self.kappa else best  # for the next solve (damped)
        return f(best)

    def certificate(self, h: np.ndarray, R: np.ndarray) -> float:
        """A proved upper bound on the long-run average of R (per step) of every process of the class: the
        largest left side of the certificate inequality (with h extended above the cut at the best kappa)."""
        return self._certify(h, R)

    # ---- policy evaluation -------------------------------------------------------------------------------------
    def _entries_by_row(self):
        """What the policies' systems share (built once): the entries of ``[1 | I - (1 - r) P]`` (module
        docstring: :meth:`_system`) listed by row -- so that the compressed-column matrix built from them has its
        rows sorted in every column and only sums its duplicates -- as (rows, fixed columns (-1 where the policy
        sets it), probabilities (of P's entries; 1 for the others), and for P's entries: their positions in the
        list, where their label's choice set starts in the concatenated sets, where their choice is in the
        concatenated policy, and their levels n'). An entry of P is ``T[kind i][n, a, n']`` from row ``(i, n)``
        to column ``(j, n')``, ``j`` the label the policy chooses at ``(i, a, n')``."""
        if self._entries is None:
            nn, N = self.nn, self.N
            rows, labs, ms, vals, base, flat = [], [], [], [], [], []
            start = 0
            for a, (indptr, idx) in enumerate(self.post):
                for k, sel in enumerate(self._by_kind):
                    if not sel.size:
                        continue
                    Tk = self.T[k][:, a, :]
                    nz_n, nz_m = np.nonzero(Tk)
                    rows.append((sel[:, None] * nn + nz_n[None, :]).ravel())
                    lab = np.repeat(sel, nz_n.size)
                    m = np.tile(nz_m, sel.size)
                    ms.append(m)
                    vals.append(np.tile(Tk[nz_n, nz_m], sel.size))
                    base.append(start + indptr[lab])
                    flat.append((a * N + lab) * nn + m)
                start += idx.size
            ones = np.arange(self.size)
            rows = np.concatenate(rows + [ones[1:], ones])  # P, the identity but at column 0, the column of ones
            nP = rows.size - 2 * self.size + 1
            cols = np.concatenate([np.full(nP, -1), ones[1:], np.zeros(self.size, dtype=np.int64)])
            vals = np.concatenate(vals + [np.ones(2 * self.size - 1)])
            order = np.argsort(rows, kind="stable")
            where = np.empty_like(order)
            where[order] = np.arange(order.size)
            self._entries = (rows[order], cols[order], vals[order], where[:nP], np.concatenate(base),
                             np.concatenate(flat), np.concatenate(ms), np.concatenate([q for _, q in self.post]))
        return self._entries

    def _p_columns(self, pol) -> np.ndarray:
        """The column of each entry of P (in the order of :meth:`_entries_by_row`'s positions) under ``pol``."""
        _, _, _, _, base, flat, m, idx = self._entries_by_row()
        choice = np.concatenate([p.ravel() for p in pol])
        return idx[base + choice[flat]] * self.nn + m

    def _matrix(self, pol) -> sp.csc_matrix:
        """The policy's chain P (sparse, states x states)."""
        rows, _, vals, pos, *_ = self._entries_by_row()
        return sp.csc_matrix((vals[pos], (rows[pos], self._p_columns(pol))), shape=(self.size, self.size))

    def _system(self, pol, restart: float, perm: np.ndarray | None = None) -> sp.csc_matrix:
        """[1 | (I - (1 - restart) P) without column 0]: unknowns (gain, h_1 .. h_last), h_0 = 0; with ``perm``
        (a permutation of the unknowns) its column j moved to position ``perm[j]``. Every entry is rounded as
        ``1 - (1 - restart) (p + p')`` (P's duplicates -- one per draw at most -- summed first) and entries that
        are exactly zero are not stored: the matrix is the same to the last bit however it is built, and so is a
        factorisation of it in a fill-reducing order of its own. (P's entries in column 0 are kept as zeros beside
        the column of ones, and summed into it.)"""
        rows, cols, vals, pos, *_ = self._entries_by_row()
        c = self._p_columns(pol)
        cols = cols.copy()
        cols[pos] = c
        if perm is not None:
            cols = perm[cols]
        shape = (self.size, self.size)
        if restart == 0.0:  # listed by row, P's entries before the identity's: summed as (-p - p') + 1
            vals = vals.copy()
            vals[pos] = np.where(c == 0, 0.0, -vals[pos])
            A = sp.csc_matrix((vals, (rows, cols)), shape=shape)
        else:
            fixed = np.ones(vals.size, dtype=bool)
            fixed[pos] = False
            P = sp.csc_matrix((np.where(c == 0, 0.0, vals[pos]), (rows[pos], cols[pos])), shape=shape)
            A = sp.csc_matrix((vals[fixed], (rows[fixed], cols[fixed])), shape=shape) - (1.0 - restart) * P
        A.eliminate_zeros()
        return A

    def _factor(self, pol, restart: float):
        """(solve(b), solve_transposed(b)) for the policy's system by a sparse LU factorisation (SuperLU, partial
        pivoting by rows) in a fill-reducing order of the unknowns computed for that system (COLAMD: about five
        sixths of a factorisation's time on the ring bound's largest processes). With ``reuse_order``
        (:data:`REUSE_ORDER`) the order is computed once and reused for the next policies, whose chains differ in
        a few choices: their systems are factorised with their columns in that order, and where the factors of one
        fill more than :data:`REORDER_FILL` times those the order was computed for, it is computed again on that
        system. RuntimeError where the system is singular."""
        if self._perm is not None and self.reuse_order:
            perm = self._perm
            lu = spla.splu(self._system(pol, restart, perm), permc_spec="NATURAL")
            self.factorisations += 1
            if lu.L.nnz + lu.U.nnz <= REORDER_FILL * self._fill:
                inv = self._perm_inv
                return (lambda b: lu.solve(b)[perm]), (lambda b: lu.solve(b[inv], trans="T"))
        lu = spla.splu(self._system(pol, restart), permc_spec="COLAMD")
        self.factorisations += 1
        self.orderings += 1
        self._perm = np.asarray(lu.perm_c, dtype=np.int64)
        self._perm_inv = np.argsort(self._perm)
        self._fill = lu.L.nnz + lu.U.nnz
        return lu.solve, (lambda b: lu.solve(b, trans="T"))

    def _solver(self, pol, key: bytes, restart: float):
        """(solve(b), solve_transposed(b)) for the system of policy ``pol`` (``key``: its bytes) with ``restart``,
        or with :data:`RESTART` where that system is singular; the last factorisation is kept while its policy is
        evaluated again."""
        if (key, restart) == self._lu_key:
            return self._cur
        for rs in (restart, RESTART):
            try:
                solvers = self._factor(pol, rs)
                break
            except RuntimeError:  # singular: the policy has several closed classes
                continue
        self._lu_key, self._cur = (key, rs), solvers
        return solvers

    def evaluate(self, pol, R: np.ndarray):
        """(gain, h, stationary frequencies) of policy ``pol`` for rewards R."""
        e0 = np.zeros(self.size)
        e0[0] = 1.0
        key = b"".join(p.tobytes() for p in pol)
        # without a restart first (exact for a unichain policy), unless this policy's system needed one when it
        # was factorised last (below)
        restart = RESTART if self._lu_key == (key, RESTART) else 0.0
        solve, solve_t = self._solver(pol, key, restart)
        z, x = solve(R.ravel()), solve_t(e0)
        if not restart and (not np.all(np.isfinite(z))
                            or np.max(np.abs(z)) > HUGE * (1.0 + float(np.max(np.abs(R))))):
            # (nearly) singular: a policy with closed classes apart from state 0; solve it restarted
            solve, solve_t = self._solver(pol, key, RESTART)
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
        best = None
        stall = 0
        for _ in range(MAX_PI):
            g, h, x = self.evaluate(pol, R)
            if best is None or g > best[0] + 1e-12 * (abs(best[0]) + float(np.ptp(R))):
                best, stall = (g, h, x, pol), 0
            else:  # no gain: policy iteration is cycling among (nearly) equal policies (a multichain process)
                stall += 1
                if stall >= 3:
                    break
            _, new = self._best(h, keep=pol)
            if all(np.array_equal(p, q) for p, q in zip(new, pol)):
                best = (g, h, x, pol)
                break
            pol = new
        g, h, x, pol = best
        self.policy = pol
        return g, h, x

    # ---- bounds ---------------------------------------------------------------------------------------------------
    def _lp_matrix(self):
        """The linear programme's constraints that do not depend on the rewards (built once): variables
        x(i, n) (state frequencies) then z(i, a, n', j) (choices); rows: each post-decision node (i, a, n')
        (choices out = frequency in), then each state (frequency = choices into it)."""
        if getattr(self, "_lp", None) is not None:
            return self._lp
        nn, N = self.nn, self.N
        nx = N * nn
        npost = N * self.A * nn
        rows, cols, vals = [], [], []
        nz = 0
        for a, (indptr, idx) in enumerate(self.post):
            i_of = np.repeat(np.arange(N), np.diff(indptr))
            E = idx.size
            zid = nx + nz + np.arange(E * nn)
            ii, jj, m = np.repeat(i_of, nn), np.repeat(idx, nn), np.tile(np.arange(nn), E)
            rows += [(ii * self.A + a) * nn + m, npost + jj * nn + m]
            cols += [zid, zid]
            vals += [np.ones(zid.size), -np.ones(zid.size)]
            nz += E * nn
        for k, sel in enumerate(self._by_kind):
            if not sel.size:
                continue
            for a in range(self.A):
                nzn, nzm = np.nonzero(self.T[k][:, a, :])
                rows.append(((sel[:, None] * self.A + a) * nn + nzm[None, :]).ravel())
                cols.append((sel[:, None] * nn + nzn[None, :]).ravel())
                vals.append(-np.broadcast_to(self.T[k][nzn, a, nzm][None, :], (sel.size, nzn.size)).ravel())
        rows.append(npost + np.arange(nx))
        cols.append(np.arange(nx))
        vals.append(np.ones(nx))
        A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                          shape=(npost + nx, nx + nz))
        self._lp = (A, nx, nz, npost)
        return self._lp

    def lp_bound(self, N: np.ndarray, D: np.ndarray, C: np.ndarray | None = None, polish: bool = True):
        """A proved upper bound on x.N / x.D over the process's long-run frequencies (with x.C = 0 when C is
        given): (bound, the multiplier of C). The linear programme max x.N s.t. balance, x.D = 1, x.C = 0 (the
        Charnes-Cooper form of the ratio) is solved by HiGHS; its dual gives ``h`` (the state rows), ``rho``
        and ``mu``; the bound is then CERTIFIED at every state with that ``h`` (:meth:`_certify`), and again with
        the ``h`` of an exact policy evaluation started from it (``polish``); the smaller is returned."""
        if np.any(D <= 0):
            raise ValueError("the denominator must be positive at every state")
        A, nx, nz, npost = self._lp_matrix()
        c = self.cut
        best = (math.inf, 0.0)
        for _ in range(3 if c < self.nf else 1):  # with a cut: the charge per level passed, settled
            Nin, Din = self._inner(N), D[:, :c]
            Aeq = sp.vstack([A, sp.csr_matrix(np.concatenate([Din.ravel(), np.zeros(nz)])[None, :])]).tocsr()
            b = np.zeros(Aeq.shape[0])
            b[A.shape[0]] = 1.0
            # x . C = 0 as |x . C| <= LP_SLACK: the exact chain satisfies it exactly, but with the balance rows it
            # is (nearly) redundant and a solver may call the equality infeasible by rounding. The programme
            # only finds h and mu; the claim is the certificate below.
            ub = {}
            if C is not None:
                row = np.concatenate([C[:, :c].ravel(), np.zeros(nz)])
                ub = {"A_ub": sp.csr_matrix(np.vstack([row, -row])), "b_ub": np.full(2, LP_SLACK)}
            res = linprog(np.concatenate([-Nin.ravel(), np.zeros(nz)]), A_eq=Aeq, b_eq=b, **ub,
                          bounds=(0, None), method="highs")
            self.lps += 1
            if res.status != 0:  # the programme failed numerically (a balance system singular by rounding):
                if polish:      # policy iteration alone finds an h (mu = 0), certified the same way
                    cert = self._dinkelbach(N, D, Din, 0.0)
                    if cert < best[0]:
                        best = (cert, 0.0)
                break
            y = res.eqlin.marginals
            h = -y[npost:npost + nx].reshape(self.N, c)
            h = h - h[0, 0]
            rho = -float(y[A.shape[0]])
            mu = float(res.ineqlin.marginals[0] - res.ineqlin.marginals[1]) if C is not None else 0.0
            R0 = N if C is None else N + mu * C
            kappa0 = self.kappa
            cert = rho + self._certify(h, R0 - rho * D, D)
            if cert < best[0]:
                best = (cert, mu)
            if polish:
                self.policy = self._best(h)[1]
                cert = self._dinkelbach(R0, D, Din, rho)
                if cert < best[0]:
                    best = (cert, mu)
            if c == self.nf or abs(self.kappa - kappa0) <= 0.05 * max(self.kappa, 1e-300):
                break
        return best

    def lagrange_bound(self, N: np.ndarray, D: np.ndarray, C: np.ndarray | None = None, mu: float = 0.0,
                       target: float | None = None) -> tuple[float, float, float]:
        """A proved upper bound on x.N / x.D over the process's long-run frequencies (with x.C = 0 when C is
        given), without a linear programme: ``(bound, its multiplier, estimate)``.

        For a multiplier ``mu``, Dinkelbach's iteration with policy iteration (:meth:`_dinkelbach`) finds the
        best policy's ratio of ``N + mu C`` to ``D`` and CERTIFIES it: the certificate inequality with that ``h``,
        ``rho`` and ``mu`` holds at every state (:meth:`_certify`), so -- by the module docstring's argument --
        every frequency vector with x.C = 0 has x.N <= rho x.D. Each multiplier tried gives such a proved value;
        the smallest is returned. How the multipliers are chosen does not enter the claim: Kelley's cutting
        planes in one variable, started at ``mu`` (e.g. the multiplier of a neighbouring problem). The function
        f(mu) = max over policies of (x.N + mu x.C) / x.D is convex (a maximum of lines, one per policy); the
        best policy found at each mu gives its line (a lower bound on f everywhere), the next mu is where the
        maximum of the lines found is smallest, and that minimum ``estimate`` is a lower bound on min f (the
        linear programme's value, by duality) up to the accuracy of the policies' evaluations. Stops when the
        proved value is within :data:`LAGRANGE_GAP` (relative) of the estimate, when the multiplier repeats,
        after :data:`MAX_MU` multipliers, or -- given a ``target`` -- as soon as the proved value is at most the
        target or the estimate above it (a sign test: the caller only needs to know which side it is on)."""
        if np.any(D <= 0):
            raise ValueError("the denominator must be positive at every state")
        Din = D[:, :self.cut]
        if C is None:
            cert, _ = self._dinkelbach(N, D, Din, 0.0, lines=True)
            return cert, 0.0, cert
        Cin = C[:, :self.cut]
        lines: list[tuple[float, float]] = []
        best = (math.inf, mu)
        rho, step, low = 0.0, None, -math.inf
        tried = set()
        for _ in range(MAX_MU):
            tried.add(mu)
            cert, x = self._dinkelbach(N + mu * C, D, Din, rho, lines=True)
            xd = float(np.sum(x * Din))
            s = float(np.sum(x * Cin)) / xd
            r = float(np.sum(x * self._inner(N))) / xd
            lines.append((r, s))
            if cert < best[0]:
                best = (cert, mu)
            pos = [ln for ln in lines if ln[1] > 0]
            neg = [ln for ln in lines if ln[1] < 0]
            if not pos or not neg:  # not bracketed yet: step away from the side the slopes point to
                if not pos and not neg:  # x.C = 0 already: this policy's line is flat, f(mu) is the minimum
                    low = r
                    break
                step = max(abs(mu), abs(r) / max(float(np.max(np.abs(Cin))), 1e-300)) if step is None else 4 * step
                mu = mu - step if not neg else mu + step
                rho = max(a + mu * b for a, b in lines)
            else:
                cands = [(b[0] - a[0]) / (a[1] - b[1]) for a in pos for b in neg]
                model = [max(a + m * b for a, b in lines) for m in cands]
                i = int(np.argmin(model))
                mu, low = cands[i], model[i]
                rho = low
            if target is not None and (best[0] <= target or low > target):
                break
            if best[0] - low <= LAGRANGE_GAP * abs(best[0]) or mu in tried:
                break
        return best[0], best[1], max(low, -math.inf)

    def _dinkelbach(self, R0: np.ndarray, D: np.ndarray, Din: np.ndarray, rho: float, lines: bool = False):
        """Dinkelbach's iteration on the ratio of R0 to D from the current policy, started at ``rho``; returns
        the bound CERTIFIED with the last policy's h (:meth:`_certify`), and with ``lines`` also the last
        policy's frequencies (of the solved process). With a cut, solved again (up to twice) while the
        certificate is above the ratio found and the charge per level passed (kappa) moved: the next solve sees
        the new charge."""
        best = math.inf
        for _ in range(3 if self.cut < self.nf else 1):
            for _ in range(20):
                g, hp, x = self.optimise(R0 - rho * D)
                new = rho + g / float(np.sum(x * Din))
                done = abs(new - rho) <= 1e-10 * max(abs(new), 1e-300)
                rho = new
                if done:
                    break
            g, hp, x = self.optimise(R0 - rho * D)
            kappa0 = self.kappa
            cert = rho + self._certify(hp, R0 - rho * D, D)
            best = min(best, cert)
            if (self.cut == self.nf or cert - rho <= LAGRANGE_GAP * abs(cert)
                    or abs(self.kappa - kappa0) <= 0.05 * max(self.kappa, 1e-300)):
                break
        return (best, x) if lines else best

    def ratio_interval(self, N: np.ndarray, D: np.ndarray) -> tuple[float, float]:
        """For a process without choice (every choice set one label), solved whole (no cut): an interval proved
        to hold x.N / x.D. With the policy's own ratio ``r`` and its bias ``h`` for ``N - r D``, every state has
        ``N - r D + P h - h = e(s)``; multiplying by the frequencies and summing gives ``x.N / x.D - r = x.e /
        x.D``, between the smallest and largest ``e(s) / D(s)`` (widened by the truncation slack)."""
        if any(np.any(np.diff(indptr) != 1) for indptr, _ in self.post):
            raise ValueError("ratio_interval needs a process without choice")
        if self.cut != self.nf:
            raise ValueError("ratio_interval needs the process solved whole")
        if np.any(D <= 0):
            raise ValueError("the denominator must be positive at every state")
        pol = [np.zeros((self.N, self.nn), dtype=np.int64) for _ in self.post]
        g, h, x = self.evaluate(pol, N)
        r = float(np.sum(x * N) / np.sum(x * D))
        g, h, x = self.evaluate(pol, N - r * D)
        W, _ = self._best(h)
        e = (N - r * D + self._expect(W, self.T) - h) / D
        pad = self.slack * float(np.ptp(h)) / float(np.min(D))
        return r + float(np.min(e)) - pad, r + float(np.max(e)) + pad
