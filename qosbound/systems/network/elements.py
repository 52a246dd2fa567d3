"""A network as types: :class:`Network` (ports in a feed-forward order, flows), :class:`Flow` (its hops and its
traffic at its first port), :class:`Hop` (a port and the flow's class there).

:func:`network_of` builds it from a validated scenario: port files read, every flow routed (its ``path``, or a
shortest path in hops from ``source`` to ``destination``), its class found at every hop, the routes checked
feed-forward, and each port built as a port of the port system (:func:`qosbound.systems.port.port_of`) whose
classes carry the flows crossing it. A flow's streams are its own at its first port; further on the class
carries a stand-in of the flow's rate and sizes (its arrival curve there is what the analyses propagate, its
packets what the simulation forwards). Every refusal is a ScenarioError naming the field.
"""

from __future__ import annotations

import gc
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from qosbound.analytic.curves import ArrivalCurve
from qosbound.errors import ScenarioError
from qosbound.scenario import error_location, error_problem, load_raw
from qosbound import dscp as dscp_names
from qosbound.systems.port.elements import Port, SizeLaw, Stream, port_of, streams_of
from qosbound.systems.port.schema import DEFAULT_CLASS
from qosbound.systems.port.schema import Scenario as PortScenario
from qosbound.systems.network.names import port_ends

if TYPE_CHECKING:  # the scenario file imports this builder, to build a network when it is loaded
    from qosbound.systems.network.schema import Scenario

__all__ = ["Hop", "Flow", "Network", "network_of", "network", "bulk", "PORT_FIELDS"]

#: The fields of a port file a network port keeps (its traffic, SLOs and methods belong to the port scenario).
PORT_FIELDS = ("link", "txq", "classes", "scheduler", "shaper", "provenance", "assumed", "not_modelled")


@dataclass(frozen=True)
class Hop:
    """A flow at one port: the port's name, the class it joins there (name and index), its precedence index."""

    port: str
    cls: str
    index: int
    prec: int


@dataclass(frozen=True)
class Flow:
    """A flow: its hops in order and its traffic at the first one (``streams``; ``sizes`` the law of its packet
    sizes). ``offered`` is its rate (bit/s); a saturated flow's is its first link's rate, an upper bound on what
    it can carry."""

    name: str
    index: int
    hops: tuple[Hop, ...]
    streams: tuple[Stream, ...]
    sizes: SizeLaw | None
    saturated: bool
    offered: float

    def envelope(self) -> ArrivalCurve | None:
        """The flow's arrival curve at its first port (its streams' envelopes summed), or None (Poisson,
        saturated)."""
        return ArrivalCurve.total(s.envelope() for s in self.streams)

    @property
    def largest(self) -> float:
        return max(s.sizes.largest for s in self.streams)

    @property
    def smallest(self) -> float:
        return min(s.sizes.smallest for s in self.streams)


@dataclass(frozen=True)
class Network:
    """Ports by name (each a :class:`Port` whose classes carry the flows crossing it), ``order`` a feed-forward
    order of the ports (every flow visits them in this order), the flows, and per port the flows crossing it as
    ``(flow index, hop index)``."""

    name: str
    nodes: tuple[str, ...]
    ports: dict
    order: tuple[str, ...]
    flows: tuple[Flow, ...]
    at: dict
    notes: tuple[str, ...] = ()

    def flow(self, name: str) -> Flow:
        for f in self.flows:
            if f.name == name:
                return f
        raise ScenarioError(f"the network has no flow '{name}'", field="flows")


def _err(scn, problem: str, field: str) -> ScenarioError:
    return ScenarioError(problem, file=scn.path, field=field)


