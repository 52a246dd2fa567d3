"""Deficit round robin (qosbound.analytic.drr): the service guarantee holds on every interval of every run of a
DRR scheduler written here from Shreedhar & Varghese's rules, and the port kernel's DRR serves the classes in
the same order as that scheduler."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from qosbound.analytic import drr
from qosbound.analytic.curves import RateLatency
from qosbound.scenario import build
from qosbound.systems.port.elements import port_of
from qosbound.systems.port.simulated import config
from qosbound.validation.port_sim import simulate_trace


class ReferenceDRR:
    """DRR by its rules: a round-robin list of backlogged classes; the head's turn adds its quantum; the head packet
    is sent while it fits the deficit; a class that does not fit goes to the tail; an emptied class leaves with
    deficit 0; a class that receives a packet while out of the list joins at the tail with deficit 0."""

    def __init__(self, quanta):
        self.q = list(quanta)
        self.queues = [deque() for _ in quanta]
        self.active: deque = deque()
        self.dc = [0.0] * len(quanta)
        self.started = [False] * len(quanta)

    def arrive(self, i: int, size: float) -> None:
        if not self.queues[i] and i not in self.active:
            self.active.append(i)
            self.dc[i] = 0.0
            self.started[i] = False
        self.queues[i].append(size)

    def next(self):
        """(class, size) sent next, or None when nothing waits."""
        while self.active:
            i = self.active[0]
            if not self.started[i]:
                self.dc[i] += self.q[i]
                self.started[i] = True
            size = self.queues[i][0]
            if size <= self.dc[i]:
                self.dc[i] -= size
                self.queues[i].popleft()
                if not self.queues[i]:
                    self.active.popleft()
                    self.dc[i] = 0.0
                    self.started[i] = False
                return i, size
            self.started[i] = False
            self.active.rotate(-1)
        return None


def test_quanta_are_in_proportion_to_the_weights():
    q = drr.quanta([2e8, 1e8, 1e8, 0.0], 1500.0)
    assert list(q) == [3000.0, 1500.0, 1500.0, 0.0]


@pytest.mark.parametrize("seed", range(6))
def test_every_backlogged_interval_gets_at_least_gamma(seed):
    """Random classes, sizes and arrivals: over every run of consecutive sends during which class i stays
    backlogged, i is served at least (Q_i/F)(x - X_i), x the bytes sent in all (the proof's claim)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5))
    quanta = rng.uniform(100, 3000, n)
    sizes = [rng.choice([40, 200, 576, 1500, 3000], size=2) for _ in range(n)]
    largest = [float(s.max()) for s in sizes]
    d = ReferenceDRR(quanta)
    sent = []  # (class, size, classes backlogged before the send and still after it)
    for _ in range(4000):
        for i in range(n):  # arrivals between sends, some classes bursty, some sparse
            if rng.random() < (0.9 if i == 0 else 0.35):
                d.arrive(i, float(rng.choice(sizes[i])))
        before = {i for i in range(n) if d.queues[i]}
        s = d.next()
        if s is not None:
            sent.append((s[0], s[1], {i for i in before if d.queues[i]}))
    F = float(quanta.sum())
    for i in range(n):
        X = (F - quanta[i]) * (1 + largest[i] / quanta[i]) + sum(largest) - largest[i]
        k = 0
        while k < len(sent):
            if i not in sent[k][2]:
                k += 1
                continue
            j = k  # a maximal run of sends during which i stays backlogged (never leaves the round)
            while j < len(sent) and i in sent[j][2]:
                j += 1
            j = min(j + 1, len(sent))  # and the send after which it empties
            x = np.cumsum([s[1] for s in sent[k:j]])
            y = np.cumsum([s[1] if s[0] == i else 0.0 for s in sent[k:j]])
            for a in range(0, j - k, 7):  # every start (thinned), every end
                xs = x[a:] - (x[a - 1] if a else 0.0)
                ys = y[a:] - (y[a - 1] if a else 0.0)
                # whole sends: the interval starts and ends between two of them
                assert np.all(ys >= quanta[i] / F * (xs - X) - 1e-6)
            k = j


def test_the_composed_curve_is_the_formula():
    s = drr.drr_service([3000.0, 1500.0, 1500.0], [1500.0, 1500.0, 1500.0], 0, RateLatency(7.68e8, 2e-3))
    F = 6000.0
    X = (F - 3000) * (1 + 1500 / 3000) + 3000
    assert s.rate == pytest.approx(3000 / F * 7.68e8)
    assert s.latency == pytest.approx(2e-3 + 8 * X / 7.68e8)


def test_the_kernel_serves_saturated_classes_in_drr_order():
    """Three saturated weighted classes of different quanta and size mixes, no ring (departures in admission
    order): the kernel's sequence of classes is the reference DRR's on the same packet sizes."""
    raw = {"name": "drr", "system": "port", "link": {"rate": "10 Mbit/s"}, "scheduler": {"quantum": "700 B"},
           "classes": [
               {"name": "a", "dscp": ["AF11"], "bandwidth": "50 %",
                "traffic": {"saturated": True, "sizes": [{"size": 40, "p": 0.5}, {"size": 1500, "p": 0.5}]}},
               {"name": "b", "dscp": ["AF21"], "bandwidth": "30 %",
                "traffic": {"saturated": True, "sizes": [{"size": 576, "p": 0.7}, {"size": 1200, "p": 0.3}]}},
               {"name": "c", "dscp": ["AF31"], "bandwidth": "20 %", "traffic": {"saturated": True, "size": 1000}}]}
    port = port_of(build(raw))
    tr = simulate_trace(config(port), 3000, seed=5)
    order = np.argsort(tr["departure"][~tr["dropped"]], kind="stable")
    cls = tr["cls"][~tr["dropped"]][order]
    size = tr["size"][~tr["dropped"]][order]
    ref = ReferenceDRR(port.quanta())
    for i in range(3):  # each class's packets, in the order the kernel drew them
        for s in size[cls == i]:
            ref.arrive(i, float(s))
    got = [ref.next()[0] for _ in range(2000)]
    assert got == list(cls[:2000])
    shares = np.bincount(cls, weights=size, minlength=3) / size.sum()
    assert shares == pytest.approx([0.5, 0.3, 0.2], abs=0.02)
