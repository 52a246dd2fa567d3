"""Koehler & Schaefer (1999), sections 4.1-4.2: the goodput of one TCP connection by data and ACK class.

The network of the paper's section 3 on :mod:`qosbound.validation.dumbbell`: five edge nodes on each side
of a bottleneck R1 -- R2, ten FTP (bulk) TCP sources per node, 50 sources per side sending to the other
side, so data and ACKs share both directions. Per node 2 sources send Premium / AF11 data, 3 Assured /
AF12, 5 Best Effort / AF13 (20 / 30 / 50 %). The bottleneck runs at the bandwidths of Table 2 (100 to 36
Mbit/s for 50 to 140 % load) and the delays of Table 1 give round trip times of 20, 60, 100 and 200 ms.

Two scenarios:

* **Two-Bit DS** (Nichols, Jacobson & Zhang): per direction a Premium queue with strict priority (drop
  tail, 90 packets) and one RIO queue (Table 5) shared by Assured and Best Effort. Each node meters its
  Premium data with a token bucket (Table 3: 2 Mbit/s, 50 kB) whose out-of-profile packets are dropped,
  and its Assured data with another (3 Mbit/s, 70 kB) whose out-of-profile packets become Best Effort
  (OUT in RIO). ACKs are not metered (the paper: "due to their small size"): Premium ACKs go to the
  Premium queue, Assured ACKs are IN and Best Effort ACKs OUT in the RIO queue.
* **One AF class, trTCM + n-RED**: one queue per direction with the overlapped n-RED of Table 6; each
  node meters its data colour-aware with the trTCM of Table 4 (sources pre-colour their data green,
  yellow or red by their drop precedence AF11, AF12, AF13); ACKs keep their own precedence.

The observed connection: the paper runs one observed connection per class combination, the rest of the
99 sources being background whose ACKs share their data's class. qosbound runs all nine combinations of a
scenario in one simulation, ``copies`` connections per combination and side, each replacing a background
source of its *data* class in a different node, so the data mix of every node stays 2/3/5; only the ACK
class of the observed connections differs from the background's. ``reproduce`` runs one copy: with more,
two observed Premium connections of different ACK classes would share a node's token bucket, and the one
with the better ACKs would take the other's tokens (the paper's observed connection shares its node's
bucket with a background connection of its own class). A combination's goodput is the mean over
its connections (both sides) in one run; replications give its 95 % confidence interval (Student t).

Assumptions (the paper is silent; ns-2 2.1b5's defaults where there is one): packets of 1000 bytes on the
wire (the paper's MTU; 958 bytes of payload behind qosbound's 42-byte headers); the receive window 20
segments (ns-2's ``window_``); NewReno without SACK (``sack_blocks=0``); 200 ms minimum RTO. Differences
from the paper's set-up: qosbound's receivers delay ACKs (every second segment; ns-2's default sink
acknowledges each); the nodes' 10 Mbit/s links to the routers serialise their data segments in a
drop-tail FIFO of 90 packets (the paper runs RIO / n-RED queues there, which drop by class), ACKs pass
them without delay; the observed connection runs from the start with the background instead of 60-s periods
separated by 20-s pauses.

The uplink sensitivity (:func:`uplink_aqm_run`, ``network(..., uplink_aqm=True)``): the paper's section 3.1 places the
traffic conditioners "at each node but not in the routers" and "RIO queues ... in each node and in the routers"
(Two-Bit DS), "a trTCM traffic conditioner ... at each node ... and a n-RED queue" (one AF class). With the option the
dumbbell's node uplinks run the bottleneck's queues (:mod:`qosbound.validation.dumbbell`, "Uplink AQM"): each node's
token buckets colour its data as it enters the uplink (out-of-profile Premium dropped there, out-of-profile Assured
OUT), Premium packets meet a drop-tail limit of 90 and Assured / Best Effort packets Table 5's RIO with averages of
the uplink's own, and source i's and source 50 + i's ACKs (each is the other's sink) leave through the other's node
uplink. What it neglects: the node's strict priority for Premium (one FIFO per uplink), and the receiver-side access
delay before an ACK meets its node's uplink (the dumbbell lumps the access delays at the sender).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from qosbound.shipped import reference
from qosbound.systems.solve_cache import cached
from qosbound.validation.dumbbell import Class, Dumbbell, Marker, Queue, simulate
from qosbound.validation.plots import save
from qosbound.validation.stats import two_sided_t

__all__ = ["SCENARIOS", "RTT_DELAYS_MS", "MIXED_DELAYS_MS", "MIXED_CORE_MS", "COMBOS", "network", "run_point", "sweep",
           "no_delack", "mixed_sweep", "uplink_aqm_run", "label", "points", "plots",
           "ASSUMPTIONS"]

#: Table 1, equal-RTT rows: node to router, R1 to R2, router to destination (ms) per RTT (ms).
RTT_DELAYS_MS = {20: (3, 4, 3), 60: (10, 10, 10), 100: (15, 20, 15), 200: (30, 40, 30)}
#: Table 1, mixed rows (2, 5, 7): per RTT of the observed connection (ms), the node-to-router delays (ms) the sources
#: of a node take in turn (the first source's gives the observed RTT; router to destination the same), and R1 to R2.
MIXED_DELAYS_MS = {20: (3, 23, 3, 23, 48), 100: (23, 48, 3, 23, 48), 200: (48, 23, 3, 23, 48)}
MIXED_CORE_MS = 4
SCENARIOS = {"twobit": ("P", "A", "B"), "af": ("AF11", "AF12", "AF13")}
#: the nine (data class, ACK class) combinations, as indices 0..2 into the scenario's classes
COMBOS = [(x, y) for x in range(3) for y in range(3)]
PER_NODE = (2, 3, 5)  # sources per node of each data class
NODES = 5
PACKET = 1000  # bytes on the wire
UPLINK = 10e6  # bit/s: each node's link to its router
HEADER = 42

ASSUMPTIONS = [
    "packets of 1000 B on the wire (the paper's MTU), 958 B payload",
    "receive window 20 segments (ns-2's default window_; the paper gives none)",
    "NewReno without SACK (the paper: NewReno), 200 ms minimum RTO",
    "qosbound's receivers delay ACKs (every second segment); ns-2's default sink ACKs every segment (the "
    "sensitivity run turns delayed ACKs off for Two-Bit DS at the smallest RTT)",
    "the nodes' 10 Mbit/s links serialise data in a drop-tail FIFO of 90 packets (the paper: RIO / n-RED "
    "queues there); ACKs pass them without delay (the sensitivity run gives Two-Bit DS's nodes RIO at 50 % load)",
    "the Premium queue is drop tail with 90 packets (the paper gives no size)",
    "all nine class combinations run at once, each observed connection replacing a background source "
    "of its data class (the paper: one observed connection, 60 s on / 20 s off, 10 times)",
]


def _ref() -> dict:
    return reference("koehler1999")


def _flows(copies: int):
    """Per side: (node, data class, ACK class, observed combination or -1) for the 50 sources."""
    slots = [[(node, x) for node in range(NODES) for _ in range(PER_NODE[x])] for x in range(3)]
    obs = {x: [] for x in range(3)}
    for j in range(copies):
        for x, y in COMBOS:
            obs[x].append(y)
    rows = []
    for x in range(3):
        # observed connections take one slot of their data class in node 0, 1, 2, ... in turn
        order = sorted(range(len(slots[x])), key=lambda i: (i % PER_NODE[x], slots[x][i][0]))
        taken = {order[i]: obs[x][i] for i in range(len(obs[x]))}
        if len(obs[x]) > len(slots[x]):
            raise ValueError(f"{copies} copies need more than the {len(slots[x])} sources of data class {x}")
        for i, (node, _) in enumerate(slots[x]):
            y = taken.get(i, x)
            rows.append((node, x, y, COMBOS.index((x, y)) if i in taken else -1))
    return rows


def _mixed_access(rows, rtt_ms: int) -> tuple:
    """Per flow (both sides): the one-way access delay (s) of Table 1's mixed row for ``rtt_ms``: the k-th source of a
    node takes the row's k-th node delay (cyclically) on its node link and again towards its destination; every
    observed connection takes the first, so its RTT is ``rtt_ms``."""
    pattern = MIXED_DELAYS_MS[rtt_ms]
    seen: dict = {}
    out = []
    for side in (0, 1):
        for node, _, _, obs in rows:
            k = seen.get((side, node), 0)
            seen[(side, node)] = k + 1
            out.append(2 * (pattern[0] if obs >= 0 else pattern[k % len(pattern)]) / 1e3)
    return tuple(out)


def network(scenario: str, load_index: int, rtt_ms: int, duration: float, warmup: float, copies: int = 1,
            delack: float = 0.2, rto_floor: str = "rto", mixed: bool = False, uplink_aqm: bool = False):
    """The dumbbell of one point (scenario, Table 2's load, Table 1's RTT) and each flow's observed
    combination (-1: background); ``delack`` 0 turns delayed ACKs off (every segment acknowledged, ns-2's
    default sink); ``rto_floor`` "rto" floors the whole RTO at 200 ms as ns-2 (the paper's simulator) does,
    "rttvar" the variance term as Linux does (:mod:`qosbound.validation.tcp`); ``mixed`` takes Table 1's mixed row
    for ``rtt_ms`` (20, 100 or 200 ms: :data:`MIXED_DELAYS_MS`) instead of its equal-RTT row; ``uplink_aqm`` gives
    each node's uplink the bottleneck's queues (:func:`uplink_aqm_run`)."""
    ref = _ref()
    bw = float(ref["table_2"]["bandwidth_mbit_s"][load_index]) * 1e6
    d1, d2, d3 = RTT_DELAYS_MS[rtt_ms]
    rows = _flows(copies)
    n = 2 * len(rows)
    direction = tuple(s for s in (0, 1) for _ in rows)
    combo = np.array([r[3] for _ in (0, 1) for r in rows], np.int64)
    data = [r[1] for _ in (0, 1) for r in rows]
    acks = [r[2] for _ in (0, 1) for r in rows]
    node = [s * NODES + r[0] for s in (0, 1) for r in rows]
    delay, access = (MIXED_CORE_MS / 1e3, _mixed_access(rows, rtt_ms)) if mixed else (d2 / 1e3, ((d1 + d3) / 1e3,))
    common = dict(n=n, rate=bw, delay=delay, access=access, mss=PACKET - HEADER, rwnd=20,
                  sack_blocks=0, min_rto=0.2, init_cwnd=1.0, start_spread=0.5, direction=direction,
                  uplink_rate=UPLINK, uplink_of=tuple(node), uplink_limit=int(ref["table_5"]["queue_limit"]),
                  duration=duration, warmup=warmup, delack=delack, rto_floor=rto_floor)
    if uplink_aqm:
        # flow i of one side and flow i of the other are the paper's source i and source 50 + i: each is the other's
        # sink, so a flow's ACKs leave through the uplink of the node of the flow opposite it
        common.update(uplink_aqm=True, ack_uplink_of=tuple(node[(f + n // 2) % n] for f in range(n)))
    if scenario == "twobit":
        t3, t5 = ref["table_3"], ref["table_5"]
        rio = Queue(limit=int(t5["queue_limit"]), mode="rio", alpha=float(t5["w_q"]),
                    min_th=(t5["in"]["min_th"], t5["out"]["min_th"], t5["out"]["min_th"]),
                    max_th=(t5["in"]["max_th"], t5["out"]["max_th"], t5["out"]["max_th"]),
                    max_p=(t5["in"]["max_p"], t5["out"]["max_p"], t5["out"]["max_p"]), mean_size=PACKET)
        prem = Queue(limit=int(t5["queue_limit"]), mean_size=PACKET)
        classes = (Class("Premium", prem, priority=1, police=1), Class("Assured+Best Effort", rio))
        markers = []
        for nd in range(2 * NODES):
            markers.append(Marker("two-colour", float(t3["premium"]["cir_bit_s"]), float(t3["premium"]["cbs_bytes"])))
            markers.append(Marker("two-colour", float(t3["assured"]["cir_bit_s"]), float(t3["assured"]["cbs_bytes"])))
        markers.append(None)  # Best Effort data: not metered
        marker_of = tuple(2 * node[f] + data[f] if data[f] < 2 else len(markers) - 1 for f in range(n))
        return dataclasses.replace(
            Dumbbell(**common), fwd_classes=classes, rev_classes=classes,
            data_class=tuple(0 if x == 0 else 1 for x in data), ack_class=tuple(0 if y == 0 else 1 for y in acks),
            colour=tuple(2 if x == 2 else 0 for x in data), marker=tuple(markers), marker_of=marker_of,
            ack_colour=tuple(2 if y == 2 else 0 for y in acks)), combo
    t4, t6 = ref["table_4"], ref["table_6"]
    keys = ("green", "yellow", "red")
    nred = Queue(limit=int(t6["queue_limit"]), mode="nred", alpha=float(t6["w_q"]),
                 min_th=tuple(float(t6[k]["min_th"]) for k in keys), max_th=tuple(float(t6[k]["max_th"]) for k in keys),
                 max_p=tuple(float(t6[k]["max_p"]) for k in keys), mean_size=PACKET)
    tr = Marker("trtcm", float(t4["cir_bit_s"]), float(t4["cbs_bytes"]), float(t4["pir_bit_s"]), float(t4["pbs_bytes"]))
    return dataclasses.replace(
        Dumbbell(**common), fwd=nred, rev=nred, colour=tuple(data), marker=(tr,) * (2 * NODES), marker_of=tuple(node),
        marker_aware=True, ack_colour=tuple(acks)), combo


def run_point(scenario: str, load_index: int, rtt_ms: int, duration: float, warmup: float, reps: int,
              seed: int, copies: int = 1, delack: float = 0.2, rto_floor: str = "rto", mixed: bool = False,
              uplink_aqm: bool = False) -> dict:
    """Replications of one point: per combination the mean goodput (bit/s) and its 95 % CI half-width,
    the per-replication means, and the packets simulated (with ``uplink_aqm`` also the nodes' uplink drops of data
    per colour and of ACKs, summed over the replications' windows, and per combination the share of its observed
    connections' ACKs the uplinks dropped)."""
    net, combo = network(scenario, load_index, rtt_ms, duration, warmup, copies, delack, rto_floor, mixed, uplink_aqm)
    # a mixed run draws its own seeds (independent of the equal-RTT run it is compared with)
    seeds = np.random.SeedSequence([seed, load_index, rtt_ms, len(scenario)] + ([1] if mixed else [])
                                   ).generate_state(reps)
    per = np.zeros((reps, len(COMBOS)))
    packets = 0
    loss = []
    up = np.zeros(7)  # uplink data arrivals per colour, data drops per colour, ACK drops
    acks = np.zeros((len(COMBOS), 2))  # per combination: ACKs dropped at the uplinks, ACKs sent
    for r, s in enumerate(seeds):
        res = cached(simulate, net, int(s))[0]
        packets += res.packets
        loss.append(res.loss_rate)
        if uplink_aqm:
            up += np.concatenate([res.flows.uplink_arrivals_by_colour.sum(axis=0),
                                  res.flows.uplink_drops_by_colour.sum(axis=0), [res.flows.ack_uplink_drops.sum()]])
            for c in range(len(COMBOS)):
                d = res.flows.ack_uplink_drops[combo == c].sum()
                acks[c] += (d, d + res.flows.ack_sent[combo == c].sum())
        for c in range(len(COMBOS)):
            per[r, c] = res.flows.goodput[combo == c].mean()
    mean = per.mean(axis=0)
    half = (two_sided_t(0.95, reps - 1) * per.std(axis=0, ddof=1) / np.sqrt(reps)) if reps > 1 else \
        np.full(len(COMBOS), np.nan)
    return {"scenario": scenario, "load_percent": int(_ref()["table_2"]["load_percent"][load_index]),
            "rtt_ms": rtt_ms, "goodput_bit_s": [float(x) for x in mean],
            "ci95_half_bit_s": [float(x) if np.isfinite(x) else None for x in half],
            "per_replication": per.tolist(), "loss_rate": float(np.mean(loss)), "packets": int(packets),
            **({"uplink_arrivals_by_colour": up[:3].tolist(), "uplink_drops_by_colour": up[3:6].tolist(),
                "ack_uplink_drops": float(up[6]),
                "ack_uplink_drop_share": [float(a / b) if b else None for a, b in acks]} if uplink_aqm else {})}


def sweep(loads, rtts, duration: float, warmup: float, reps: int, seed: int = 1999, copies: int = 1) -> dict:
    """Every (scenario, load index, RTT) point."""
    pts = [run_point(sc, li, rtt, duration, warmup, reps, seed, copies)
           for sc in SCENARIOS for li in loads for rtt in rtts]
    return {"points": pts, "duration_s": duration, "warmup_s": warmup, "replications": reps, "copies": copies,
            "seed": seed, "packets": int(sum(p["packets"] for p in pts))}


def no_delack(loads, rtt: int, duration: float, warmup: float, reps: int, seed: int = 1999,
              copies: int = 1, rto_floor: str = "rto") -> dict:
    """The sensitivity run of the AP-vs-AB finding: Two-Bit DS at ``loads`` and RTT ``rtt`` with delayed ACKs off
    (every segment acknowledged, as ns-2's default sink does), the same seeds as the sweep; ``rto_floor``
    "rttvar" also floors the RTO's variance term as Linux does instead of the whole RTO as ns-2 does."""
    pts = [run_point("twobit", li, rtt, duration, warmup, reps, seed, copies, delack=0.0, rto_floor=rto_floor)
           for li in loads]
    return {"points": pts, "duration_s": duration, "warmup_s": warmup, "replications": reps, "copies": copies,
            "seed": seed, "delack": 0.0, "rto_floor": rto_floor, "packets": int(sum(p["packets"] for p in pts))}


def uplink_aqm_run(loads, rtt: int, duration: float, warmup: float, reps: int, seed: int = 1999,
                   copies: int = 1) -> dict:
    """The sensitivity run of the low-load ACK-class claim: Two-Bit DS at ``loads`` and RTT ``rtt`` with each node's
    uplink running the bottleneck's queues (:attr:`qosbound.validation.dumbbell.Dumbbell.uplink_aqm`), as the paper's
    nodes run RIO queues: the node's token buckets colour its data as it enters the uplink (out-of-profile Premium
    dropped there, out-of-profile Assured OUT), Premium data and ACKs meet a drop-tail limit of 90, Assured and Best
    Effort data and ACKs the RIO of Table 5 with the uplink's own averages, and each flow's ACKs leave through the
    uplink of its receiver's node. One FIFO per uplink: the node's strict priority for Premium is neglected. The same
    seeds as the sweep."""
    pts = [run_point("twobit", li, rtt, duration, warmup, reps, seed, copies, uplink_aqm=True) for li in loads]
    return {"points": pts, "duration_s": duration, "warmup_s": warmup, "replications": reps, "copies": copies,
            "seed": seed, "uplink_aqm": True, "packets": int(sum(p["packets"] for p in pts))}


def mixed_sweep(loads, rtts, duration: float, warmup: float, reps: int, seed: int = 1999, copies: int = 1) -> dict:
    """Table 1's mixed rows: both scenarios at the load indices ``loads`` and those of ``rtts`` that have a mixed row
    (:data:`MIXED_DELAYS_MS`), with their own seeds."""
    pts = [run_point(sc, li, rtt, duration, warmup, reps, seed, copies, mixed=True)
           for sc in SCENARIOS for li in loads for rtt in rtts if rtt in MIXED_DELAYS_MS]
    return {"points": pts, "duration_s": duration, "warmup_s": warmup, "replications": reps, "copies": copies,
            "seed": seed, "mixed": True, "packets": int(sum(p["packets"] for p in pts))}


def label(scenario: str, c: int) -> str:
    """``'AP'`` (Assured data, Premium ACKs) or ``'AF12/AF11'``."""
    x, y = COMBOS[c]
    names = SCENARIOS[scenario]
    if scenario == "twobit":
        return names[x] + names[y]
    return f"{names[x]}/{names[y]}"


def points(sw: dict, scenario: str) -> dict:
    """The sweep's points of one scenario by (load %, RTT ms)."""
    return {(p["load_percent"], p["rtt_ms"]): p for p in sw["points"] if p["scenario"] == scenario}


# ------------------------------------------------------------------------------------------------ figures

def plots(out_dir: str, sw: dict) -> list[str]:
    """Figures 4-7 in the paper's form: goodput per class combination (points grouped by data class, lines
    joining the ACK classes), one panel per RTT (one line per load), then one panel per load (one line per
    RTT); 95 % confidence intervals as error bars."""
    import matplotlib  # matplotlib: a costly import, needed only when figures are drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    for sc, fig_rtt, fig_load in (("twobit", 4, 5), ("af", 6, 7)):
        pts = points(sw, sc)
        loads = sorted({k[0] for k in pts})
        rtts = sorted({k[1] for k in pts})
        title = "Two-Bit DS" if sc == "twobit" else "trTCM + n-RED (one AF class)"
        for panel_key, line_key, fig_no, panel_name, line_name, unit_p, unit_l in (
                (rtts, loads, fig_rtt, "RTT", "load", "ms", "%"), (loads, rtts, fig_load, "load", "RTT", "%", "ms")):
            fig, axes = plt.subplots(1, len(panel_key), figsize=(3.6 * len(panel_key), 3.6), sharey=True,
                                     squeeze=False)
            for ax, pv in zip(axes[0], panel_key):
                for lv in line_key:
                    p = pts[(lv, pv)] if panel_name == "RTT" else pts[(pv, lv)]
                    g = np.asarray(p["goodput_bit_s"]) / 1e3
                    h = np.asarray([np.nan if x is None else x for x in p["ci95_half_bit_s"]], float) / 1e3
                    for x in range(3):
                        xs = np.arange(3 * x, 3 * x + 3) + 0.6 * x
                        ax.errorbar(xs, g[3 * x:3 * x + 3], yerr=h[3 * x:3 * x + 3], marker="o", ms=3, capsize=2,
                                    color=f"C{line_key.index(lv)}", label=f"{lv} {unit_l}" if x == 0 else None)
                ticks = [i + 0.6 * (i // 3) for i in range(9)]
                ax.set_xticks(ticks)
                ax.set_xticklabels([label(sc, i) for i in range(9)], rotation=90 if sc == "af" else 0, fontsize=7)
                ax.set_title(f"{panel_name} {pv} {unit_p}", fontsize=9)
                ax.set_xlabel("data/ACK class" if sc == "twobit" else "data/ACK drop precedence")
            axes[0][0].set_ylabel("goodput (kbit/s)")
            axes[0][-1].legend(fontsize=7, title=line_name, title_fontsize=7)
            fig.suptitle(f"Koehler & Schaefer 1999, Fig. {fig_no}: {title}, goodput of one connection "
                         f"({sw['replications']} replications, {sw['duration_s'] - sw['warmup_s']:g} s each)",
                         fontsize=9)
            files += save(fig, out_dir, f"koehler1999_fig{fig_no}")
    return files
