"""``qosbound admit --vary flows.<name>.hint`` for TSQ: the hint chosen over every hint in 1..2^n.

Every other parameter is left to the generic search (:func:`qosbound.admit.admit`), which
honours ``--direction``.
"""

from __future__ import annotations

import re

from qosbound.admit import AdmitResult
from qosbound.errors import ScenarioError
from qosbound.progress import QUIET
from qosbound.scenario import build
from qosbound.systems.base import default_methods
from qosbound.systems.tsq.closed_form import closed_form
from qosbound.systems.tsq.metrics import slo_limit
from qosbound.systems.tsq.schema import Scenario
from qosbound.systems.tsq.simulated import simulated

__all__ = ["admit"]

_HINT = re.compile(r"flows\.([A-Za-z][A-Za-z0-9_]*)\.hint")


def admit(scn: Scenario, parameter: str, *, direction: str | None = None, method: str | None = None,
          lo: float | None = None, hi: float | None = None, progress=None):
    """The hint of ``flows.<name>.hint`` among those meeting the flow's SLOs (None for any other parameter).

    ``direction`` None: the hint that maximises the flow's quality (Claypool, Kinicki & Kumar section 4.2),
    ties going to the larger hint (less cutting in line); ``"largest"`` / ``"smallest"``: the largest
    (least priority) or smallest (most priority) hint meeting every SLO of the flow. Every hint in 1..2^n
    (within ``--min``/``--max``) is evaluated by ``method`` (default: simulated when enabled, else
    closed-form).
    """
    m = _HINT.fullmatch(parameter)
    if not m:
        return None
    name = m.group(1)
    if name not in scn.flows:
        raise ScenarioError(f"the scenario has no flow group '{name}' (it has {', '.join(scn.flows)})",
                            file=scn.path, field=parameter)
    if scn.flows[name].count != 1:
        raise ScenarioError("the varied flow group must have count 1", file=scn.path, field=parameter)
    if direction not in (None, "largest", "smallest"):
        raise ScenarioError(f"unknown direction '{direction}': largest or smallest", field="--direction")
    methods = default_methods(scn)
    if method is None:
        method = "simulated" if "simulated" in methods else "closed-form"
    if method not in ("simulated", "closed-form"):
        raise ScenarioError("hint selection uses the simulated or closed-form method", file=scn.path, field="method")
    H = 2 ** scn.tsq.hint_bits
    hints = [h for h in range(1, H + 1) if (lo is None or h >= lo) and (hi is None or h <= hi)]
    if not hints:
        raise ScenarioError("no hint in the given range", file=scn.path, field=parameter)
    raw = scn.raw
    raw.setdefault("metrics", {})
    raw["metrics"] = {**raw["metrics"], "sweep": name, "hints": hints}
    trial = build(raw, scn.path)
    if method == "closed-form":
        results = closed_form(trial)
    else:
        results = simulated(trial, trial.methods.simulated, progress or QUIET)
    by = {r.metric: r for r in results}
    q = {h: by[f"{name}@h{h}.quality"].value for h in hints}
    # the flow's own SLOs, judged on each hint's results (<name>.X read as <name>@h<d>.X)
    own = [slo for slo in trial.slos if slo.metric.startswith(f"{name}.") and slo.metric != f"{name}.best_hint"]
    feasible, failing = [], {}
    for h in hints:
        bad = []
        for slo in own:
            r = by.get(f"{name}@h{h}." + slo.metric[len(name) + 1:])
            if r is None:
                continue
            lim = slo_limit(trial, slo)
            if (slo.bound == "max" and r.value > lim) or (slo.bound == "min" and r.value < lim):
                bad.append(slo.title())
        if bad:
            failing[h] = bad
        else:
            feasible.append(h)
    history = [(float(h), float(q[h])) for h in hints]
    label = direction or "quality-maximising"
    if not feasible:
        return AdmitResult(parameter, label, None, "1", method, f"{name}.quality", len(hints), history,
                           "no hint meets the flow's SLOs")
    if direction is None:
        best = max(feasible, key=lambda h: (round(q[h], 9), h))
        binding = f"{name}.quality"
    else:
        best = max(feasible) if direction == "largest" else min(feasible)
        # the SLO that fails at the nearest hint beyond the answer, if any
        beyond = sorted((h for h in failing if (h > best if direction == "largest" else h < best)),
                        key=lambda h: abs(h - best))
        binding = failing[beyond[0]][0] if beyond else ""
    note = f"quality {q[best]:.4f} at hint {best}"
    if failing:
        note += f"; hints failing an SLO: {', '.join(str(h) for h in sorted(failing))}"
    return AdmitResult(parameter, label, float(best), "1", method, binding, len(hints), history, note)
