"""Networks of several independent sub-networks, for the tests of their separate simulation."""

from __future__ import annotations

import yaml

from tests.helpers import example


def two_wans() -> dict:
    """The WAN example and a copy of it on nodes of their own (``x-`` before every name): two sub-networks."""
    raw = yaml.safe_load(example("network_wan").read_text())
    copy = {"nodes": [f"x-{n}" for n in raw["nodes"]],
            "ports": {"->".join(f"x-{n}" for n in p.split("->")): v for p, v in raw["ports"].items()},
            "flows": [dict(f, name=f"x-{f['name']}", path=[f"x-{n}" for n in f["path"]]) for f in raw["flows"]]}
    for field in ("nodes", "flows"):
        raw[field] = raw[field] + copy[field]
    raw["ports"] = dict(raw["ports"], **copy["ports"])
    return raw
