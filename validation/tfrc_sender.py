"""TFRC (RFC 5348) and gTFRC (Jourjon, Lochin & Senac 2008, eq. (2)) sender and receiver for the QSTP simulator.

What is modelled, section by section of RFC 5348:

* 4.2 / 4.3 sender: rate-paced packets of ``s`` bytes, one every ``s/X``. Before
  the first feedback, X = one packet per second; the first RTT sample sets
  X = W_init/R with W_init = min(4s, max(2s, 4380 B)). On each feedback the RTT
  estimate is R = 0.9 R + 0.1 R_sample, t_RTO = 4R, and

  - p = 0 (slow start): once per R, X = max(min(2X, 2 X_recv), W_init/R);
  - p > 0, TFRC: X = max(min(X_calc, 2 X_recv), s/64);
  - p > 0, gTFRC: X = max(min(max(X_calc, g), 2 X_recv), s/64) (Jourjon, Lochin & Senac 2008, eq. (2)),

  with X_calc from :func:`qosbound.analytic.tfrc.tfrc_rate` (the one definition
  of the equation). The receive limit is 2 X_recv of the latest report (RFC 3448's
  form, the one Jourjon et al. 2008 write), not RFC 5348's X_recv_set.
* 4.4 nofeedback timer, max(4R, 2s/X): when it expires X is halved, never below
  s/64 (gTFRC: never below g).
* 5 / 6 receiver: loss events are detected when a later packet arrives (the
  path does not reorder, so no three-packet wait is needed); a lost packet
  starts a new loss event if its send time (known exactly here; RFC 5348
  interpolates it) is more than R after the start of the current one, so there
  is at most one loss event per RTT. Loss intervals are counted in packets and
  averaged with the 8 weights (1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2), taking the larger
  of the averages with and without the open interval I_0 (5.4); p = 1/I_mean.
  The first loss interval is synthesised from the receive rate (6.3.1): the p
  with X_calc(s, R, p) = X_recv, solved by
  :func:`qosbound.analytic.tfrc.max_loss_for_target` (X_recv at least s/(2R), the
  RFC's target when the very first packets are lost). Feedback (X_recv over the
  last period, p, the echoed timestamp and the hold time) is sent once per R and
  at once when a new loss event is detected; no feedback when nothing arrived.
"""

from __future__ import annotations

from qosbound.analytic import tfrc as _tfrc

__all__ = ["TfrcSender", "TfrcReceiver", "WEIGHTS", "T_MBI", "mean_loss_interval"]

#: RFC 5348 section 5.4: weights of the n = 8 most recent loss intervals (defined in qosbound.analytic.tfrc).
WEIGHTS = _tfrc.LOSS_WEIGHTS
#: RFC 5348 section 4.3: t_mbi, seconds (defined in qosbound.analytic.tfrc).
T_MBI = float(_tfrc.T_MBI)


def mean_loss_interval(open_interval: float, closed: list[float]) -> float:
    """RFC 5348 5.4: I_mean over the k <= 8 closed intervals, most recent first
    (:func:`qosbound.analytic.tfrc.mean_loss_interval`)."""
    return _tfrc.mean_loss_interval(open_interval, closed, len(closed))


class TfrcSender:
    """A TFRC sender (``target=None``) or a gTFRC sender with target ``target`` bytes/s.

    ``net`` supplies ``now``, ``at(t, fn, arg)`` and ``transmit(flow, seq, epoch, info)``.
    """

    def __init__(self, net, fid: int, size: float, start: float, target: float | None = None):
        self.net = net
        self.fid = fid
        self.s = float(size)
        self.g = target
        self.X = self.s  # one packet per second until the first feedback
        self.R = None
        self.p = 0.0
        self.x_recv = None
        self.tld = -1.0
        self.next_seq = 0
        self._gen = 0
        self._nfb_deadline = float("inf")
        self.samples = []  # (t, R, p, X) after each feedback
        net.at(start, self._send, 0)

    @property
    def w_init_rate(self) -> float:
        return min(4 * self.s, max(2 * self.s, 4380.0)) / self.R

    def _send(self, gen):
        if gen != self._gen:
            return
        now = self.net.now
        if now >= self._nfb_deadline:
            self._nofeedback()
        self.net.transmit(self, self.next_seq, 0, now)
        self.next_seq += 1
        self._last_send = now
        self.net.at(now + self.s / self.X, self._send, gen)
        if self._nfb_deadline == float("inf"):
            self._nfb_deadline = now + 2.0  # RFC 5348 4.2: 2 s before the first feedback

    def _reschedule(self):
        self._gen += 1
        t = max(self.net.now, self._last_send + self.s / self.X)
        self.net.at(t, self._send, self._gen)

    def _floor(self) -> float:
        return self.s / T_MBI if self.g is None else max(self.s / T_MBI, self.g)

    def _nofeedback(self):
        self.X = max(self.X / 2.0, self._floor())
        self._nfb_deadline = self.net.now + max(4.0 * (self.R or 0.5), 2.0 * self.s / self.X)

    def on_feedback(self, info):
        """Feedback: (t_echo, t_delay, x_recv, p)."""
        t_echo, t_delay, x_recv, p = info
        now = self.net.now
        sample = max(now - t_echo - t_delay, 1e-6)
        first = self.R is None
        self.R = sample if first else 0.9 * self.R + 0.1 * sample
        self.x_recv = x_recv
        self.p = p
        recv_limit = 2.0 * x_recv
        if p > 0:
            self.X = _tfrc.sender_rate(self.s, self.R, p, x_recv, self.g)
        elif first:
            self.X = self.w_init_rate
            self.tld = now
        elif now - self.tld >= self.R:
            self.X = max(min(2.0 * self.X, recv_limit), self.w_init_rate)
            self.tld = now
        self.samples.append((now, self.R, p, self.X))
        self._nfb_deadline = now + max(4.0 * self.R, 2.0 * self.s / self.X)
        self._reschedule()


