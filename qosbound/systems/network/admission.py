"""``admit`` on a network: the generic search (:func:`qosbound.admit.admit`) over the parameter -- on the closed
forms when they judge every SLO (by a bound; an approximation does not count), else on the chained simulation
with the closed forms judging beside it (an SLO on a quantile or on loss needs the simulation unless a bound
settles it) -- then the port that binds -- at the nearest value beyond the answer where an SLO fails, the port
contributing most to the closed-form bound of that SLO's flow (or the one where the flow has no bound), named in
the answer."""

from __future__ import annotations

import contextvars

from qosbound import admit as generic
from qosbound.errors import ScenarioError
from qosbound.progress import QUIET
from qosbound.scenario import build, get_path, in_form, set_path
from qosbound.systems import get_system
from qosbound.systems.base import default_methods
from qosbound.systems.network.bounds import analyse
from qosbound.systems.network import simulated as _simulated
from qosbound.systems.network.closed_form import closed_form
from qosbound.systems.network.elements import network
from qosbound.verdicts import judge_slos

__all__ = ["admit", "binding_port"]

_inside = contextvars.ContextVar("network_admit_inside", default=False)


def binding_port(scn, slo_metric: str) -> tuple[str, str]:
    """(port, why) binding the SLO on ``slo_metric`` in ``scn``: for a loss, the port where the simulation loses
    most of the flow's packets; otherwise the one contributing most to the flow's closed-form bound (('', '')
    when there is none)."""
    flow = slo_metric.split(".")[0]
    net = network(scn)
    if slo_metric == f"{flow}.loss" and scn.methods.simulated.enabled:
        for r in _simulated.simulated(net, scn.methods.simulated, [], QUIET):
            if r.metric == slo_metric and r.provenance.get("lost_per_port"):
                lost = r.provenance["lost_per_port"]
                port = max(lost, key=lost.get)
                if lost[port] > 0:
                    return port, f"it drops {lost[port]} of {flow}'s {r.provenance['trials']} counted packets"
    fb = analyse(net).flows.get(flow)
    if fb is None:
        return "", ""
    return fb.binding, f"the largest share of {flow}'s closed-form delay bound is there"


def admit(scn, parameter: str, *, direction=None, method=None, lo=None, hi=None, progress=None):
    if _inside.get():
        return None  # the generic search, called from below
    note = ""
    if method is None:
        methods = default_methods(scn)
        verdicts = judge_slos(get_system("network"), scn, closed_form(network(scn)))
        unjudged = [v.name for v in verdicts if v.status == "missing" or v.result_kind == "approximation"]
        if unjudged and "simulated" in methods:
            method = "simulated"
            note = (f"searching on the simulation: the closed forms alone cannot judge {', '.join(unjudged)}, or only "
                    "by an approximation (they judge the bounds beside it)")
    token = _inside.set(True)
    try:
        res = generic.admit(scn, parameter, direction=direction, method=method, lo=lo, hi=hi, progress=progress)
    finally:
        _inside.reset(token)
    if note:
        res.notes.insert(0, note)
    if res.value is None or not res.binding:
        return res
    sign = 1.0 if res.direction == "largest" else -1.0
    beyond = sorted((abs(x - res.value), x) for x, m in res.history if m < 0 and (x - res.value) * sign > 0)
    if not beyond:
        return res
    x = beyond[0][1]
    written = get_path(scn.raw, parameter)
    integer = isinstance(written, int) and not isinstance(written, bool)
    try:
        trial = build(set_path(scn.raw, parameter, in_form(written, int(round(x)) if integer else x)), scn.path)
        slo = next(s for s in trial.slos if s.title() == res.binding)
        port, why = binding_port(trial, slo.metric)
    except (ScenarioError, StopIteration):
        return res
    if port:
        res.notes.append(f"binding port: {port} (at {parameter} = {x:g}, where {res.binding} fails, {why})")
    return res
