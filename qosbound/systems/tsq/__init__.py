"""TSQ over a PI AQM (Claypool, Kinicki & Kumar): per-hint delay, drop, throughput and application quality, three ways.

Semantics: DESIGN.md "TSQ" and :mod:`qosbound.analytic.tsq`. A scenario names a
bottleneck link, the TSQ settings (hint bits, latency constant ``l``), the PI
AQM (Hollot et al. 2001; the seed's constants by default), and flow groups:
``tfrc`` (responsive, equation-based; a "TCP-friendly CBR" audio source is
``tfrc`` with ``rate`` its codec rate) or ``cbr`` (unresponsive), each with a
delay hint, packet size, propagation RTT and an application (audio, video or
file) for the quality functions of Claypool, Kinicki & Kumar section 2.

Methods:

* ``closed-form`` -- the fluid operating point: PI holds the queue at ``q_ref``
  packets; the responsive flows' TFRC rates at the RTT ``rtt + q_ref`` delay
  fill the link, which fixes the AQM drop ``p*``; a hint-d packet of the swept
  flow gets ``q' = d q/2^n`` (analytic/tsq.py) and ``p'`` from eq. (5); its
  rate is TFRC at (``rtt + q'``, ``p'``) capped at its codec rate. Kind
  approximation (it neglects queue fluctuations). Plus the per-hint worst-case
  queueing delay bound (a finite buffer of ``q_max + 1`` packets and the aging
  term: ``t_max (1 + d/2^n)``; an upper bound on every delay metric of the
  flow), and the cap threshold (exact).
* ``model-checked`` -- Storm on models/tsq_hint.prism per hint (delay and drop
  in the slotted abstraction centred on ``(q_ref, p*)``, with the scenario's
  2^n hints) and, with ``mdp: true``, models/tsq.prism: the best long-run
  square-root-law throughput over per-packet hint choices relative to FIFO
  (metric ``tsq.gain``; Claypool, Kinicki & Kumar claims <= 0). Kind approximation: the
  abstraction replaces PI by a proportional AQM and the senders by Bernoulli
  sources (the solver's precision is in the note).
* ``simulated`` -- validation/tsq_sim.py, independent replications, Student-t
  intervals at ``methods.simulated.confidence`` with their standard error and
  degrees of freedom; the observed maximum delay is a lower bound.

Agreement: the generic rule (:mod:`qosbound.agreement`) compares every pair of
methods; :func:`agreements` adds what it cannot express: the insertion point
of the model against the closed form's ``q' = d q/2^n``, the delay bound
against the simulated maximum (a bound against an observed maximum) and the
MDP's gain against the cap region.

Metrics: ``<group>.delay.mean`` and ``.delay.p99`` (queueing delay, s),
``<group>.drop``, ``<group>.rate`` (bit/s per flow), ``<group>.quality``; the
swept flow per hint as ``<flow>@h<d>.delay.mean|delay.p99|delay.max|delay.bound|drop|rate|quality``;
``<flow>.best_hint``; ``tsq.aqm_drop``, ``tsq.cap_min_drop``, ``tsq.gain``.

The module is a package along the jobs: :mod:`.schema`, :mod:`.metrics` (names,
kinds, the shared result builders), one module per method (:mod:`.closed_form`,
:mod:`.model_checked`, :mod:`.simulated`), :mod:`.checks` (agreements),
:mod:`.admission` (hint selection) and :mod:`.render`; this module exposes the
:class:`qosbound.systems.System` hooks.
"""

from __future__ import annotations

from qosbound.errors import ScenarioError
from qosbound.results import Result
from qosbound.systems.base import default_methods
from qosbound.systems.capabilities import no_ns3, no_plot_delays
from qosbound.systems.tsq.checks import agreements
from qosbound.systems.tsq.metrics import (CF_NEGLECTS, GAIN_TOLERANCE, MODEL_MAX_DROP, MODEL_NEGLECTS, metric_kind,
                                          metric_names, slo_limit)
from qosbound.systems.tsq.schema import Scenario
from qosbound.understood import Echo, Inputs

__all__ = ["Scenario", "evaluate", "metric_names", "metric_kind", "slo_limit", "default_methods", "agreements",
           "render_models", "simulate_trace", "ns3_trace", "plot_delays", "admit", "operating_point",
           "GAIN_TOLERANCE", "MODEL_MAX_DROP", "MODEL_NEGLECTS", "CF_NEGLECTS", "abstraction", "sim_group_stats",
           "summarise", "understood_inputs"]


# Each method module imports its engine at its top; the package loads one only when that method runs (a scenario
# that merely loads, or reproduce's use of the tolerances, starts none of them).
def _closed_form():
    from qosbound.systems.tsq import closed_form  # costly: the TSQ and TFRC closed forms (SymPy), SciPy's root finder

    return closed_form


