"""AF classes reduced to the queue models' inputs: each class's WRED-family profile, its colour fractions (the fixed
mix or the marker's long run) and its CBWFQ service rate."""

from __future__ import annotations

import numpy as np

from qosbound.analytic.cbwfq import allocate, service_rates
from qosbound.analytic.markers import MarkerFractions, marker_fractions
from qosbound.analytic.wred import Profile
from qosbound.errors import ScenarioError
from qosbound.systems.af.inputs import ClassInput
from qosbound.systems.af.schema import AFClass, Scenario, Traffic

__all__ = ["profile", "colour_fractions", "colour_fraction_error", "marking", "class_inputs"]


def profile(c: AFClass, name: str):
    th = [c.dropper.thresholds[f"{name}{k}"] for k in (1, 2, 3)]
    try:
        return Profile(min_th=tuple(t.min_th for t in th), max_th=tuple(t.max_th for t in th),
                       P_d=tuple(t.P_d for t in th), alpha=c.dropper.weight, mode=c.dropper.mode,
                       gentle=c.dropper.gentle)
    except ScenarioError as e:
        raise e.located(prefix=f"classes.{name}") from None


def colour_fractions(t: Traffic) -> tuple[np.ndarray, str]:
    """Packet colour fractions of a class's arrivals (the fixed mix, or the marker's long run) and their source."""
    f = marking(t)
    return np.asarray(f.packets, dtype=float), f.source


def colour_fraction_error(t: Traffic) -> np.ndarray:
    """Estimated error of :func:`colour_fractions` (zeros where they are exact or no estimate is known)."""
    return np.asarray(marking(t).error, dtype=float)


def marking(t: Traffic):
    """Colour fractions by packets and by bytes (:class:`qosbound.analytic.markers.MarkerFractions`)."""
    if t.marker is None or t.rate <= 0:
        mix = (1.0, 0.0, 0.0) if (t.marker is not None or t.mix is None) else tuple(float(x) for x in t.mix)
        return MarkerFractions(mix, mix, (True,) * 3, (0.0,) * 3, "",
                               "fixed mix" if t.marker is None else "no traffic")
    m = t.marker
    second_rate = m.pir if m.kind == "trtcm" else None
    second_depth = m.pbs if m.kind == "trtcm" else (m.ebs if m.kind == "srtcm" else None)
    f = marker_fractions(m.kind, t.arrivals, t.sizes, float(t.rate), float(t.size), float(m.cir), float(m.cbs),
                         second_rate, second_depth, bool(m.aware), tuple(float(x) for x in m.precolour))
    src = {"trtcm": "RFC 2698", "srtcm": "RFC 2697", "two-colour": "token bucket (Jourjon et al. 2008)"}[m.kind]
    return type(f)(f.packets, f.bytes, f.exact, f.error, f.neglects, f"{src}: {f.source}")


def class_inputs(scn: Scenario) -> list[ClassInput]:
    names = list(scn.classes)
    backlogged = [1.0 if (n in scn.traffic and scn.traffic[n].rate > 0) else 0.0 for n in names]
    out = []
    if sum(backlogged) == 0:
        return out
    weights = [scn.classes[n].bandwidth for n in names]
    if scn.service == "guaranteed":
        shares = allocate(scn.link.rate, weights, backlogged)
    else:
        shares = service_rates(scn.link.rate, weights,
                               [scn.traffic[n].rate if n in scn.traffic else 0.0 for n in names])
    for i, n in enumerate(names):
        if not backlogged[i]:
            continue
        t = scn.traffic[n]
        mk = marking(t)
        f = np.asarray(mk.packets, dtype=float)
        lam = f * t.rate / (8.0 * t.size)
        mu = shares[i] / (8.0 * t.size)
        if mu <= 0:
            raise ScenarioError(f"class {n} has traffic but a CBWFQ share of zero", field=f"classes.{n}.bandwidth")
        out.append(ClassInput(n, lam, mu, float(shares[i]), scn.classes[n].buffer, profile(scn.classes[n], n),
                              f, t.size, np.asarray(mk.bytes, dtype=float), mk.mean_sizes(t.size), mk))
    return out
