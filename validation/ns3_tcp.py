"""The TCP dumbbell of :mod:`qosbound.validation.dumbbell` in ns-3: ns-3's TCP and RED as the independent reference.

The ns-3 network (ns-3.44, driven through its Python bindings in a child process; see
:mod:`qosbound.validation.ns3_runner`): ``n`` sender nodes, routers R1 and R2, ``n`` receiver
nodes. Sender ``i`` -- R1: point-to-point, 1 Gbit/s, delay ``access[i]``; R1 -- R2: the
bottleneck, ``rate`` both ways, delay ``delay``, a one-packet device queue; R2 -- receiver ``i``:
1 Gbit/s, no delay. R1's bottleneck device has ``ns3::RedQueueDisc`` (packet mode, gentle off,
ECN off, ``MinTh``/``MaxTh``/``LInterm = 1/max_p``/``QW = alpha``, ``MaxSize = limit``,
``MeanPktSize`` = the data packet); every other device a ``FifoQueueDisc`` of 1000 packets (no
drops: the ACK path is lossless, as the dumbbell's default reverse queue). Routing: global.

TCP: ``ns3::TcpNewReno`` with SACK on, timestamps off, delayed ACKs every 2nd segment with a
200 ms timer, ``TcpClassicRecovery`` (RFC 6675 recovery with ``cwnd = ssthresh``, no PRR),
limited transmit on (ns-3's default), ``InitialCwnd``, ``MinRto``, ``SegmentSize = mss`` and
socket buffers of ``rwnd`` segments as in the dumbbell. Each flow is a ``BulkSendApplication``
(``MaxBytes`` 0) to a ``PacketSink``, started at the same start time as the dumbbell's flow
(ns-3 then spends one RTT on the handshake).

Measured over [warmup, duration], the same quantities as the dumbbell: goodput per flow (bytes
the ``PacketSink`` received), throughput (payload bytes of the data packets that left R1's
bottleneck device, ``PhyTxEnd``), data arrivals and drops at R1's queue disc (``Enqueue`` and
``Drop`` trace sources), ACKs that entered R2's queue disc, and each sender's time-average
congestion window (``CongestionWindow`` trace, segments). ``packets`` counts, over the whole run,
the packets that entered the two bottleneck queue discs (data at R1, ACKs at R2): the figure the
dumbbell's packet rate uses.

Several replications run in one child (the ns-3 import costs about 10 s): replication ``r`` uses
ns-3's ``RngRun`` = its seed and the start times the dumbbell draws for the same seed.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qosbound.errors import ScenarioError
from qosbound.validation.dumbbell import Dumbbell, simulate
from qosbound.validation.ns3_runner import run_child
from qosbound.validation.stats import welch_samples

__all__ = ["Ns3Run", "config_from", "run", "compare", "Agreement"]


@dataclass
class Ns3Run:
    """One ns-3 replication's measurements (arrays over flows)."""

    goodput: np.ndarray  # bit/s
    throughput: float  # bit/s, all flows
    arrivals: float  # data packets at R1's queue disc, window
    drops: float
    acks: float  # ACKs entering R2's queue disc, window
    cwnd_mean: np.ndarray  # segments
    packets: int  # whole run
    wall: float  # s in Simulator::Run
    cpu: float = float("nan")  # CPU s of the thread in Simulator::Run

    @property
    def loss_rate(self) -> float:
        return self.drops / self.arrivals if self.arrivals else 0.0


