"""An upper bound on the EF loss of N CBR calls with independent random phases through the PQ + TxQ port.

The system is the one of :mod:`qosbound.systems.pq_txq` (Ferrari, Pau & Raffaelli 2001, section II; the
semantics of :mod:`qosbound.analytic.ef_bound`): a PQ of ``K`` EF packets before a transmission queue (TxQ)
that admits a packet whenever fewer than ``Q_t`` units are occupied. EF is ``N`` identical CBR calls (Ferrari
et al. 2001, section V): call ``j`` sends a packet of ``L`` bytes every ``T`` seconds from a phase drawn
uniformly in ``[0, T)``, independently per call. Best effort is saturated or any load: the argument never
uses what BE does.

Derivation (the bound holds for every EF arrival, in expectation over the phases)
--------------------------------------------------------------------------------

Tag a packet of call 1 arriving at ``t``. If the PQ is empty it is accepted (``K >= 1``). Otherwise let ``s``
be the arrival that began the current PQ backlog and ``x = t - s``; the PQ holds
``n = A[s, t) - lost - D[s, t) <= A - D`` packets, ``A`` the EF arrivals and ``D`` the EF packets admitted
into the TxQ in ``[s, t)``. The tagged packet is lost only if ``n >= K``.

1. *Admissions, by work.* On ``[s, t)`` the PQ is non-empty, so only EF enters the TxQ and the line is busy
   (an empty TxQ would take the head EF packet at once). With ``W`` the TxQ work,
   ``0 <= W(t-) = W(s-) + D S - x`` and ``W(s-) <= V`` (step 1 of :mod:`qosbound.analytic.ef_bound`:
   ``V = (Q_t - 1) phi T_u + 8 L_max / C``), so ``D >= (x - V) / S`` with ``S = 8 L / C``.
2. *Admissions, by units.* The TxQ is full at ``t-`` (``O(t-) >= Q_t`` units: an EF packet waits) and
   ``O(s-) <= Q_t - 1 + k_max``. The line sent ``C x / 8`` bytes in ``[s, t)``, all of them of packets that
   left in ``[s, t)`` except fewer than ``L_max`` of the one on the wire at ``t``; a packet of ``b`` bytes frees
   ``ceil(b / unit) >= b / unit`` units. Hence ``D k_EF = O(t-) - O(s-) + U_out >=
   (C x / 8 - L_max) / unit - (k_max - 1)``.
   So ``D >= a(x) = max(0, ceil((x - V) / S), ceil(((C x / 8 - L_max) / unit - k_max + 1) / k_EF))``.
3. *Arrivals.* Call 1 sent ``floor(x / T)`` packets in ``[t - x, t)``; call ``j != 1`` sent
   ``floor(x / T) + B_j``, ``B_j`` a Bernoulli of parameter ``{x / T}`` (the fractional part), because its phase
   relative to ``t`` is uniform and independent of call 1's (Roberts & Virtamo, "The superposition of periodic
   cell arrival streams in an ATM multiplexer", IEEE Trans. Communications 39(2), 1991: the count of
   uniformly phased periodic streams in a window is binomial). Calls that had not started yet send fewer.
   So ``A <= M(x) = N floor(x / T) + Bin(N - 1, {x / T})``, and ``M`` is non-decreasing in ``x`` on every
   sample path.
4. *Union bound.* Lost implies ``M(x) - a(x) >= K`` for some ``x >= 0``. Beyond
   ``x_end = (V / S + N - K) / (1 / S - N / T)`` it cannot hold, since ``M(x) <= N (x / T + 1)`` while
   ``a(x) >= (x - V) / S`` grows faster (``N S / T = rho < 1``). Cut ``[0, x_end]`` at ``0 = x_0 < ... < x_m``
   (the multiples of ``T`` among them); on a cell ``(x_i, x_{i+1}]``, ``M(x) <= M(x_{i+1})`` and
   ``a(x) >= a(x_i)``, so

   ``P(lost) <= sum_i P(M(x_{i+1}) >= K + a(x_i))``,

   each term a binomial tail. Every EF arrival is lost with at most this probability, so the expected
   fraction of EF packets lost (the metric ``EF.loss``) is at most the sum (capped at 1).

The bound is sound for any cut; a cut at every step of ``a`` (and every multiple of ``T``) is the tightest
per term, at the price of counting overlapping events once per cell. It neglects nothing, but it is loose:
the work argument charges the whole worst-case TxQ work ``V`` before the PQ drains at line rate, and the
union counts nearly the same event in neighbouring cells. It is useful where calls are few against the PQ
(it proves zero-ish loss), and far below the true capacity at high load.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

from qosbound.errors import ScenarioError
from qosbound.results import Interval, Result

__all__ = ["x", "S", "V", "T", "N", "K", "a_work_expr", "a_units_expr", "x_end_expr", "loss_bound", "loss_result",
           "applies", "bound_text", "MAX_CELLS"]

x = sp.Symbol("x", nonnegative=True)  # s, time since the PQ backlog began
S = sp.Symbol("S", positive=True)  # s, transmission time of one EF packet, 8 L / C
V = sp.Symbol("V", positive=True)  # s, the TxQ work bound (qosbound.analytic.ef_bound.txq_work)
T = sp.Symbol("T", positive=True)  # s, the calls' period, 8 L / r_call
N = sp.Symbol("N", positive=True, integer=True)  # calls
K = sp.Symbol("K", positive=True, integer=True)  # PQ capacity, packets
C = sp.Symbol("C", positive=True)  # bit/s
unit = sp.Symbol("unit", positive=True)  # bytes
L_max = sp.Symbol("L_max", positive=True)  # bytes
k_max = sp.Symbol("k_max", positive=True, integer=True)  # units of the largest packet
k_ef = sp.Symbol("k_EF", positive=True, integer=True)  # units of an EF packet

#: Step 1: EF work admitted into the TxQ in a backlog of length x, in EF packets (before rounding up).
a_work_expr = (x - V) / S
#: Step 2: the same by the units freed, in EF packets (before rounding up).
a_units_expr = ((C * x / 8 - L_max) / unit - (k_max - 1)) / k_ef
#: Step 4: past this backlog length no arrival can be lost.
x_end_expr = (V / S + N - K) / (1 / S - N / T)

bound_text = ("P(lost) <= sum_i P(N floor(x_{i+1}/T) + Bin(N-1, {x_{i+1}/T}) >= K + a(x_i)), "
              "a(x) = max(0, ceil((x-V)/S), ceil(((C x/8 - L_max)/unit - k_max + 1)/k_EF))")

#: Cells of the union bound: beyond this many the cut is coarsened (any cut is sound).
MAX_CELLS = 200_000


@lru_cache(maxsize=None)
def _fn(name: str):
    table = {"work": ((x, V, S), a_work_expr), "units": ((x, C, L_max, unit, k_max, k_ef), a_units_expr),
             "end": ((V, S, N, K, T), x_end_expr)}
    args, expr = table[name]
    return sp.lambdify(args, expr, "numpy")


def _ceil(v: np.ndarray) -> np.ndarray:
    """Round up, forgiving the floating-point error of a value that is a whole number."""
    return np.ceil(v - 1e-9 * np.maximum(1.0, np.abs(v)))


def admitted(xs, *, V_s: float, S_s: float, C_bps: float, L_max_B: float, unit_B: float, k_max_u: int,
             k_ef_u: int) -> np.ndarray:
    """``a(x)``: EF packets the TxQ has surely admitted in a PQ backlog of length ``x`` (steps 1-2)."""
    xs = np.asarray(xs, dtype=float)
    w = _ceil(_fn("work")(xs, V_s, S_s))
    u = _ceil(_fn("units")(xs, C_bps, L_max_B, unit_B, k_max_u, k_ef_u))
    return np.maximum(0.0, np.maximum(w, u))


def applies(p) -> bool:
    """Whether the bound covers the parameters: EF is identical CBR streams of one rate, each with a random
    phase (``calls``, equal ``streams``, or a single random-phase CBR stream), and ``rho < 1``."""
    if p.rho >= 1:
        return False
    if not p.ef_streams:
        return p.arrivals == "cbr"
    rates = {float(r) for r, _, _ in p.ef_streams}
    return all(k == "cbr" and ph < 0 for _, k, ph in p.ef_streams) and len(rates) == 1


def loss_bound(p, txq_work: float) -> tuple[float, dict]:
    """The upper bound on ``EF.loss`` (capped at 1) and how it was computed: ``N``, ``T``, the cells, the
    cell that contributes most. ``txq_work``: ``V`` of :func:`qosbound.analytic.ef_bound.txq_work`."""
    if not applies(p):
        raise ScenarioError("the CBR-call loss bound needs identical random-phase CBR calls and rho < 1",
                            field="arrivals")
    n = max(1, len(p.ef_streams))
    rate = float(p.ef_streams[0][0]) if p.ef_streams else float(p.ef_rate)
    L, C_ = float(p.ef_size), float(p.C)
    S_s = 8.0 * L / C_
    T_s = 8.0 * L / rate
    K_ = int(p.pq_cap)
    kw = dict(V_s=float(txq_work), S_s=S_s, C_bps=C_, L_max_B=max(float(np.max(p.be_sizes)), L),
              unit_B=float(p.unit), k_max_u=int(p.k_max), k_ef_u=int(p.k_ef))
    x_end = max(0.0, float(_fn("end")(kw["V_s"], S_s, n, K_, T_s)))
    # Cut [0, x_end] at every step of a(x) (work: V + k S; units: every freed unit) and every multiple of T;
    # where that is more than MAX_CELLS cuts, at every k-th of each (any cut is sound, a coarser one looser).
    unit_time = 8.0 * float(p.unit) / C_  # a(x) by units steps when a unit more has surely left
    families = [(kw["V_s"], S_s), (8.0 * kw["L_max_B"] / C_, unit_time), (T_s, T_s)]
    counts = [max(0.0, (x_end - start) / step) + 2 for start, step in families]
    stride = max(1, int(np.ceil(sum(counts) / MAX_CELLS)))
    cuts = np.unique(np.concatenate([[0.0, x_end]] + [start + step * np.arange(0, int(c), stride)
                                                       for (start, step), c in zip(families, counts)]))
    cuts = cuts[(cuts >= 0.0) & (cuts <= x_end)]
    left, right = cuts[:-1], cuts[1:]
    if left.size == 0:  # x_end = 0: only a packet arriving into a backlog of length 0 could be lost
        left, right = np.array([0.0]), np.array([0.0])
    need = K_ + admitted(left, **kw)  # arrivals in [t - x, t) that would fill the PQ
    q = np.floor(right / T_s + 1e-12)
    frac = np.clip(right / T_s - q, 0.0, 1.0)
    k = need - n * q  # the binomial part must reach this
    from scipy import stats  # costly (half a second): only this bound needs it, and most runs never call it

    terms = np.where(k <= 0, 1.0, stats.binom.sf(k - 1, n - 1, frac))
    total = float(min(1.0, terms.sum()))
    worst = int(np.argmax(terms))
    return total, {"calls": n, "period_s": T_s, "pq_cap": K_, "txq_work_s": float(txq_work), "x_end_s": x_end,
                   "cells": int(left.size), "largest_term": float(terms[worst]),
                   "largest_term_at_s": float(right[worst])}


def loss_result(p, V: float, cls: str = "EF") -> Result:
    """``<cls>.loss.cbr_bound``: :func:`loss_bound` as a result, an upper bound on ``<cls>.loss``."""
    B, info = loss_bound(p, V)
    note = (f"{info['calls']} CBR calls with independent uniform phases, period {info['period_s']:.6g} s, PQ of "
            f"{info['pq_cap']} packets: union over {info['cells']} backlog lengths of binomial tails of the calls' "
            "arrivals against the EF packets the TxQ has surely admitted; holds whatever best effort does")
    return Result(f"{cls}.loss.cbr_bound", "closed-form", B, "1", Interval.upper_bound(B, note=note),
                  {"formula": bound_text, "source": "qosbound.analytic.cbr_loss (derivation in its "
                   "docstring; the binomial window count of Roberts & Virtamo 1991)", **info},
                  bounds=(f"{cls}.loss",))
