"""Writes ``port_closed_forms.json``: every closed-form result of the shipped ports (``examples/port_*.yaml``, and
every shipped ``pq_txq`` / ``af`` example converted to ports) -- metric, value, interval, kind -- as the port
system computes them. ``tests/systems/port/test_closed_form.py`` checks that the closed forms still give these numbers,
digit for digit, so a change made for speed (formulas lambdified once, evaluated over all classes at once) or
a new feature that leaves unshaped ports alone changes no number.

Run from the repository root: ``python tests/data/port_closed_forms.py``. The file was written before the shaper,
the separate drop precedences and the speed-ups of the closed forms were added.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from qosbound.progress import QUIET  # noqa: E402
from qosbound.scenario import build, load  # noqa: E402
from qosbound.systems import get_system  # noqa: E402
from qosbound.systems.port.convert import convert  # noqa: E402

OUT = Path(__file__).with_name("port_closed_forms.json")


def shipped_ports() -> dict[str, dict]:
    """name -> raw port scenario: the shipped ports and the shipped pq_txq / af examples as ports."""
    ex = ROOT / "examples"
    out = {}
    for p in sorted(ex.glob("port_*.yaml")):
        out[p.stem] = yaml.safe_load(p.read_text())
    for p in sorted(list(ex.glob("*.yaml")) + list(ex.glob("*/*.yaml"))):
        if yaml.safe_load(p.read_text()).get("system") in ("pq_txq", "af"):
            for k, raw in enumerate(convert(p)[0]):
                out[f"{p.relative_to(ex).with_suffix('')}#{k}"] = raw
    return out


def closed_forms(raw: dict) -> list[dict]:
    scn = build(raw)
    res = get_system("port").evaluate(scn, ["closed-form"], QUIET)
    return [{"metric": r.metric, "value": r.value, "low": r.interval.low, "high": r.interval.high,
             "kind": r.kind} for r in res]


def main() -> None:
    doc = {"source": "tests/data/port_closed_forms.py", "ports": {n: closed_forms(raw)
                                                                  for n, raw in shipped_ports().items()}}
    OUT.write_text(json.dumps(doc, indent=1, allow_nan=True) + "\n")
    print(f"{OUT}: {sum(len(v) for v in doc['ports'].values())} results of {len(doc['ports'])} ports")


if __name__ == "__main__":
    main()
