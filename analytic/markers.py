"""Token-bucket markers: long-run colour fractions of srTCM (RFC 2697) and trTCM (RFC 2698).

Closed forms (SymPy) for constant-bit-rate input of rate ``r`` (bit/s), in the
long run (the buckets' depths only shift a finite number of packets):

* trTCM colour-blind (RFC 2698 sec. 3; Köhler & Schäfer (1999) sec. 2.3): the P bucket passes
  ``min(r, PIR)``, green packets also take C tokens, so
  ``G = min(1, CIR/r)``, ``Y = min(1, PIR/r) - G``, ``R = 1 - min(1, PIR/r)``.
* trTCM colour-aware with input fractions ``(g0, y0, r0)``: a non-red packet
  passes P with ``f_P = min(1, PIR/(r (g0 + y0)))``; green needs C as well:
  ``G = min(g0 f_P, CIR/r)``, ``Y = (g0 + y0) f_P - G``, ``R = 1 - (g0 + y0) f_P``.
* srTCM colour-blind (RFC 2697 sec. 3): the E bucket fills only when C
  overflows, which happens in the long run only when ``r < CIR``; so
  ``G = min(1, CIR/r)``, ``Y = 0``, ``R = 1 - G``.
* srTCM colour-aware: ``G = min(g0, CIR/r)``; C overflows at ``max(0, CIR - r g0)``
  into E, which pre-yellow packets use: ``Y = min(y0, max(0, CIR/r - g0))``; ``R = 1 - G - Y``.
* two-colour token bucket (Jourjon et al. 2008 edge marker): ``IN = min(1, CIR/r)``.

Random input, fixed sizes: :func:`slotted_marker` solves a slotted chain for every
RFC 2697/2698 variant (colour-blind or colour-aware) -- in each slot the buckets
first gain token granules (capped at their depths), then a packet of ``g``
granules arrives with probability ``p`` and is marked. It is exact for Bernoulli
arrivals; :func:`poisson_fractions` takes its limit as the slot shrinks (``p -> 0``
with ``p/slot`` fixed), Richardson-extrapolated with an error estimate.
:func:`slotted_trtcm` is its colour-blind trTCM case, the chain of
``models/marker.prism``.

Variable packet sizes: packet and byte fractions differ
------------------------------------------------------
A token bucket admits a packet only if it holds at least the packet's size, so
with variable sizes it passes small packets more often than large ones: the
fraction of *packets* marked green exceeds the fraction of *bytes*. The two
consumers need different fractions: the droppers act per packet, so the drop
and queue models take per-colour *packet* rates; delivered throughput adds up
*bytes*. Both are computed here (:func:`marker_fractions`).

For Poisson arrivals with exponential sizes (mean ``s``) one bucket (token rate
``c`` bytes/s, depth ``B``) is a finite dam: its deficit ``D = B - tokens``
drains at ``c`` and jumps by a packet's size when the packet fits (``D + S <= B``).
Level crossing gives its stationary law in closed form (:data:`DAM_K`); with the
offered load ``rho = lambda s / c`` and the depth in mean sizes ``b = B / s``

* packet fraction that conforms: ``1 - e^-rho / (E + rho K)`` (:data:`DAM_PASS_PACKETS`),
* byte fraction that conforms: ``K / (E + rho K)`` (:data:`DAM_PASS_BYTES`),

with ``E = exp(b (1 - rho) - rho e^-b)`` and
``K = int_0^b (e^y - 1) exp(-rho (y + e^-y)) dy``, an incomplete-gamma
difference. A two-colour bucket, srTCM's green (C alone) and trTCM's red (P
alone) are single dams and exact; the second bucket of srTCM / trTCM sees the
first one's output, which is not Poisson: it is approximated (see
:func:`marker_fractions`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy as sp
from scipy import sparse

from qosbound.errors import ScenarioError
from qosbound.markov import stationary_dtmc

__all__ = ["r", "CIR", "PIR", "TRTCM_BLIND", "TRTCM_AWARE", "SRTCM_BLIND", "SRTCM_AWARE", "TWO_COLOUR",
           "cbr_fractions", "slotted_trtcm", "slotted_marker", "poisson_fractions", "DAM_K", "DAM_PASS_PACKETS",
           "DAM_PASS_BYTES", "dam_exponential", "MarkerFractions", "marker_fractions"]

r, CIR, PIR = sp.symbols("r CIR PIR", positive=True)
g0, y0 = sp.symbols("g0 y0", nonnegative=True)

#: RFC 2698 colour-blind, CBR long run: (G, Y, R).
TRTCM_BLIND = (sp.Min(1, CIR / r), sp.Min(1, PIR / r) - sp.Min(1, CIR / r), 1 - sp.Min(1, PIR / r))
_fP = sp.Min(1, PIR / (r * (g0 + y0)))
#: RFC 2698 colour-aware, CBR long run with pre-colour fractions (g0, y0, 1-g0-y0).
TRTCM_AWARE = (sp.Min(g0 * _fP, CIR / r), (g0 + y0) * _fP - sp.Min(g0 * _fP, CIR / r), 1 - (g0 + y0) * _fP)
#: RFC 2697 colour-blind, CBR long run.
SRTCM_BLIND = (sp.Min(1, CIR / r), sp.Integer(0), 1 - sp.Min(1, CIR / r))
_Ya = sp.Min(y0, sp.Max(0, CIR / r - g0))
#: RFC 2697 colour-aware, CBR long run.
SRTCM_AWARE = (sp.Min(g0, CIR / r), _Ya, 1 - sp.Min(g0, CIR / r) - _Ya)
#: Two-colour token bucket (Jourjon et al. 2008): (IN, OUT).
TWO_COLOUR = (sp.Min(1, CIR / r), 1 - sp.Min(1, CIR / r))

_EXPR = {("trtcm", False): TRTCM_BLIND, ("trtcm", True): TRTCM_AWARE, ("srtcm", False): SRTCM_BLIND,
         ("srtcm", True): SRTCM_AWARE}


@lru_cache(maxsize=None)
def _fn(kind: str, aware: bool):
    if kind == "two-colour":
        G, R = TWO_COLOUR
        return sp.lambdify((r, CIR, PIR, g0, y0), [G, sp.Integer(0), R], "numpy")
    return sp.lambdify((r, CIR, PIR, g0, y0), list(_EXPR[(kind, aware)]), "numpy")


def cbr_fractions(kind: str, rate: float, cir: float, pir: float | None = None, aware: bool = False,
                  pre=(1.0, 0.0, 0.0)) -> np.ndarray:
    """Long-run (green, yellow, red) fractions for CBR input at ``rate`` (same unit as the token rates)."""
    if kind not in ("trtcm", "srtcm", "two-colour"):
        raise ScenarioError(f"unknown marker '{kind}'; expected trtcm, srtcm or two-colour", field="marker.kind")
    if pir is None:
        pir = cir
    if not (rate > 0 and cir > 0 and pir > 0):
        raise ScenarioError("marker and traffic rates must be positive", field="marker")
    if kind == "trtcm" and pir < cir:
        raise ScenarioError("trTCM needs PIR >= CIR (RFC 2698)", field="marker.pir")
    pre = np.asarray(pre, dtype=float)
    if np.any(pre < 0) or abs(pre.sum() - 1) > 1e-9:
        raise ScenarioError("pre-colour fractions must be non-negative and sum to 1", field="marker.precolour")
    if aware and pre[0] + pre[1] == 0:
        return np.array([0.0, 0.0, 1.0])
    out = np.array(_fn(kind, bool(aware) and kind != "two-colour")(rate, cir, pir, pre[0], pre[1]), dtype=float)
    return np.clip(out, 0.0, 1.0)


def slotted_trtcm(p: float, ip: int, ic: int, pbs: int, cbs: int, g: int, return_chain: bool = False):
    """Colour-blind trTCM on the slotted chain of ``models/marker.prism``: (G, Y, R) fractions of arriving packets.

    State ``(tp, tc)`` in granules at the start of a slot. Each slot:
    ``tp <- min(pbs, tp + ip)``, ``tc <- min(cbs, tc + ic)``; then with
    probability ``p`` a packet of ``g`` granules arrives: red if ``tp < g``;
    else yellow if ``tc < g`` (``tp -= g``); else green (both ``-= g``).
    The colour-blind trTCM case of :func:`slotted_marker` (one chain for every variant); with ``return_chain``
    also its transition matrix (states ``(tc, tp)`` in lexicographic order) and stationary vector.
    """
    return slotted_marker("trtcm", p, g, ic, cbs, ip, pbs, return_chain=return_chain)


# ---- Poisson input: a general slotted chain and its limit -------------------------------------------------

def slotted_marker(kind: str, p: float, g: int, c_gain: int, c_depth: int, second_gain: int, second_depth: int,
                   aware: bool = False, pre=(1.0, 0.0, 0.0), return_chain: bool = False):
    """(G, Y, R) fractions of arriving packets on a slotted chain, for every RFC 2697/2698 variant.

    State: the two buckets' tokens in granules at the start of a slot. Each slot the buckets first gain tokens
    (trTCM: C gains ``c_gain`` up to ``c_depth``, P gains ``second_gain`` up to ``second_depth``; srTCM: C gains
    ``c_gain`` up to ``c_depth`` and what overflows goes to E, depth ``second_depth``), then with probability
    ``p`` a packet of ``g`` granules arrives, pre-coloured green/yellow/red with probabilities ``pre`` when
    ``aware``, and is marked:

    * trTCM (RFC 2698 sec. 3): red if pre-red (aware) or P < g; else yellow if pre-yellow (aware) or C < g,
      P -= g; else green, P -= g and C -= g.
    * srTCM (RFC 2697 sec. 3): green if (blind or pre-green) and C >= g, C -= g; else yellow if (blind or not
      pre-red) and E >= g, E -= g; else red.
    """
    if kind not in ("trtcm", "srtcm"):
        raise ScenarioError(f"unknown marker kind '{kind}'", field="marker.kind")
    if not 0 < p <= 1:
        raise ScenarioError("arrival probability per slot must be in (0, 1]", field="marker")
    if g <= 0 or c_depth < g or second_depth < g or c_gain < 0 or second_gain < 0:
        raise ScenarioError("bucket depths must hold at least one packet", field="marker")
    w = np.asarray(pre if aware else (1.0, 0.0, 0.0), dtype=float)
    a_, b_ = np.meshgrid(np.arange(c_depth + 1), np.arange(second_depth + 1), indexing="ij")
    c0, s0 = a_.ravel(), b_.ravel()
    n = c0.size
    c1 = np.minimum(c_depth, c0 + c_gain)
    if kind == "trtcm":
        s1 = np.minimum(second_depth, s0 + second_gain)
    else:
        s1 = np.minimum(second_depth, s0 + (c0 + c_gain - c1))
    idx = lambda c, s: c * (second_depth + 1) + s  # noqa: E731
    rows, cols, vals = [np.arange(n)], [idx(c1, s1)], [np.full(n, 1.0 - p)]
    colour_weight = np.zeros((n, 3))
    for pc in range(3):
        if w[pc] == 0:
            continue
        if kind == "trtcm":
            red = (pc == 2) | (s1 < g) if aware else (s1 < g)
            yel = ~red & (((pc == 1) | (c1 < g)) if aware else (c1 < g))
            grn = ~red & ~yel
            cn = np.where(grn, c1 - g, c1)
            sn = np.where(red, s1, s1 - g)
        else:
            grn = (c1 >= g) & ((pc == 0) if aware else True)
            yel = ~grn & (s1 >= g) & ((pc != 2) if aware else True)
            red = ~grn & ~yel
            cn = np.where(grn, c1 - g, c1)
            sn = np.where(yel, s1 - g, s1)
        rows.append(np.arange(n))
        cols.append(idx(cn, sn))
        vals.append(np.full(n, p * w[pc]))
        colour_weight[:, 0] += w[pc] * grn
        colour_weight[:, 1] += w[pc] * yel
        colour_weight[:, 2] += w[pc] * red
    T = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))
    pi = stationary_dtmc(T)
    frac = pi @ colour_weight
    frac = frac / frac.sum()
    if return_chain:
        return frac, T, pi
    return frac


def poisson_fractions(kind: str, rate: float, size: float, cir: float, cbs: float, second_depth: float,
                      pir: float | None = None, aware: bool = False, pre=(1.0, 0.0, 0.0),
                      resolution: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Long-run (G, Y, R) fractions for Poisson arrivals of fixed-size packets; returns (fractions, error).

    Cached by the marker's parameters (:func:`_poisson_fractions`): a large trTCM takes minutes to solve,
    and ``admit`` evaluates the same marker at every step.
    """
    f, e = _poisson_fractions(str(kind), float(rate), float(size), float(cir), float(cbs), float(second_depth),
                              None if pir is None else float(pir), bool(aware), tuple(float(x) for x in pre),
                              int(resolution))
    return np.array(f), np.array(e)


