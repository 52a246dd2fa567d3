"""ns-3 as the independent reference: the scenarios ns-3 can express, run in a subprocess, traced per packet.

Two topologies, both one point-to-point link (propagation delay 0, ``Mtu``
2000 so no packet is fragmented) from a sending node to a receiving node:

* ``pq``: strict priority. The sender's root queue disc is ``ns3::PrioQueueDisc``
  with two ``FifoQueueDisc`` bands (EF: ``pq_capacity`` packets, BE:
  ``be_capacity`` packets); EF is sent with ToS 0xb8 (socket priority 4, mapped
  to band 0 by the priomap), BE with ToS 0. The device's own
  ``DropTailQueue`` of ``device_queue`` packets plays the transmission queue:
  it holds up to ``device_queue`` waiting packets *plus* the one on the wire,
  so it matches qosbound's transmission queue with ``Q_t = device_queue + 1``
  and a unit size no smaller than the largest packet (each packet one unit).
* ``red``: ``ns3::RedQueueDisc`` (packet mode, gentle off, ECN off) as the
  root queue disc, over a device queue of one packet.

Traffic is UDP from raw sockets driven by a small C++ sender: the packet
send times and sizes are drawn in Python (NumPy, seeded) and handed to ns-3,
so CBR, Poisson and saturated best effort are all exactly what was asked.
Sizes are bytes on the wire: UDP payload = size - 30 (PPP 2 + IPv4 20 + UDP 8).
Each payload starts with a 32-bit sequence number. Departures come from the
sender device's ``PhyTxEnd`` trace source (the last bit left the wire); drops
from the root queue disc's ``Drop`` trace source (child drops reach it). The
runner checks that the two agree (every packet either left the wire or was
counted as a drop) and, as a second witness, that the receiving socket saw
each packet at its ``PhyTxEnd`` time (zero propagation delay). Every source
stops at ``duration`` and the run continues until the queues are empty, so
no packet is left in flight.

ns-3 runs in a child Python process (``python -m qosbound.validation.ns3_runner``):
a fatal ns-3 error (an ``NS_FATAL_ERROR`` aborts the process) cannot kill the
caller; it becomes an :class:`EngineError` carrying the end of ns-3's output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from qosbound.errors import EngineError, ScenarioError
from qosbound.validation.trace import make_table

__all__ = ["PqConfig", "RedConfig", "available", "run_pq", "run_red", "pq_config_from_params", "device_queue_packets",
           "send_schedule", "HEADER_BYTES"]

#: PPP (2) + IPv4 (20) + UDP (8) bytes added to each UDP payload on the wire.
HEADER_BYTES = 30
_MIN_WIRE = HEADER_BYTES + 4


@dataclass
class PqConfig:
    """A strict-priority run: link, queues, EF and saturated BE traffic (SI units)."""

    rate: float  # link rate, bit/s
    device_queue: int  # ns-3 device queue, packets (qosbound Q_t = device_queue + 1)
    pq_capacity: int  # EF band, packets
    ef_size: int  # EF packet on the wire, bytes
    ef_rate: float  # EF wire rate, bit/s
    arrivals: str = "poisson"  # or "cbr"
    be_sizes: list = field(default_factory=lambda: [1500])  # bytes on the wire
    be_probs: list = field(default_factory=lambda: [1.0])
    be_capacity: int = 64  # BE band, packets
    be_load: float = 1.2  # BE offered load / link rate (> 1: saturated)
    duration: float = 10.0  # s of sending
    seed: int = 1


@dataclass
class RedConfig:
    """A single-colour RED run: Poisson arrivals of one packet size into RedQueueDisc."""

    rate: float  # link rate, bit/s
    size: int  # bytes on the wire
    load: float  # offered load / link rate
    min_th: float  # packets
    max_th: float  # packets
    max_p: float  # 1 / LInterm
    weight: float  # EWMA weight QW
    capacity: int = 1000  # hard limit, packets
    duration: float = 10.0
    seed: int = 1


def available() -> bool:
    """True when the ns3 wheel can be imported (checked without importing it: that takes seconds)."""
    import importlib.util

    return importlib.util.find_spec("ns") is not None


# ----------------------------------------------------------------------------------------------- schedules

def send_schedule(rng: np.random.Generator, rate_pps: float, duration: float, kind: str) -> np.ndarray:
    """Send times in [0, duration): 'cbr' (random phase) or 'poisson'."""
    if kind == "cbr":
        return rng.uniform(0, 1 / rate_pps) + np.arange(0, duration, 1 / rate_pps)
    if kind == "poisson":
        n = int(rate_pps * duration * 1.2 + 10 * np.sqrt(rate_pps * duration) + 10)
        t = np.cumsum(rng.exponential(1 / rate_pps, n))
        while t[-1] < duration:
            t = np.concatenate([t, t[-1] + np.cumsum(rng.exponential(1 / rate_pps, n))])
        return t[t < duration]
    raise ScenarioError(f"ns-3 runs support cbr and poisson arrivals, not {kind!r}", field="traffic.EF.arrivals")


def device_queue_packets(Q_t: int, k_max: int, unit: float, field: str = "txq") -> int:
    """The ns-3 device queue (packets) that plays a tx-ring of ``Q_t`` units whose largest packet takes ``k_max``
    units of ``unit`` bytes: ``Q_t - 1`` waiting packets plus the one on the wire (ns-3's point-to-point device
    takes the packet it transmits out of its queue; qosbound's ring holds it until its last bit has left). The
    same queue only when every packet takes one unit; otherwise a ScenarioError under ``field`` says so."""
    if k_max > 1:
        raise ScenarioError(f"ns-3 counts its device queue in packets; this scenario has packets of up to "
                            f"{k_max} units of {unit:g} B. Set txq.unit_size to at least the largest packet "
                            "size for an ns-3 comparison", field=f"{field}.unit_size")
    if Q_t < 2:
        raise ScenarioError("ns-3 needs a device queue of at least one packet: txq.units >= 2",
                            field=f"{field}.units")
    return Q_t - 1


def pq_config_from_params(p, *, duration: float = 10.0, seed: int = 1, be_capacity: int = 64) -> PqConfig:
    """The ns-3 counterpart of a pq_txq scenario (``qosbound.systems.pq_txq.params.Params``).

    ns-3 counts the transmission queue in packets; the scenario's ``Q_t`` units
    become a device queue of ``Q_t - 1`` packets (+ 1 on the wire). This is the
    same queue only when every packet fits one unit (unit size >= largest
    packet); otherwise the runs differ and the caller is told so.
    """
    return PqConfig(rate=p.C, device_queue=device_queue_packets(p.Q_t, p.k_max, p.unit),
                    pq_capacity=p.pq_cap, ef_size=int(round(p.ef_size)),
                    ef_rate=p.ef_rate, arrivals=p.arrivals, be_sizes=[int(round(s)) for s in p.be_sizes],
                    be_probs=[float(x) for x in p.be_probs], be_capacity=be_capacity, duration=duration,
                    seed=seed)


def _pq_inputs(cfg: PqConfig):
    rng = np.random.default_rng(cfg.seed)
    sizes = [cfg.ef_size] + list(cfg.be_sizes)
    if min(sizes) < _MIN_WIRE or max(sizes) > 1900:
        raise ScenarioError(f"ns-3 runs need wire sizes in [{_MIN_WIRE}, 1900] bytes", field="traffic")
    ef_t = send_schedule(rng, cfg.ef_rate / (8.0 * cfg.ef_size), cfg.duration, cfg.arrivals)
    mean_be = float(np.dot(cfg.be_sizes, cfg.be_probs))
    be_rate = cfg.be_load * cfg.rate / (8.0 * mean_be)
    be_t = send_schedule(rng, be_rate, cfg.duration, "poisson")
    be_s = rng.choice(np.asarray(cfg.be_sizes, dtype=np.int64), size=len(be_t), p=np.asarray(cfg.be_probs))
    ef_s = np.full(len(ef_t), cfg.ef_size, dtype=np.int64)
    return ef_t, ef_s, be_t, be_s


# ----------------------------------------------------------------------------------------------- parent side

def run_child(kind: str, cfg, timeout: float, module: str = "qosbound.validation.ns3_runner"):
    if not available():
        raise EngineError("ns-3 is not installed: pip install 'qosbound[ns3]' (the ns3 wheel, Linux only)")
    with tempfile.TemporaryDirectory(prefix="qosbound-ns3-") as tmp:
        cfg_path = Path(tmp) / "config.json"
        cfg_path.write_text(json.dumps({"kind": kind, "config": cfg if isinstance(cfg, dict) else asdict(cfg)}))
        cmd = [sys.executable, "-m", module, str(cfg_path), tmp]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  env={**os.environ, "PYTHONWARNINGS": "ignore"})
        except subprocess.TimeoutExpired:
            raise EngineError(f"ns-3 did not finish within {timeout:g} s") from None
        if proc.returncode != 0:
            tail = [ln for ln in (proc.stderr + proc.stdout).splitlines() if "runStaticInitializersOnce" not in ln]
            raise EngineError(f"ns-3 failed (exit {proc.returncode}): {' | '.join(tail[-4:])[:400]}")
        info = json.loads((Path(tmp) / "info.json").read_text())
        data = np.load(Path(tmp) / "trace.npz")
        return {k: data[k] for k in data.files}, info


def run_pq(cfg: PqConfig, *, timeout: float = 900.0):
    """Run the strict-priority topology in ns-3; returns (trace table, info dict)."""
    d, info = run_child("pq", cfg, timeout)
    n_ef = int(info["ef_packets"])
    cls = np.where(np.arange(len(d["tx"])) < n_ef, "EF", "BE")
    dropped = d["rx"] < 0
    table = make_table(flow=cls, cls=cls, size=d["size"], arrival=d["tx"],
                       departure=np.where(dropped, np.nan, d["rx"]), dropped=dropped)
    return table, info


def run_red(cfg: RedConfig, *, timeout: float = 900.0):
    """Run the RED topology in ns-3; returns (trace table, info dict)."""
    d, info = run_child("red", cfg, timeout)
    dropped = d["rx"] < 0
    table = make_table(flow="AF1", cls="AF1", size=d["size"], arrival=d["tx"],
                       departure=np.where(dropped, np.nan, d["rx"]), dropped=dropped)
    return table, info


# ----------------------------------------------------------------------------------------------- child side

_CPP = r"""
#include <chrono>
#include <cstring>
namespace qbns {
using namespace ns3;

struct Flow {
  Ptr<Socket> sock;
  std::vector<double> t;
  std::vector<uint32_t> size;
  uint32_t first;
  size_t i = 0;
};

static std::vector<double> g_tx, g_rx, g_end;
static uint64_t g_drops = 0;

static void Send(Flow* f) {
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

// Trace source PointToPointNetDevice::PhyTxEnd: the last bit of a packet left the wire.
// The packet carries its PPP (2), IPv4 (20) and UDP (8) headers here; the sequence number follows.
static void TxEnd(Ptr<const Packet> p) {
  if (p->GetSize() < 34) return;
  uint8_t b[34];
  p->CopyData(b, 34);
  uint32_t seq;
  std::memcpy(&seq, b + 30, 4);
  if (seq < g_end.size()) g_end[seq] = Simulator::Now().GetSeconds();
}

// Trace source QueueDisc::Drop (root queue disc; child drops are reported through it).
static void QdDrop(Ptr<const QueueDiscItem> item) { g_drops++; }

static void Recv(Ptr<Socket> s) {
  Ptr<Packet> p;
  Address from;
  while ((p = s->RecvFrom(from))) {
    uint32_t seq;
    p->CopyData((uint8_t*)&seq, 4);
    g_rx[seq] = Simulator::Now().GetSeconds();
  }
}

// mode 0: PrioQueueDisc (EF band 0, BE band 1); mode 1: RedQueueDisc.
double Run(int mode, double rate, uint32_t devq, uint32_t cap0, uint32_t cap1,
           double minth, double maxth, double qw, double linterm, uint32_t meansize,
           Flow* f0, Flow* f1, double stop) {
  uint32_t n = f0->t.size() + (f1 ? f1->t.size() : 0);
  g_tx.assign(n, -1.0);
  g_rx.assign(n, -1.0);
  g_end.assign(n, -1.0);
  g_drops = 0;
  NodeContainer nodes;
  nodes.Create(2);
  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate((uint64_t)rate)));
  p2p.SetDeviceAttribute("Mtu", UintegerValue(2000));
  p2p.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
  p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, devq)));
  NetDeviceContainer devs = p2p.Install(nodes);
  InternetStackHelper stack;
  stack.Install(nodes);
  TrafficControlHelper tch;
  if (mode == 0) {
    uint16_t h = tch.SetRootQueueDisc("ns3::PrioQueueDisc", "Priomap",
                                      StringValue("1 1 1 1 0 1 1 1 1 1 1 1 1 1 1 1"));
    TrafficControlHelper::ClassIdList cid = tch.AddQueueDiscClasses(h, 2, "ns3::QueueDiscClass");
    tch.AddChildQueueDisc(h, cid[0], "ns3::FifoQueueDisc", "MaxSize",
                          QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, cap0)));
    tch.AddChildQueueDisc(h, cid[1], "ns3::FifoQueueDisc", "MaxSize",
                          QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, cap1)));
  } else {
    tch.SetRootQueueDisc("ns3::RedQueueDisc", "MinTh", DoubleValue(minth), "MaxTh", DoubleValue(maxth),
                         "QW", DoubleValue(qw), "LInterm", DoubleValue(linterm),
                         "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, cap0)),
                         "MeanPktSize", UintegerValue(meansize), "Gentle", BooleanValue(false),
                         "LinkBandwidth", DataRateValue(DataRate((uint64_t)rate)),
                         "LinkDelay", TimeValue(Seconds(0)));
  }
  QueueDiscContainer qdiscs = tch.Install(devs.Get(0));
  qdiscs.Get(0)->TraceConnectWithoutContext("Drop", MakeCallback(&QdDrop));
  devs.Get(0)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&TxEnd));
  Ipv4AddressHelper addr;
  addr.SetBase("10.1.1.0", "255.255.255.0");
  Ipv4InterfaceContainer ifs = addr.Assign(devs);
  Ptr<Socket> rx = Socket::CreateSocket(nodes.Get(1), UdpSocketFactory::GetTypeId());
  rx->Bind(InetSocketAddress(Ipv4Address::GetAny(), 9));
  rx->SetRecvCallback(MakeCallback(&Recv));
  Flow* flows[2] = {f0, f1};
  for (int k = 0; k < 2; ++k) {
    Flow* f = flows[k];
    if (!f || f->t.empty()) continue;
    f->sock = Socket::CreateSocket(nodes.Get(0), UdpSocketFactory::GetTypeId());
    f->sock->SetIpTos(k == 0 && mode == 0 ? 0xb8 : 0);
    f->sock->Connect(InetSocketAddress(ifs.GetAddress(1), 9));
    f->i = 0;
    Simulator::Schedule(Seconds(f->t[0]), &Send, f);
  }
  Simulator::Stop(Seconds(stop));
  auto t0 = std::chrono::steady_clock::now();
  Simulator::Run();
  auto t1 = std::chrono::steady_clock::now();
  Simulator::Destroy();
  return std::chrono::duration<double>(t1 - t0).count();
}