def _model_checking():
    from qosbound.systems.tsq import model_checked  # costly: the slotted TSQ models (SciPy, stormpy)

    return model_checked


def _rendering():
    from qosbound.systems.tsq import render  # costly: the slotted TSQ models (SciPy, stormpy)

    return render


def _simulation():
    from qosbound.systems.tsq import simulated  # costly: numba kernels of the TSQ simulator

    return simulated


def _admission():
    from qosbound.systems.tsq import admission  # costly: the closed form (SymPy) and the simulator (numba)

    return admission


def evaluate(scn: Scenario, methods: list[str], progress) -> list[Result]:
    """Every metric by every requested method."""
    out: list[Result] = []
    for method in methods:
        if method == "closed-form":
            out += _closed_form().closed_form(scn)
        elif method == "model-checked":
            out += _model_checking().model_checked(scn, scn.methods.model_checked, progress)
        elif method == "simulated":
            out += _simulation().simulated(scn, scn.methods.simulated, progress)
        else:
            raise ScenarioError(f"method '{method}' is not available for tsq scenarios", field="methods")
    return out


def operating_point(scn: Scenario) -> dict:
    """The fluid operating point (:func:`qosbound.systems.tsq.closed_form.operating_point`)."""
    return _closed_form().operating_point(scn)


def abstraction(scn: Scenario):
    """The slotted abstraction of the operating point (:func:`qosbound.systems.tsq.model_checked.abstraction`)."""
    return _model_checking().abstraction(scn)


def render_models(scn: Scenario, out_dir) -> list:
    """The slotted models with their constants filled in (:func:`qosbound.systems.tsq.render.render_models`)."""
    return _rendering().render_models(scn, out_dir)


def sim_group_stats(scn, out, groups, name, warmup) -> dict:
    """One flow group's statistics of one run (:func:`qosbound.systems.tsq.simulated.sim_group_stats`)."""
    return _simulation().sim_group_stats(scn, out, groups, name, warmup)


def summarise(per_list: list[dict], confidence: float):
    """Replications' statistics as means and intervals (:func:`qosbound.systems.tsq.simulated.summarise`)."""
    return _simulation().summarise(per_list, confidence)


def simulate_trace(scn: Scenario, packets: int, seed: int):
    """One simulated run as a per-packet trace (:func:`qosbound.systems.tsq.simulated.simulate_trace`)."""
    return _simulation().simulate_trace(scn, packets, seed)


def admit(scn: Scenario, parameter: str, *, direction: str | None = None, method: str | None = None,
          lo: float | None = None, hi: float | None = None, progress=None):
    """The best hint of a flow meeting its SLOs (:func:`qosbound.systems.tsq.admission.admit`)."""
    return _admission().admit(scn, parameter, direction=direction, method=method, lo=lo, hi=hi, progress=progress)


def understood_inputs(scn: Scenario) -> Inputs:
    """The bottleneck as the methods see it: the link, TSQ's hint bits and latency constant, the PI AQM's
    buffer and target, and each flow group's count, rate (and share of the link), size, RTT and hint."""
    e = Echo(scn, scn.link.rate).quantity("link.rate", scn.link.rate, "rate")
    e.quantity("tsq.hint_bits", scn.tsq.hint_bits, "count", noun="bits",
               note=f"hints 1..{2 ** scn.tsq.hint_bits}" + ("" if scn.tsq.enabled else "; TSQ disabled"))
    e.quantity("tsq.latency", scn.tsq.latency, "time")
    e.quantity("aqm.q_ref", scn.aqm.q_ref, "count", noun="packets", note="PI target queue")
    e.quantity("aqm.q_max", scn.aqm.q_max, "count", noun="packets", note="buffer")
    for n, f in scn.flows.items():
        e.quantity(f"flows.{n}.count", f.count, "count", noun=f"{f.kind} flow{'s' if f.count != 1 else ''}",
                   note=f"{f.app}")
        e.quantity(f"flows.{n}.rate", f.rate, "rate", share=f.kind == "cbr",
                   note="per flow" + ("; its maximum (codec or access) rate" if f.kind == "tfrc" else ""))
        e.quantity(f"flows.{n}.size", f.size, "size")
        e.quantity(f"flows.{n}.rtt", f.rtt, "time")
        e.quantity(f"flows.{n}.hint", f.hint, "count")
    cbr = sum(f.rate * f.count for f in scn.flows.values() if f.kind == "cbr")
    if cbr:
        e.quantity("flows (cbr total)", cbr, "rate", share=True, path=None, note="unresponsive load")
    return e.done()


#: No ns-3 counterpart of TSQ over PI; validation plots need no extra CCDF points.
ns3_trace = no_ns3("tsq")
plot_delays = no_plot_delays