def config_from(net: Dumbbell, seeds) -> dict:
    """The JSON document the child reads: the dumbbell's parameters and, per seed, the flows' start times."""
    q = net.fwd
    if q.mode != "wred" or len(set(q.min_th)) != 1 or len(set(q.max_th)) != 1 or len(set(q.max_p)) != 1:
        raise ScenarioError("the ns-3 reference runs one-colour RED on the bottleneck", field="fwd")
    if net.marker or net.ack_marker or net.loss or net.ack_loss or net.files != (-1,) or q.gentle:
        raise ScenarioError("the ns-3 reference runs bulk flows, no markers, no random loss, gentle off")
    starts = []
    for s in seeds:
        rng = np.random.default_rng(int(s))
        starts.append(list(net.starts) if net.starts is not None else rng.uniform(0, net.start_spread, net.n).tolist())
    return {"n": net.n, "rate": net.rate, "rev_rate": net.rev_rate or net.rate, "delay": net.delay,
            "access": list(net.per_flow(net.access, "access")), "mss": net.mss, "init_cwnd": net.init_cwnd,
            "rwnd": net.rwnd, "min_rto": net.min_rto, "delack": net.delack, "min_th": q.min_th[0],
            "max_th": q.max_th[0], "max_p": q.max_p[0], "alpha": q.alpha, "limit": q.limit,
            "duration": net.duration, "warmup": net.warmup, "seeds": [int(s) for s in seeds], "starts": starts}


def run(net: Dumbbell, seeds, *, timeout: float = 1800.0) -> list[Ns3Run]:
    """Run the dumbbell in ns-3 once per seed (one child process); returns one :class:`Ns3Run` per seed."""
    d, info = run_child("tcp", config_from(net, seeds), timeout, module="qosbound.validation.ns3_tcp")
    out = []
    for rep in info["runs"]:
        out.append(Ns3Run(goodput=np.asarray(rep["goodput"]), throughput=rep["throughput"],
                          arrivals=rep["arrivals"], drops=rep["drops"], acks=rep["acks"],
                          cwnd_mean=np.asarray(rep["cwnd_mean"]), packets=rep["packets"], wall=rep["wall"],
                          cpu=rep.get("cpu", float("nan"))))
    return out


# ----------------------------------------------------------------------------------------------- comparison

@dataclass
class Agreement:
    """One statistic compared over replications: means, Welch's t-test and the tolerance check."""

    metric: str
    unit: str
    qosbound: float
    ns3: float
    qosbound_se: float
    ns3_se: float
    rel_diff: float  # (qosbound - ns3) / ns3
    tolerance: float  # relative
    welch_p: float
    agree: bool  # |rel_diff| <= tolerance

    def line(self) -> str:
        return (f"{self.metric:<22} qosbound {self.qosbound:11.5g} +- {self.qosbound_se:<9.3g} ns-3 {self.ns3:11.5g} "
                f"+- {self.ns3_se:<9.3g} {self.unit:<9} diff {100 * self.rel_diff:+6.1f} % "
                f"(tol {100 * self.tolerance:.0f} %)  Welch p {self.welch_p:.3f}  {'agree' if self.agree else 'DISAGREE'}")


#: Relative tolerances for the replication means and why (the models' documented differences):
#: goodput and throughput share a bottleneck both engines keep busy, so they differ only through
#: how often RED empties the queue (about 2 % here); the loss rate and the mean window depend on the
#: details the two TCPs do not share (the handshake, ns-3's access links, SACK block choice, ns-3's
#: cwnd counted in bytes) and on RED's random drops: 25 %, several standard errors of a few short
#: replications at the loss rates of the test scenario (about 1 %, a few hundred drops per run).
TOLERANCE = {"goodput": 0.05, "throughput": 0.05, "loss_rate": 0.25, "cwnd_mean": 0.25, "jain": 0.10}


def _welch(a, b) -> float:
    """Welch's two-sided p-value of equal means (:func:`qosbound.validation.stats.welch_samples`). Without spread
    (fewer than 2 replications, or none varying) there is no test: 1.0 when the means are equal, 0.0 when they
    differ (never NaN, which would reach the printed table)."""
    return welch_samples(a, b).p_value()


def _jain(x) -> float:
    x = np.asarray(x, float)
    return float(x.sum() ** 2 / (len(x) * (x ** 2).sum())) if (x ** 2).sum() > 0 else 1.0


