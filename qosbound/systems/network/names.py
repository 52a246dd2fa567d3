"""The names of a network's nodes and ports: a node is letters, digits, '_', '+', '-'; a port is ``'a->b'`` after the
two nodes it joins."""

from __future__ import annotations

import re

__all__ = ["NAME", "port_ends"]

#: Node and flow names: no dots (metric names are dotted) and no spaces.
NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_+-]*$")


def port_ends(name: str) -> tuple[str, str] | None:
    """``'a->b'`` -> ``('a', 'b')``; None when the name is not two node names joined by ``->``."""
    parts = name.split("->")
    if len(parts) != 2 or not all(NAME.match(p) for p in parts) or parts[0] == parts[1]:
        return None
    return parts[0], parts[1]
