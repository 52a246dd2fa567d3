"""AF metric names and kinds, the inputs as understood, and what the queue models share: the per-class input record
(filled by :mod:`.queue_inputs`), what each model neglects, and the per-class result builder."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qosbound.errors import ScenarioError
from qosbound.results import Result
from qosbound.systems.af.schema import Scenario
from qosbound.understood import Echo, Inputs
from qosbound.units import Kind
from qosbound.verdicts import default_slo_limit

__all__ = ["ClassInput", "metric_names", "metric_kind", "slo_limit", "neglects", "approximation", "queue_results",
           "understood_inputs"]


@dataclass(frozen=True)
class ClassInput:
    """One class reduced to SI numbers for the queue models.

    ``lam`` holds per-colour *packet* rates (the droppers act per packet, so the queue models need packet
    fractions); ``colour_sizes`` the mean size of each colour's packets (a token bucket passes small
    packets more readily, so with variable sizes green packets are smaller than red ones), used for the
    delivered throughput in bytes.
    """

    name: str
    lam: np.ndarray  # (3,) packets/s per colour
    mu: float  # packets/s at the CBWFQ share
    share: float  # bit/s
    K: int
    profile: object  # qosbound.analytic.wred.Profile
    colour_fractions: np.ndarray  # (3,) packet fractions
    size: float
    byte_fractions: np.ndarray = None  # (3,) byte fractions
    colour_sizes: np.ndarray = None  # (3,) mean bytes per packet of each colour
    marking: object = None  # qosbound.analytic.markers.MarkerFractions


def metric_names(scn: Scenario) -> list[str]:
    out = []
    for n in scn.classes:
        out += [f"{n}.rate"] + [f"{n}.rate.{c}" for c in scn.cases]
        if n in scn.traffic and scn.traffic[n].rate > 0:
            out += [f"{n}.drop.{n}{k}" for k in (1, 2, 3)] + [f"{n}.drop", f"{n}.delay.mean"]
            out += [f"{n}.delay.{n}{k}" for k in (1, 2, 3)] + [f"{n}.queue.mean", f"{n}.throughput"]
            out += [f"{n}.colour.{n}{k}" for k in (1, 2, 3)] + [f"{n}.colour.{n}{k}.bytes" for k in (1, 2, 3)]
    return out


def metric_kind(metric: str) -> Kind:
    parts = metric.split(".")
    if len(parts) >= 2:
        q = parts[1]
        if q == "drop" or q == "colour":
            return "probability"
        if q == "delay":
            return "time"
        if q == "queue":
            return "count"
        if q in ("rate", "throughput"):
            return "rate"
    raise ScenarioError(f"unknown metric '{metric}' for an af scenario; known: X.drop.Xk, X.drop, X.delay.mean, "
                        "X.delay.Xk, X.queue.mean, X.rate, X.throughput, X.colour.Xk (packet fraction), "
                        "X.colour.Xk.bytes (byte fraction)", field="metric")


def slo_limit(scn: Scenario, slo) -> float:
    return default_slo_limit(metric_kind, slo)


def understood_inputs(scn: Scenario) -> Inputs:
    """The AF port as the methods see it: the link, each class's CBWFQ bandwidth and queue, its offered rate
    and share of the link, its packet size and colouring (mix or marker rates and bursts)."""
    e = Echo(scn, scn.link.rate).quantity("link.rate", scn.link.rate, "rate")
    e.text("service", scn.service)
    for n, c in scn.classes.items():
        e.quantity(f"classes.{n}.bandwidth", c.bandwidth, "rate", share=True, note="CBWFQ weight")
        e.quantity(f"classes.{n}.buffer", c.buffer, "count", noun="packets")
    for n, t in scn.traffic.items():
        e.quantity(f"traffic.{n}.rate", t.rate, "rate", share=True,
                   note=f"{'Poisson' if t.arrivals == 'poisson' else 'CBR'} arrivals")
        e.quantity(f"traffic.{n}.size", t.size, "size", note=f"mean; {t.sizes} sizes")
        if t.marker is not None:
            m = t.marker
            e.text(f"traffic.{n}.marker", m.kind, note="colour-aware" if m.aware else "colour-blind")
            for q, v, kind in (("cir", m.cir, "rate"), ("cbs", m.cbs, "size"), ("pir", m.pir, "rate"),
                               ("pbs", m.pbs, "size"), ("ebs", m.ebs, "size")):
                if v is not None:
                    e.quantity(f"traffic.{n}.marker.{q}", v, kind, share=kind == "rate")
        else:
            mix = t.mix if t.mix is not None else [1.0, 0.0, 0.0]
            e.text(f"traffic.{n}.mix", ", ".join(f"{x:.6g}" for x in mix),
                   note="green, yellow, red" + ("" if t.mix is not None else "; default: all green"))
    return e.done()


def approximation(scn: Scenario, ci: ClassInput) -> str:
    a = scn.methods.closed_form.approximation
    if a != "auto":
        return a
    return "fixed-average" if ci.profile.alpha <= 1.0 / 64 else "instantaneous"


def queue_results(ci: ClassInput, drop, delay, L, method, interval_fn, prov) -> list[Result]:
    n = ci.name
    out = []
    lam = ci.lam
    tot = lam.sum()
    for k in range(3):
        out.append(Result(f"{n}.drop.{n}{k + 1}", method, float(drop[k]), "1", interval_fn(f"drop{k}", drop[k]),
                          prov))
    dall = float(lam @ drop / tot) if tot > 0 else 0.0
    out.append(Result(f"{n}.drop", method, dall, "1", interval_fn("dropall", dall), prov))
    acc = lam * (1 - drop)
    thr_pk = float(acc.sum())
    mean_delay = float(acc @ delay / thr_pk) if thr_pk > 0 else 0.0
    out.append(Result(f"{n}.delay.mean", method, mean_delay, "s", interval_fn("delay", mean_delay), prov))
    for k in range(3):
        if lam[k] > 0:
            out.append(Result(f"{n}.delay.{n}{k + 1}", method, float(delay[k]), "s",
                              interval_fn(f"delay{k}", delay[k]), prov))
    out.append(Result(f"{n}.queue.mean", method, float(L), "1", interval_fn("queue", L), prov))
    # Delivered bytes: each colour's admitted packets at that colour's mean size.
    sizes = ci.colour_sizes if ci.colour_sizes is not None else np.full(3, ci.size)
    thr = float(8.0 * (acc @ sizes))
    out.append(Result(f"{n}.throughput", method, thr, "bit/s", interval_fn("throughput", thr), prov))
    return out


def neglects(scn: Scenario, ci: ClassInput, approximation: str | None) -> list[str]:
    """What the queue model of class ``ci`` leaves out of the scenario's semantics (empty: it is exact).

    ``approximation`` is the closed form's treatment of the EWMA average (``instantaneous`` or
    ``fixed-average``); the model-checked chain is ``instantaneous`` unless it models the EWMA
    (``None`` then: no averaging term). The simulator runs the scenario's semantics themselves.
    """
    t = scn.traffic[ci.name]
    out = []
    if approximation == "fixed-average":
        out.append("EWMA averaging dynamics (the average held fixed at its stationary mean)")
    elif approximation == "instantaneous" and ci.profile.alpha < 1.0:
        out.append(f"EWMA averaging (alpha = {ci.profile.alpha:.3g} taken as 1: the average is the queue)")
    if ci.profile.mode != "wred":
        out.append("FIFO order of colours in the queue (the departing colour drawn in proportion to the "
                   "queue's composition)")
    if t.arrivals != "poisson" or t.sizes != "exponential":
        out.append(f"{t.arrivals} arrivals with {t.sizes} sizes (the model takes Poisson input with exponential "
                   "sizes)")
    if t.marker is not None:
        out.append("correlation of the marker's colours with arrival times and packet sizes (colours taken as "
                   "independent Poisson streams, every colour served at the class's mean size)")
    active = [n for n, tr in scn.traffic.items() if tr.rate > 0]
    if scn.service == "max-min" and len(active) > 1:
        out.append("the other classes' burstiness (the class is served at its max-min CBWFQ rate as if the others "
                   "sent steadily at their mean rates)")
    return out
