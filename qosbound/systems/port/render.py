"""``qosbound model render`` for a port: the PRISM models model checking uses, one per class it covers.

A priority class: ``pq_txq``'s PQ + TxQ model of the scenario :func:`.model_checked.pq_txq_raw` builds (the class
as EF, the other classes as its best effort), files ``<port>-<class>.prism/.props``. A weighted class: ``af``'s
dropper model (``models/wred.prism``, or ``wred_ewma.prism`` with ``average: ewma``) with its constants set for
the class at its residual DRR rate, files ``<port>_<class>.prism/.props``. A class no model covers is skipped
with the reason in the ScenarioError raised when none is covered.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from qosbound.analytic.cbwfq import service_rates
from qosbound.errors import SKIPPABLE, ScenarioError
from qosbound.models.af import wred_constants
from qosbound.models.engine import MODELS_DIR
from qosbound.scenario import build
from qosbound.systems import get_system
from qosbound.systems.port.closed_form import queue_inputs, residual_rate
from qosbound.systems.port.elements import Port
from qosbound.systems.port.metrics import requested
from qosbound.systems.port.model_checked import pq_txq_raw
from qosbound.systems.port.schema import Scenario

__all__ = ["render_models"]


def _render_wred(scn: Scenario, port: Port, c, mu_share: float, out: Path) -> list[Path]:
    ci, _, _ = queue_inputs(port, c, mu_share)
    ewma = scn.methods.model_checked.average == "ewma" and c.dropper.red and c.dropper.mode == "wred"
    stem = "wred_ewma" if ewma else "wred"
    text = (MODELS_DIR / f"{stem}.prism").read_text()
    for name, value in wred_constants(ci.lam, ci.mu, ci.K, ci.profile, ewma=ewma).items():
        text, n = re.subn(rf"^const (int|double) {name};", lambda m: f"const {m.group(1)} {name} = {value!r};",
                          text, count=1, flags=re.M)
        if n != 1:
            raise ScenarioError(f"model {stem}.prism has no undefined constant '{name}'", field="methods")
    text = f"// Rendered by qosbound for port {scn.name}, class {c.name} (at its residual DRR rate).\n" + text
    mp, pp = out / f"{scn.name}_{c.name}.prism", out / f"{scn.name}_{c.name}.props"
    mp.write_text(text)
    pp.write_text((MODELS_DIR / f"{stem}.props").read_text())
    return [mp, pp]


def render_models(scn: Scenario, port: Port, out_dir) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    why: list[str] = []
    ccdf, qs = requested(scn)
    for k in port.levels:
        for c in port.level(k):
            raw = pq_txq_raw(scn, port, c, ccdf, qs)
            if raw is None:
                why.append(f"{c.name}: no pq_txq chain expresses it")
                continue
            try:
                written += list(get_system("pq_txq").render_models(build(raw), out))
            except SKIPPABLE as e:
                why.append(f"{c.name}: {e.problem}")
    w = port.weighted
    if w:
        CW = residual_rate(port)
        demand = np.array([2.0 * CW if x.saturated else x.offered for x in w])
        for c, mu in zip(w, service_rates(CW, [x.weight for x in w], demand)):
            if not c.saturated:
                written += _render_wred(scn, port, c, float(mu), out)
    if not written:
        raise ScenarioError("no class of the port has a PRISM model: " + "; ".join(why), field="classes")
    return written
