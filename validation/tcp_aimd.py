"""A NewReno-like AIMD TCP sender, one per competing flow, for the QSTP simulator (Jourjon et al. 2008 section 5).

The model (stated once, used by :mod:`qosbound.validation.qstp_sim`):

* The sender is greedy (always has data) and counts its window ``cwnd`` in
  packets of ``s`` bytes; one ACK per packet (b = 1, no delayed ACKs); ACKs are
  never lost and take the reverse-path delay.
* Slow start: ``cwnd += 1`` per ACK while ``cwnd < ssthresh``; congestion
  avoidance: ``cwnd += 1/cwnd`` per ACK. Initial ``cwnd`` 2, ``ssthresh`` 64.
* Fast retransmit / recovery (NewReno-like): a lost packet is detected when
  three packets sent after it have been acknowledged (three duplicate ACKs).
  The first detected loss with sequence number above ``recover`` halves the
  window (``ssthresh = cwnd = max(cwnd/2, 2)``) and sets ``recover`` to the
  highest sequence number sent; further losses of that window are retransmitted
  without another reduction (one reduction per window of data).
* Retransmission timeout (RFC 6298 estimator, 200 ms minimum as in Linux, doubled
  on each back-to-back timeout, at most 60 s): when no ACK arrives for RTO while
  packets are outstanding, ``ssthresh = max(cwnd/2, 2)``, ``cwnd = 1`` and every
  outstanding packet is presumed lost (ACKs of the old window are then ignored).
* Retransmissions are modelled as new packets of the same size: the simulator
  measures throughput, not goodput.
"""

from __future__ import annotations

__all__ = ["AimdSender"]


class AimdSender:
    """One NewReno-like AIMD flow. ``net`` supplies ``now``, ``transmit(flow, seq, epoch)``, ``at(t, fn, arg)``."""

    MIN_RTO = 0.2
    MAX_RTO = 60.0

    def __init__(self, net, fid: int, size: float, start: float):
        self.net = net
        self.fid = fid
        self.size = size
        self.cwnd = 2.0
        self.ssthresh = 64.0
        self.next_seq = 0
        self.inflight = 0
        self.epoch = 0
        self.recover = -1
        self.pending_losses: list[int] = []  # lost, not yet detected, ascending
        self.dup = 0
        self.srtt = None
        self.rttvar = 0.0
        self.rto = 1.0
        self.backoff = 1
        self.rto_deadline = float("inf")
        self.timer_armed = False
        self.sent_times: dict[int, float] = {}
        self.reductions = 0
        self.timeouts = 0
        net.at(start, self._start, None)

    # -- sending ------------------------------------------------------------------------------
    def _start(self, _):
        self._fill()

    def _fill(self):
        while self.inflight < int(self.cwnd):
            seq = self.next_seq
            self.next_seq += 1
            self.inflight += 1
            self.sent_times[seq] = self.net.now
            self.net.transmit(self, seq, self.epoch)
        self._arm()

    def _arm(self):
        if self.inflight > 0:
            self.rto_deadline = self.net.now + min(self.rto * self.backoff, self.MAX_RTO)
            if not self.timer_armed:
                self.timer_armed = True
                self.net.at(self.rto_deadline, self._timer, None)

    # -- feedback from the network ------------------------------------------------------------
    def on_drop(self, seq: int, epoch: int):
        """The network dropped ``seq`` (the sender learns of it only through later ACKs or the RTO)."""
        if epoch == self.epoch:
            self.pending_losses.append(seq)

    def on_ack(self, seq: int, epoch: int):
        if epoch != self.epoch:
            return
        now = self.net.now
        self.inflight -= 1
        t0 = self.sent_times.pop(seq, None)
        if t0 is not None:
            self._rtt_sample(now - t0)
        self.backoff = 1
        if self.cwnd < self.ssthresh:
            self.cwnd += 1.0
        else:
            self.cwnd += 1.0 / self.cwnd
        while self.pending_losses and seq > self.pending_losses[0]:
            self.dup += 1
            if self.dup < 3:
                break
            lost = self.pending_losses.pop(0)
            self.sent_times.pop(lost, None)
            self.dup = 0
            self.inflight -= 1
            if lost > self.recover:
                self.ssthresh = max(self.cwnd / 2.0, 2.0)
                self.cwnd = self.ssthresh
                self.recover = self.next_seq - 1
                self.reductions += 1
        self._fill()

    def _rtt_sample(self, r: float):
        if self.srtt is None:
            self.srtt, self.rttvar = r, r / 2.0
        else:
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - r)
            self.srtt = 0.875 * self.srtt + 0.125 * r
        self.rto = max(self.MIN_RTO, self.srtt + 4.0 * self.rttvar)

    def _timer(self, _):
        now = self.net.now
        if now < self.rto_deadline - 1e-12:
            self.net.at(self.rto_deadline, self._timer, None)
            return
        self.timer_armed = False
        if self.inflight <= 0:
            return
        self.timeouts += 1
        self.ssthresh = max(self.cwnd / 2.0, 2.0)
        self.cwnd = 1.0
        self.epoch += 1
        self.inflight = 0
        self.pending_losses.clear()
        self.sent_times.clear()
        self.dup = 0
        self.recover = self.next_seq - 1
        self.backoff = min(self.backoff * 2, 64)
        self._fill()
