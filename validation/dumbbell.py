"""A dumbbell of TCP, TFRC and open-loop flows through a DiffServ bottleneck: qosbound's packet-level network engine.

Topology: ``n`` senders -> router R1 -> bottleneck link (``rate`` bit/s, one-way delay
``delay``) -> router R2 -> ``n`` receivers; ACKs come back R2 -> R1 over a reverse bottleneck
(``rev_rate``, same delay). Flow ``i``'s access link adds ``access[i]`` seconds each way
(sender <-> R1); the receivers hang on R2 with no delay, so flow ``i``'s base RTT is
``2 (access[i] + delay)`` plus the data segment's and the ACK's transmission times. The TCP
ends are :mod:`qosbound.validation.tcp` (NewReno + SACK, RFC 6675 pipe; delayed ACKs).

Flows send their data R1 -> R2 (``direction`` 0, ACKs back R2 -> R1) or R2 -> R1 (``direction`` 1), so
data and ACKs may share both directions. Each bottleneck direction is one FIFO queue with a DiffServ
dropper, or a set of class queues (below):

* Colours: a packet gets its colour (0 green, 1 yellow, 2 red) from its flow's marker
  (:func:`qosbound.validation.markers.mark`: trTCM, srTCM or a two-colour token bucket, colour
  blind, one marker per flow and direction) or a fixed colour. ACKs have their own colour or
  marker (``ack_colour``, ``ack_marker``), so they can be classified apart from the data.
* Dropper: the averages and drop curves of :mod:`qosbound.validation.droppers` (``WRED``, ``RIO``
  or ``NRED`` sharing of the three cumulative averages, per-colour ``min_th``, ``max_th``,
  ``max_p``, gentle or not, EWMA weight ``alpha``), updated on every arrival; an arrival that finds
  ``limit`` packets waiting is dropped. The queue the average sees counts the waiting packets,
  less ``uncounted`` of them (1 = only the packet on the wire is excluded; ns-3's ``RedQueueDisc``
  behind a one-packet device queue does not see 2). After an idle period the averages decay by
  ``(1 - alpha)^m``, ``m`` = idle time x link rate / (8 ``mean_size``) (Floyd & Jacobson; ns-3).
* Drop decision: ``spacing="bernoulli"`` draws each arrival independently with the curve's
  probability (qosbound's AF simulator); ``spacing="count"`` is Floyd & Jacobson's uniformised
  RED as ns-3 runs it ("wait" variant): no early drop while one packet or fewer waits, none for the
  first arrival above ``min_th``, then ``p_a = 0`` while ``count p_b < 1``, ``p_b / (2 - count p_b)``
  while ``< 2``, else 1, ``count`` = arrivals since the last early drop (one count per queue).
* Random loss ``loss`` (forward, data) and ``ack_loss`` (reverse) drop a packet independently
  before the queue (a lossy link), for experiments with a known loss rate.

Classes (``fwd_classes`` / ``rev_classes``, tuples of :class:`Class`): each class is its own queue with
its own dropper (a :class:`Queue`, as above); every flow's data goes to ``data_class`` of its direction
and its ACKs to ``ack_class`` of the other. A scheduler puts the next packet on the wire when the last
one has left (departure events): the highest ``priority`` level with a packet waiting is served (strict
priority, non-preemptive), and the classes of one level share by deficit round robin with quanta in
proportion to their ``weight`` (CBWFQ-like; Cisco's LLQ + CBWFQ is one policed priority class above
weighted ones); with ``sharing="scfq"`` they share by self-clocked fair queueing instead (Golestani 1994: a
packet's finish tag is max(the tag in service, its class's last tag) + its transmission time / the class's share of
the level's weights; the smallest tag at the heads goes next, the lower class on a tie), which interleaves packets
as finely as the weights allow (DRR sends a quantum per turn). Either way a level is work conserving: an idle
class's share goes to the others (CBQ's borrowing). ``police`` drops a class's arrivals of that colour or above (behind the flow's marker:
an EF policer). A class queue holds only waiting packets, so its dropper sees what a FIFO's sees with
``uncounted=1``; a class link's departure sorts before other events at the same instant, as a FIFO's
packet that leaves at ``t`` is gone for an arrival at ``t``. With these, one class per direction gives
exactly the FIFO's results. Per-class counts (arrivals, drops, bytes sent) are in ``RunResult.classes``.

Node uplinks (``uplink_rate`` > 0): each flow's data segments first queue in its node's uplink
(``uplink_of``; a drop-tail FIFO of ``uplink_limit`` segments, departures computed at admission), then
take the access delay. Markers may be shared by a node's flows (``marker_of``) and meter colour-aware
(``marker_aware``: the flow's fixed colour is the pre-colour).

Uplink AQM (``uplink_aqm``; off by default, and then no event or random number of a run changes): the nodes run the
bottleneck's droppers, as Koehler & Schaefer's nodes run RIO / n-RED queues behind their traffic conditioners.

* Marking moves to the node: a data segment is coloured by its flow's marker (or takes its fixed colour) when its
  sender hands it to the uplink, at its send time, before the uplink queue; the bottleneck takes that colour and does
  not mark again. A segment the uplink then drops has used its tokens (the meter sits in front of the queue).
* The uplink is one FIFO per node at ``uplink_rate`` (departures computed at admission, each packet's own
  transmission time). A packet bound for bottleneck queue ``q`` (the direction's FIFO, or the class its data or ACK
  takes there) meets ``q``'s dropper -- mode (WRED / RIO / n-RED), thresholds, ``max_p``, gentle, spacing, EWMA weight
  ``alpha``, ``limit`` -- with averages and counts of its own per uplink: they see the packets of ``q`` in that
  uplink, the one on the wire excluded, and decay after ``q`` has had none there since its last departure (idle
  packet times at the uplink's rate). A class's policer (``police``) drops there, so an EF policer acts at the node
  and the bottleneck's sees only what passed. The uplink also drops when ``uplink_limit`` packets wait in it.
* ACKs take an uplink only when ``ack_uplink_of`` names one (per flow: the node of the flow's receiver, -1 none):
  the receiver's ACK is coloured there (its fixed colour or its marker), offered to that uplink (the dropper of the
  class the ACK takes at the bottleneck) and reaches the bottleneck when it has left the uplink. The receivers sit at
  their router (the dumbbell lumps each flow's access delays at its sender), so an ACK meets its node's uplink at the
  instant it is sent, not a receiver-side access delay later.
* Neglected: the node's own scheduler. All of a node's classes share one FIFO in arrival order, so a node's strict
  priority for EF (Koehler & Schaefer's Premium FIFO) or class weights are not modelled at the uplink; with a
  node's EF traffic held to its token rate (a fifth of a Koehler node's link) this changes its queueing delay at the
  node, not what the droppers see of the other classes. Handshake segments and TFRC or open-loop packets bypass the
  uplinks, as without the option.

Counted over the window (:class:`~qosbound.validation.dumbbell_results.FlowStats`): data segments offered to and
dropped by the uplink per flow and colour, ACKs dropped at uplinks per flow (``ack_sent`` counts only the ACKs that
reached the bottleneck).

Open-loop sources (``udp``, tuple of :class:`Udp`): CBR, Poisson or on-off UDP packets generated at a bottleneck
queue (the source's access link is infinitely fast), offered to a class of either direction (or its FIFO) with a
fixed colour or their own marker, from ``start`` to ``stop``. Each source's packets generated in the window are
counted sent, dropped or delivered (``in_flight`` the rest at the end), and every delivered one's one-way delay is
kept (``RunResult.udp``, :class:`UdpStats`: loss, mean, percentiles, jitter). With no sources and no ``then``
chains the event loop draws the same random numbers and pushes the same events as without them: TCP-only results
are unchanged. ``n`` may be 0 when there are sources.

TFRC flows (``tfrc``, tuple of :class:`Tfrc`): TFRC (RFC 5348) or gTFRC (target ``target``; Jourjon, Lochin &
Sénac 2008) senders at a node ``access`` seconds from their router, rate-paced packets of ``size`` bytes into a
class of their direction (colour fixed or from their own or a shared marker), their receivers at the far router.
The sender and receiver are :mod:`qosbound.validation.tfrc_sender`, with its feedback model per flow:
``"receiver"`` (RFC 5348: the receiver measures the loss event rate and the receive rate and reports once per RTT;
the report is a ``fb_size``-byte packet through the reverse bottleneck, queued and possibly lost there like an
ACK) or ``"sender"`` (immediate: the sender learns of each drop at once and of each delivered packet's RTT, its
forward delay plus the reverse path's propagation; no packet goes back). Per-flow figures are in
``RunResult.tfrc`` (:class:`TfrcStats`).

Client chains (``then``, ``think``): a flow whose ``starts`` is ``inf`` starts only when the flow naming it in
``then`` has delivered its whole file, after an exponential think time of mean ``think`` (0: at once): a client
fetching files one after another (HTTP/1.0, one connection per file), as WebStone's clients do.

Handshake (``handshake``; off by default, and then no event or random number of a run changes): a flow's start is its
client's SYN. The client sits at the far router, as the receiver does: its SYN and then its HTTP request (``request``
payload bytes plus ``header``) go toward the server like its ACKs (the ACKs' direction, class, colour or marker and
``ack_loss``); the server answers each SYN with a SYN-ACK of ``header`` bytes like its data (the data's direction,
class, colour or marker and ``loss``). When the SYN-ACK reaches the client the connection is established
(``FlowStats.established``) and the request leaves; when the request reaches the server its data flow starts, so a
file's completion time runs from the SYN to the last data byte at the client. The client's timer recovers a lost SYN
or SYN-ACK (the SYN again; the server answers every SYN it gets while the client waits) and a lost request after
``syn_rto`` s (RFC 6298 2.1's initial RTO, 1 s; RFC 2988's was 3 s), doubled at each timeout (at most 60 s); the
server keeps no SYN-ACK timer of its own, and the request's timer is the initial RTO, not one computed from the
handshake's RTT sample (RFC 6298 2.2). The data's TCP state starts as without the handshake (its RTT estimate from
the base RTT: the SYN's sample is not taken). Handshake segments count in ``handshake_retransmissions`` and
``handshake_drops``, not in the data's counters, and carry no SACK option or TCP options.

Simplifications (besides those of :mod:`qosbound.validation.tcp`):

* Access links are infinitely fast (no serialization, no queue) unless node uplinks are set, and ACKs
  never queue there unless ``ack_uplink_of`` sends them through one; otherwise only the two bottleneck directions
  queue. ns-3 runs 1 Gbit/s access
  links (12 us per 1500-byte packet).
* A class is policed only by colour (its flows' markers); there is no class-level token bucket (Cisco's
  LLQ polices the priority class only under congestion; here a marker polices it always).
* Data segments are ``mss + header`` bytes on the wire (``header`` 42 by default: PPP 2 + IPv4 20 + TCP 20,
  no timestamps); ACKs are ``header`` bytes plus the SACK option (4 + 8 per block, padded).
* Flows start at ``starts[i]`` (default: independent uniform in [0, ``start_spread``)) with no
  handshake (ns-3 spends one RTT on SYN / SYN-ACK first), unless ``handshake`` is set (below).
* No receive-window dynamics: ``rwnd`` segments is a fixed cap (the receiver's buffer is never
  the limit in ns-3's runs either: its buffers are set to the same size).

Measured over [``warmup``, ``duration``] (per flow): goodput = distinct payload bytes delivered in
order to the receiving application; throughput = payload bytes of every data segment that
reached the receiver (retransmissions and duplicates included); the bottleneck's data arrivals,
queue drops and random losses; ACKs sent, dropped and delivered; segments sent, retransmitted,
timeouts, fast recoveries (whole run, and in the window); the time-average and largest ``cwnd``; the
time-average ``srtt``. A finite file's completion time is from its flow's start to when its last segment reached
the receiver in order.

Packet record (``trace``: source names ``"tcp<i>"``, ``"tfrc<j>"`` or a TFRC flow's name, ``"udp<u>"`` or a
source's name, or ``"*"`` for all): one row per data packet of those sources (not ACKs or feedback) with its send
time, its arrival at the bottleneck queue, its departure (last bit on the wire; nan when dropped), and its arrival
at the receiver (``RunResult.trace``, :class:`PacketTrace`; :meth:`PacketTrace.table` gives the one trace schema).

Speed: the event loop (:mod:`qosbound.validation.dumbbell_loop`) is one numba function over an array heap; a
FIFO's departures are computed when a packet is admitted (no departure events), so a data segment costs two events
(arrival at R1, arrival at the receiver) and an ACK one (arrival at the sender: the receiver hands it to R2's queue
at once), with one pending delayed-ACK and retransmission timer event per flow. ``benchmarks/bench_tcp.py``
measures it beside ns-3 on the same dumbbell (docs/benchmarks.md).

The modules: :mod:`qosbound.validation.dumbbell_config` (the network as data),
:mod:`qosbound.validation.dumbbell_arrays` (the network as the event loop's arrays),
:mod:`qosbound.validation.dumbbell_loop` (the event loop), :mod:`qosbound.validation.dumbbell_results` (what a run
measured); this one runs them in turn.
"""

