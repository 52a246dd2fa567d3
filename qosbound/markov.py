"""Stationary distribution of a finite Markov chain: the one direct solve of pi Q = 0, sum(pi) = 1.

It lives in the neutral core (beside ``units``, ``errors`` and ``results``) because all three lower layers
need it: ``analytic`` (the RED composition chain, the slotted marker chains), ``models`` (Storm-built chains in
:mod:`qosbound.models.stationary`, which adds error brackets, and the TSQ background chain) and the tests of
``validation``. None of those layers may import another for it, so the routine cannot live in any one of them.

The solve (for a transition matrix ``P``, a rate matrix ``R`` or a generator ``Q`` alike, since only the
off-diagonal part ``W`` matters): the diagonal is ``d = -(row sums of W)`` in extended precision, so
``Q = W + diag(d)``; the single bottom strongly connected component ``B`` (where the stationary mass lives;
transient states get 0) is found; ``pi Q_B = 0`` is solved by a sparse LU factorisation of ``Q_B`` grounded at
one state (re-grounded at the most probable state when that one carries less than 1e-6 of its mass),
followed by one step of iterative refinement with the residual computed in extended precision.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla
from scipy.sparse import csgraph

from qosbound.errors import EngineError

__all__ = ["stationary", "stationary_dtmc", "offdiagonal", "bottom_component", "grounded_solve"]

_LD = np.longdouble
# Re-ground when some state is this many times more probable than the grounded one: the solve loses about
# this factor of relative accuracy (a slotted trTCM chain grounded at a state of mass 1e-27 had residual 0.017).
_GROUND_RATIO = 1e6


def offdiagonal(M) -> tuple[sp.csr_matrix, np.ndarray]:
    """(off-diagonal part W as CSR float64, diagonal d = -(row sums of W) in extended precision) of a
    transition, rate or generator matrix (dense or sparse): the generator is ``W + diag(d)``."""
    M = sp.csr_matrix(M, dtype=np.float64)
    W = (M - sp.diags(M.diagonal())).tocsr()
    W.eliminate_zeros()
    rows = np.repeat(np.arange(W.shape[0]), np.diff(W.indptr))
    dl = np.zeros(W.shape[0], dtype=_LD)
    np.add.at(dl, rows, W.data.astype(_LD))
    return W, -dl


def bottom_component(W: sp.csr_matrix) -> np.ndarray:
    """Indices of the single bottom strongly connected component of the graph of ``W``; EngineError when
    there are several (long-run values then depend on the start)."""
    n = W.shape[0]
    if n == 1:
        return np.array([0])
    ncomp, labels = csgraph.connected_components(W, directed=True, connection="strong")
    coo = W.tocoo()
    leaving = labels[coo.row] != labels[coo.col]
    non_bottom = np.zeros(ncomp, dtype=bool)
    non_bottom[labels[coo.row[leaving]]] = True
    bottoms = np.flatnonzero(~non_bottom)
    if len(bottoms) != 1:
        raise EngineError(f"the model has {len(bottoms)} bottom strongly connected components; the direct "
                          "stationary solve needs exactly one (long-run values then depend on the start)")
    return np.flatnonzero(labels == bottoms[0])


def grounded_solve(W: sp.csr_matrix, d: np.ndarray) -> tuple[np.ndarray, object, int]:
    """Stationary vector of the irreducible chain with generator ``W + diag(d)`` (``W`` off-diagonal, ``d`` in
    extended precision), with the LU factors of the generator grounded at state ``k`` (row and column ``k``
    removed) and ``k``: ``(x, lu, k)``; ``lu`` is None for a single state."""
    m = W.shape[0]
    if m == 1:
        return np.ones(1), None, 0
    Q = (W + sp.diags(np.asarray(d, dtype=np.float64))).tocsc()

    def factor(k):
        rest = np.r_[0:k, k + 1:m]
        try:
            lu = sla.splu(Q[rest][:, rest].tocsc(), permc_spec="MMD_AT_PLUS_A")
        except (RuntimeError, MemoryError) as e:
            raise EngineError(f"direct stationary solve failed: {e}") from None
        return rest, lu

    k = 0
    rest, lu = factor(k)
    for attempt in range(3):
        y = lu.solve(-np.asarray(Q[k, rest].todense()).ravel(), trans="T")
        if attempt == 2 or (np.all(np.isfinite(y)) and np.max(np.abs(y)) <= _GROUND_RATIO):
            break
        # the grounded state carries too little mass (x_j / x_k = y_j): ground at the most probable state
        k = int(rest[int(np.nanargmax(np.where(np.isfinite(y), np.abs(y), -1)))])
        rest, lu = factor(k)
    if not np.all(np.isfinite(y)):
        raise EngineError("direct stationary solve failed: the grounded system is singular")
    x = np.empty(m)
    x[k] = 1.0
    x[rest] = y
    x = np.clip(x, 0.0, None)
    x /= math.fsum(x.tolist())
    # one step of iterative refinement: residual r = x Q in extended precision, e Q = r, x <- x - e
    r = _xQ(W, d, x)
    e = np.zeros(m)
    e[rest] = lu.solve(np.asarray(r[rest], dtype=np.float64), trans="T")
    e -= math.fsum(e.tolist()) * x
    if np.all(np.isfinite(e)):
        x = np.clip(x - e, 0.0, None)
        x /= math.fsum(x.tolist())
    return x, lu, k


def _xQ(W: sp.csr_matrix, d: np.ndarray, x: np.ndarray) -> np.ndarray:
    """x (W + diag d) in extended precision."""
    xl = x.astype(_LD)
    rows = np.repeat(np.arange(W.shape[0]), np.diff(W.indptr))
    out = np.zeros(W.shape[0], dtype=_LD)
    np.add.at(out, W.indices, W.data.astype(_LD) * xl[rows])
    return out + np.asarray(d, dtype=_LD) * xl


def stationary(Q) -> np.ndarray:
    """Stationary vector (over all states, 0 on transient ones) of a chain with generator ``Q`` (rows sum to
    0; dense or sparse) and one bottom strongly connected component: ``pi Q = 0, sum(pi) = 1``.

    Only the off-diagonal part of ``Q`` is read, so a DTMC's transition matrix gives the same answer as its
    generator ``P - I`` (:func:`stationary_dtmc`).
    """
    W, d = offdiagonal(Q)
    B = bottom_component(W)
    x = np.zeros(W.shape[0])
    x[B] = grounded_solve(W[B][:, B].tocsr(), d[B])[0]
    return x


def stationary_dtmc(P) -> np.ndarray:
    """Stationary vector of a DTMC with transition matrix ``P`` and one bottom component: pi (P - I) = 0, sum 1."""
    return stationary(P)
