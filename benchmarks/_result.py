"""The machine-readable last line of a benchmark: ``RESULT {"figures": [...]}``.

Each figure is ``{"name": ..., "label": ..., "value": number, "unit": ...}``: its headline figures, the ones
``benchmarks/collect.py`` records (and the paper's performance table shows) beside the text the script prints
for a reader. No side effects on import (unlike ``_common``, which sets the BLAS threads).
"""

from __future__ import annotations

import json
import math

PREFIX = "RESULT "


def figure(name: str, label: str, value: float, unit: str) -> dict:
    """One headline figure; a non-finite value is refused here rather than written as NaN."""
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"benchmark figure {name!r} is {v!r}")
    return {"name": name, "label": label, "value": v, "unit": unit}


def emit(*figures: dict) -> None:
    """Print the ``RESULT`` line (one line of JSON) after the script's own text."""
    print(PREFIX + json.dumps({"figures": list(figures)}), flush=True)
