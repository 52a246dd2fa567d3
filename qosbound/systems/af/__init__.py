"""The AF service: token-bucket markers, RED-family droppers per drop precedence, CBWFQ across classes.

Sources: Takeo & Tasaka (Takeo & Tasaka (2003): WRED with ``P_d`` and ``alpha = 2^-9``, Table I,
CBWFQ and Table V), Jourjon et al. (Jourjon et al. (2008): RIO and the two-colour bucket),
Koehler & Schaefer (Köhler & Schäfer (1999): trTCM, RIO, overlapped n-RED, Tables 3-6).

Semantics shared by the three methods (see DESIGN.md, "WRED"):

* A class ``X`` (e.g. ``AF1``) has a FIFO buffer of ``buffer`` packets (counting
  the packet on the wire), a dropper with per-precedence thresholds for
  ``X1`` (green), ``X2`` (yellow) and ``X3`` (red), and a CBWFQ bandwidth
  (its weight). Each class's packets arrive as a Poisson (or CBR) stream, coloured
  by fixed fractions (``mix``) or by a marker (``marker``).
* CBWFQ gives a backlogged class ``C w_i / sum of w over backlogged classes``
  (Takeo & Tasaka 2003, sec. II.B). ``service: guaranteed``: every method serves a class at
  exactly that share over the classes with traffic (the simulator gives each class
  its own server at that rate). ``service: max-min`` (default): the simulator runs
  real, work-conserving WFQ; the closed form and the model serve a class at its
  max-min rate with the other classes sending steadily at their mean rates, and
  say so in what their results neglect.
* Colour fractions: the droppers act per packet, so the queue models take
  per-colour *packet* rates; delivered throughput adds *bytes*. With variable
  sizes a token bucket passes small packets more readily, so the two differ
  (``X.colour.Xk`` is the packet fraction, ``X.colour.Xk.bytes`` the byte
  fraction; :func:`qosbound.analytic.markers.marker_fractions`). The closed form
  serves a class at the mean size of its *admitted* packets (a fixed point).
* The closed form and the model take Poisson arrivals with exponential sizes
  (mean ``size``); the simulator uses the configured laws.
* Every result says what kind of number it is: CBWFQ shares and fixed mixes are
  exact; a queue result is exact only where the model is the scenario (alpha = 1,
  WRED, Poisson input with exponential sizes, a fixed colour mix, guaranteed
  service or a lone class), otherwise an approximation naming what it neglects
  (:func:`neglects`); simulated results are confidence intervals at the
  scenario's ``confidence`` with their standard error and ``replications - 1``
  degrees of freedom.

Metrics per class ``X``: ``X.drop.X1``, ``X.drop.X2``, ``X.drop.X3`` (per-precedence
drop probability), ``X.drop`` (all colours), ``X.delay.mean`` and ``X.delay.X1``
... (mean delay of admitted packets), ``X.queue.mean`` (packets), ``X.rate``
(CBWFQ allocation, closed form), ``X.throughput`` (delivered bit/s),
``X.colour.X1`` ... (marker output fractions by packets), ``X.colour.X1.bytes`` ... (by bytes) and,
per CBWFQ case,
``X.rate.<case>``.

The module is a package along the jobs: :mod:`.schema` (the scenario file), :mod:`.inputs` (metric names,
the inputs as understood, the result builder), :mod:`.queue_inputs` (classes reduced to the queue models'
inputs), one module per
method (:mod:`.closed_form`, :mod:`.model_checked`, :mod:`.simulated`), :mod:`.checks`
(agreements and the ordering sweep) and :mod:`.render`; this module exposes the
:class:`qosbound.systems.System` hooks.
"""

from __future__ import annotations

from qosbound.errors import ScenarioError
from qosbound.results import Result, Verdict
from qosbound.systems.af.inputs import ClassInput, metric_kind, metric_names, neglects, slo_limit, understood_inputs
from qosbound.systems.af.schema import MAX_AF_MODEL_STATES, Scenario
from qosbound.systems.base import default_methods
from qosbound.systems.capabilities import generic_admit, no_ns3, no_plot_delays

