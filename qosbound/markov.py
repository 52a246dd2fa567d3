"""Stationary distribution of a finite Markov chain given as a matrix: the one direct solve of pi Q = 0.

It lives in the neutral core (beside ``units``, ``errors`` and ``results``) because all three lower layers
need it: ``analytic`` (the RED composition chain, the slotted marker chains), ``models`` (the TSQ background
chain, the cross-engine check against Storm) and the tests of ``validation``. None of them may import another,
so the routine cannot live in any one of them.

Chains built by Storm are solved by :mod:`qosbound.models.stationary`, which reads Storm's sparse matrix, finds
the bottom component and returns true error brackets; this module is the plain solve for matrices built in
NumPy/SciPy by the closed forms.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

__all__ = ["stationary", "stationary_dtmc"]


def stationary(Q) -> np.ndarray:
    """Stationary vector of an irreducible chain with generator ``Q`` (rows sum to 0), dense or sparse.

    Solves ``pi Q = 0, sum(pi) = 1`` directly: the last balance equation is replaced by the normalisation
    and the system is factorised by LU (sparse when ``Q`` is sparse). Tiny negative round-off is clipped and
    the vector renormalised. A DTMC with transition matrix ``P`` has generator ``P - I``
    (:func:`stationary_dtmc`).
    """
    n = Q.shape[0]
    b = np.zeros(n)
    b[-1] = 1.0
    if sp.issparse(Q):
        keep = sp.diags(np.r_[np.ones(n - 1), 0.0])
        ones = sp.csr_matrix((np.ones(n), (np.full(n, n - 1), np.arange(n))), shape=(n, n))
        A = (keep @ sp.csr_matrix(Q, dtype=float).T + ones).tocsc()
        pi = spsolve(A, b, permc_spec="MMD_AT_PLUS_A")
    else:
        A = np.array(Q, dtype=float).T
        A[n - 1, :] = 1.0
        pi = np.linalg.solve(A, b)
    pi = np.clip(np.asarray(pi, dtype=float), 0.0, None)
    return pi / pi.sum()


def stationary_dtmc(P) -> np.ndarray:
    """Stationary vector of an irreducible DTMC with transition matrix ``P``: ``pi (P - I) = 0``, sum 1."""
    n = P.shape[0]
    eye = sp.identity(n, format="csr") if sp.issparse(P) else np.eye(n)
    return stationary(P - eye)
