"""WRED, gentle WRED, RIO and overlapped n-RED drop probabilities (Takeo & Tasaka 2003, Köhler & Schäfer (1999)).

The drop curve is defined once, symbolically, and lambdified for numbers:

* :data:`P_WRED` -- Takeo & Tasaka (Takeo & Tasaka 2003), section II.A, the equation for
  ``P(avr)``: 0 if ``avr < min_th``; 1 if ``max_th <= avr``;
  ``(avr - min_th) / (P_d (max_th - min_th))`` otherwise.
* :data:`P_GENTLE` -- the "gentle" variant (Floyd, RED parameter notes 2000):
  between ``max_th`` and ``2 max_th`` the probability rises linearly from
  ``1/P_d`` to 1 instead of jumping to 1.

The average is ``avr <- (1 - alpha) avr + alpha q`` on every arrival
(Takeo & Tasaka 2003), ``alpha = 2^-n``. The three disciplines differ only in which
packets an average counts (Köhler & Schäfer 1999, section 2.4): WRED -- every colour reads
one average over all packets; RIO -- green (IN) reads the average of green
packets, yellow and red (OUT) read the average of all packets; overlapped n-RED
-- colour ``c`` reads the average of the packets of colours ``0..c``.
Colours: 0 green (AFx1), 1 yellow (AFx2), 2 red (AFx3).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy as sp

from qosbound.errors import ScenarioError

__all__ = ["avr", "min_th", "max_th", "P_d", "alpha", "P_WRED", "P_GENTLE", "EWMA", "drop_prob",
           "Profile", "avg_counts", "TAKEO_TABLE_I", "MODES"]

avr = sp.Symbol("avr", nonnegative=True)
min_th = sp.Symbol("min_th", nonnegative=True)
max_th = sp.Symbol("max_th", positive=True)
P_d = sp.Symbol("P_d", positive=True)
alpha = sp.Symbol("alpha", positive=True)
q = sp.Symbol("q", nonnegative=True)

#: Takeo & Tasaka (2003), section II.A: the WRED drop probability P(avr).
P_WRED = sp.Piecewise((0, avr < min_th), (1, avr >= max_th), ((avr - min_th) / (P_d * (max_th - min_th)), True))
#: Gentle RED: linear from 1/P_d at max_th to 1 at 2 max_th.
P_GENTLE = sp.Piecewise((0, avr < min_th), ((avr - min_th) / (P_d * (max_th - min_th)), avr < max_th),
                        (1 / P_d + (1 - 1 / P_d) * (avr - max_th) / max_th, avr < 2 * max_th), (1, True))
#: Takeo & Tasaka (2003), section II.A: avr <- (1 - alpha) avr + alpha q.
EWMA = (1 - alpha) * avr + alpha * q

MODES = ("wred", "rio", "nred")


@lru_cache(maxsize=None)
def _fn(gentle: bool):
    return sp.lambdify((avr, min_th, max_th, P_d), P_GENTLE if gentle else P_WRED, "numpy")


@lru_cache(maxsize=None)
def _scalar_fn(gentle: bool):
    return sp.lambdify((avr, min_th, max_th, P_d), P_GENTLE if gentle else P_WRED, "math")


def drop_prob(a, lo, hi, pd, gentle: bool = False):
    """Drop probability for average(s) ``a`` with thresholds ``lo`` < ``hi`` and denominator ``pd`` >= 1.

    A scalar ``a`` gives a float (the fixed-point solvers call this thousands of times), an array an array.
    """
    if np.ndim(a) == 0:
        return float(_scalar_fn(bool(gentle))(float(a), float(lo), float(hi), float(pd)))
    a = np.asarray(a, dtype=float)
    out = np.asarray(_fn(bool(gentle))(a, float(lo), float(hi), float(pd)), dtype=float)
    return np.broadcast_to(out, a.shape).copy() if out.shape != a.shape else out


def avg_counts(mode: str) -> np.ndarray:
    """3x3 0/1 matrix M: colour c's average counts the packets of colour k when M[c, k] = 1."""
    if mode == "wred":
        return np.ones((3, 3))
    if mode == "rio":
        return np.array([[1, 0, 0], [1, 1, 1], [1, 1, 1]], dtype=float)
    if mode == "nred":
        return np.tril(np.ones((3, 3)))
    raise ScenarioError(f"unknown dropper '{mode}'; expected one of {', '.join(MODES)}", field="dropper.mode")


@dataclass(frozen=True)
class Profile:
    """Per-colour thresholds (packets), mark-probability denominators, EWMA weight and discipline."""

    min_th: tuple[float, float, float]
    max_th: tuple[float, float, float]
    P_d: tuple[float, float, float]
    alpha: float = 2.0 ** -9
    mode: str = "wred"
    gentle: bool = False

    def __post_init__(self):
        for c in range(3):
            if not 0 <= self.min_th[c] < self.max_th[c]:
                raise ScenarioError(f"colour {c}: need 0 <= min_th < max_th, got {self.min_th[c]:g} and "
                                    f"{self.max_th[c]:g}", field="dropper")
            if self.P_d[c] < 1:
                raise ScenarioError(f"colour {c}: P_d = {self.P_d[c]:g} < 1 gives a probability above 1 "
                                    "below max_th", field="dropper")
        if not 0 < self.alpha <= 1:
            raise ScenarioError(f"EWMA weight {self.alpha:g} is not in (0, 1]", field="dropper.alpha")
        avg_counts(self.mode)

    @property
    def max_p(self) -> np.ndarray:
        return 1.0 / np.asarray(self.P_d, dtype=float)

    def prob(self, colour: int, a):
        """Drop probability of a ``colour`` packet when its own average is ``a``."""
        return drop_prob(a, self.min_th[colour], self.max_th[colour], self.P_d[colour], self.gentle)


#: Takeo & Tasaka (2003), Table I: (min_th, max_th) per drop precedence, identical in classes 1-4; P_d = 3, alpha = 2^-9.
TAKEO_TABLE_I = Profile(min_th=(24.0, 16.0, 8.0), max_th=(48.0, 40.0, 32.0), P_d=(3.0, 3.0, 3.0),
                        alpha=2.0 ** -9, mode="wred")
