"""Stationary distributions of Storm-built DTMCs and CTMCs by a direct sparse solve, with TRUE error brackets.

Storm's iterative long-run routes stop on a convergence criterion, not on an error bound (seen: 4.32e-8 for
7.98e-8 on an n-RED queue, 1.8e-6 relative on a mean queue length, both at "precision 1e-10"). Here:

1. The generator ``Q`` (``R - diag(R 1)`` for a CTMC's rate matrix, ``P - I`` for a DTMC) is read from the
   built model, its single bottom strongly connected component ``B`` (where the stationary mass lives) is
   found, and ``pi Q_B = 0, pi 1 = 1`` is solved by a sparse LU factorisation of ``Q_B`` grounded at one
   state, followed by one step of iterative refinement with the residual computed in extended precision
   (:mod:`qosbound.markov`, the one solve shared with the closed forms).

2. Every long-run value ``g = pi f`` (a reward or an indicator) comes with a bracket that does not depend on
   how accurate the solve was: for ANY vector ``v``, ``pi (f + Q v) = pi f`` because ``pi Q = 0``, and ``pi``
   is a probability vector on ``B``, so

       min_{i in B} (f + Q v)_i  <=  g  <=  max_{i in B} (f + Q v)_i.

   With ``v`` the (numerical) solution of the Poisson equation ``Q v = g 1 - f`` the bracket is as narrow as
   the solve is good; a poor ``v`` gives a wide, still true, bracket. ``f + Q v`` is evaluated in extended
   precision and widened by a bound on that evaluation's rounding.

What the bracket does not cover: the rates/probabilities are the doubles Storm computed from the model's
expressions (the model as built, not its real-number semantics).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from qosbound.errors import EngineError
from qosbound.markov import bottom_component, grounded_solve, offdiagonal

__all__ = ["Stationary", "solve", "generator", "MAX_DIRECT_STATES"]

# Above this many states in the bottom component the sparse LU is not attempted (fill-in grows fast on the
# three-dimensional n-RED chains: 112k states factor in ~30 s and ~1 GB).
MAX_DIRECT_STATES = 250_000

_LD = np.longdouble
_EPS_LD = float(np.finfo(_LD).eps)


def _matrix(model) -> sp.csr_matrix:
    """The transition matrix of a deterministic sparse model (rates for a CTMC) as SciPy CSR (float64)."""
    T = model.transition_matrix
    n = model.nr_states
    indptr = np.zeros(n + 1, dtype=np.int64)
    cols: list[int] = []
    vals: list[float] = []
    for i in range(n):
        row = T.get_row(i)
        for e in row:
            cols.append(e.column)
            vals.append(e.value)
        indptr[i + 1] = len(cols)
    return sp.csr_matrix((np.asarray(vals, dtype=np.float64), np.asarray(cols, dtype=np.int64), indptr),
                         shape=(n, n))


def generator(model) -> tuple[sp.csr_matrix, np.ndarray]:
    """(off-diagonal part W, diagonal d) of the generator: Q = W + diag(d), d = -(row sums of W) (extended
    precision; :func:`qosbound.markov.offdiagonal`). For a DTMC, W is P without its diagonal."""
    return offdiagonal(_matrix(model))


@dataclass
class Stationary:
    """Stationary vector ``x`` (over all states; zero outside the bottom component) and the means to bracket
    long-run values."""

    x: np.ndarray
    bottom: np.ndarray  # indices of the bottom SCC
    W: sp.csr_matrix  # off-diagonal part of Q on the bottom SCC
    d: np.ndarray  # diagonal of Q on the bottom SCC (extended precision)
    lu: object
    k: int  # grounded state (local index in the bottom SCC)
    states: int

    def _Qv(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Q v in extended precision, and sum_j |Q_ij| |v_j| (for the rounding bound)."""
        W = self.W
        vl = v.astype(_LD)
        rows = np.repeat(np.arange(W.shape[0]), np.diff(W.indptr))
        prod = W.data.astype(_LD) * vl[W.indices]
        out = np.zeros(W.shape[0], dtype=_LD)
        np.add.at(out, rows, prod)
        absout = np.zeros(W.shape[0], dtype=_LD)
        np.add.at(absout, rows, np.abs(prod))
        out += self.d * vl
        absout += np.abs(self.d * vl)
        return out, absout

    def _solve_poisson(self, f: np.ndarray, g: float) -> np.ndarray:
        """v with Q v = g 1 - f on the bottom component, v_k = 0 (then f + Q v = g 1)."""
        m = len(self.bottom)
        rest = np.r_[0:self.k, self.k + 1:m]
        v = np.zeros(m)
        if m > 1:
            v[rest] = self.lu.solve(np.asarray(g - f[rest], dtype=np.float64))
        return v

    def value(self, f) -> tuple[float, float, float]:
        """(estimate, low, high) of the long-run average of the state function ``f`` (array over all states):
        low <= pi f <= high holds for the model as built (see the module docstring). "As built" is Storm's float
        model: its parse can store a rate an ulp away from the decimal written and its exit rates are rounded sums,
        so against the text's rational chain the bracket holds up to that rounding (about 1e-16 relative per rate,
        amplified by the chain's conditioning; tests/models/test_engine.py measures it on random chains)."""
        f = np.asarray(f, dtype=np.float64)
        if f.shape != (self.states,):
            raise EngineError(f"state function of length {f.shape} for a model of {self.states} states")
        fb = f[self.bottom]
        xb = self.x[self.bottom]
        est = math.fsum((xb * fb).tolist()) if len(fb) < 2_000_000 else float(np.dot(xb, fb))
        if not np.all(np.isfinite(fb)):
            return est, -math.inf, math.inf
        v = self._solve_poisson(fb, est)
        if not np.all(np.isfinite(v)):
            return est, float(fb.min()), float(fb.max())
        qv, absqv = self._Qv(v)
        w = fb.astype(_LD) + qv
        nnz = int(np.max(np.diff(self.W.indptr))) + 2 if self.W.nnz else 2
        margin = (nnz + 2) * _EPS_LD * (np.abs(fb).astype(_LD) + absqv)
        lo = float(np.min(w - margin))
        hi = float(np.max(w + margin))
        # float64 rounding of the end points: step outwards
        lo, hi = float(np.nextafter(lo, -np.inf)), float(np.nextafter(hi, np.inf))
        # the bracket can never be wider than the range of f
        lo, hi = max(lo, float(fb.min())), min(hi, float(fb.max()))
        est = min(max(est, lo), hi)
        return est, lo, hi

    def values(self, F: np.ndarray, chunk: int = 256) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return _values_many(self, F, chunk)