def _port_specs(scn: Scenario) -> tuple[dict, list[str]]:
    """Each port's definition as a mapping (port files read relative to the scenario), and notes."""
    base = Path(scn.path).parent if scn.path else Path(".")
    out, notes = {}, []
    for name, spec in scn.ports.items():
        if isinstance(spec, str):
            path = Path(spec) if Path(spec).is_absolute() else base / spec
            try:
                raw = load_raw(path)
            except ScenarioError as e:
                raise _err(scn, f"cannot read the port file {spec!r}: {e.problem}", f"ports.{name}") from None
            if raw.get("system") != "port":
                raise _err(scn, f"{spec!r} is not a port scenario (system: {raw.get('system')!r})", f"ports.{name}")
            spec = {k: v for k, v in raw.items() if k in PORT_FIELDS}
            if any(isinstance(c, dict) and "traffic" in c for c in spec.get("classes", []) or []):
                notes.append(f"ports.{name}: the traffic of the port file {Path(path).name} is left out (the flows "
                             "carry the traffic)")
        if not isinstance(spec.get("classes"), list) or not spec["classes"]:
            raise _err(scn, "a port declares its classes (a list)", f"ports.{name}.classes")
        out[name] = spec
    return out, notes


def _class_table(spec: dict) -> tuple[list[str], dict[str, tuple[str, int]]]:
    """(class names in order with class-default, DSCP -> (class, precedence index)) of a port definition."""
    names, by_dscp = [], {}
    for c in spec["classes"]:
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            continue  # the port's own validation names the problem
        names.append(c["name"])
        for i, d in enumerate(c.get("dscp") or []):
            try:
                by_dscp.setdefault(dscp_names.canonical(d), (c["name"], i))
            except ScenarioError:
                pass
    if DEFAULT_CLASS not in names:
        names.append(DEFAULT_CLASS)
    return names, by_dscp


def _route(scn, nodes, out_edges, f, k: int) -> list[str]:
    """The flow's ports in order: its path's, or a shortest path in hops (ties: the ports' order in the file)."""
    at = f"flows.{k}"
    if f.path is not None:
        ports = []
        for i, n in enumerate(f.path):
            if n not in nodes:
                raise _err(scn, f"unknown node {n!r} (nodes: {', '.join(sorted(nodes))})", f"{at}.path.{i}")
        for a, b_ in zip(f.path, f.path[1:]):
            name = f"{a}->{b_}"
            if name not in scn.ports:
                have = ", ".join(p for _, p in out_edges.get(a, [])) or "none"
                raise _err(scn, f"flow {f.name}: no port '{name}' (the ports out of {a}: {have})", f"{at}.path")
            ports.append(name)
        return ports
    for end, field in ((f.source, "source"), (f.destination, "destination")):
        if end not in nodes:
            raise _err(scn, f"unknown node {end!r} (nodes: {', '.join(sorted(nodes))})", f"{at}.{field}")
    prev = {f.source: None}
    q = deque([f.source])
    while q:
        u = q.popleft()
        if u == f.destination:
            break
        for v, p in out_edges.get(u, []):
            if v not in prev:
                prev[v] = (u, p)
                q.append(v)
    if f.destination not in prev:
        raise _err(scn, f"flow {f.name}: no route from {f.source} to {f.destination} over the ports", f"{at}.destination")
    ports, v = [], f.destination
    while prev[v] is not None:
        u, p = prev[v]
        ports.append(p)
        v = u
    return ports[::-1]


def _feed_forward(scn, flows_ports: list[list[str]]) -> tuple[str, ...]:
    """A topological order of the ports under 'a flow goes from port p to port q'; a cycle is refused."""
    succ: dict[str, set] = {p: set() for p in scn.ports}
    indeg = {p: 0 for p in scn.ports}
    for k, ports in enumerate(flows_ports):
        if len(set(ports)) != len(ports):
            raise _err(scn, f"flow {scn.flows[k].name} crosses a port twice: its route loops, and the analyses "
                       "and the chained simulation need feed-forward routes", f"flows.{k}.path")
        for p, q in zip(ports, ports[1:]):
            if q not in succ[p]:
                succ[p].add(q)
                indeg[q] += 1
    order = []
    q = deque(p for p in scn.ports if indeg[p] == 0)
    while q:
        p = q.popleft()
        order.append(p)
        for s in sorted(succ[p]):
            indeg[s] -= 1
            if indeg[s] == 0:
                q.append(s)
    if len(order) < len(scn.ports):
        cyc = [p for p in scn.ports if indeg[p] > 0]
        raise _err(scn, "the flows' routes make a cycle through the ports " + ", ".join(cyc[:8]) +
                   (" ..." if len(cyc) > 8 else "") + ": total and separated flow analysis and the chained "
                   "simulation need feed-forward routes (no cycle of port dependencies)", "flows")
    return tuple(order)