@lru_cache(maxsize=256)
def _poisson_fractions(kind: str, rate: float, size: float, cir: float, cbs: float, second_depth: float,
                       pir: float | None, aware: bool, pre: tuple, resolution: int) -> tuple[tuple, tuple]:
    """Long-run (G, Y, R) fractions for Poisson arrivals of fixed-size packets; returns (fractions, error).

    Poisson input of ``rate`` bit/s in packets of ``size`` bytes; trTCM with ``cir``/``cbs`` and
    ``pir``/``second_depth`` (PBS), srTCM with ``cir``/``cbs`` and ``second_depth`` (EBS); rates bit/s, depths
    bytes. The slotted chain of :func:`slotted_marker` with ``r`` granules per packet and slots short enough
    that a bucket gains whole granules is exact for arrivals on a slot grid; it approaches Poisson input as
    ``r`` grows (slot length and granule both ~1/r, error O(1/r)). The result is the Richardson
    extrapolation of ``2r`` and ``4r``; ``error`` is its difference from the extrapolation of ``r`` and
    ``2r``, an estimate of the remaining discretisation error (checked against simulation in the tests). A two-colour bucket is the srTCM
    with no E bucket.
    """
    from fractions import Fraction

    if rate <= 0 or size <= 0 or cir <= 0:
        raise ScenarioError("rate, size and CIR must be positive", field="marker")
    if kind == "trtcm":
        if pir is None or pir < cir:
            raise ScenarioError("trTCM needs PIR >= CIR", field="marker.pir")
        ratio = Fraction(pir / cir).limit_denominator(16)
        if abs(float(ratio) - pir / cir) > 1e-9 * pir / cir:
            raise ScenarioError("PIR/CIR must be a ratio of small integers for the Poisson solution",
                                field="marker.pir")
        c_gain, s_gain = ratio.denominator, ratio.numerator
    else:
        c_gain, s_gain = 1, 0
    lam = rate / (8.0 * size)
    # Keep the finest chain (4r granules per packet) near 1e6 states: large buckets get a coarser start, and
    # the error estimate says what that costs.
    sd_bytes = max(second_depth, size)
    resolution = int(max(1, min(resolution, np.floor(1e3 * size / (4.0 * np.sqrt(max(cbs, size) * sd_bytes))))))

    def at(r: int) -> np.ndarray:
        delta = size / r  # granule, bytes
        h = c_gain * 8.0 * delta / cir  # slot: C gains c_gain granules
        p = -np.expm1(-lam * h)
        cd = max(int(round(cbs / delta)), r)
        sd = max(int(round(second_depth / delta)), r) if second_depth > 0 else r
        return slotted_marker(kind, p, r, c_gain, cd, s_gain, sd, aware, pre)

    f1, f2, f4 = at(resolution), at(2 * resolution), at(4 * resolution)
    coarse, fine = 2 * f2 - f1, 2 * f4 - f2
    est = np.clip(fine, 0.0, 1.0)
    est = est / est.sum()
    return tuple(float(x) for x in est), tuple(float(x) for x in np.abs(fine - coarse))