def solve(model, *, max_states: int = MAX_DIRECT_STATES) -> Stationary:
    """Stationary distribution of a DTMC/CTMC with one bottom SCC, by the grounded sparse LU solve of
    :func:`qosbound.markov.grounded_solve` (the one solve of pi Q = 0)."""
    n = model.nr_states
    W, d = generator(model)
    B = bottom_component(W)
    m = len(B)
    if m > max_states:
        raise EngineError(f"bottom component of {m} states is above the direct-solve limit ({max_states})")
    WB = W[B][:, B].tocsr()
    dB = d[B]
    xb, lu, k = grounded_solve(WB, dB)
    x = np.zeros(n)
    x[B] = xb
    return Stationary(x, B, WB, dB, lu, k, n)


def _values_many(self: Stationary, F: np.ndarray, chunk: int = 256) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimates, lows, highs) for the columns of ``F`` (states x functions) at once, each bracket TRUE as in
    :meth:`Stationary.value`; ``f + Q v`` is evaluated in float64 here with a bound on its rounding."""
    F = np.asarray(F, dtype=np.float64)
    if F.ndim != 2 or F.shape[0] != self.states:
        raise EngineError(f"state functions of shape {F.shape} for a model of {self.states} states")
    FB = F[self.bottom]
    xb = self.x[self.bottom]
    m = len(self.bottom)
    est = xb @ FB
    lo = FB.min(axis=0).astype(np.float64)
    hi = FB.max(axis=0).astype(np.float64)
    if m == 1 or not np.all(np.isfinite(FB)):
        return np.clip(est, lo, hi), lo, hi
    rest = np.r_[0:self.k, self.k + 1:m]
    W = self.W
    absW = abs(W)
    d = self.d.astype(np.float64)
    nnz = int(np.max(np.diff(W.indptr))) + 2
    u = np.finfo(np.float64).eps
    for s in range(0, FB.shape[1], chunk):
        cols = slice(s, min(s + chunk, FB.shape[1]))
        Fc = FB[:, cols]
        V = np.zeros_like(Fc)
        V[rest] = self.lu.solve(np.ascontiguousarray(est[cols][None, :] - Fc[rest]))
        if not np.all(np.isfinite(V)):
            continue
        w = Fc + W @ V + d[:, None] * V
        margin = (nnz + 3) * u * (np.abs(Fc) + absW @ np.abs(V) + np.abs(d)[:, None] * np.abs(V))
        lo[cols] = np.maximum(lo[cols], np.nextafter((w - margin).min(axis=0), -np.inf))
        hi[cols] = np.minimum(hi[cols], np.nextafter((w + margin).max(axis=0), np.inf))
    return np.clip(est, lo, hi), lo, hi

