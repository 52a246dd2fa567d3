"""``pq_txq`` and ``af`` scenarios written as ports (``qosbound convert``).

* ``pq_txq`` is a port with one priority class -- named ``EF``, DSCP EF, its PQ capacity the queue limit --
  over ``class-default`` carrying the best effort: saturated, or, with a BE load, Poisson packets of the size
  mix in a queue of :data:`UNBOUNDED_QUEUE` packets (``pq_txq``'s BE queue is unbounded; at a stable load the
  difference is beyond any number printed). The tx-ring, metrics, methods and SLOs carry over unchanged; the
  metric names are the same (``EF.delay.p99``).
* ``af`` becomes one port per CBWFQ case (``cases``; one port when there are none): the classes are weighted
  (DRR) classes with no ring, their bandwidths the weights, their buffers the queue limits (counting the packet
  on the wire, as ``af`` does), their droppers, markers and traffic as written; in a case's port only the
  case's classes carry traffic, so its ``X.rate`` is ``af``'s ``X.rate.<case>``. ``af``'s ``X.drop`` (all
  precedences) is the port's ``X.loss``; SLOs on metrics a port does not report (``X.queue.mean``,
  ``X.delay.Xk``, ``X.colour...``) are left out with a note.

What changes, and why the numbers stay the same: the closed forms and the models of each class are the same
functions with the same inputs (:mod:`qosbound.systems.port.closed_form`, :mod:`.model_checked`); the
simulators differ only in ``af``'s weighted scheduler -- ``af`` simulates WFQ (GPS virtual time), a port DRR --
which changes the simulated delays of a class that shares the link with others (the long-run rates are the
same), and ``af``'s colour-aware marker (one bucket per pre-colour there, one per class in a port).
"""

from __future__ import annotations

import copy

from qosbound.errors import ScenarioError
from qosbound.scenario import build, load
from qosbound import dscp
from qosbound.units import parse_quantity

__all__ = ["UNBOUNDED_QUEUE", "convert", "from_pq_txq", "from_af"]

#: Queue limit standing for pq_txq's unbounded BE queue, packets.
UNBOUNDED_QUEUE = 1_000_000

_PQ_TXQ_MODEL = ("enabled", "precision", "engine", "exact", "granule", "max_granules", "max_states")
_SIM = ("enabled", "packets", "replications", "seed", "warmup", "confidence", "max_total_packets")


def _pick(section: dict | None, keys) -> dict:
    return {k: v for k, v in (section or {}).items() if k in keys}


def _common(raw: dict, name: str) -> dict:
    out = {"name": name, "system": "port"}
    for k in ("description", "source"):
        if raw.get(k):
            out[k] = raw[k]
    return out


def from_pq_txq(raw: dict) -> tuple[list[dict], list[str]]:
    """A pq_txq scenario (raw mapping) as one port; (ports, notes)."""
    notes: list[str] = []
    tr = raw.get("traffic") or {}
    ef = copy.deepcopy(tr.get("EF") or {})
    be = copy.deepcopy(tr.get("BE") or {})
    if ef.get("arrivals") == "bernoulli":
        raise ScenarioError("Bernoulli (slotted) EF arrivals have no port counterpart", field="traffic.EF.arrivals")
    if "burst" in ef:
        raise ScenarioError("an asserted EF token bucket ('burst') has no port counterpart: give a policer",
                            field="traffic.EF.burst")
    pq = raw.get("pq") or {}
    voice = {"name": "EF", "dscp": ["EF"], "priority": 1, "queue_limit": pq.get("capacity", 10), "traffic": ef}
    default = {"name": "class-default"}
    if be.get("rate") is not None:
        be.pop("saturated", None)
        be["arrivals"] = "poisson"
        default["queue_limit"] = UNBOUNDED_QUEUE
        notes.append(f"class-default's queue limit {UNBOUNDED_QUEUE} stands for pq_txq's unbounded BE queue")
    else:
        be["saturated"] = True
    default["traffic"] = be
    txq = dict(raw.get("txq") or {})
    txq.setdefault("unit_size", 512.0)  # pq_txq's default unit
    out = _common(raw, raw.get("name", "pq_txq"))
    out.update(link=copy.deepcopy(raw.get("link")), txq=txq, classes=[voice, default])
    metrics = raw.get("metrics") or {}
    out["metrics"] = {"ccdf_at": metrics.get("ccdf_at", ["5 ms", "10 ms", "15 ms"]),
                      "quantiles": metrics.get("quantiles", [0.99])}
    methods = raw.get("methods") or {}
    m: dict = {}
    if "closed-form" in methods:
        m["closed-form"] = _pick(methods["closed-form"], ("enabled",))
    if "model-checked" in methods:
        m["model-checked"] = _pick(methods["model-checked"], _PQ_TXQ_MODEL)
    if "simulated" in methods:
        m["simulated"] = _pick(methods["simulated"], _SIM)
    if m:
        out["methods"] = m
    if raw.get("slos"):
        out["slos"] = copy.deepcopy(raw["slos"])
    return [out], notes