class TfrcReceiver:
    """The receiver side: loss history, loss event rate, feedback once per RTT."""

    def __init__(self, net, sender: TfrcSender, feedback_delay: float, base_rtt: float):
        self.net = net
        self.sender = sender
        self.fb_delay = feedback_delay
        self.base_rtt = base_rtt
        self.expected = 0
        self.last_tsend = None
        self.last_arrival = None
        self.event_start_seq = None
        self.event_start_time = None
        self.closed: list[float] = []
        self.bytes_since_fb = 0.0
        self.last_fb = None
        self.p = 0.0
        self.loss_events = 0
        self.lost = 0
        self.received = 0
        self.event_log = []  # (time, seq) of each new loss event

    def _rtt(self):
        return self.sender.R if self.sender.R is not None else self.base_rtt

    def on_packet(self, seq: int, t_send: float, size: float):
        now = self.net.now
        new_event = False
        if seq > self.expected:
            t_prev = self.last_tsend if self.last_tsend is not None else t_send
            n_gap = seq - self.expected
            for k, j in enumerate(range(self.expected, seq)):
                self.lost += 1
                tj = t_prev + (t_send - t_prev) * (k + 1) / (n_gap + 1)
                if self.event_start_time is None or tj > self.event_start_time + self._rtt():
                    self._new_event(j, tj, now)
                    new_event = True
        self.expected = max(self.expected, seq + 1)
        self.last_tsend = t_send
        self.last_arrival = now
        self.received += 1
        self.bytes_since_fb += size
        if self.event_start_seq is not None:
            self.p = 1.0 / mean_loss_interval(self.expected - self.event_start_seq, self.closed)
        if self.last_fb is None:  # first packet: feedback at once, then once per RTT
            self._feedback(now)
            self.net.at(now + self._rtt(), self._timer, None)
        elif new_event:
            self._feedback(now)

    def _new_event(self, seq: int, t: float, now: float):
        self.loss_events += 1
        self.event_log.append((now, seq))
        if self.event_start_seq is None:
            # RFC 5348 6.3.1: synthesise the first interval from the receive rate
            from qosbound.analytic.tfrc import max_loss_for_target

            span = max(now - (self.last_fb if self.last_fb is not None else now - self._rtt()), 1e-6)
            # at least s/(2R), RFC 5348 6.3.1's target when the first packets are lost
            x_recv = max(self.bytes_since_fb / span, self.sender.s / (2.0 * self._rtt()))
            p0 = max_loss_for_target(self.sender.s, self._rtt(), x_recv)
            self.closed.insert(0, max(1.0 / float(p0), 1.0))
        else:
            self.closed.insert(0, float(seq - self.event_start_seq))
        del self.closed[len(WEIGHTS):]
        self.event_start_seq = seq
        self.event_start_time = t

    def _timer(self, _):
        now = self.net.now
        if self.last_fb is not None and self.last_arrival is not None and self.last_arrival > self.last_fb:
            self._feedback(now)
        self.net.at(now + self._rtt(), self._timer, None)

    def _feedback(self, now: float):
        span = now - self.last_fb if self.last_fb is not None else self._rtt()
        x_recv = self.bytes_since_fb / max(span, 1e-6)
        info = (self.last_tsend, now - self.last_arrival, x_recv, self.p)
        self.bytes_since_fb = 0.0
        self.last_fb = now
        self.net.at(now + self.fb_delay, self.sender.on_feedback, info)
