"""The PQ + TxQ system (Ferrari, Pau & Raffaelli 2001) solved on Storm: the model layer's entry point.

:mod:`qosbound.models.pq_txq_render` renders the PRISM-language DTMC,
:mod:`qosbound.models.pq_txq_delay` turns Storm's stationary distribution into
the EF delay distribution, and :func:`solve` runs both and returns plain numbers
(values in seconds or as probabilities, with their numerical brackets); the
system layer (:mod:`qosbound.systems.pq_txq.model_checked`) names them as metrics.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from qosbound.errors import EngineError
from qosbound.models.engine import prism_available
from qosbound.models.pq_txq_delay import DelayDistribution, delay_distribution
from qosbound.models.pq_txq_render import PROPS_TEXT, TINY, Rendered, poisson_excess, render, write_files

__all__ = ["Solution", "solve", "Rendered", "render", "write_files", "poisson_excess", "DelayDistribution",
           "delay_distribution", "PROPS_TEXT", "TINY"]


@dataclass
class Solution:
    """EF delay statistics of one solved model (times in seconds; ``ccdf`` and ``loss`` are probabilities).

    ``bounds`` maps ``"mean"``, ``("quantile", q)``, ``("ccdf", t)`` and ``"loss"`` to the TRUE bracket
    (low, high) of the float solve (empty in exact mode, or when no bracket could be derived).
    """

    rendered: Rendered
    dist: DelayDistribution
    states: int
    transitions: int
    seconds: float
    exact: bool
    mean: float
    little_mean: float  # the mean by Little's law, an internal check of ``mean``
    quantiles: dict[float, float] = field(default_factory=dict)
    ccdf: dict[float, float] = field(default_factory=dict)
    loss: float = 0.0
    bounds: dict = field(default_factory=dict)


def solve(p, opts, ccdf_at: list[float], quantiles: list[float], progress) -> Solution:
    """Render and solve the model of ``p`` (:class:`qosbound.systems.pq_txq.params.Params`) with options ``opts``
    (engine, exact, precision, granule, max_granules) and compute the EF delay statistics asked for."""
    advance = progress.task("model checking (Storm)", total=2)
    rendered = render(p, opts)
    advance()
    if opts.engine == "prism":
        if not prism_available():
            raise EngineError("engine 'prism' needs a 'prism' executable on PATH; use engine: storm")
        raise EngineError("engine 'prism' computes the .props properties only: run `qosbound model check` on the "
                          "rendered files; the delay distribution needs Storm's stationary vector")
    dd, built = delay_distribution(rendered, exact=opts.exact, precision=opts.precision)
    advance()
    bounds = {} if opts.exact else dd.error_bounds(quantiles, ccdf_at, extra=rendered.truncated_mass)
    return Solution(rendered, dd, built.states, built.transitions, built.seconds, bool(opts.exact), dd.mean(),
                    dd.little_mean(), {q: dd.quantile(q) for q in quantiles}, {t: dd.ccdf(t) for t in ccdf_at},
                    dd.loss, bounds)
