"""``qosbound model render`` for TSQ: the fixed-hint DTMC and the MDP with the operating point's constants."""

from __future__ import annotations

import re
from pathlib import Path

from qosbound.models import tsq as M
from qosbound.systems.tsq.model_checked import abstraction
from qosbound.systems.tsq.schema import Scenario

__all__ = ["render_models"]


def render_models(scn: Scenario, out_dir) -> list:
    """Write the scenario's PRISM files (``qosbound model render``): the fixed-hint DTMC, then the MDP with its
    property files (``_tsq.props`` for both engines, ``_tsq.storm.props`` for Storm's long-run averages).

    The sizing constants are filled in from the scenario's operating point (see models/tsq.py,
    ``abstraction``); the DTMC's hint is the swept flow's (else the first flow's) configured hint.
    """
    ab = abstraction(scn)
    flow = scn.metrics.sweep or next(iter(scn.flows))
    consts = {**ab.mdp_constants(), "d": scn.flows[flow].hint}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for src, props in ((M.HINT_MODEL, [M.HINT_PROPS]), (M.MDP_MODEL, [M.MDP_PROPS, M.MDP_STORM_PROPS])):
        text = src.read_text(encoding="utf-8")
        for k, v in consts.items():
            text = re.sub(rf"^const (int|double) {k};", lambda m, k=k, v=v: f"const {m.group(1)} {k} = {v!r};",
                          text, flags=re.M)
        header = f"// Rendered by qosbound for scenario '{scn.name}' (constants from its operating point).\n"
        p = out / f"{scn.name}_{src.stem}.prism"
        p.write_text(header + text, encoding="utf-8")
        written.append(p)
        for pf in props:  # tsq.props (both engines) and tsq.storm.props (Storm-only LRA properties)
            q = out / f"{scn.name}_{pf.name}"
            q.write_text(pf.read_text(encoding="utf-8"), encoding="utf-8")
            written.append(q)
    return written
