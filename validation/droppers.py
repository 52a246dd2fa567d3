"""RED-family drop decisions and EWMA averages: the one numerical implementation every simulator uses.

All functions are numba-jitted (``nopython``, ``cache=True``) and may be called
from other jitted code or from Python. Queue lengths and averages are in
packets; probabilities are plain floats.

Public kernels and their signatures
-----------------------------------
``red_drop_prob(avg, min_th, max_th, max_p, gentle) -> float``
    RED / WRED drop probability for an average queue ``avg`` (Takeo & Tasaka 2003, eq. for
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

import numpy as np
from numba import njit

__all__ = ["WRED", "RIO", "NRED", "MODES", "red_drop_prob", "ewma_update", "ewma_idle", "avg_index",
           "update_averages", "colour_drop_prob"]

#: Average-sharing disciplines.
WRED = 0
RIO = 1
NRED = 2
MODES = {"wred": WRED, "rio": RIO, "nred": NRED}


@njit(cache=True, inline="always")
def red_drop_prob(avg, min_th, max_th, max_p, gentle=False):
    """Drop probability for average ``avg`` (0 / linear up to ``max_p`` / 1, or gentle up to 2*max_th)."""
    if avg < min_th:
        return 0.0
    if avg < max_th:
        return max_p * (avg - min_th) / (max_th - min_th)
    if gentle and avg < 2.0 * max_th:
        return max_p + (1.0 - max_p) * (avg - max_th) / max_th
    return 1.0


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


def _warm() -> None:  # pragma: no cover - compile once for callers that time things
    red_drop_prob(1.0, 0.0, 2.0, 0.1, False)
    update_averages(np.zeros(3), np.zeros(3), 0.5)
    colour_drop_prob(np.zeros(3), 0, np.zeros(3), np.ones(3), np.ones(3), 0, False)