def _af_dscps(name: str) -> list[str]:
    try:
        names = [dscp.canonical(f"{name}{k}") for k in (1, 2, 3)]
    except ValueError:
        raise ScenarioError(f"af class {name!r}: a port names drop precedences by DSCP, and {name}1..{name}3 are not "
                            "DSCPs (af classes AF1..AF4 convert)", field=f"classes.{name}") from None
    return names


def _af_class(name: str, c: dict, traffic: dict | None, fits: bool, total: float) -> dict:
    out = {"name": name, "dscp": _af_dscps(name)}
    bw = c.get("bandwidth")
    out["bandwidth"] = bw if fits else f"{100.0 * _rate(bw) / total!r} %"
    out["queue_limit"] = c.get("buffer", 64)
    d = copy.deepcopy(c.get("dropper") or {})
    d.setdefault("mode", "wred")
    out["dropper"] = d
    if traffic is not None:
        t = copy.deepcopy(traffic)
        mk = t.pop("marker", None)
        if mk is not None:
            pre = mk.pop("precolour", None)
            if mk.get("aware") and pre is not None:
                t["mix"] = pre
            out["marker"] = mk
        t.setdefault("sizes", "exponential")
        out["traffic"] = t
    return out


def _rate(v) -> float:
    return parse_quantity(v, "rate")


def _size(v) -> float:
    return parse_quantity(v, "size")


_AF_NO_PORT = ("queue.mean", "colour")


def _af_slo(slo: dict, case: str | None, cases: dict) -> tuple[dict | None, str]:
    metric = slo.get("metric", "")
    parts = metric.split(".")
    if len(parts) >= 2 and parts[1] == "rate" and len(parts) == 3:
        if parts[2] != case:
            return None, ""
        return dict(slo, metric=f"{parts[0]}.rate"), ""
    if len(parts) == 2 and parts[1] == "drop":
        return dict(slo, metric=f"{parts[0]}.loss"), ""
    if len(parts) >= 2 and (".".join(parts[1:]).startswith(_AF_NO_PORT) or
                            (parts[1] == "delay" and len(parts) == 3 and parts[2] != "mean")):
        return None, f"SLO on {metric} left out: a port does not report it"
    return copy.deepcopy(slo), ""


def from_af(raw: dict) -> tuple[list[dict], list[str]]:
    """An af scenario (raw mapping) as one port per CBWFQ case; (ports, notes)."""
    notes: list[str] = []
    if raw.get("service", "max-min") != "max-min":
        raise ScenarioError("service: guaranteed (each class its own server) has no port counterpart: a port's "
                            "scheduler is work-conserving DRR", field="service")
    classes = raw.get("classes") or {}
    traffic = raw.get("traffic") or {}
    link = copy.deepcopy(raw.get("link"))
    C = _rate(link["rate"])
    total = sum(_rate(c.get("bandwidth", 0)) for c in classes.values())
    fits = total <= C * (1 + 1e-12)
    cases = raw.get("cases") or {}
    if raw.get("ordering"):
        notes.append("af's drop-precedence load sweep (ordering) is not part of a port")
    ports = []
    sizes = [_size(t.get("size", 1000.0)) for t in traffic.values()]
    quantum = min(sizes) if sizes else 1500.0
    notes.append(f"DRR quantum {quantum:g} B (the smallest mean packet size) for the smallest bandwidth, so that a "
                 "round is short and DRR's fairness is close to af's WFQ")
    for case, members in (cases.items() if cases else [(None, list(classes))]):
        name = raw.get("name", "af") + (f"-{case}" if case else "")
        out = _common(raw, name)
        out["link"] = link
        out["scheduler"] = {"quantum": quantum}
        out["classes"] = [_af_class(n, c, traffic.get(n) if n in members else None, fits, total)
                          for n, c in classes.items()]
        methods = raw.get("methods") or {}
        m: dict = {}
        if "closed-form" in methods:
            m["closed-form"] = _pick(methods["closed-form"], ("enabled", "approximation"))
        if "model-checked" in methods:
            m["model-checked"] = _pick(methods["model-checked"], ("enabled", "precision", "exact", "average"))
        if "simulated" in methods:
            m["simulated"] = _pick(methods["simulated"], _SIM)
        if m:
            out["methods"] = m
        slos = []
        for s in raw.get("slos") or []:
            new, note = _af_slo(s, case, cases)
            if new is not None:
                slos.append(new)
            elif note and note not in notes:
                notes.append(note)
        if slos:
            out["slos"] = slos
        ports.append(out)
    if not fits:
        notes.append(f"the bandwidths add up to more than the link ({total:.6g} bit/s): written as percentages of "
                     "the link, in the same proportions")
    return ports, notes


def convert(path) -> tuple[list[dict], list[str]]:
    """The ports of a pq_txq or af scenario file, each checked by the port schema; (raw port scenarios,
    notes). The file is loaded (and refused, naming the field) by its own system first."""
    scn = load(path)
    raw = scn.raw
    try:
        if scn.system == "pq_txq":
            ports, notes = from_pq_txq(raw)
        elif scn.system == "af":
            ports, notes = from_af(raw)
        else:
            raise ScenarioError(f"only pq_txq and af scenarios convert to ports, not {scn.system!r}", field="system")
        for p in ports:
            build(p)
    except ScenarioError as e:
        raise e.located(file=str(path)) from None
    return ports, notes