def _saturated(f: Flow) -> dict:
    """A saturated flow's traffic section, written back from its size law."""
    law = f.sizes
    if law.exponential:
        return {"saturated": True, "size": f"{law.sizes[0]!r} B", "sizes": "exponential"}
    return {"saturated": True, "sizes": [{"size": f"{s!r} B", "p": p} for s, p in zip(law.sizes, law.probs)]}


def _stand_in(flows: list[Flow]) -> dict:
    """A class's traffic section for the port's own checks and weights: the flows' total rate, their sizes."""
    rate = sum(f.offered for f in flows)
    laws = [f.sizes for f in flows]
    if any(law is None or law.exponential for law in laws):
        mean = sum(f.offered for f in flows) / sum(f.offered / (law.mean if law else 1500.0) for f, law in
                                                   zip(flows, laws))
        return {"rate": rate, "size": mean, "sizes": "exponential"}
    mix = SizeLaw.mixture(laws, [f.offered / law.mean for f, law in zip(flows, laws)])
    tot = sum(mix.probs)
    return {"rate": rate, "sizes": [{"size": s, "p": p / tot} for s, p in zip(mix.sizes, mix.probs)]}


@contextmanager
def bulk():
    """Pause the cyclic garbage collector while a large acyclic structure is built (thousands of ports and
    flows: its collections of the young objects cost about as much as the building itself); restored after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def network_of(scn: Scenario) -> Network:
    """The :class:`Network` a validated scenario describes (module docstring)."""
    with bulk():
        return _network_of(scn)


def _network_of(scn: Scenario) -> Network:
    specs, notes = _port_specs(scn)
    ends = {p: port_ends(p) for p in scn.ports}
    nodes = _nodes(scn, ends)
    out_edges: dict[str, list] = {}
    for p, (a, b_) in ends.items():
        out_edges.setdefault(a, []).append((b_, p))
    tables = {p: _class_table(s) for p, s in specs.items()}
    routes = [_route(scn, set(nodes), out_edges, f, k) for k, f in enumerate(scn.flows)]
    order = _feed_forward(scn, routes)
    flows, hops_of = _flows(scn, routes, tables)
    # the ports, each with the flows crossing it
    at: dict[str, list[tuple[int, int]]] = {p: [] for p in scn.ports}
    for k, hops in enumerate(hops_of):
        for h, (p, _, _) in enumerate(hops):
            at[p].append((k, h))
    ports: dict[str, Port] = {}
    for p in order:
        per_class: dict[str, list[tuple[int, int]]] = {}
        for k, h in at[p]:
            per_class.setdefault(hops_of[k][h][1], []).append((k, h))
        port = _port(scn, p, specs[p], per_class, flows, hops_of, ports)
        ports[p] = _with_streams(port, per_class, flows, hops_of, ports)
    final = []
    index = {p: {x.name: x.index for x in port.classes} for p, port in ports.items()}
    for k, f in enumerate(flows):
        hops = []
        for p, c, prec in hops_of[k]:
            hops.append(Hop(p, c, index[p][c], prec))
        offered = f.offered if not f.saturated else float(ports[hops[0].port].rate)
        final.append(replace(f, hops=tuple(hops), offered=offered))
    return Network(scn.name, nodes, ports, order, tuple(final), at, tuple(notes))


def _nodes(scn: Scenario, ends: dict) -> tuple:
    """The nodes: the scenario's list (every port's ends among them), else the ports' ends in order of appearance."""
    if scn.nodes is not None:
        nodes = tuple(scn.nodes)
        for p, (a, b_) in ends.items():
            for n in (a, b_):
                if n not in nodes:
                    raise _err(scn, f"port {p}: node {n!r} is not among the nodes", f"ports.{p}")
        return nodes
    seen = {}
    for a, b_ in ends.values():
        seen.setdefault(a, None)
        seen.setdefault(b_, None)
    return tuple(seen)


