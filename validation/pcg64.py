"""NumPy's PCG64 bit generator and the two Generator draws the network simulator's sources make, compiled: the same
numbers, bit for bit, as ``np.random.Generator(np.random.PCG64(seq))`` drawing ``random()`` and
``exponential(scale)`` one after another (:mod:`qosbound.validation.network_sources` draws every flow's packets of a
replication in one compiled call this way, where a Generator object per flow costs a numba conversion of about
10 us at each call).

* **State**: four unsigned 64-bit words ``[state_hi, state_lo, inc_hi, inc_lo]`` of the 128-bit linear
  congruential generator ``s <- s * M + inc (mod 2^128)``, ``M = 0x2360ED051FC65DA44385DF649FCCF645`` (O'Neill,
  *PCG: A Family of Simple Fast Space-Efficient Statistically Good Algorithms for Random Number Generation*, 2014,
  the 128-bit default multiplier, as NumPy's ``pcg64.h``).
* **Seeding** (:func:`seeded`, NumPy's ``pcg64_set_seed``): from the four words ``w`` a seed sequence generates
  (``generate_state(4, np.uint64)``), ``initstate = w[0] 2^64 + w[1]``, ``initseq = w[2] 2^64 + w[3]``; then
  ``s = 0; inc = 2 initseq + 1; step; s += initstate; step``.
* **Output** (:func:`next_uint64`): step, then XSL-RR of the new state: ``rotr64(hi ^ lo, hi >> 58)``.
* **Draws**: ``random`` is ``(next_uint64 >> 11) 2^-53``; ``exponential(scale)`` is ``scale`` times the standard
  exponential by the 256-layer ziggurat of NumPy's ``random_standard_exponential`` (Marsaglia & Tsang, *The Ziggurat
  Method for Generating Random Variables*, 2000), with the tables numba ships for its own copy of that function.

``tests/validation/test_pcg64.py`` checks the seeding, the raw outputs and both draws against NumPy's Generator over
many seeds and draws (the ziggurat's rare branches included).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)
from numba.experimental import jitclass
from numba.extending import intrinsic
# the ziggurat's tables for the standard exponential, as NumPy's distributions use them (numba's copy of them)
from numba.np.random._constants import fe_double, ke_double, we_double, ziggurat_exp_r

__all__ = ["seeded", "next_uint64", "random", "standard_exponential", "exponential", "PCG64"]

_M_HI = np.uint64(0x2360ED051FC65DA4)
_M_LO = np.uint64(0x4385DF649FCCF645)
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U3 = np.uint64(3)
_U8 = np.uint64(8)
_U11 = np.uint64(11)
_U58 = np.uint64(58)
_U63 = np.uint64(63)
_U64M = np.uint64(64)
_BYTE = np.uint64(0xFF)
_TWO_M53 = 1.0 / 9007199254740992.0
_KE = ke_double.astype(np.uint64)
_WE = we_double.astype(np.float64)
_FE = fe_double.astype(np.float64)
_R = float(ziggurat_exp_r)


@intrinsic
def _mul64(typingctx, a, b):
    """The 128-bit product of two 64-bit words as (high, low): one LLVM ``mul i128`` (a single widening multiply
    on x86-64), as NumPy's ``__uint128_t`` arithmetic."""
    sig = types.UniTuple(types.uint64, 2)(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        p = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        hi = builder.trunc(builder.lshr(p, ir.Constant(wide, 64)), ir.IntType(64))
        lo = builder.trunc(p, ir.IntType(64))
        return context.make_tuple(builder, signature.return_type, (hi, lo))
    return sig, codegen


@njit(cache=True, inline="always")
def _step(st):
    """``s <- s * M + inc (mod 2^128)``."""
    s_hi = st[0]
    s_lo = st[1]
    hi, lo = _mul64(s_lo, _M_LO)
    hi = hi + s_hi * _M_LO + s_lo * _M_HI
    lo2 = lo + st[3]
    carry = _U1 if lo2 < lo else _U0
    st[0] = hi + st[2] + carry
    st[1] = lo2


@njit(cache=True)
def seeded(words):
    """The state of ``PCG64`` seeded by a seed sequence whose ``generate_state(4, np.uint64)`` is ``words``."""
    st = np.zeros(4, np.uint64)
    # inc = (initseq << 1) | 1
    st[2] = (words[2] << _U1) | (words[3] >> _U63)
    st[3] = (words[3] << _U1) | _U1
    _step(st)
    lo = st[1] + words[1]
    carry = _U1 if lo < st[1] else _U0
    st[0] = st[0] + words[0] + carry
    st[1] = lo
    _step(st)
    return st


@njit(cache=True, inline="always")
def next_uint64(st):
    """The next 64-bit output: step, then XSL-RR of the new state."""
    _step(st)
    hi = st[0]
    x = hi ^ st[1]
    rot = hi >> _U58
    return (x >> rot) | (x << ((_U64M - rot) & _U63))


@njit(cache=True, inline="always")
def random(st):
    """``Generator.random()``: a double in [0, 1) from the top 53 bits of the next output."""
    return np.float64(next_uint64(st) >> _U11) * _TWO_M53


@njit(cache=True)
def standard_exponential(st):
    """``Generator.standard_exponential()``: NumPy's ziggurat (a 64-bit draw per try; its layer from bits 3-10,
    the rest scaled by the layer's width; the wedge or the tail redrawn in the rare case)."""
    while True:
        ri = next_uint64(st) >> _U3
        idx = ri & _BYTE
        ri = ri >> _U8
        x = np.float64(ri) * _WE[idx]
        if ri < _KE[idx]:
            return x
        if idx == 0:
            return _R - np.log1p(-random(st))
        if (_FE[idx - _U1] - _FE[idx]) * random(st) + _FE[idx] < np.exp(-x):
            return x


@njit(cache=True, inline="always")
def exponential(st, scale):
    """``Generator.exponential(scale)``."""
    return scale * standard_exponential(st)


@jitclass([("st", types.uint64[:])])
class PCG64:
    """A compiled ``Generator(PCG64(child))`` for compiled code that draws with the Generator's methods (the port
    kernel's ``rng.random()`` and ``rng.exponential(scale)``): ``PCG64(seeded(words))``, the same draws."""

    def __init__(self, st):
        self.st = st

    def random(self):
        return random(self.st)

    def exponential(self, scale):
        return exponential(self.st, scale)
