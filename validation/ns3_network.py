"""ns-3 as the independent simulator of a network of ports: one ns-3 node per network node, one point-to-point
link per port, each port's classes as a traffic-control queue disc, run in a subprocess and traced per packet.

The topology (what :func:`run_network` builds from a :class:`NetConfig`, every replication in one child process):

* **Nodes and links.** One ns-3 node per network node; port ``a->b`` is one ``PointToPointHelper`` link from
  node ``a`` to node ``b`` with the port's rate (``DataRate``) and propagation delay (``Delay``), ``Mtu`` 2000
  (no fragmentation). Its ``a``-side device is the port (a link per port: the reverse device of each link
  carries nothing).
* **The port.** Its root queue disc is ``ns3::PrioQueueDisc`` with two ``FifoQueueDisc`` bands (band 0: the
  priority class, band 1: the other class, each of its class's ``queue_limit`` packets) over the device's own
  ``DropTailQueue`` of ``device_queue`` packets, which plays the tx-ring: it holds that many waiting packets plus
  the one on the wire, the mapping of :func:`qosbound.validation.ns3_runner.device_queue_packets` (the port
  system's). Flow control between the queue disc and the device queue is ns-3's default (on; BQL off).
* **Classification.** A flow in the priority class sends with ToS 0xb8 (socket priority 4, band 0 by the
  priomap), any other with ToS 0. The socket's priority travels with the packet as a packet tag, which a
  forwarding node keeps, so every port of the path puts the packet in the same band (checked per run: each
  port's bands count what they enqueued, and the counts must be those the routes give).
* **Routing.** Each flow gets its own destination address (a /32 added to the interface of the last link at its
  destination node) and a static host route to it at every node of its path, so a flow follows its own path
  whatever the other flows' routes.
* **Traffic** is UDP from raw sockets driven by a small C++ sender, one socket per flow at its first node: the
  send times and sizes are drawn in Python (:func:`qosbound.validation.ns3_runner.send_schedule`: CBR calls with
  independent uniform phases, Poisson; sizes per packet from the flow's law) and handed to ns-3. Sizes are bytes
  on the wire: UDP payload = size - 30 (PPP 2 + IPv4 20 + UDP 8), the payload starting with a 32-bit sequence
  number. A **saturated** flow is offered at ``SATURATION`` times its first link's rate, Poisson, into its band
  (of its class's queue limit ``Q`` at its first port), which then stays non-empty: from full, Poisson arrivals
  at twice the rate the band is served at empty it before refilling it with probability about ``2^-Q`` (a random
  walk stepping up with probability 2/3), 5e-20 for the usual 64 packets.
* **Timestamps.** A packet's first arrival is its send time (the socket hands it to the first port's queue disc
  at once); its delivery is the receiving socket's time, at which ns-3's point-to-point channel hands over a
  packet: its transmission time plus the propagation delay after its transmission started, i.e. the **last bit
  at the destination**. Every source stops at ``duration`` and the run goes on until every queue is empty; a
  packet never delivered was dropped, and the runner checks that the packets not delivered are exactly those
  the queue discs report dropped.

ns-3 runs in a child Python process (``python -m qosbound.validation.ns3_network``), so a fatal ns-3 error cannot
kill the caller; it becomes an :class:`EngineError` carrying the end of ns-3's output.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from qosbound.errors import ScenarioError
from qosbound.validation.ns3_runner import HEADER_BYTES, run_child, send_schedule

__all__ = ["NetConfig", "PortSpec", "FlowSpec", "run_network", "SATURATION", "PRIORITY_TOS"]

#: A saturated flow's offered load at its first port, in units of that port's link rate.
SATURATION = 2.0
#: The ToS byte of a priority-class flow (EF); socket priority 4, band 0 by the priomap below.
PRIORITY_TOS = 0xB8
_PRIOMAP = "1 1 1 1 0 1 1 1 1 1 1 1 1 1 1 1"
_MIN_WIRE = HEADER_BYTES + 4
_MAX_WIRE = 1900


@dataclass
class PortSpec:
    """Port ``a->b`` (node indices): link rate (bit/s), propagation delay (s), device queue (packets) and its two
    bands' capacities (packets; band 0 the priority class)."""

    a: int
    b: int
    rate: float
    delay: float
    device_queue: int
    bands: list  # [priority band, other band], packets


@dataclass
class FlowSpec:
    """A flow: its ports in order (indices into the ports), its band (0: priority), and its sources at the first
    port, each a dict: ``kind`` 'cbr', 'poisson' or 'saturated', ``rate`` (bit/s per copy), ``count`` copies,
    ``sizes`` (bytes on the wire) and their ``probs``."""

    ports: list
    band: int
    sources: list


