"""A path of several hops around the PQ + TxQ port: FIFO hops before it and after it, fixed per-hop latencies.

Built to test explanations of the end-to-end EF delay Ferrari, Pau & Raffaelli (2001, Table IV) measured over
their test bed (a C7200 whose 2 Mbit/s ATM output port runs priority queueing with a transmission queue, then
two C7500 routers forwarding FIFO; EF and best effort share the whole path), which lies well above the
single-port model. The port itself is the single-port simulator, unchanged: one replication of the path is one
per-packet trace of :func:`qosbound.validation.pq_txq_sim.simulate_trace` (EF and BE packets with their
arrival at the port and the departure of their last bit), pushed through the hops below.

Semantics
---------
* A hop (:class:`Hop`) is a store-and-forward FIFO output link of ``rate`` bit/s: a packet is received whole
  (its last bit arrives), waits for the packets ahead of it, and is sent in ``8 * size / rate`` seconds; then
  its last bit reaches the next node ``latency`` seconds later (propagation and processing, fixed). Queues
  are unbounded (no loss on a FIFO hop).
* Hops *after* the port (``post``) carry every packet the port sends, EF and BE, in the order they leave it
  (the test bed's "both EF and BE traffic share the same data path"). A packet's arrival at the first
  post hop is its departure from the port plus ``port_latency``.
* Hops *before* the port (``pre``) carry the EF stream and a best-effort stream of their own
  (:class:`PreTraffic`: Poisson batches of ``burst`` packets arriving together, sizes drawn from the port's
  BE mix, ``rate`` bit/s in all). The port's best effort stays saturated, so what a pre-hop sends does not
  change the port's BE supply. Approximation (stated): the port's EF arrivals are the CBR/Poisson times of
  the single-port simulator, and a packet's pre-hop delay is computed for the source emitting it at that
  time; the jitter a pre-hop adds is not fed back into the port (it is small against the EF period, and the
  pre-hop's state is independent of the port's).
* EF end-to-end delay = pre-hop delay (incl. the EF packet's own serialisation on each pre-hop and the
  latencies) + port delay (arrival to last bit out, as in the single-port simulator) + ``port_latency`` +
  post-hop delay (incl. serialisation and latencies), measured to the last bit at the receiver.

Consequence used as a check: the saturated port sends back to back, so at a post hop of the port's rate a
packet leaves ``M / rate`` after it left the port, ``M`` the largest packet sent before it in the port's busy
period (Lindley by induction): behind K-unit best effort, each such hop holds every EF packet K unit times.

With no hops and no latency, the path's EF delays are exactly the single-port simulator's
(:func:`path_trace` of ``simulate_trace``'s seed); tests/validation/test_path_sim.py checks that and the FIFO algebra.

Statistics: :func:`run_path` runs independent replications (own seed each, so a CBR stream gets its own
phase), each of about ``ef_packets`` EF packets of which the first ``warmup`` fraction is dropped, and gives
the mean EF delay with a Student-t interval over the replication means, by component.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)

from qosbound.errors import ScenarioError
from qosbound.validation.pq_txq_sim import simulate_trace
from qosbound.validation.stats import replication_seeds, two_sided_t

__all__ = ["Hop", "PreTraffic", "PathEstimate", "fifo", "path_trace", "run_path", "rows_for"]


@dataclass(frozen=True)
class Hop:
    """A FIFO store-and-forward output link: ``rate`` bit/s, then ``latency`` s to the next node."""

    rate: float
    latency: float = 0.0
    name: str = ""

    def check(self, where: str) -> None:
        if not (self.rate > 0 and math.isfinite(self.rate)):
            raise ScenarioError(f"hop rate must be a positive number of bit/s, got {self.rate!r}", field=where)
        if not (self.latency >= 0 and math.isfinite(self.latency)):
            raise ScenarioError(f"hop latency must be >= 0 s, got {self.latency!r}", field=where)


@dataclass(frozen=True)
class PreTraffic:
    """Best effort crossing the hops before the port: ``rate`` bit/s in Poisson batches of ``burst`` packets."""

    rate: float
    burst: int = 1


@njit(cache=True)
def fifo(arrival, bits, rate, latency):
    """Departures (last bit at the next node, s) of packets in arrival order through one FIFO hop.

    ``arrival``: when each packet's last bit has arrived (non-decreasing); ``bits``: each packet's size in bits.
    ``dep[j] = max(arrival[j], dep[j-1]) + bits[j]/rate`` (Lindley), then ``latency`` is added."""
    n = arrival.shape[0]
    out = np.empty(n, np.float64)
    free = -np.inf
    for j in range(n):
        start = arrival[j] if arrival[j] > free else free
        free = start + bits[j] / rate
        out[j] = free + latency
    return out


def rows_for(p, ef_packets: int) -> int:
    """Trace rows (EF + BE packets) that hold about ``ef_packets`` EF packets for saturated best effort."""
    mean_be = float(np.dot(p.be_probs, p.be_sizes))
    be_per_s = (1.0 - p.rho) * p.C / (8.0 * mean_be) if p.be_rate is None else p.be_lam
    return int(math.ceil(ef_packets * (1.0 + be_per_s / p.lam) * 1.02)) + 16


def _check(pre, post, port_latency):
    for i, h in enumerate(pre):
        h.check(f"pre[{i}]")
    for i, h in enumerate(post):
        h.check(f"post[{i}]")
    if not (port_latency >= 0 and math.isfinite(port_latency)):
        raise ScenarioError("port latency must be >= 0 s", field="port_latency")


def _pre_delays(ef_arr, ef_bits, pre, traffic, p, rng):
    """Per EF packet, the delay over the pre-hops (s), with their own best effort."""
    if not pre:
        return np.zeros(ef_arr.shape[0])
    arr, bits = ef_arr.copy(), ef_bits.copy()
    is_ef = np.ones(arr.shape[0], np.bool_)
    if traffic is not None and traffic.rate > 0:
        if int(traffic.burst) < 1:
            raise ScenarioError("a pre-hop burst holds at least one packet", field="burst")
        sizes, probs = np.asarray(p.be_sizes, float), np.asarray(p.be_probs, float)
        batch_rate = traffic.rate / (8.0 * float(probs @ sizes) * int(traffic.burst))
        span = float(ef_arr[-1]) + 1.0
        n = int(rng.poisson(batch_rate * span)) if span > 0 else 0
        t = np.sort(rng.uniform(0.0, span, n))
        be_t = np.repeat(t, int(traffic.burst))
        be_bits = 8.0 * rng.choice(sizes, size=be_t.shape[0], p=probs)
        arr = np.concatenate([arr, be_t])
        bits = np.concatenate([bits, be_bits])
        is_ef = np.concatenate([is_ef, np.zeros(be_t.shape[0], np.bool_)])
        order = np.argsort(arr, kind="stable")  # EF first on a tie (EF rows come first)
        arr, bits, is_ef = arr[order], bits[order], is_ef[order]
    t = arr
    for h in pre:
        t = fifo(t, bits, float(h.rate), float(h.latency))
    # every hop keeps the order (FIFO, equal latencies), so the EF rows are still in arrival order
    return t[is_ef] - ef_arr


def path_trace(p, rows: int, seed: int, *, pre=(), post=(), port_latency: float = 0.0,
               pre_traffic: PreTraffic | None = None) -> dict:
    """One replication: the port's trace (``simulate_trace(p, rows, seed)``) pushed through the hops.

    Returns NumPy arrays over the EF packets the port accepted, in arrival order: ``arrival`` (at the port, s),
    ``port`` (port delay), ``pre`` and ``post`` (delays over the hops before and after, incl. latencies),
    ``delay`` (end to end), ``prev_bits`` (size of the packet sent just before it by the port, bits; 0 for the
    first) and ``lost`` (EF packets the PQ dropped); and ``post_arrival``/``post_departure``/``post_cls``, every
    packet (EF cls 0, BE 1) at the first post hop's input and the last hop's output (the final arrival)."""
    pre, post = tuple(pre), tuple(post)
    _check(pre, post, port_latency)
    table = simulate_trace(p, int(rows), int(seed))
    cls = np.asarray(table.column("cls").to_pylist())
    arr = table.column("arrival").to_numpy()
    dep = table.column("departure").to_numpy(zero_copy_only=False)
    dropped = table.column("dropped").to_numpy(zero_copy_only=False)
    size = table.column("size").to_numpy().astype(np.float64)
    ok = ~dropped
    is_ef = cls == "EF"
    lost = int(np.sum(is_ef & dropped))
    # every packet the port sent, in the order it sent them
    sent = np.flatnonzero(ok)
    sent = sent[np.argsort(dep[sent], kind="stable")]
    bits = 8.0 * size[sent]
    t = dep[sent] + port_latency
    for h in post:
        t = fifo(t, bits, float(h.rate), float(h.latency))
    out_dep = np.empty_like(dep)
    out_dep[sent] = t
    prev = np.zeros_like(dep)
    prev[sent[1:]] = bits[:-1]
    ef = np.flatnonzero(is_ef & ok)  # arrival order (the trace is sorted by arrival)
    rng = np.random.default_rng(int(seed) + 7919)
    pre_d = _pre_delays(arr[ef], 8.0 * size[ef], pre, pre_traffic, p, rng)
    port_d = dep[ef] - arr[ef]
    post_d = out_dep[ef] - dep[ef]
    return {"arrival": arr[ef], "port": port_d, "pre": pre_d, "post": post_d, "delay": pre_d + port_d + post_d,
            "prev_bits": prev[ef], "lost": lost,
            "post_arrival": dep[sent] + port_latency, "post_departure": t,
            "post_cls": np.where(is_ef[sent], 0, 1)}


@dataclass
class PathEstimate:
    """Mean EF delays (s) over replications: end to end and by component, each (mean, low, high)."""

    mean: float
    low: float
    high: float
    components: dict = field(default_factory=dict)  # "pre" | "port" | "post" -> (mean, low, high)
    replication_means: np.ndarray | None = None
    replications: int = 0
    ef_packets: int = 0  # EF delays counted, all replications
    confidence: float = 0.95

    @property
    def half_width(self) -> float:
        return 0.5 * (self.high - self.low)


def _interval(x: np.ndarray, confidence: float) -> tuple[float, float, float]:
    m = float(np.mean(x))
    if x.shape[0] < 2:
        return m, m, m
    h = two_sided_t(confidence, x.shape[0] - 1) * float(np.std(x, ddof=1)) / math.sqrt(x.shape[0])
    return m, m - h, m + h


def run_path(p, ef_packets: int, replications: int, seed: int, *, pre=(), post=(), port_latency: float = 0.0,
             pre_traffic: PreTraffic | None = None, warmup: float = 0.02, confidence: float = 0.95
             ) -> PathEstimate:
    """Mean EF end-to-end delay over ``replications`` independent replications of about ``ef_packets`` EF
    packets each (the first ``warmup`` fraction of each not counted), with its ``confidence`` t-interval."""
    for bad, problem, name in ((ef_packets < 10, "a path replication needs at least 10 EF packets", "ef_packets"),
                               (replications < 2, "a confidence interval needs at least 2 replications",
                                "replications"),
                               (not 0 <= warmup < 1, "warm-up must be a fraction in [0, 1)", "warmup")):
        if bad:
            raise ScenarioError(problem, field=name)
    rows = rows_for(p, ef_packets)
    seeds = replication_seeds(seed, replications)
    comp = {k: np.empty(replications) for k in ("delay", "pre", "port", "post")}
    counted = 0
    for r, s in enumerate(seeds):
        tr = path_trace(p, rows, int(s), pre=pre, post=post, port_latency=port_latency, pre_traffic=pre_traffic)
        skip = int(warmup * tr["delay"].shape[0])
        for k in comp:
            comp[k][r] = float(np.mean(tr[k][skip:]))
        counted += tr["delay"].shape[0] - skip
    m, lo, hi = _interval(comp["delay"], confidence)
    return PathEstimate(m, lo, hi, {k: _interval(comp[k], confidence) for k in ("pre", "port", "post")},
                        comp["delay"], replications, counted, confidence)