# ---- Poisson input, exponential sizes: one bucket is a finite dam ------------------------------------------

rho_d = sp.Symbol("rho", positive=True)  # offered bytes per token byte, lambda s / c
b_d = sp.Symbol("b", positive=True)  # bucket depth in mean packet sizes, B / s

#: K = int_0^b (e^y - 1) exp(-rho (y + e^-y)) dy, written with u = e^-y, t = rho u as incomplete gammas.
DAM_K = (rho_d ** (1 - rho_d) * (sp.uppergamma(rho_d - 1, rho_d * sp.exp(-b_d)) - sp.uppergamma(rho_d - 1, rho_d))
         - rho_d ** (-rho_d) * (sp.uppergamma(rho_d, rho_d * sp.exp(-b_d)) - sp.uppergamma(rho_d, rho_d)))
_DAM_E = sp.exp(b_d * (1 - rho_d) - rho_d * sp.exp(-b_d))
#: Fraction of arriving packets that fit the bucket (finite dam, Poisson input, exponential sizes).
DAM_PASS_PACKETS = 1 - sp.exp(-rho_d) / (_DAM_E + rho_d * DAM_K)
#: Fraction of arriving bytes that fit the bucket: tokens are used at c (1 - P(full)) = lambda s * this.
DAM_PASS_BYTES = DAM_K / (_DAM_E + rho_d * DAM_K)