from __future__ import annotations

import time

import numpy as np

from qosbound.validation.dumbbell_arrays import kernel_inputs
from qosbound.validation.dumbbell_config import HEADER, UDP_KINDS, Class, Dumbbell, Marker, Queue, Tfrc, Udp
from qosbound.validation.dumbbell_loop import run
from qosbound.validation.dumbbell_results import (ClassStats, FlowStats, PacketTrace, RunResult, TfrcStats, UdpStats,
                                                  read_out)

__all__ = ["Queue", "Marker", "Class", "Udp", "Tfrc", "Dumbbell", "FlowStats", "ClassStats", "UdpStats", "TfrcStats",
           "PacketTrace", "RunResult", "simulate", "replicate", "HEADER", "UDP_KINDS"]


def simulate(net: Dumbbell, seed: int = 1) -> RunResult:
    """One run of the dumbbell (see the module docstring); ``ValueError`` names a bad parameter."""
    inputs, layout = kernel_inputs(net, seed)
    t0, c0 = time.perf_counter(), time.thread_time()
    returned = run(*inputs)
    wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
    error = returned[2]
    if error:
        raise RuntimeError(("packet pool exhausted", "event heap full", "open-loop delay record full")[error - 1])
    return read_out(net, inputs, layout, returned, wall, cpu)


def replicate(net: Dumbbell, replications: int, seed: int = 1) -> list[RunResult]:
    """Independent replications (seeds derived from ``seed``; start times drawn per replication)."""
    seeds = np.random.SeedSequence(seed).generate_state(replications)
    return [simulate(net, int(s)) for s in seeds]
