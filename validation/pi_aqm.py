"""The PI AQM controller of Hollot, Misra, Towsley & Gong (2001), as used under TSQ by Claypool, Kinicki & Kumar.

Every ``1/f`` seconds (``f = 170 Hz``) the controller samples the queue length
``q`` (packets waiting, not counting the one on the wire) and updates

    p <- min(1, max(0, p + a (q - q_ref) - b (q_old - q_ref)))

(the clamped difference equation :data:`qosbound.analytic.tsq.pi_update_clamped_expr`,
compiled for numba from its SymPy form). Claypool, Kinicki & Kumar section 4.1 uses the values
recommended by Hollot et al.: ``a = 1.822e-5``, ``b = 1.816e-5``, 170 Hz,
``q_ref = 200`` packets and a buffer of ``q_max = 800`` packets; they live in
``qosbound/data/tsq.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from qosbound.analytic import tsq as A
from qosbound.analytic.tsq import reference_data

__all__ = ["PIParams", "seed_params", "pi_kernel", "pi_run"]


@dataclass(frozen=True)
class PIParams:
    """PI controller constants: gains ``a``, ``b`` (1/packet), sampling ``hz``, target and buffer (packets)."""

    a: float = 1.822e-5
    b: float = 1.816e-5
    hz: float = 170.0
    q_ref: float = 200.0
    q_max: int = 800

    def __post_init__(self):
        if not (self.a > 0 and self.b > 0 and self.hz > 0 and self.q_ref >= 0 and self.q_max >= 1):
            raise ValueError("PI constants must be positive (q_ref >= 0, q_max >= 1)")
        if self.a <= self.b:
            raise ValueError("the PI controller needs a > b (the integral gain a - b must be positive)")


def seed_params() -> PIParams:
    """The seed's PI constants, read from the data file."""
    pi = reference_data()["pi_aqm"]
    return PIParams(a=pi["a"]["value"], b=pi["b"]["value"], hz=float(pi["sampling_hz"]["value"]),
                    q_ref=float(pi["q_ref_packets"]["value"]), q_max=int(pi["q_max_packets"]["value"]))


@lru_cache(maxsize=1)
def pi_kernel():
    """The clamped PI update as a numba function ``(p_prev, q_now, q_prev, q_ref, a, b) -> p``."""
    import numba
    import sympy as sp

    return numba.njit(sp.lambdify((A.p_prev, A.q_now, A.q_prev, A.q_ref, A.pi_a, A.pi_b),
                                  A.pi_update_clamped_expr, "math"))


@lru_cache(maxsize=1)
def _runner():
    import numba

    step = pi_kernel()

    @numba.njit
    def run(samples, p0, q_ref, a, b):
        out = np.empty(samples.shape[0])
        p = p0
        q_old = samples[0]
        for k in range(samples.shape[0]):
            p = step(p, samples[k], q_old, q_ref, a, b)
            q_old = samples[k]
            out[k] = p
        return out

    return run


def pi_run(queue_samples, params: PIParams = PIParams(), p0: float = 0.0) -> np.ndarray:
    """Drop probabilities the controller outputs for a sequence of sampled queue lengths (packets)."""
    s = np.asarray(queue_samples, dtype=np.float64)
    if s.ndim != 1 or s.size == 0:
        raise ValueError("queue samples must be a non-empty 1-d sequence")
    return _runner()(s, float(p0), float(params.q_ref), float(params.a), float(params.b))
