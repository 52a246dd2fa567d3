"""Network-calculus curves as small immutable types: arrival curves (minima of token buckets) and rate-latency
service curves, with the delay and backlog bounds between them.

Sources: R. L. Cruz, "A calculus for network delay, Part I: Network elements in isolation", IEEE Trans.
Inf. Theory 37(1), 1991 (token buckets, delay of a constrained flow through a server); J.-Y. Le Boudec and
P. Thiran, *Network Calculus*, Springer LNCS 2050, 2001 (LBT below): Theorem 1.4.1 (backlog bound), Theorem
1.4.2 (delay bound), Theorem 1.4.3 (output flow), Theorem 1.4.6 (concatenation), Section 1.3.1 (strict
service curves), Theorem 6.2.1 (blind multiplexing: the residual service of a strict server).

Units follow the project: sizes and bursts in bytes, rates in bit/s, times in seconds; every formula carries
the factor 8 between bytes and bits.

Arrival curve. ``alpha(t) = min_k (b_k + r_k t / 8)`` bytes: a flow has it when, for every ``s <= t``, the
bytes of its packets arriving in the CLOSED interval ``[s, t]`` are at most ``alpha(t - s)`` (so a bucket must
hold at least one packet). The minimum of affine functions is concave, so every supremum below is reached at
``t = 0`` or at one of the finitely many points where two buckets cross: :meth:`ArrivalCurve.excess` takes the
maximum over them. A sum of two such curves is again one (``min_i a_i + min_j b_j = min_{i,j} (a_i + b_j)``).

Service curve. A server offers the rate-latency curve ``beta(t) = R (t - T)^+ / 8`` bytes to a flow when its
output over a backlogged period ``(s, t]`` is at least ``beta(t - s)`` (strict, LBT 1.3.1) -- or, weaker, when
the output up to ``t`` is at least ``inf_s (input(s) + beta(t - s))`` (min-plus). Both give the bounds here.

Bounds (``alpha`` concave, ``R`` at least its long-term rate):

* delay: ``h(alpha, beta) = T + 8 e(R) / R`` with ``e(R) = sup_{t >= 0} (alpha(t) - R t / 8)`` (LBT Theorem 1.4.2,
  the horizontal deviation; for one bucket ``e = b`` and ``h = T + 8 b / R``, :data:`delay_expr`);
* backlog: ``v(alpha, beta) = sup_t (alpha(t) - beta(t))`` (LBT Theorem 1.4.1; one bucket: ``b + r T / 8``,
  :data:`backlog_expr`);
* output: the flow leaves the server with arrival curve ``alpha(t + T)`` (LBT Theorem 1.4.3; one bucket:
  ``(b + r T / 8, r)``, :meth:`RateLatency.output`);
* concatenation: two rate-latency servers in tandem are one, ``(min(R1, R2), T1 + T2)`` (LBT Theorem 1.4.6);
* residual under a strict-priority (or blind) competitor with arrival curve ``(b_H, r_H)`` on a strict
  rate-latency server: ``(R - r_H, (R T + 8 b_H) / (R - r_H))`` (LBT Theorem 6.2.1 with ``[beta - alpha_H]^+``,
  which for these two shapes is again rate-latency, :data:`residual_latency_expr`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from qosbound.errors import ScenarioError

__all__ = ["b", "r", "R", "T", "b_H", "r_H", "delay_expr", "backlog_expr", "output_burst_expr",
           "residual_rate_expr", "residual_latency_expr", "TokenBucket", "ArrivalCurve", "RateLatency"]

b = sp.Symbol("b", nonnegative=True)  # bytes, bucket depth (burst)
r = sp.Symbol("r", nonnegative=True)  # bit/s, token rate
R = sp.Symbol("R", positive=True)  # bit/s, service rate
T = sp.Symbol("T", nonnegative=True)  # s, service latency
b_H = sp.Symbol("b_H", nonnegative=True)  # bytes, competitor's burst
r_H = sp.Symbol("r_H", nonnegative=True)  # bit/s, competitor's rate (r_H < R)

#: Delay bound of a token bucket through a rate-latency server, s (Cruz 1991; LBT Theorem 1.4.2).
delay_expr = T + 8 * b / R
#: Backlog bound, bytes (LBT Theorem 1.4.1): ``sup_t (b + r t/8 - R (t - T)^+/8)`` reached at ``t = T``.
backlog_expr = b + r * T / 8
#: Burst of the output flow, bytes (LBT Theorem 1.4.3).
output_burst_expr = b + r * T / 8
#: Residual rate and latency under a strict-priority competitor (LBT Theorem 6.2.1), bit/s and s.
residual_rate_expr = R - r_H
residual_latency_expr = (R * T + 8 * b_H) / (R - r_H)


@lru_cache(maxsize=None)
def _fn(name: str):
    table = {"delay": ((T, b, R), delay_expr), "backlog": ((b, r, T), backlog_expr),
             "residual_rate": ((R, r_H), residual_rate_expr),
             "residual_latency": ((R, T, b_H, r_H), residual_latency_expr)}
    args, expr = table[name]
    return sp.lambdify(args, expr, "math")


@dataclass(frozen=True)
class TokenBucket:
    """``b + r t / 8`` bytes: depth ``burst`` (bytes), rate ``rate`` (bit/s)."""

    burst: float
    rate: float

    def __post_init__(self):
        if not (self.burst >= 0 and self.rate >= 0 and math.isfinite(self.burst) and math.isfinite(self.rate)):
            raise ScenarioError(f"a token bucket needs a finite depth and rate >= 0, got ({self.burst!r} B, "
                                f"{self.rate!r} bit/s)", field="arrival curve")

    def at(self, t: float) -> float:
        return self.burst + self.rate * t / 8.0


@dataclass(frozen=True)
class ArrivalCurve:
    """The minimum of one or more token buckets (a concave arrival curve), bytes over a window of ``t`` s."""

    buckets: tuple[TokenBucket, ...]

    @staticmethod
    def total(curves) -> "ArrivalCurve | None":
        """The arrival curve of an aggregate: the sum of its members' curves (the sum of concave arrival curves
        bounds the sum of the flows), or None when a member has none (or there are no members)."""
        out = None
        for a in curves:
            if a is None:
                return None
            out = a if out is None else out + a
        return out

    def __post_init__(self):
        if not self.buckets:
            raise ScenarioError("an arrival curve needs at least one token bucket", field="arrival curve")
        object.__setattr__(self, "buckets", tuple(sorted(set(self.buckets), key=lambda k: (k.rate, k.burst))))

    @classmethod
    def bucket(cls, burst: float, rate: float) -> "ArrivalCurve":
        return cls((TokenBucket(float(burst), float(rate)),))

    def at(self, t: float) -> float:
        """``alpha(t)``, bytes."""
        return min(k.at(t) for k in self.buckets)

    @property
    def rate(self) -> float:
        """Long-term rate (the smallest token rate), bit/s."""
        return min(k.rate for k in self.buckets)

    @property
    def burst(self) -> float:
        """``alpha(0)``, bytes."""
        return min(k.burst for k in self.buckets)

    def long_term(self) -> TokenBucket:
        """The bucket of the smallest rate (the smallest depth among those): ``alpha <= it``."""
        return min(self.buckets, key=lambda k: (k.rate, k.burst))

    def __add__(self, other: "ArrivalCurve") -> "ArrivalCurve":
        """The aggregate of two flows: ``min_i a_i + min_j b_j = min_{i,j} (a_i + b_j)``."""
        return ArrivalCurve(tuple(TokenBucket(a.burst + c.burst, a.rate + c.rate)
                                  for a in self.buckets for c in other.buckets))

    def meet(self, other: "ArrivalCurve") -> "ArrivalCurve":
        """Both constraints at once: ``min(alpha, alpha')``."""
        return ArrivalCurve(self.buckets + other.buckets)

    def _points(self, start: float = 0.0) -> list[float]:
        """``start`` and every crossing of two buckets after it: where the concave curve can change slope."""
        pts = [start]
        ks = self.buckets
        for i in range(len(ks)):
            for j in range(i + 1, len(ks)):
                dr = ks[i].rate - ks[j].rate
                if dr != 0.0:
                    t = 8.0 * (ks[j].burst - ks[i].burst) / dr
                    if t > start:
                        pts.append(t)
        return pts

    def excess(self, rate: float, start: float = 0.0) -> float:
        """``sup_{u >= 0} (alpha(start + u) - rate u / 8)``, bytes: the burst a server of ``rate`` sees (inf when the
        curve's long-term rate is above ``rate``)."""
        if self.rate > rate * (1 + 1e-12):
            return math.inf
        return max(self.at(t) - rate * (t - start) / 8.0 for t in self._points(start))


@dataclass(frozen=True)
class RateLatency:
    """``beta(t) = R (t - T)^+ / 8`` bytes: rate ``rate`` (bit/s), latency ``latency`` (s)."""

    rate: float
    latency: float

    def __post_init__(self):
        if not (self.rate > 0 and self.latency >= 0 and math.isfinite(self.rate) and math.isfinite(self.latency)):
            raise ScenarioError(f"a rate-latency curve needs a rate > 0 and a latency >= 0, got ({self.rate!r} "
                                f"bit/s, {self.latency!r} s)", field="service curve")

    def delay_bound(self, alpha: ArrivalCurve) -> float:
        """``h(alpha, beta)``, s (inf when the flow's long-term rate exceeds the service rate)."""
        e = alpha.excess(self.rate)
        return math.inf if math.isinf(e) else float(_fn("delay")(self.latency, e, self.rate))

    def backlog_bound(self, alpha: ArrivalCurve) -> float:
        """``v(alpha, beta)``, bytes: ``alpha(T) + sup_{u >= 0} (alpha(T + u) - R u / 8) - alpha(T)``."""
        return alpha.excess(self.rate, start=self.latency)

    def output(self, alpha: ArrivalCurve) -> ArrivalCurve:
        """The flow's arrival curve at the output, ``alpha(t + T)`` (LBT Theorem 1.4.3)."""
        return ArrivalCurve(tuple(TokenBucket(float(_fn("backlog")(k.burst, k.rate, self.latency)), k.rate)
                                  for k in alpha.buckets))

    def then(self, other: "RateLatency") -> "RateLatency":
        """Two servers in tandem (LBT Theorem 1.4.6)."""
        return RateLatency(min(self.rate, other.rate), self.latency + other.latency)

    def residual(self, competitor: TokenBucket) -> "RateLatency":
        """What is left of this strict server under a strict-priority competitor (LBT Theorem 6.2.1)."""
        if competitor.rate >= self.rate:
            raise ScenarioError(f"a competitor of {competitor.rate:.6g} bit/s leaves nothing of {self.rate:.6g} bit/s",
                                field="service curve")
        return RateLatency(float(_fn("residual_rate")(self.rate, competitor.rate)),
                           float(_fn("residual_latency")(self.rate, self.latency, competitor.burst, competitor.rate)))
