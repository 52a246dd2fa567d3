"""A PQ + TxQ scenario reduced to SI numbers (:class:`Params`, built by :func:`params`), the type the closed forms,
the models and the simulators of this system take, and the scenario field each of its numbers comes from.

The lower layers (:mod:`qosbound.analytic.pq_txq`, :mod:`qosbound.models.pq_txq`,
:mod:`qosbound.validation.pq_txq_sim`) read a :class:`Params` by its attributes and name a bad parameter by its
attribute (or by the name of the formula's own parameter, or of the method's option); :func:`scenario_fields`
re-raises such an error against the field the user wrote, here and nowhere below.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from qosbound.errors import ScenarioError
from qosbound.systems.pq_txq.schema import Scenario

__all__ = ["Params", "params", "PARAM_FIELDS", "FORMULA_FIELDS", "scenario_fields"]


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


def params(scn: Scenario) -> Params:
    """The scenario reduced to SI numbers: EF streams as (rate, arrivals, phase or -1.0 for a random one), the
    aggregate's arrivals (one Poisson process when every stream is Poisson), the token-bucket depth by default
    one packet per CBR stream, else the PQ capacity."""
    ef = scn.traffic.EF
    sizes, probs = scn.traffic.BE.distribution()
    streams = tuple((s.rate, s.arrivals, -1.0 if s.phase == "random" else float(s.phase)) for s in ef.stream_list())
    arrivals = ef.arrivals
    if streams:
        if all(k == "poisson" for _, k, _ in streams):
            arrivals = "poisson"  # independent Poisson streams merge exactly into one
        elif len(streams) == 1 and streams[0][2] < 0:
            arrivals = "cbr"  # one random-phase CBR stream: the single-stream form
        else:
            arrivals = "aggregate"
    n_cbr = len(streams) if streams and all(k == "cbr" for _, k, _ in streams) else (1 if arrivals == "cbr" else 0)
    burst = ef.burst if ef.burst is not None else (n_cbr * ef.size if n_cbr else scn.pq.capacity * ef.size)
    return Params(C=scn.link.rate, Q_t=scn.txq.units, unit=scn.txq.unit_size, pq_cap=scn.pq.capacity,
                  ef_size=ef.size, ef_rate=ef.rate, lam=ef.rate / (8.0 * ef.size), arrivals=arrivals,
                  be_sizes=sizes, be_probs=probs, burst=burst, be_rate=scn.traffic.BE.rate, ef_streams=streams)

#: The scenario field each attribute of :class:`Params` comes from.
PARAM_FIELDS = {"C": "link.rate", "Q_t": "txq.units", "unit": "txq.unit_size", "pq_cap": "pq.capacity",
                "ef_size": "traffic.EF.size", "ef_rate": "traffic.EF.rate", "lam": "traffic.EF.rate",
                "arrivals": "traffic.EF.arrivals", "be_sizes": "traffic.BE.sizes", "be_probs": "traffic.BE.sizes",
                "burst": "traffic.EF.burst", "be_rate": "traffic.BE.rate", "ef_streams": "traffic.EF.streams"}

#: The closed forms' own parameter names (:mod:`qosbound.analytic`) -> the scenario fields they come from.
FORMULA_FIELDS = {"lam": "traffic.EF.rate", "m1": "traffic.BE.sizes", "m2": "traffic.BE.sizes",
                  "r": "traffic.EF.rate", "L_max": "traffic.BE.sizes", "rho": "traffic.EF.rate", "T_u": "link.rate",
                  "Q_t": "txq.units", "k": "txq.unit_size", "phi": "txq.unit_size", "sigma": "traffic.EF.burst",
                  "lam_be": "traffic.BE.rate"}


@contextmanager
def scenario_fields(options: str | None = None):
    """Re-raise a lower layer's ScenarioError against the scenario field its parameter comes from: a
    :class:`Params` attribute by :data:`PARAM_FIELDS`, any other name as an option of the
    ``options`` section (e.g. ``methods.simulated``); other errors pass unchanged."""
    try:
        yield
    except ScenarioError as e:
        if e.file is not None or not e.field:
            raise
        field = PARAM_FIELDS.get(e.field) or (f"{options}.{e.field}" if options else None)
        if field is None:
            raise
        raise type(e)(e.problem, field=field) from None  # a ResourceError stays one (exit 4)
