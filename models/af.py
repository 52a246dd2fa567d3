"""Glue for the AF models: constants for ``wred.prism``, ``wred_ewma.prism`` and ``marker.prism``, checked on Storm.

Every call goes through :mod:`qosbound.models.engine`. Delays come from the
steady-state rewards ``sys_c = E[a_c (n+1)]``: an admitted colour-c packet
meeting ``n`` packets waits ``(n+1)/mu`` (FIFO, exponential service), so its
mean delay is ``sys_c / (mu (1 - drop_c))``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import comb

import numpy as np

from qosbound.analytic.wred import Profile
from qosbound.errors import ModelError
from qosbound.models.budget import STORM_BYTES_PER_STATE, STORM_BYTES_PER_TRANSITION, Estimate
from qosbound.models.engine import MODELS_DIR, check

__all__ = ["WRED_MODEL", "WRED_PROPS", "EWMA_MODEL", "EWMA_PROPS", "MARKER_MODEL", "MARKER_PROPS",
           "ModelValues", "wred_constants", "check_wred", "check_wred_ewma", "check_marker", "estimate"]

WRED_MODEL = MODELS_DIR / "wred.prism"
WRED_PROPS = MODELS_DIR / "wred.props"
EWMA_MODEL = MODELS_DIR / "wred_ewma.prism"
EWMA_PROPS = MODELS_DIR / "wred_ewma.props"
MARKER_MODEL = MODELS_DIR / "marker.prism"
MARKER_PROPS = MODELS_DIR / "marker.props"

_MODE = {"wred": 0, "rio": 1, "nred": 2}
#: Updates a state of each model can take, at most (distinct successors, before Storm merges equal ones): the
#: three colours' arrivals and one departure per tracked colour in wred.prism (one departure for WRED, three
#: for RIO and n-RED); four outcomes of each colour's arrival and a departure in wred_ewma.prism.
SUCCESSORS = {"wred": 4, "rio": 6, "nred": 6, "ewma": 13}


def estimate(K: int, mode: str, ewma: bool = False) -> Estimate:
    """Upper bounds on the AF chain's states and transitions for a buffer of ``K`` packets, before building.

    States: ``n`` for WRED (K + 1), ``(n, n0)`` for RIO and ``(n, n0, n1)`` for n-RED with ``n0 + n1 <= n``
    (C(K + 2, 2) and C(K + 3, 3) integer points), ``(n, a)`` for the EWMA model ((K + 1)^2); transitions: at most
    :data:`SUCCESSORS` per state. The direct solve beside Storm's (the a-posteriori brackets) holds a sparse
    matrix of the same transitions and a few vectors."""
    K = int(K)
    if ewma:
        states, kind, what = (K + 1) ** 2, "ewma", "wred_ewma.prism"
    else:
        states = {"wred": K + 1, "rio": comb(K + 2, 2)}.get(mode, comb(K + 3, 3))
        kind, what = (mode if mode in SUCCESSORS else "nred"), "wred.prism"
    transitions = SUCCESSORS[kind] * states
    memory = STORM_BYTES_PER_STATE * states + 2 * STORM_BYTES_PER_TRANSITION * transitions
    return Estimate(f"the {mode} chain (models/{what}) of a {K}-packet buffer", states, transitions, memory)


@dataclass
class ModelValues:
    """Per-colour drop probabilities and delays, mean queue, model size and timing."""

    drop: np.ndarray
    delay: np.ndarray
    mean_queue: float
    states: int
    transitions: int
    seconds: float
    precision: str
    model: str
    misordered: float = 0.0
    extra: dict = field(default_factory=dict)
    # TRUE intervals (direct solve, a-posteriori brackets) keyed drop0..2, dropall, delay0..2, delay, queue,
    # throughput_pk (packets/s); empty in exact mode
    intervals: dict = field(default_factory=dict)


def wred_constants(lam, mu: float, K: int, prof: Profile, ewma: bool = False) -> dict:
    """The undefined constants of ``wred.prism`` (or ``wred_ewma.prism``) for one queue."""
    c = {"K": int(K), "lam0": float(lam[0]), "lam1": float(lam[1]), "lam2": float(lam[2]), "mu": float(mu)}
    for k in range(3):
        c[f"lo{k}"] = float(prof.min_th[k])
        c[f"hi{k}"] = float(prof.max_th[k])
        c[f"pd{k}"] = float(prof.P_d[k])
    if ewma:
        c["alpha"] = float(prof.alpha)
    else:
        c["mode"] = _MODE[prof.mode]
        c["gentle"] = int(bool(prof.gentle))
    return c


def _check_sane(model, props, constants, *, exact: bool, precision: float):
    """Check, and re-check in Storm's exact mode when the float engine returns a value that cannot be right.

    Long-run rewards here are probabilities (drops), queue lengths in [0, K] and E[a (n+1)] in [0, K+1];
    a non-finite or out-of-range float result (seen on heavily loaded instances) is replaced by the
    exact (rational) result of the same model and properties.
    """
    res = check(model, props, constants, exact=exact, precision=precision)
    if exact:
        return res
    K = float(constants["K"])
    bad = [k for k, v in res.values.items()
           if not np.isfinite(v) or v < -1e-9 or v > (1 + 1e-9 if k.startswith(("drop", "mis")) else K + 1 + 1e-9)]
    if bad:
        res = check(model, props, constants, exact=True, precision=precision)
        res.precision = f"exact (float engine returned out-of-range {', '.join(bad)})"
    return res


def _values(res, mu, model, lam) -> ModelValues:
    v = res.values
    drop = np.clip(np.array([v["drop0"], v["drop1"], v["drop2"]]), 0.0, 1.0)
    delay = np.zeros(3)
    for c in range(3):
        acc = 1.0 - drop[c]
        if "sys0" in v and acc > 1e-15 and lam[c] > 0:
            delay[c] = v[f"sys{c}"] / (mu * acc)
    return ModelValues(drop=drop, delay=delay, mean_queue=float(v["queue"]), states=res.states,
                       transitions=res.transitions, seconds=res.seconds, precision=res.precision, model=model,
                       misordered=float(v.get("misordered_reachable", 0.0)), extra=dict(v),
                       intervals=_intervals(res, mu, lam))


def _intervals(res, mu: float, lam) -> dict:
    """Intervals of the derived metrics from the brackets of the checked properties (empty if any is missing)."""
    b = res.intervals
    if not all(k in b for k in ("drop0", "drop1", "drop2", "queue")):
        return {}
    lam = np.asarray(lam, dtype=float)
    dlo = np.clip([b[f"drop{c}"][0] for c in range(3)], 0.0, 1.0)
    dhi = np.clip([b[f"drop{c}"][1] for c in range(3)], 0.0, 1.0)
    out = {f"drop{c}": (float(dlo[c]), float(dhi[c])) for c in range(3)}
    out["queue"] = tuple(b["queue"])
    tot = float(lam.sum())
    if tot > 0:
        out["dropall"] = (float(lam @ dlo / tot), float(lam @ dhi / tot))
    out["throughput_pk"] = (float(lam @ (1 - dhi)), float(lam @ (1 - dlo)))
    if all(f"sys{c}" in b for c in range(3)):
        slo = np.array([b[f"sys{c}"][0] for c in range(3)])
        shi = np.array([b[f"sys{c}"][1] for c in range(3)])
        for c in range(3):
            if lam[c] > 0 and 1 - dhi[c] > 0:
                out[f"delay{c}"] = (float(max(slo[c], 0.0) / (mu * (1 - dlo[c]))), float(shi[c] / (mu * (1 - dhi[c]))))
        acc_lo, acc_hi = float(lam @ (1 - dhi)), float(lam @ (1 - dlo))
        if acc_lo > 0:
            out["delay"] = (float(lam @ np.maximum(slo, 0.0) / mu / acc_hi), float(lam @ shi / mu / acc_lo))
    return out


def check_wred(lam, mu: float, K: int, prof: Profile, *, precision: float = 1e-10, exact: bool = False,
               ordering: bool = True) -> ModelValues:
    """Steady state of ``wred.prism`` (instantaneous average) on Storm."""
    props = [("drop0", 'R{"drop0"}=? [ S ]'), ("drop1", 'R{"drop1"}=? [ S ]'), ("drop2", 'R{"drop2"}=? [ S ]'),
             ("queue", 'R{"queue"}=? [ S ]'), ("sys0", 'R{"sys0"}=? [ S ]'), ("sys1", 'R{"sys1"}=? [ S ]'),
             ("sys2", 'R{"sys2"}=? [ S ]')]
    if ordering:
        props.append(("misordered_reachable", 'P=? [ F "misordered" ]'))
    res = _check_sane(WRED_MODEL, props, wred_constants(lam, mu, K, prof), exact=exact, precision=precision)
    return _values(res, mu, "models/wred.prism", lam)


def check_wred_ewma(lam, mu: float, K: int, prof: Profile, *, precision: float = 1e-10,
                    exact: bool = False) -> ModelValues:
    """Steady state of ``wred_ewma.prism`` (discretised EWMA average, WRED only) on Storm."""
    if prof.mode != "wred":
        raise ModelError("the discretised-EWMA model covers WRED only")
    props = [(n, f'R{{"{n}"}}=? [ S ]') for n in ("drop0", "drop1", "drop2", "queue", "avg")]
    res = _check_sane(EWMA_MODEL, props, wred_constants(lam, mu, K, prof, ewma=True), exact=exact,
                      precision=precision)
    return _values(res, mu, "models/wred_ewma.prism", lam)


def check_marker(p: float, ip: int, ic: int, pbs: int, cbs: int, g: int):
    """(green, yellow, red) fractions of packets from ``marker.prism`` and the check result.

    Checked in Storm's exact mode: the float engine's long-run solver was seen to return wrong long-run
    values on this DTMC (its arrival fraction differed from ``p``), while exact mode returns ``p``.
    """
    res = check(MARKER_MODEL, MARKER_PROPS, {"p": float(p), "ip": int(ip), "ic": int(ic), "pbs": int(pbs),
                                              "cbs": int(cbs), "g": int(g)}, exact=True)
    v = res.values
    a = v["arrival_slots"]
    if not abs(a - p) <= 1e-9:
        raise ModelError(f"marker model: long-run arrival fraction {a:.12g} differs from p = {p:.12g}")
    return np.array([v["green_slots"], v["yellow_slots"], v["red_slots"]]) / a, res