__all__ = ["Scenario", "evaluate", "metric_names", "metric_kind", "slo_limit", "default_methods", "agreements",
           "render_models", "simulate_trace", "ns3_trace", "plot_delays", "admit", "ordering_sweep", "class_inputs",
           "ClassInput", "marking", "neglects", "colour_fractions", "colour_fraction_error", "sim_config",
           "MAX_AF_MODEL_STATES", "model_states", "understood_inputs"]


# Each method module imports its engine at its top; the package loads one only when it is needed, so a scenario that
# merely loads (or a port scenario reading this schema) starts none of them.
def _queue_inputs():
    from qosbound.systems.af import queue_inputs  # costly: the marker, WRED and CBWFQ formulas (SymPy, SciPy)

    return queue_inputs


def _closed_form():
    from qosbound.systems.af import closed_form  # costly: SciPy's root finder and the RED queue solutions (SymPy)

    return closed_form


def _checks():
    from qosbound.systems.af import checks  # costly: the RED queue solutions (SymPy, SciPy) of the ordering sweep

    return checks


def _model_checking():
    from qosbound.systems.af import model_checked  # costly: the Storm models (stormpy, SciPy)

    return model_checked


def _rendering():
    from qosbound.systems.af import render  # costly: the Storm models (stormpy, SciPy)

    return render


def _simulation():
    from qosbound.systems.af import simulated  # costly: numba kernels of the class simulator

    return simulated


def class_inputs(scn: Scenario) -> list[ClassInput]:
    """Each class with traffic reduced to its queue model's inputs
    (:func:`qosbound.systems.af.queue_inputs.class_inputs`)."""
    return _queue_inputs().class_inputs(scn)


def marking(t):
    """A class's colour fractions by packets and by bytes (:func:`qosbound.systems.af.queue_inputs.marking`)."""
    return _queue_inputs().marking(t)


def colour_fractions(t):
    """A class's packet colour fractions and their source
    (:func:`qosbound.systems.af.queue_inputs.colour_fractions`)."""
    return _queue_inputs().colour_fractions(t)


def colour_fraction_error(t):
    """Estimated error of :func:`colour_fractions`
    (:func:`qosbound.systems.af.queue_inputs.colour_fraction_error`)."""
    return _queue_inputs().colour_fraction_error(t)


def evaluate(scn: Scenario, methods: list[str], progress) -> list[Result]:
    """Every metric by every requested method."""
    inputs = class_inputs(scn)
    out: list[Result] = []
    for method in methods:
        if method == "closed-form":
            out += _closed_form().closed_form(scn, inputs)
        elif method == "model-checked":
            out += _model_checking().model_checked(scn, inputs, progress)
        elif method == "simulated":
            out += _simulation().simulated(scn, inputs, progress)
        else:
            raise ScenarioError(f"method '{method}' is not available for af scenarios", field="methods")
    return out


def agreements(scn: Scenario, results: list[Result]) -> list[Verdict]:
    """The AF checks the generic agreement rule cannot express (:func:`qosbound.systems.af.checks.agreements`)."""
    return _checks().agreements(scn, results)


def ordering_sweep(scn: Scenario, cls: str, loads: list[float]) -> tuple[float | None, list[tuple[float, list]]]:
    """The closed form's drop-precedence load sweep (:func:`qosbound.systems.af.checks.ordering_sweep`)."""
    return _checks().ordering_sweep(scn, cls, loads)


def model_states(K: int, mode: str, ewma: bool = False) -> int:
    """Upper estimate of an AF chain's states (:func:`qosbound.systems.af.model_checked.model_states`)."""
    return _model_checking().model_states(K, mode, ewma)


def render_models(scn: Scenario, out_dir) -> list:
    """One PRISM model per class with its constants filled in (:func:`qosbound.systems.af.render.render_models`)."""
    return _rendering().render_models(scn, out_dir)


def sim_config(scn: Scenario, load: float = 1.0):
    """The class simulator's arrays for this scenario (:func:`qosbound.systems.af.simulated.sim_config`)."""
    return _simulation().sim_config(scn, load)


def simulate_trace(scn: Scenario, packets: int, seed: int):
    """One simulated run as a per-packet trace (:func:`qosbound.systems.af.simulated.simulate_trace`)."""
    return _simulation().simulate_trace(scn, packets, seed)


#: No ns-3 counterpart of the AF router; validation plots need no extra points; admission is the generic search.
ns3_trace = no_ns3("af")
plot_delays = no_plot_delays
admit = generic_admit
