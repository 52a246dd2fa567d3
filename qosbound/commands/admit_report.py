"""What ``admit`` reports: the search as understood, the answer as text and as its JSON document, and the
bracket found so far when a signal stops the search. The single-file command (:mod:`.admit`) and the batch
form (:mod:`.batch_admit`) print the same lines and documents."""

from __future__ import annotations

import math

from qosbound.admit import bracket_text
from qosbound.errors import ScenarioError
from qosbound.incomplete import interrupted_info, signal_of
from qosbound.parameter_path import get_path
from qosbound.scenario import parameter_kind
from qosbound.units import SI_UNIT, format_quantity, parse_quantity

__all__ = ["admit_document", "admit_lines", "admit_search", "interrupted_admit_document", "interrupted_admit_line"]


def admit_document(name: str, res, inputs=None, search: dict | None = None) -> dict:
    """``admit --json`` for one scenario's answer (also a row of the batch form's document); ``inputs`` (the
    inputs as understood) and ``search`` (the parameter's kind, current value and range, SI) when known."""
    doc = {"scenario": name, "parameter": res.parameter, "direction": res.direction, "value": res.value,
           "unit": res.unit, "method": res.method, "decided_by": res.decided_by, "binding_slo": res.binding,
           "estimate": res.estimate, "bound_value": res.bound_value, "bound_proofs": res.bound_proofs,
           "infeasible": res.infeasible, "evaluations": res.evaluations,
           "bound_evaluations": res.bound_evaluations, "message": res.message, "notes": res.notes,
           "history": [{"value": x, "margin": (m if math.isfinite(m) else None)} for x, m in res.history],
           "complete": True}
    if inputs is not None:
        doc["inputs"] = inputs.to_json()
    if search is not None:
        doc["search"] = search
    return doc


def admit_search(scn, parameter: str, lo, hi) -> dict:
    """The admission search as understood: the parameter, its kind (from the schema), its current value and
    the range given by --min/--max, in SI units."""
    kind = parameter_kind(scn.raw, parameter)
    current = get_path(scn.raw, parameter)
    try:
        now = parse_quantity(current, kind) if kind not in (None, "count") else float(current)
    except (ScenarioError, TypeError, ValueError):
        now = None
    return {"parameter": parameter, "kind": kind, "unit": SI_UNIT.get(kind or "", "1"), "current": now,
            "min": lo, "max": hi}


def admit_lines(name: str, res, search: dict | None = None) -> list[str]:
    """The text answer of ``admit``: what was searched, then the value and what stops it -- the binding SLO, or
    the end of the range where every SLO still holds (then no SLO is called binding), or where the scenario
    stops being valid --, what decided it (bounds, or the search method with the binding SLO's estimate and
    interval at the answer), the bracket, and the value up to which bounds prove every SLO."""
    def q(x):
        return format_quantity(x, res.unit, digits=6) if res.unit != "1" else f"{x:.6g}"

    out = []
    if search is not None:
        rng = "".join(t for t in (f" from {q(search['min'])} (--min)" if search["min"] is not None else "",
                                  f" up to {q(search['max'])} (--max)" if search["max"] is not None else ""))
        now = f", now {q(search['current'])}" if search["current"] is not None else ""
        out.append(f"search: {res.parameter} ({search['kind'] or 'a parameter'}{now}), the {res.direction} value "
                   f"with every SLO holding{rng}, by {res.method}")
    if res.value is None:
        out.append(f"{name}: no value of {res.parameter} meets every SLO ({res.message}; method {res.method})")
        return out
    stop = f"binding SLO: {res.binding}" if res.binding else "no SLO binds"
    out.append(f"{name}: {res.direction} {res.parameter} with every SLO holding = {q(res.value)} (method "
               f"{res.method}, {stop}, {res.evaluations} evaluations){'; ' + res.message if res.message else ''}")
    e = res.estimate
    if e:
        val = format_quantity(e["value"], e["unit"])
        iv = (f" [{format_quantity(e['low'], e['unit'])}, {format_quantity(e['high'], e['unit'])}] "
              f"({e['kind']})" if "low" in e else f" ({e['kind']})")
        reps = (f", {e['replications']} replications" + (f" of {e['packets_per_replication']:,} packets"
                                                            if e.get("packets_per_replication") else "")
                if e.get("replications") else "")
        which = e["slo"] if res.binding else f"the tightest SLO, {e['slo']}"
        by = "proved by bounds" if res.decided_by == "bound" else f"decided by {res.decided_by or res.method}"
        out.append(f"{name}: {by}: at the answer {which}: {e['method']} {e['metric']} = {val}{iv}{reps}")
    if res.infeasible is not None:
        out.append(f"{name}: {bracket_text(res.direction, res.value, res.infeasible, res.unit)}")
    if res.bound_value is not None:
        proofs = "; ".join(f"{k} by {v}" for k, v in res.bound_proofs.items())
        out.append(f"{name}: every SLO is proved by bounds at {res.parameter} = {q(res.bound_value)} ({proofs})")
    return out


def interrupted_admit_document(name: str, part: dict, error) -> dict:
    """``admit --json`` when a signal stopped the search: the bracket found so far, marked incomplete."""
    part = part or {}
    return {"scenario": name, "parameter": part.get("parameter"), "direction": part.get("direction"),
            "value": None, "unit": part.get("unit"), "method": part.get("method"),
            "bracket": {"feasible": part.get("feasible"), "infeasible": part.get("infeasible")},
            "bound_value": part.get("bound_value"), "evaluations": part.get("evaluations", 0),
            "history": [{"value": x, "margin": (m if math.isfinite(m) else None)}
                        for x, m in part.get("history", [])],
            "notes": part.get("notes", []), "complete": False, "interrupted": interrupted_info(error)}


def interrupted_admit_line(name: str, part: dict, error) -> str:
    """The text form: '... stopped by SIGTERM after 7 evaluations: feasible at >= 3200, infeasible at <= 12800'."""
    part = part or {}
    if not part.get("parameter"):
        return f"{name}: admission search stopped by {signal_of(error)} before any value was judged"
    return (f"{name}: admission search over {part['parameter']} stopped by {signal_of(error)} after "
            f"{part.get('evaluations', 0)} evaluations: "
            f"{bracket_text(part['direction'], part.get('feasible'), part.get('infeasible'), part['unit'])}")