def compare(net: Dumbbell, replications: int = 3, seed: int = 1, *, timeout: float = 1800.0):
    """Replications of the dumbbell in qosbound and in ns-3 (same seeds, same start times); returns
    (list of :class:`Agreement`, qosbound runs, ns-3 runs)."""
    seeds = [int(s) for s in np.random.SeedSequence(seed).generate_state(replications)]
    q = [simulate(net, s) for s in seeds]
    n = run(net, seeds, timeout=timeout)
    per = {
        "goodput": ("bit/s", [r.goodput for r in q], [float(r.goodput.sum()) for r in n]),
        "throughput": ("bit/s", [r.throughput for r in q], [r.throughput for r in n]),
        "loss_rate": ("", [r.loss_rate for r in q], [r.loss_rate for r in n]),
        "cwnd_mean": ("segments", [float(r.flows.cwnd_mean.mean()) for r in q], [float(r.cwnd_mean.mean()) for r in n]),
        "jain": ("", [_jain(r.flows.goodput) for r in q], [_jain(r.goodput) for r in n]),
    }
    out = []
    for k, (unit, a, b) in per.items():
        a, b = np.asarray(a, float), np.asarray(b, float)
        se = lambda x: float(x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("nan")  # noqa: E731
        rel = float((a.mean() - b.mean()) / b.mean()) if b.mean() else float("nan")
        out.append(Agreement(k, unit, float(a.mean()), float(b.mean()), se(a), se(b), rel, TOLERANCE[k],
                             _welch(a, b), bool(abs(rel) <= TOLERANCE[k])))
    return out, q, n


def stalled(goodputs, cwnds, share: float = 0.1) -> int:
    """Flows whose time-average window stayed below 1.5 segments and whose goodput is below ``share`` of
    the fair share: the "one segment per RTO" state ns-3's TCP can stay in after a timeout (see
    docs/validation.md), counted so a comparison reports it rather than hiding it in a mean."""
    g = np.asarray(goodputs, float)
    return int(((np.asarray(cwnds, float) < 1.5) & (g < share * g.sum() / len(g))).sum())


# ----------------------------------------------------------------------------------------------- child side

_CPP = r"""
#include <chrono>
#include <ctime>
namespace qbtcp {
using namespace ns3;

static double g_w0, g_w1;
static std::vector<double> g_cwArea, g_cwVal, g_cwT;
static std::vector<double> g_rx0, g_rx1;
static std::vector<Ptr<PacketSink>> g_sinks;
static std::vector<Ptr<Application>> g_apps;
static double g_thrBytes, g_arr, g_drop, g_acks;
static uint64_t g_pkts;
static double g_cpu;
static uint32_t g_mss;

static bool InWin() { double t = Simulator::Now().GetSeconds(); return t >= g_w0 && t <= g_w1; }

static void Cwnd(uint32_t i, uint32_t oldv, uint32_t newv) {
  double t = Simulator::Now().GetSeconds();
  if (g_cwT[i] < 0) { g_cwT[i] = t; g_cwVal[i] = oldv; }
  double a = std::max(g_cwT[i], g_w0), b = std::min(t, g_w1);
  if (b > a) g_cwArea[i] += g_cwVal[i] / g_mss * (b - a);
  g_cwVal[i] = newv;
  g_cwT[i] = t;
}

static void Hook(uint32_t i) {
  Ptr<Socket> s = DynamicCast<BulkSendApplication>(g_apps[i])->GetSocket();
  s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&Cwnd, i));
}

static void FwdEnq(Ptr<const QueueDiscItem> item) { g_pkts++; if (InWin()) g_arr += 1; }
static void FwdDrop(Ptr<const QueueDiscItem> item) { g_pkts++; if (InWin()) { g_arr += 1; g_drop += 1; } }
static void RevEnq(Ptr<const QueueDiscItem> item) { g_pkts++; if (InWin()) g_acks += 1; }
static void RevDrop(Ptr<const QueueDiscItem> item) { g_pkts++; }
static void TxEnd(Ptr<const Packet> p) {
  if (!InWin()) return;
  int payload = (int)p->GetSize() - 42;
  if (payload > 0) g_thrBytes += payload;
}
static void Snap(int which) {
  for (size_t i = 0; i < g_sinks.size(); ++i) (which == 0 ? g_rx0 : g_rx1)[i] = g_sinks[i]->GetTotalRx();
}

double Run(uint32_t n, double rate, double revRate, double delay, std::vector<double> access, uint32_t mss,
           uint32_t iw, uint32_t rwnd, double minRto, double delack, double minTh, double maxTh, double maxP,
           double qw, uint32_t limit, double duration, double warmup, std::vector<double> starts, uint32_t run) {
  RngSeedManager::SetSeed(1);
  RngSeedManager::SetRun(run);
  g_w0 = warmup; g_w1 = duration; g_mss = mss;
  g_cwArea.assign(n, 0.0); g_cwVal.assign(n, 0.0); g_cwT.assign(n, -1.0);
  g_rx0.assign(n, 0.0); g_rx1.assign(n, 0.0);
  g_sinks.clear(); g_apps.clear();
  g_thrBytes = g_arr = g_drop = g_acks = 0; g_pkts = 0;
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
  Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TcpClassicRecovery::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(iw));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
  Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Seconds(delack)));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(rwnd * mss));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rwnd * mss));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRto)));

  NodeContainer snd, rcv, r;
  snd.Create(n); rcv.Create(n); r.Create(2);
  InternetStackHelper stack;
  stack.InstallAll();
  PointToPointHelper acc;
  acc.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
  PointToPointHelper bn;
  bn.SetDeviceAttribute("DataRate", DataRateValue(DataRate((uint64_t)rate)));
  bn.SetChannelAttribute("Delay", TimeValue(Seconds(delay)));
  bn.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 1)));
  NetDeviceContainer core = bn.Install(r.Get(0), r.Get(1));
  if (revRate != rate) core.Get(1)->SetAttribute("DataRate", DataRateValue(DataRate((uint64_t)revRate)));
  TrafficControlHelper red;
  red.SetRootQueueDisc("ns3::RedQueueDisc", "MinTh", DoubleValue(minTh), "MaxTh", DoubleValue(maxTh),
                       "QW", DoubleValue(qw), "LInterm", DoubleValue(1.0 / maxP),
                       "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, limit)),
                       "MeanPktSize", UintegerValue(mss + 42), "Gentle", BooleanValue(false),
                       "UseEcn", BooleanValue(false), "LinkBandwidth", DataRateValue(DataRate((uint64_t)rate)),
                       "LinkDelay", TimeValue(Seconds(delay)));
  TrafficControlHelper fifo;
  fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 1000)));
  QueueDiscContainer qf = red.Install(core.Get(0));
  QueueDiscContainer qr = fifo.Install(core.Get(1));
  qf.Get(0)->TraceConnectWithoutContext("Enqueue", MakeCallback(&FwdEnq));
  qf.Get(0)->TraceConnectWithoutContext("Drop", MakeCallback(&FwdDrop));
  qr.Get(0)->TraceConnectWithoutContext("Enqueue", MakeCallback(&RevEnq));
  qr.Get(0)->TraceConnectWithoutContext("Drop", MakeCallback(&RevDrop));
  core.Get(0)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&TxEnd));
  Ipv4AddressHelper addr;
  addr.SetBase("10.0.0.0", "255.255.255.0");
  addr.Assign(core);
  std::vector<Ipv4Address> dst;
  for (uint32_t i = 0; i < n; ++i) {
    acc.SetChannelAttribute("Delay", TimeValue(Seconds(access[i])));
    NetDeviceContainer a = acc.Install(snd.Get(i), r.Get(0));
    acc.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
    NetDeviceContainer b = acc.Install(r.Get(1), rcv.Get(i));
    fifo.Install(a);
    fifo.Install(b);
    addr.NewNetwork();
    addr.Assign(a);
    addr.NewNetwork();
    Ipv4InterfaceContainer bi = addr.Assign(b);
    dst.push_back(bi.GetAddress(1));
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  for (uint32_t i = 0; i < n; ++i) {
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
    ApplicationContainer sa = sink.Install(rcv.Get(i));
    sa.Start(Seconds(0));
    g_sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));
    BulkSendHelper bs("ns3::TcpSocketFactory", InetSocketAddress(dst[i], 9));
    bs.SetAttribute("MaxBytes", UintegerValue(0));
    bs.SetAttribute("SendSize", UintegerValue(mss));
    ApplicationContainer ba = bs.Install(snd.Get(i));
    ba.Start(Seconds(starts[i]));
    g_apps.push_back(ba.Get(0));
    Simulator::Schedule(Seconds(starts[i] + 1e-9), &Hook, i);
  }
  Simulator::Schedule(Seconds(warmup), &Snap, 0);
  Simulator::Schedule(Seconds(duration), &Snap, 1);
  Simulator::Stop(Seconds(duration + 1e-6));
  timespec c0, c1;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
  auto t0 = std::chrono::steady_clock::now();
  Simulator::Run();
  auto t1 = std::chrono::steady_clock::now();
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
  g_cpu = (c1.tv_sec - c0.tv_sec) + 1e-9 * (c1.tv_nsec - c0.tv_nsec);
  for (uint32_t i = 0; i < n; ++i) Cwnd(i, g_cwVal[i], g_cwVal[i]);
  Simulator::Destroy();
  return std::chrono::duration<double>(t1 - t0).count();
}
std::vector<double>& CwArea() { return g_cwArea; }
std::vector<double>& Rx0() { return g_rx0; }
std::vector<double>& Rx1() { return g_rx1; }
double Thr() { return g_thrBytes; }
double Arr() { return g_arr; }
double Drp() { return g_drop; }
double Acks() { return g_acks; }
uint64_t Pkts() { return g_pkts; }
double Cpu() { return g_cpu; }
}
"""


def _child(cfg_path: str, out_dir: str) -> None:
    """Child process: run every replication, write info.json (and an empty trace.npz)."""
    c = json.loads(Path(cfg_path).read_text())["config"]
    t_start = time.perf_counter()
    from ns import ns  # noqa: F401
    import cppyy

    cppyy.cppdef(_CPP)
    g = cppyy.gbl.qbtcp
    vec = cppyy.gbl.std.vector["double"]
    win = c["duration"] - c["warmup"]
    runs = []
    for seed, starts in zip(c["seeds"], c["starts"]):
        wall = g.Run(c["n"], c["rate"], c["rev_rate"], c["delay"], vec(c["access"]), c["mss"], int(c["init_cwnd"]),
                     c["rwnd"], c["min_rto"], c["delack"], c["min_th"], c["max_th"], c["max_p"], c["alpha"],
                     c["limit"], c["duration"], c["warmup"], vec(starts), 1 + seed % 2_000_000_000)
        rx = (np.array(g.Rx1()) - np.array(g.Rx0())) * 8 / win
        runs.append({"goodput": rx.tolist(), "throughput": float(g.Thr()) * 8 / win, "arrivals": float(g.Arr()),
                     "drops": float(g.Drp()), "acks": float(g.Acks()),
                     "cwnd_mean": (np.array(g.CwArea()) / win).tolist(), "packets": int(g.Pkts()),
                     "wall": float(wall), "cpu": float(g.Cpu())})
    np.savez(Path(out_dir) / "trace.npz", none=np.zeros(0))
    (Path(out_dir) / "info.json").write_text(json.dumps({"runs": runs, "load_seconds": time.perf_counter() - t_start,
                                                         "ns3_version": "3.44"}))


if __name__ == "__main__":  # pragma: no cover - runs in the child process
    _child(sys.argv[1], sys.argv[2])
