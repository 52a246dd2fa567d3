"""``qosbound model render`` for AF: one PRISM model per class with its constants filled in."""

from __future__ import annotations

import re
from pathlib import Path

from qosbound.models.af import wred_constants
from qosbound.models.engine import MODELS_DIR
from qosbound.errors import ScenarioError
from qosbound.systems.af.queue_inputs import class_inputs
from qosbound.systems.af.schema import Scenario

__all__ = ["render_models"]


def render_models(scn: Scenario, out_dir) -> list:
    """Write one PRISM model per AF class with its constants filled in, and the property file
    (``qosbound model render``). The files in models/ leave the constants undefined; these set them."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    opts = scn.methods.model_checked
    for ci in class_inputs(scn):
        ewma = opts.average == "ewma" and ci.profile.mode == "wred"
        stem = "wred_ewma" if ewma else "wred"
        consts = wred_constants(ci.lam, ci.mu, ci.K, ci.profile, ewma=ewma)
        text = (MODELS_DIR / f"{stem}.prism").read_text()
        for name, value in consts.items():
            text, n = re.subn(rf"^const (int|double) {name};", lambda m: f"const {m.group(1)} {name} = {value!r};",
                              text, count=1, flags=re.M)
            if n != 1:
                raise ScenarioError(f"model {stem}.prism has no undefined constant '{name}'", field="methods")
        text = f"// Rendered by qosbound for scenario {scn.name}, class {ci.name}.\n" + text
        mp = out / f"{scn.name}_{ci.name}.prism"
        mp.write_text(text)
        pp = out / f"{scn.name}_{ci.name}.props"
        pp.write_text((MODELS_DIR / f"{stem}.props").read_text())
        written += [mp, pp]
    return written