_dam_fn = sp.lambdify((rho_d, b_d), [DAM_PASS_PACKETS, DAM_PASS_BYTES], "mpmath")


@lru_cache(maxsize=4096)
def dam_exponential(rho: float, depth: float) -> tuple[float, float]:
    """(packet, byte) fractions of a Poisson stream with exponential sizes that one token bucket passes.

    ``rho``: offered load on the bucket, ``lambda * mean size / token rate``; ``depth``: bucket depth in mean
    packet sizes. Evaluated in 50-digit arithmetic (mpmath), so the closed form's cancellations cost nothing.
    """
    import mpmath

    if not (rho >= 0 and depth >= 0 and np.isfinite(rho) and np.isfinite(depth)):
        raise ScenarioError("a token bucket needs a finite non-negative load and depth", field="marker")
    if depth == 0:
        return 0.0, 0.0
    if rho == 0:  # the bucket is always full
        return float(-np.expm1(-depth)), float(1.0 - np.exp(-depth) * (1.0 + depth))
    with mpmath.workdps(50):
        p, b = _dam_fn(mpmath.mpf(rho), mpmath.mpf(depth))
        return float(min(max(p, 0), 1)), float(min(max(b, 0), 1))


@dataclass(frozen=True)
class MarkerFractions:
    """Long-run colour fractions (green, yellow, red) of a marker's output, by packets and by bytes.

    ``exact[c]`` says whether colour ``c``'s fractions are exact for the stated input; otherwise they are an
    approximation that neglects ``neglects``, with an error estimate ``error[c]`` (0 when none is known).
    """

    packets: tuple
    bytes: tuple
    exact: tuple
    error: tuple
    neglects: str
    source: str

    def mean_sizes(self, size: float) -> np.ndarray:
        """Mean size (bytes) of the packets of each colour; ``size`` for a colour with no packets."""
        p, b = np.asarray(self.packets), np.asarray(self.bytes)
        return np.where(p > 0, size * b / np.where(p > 0, p, 1.0), size)


