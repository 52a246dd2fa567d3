"""What the ring method's results are called beside its upper bound, and what its approximation neglects (the
measured error), without loading the ring-count chain: the port system quotes the same text."""

from __future__ import annotations

__all__ = ["RING_NEGLECTS", "RING_ERRORS", "ring_neglects", "approx_name"]

#: What the ring method leaves out (Interval.approximation's ``neglects``), with its measured error: the ranges of
#: approximation / simulated over the grid of ``python benchmarks/bench_ring.py --grid --quick`` (docs/pq_txq.md
#: has the table; a loss the simulator saw below 1e-4 is not in the range), and the exact-chain survey's worst
#: case (docs/pq_txq.md, the ring-count chain).
RING_NEGLECTS = ("the order of the EF packets within each stage of the tx-ring (their positions are taken as "
                 "exchangeable given how many a stage holds: the head is EF with probability e_1/c_1); measured on "
                 "the grid of benchmarks/bench_ring.py: {ERRORS}; up to 15 % low against the exact chain where EF "
                 "is most of the departures; docs/pq_txq.md")
RING_ERRORS = 'mean 0.75-1.00 x, p99 0.61-1.00 x, p99.9 0.65-1.00 x, loss 0.08-1.00 x the simulated value'


def ring_neglects() -> str:
    """What the ring-count chain neglects, with its measured error (:data:`RING_NEGLECTS`)."""
    return RING_NEGLECTS.replace("{ERRORS}", RING_ERRORS)


def approx_name(metric: str) -> str:
    """The approximation's name beside a bound: 'EF.delay.p99' -> 'EF.approx.delay.p99'."""
    return "EF.approx." + metric[len("EF."):]
