"""Feed-forward networks of ports, as scenario mappings -- random ones and tandems: for tests (bounds against simulated maxima on
topologies nobody chose) and the scale benchmark (``benchmarks/bench_network.py``).

The nodes stand in layers; every node of a layer has a port to every node of the next; a flow starts at a
random node of a random layer and steps down to a random node of each next layer for 1 to ``max_hops`` hops, so
every route is feed-forward. Each port has a voice class at priority 1, a bulk class (CS1, 30 % of the rest) and class-default (70 %), a ring of ``ring``
units of 1500 B, a link rate drawn from ``rates`` and a propagation delay of 0.1 to 5 ms. A flow is voice (CBR
calls of 200 B at 80 kbit/s) or data (Poisson or CBR, a size mix), scaled so that no port carries more than
``load`` of its link.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["random_network", "tandem"]

_MIX = [{"size": "40 B", "p": 0.5}, {"size": "576 B", "p": 0.3}, {"size": "1500 B", "p": 0.2}]


def random_network(layers: int, width: int, flows: int, seed: int, *, max_hops: int = 4, load: float = 0.8,
                   rates=(10e6, 100e6), ring: int = 8, voice_share: float = 0.5, saturated: int = 0,
                   duration: float = 2.0) -> dict:
    """A scenario mapping (module docstring); ``saturated`` flows of bulk 1500 B packets are added, each at a
    distinct port of the first layer in class bulk."""
    rng = np.random.default_rng(seed)
    nodes = [[f"n{i}-{j}" for j in range(width)] for i in range(layers)]
    rate = {}
    ports = {}
    for i in range(layers - 1):
        for a in nodes[i]:
            for b in nodes[i + 1]:
                name = f"{a}->{b}"
                rate[name] = float(rng.choice(rates))
                ports[name] = {"link": {"rate": f"{rate[name]:g} bit/s", "delay": f"{rng.uniform(0.1, 5.0):.3f} ms"},
                               "txq": {"units": ring, "unit_size": "1500 B"},
                               "classes": [{"name": "voice", "dscp": ["EF"], "priority": 1, "queue_limit": 256},
                                           {"name": "bulk", "dscp": ["CS1"], "bandwidth": "remaining 30 %",
                                            "queue_limit": 128},
                                           {"name": "class-default", "bandwidth": "remaining 70 %",
                                            "queue_limit": 512}]}
    specs = []
    for k in range(flows):
        start = int(rng.integers(0, layers - 1))
        hops = int(rng.integers(1, min(max_hops, layers - 1 - start) + 1))
        path = [nodes[start][int(rng.integers(width))]]
        for i in range(start + 1, start + hops + 1):
            path.append(nodes[i][int(rng.integers(width))])
        voice = rng.random() < voice_share
        specs.append((f"f{k}", voice, path, "poisson" if rng.random() < 0.5 else "cbr"))
    # the load each port carries per unit of demand, then one scale for all flows of a class
    carried = {p: [0.0, 0.0] for p in ports}
    demand = {}
    for name, voice, path, _ in specs:
        d = 80e3 * 2 if voice else float(rng.uniform(0.2e6, 2e6))
        demand[name] = d
        for a, b in zip(path, path[1:]):
            carried[f"{a}->{b}"][0 if voice else 1] += d
    scale_v = min(load * 0.4 * rate[p] / c[0] for p, c in carried.items() if c[0] > 0) if any(
        c[0] > 0 for c in carried.values()) else 1.0
    scale_d = min(load * 0.6 * rate[p] / c[1] for p, c in carried.items() if c[1] > 0) if any(
        c[1] > 0 for c in carried.values()) else 1.0
    out = []
    for name, voice, path, arrivals in specs:
        if voice:
            calls = max(1, int(math.floor(2 * scale_v)))
            traffic = {"calls": calls, "call": {"rate": "80 kbit/s", "size": "200 B", "arrivals": "cbr"}}
        else:
            r = demand[name] * scale_d
            traffic = ({"rate": f"{r:.6g} bit/s", "arrivals": "poisson", "sizes": _MIX} if arrivals == "poisson" else
                       {"rate": f"{r:.6g} bit/s", "arrivals": "cbr", "size": "1000 B"})
        out.append({"name": name, "class": "voice" if voice else "class-default", "path": path, "traffic": traffic})
    firsts = [p for p in ports if p.startswith(tuple(f"{a}->" for a in nodes[0]))]
    for i in range(min(saturated, len(firsts))):
        a, b = firsts[i].split("->")
        tail = [b] + [nodes[j][int(rng.integers(width))] for j in range(2, min(layers, 2 + max_hops - 1))]
        out.append({"name": f"bulk{i}", "dscp": "CS1", "path": [a] + tail,
                    "traffic": {"saturated": True, "sizes": [{"size": "1500 B", "p": 1}]}})
    return {"name": f"random-{layers}x{width}-{flows}", "system": "network", "ports": ports, "flows": out,
            "methods": {"simulated": {"duration": f"{duration:g} s", "replications": 2}}}


def tandem(hops: int, *, rate: str = "10 Mbit/s", ring: int = 8, calls: int = 10, cross_calls: int = 10,
           cross_data: str = "5 Mbit/s", duration: float = 2.0) -> dict:
    """A voice flow ``v`` of ``calls`` CBR calls (200 B at 80 kbit/s) over ``hops`` ports in a line, each with a
    ring of ``ring`` units of 1500 B; at every port a voice flow of ``cross_calls`` calls and a Poisson data flow
    of ``cross_data`` (the size mix of :func:`random_network`) cross it for that one hop."""
    nodes = [f"r{i}" for i in range(hops + 1)]
    classes = [{"name": "voice", "dscp": ["EF"], "priority": 1, "queue_limit": 256},
               {"name": "class-default", "bandwidth": "remaining 100 %", "queue_limit": 512}]
    ports = {f"{a}->{b}": {"link": {"rate": rate, "delay": "1 ms"}, "classes": classes,
                           **({"txq": {"units": ring, "unit_size": "1500 B"}} if ring else {})}
             for a, b in zip(nodes, nodes[1:])}
    call = {"rate": "80 kbit/s", "size": "200 B", "arrivals": "cbr"}
    flows = [{"name": "v", "class": "voice", "path": nodes, "traffic": {"calls": calls, "call": call}}]
    for i, (a, b) in enumerate(zip(nodes, nodes[1:])):
        flows.append({"name": f"xv{i}", "class": "voice", "path": [a, b],
                      "traffic": {"calls": cross_calls, "call": call}})
        flows.append({"name": f"xd{i}", "class": "class-default", "path": [a, b],
                      "traffic": {"rate": cross_data, "arrivals": "poisson", "sizes": _MIX}})
    return {"name": f"tandem-{hops}", "system": "network", "ports": ports, "flows": flows,
            "methods": {"simulated": {"duration": f"{duration:g} s", "replications": 2}}}