def _stage(lam: float, size: float, token_rate: float, depth: float):
    """One bucket fed a Poisson stream (packets/s, mean bytes) with exponential sizes.

    Returns (passed packets/s, passed bytes/s, rejected packets/s, rejected bytes/s, tokens overflowing /s).
    """
    if lam <= 0:
        return 0.0, 0.0, 0.0, 0.0, token_rate
    if token_rate <= 0:
        return 0.0, 0.0, lam, lam * size, 0.0
    rho = lam * size / token_rate
    ap, ab = dam_exponential(rho, depth / size)
    used = lam * size * ab
    return lam * ap, used, lam * (1 - ap), lam * size * (1 - ab), max(token_rate - used, 0.0)


@lru_cache(maxsize=1024)
def marker_fractions(kind: str, arrivals: str, sizes: str, rate: float, size: float, cir: float, cbs: float,
                     second_rate: float | None = None, second_depth: float | None = None, aware: bool = False,
                     pre: tuple = (1.0, 0.0, 0.0)) -> MarkerFractions:
    """Colour fractions by packets and by bytes of a marker fed ``rate`` bit/s of ``size``-byte packets.

    ``kind``: ``trtcm`` (``second_rate`` PIR, ``second_depth`` PBS), ``srtcm`` (``second_depth`` EBS) or
    ``two-colour``; rates bit/s, depths bytes; ``arrivals`` ``poisson`` or ``cbr``; ``sizes`` ``fixed`` or
    ``exponential`` (mean ``size``). Which formula answers:

    * CBR, fixed sizes: the smooth-input closed forms (:func:`cbr_fractions`), exact in the long run;
      packets and bytes coincide.
    * Poisson, fixed sizes: the slotted chain's limit (:func:`poisson_fractions`), an approximation with
      a Richardson error estimate; packets and bytes coincide.
    * Poisson, exponential sizes: the finite dam (:func:`dam_exponential`). Exact for the two-colour
      bucket, srTCM's green and trTCM's red; the second bucket (srTCM's E, trTCM's C) is fed the first
      one's output, taken as Poisson with exponential sizes of the same mean (an approximation).
    * CBR, exponential sizes: as Poisson (an approximation that neglects the regularity of the arrivals).

    Cached by its (hashable) arguments.
    """
    pre = tuple(float(x) for x in pre)
    if kind not in ("trtcm", "srtcm", "two-colour"):
        raise ScenarioError(f"unknown marker '{kind}'; expected trtcm, srtcm or two-colour", field="marker.kind")
    if not (rate > 0 and size > 0 and cir > 0 and cbs > 0):
        raise ScenarioError("rate, size, CIR and CBS must be positive", field="marker")
    if kind == "trtcm" and (second_rate is None or second_depth is None):
        raise ScenarioError("trTCM needs PIR and PBS", field="marker.pir")
    if kind == "srtcm" and second_depth is None:
        raise ScenarioError("srTCM needs EBS", field="marker.ebs")
    if sizes == "fixed":
        return _fixed_size_fractions(kind, arrivals, rate, size, cir, cbs, second_rate, second_depth, aware, pre)
    if sizes != "exponential" or arrivals not in ("poisson", "cbr"):
        raise ScenarioError(f"no marker solution for {arrivals} arrivals with {sizes} sizes", field="traffic")
    return _exponential_size_fractions(kind, arrivals, rate, size, cir, cbs, second_rate, second_depth, aware, pre)


