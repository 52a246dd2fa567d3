"""Helpers shared by the test modules."""

from __future__ import annotations


def one_line(err: str) -> str:
    """The single ``qosbound: ...`` line a refused command prints on standard error (fails otherwise)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("qosbound: "), err
    assert "Traceback" not in err
    return lines[0]