@dataclass
class NetConfig:
    """Nodes, ports, flows, ``duration`` of sending (s), ``replications`` and the seed of the traffic draws."""

    nodes: int
    ports: list = field(default_factory=list)
    flows: list = field(default_factory=list)
    duration: float = 10.0
    replications: int = 2
    seed: int = 1


def _draws(cfg: NetConfig, r: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Replication ``r``'s send times (s) and wire sizes (B) of every flow (generator ``[seed, r, k]`` for flow
    ``k``: the replications' and flows' draws independent)."""
    out = []
    for k, f in enumerate(cfg.flows):
        rng = np.random.default_rng([int(cfg.seed), r, k])
        ts, ss = [], []
        for src in f["sources"]:
            mean = float(np.dot(src["sizes"], src["probs"]))
            if src["kind"] == "saturated":
                rate = SATURATION * cfg.ports[f["ports"][0]]["rate"]
                t = send_schedule(rng, rate / (8.0 * mean), cfg.duration, "poisson")
            else:
                t = np.concatenate([send_schedule(rng, src["rate"] / (8.0 * mean), cfg.duration, src["kind"])
                                    for _ in range(int(src["count"]))])
            ts.append(t)
            ss.append(rng.choice(np.asarray(src["sizes"], dtype=np.int64), size=len(t), p=np.asarray(src["probs"])))
        t, s = np.concatenate(ts), np.concatenate(ss)
        o = np.argsort(t, kind="stable")
        out.append((t[o], s[o]))
    return out


def run_network(cfg: NetConfig, *, timeout: float = 1800.0) -> tuple[list[list[dict]], dict]:
    """Run every replication of the network in ns-3 (one child process). Returns, per replication and flow, a
    dict of the flow's packets: ``send`` (s, its first arrival), ``recv`` (s, the last bit at its destination;
    NaN when dropped) and ``size`` (B); and an info dict (ns-3's wall-clock time, checks)."""
    for f in cfg.flows:
        sizes = [z for src in f.sources for z in src["sizes"]]
        if min(sizes) < _MIN_WIRE or max(sizes) > _MAX_WIRE:
            raise ScenarioError(f"ns-3 runs need wire sizes in [{_MIN_WIRE}, {_MAX_WIRE}] bytes", field="flows")
    doc = asdict(cfg)
    d, info = run_child("network", doc, timeout, module="qosbound.validation.ns3_network")
    reps = []
    for r in range(cfg.replications):
        flows = []
        for k in range(len(cfg.flows)):
            key = f"{r}_{k}"
            recv = d[f"recv_{key}"]
            flows.append({"send": d[f"send_{key}"], "recv": np.where(recv < 0, np.nan, recv),
                          "size": d[f"size_{key}"]})
        reps.append(flows)
    return reps, info


# ----------------------------------------------------------------------------------------------- child side

_CPP = r"""
#include <chrono>
#include <cstring>
namespace qbnet {
using namespace ns3;

struct Src {
  Ptr<Socket> sock;
  std::vector<double> t;
  std::vector<uint32_t> size;
  uint32_t first;
  size_t i = 0;
};

static std::vector<double> g_tx, g_rx;
static uint64_t g_drops = 0;
static std::vector<uint64_t> g_band;  // per port and band: packets enqueued

static void Send(Src* f) {
  uint32_t seq = f->first + (uint32_t)f->i;
  uint32_t payload = f->size[f->i] - 30;
  std::vector<uint8_t> buf(payload, 0);
  std::memcpy(buf.data(), &seq, 4);
  g_tx[seq] = Simulator::Now().GetSeconds();
  f->sock->Send(Create<Packet>(buf.data(), payload));
  f->i++;
  if (f->i < f->t.size()) {
    Simulator::Schedule(Seconds(f->t[f->i]) - Simulator::Now(), &Send, f);
  }
}

static void Recv(Ptr<Socket> s) {
  Ptr<Packet> p;
  Address from;
  while ((p = s->RecvFrom(from))) {
    uint32_t seq;
    p->CopyData((uint8_t*)&seq, 4);
    if (seq < g_rx.size()) g_rx[seq] = Simulator::Now().GetSeconds();
  }
}

static void QdDrop(Ptr<const QueueDiscItem> item) { g_drops++; }

struct BandCount {
  size_t slot;
  void Enq(Ptr<const QueueDiscItem> item) { g_band[slot]++; }
};

// ports: a, b (node indices), rate (bit/s), delay (s), devq, cap0, cap1 per port.
// flows: their port lists (flat, with offsets), band, and sources.
double Run(uint32_t nnodes, std::vector<uint32_t> pa, std::vector<uint32_t> pb, std::vector<double> rate,
           std::vector<double> delay, std::vector<uint32_t> devq, std::vector<uint32_t> cap0,
           std::vector<uint32_t> cap1, std::vector<uint32_t> fports, std::vector<uint32_t> foff,
           std::vector<uint32_t> fband, std::vector<Src*> srcs, uint32_t npackets, double stop) {
  g_tx.assign(npackets, -1.0);
  g_rx.assign(npackets, -1.0);
  g_drops = 0;
  size_t P = pa.size();
  g_band.assign(2 * P, 0);
  Ipv4AddressGenerator::Reset();
  NodeContainer nodes;
  nodes.Create(nnodes);
  InternetStackHelper stack;
  stack.Install(nodes);
  std::vector<NetDeviceContainer> devs(P);
  std::vector<Ipv4InterfaceContainer> ifs(P);
  std::vector<BandCount*> counters;
  Ipv4AddressHelper addr;
  addr.SetBase("10.0.0.0", "255.255.255.252");
  for (size_t p = 0; p < P; ++p) {
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate((uint64_t)rate[p])));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(2000));
    p2p.SetChannelAttribute("Delay", TimeValue(Seconds(delay[p])));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
                 QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, devq[p])));
    devs[p] = p2p.Install(nodes.Get(pa[p]), nodes.Get(pb[p]));
    TrafficControlHelper tch;
    uint16_t h = tch.SetRootQueueDisc("ns3::PrioQueueDisc", "Priomap", StringValue(PRIOMAP));
    TrafficControlHelper::ClassIdList cid = tch.AddQueueDiscClasses(h, 2, "ns3::QueueDiscClass");
    tch.AddChildQueueDisc(h, cid[0], "ns3::FifoQueueDisc", "MaxSize",
                          QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, cap0[p])));
    tch.AddChildQueueDisc(h, cid[1], "ns3::FifoQueueDisc", "MaxSize",
                          QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, cap1[p])));
    QueueDiscContainer qd = tch.Install(devs[p].Get(0));
    qd.Get(0)->TraceConnectWithoutContext("Drop", MakeCallback(&QdDrop));
    for (uint32_t band = 0; band < 2; ++band) {
      BandCount* c = new BandCount();
      c->slot = 2 * p + band;
      counters.push_back(c);
      qd.Get(0)->GetQueueDiscClass(band)->GetQueueDisc()->TraceConnectWithoutContext(
          "Enqueue", MakeCallback(&BandCount::Enq, c));
    }
    ifs[p] = addr.Assign(devs[p]);
    addr.NewNetwork();
  }
  // one destination address per flow, a host route to it at every node of its path
  Ipv4StaticRoutingHelper srh;
  std::vector<Ptr<Socket>> sinks(nnodes);
  size_t F = fband.size();
  for (size_t k = 0; k < F; ++k) {
    uint32_t last = fports[foff[k + 1] - 1];
    Ipv4Address dst(((uint32_t)172 << 24) | ((uint32_t)16 << 16) | (uint32_t)(k + 1));
    Ptr<Node> dn = nodes.Get(pb[last]);
    Ptr<Ipv4> dip = dn->GetObject<Ipv4>();
    int32_t dif = dip->GetInterfaceForDevice(devs[last].Get(1));
    dip->AddAddress(dif, Ipv4InterfaceAddress(dst, Ipv4Mask("255.255.255.255")));
    for (uint32_t j = foff[k]; j < foff[k + 1]; ++j) {
      uint32_t p = fports[j];
      Ptr<Ipv4> ip = nodes.Get(pa[p])->GetObject<Ipv4>();
      int32_t oif = ip->GetInterfaceForDevice(devs[p].Get(0));
      srh.GetStaticRouting(ip)->AddHostRouteTo(dst, ifs[p].GetAddress(1), oif);
    }
    if (!sinks[pb[last]]) {
      Ptr<Socket> rx = Socket::CreateSocket(dn, UdpSocketFactory::GetTypeId());
      rx->Bind(InetSocketAddress(Ipv4Address::GetAny(), 9));
      rx->SetRecvCallback(MakeCallback(&Recv));
      sinks[pb[last]] = rx;
    }
    Src* f = srcs[k];
    if (f->t.empty()) continue;
    f->sock = Socket::CreateSocket(nodes.Get(pa[fports[foff[k]]]), UdpSocketFactory::GetTypeId());
    f->sock->SetIpTos(fband[k] == 0 ? PRIORITY_TOS : 0);
    f->sock->Connect(InetSocketAddress(dst, 9));
    f->i = 0;
    Simulator::Schedule(Seconds(f->t[0]), &Send, f);
  }
  Simulator::Stop(Seconds(stop));
  auto t0 = std::chrono::steady_clock::now();
  Simulator::Run();
  auto t1 = std::chrono::steady_clock::now();
  Simulator::Destroy();
  for (BandCount* c : counters) delete c;
  return std::chrono::duration<double>(t1 - t0).count();
}

std::vector<double>& Tx() { return g_tx; }
std::vector<double>& Rx() { return g_rx; }
uint64_t Drops() { return g_drops; }
std::vector<uint64_t>& Bands() { return g_band; }
}
"""


def _child(cfg_path: str, out_dir: str) -> None:
    """Child process: build and run the ns-3 network once per replication, write trace.npz and info.json."""
    doc = json.loads(Path(cfg_path).read_text())["config"]
    cfg = NetConfig(**doc)
    t_start = time.perf_counter()
    from ns import ns  # noqa: F401  (loads the ns-3 libraries and headers)
    import cppyy

    cppyy.cppdef(_CPP.replace("PRIOMAP", json.dumps(_PRIOMAP)).replace("PRIORITY_TOS", str(PRIORITY_TOS)))
    g = cppyy.gbl.qbnet
    t_loaded = time.perf_counter()
    vec = cppyy.gbl.std.vector
    ports, flows = cfg.ports, cfg.flows
    pv = {key: [p[key] for p in ports] for key in ("a", "b", "rate", "delay", "device_queue")}
    fports, foff = [], [0]
    for f in flows:
        fports += list(f["ports"])
        foff.append(len(fports))
    # the packets each port's bands must see: every packet of a flow sent, less its drops upstream (checked below
    # as an upper bound per band; a band with no flow must see none)
    out, walls, checks = {}, [], []
    largest = max(max(src["sizes"]) for f in flows for src in f["sources"])
    for r in range(cfg.replications):
        draws = _draws(cfg, r)
        srcs, first = [], 0
        for (t, s) in draws:
            src = g.Src()
            src.t = vec["double"](np.asarray(t, dtype=np.float64).tolist())
            src.size = vec["uint32_t"](np.asarray(s, dtype=np.int64).tolist())
            src.first = first
            first += len(t)
            srcs.append(src)
        qsum = sum(sum(p["bands"]) + p["device_queue"] + 1 for p in ports)
        drain = qsum * largest * 8.0 / min(pv["rate"]) + sum(pv["delay"]) + 1.0
        wall = g.Run(cfg.nodes, vec["uint32_t"](pv["a"]), vec["uint32_t"](pv["b"]), vec["double"](pv["rate"]),
                     vec["double"](pv["delay"]), vec["uint32_t"](pv["device_queue"]),
                     vec["uint32_t"]([p["bands"][0] for p in ports]), vec["uint32_t"]([p["bands"][1] for p in ports]),
                     vec["uint32_t"](fports), vec["uint32_t"](foff), vec["uint32_t"]([f["band"] for f in flows]),
                     vec["qbnet::Src*"](srcs), first, cfg.duration + drain)
        walls.append(float(wall))
        tx, rx = np.array(g.Tx()), np.array(g.Rx())
        if (tx < 0).any():
            raise SystemExit("ns-3 run ended before every packet was sent")
        not_received = int((rx < 0).sum())
        if not_received != int(g.Drops()):
            raise SystemExit(f"ns-3 trace sources disagree: {not_received} packets were never received but the "
                             f"queue discs reported {int(g.Drops())} drops")
        bands = np.array(g.Bands(), dtype=np.int64).reshape(-1, 2)
        sent = np.zeros((len(ports), 2), np.int64)
        for k, f in enumerate(flows):
            for p in f["ports"]:
                sent[p, f["band"]] += len(draws[k][0])
        if (bands > sent).any() or ((sent == 0) & (bands > 0)).any():
            raise SystemExit(f"ns-3 classified packets into a band no flow of the routes uses: enqueued {bands.tolist()}"
                             f", at most {sent.tolist()}")
        checks.append({"drops": int(g.Drops()), "enqueued_per_band": bands.tolist()})
        o = 0
        for k, (t, s) in enumerate(draws):
            n = len(t)
            out[f"send_{r}_{k}"] = tx[o:o + n]
            out[f"recv_{r}_{k}"] = rx[o:o + n]
            out[f"size_{r}_{k}"] = np.asarray(s, np.int64)
            o += n
    np.savez(Path(out_dir) / "trace.npz", **out)
    info = {"run_seconds": walls, "load_seconds": float(t_loaded - t_start), "checks": checks,
            "packets": int(sum(len(v) for key, v in out.items() if key.startswith("send_")))}
    (Path(out_dir) / "info.json").write_text(json.dumps(info))


if __name__ == "__main__":  # pragma: no cover - runs in the child process
    _child(sys.argv[1], sys.argv[2])