def _fixed_size_fractions(kind: str, arrivals: str, rate: float, size: float, cir: float, cbs: float,
                          second_rate: float | None, second_depth: float | None, aware: bool,
                          pre: tuple) -> MarkerFractions:
    """:func:`marker_fractions` for fixed sizes: the smooth-input closed forms for CBR input, the slotted
    chain's limit for Poisson input."""
    if arrivals == "cbr":
        f = cbr_fractions(kind, rate, cir, second_rate if kind == "trtcm" else None, aware=aware, pre=pre)
        f = tuple(float(x) for x in f)
        return MarkerFractions(f, f, (True,) * 3, (0.0,) * 3, "",
                               "long-run fractions for smooth (CBR) input, qosbound.analytic.markers")
    if kind == "trtcm":
        f, err = poisson_fractions("trtcm", rate, size, cir, cbs, second_depth, pir=second_rate, aware=aware,
                                   pre=pre)
    else:
        # A two-colour bucket is srTCM's C bucket alone: C never depends on E, so IN = srTCM green.
        ebs = second_depth if kind == "srtcm" else size
        f, err = poisson_fractions("srtcm", rate, size, cir, cbs, ebs, aware=aware and kind == "srtcm", pre=pre)
        if kind == "two-colour":
            f, err = np.array([f[0], 0.0, f[1] + f[2]]), np.array([err[0], 0.0, err[0]])
    f = tuple(float(x) for x in f)
    return MarkerFractions(f, f, (False,) * 3, tuple(float(x) for x in err),
                           "slot discretisation of the Poisson input (Richardson-extrapolated; the interval is "
                           "an error estimate)", "slotted-chain limit for Poisson input, qosbound.analytic.markers")


