"""Admission control: the largest (or smallest) value of one scenario parameter for which every SLO holds.

The scenario is re-validated for each trial value; a value that makes the scenario invalid (e.g. utilisation
>= 1) counts as infeasible. The search assumes feasibility is monotone in the parameter.

How a trial value is judged (:func:`judge_point`): every SLO first by the proved bounds the results carry
(kind ``upper bound`` / ``lower bound``, of the SLO's metric or one they bound, e.g. the closed-form maximum
delay bounds every delay quantile): an upper bound at or below a ``max`` limit proves the SLO holds, a lower
bound above it proves it fails (mirrored for ``min``). Only an SLO no bound decides is judged on the search
method's own value; for a confidence interval, "decided" means the interval lies on one side of the limit.

How the search spends its time (a 1 Gbit/s port with thousands of calls answers in a minute):

1. **Bounds first.** The closed forms cost milliseconds. Where they carry a bound for every SLO's metric, the
   search first finds, on them alone, the largest (smallest) value at which bounds prove every SLO: the
   *bound-decided answer* (``AdmitResult.bound_value``). It is sound -- every SLO holds there whatever the
   other methods say -- hence never beyond the true boundary. Every later trial value is also judged on the
   closed forms first, and the search method runs only where they leave an SLO undecided.
2. **Simulation near the boundary only, with sequential stopping.** A simulated trial spends at most what
   one ``plan`` simulation spends (``packets x replications``), split into 16 times as many replications of
   a sixteenth of the packets (:func:`sim_design`: for CBR calls a replication's loss depends on the phases
   it draws, so many short replications estimate the mean over phases better than a few long ones). It runs
   16 replications, then 32, 64, ... up to that cap, and stops at the first look at which every SLO no bound
   decides is decided by its interval at the scenario's confidence (a loss seen fewer than 5 times decides
   "holds" only with a tenfold margin: losses come in bursts and in rare replications, :func:`_decided`). The
   simulator keeps the replications it ran, so a look adds replications rather than repeating them (same
   seeds as one run of that many). At the cap an undecided SLO is judged by the point estimate, as
   ``verify`` judges it, and the answer says so. Each look's interval is at the chosen confidence; over
   ``L`` looks the chance that some look decides wrongly is at most ``L`` times one look's.
3. **Bracket, then refine.** From the bound-decided answer (else the scenario's value) the search doubles
   (halves) until a value is infeasible -- three steps one at a time, then with a doubling stride and bisection
   on the step count back to the first such value, which finds the values single steps would in logarithmically
   many evaluations (:meth:`Search._walk`; "no value meets every SLO" after about ten model checks instead of
   forty) -- then refines: on a simulated search by bisection on feasibility
   down to ``sim_rtol`` (0.5 % of the value, or one unit of an integer parameter: finer would resolve only
   the simulation's noise); otherwise with SciPy's ``brentq`` on the smallest normalised SLO margin where
   it changes sign, and by bisection on feasibility where it does not (e.g. an SLO held with equality over a
   stretch), to ``rtol``.

The answer says what decided it (``decided_by``): ``bound`` when bounds prove every SLO at the answer, else the
search method, with the binding SLO's estimate and interval at the answer (``estimate``). While the search
runs it reports the value being tried, the bracket so far and an ETA (:mod:`qosbound.progress`); if a signal
stops it, the bracket found so far is what it reports (``partial``), marked incomplete.
"""

from __future__ import annotations

from qosbound.admit_parameter import UNIT_OF_KIND, parse_bound, search_range, value_kind
from qosbound.admit_point import FEW_EVENTS, FEW_EVENTS_MARGIN, judge_point, normalised_margin, worst_margin
from qosbound.admit_search import (MIN_LOOK, MIN_PACKETS, SIM_RTOL, SPLIT, AdmitResult, Search, bisect_root,
                                   bracket_text, sim_design)
from qosbound.progress import QUIET
from qosbound.systems import get_system

__all__ = ["AdmitResult", "admit", "normalised_margin", "search_range", "worst_margin", "judge_point",
           "bracket_text", "SIM_RTOL", "UNIT_OF_KIND", "value_kind", "parse_bound", "sim_design", "bisect_root",
           "SPLIT", "MIN_PACKETS", "MIN_LOOK", "FEW_EVENTS", "FEW_EVENTS_MARGIN", "Search"]


# The search's parts live in modules along their jobs and are read from here: the parameter's kind, unit and
# range (qosbound.admit_parameter), the verdict of one trial value (qosbound.admit_point), the search and its
# simulated-trial design (qosbound.admit_search).


def admit(scn, parameter: str, *, direction: str | None = None, method: str | None = None,
          lo: float | None = None, hi: float | None = None, rtol: float = 1e-4, max_evals: int = 80,
          sim_rtol: float = SIM_RTOL, split: int = SPLIT, progress=None) -> AdmitResult:
    """The largest (``direction="largest"``, the default) or smallest value of ``parameter`` meeting every SLO.

    ``rtol``: the relative tolerance of a search on a deterministic method; ``sim_rtol`` on the simulator;
    ``split``: the simulated trials' design (:func:`sim_design`). The system's ``admit`` hook answers first
    (TSQ's hint selection); where it returns None the search of the module docstring varies the parameter.
    """
    system = get_system(scn.system)
    own = system.admit(scn, parameter, direction=direction, method=method, lo=lo, hi=hi, progress=progress)
    if own is not None:
        return own
    search = Search(scn, system, parameter, direction, method, lo, hi, rtol, max_evals, sim_rtol,
                    progress or QUIET)
    search.split = split
    return search.run()
