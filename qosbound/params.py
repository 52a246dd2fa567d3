"""Parameter types shared by the layers: a scenario reduced to SI numbers, built by the system layer
(:func:`qosbound.systems.pq_txq.params`) and consumed by the closed forms, the models and the simulators."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Params"]


@dataclass(frozen=True)
class Params:
    """A PQ + TxQ scenario (Ferrari, Pau & Raffaelli 2001) reduced to SI numbers."""

    C: float  # line rate, bit/s
    Q_t: int  # TxQ threshold, units
    unit: float  # unit size, bytes
    pq_cap: int  # PQ capacity, packets
    ef_size: float  # bytes
    ef_rate: float  # bit/s
    lam: float  # EF packets/s
    arrivals: str
    be_sizes: np.ndarray  # bytes
    be_probs: np.ndarray
    burst: float  # token-bucket depth, bytes
    be_rate: float | None = None  # offered BE load, bit/s (Poisson packets of the size mix); None: saturated
    # EF aggregate (Ferrari et al. 2001, section V): one (rate bit/s, 'cbr' | 'poisson', phase s or -1.0 for a
    # uniform random one) per stream, all of ``ef_size`` bytes; ``ef_rate``/``lam`` are then the aggregate's.
    # () = the single stream of ``arrivals``. ``arrivals`` is 'aggregate' when the streams are not one
    # Poisson or one random-phase CBR stream (several Poisson streams merge exactly into one: 'poisson').
    ef_streams: tuple = ()

    @property
    def be_saturated(self) -> bool:
        """Best effort always has a packet (no BE load given)."""
        return self.be_rate is None

    @property
    def be_lam(self) -> float:
        """BE packet arrival rate, packets/s (0 when saturated: the rate is then whatever fills the line)."""
        if self.be_rate is None:
            return 0.0
        return float(self.be_rate) / (8.0 * float(np.dot(self.be_probs, self.be_sizes)))

    @property
    def rho_be(self) -> float:
        """BE utilisation of the line, be_rate / C (1 - rho when saturated: BE takes what EF leaves)."""
        return 1.0 - self.rho if self.be_rate is None else float(self.be_rate) / self.C

    @property
    def n_streams(self) -> int:
        """EF streams: 1 for the single-stream form."""
        return max(1, len(self.ef_streams))

    @property
    def cbr_streams(self) -> int:
        """CBR streams in the aggregate (1 for a single CBR stream, 0 when any stream is Poisson or Bernoulli)."""
        if not self.ef_streams:
            return 1 if self.arrivals == "cbr" else 0
        kinds = [s[1] for s in self.ef_streams]
        return len(kinds) if all(k == "cbr" for k in kinds) else 0

    @property
    def rho(self) -> float:
        """EF utilisation of the line, ef_rate / C."""
        return self.ef_rate / self.C

    @property
    def T_u(self) -> float:
        """Transmission time of one unit, s."""
        return self.unit * 8.0 / self.C

    @property
    def k_be(self) -> np.ndarray:
        """Units each BE size occupies."""
        return np.ceil(self.be_sizes / self.unit - 1e-12).astype(int)

    @property
    def k_max(self) -> int:
        """Units the largest packet (EF or BE) occupies."""
        return int(max(self.k_be.max(), math.ceil(self.ef_size / self.unit - 1e-12)))

    @property
    def k_ef(self) -> int:
        """Units an EF packet occupies."""
        return int(math.ceil(self.ef_size / self.unit - 1e-12))