def _exponential_size_fractions(kind: str, arrivals: str, rate: float, size: float, cir: float, cbs: float,
                                second_rate: float | None, second_depth: float | None, aware: bool,
                                pre: tuple) -> MarkerFractions:
    """:func:`marker_fractions` for exponential sizes: the finite dam per bucket, the second bucket fed the
    first one's output (an approximation named in the result); CBR input taken as Poisson."""
    lam = rate / (8.0 * size)
    g0, y0, r0 = pre if aware else (1.0, 0.0, 0.0)
    pk = np.zeros(3)  # packets/s per colour
    by = np.zeros(3)  # bytes/s per colour
    exact = [True, True, True]
    neglects = []
    if kind == "two-colour":
        pp, pb, rp, rb, _ = _stage(lam * g0, size, cir / 8.0, cbs)
        pk[:] = pp, 0.0, rp + lam * (1 - g0)
        by[:] = pb, 0.0, rb + lam * size * (1 - g0)
    elif kind == "srtcm":
        # Green: C alone (exact). E fills with C's overflow and serves what C refuses (pre-yellow too, aware).
        gp, gb, rp, rb, over = _stage(lam * g0, size, cir / 8.0, cbs)
        e_lam = rp + lam * y0
        e_size = (rb + lam * size * y0) / e_lam if e_lam > 0 else size
        yp, yb, _, _, _ = _stage(e_lam, e_size, over, second_depth) if second_depth > 0 else (0, 0, 0, 0, 0)
        pk[:] = gp, yp, lam - gp - yp
        by[:] = gb, yb, lam * size - gb - yb
        exact[1] = exact[2] = False
        neglects.append("the E bucket's dependence on the C bucket (E is fed C's refusals as a Poisson stream "
                        "with exponential sizes and C's mean overflow as a steady token rate)")
    else:
        # Red: P alone (exact). C sees what P passes (pre-green only, aware).
        nr = g0 + y0
        pp, pb, _, _, _ = _stage(lam * nr, size, second_rate / 8.0, second_depth)
        share = g0 / nr if nr > 0 else 0.0
        c_lam = pp * share
        c_size = pb / pp if pp > 0 else size
        gp, gb, _, _, _ = _stage(c_lam, c_size, cir / 8.0, cbs)
        pk[:] = gp, pp - gp, lam - pp
        by[:] = gb, pb - gb, lam * size - pb
        exact[0] = exact[1] = False
        neglects.append("the C bucket's dependence on the P bucket (C is fed the packets P passes as a Poisson "
                        "stream with exponential sizes of their mean)")
    if arrivals == "cbr":
        exact = [False, False, False]
        neglects.insert(0, "the regularity of CBR arrivals (the buckets' input taken as Poisson)")
    pk = np.clip(pk / lam, 0.0, 1.0)
    by = np.clip(by / (lam * size), 0.0, 1.0)
    return MarkerFractions(tuple(float(x) for x in pk / pk.sum()), tuple(float(x) for x in by / by.sum()),
                           tuple(exact), (0.0,) * 3, "; ".join(neglects),
                           "finite-dam solution for Poisson input with exponential sizes, qosbound.analytic.markers")
