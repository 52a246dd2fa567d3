"""RED-family drop decisions and EWMA averages: the one numerical implementation every simulator uses.

All functions are numba-jitted (``nopython``, ``cache=True``) and may be called
from other jitted code or from Python. Queue lengths and averages are in
packets; probabilities are plain floats.

Public kernels and their signatures
-----------------------------------
``red_drop_prob(avg, min_th, max_th, max_p, gentle) -> float``
    The SymPy curves :data:`qosbound.analytic.wred.P_WRED` / ``P_GENTLE``, lambdified and jitted (not
    re-typed). RED / WRED drop probability for an average queue ``avg`` (Takeo & Tasaka 2003, eq. for
    P(avr); Floyd & Jacobson 1993): 0 below ``min_th``, ``max_p*(avg-min_th)/(max_th-min_th)``
    between, 1 at or above ``max_th``. ``max_p = 1/P_d`` (P_d is the
    mark-probability denominator of Takeo & Tasaka (2003)). With ``gentle=True`` the
    probability rises linearly from ``max_p`` at ``max_th`` to 1 at ``2*max_th``
    instead of jumping to 1.
``ewma_update(avg, q, alpha) -> float``
    ``(1 - alpha)*avg + alpha*q`` (Takeo & Tasaka (2003): avr <- (1-alpha) avr + alpha q), run on each arrival.
``ewma_idle(avg, alpha, m) -> float``
    ``(1 - alpha)**m * avg``: Floyd & Jacobson's decay for an idle period worth ``m``
    packet transmissions (for callers that update the average after an idle link).
``avg_index(mode, colour) -> int``
    Which average a colour's drop decision reads: ``WRED`` -> 2 (all packets);
    ``RIO`` -> 0 for green (IN average) else 2 (ALL average); ``NRED`` (overlapped
    n-RED, Köhler & Schäfer (1999)) -> ``colour`` (the average over colours 0..colour).
``update_averages(avgs, qcol, alpha) -> None``
    In place: ``avgs[k] <- ewma_update(avgs[k], sum(qcol[0..k]), alpha)`` for k = 0, 1, 2,
    where ``qcol[c]`` is the number of colour-c packets queued at the arrival.
``colour_drop_prob(avgs, colour, min_th, max_th, max_p, mode, gentle) -> float``
    ``red_drop_prob`` of ``avgs[avg_index(mode, colour)]`` with the colour's thresholds
    (``min_th``, ``max_th``, ``max_p`` are float64 arrays indexed by colour).

Colours are drop precedences: 0 green (AFx1), 1 yellow (AFx2), 2 red (AFx3).
Every average is updated on every arrival (with its own cumulative count), so
the three disciplines differ only in which average a colour reads; for WRED all
colours read the average over all packets, as in Takeo & Tasaka (2003).
"""

from __future__ import annotations

import sympy as sp
from numba import njit
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)

from qosbound.analytic import wred as _wred

__all__ = ["WRED", "RIO", "NRED", "MODES", "red_drop_prob", "ewma_update", "ewma_idle", "avg_index",
           "update_averages", "colour_drop_prob"]

#: Average-sharing disciplines.
WRED = 0
RIO = 1
NRED = 2
MODES = {"wred": WRED, "rio": RIO, "nred": NRED}

_max_p = sp.Symbol("max_p", positive=True)


def _curve(expr):
    """The SymPy drop curve of :mod:`qosbound.analytic.wred` in ``max_p = 1/P_d``, lambdified to scalar Python
    (``math``) code that numba compiles: the kernels below run the one definition, never a re-typed copy."""
    return sp.lambdify((_wred.avr, _wred.min_th, _wred.max_th, _max_p), expr.subs(_wred.P_d, 1 / _max_p), "math")


_P_WRED = _curve(_wred.P_WRED)
_P_GENTLE = _curve(_wred.P_GENTLE)
# Lambdified code has no source file, so these two are not cached on disk themselves; they are compiled into
# (and cached with) every cached kernel that calls them.
_p_wred = njit(cache=False, inline="always")(_P_WRED)
_p_gentle = njit(cache=False, inline="always")(_P_GENTLE)


@njit(cache=True, inline="always")
def red_drop_prob(avg, min_th, max_th, max_p, gentle=False):
    """Drop probability for average ``avg``: :data:`qosbound.analytic.wred.P_WRED` (``gentle``:
    :data:`~qosbound.analytic.wred.P_GENTLE`) with ``P_d = 1/max_p``."""
    if gentle:
        return float(_p_gentle(avg, min_th, max_th, max_p))
    return float(_p_wred(avg, min_th, max_th, max_p))


@njit(cache=True, inline="always")
def ewma_update(avg, q, alpha):
    """One EWMA step: ``(1 - alpha)*avg + alpha*q``."""
    return (1.0 - alpha) * avg + alpha * q


@njit(cache=True)
def ewma_idle(avg, alpha, m):
    """Decay of the average over an idle period of ``m`` packet times: ``(1 - alpha)**m * avg``."""
    return avg * (1.0 - alpha) ** m


@njit(cache=True, inline="always")
def avg_index(mode, colour):
    """Index of the average that ``colour`` reads under ``mode`` (WRED, RIO, NRED)."""
    if mode == 0:
        return 2
    if mode == 1:
        return 0 if colour == 0 else 2
    return colour


@njit(cache=True, inline="always")
def update_averages(avgs, qcol, alpha):
    """Update the three cumulative averages in place from the per-colour queue counts."""
    s = 0.0
    for k in range(3):
        s += qcol[k]
        avgs[k] = (1.0 - alpha) * avgs[k] + alpha * s


@njit(cache=True, inline="always")
def colour_drop_prob(avgs, colour, min_th, max_th, max_p, mode, gentle):
    """Drop probability of a ``colour`` arrival given the averages and per-colour thresholds."""
    a = avgs[avg_index(mode, colour)]
    return red_drop_prob(a, min_th[colour], max_th[colour], max_p[colour], gentle)

