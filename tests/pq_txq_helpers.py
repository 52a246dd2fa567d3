"""Helpers of the PQ + TxQ tests: parameters and scenarios built in place, a trace as arrays, a simulated mean."""

from __future__ import annotations

import numpy as np

from qosbound.scenario import build, load_raw
from qosbound.systems.pq_txq.params import Params
from qosbound.validation import pq_txq_sim as sim
from qosbound.validation.stats import t_interval
from tests.helpers import example

#: The simple IMIX best-effort mix (40, 576 and 1500 B in the ratio 7 : 4 : 1).
BE_IMIX = [{"size": "40 B", "p": 7 / 12}, {"size": "576 B", "p": 4 / 12}, {"size": "1500 B", "p": 1 / 12}]


def loaded_params(C=2e6, Q_t=5, unit=512.0, pq_cap=10, ef_size=128.0, ef_rate=300e3, arrivals="poisson",
                  be=(512.0, 1024.0, 1536.0), probs=(0.5, 0.3, 0.2), be_rate=None) -> Params:
    """Params built directly: a 2 Mbit/s port, Poisson EF of 128 B at 300 kbit/s, three BE sizes, and best
    effort saturated (``be_rate=None``) or Poisson at ``be_rate`` bit/s."""
    return Params(C=C, Q_t=Q_t, unit=unit, pq_cap=pq_cap, ef_size=ef_size, ef_rate=ef_rate,
                  lam=ef_rate / (8.0 * ef_size), arrivals=arrivals, be_sizes=np.array(be, dtype=float),
                  be_probs=np.array(probs, dtype=float), burst=pq_cap * ef_size, be_rate=be_rate)


def mean_delay(p, packets=40_000, replications=6, seed=7):
    """Simulated mean EF delay (s) and its standard error across replications."""
    rep = sim.run_replications(p, packets, replications, seed)
    per = rep.stats[:, sim.S_SUM] / rep.stats[:, sim.S_DELAYS]
    e = t_interval(per, 0.95)
    return e.mean, e.std_error, rep


def columns(table):
    """The trace as NumPy arrays: is_ef, size, arrival, departure (NaN when dropped), dropped."""
    cls = np.array(table["cls"].to_pylist())
    dep = table["departure"].to_numpy(zero_copy_only=False).astype(float)
    return (cls == "EF", table["size"].to_numpy(), table["arrival"].to_numpy(), dep,
            table["dropped"].to_numpy(zero_copy_only=False))


def be60_raw():
    """wan100_be60 (60 Mbit/s of IMIX best effort) with a short simulation."""
    raw = load_raw(example("wan100_be60.yaml"))
    raw["methods"]["simulated"] = {"packets": 20000, "replications": 4, "seed": 3}
    return raw


def aggregate_raw(ef, *, pq=10, be=None, rate="2 Mbps", units=5):
    """A pq_txq scenario (as read from YAML) with the EF traffic ``ef`` and saturated best effort."""
    return {"name": "agg", "system": "pq_txq", "link": {"rate": rate}, "txq": {"units": units, "unit_size": "512 B"},
            "pq": {"capacity": pq},
            "traffic": {"EF": ef, "BE": {"saturated": True, "sizes": be or BE_IMIX}},
            "methods": {"simulated": {"packets": 20000, "replications": 4, "seed": 1}}}


def ef_streams(*rates, arrivals="cbr", size="128 B", phases=None):
    """The EF ``streams`` form: one stream per rate (kbit/s), with the given phases."""
    out = [{"rate": f"{r} kbit/s", "size": size, "arrivals": arrivals} for r in rates]
    for s, ph in zip(out, phases or []):
        s["phase"] = ph
    return {"streams": out}


def aggregate_scenario(ef, **kw):
    """The built scenario of :func:`aggregate_raw`."""
    return build(aggregate_raw(ef, **kw), None)