def _flows(scn: Scenario, routes: list, tables: dict) -> tuple[list[Flow], list[list[tuple[str, str, int]]]]:
    """Per flow its traffic at its first port (hops still empty), and the (port, class, precedence) at every hop:
    its class by name, or the class matching its DSCP at each port (else class-default)."""
    flows: list[Flow] = []
    hops_of: list[list[tuple[str, str, int]]] = []
    for k, (f, ports) in enumerate(zip(scn.flows, routes)):
        hops = []
        for p in ports:
            names, by_dscp = tables[p]
            if f.cls is not None:
                if f.cls not in names:
                    raise _err(scn, f"flow {f.name}: port {p} has no class '{f.cls}' (it has {', '.join(names)})",
                               f"flows.{k}.class")
                hops.append((p, f.cls, 0))
            else:
                code = dscp_names.canonical(f.dscp)
                c, i = by_dscp.get(code, (DEFAULT_CLASS, 0))
                hops.append((p, c, i))
        hops_of.append(hops)
        streams = streams_of(f.traffic)
        sat = f.traffic.is_saturated
        law = streams[0].sizes if len(streams) == 1 else SizeLaw.mixture([s.sizes for s in streams],
                                                                          [s.packet_rate for s in streams])
        offered = sum(s.count * s.rate for s in streams)
        flows.append(Flow(f.name, k, (), streams, law, sat, offered))
    return flows, hops_of


def _port(scn: Scenario, p: str, spec: dict, per_class: dict, flows: list[Flow], hops_of: list,
          ports: dict[str, Port]) -> Port:
    """Port ``p`` as a port scenario whose classes carry the flows crossing them (stand-in traffic, for its
    validation), errors naming the network's field."""
    raw = {"name": p, "system": "port", **{key: v for key, v in spec.items()}}
    classes = [dict(c) if isinstance(c, dict) else c for c in raw["classes"]]
    declared = {c.get("name") for c in classes if isinstance(c, dict)}
    if any(c not in declared for c in per_class):  # class-default carries flows: declare it
        classes.append({"name": DEFAULT_CLASS})
    for c in classes:
        if not isinstance(c, dict):
            continue
        c.pop("traffic", None)
        members = per_class.get(c.get("name"), [])
        if not members:
            continue
        sat_here = [k for k, h in members if h == 0 and flows[k].saturated]
        if sat_here:
            if len(members) > 1:
                others = ", ".join(flows[k].name for k, _ in members if k != sat_here[0])
                raise _err(scn, f"flow {flows[sat_here[0]].name} is saturated at its first port {p}, so it must be "
                           f"alone in class {c['name']} there (the class also carries {others})",
                           f"flows.{sat_here[0]}.traffic")
            c["traffic"] = _saturated(flows[sat_here[0]])
        else:
            fl = []
            for k, h in members:
                f = flows[k]
                if f.saturated:  # downstream of its first port: at most its first link's rate
                    f = replace(f, offered=float(ports[hops_of[k][0][0]].rate))
                fl.append(f)
            c["traffic"] = _stand_in(fl)
    raw["classes"] = classes
    try:
        pscn = PortScenario.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        loc = error_location(err.get("loc", ()))
        raise _err(scn, error_problem(err), f"ports.{p}" + (f".{loc}" if loc else "")) from None
    except ScenarioError as e:
        raise _err(scn, e.problem, f"ports.{p}" + (f".{e.field}" if e.field else "")) from None
    if pscn.shaper is not None:
        raise _err(scn, "a parent shaper is not modelled yet", f"ports.{p}.shaper")
    return port_of(pscn)


def _with_streams(port: Port, per_class: dict, flows: list[Flow], hops_of: list, ports: dict[str, Port]) -> Port:
    """The port with each class's streams: a flow's own streams at its first port, downstream a Poisson stream of
    its offered rate (a saturated flow: its first link's rate)."""
    new = []
    for c in port.classes:
        members = per_class.get(c.name, [])
        if not members or c.saturated:
            new.append(c)
            continue
        streams = []
        for k, h in members:
            f = flows[k]
            if h == 0:
                streams += list(f.streams)
            else:
                rate = f.offered if not f.saturated else float(ports[hops_of[k][0][0]].rate)
                streams.append(Stream("poisson", rate, f.sizes or SizeLaw((1500.0,), (1.0,))))
        new.append(replace(c, streams=tuple(streams)))
    return replace(port, classes=tuple(new))


def network(scn: Scenario) -> Network:
    """The scenario's :class:`Network`, built once per scenario object."""
    if scn._network is None:
        scn._network = network_of(scn)
    return scn._network