std::vector<double>& Tx() { return g_tx; }
std::vector<double>& Rx() { return g_rx; }
std::vector<double>& End() { return g_end; }
uint64_t Drops() { return g_drops; }
}
"""


def _child(cfg_path: str, out_dir: str) -> None:
    """Child process: build and run the ns-3 topology, write trace.npz and info.json."""
    doc = json.loads(Path(cfg_path).read_text())
    kind = doc["kind"]
    t_start = time.perf_counter()
    from ns import ns  # noqa: F401  (loads the ns-3 libraries and headers)
    import cppyy

    cppyy.cppdef(_CPP)
    g = cppyy.gbl.qbns
    t_loaded = time.perf_counter()

    def flow(times, sizes, first):
        f = g.Flow()
        f.t = cppyy.gbl.std.vector["double"](np.asarray(times, dtype=np.float64).tolist())
        f.size = cppyy.gbl.std.vector["uint32_t"](np.asarray(sizes, dtype=np.int64).tolist())
        f.first = first
        return f

    if kind == "pq":
        cfg = PqConfig(**doc["config"])
        ef_t, ef_s, be_t, be_s = _pq_inputs(cfg)
        f0, f1 = flow(ef_t, ef_s, 0), flow(be_t, be_s, len(ef_t))
        drain = (cfg.pq_capacity + cfg.be_capacity + cfg.device_queue + 2) * 1900 * 8 / cfg.rate + 1.0
        wall = g.Run(0, cfg.rate, cfg.device_queue, cfg.pq_capacity, cfg.be_capacity, 0, 0, 0, 1, 1,
                     f0, f1, cfg.duration + drain)
        sizes = np.concatenate([ef_s, be_s])
        info = {"ef_packets": len(ef_t), "be_packets": len(be_t)}
    else:
        cfg = RedConfig(**doc["config"])
        rng = np.random.default_rng(cfg.seed)
        t = send_schedule(rng, cfg.load * cfg.rate / (8.0 * cfg.size), cfg.duration, "poisson")
        s = np.full(len(t), cfg.size, dtype=np.int64)
        f0 = flow(t, s, 0)
        drain = (cfg.capacity + 2) * cfg.size * 8 / cfg.rate + 1.0
        wall = g.Run(1, cfg.rate, 1, cfg.capacity, 0, cfg.min_th, cfg.max_th, cfg.weight, 1.0 / cfg.max_p,
                     cfg.size, f0, cppyy.nullptr, cfg.duration + drain)
        sizes = s
        info = {"packets": len(t)}
    tx = np.array(g.Tx())
    rx = np.array(g.Rx())
    end = np.array(g.End())
    if (tx < 0).any():
        raise SystemExit("ns-3 run ended before every packet was sent")
    sent_not_left = int((end < 0).sum())
    if sent_not_left != int(g.Drops()):
        raise SystemExit(f"ns-3 trace sources disagree: {sent_not_left} packets never left the wire but the queue "
                         f"disc reported {int(g.Drops())} drops")
    both = (end >= 0) & (rx >= 0)
    np.savez(Path(out_dir) / "trace.npz", tx=tx, rx=end, size=sizes)
    info.update(packets_total=int(len(tx)), run_seconds=float(wall), load_seconds=float(t_loaded - t_start),
                ns3_version="3.44", drops_traced=int(g.Drops()),
                max_rx_minus_txend=float(np.max(np.abs(rx[both] - end[both]))) if both.any() else 0.0,
                received_not_transmitted=int(((rx >= 0) & (end < 0)).sum()))
    (Path(out_dir) / "info.json").write_text(json.dumps(info))


if __name__ == "__main__":  # pragma: no cover - runs in the child process
    _child(sys.argv[1], sys.argv[2])
