"""A generator of realistic router configurations, and the parse + map timing of ``qosbound import`` on them.

``python benchmarks/gen_configs.py --files 1000`` writes 1,000 configurations into a temporary folder -- a mix of
the forms networks hold: IOS XE branches (LLQ voice and video, AF classes with WRED, a parent shaper on a WAN
sub-interface, input marking), IOS XE WAN edges (flat policies, srTCM markers), IOS XR PEs (two-stage
classification through qos-group), Junos PEs (curly-brace and set), Linux home gateways (htb + red scripts) and
OpenConfig leaves -- each drawn with its own rates, class names, shares and thresholds from a seeded generator,
then imports them all (read, detect, parse, give meaning, apply the default traffic) and prints the time and the
rate in files and ports per second. ``--out DIR`` keeps the files.

The import is the first share of the issue's target (1,000 configurations imported and verified by the closed
forms in <= 30 s); the verification share is the port system's.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _common  # noqa: E402,F401 - single-thread BLAS

from qosbound.configs import import_configs  # noqa: E402

RATES_MBIT = [10, 20, 50, 100, 200, 500]


def ios_branch(rng: random.Random, i: int) -> str:
    shaper = rng.choice(RATES_MBIT) * 1_000_000
    voice, video = rng.choice([5, 10, 15]), rng.choice([10, 15, 20])
    shares = rng.sample(range(5, 31), 3)
    rest = 100 - sum(shares)
    lines = [f"version 17.{rng.randint(3, 12)}", f"hostname br-{i:04d}", "!",
             "class-map match-any VOICE", " match dscp ef",
             "class-map match-any VIDEO", " match dscp af41 af42",
             "class-map match-any CRITICAL", " match dscp af31 af32 af33", " match dscp cs3",
             "class-map match-any TRANSACTIONAL", " match dscp af21 af22 af23",
             "class-map match-any BULK", " match dscp af11 af12 af13", "!",
             "policy-map CHILD",
             " class VOICE", "  priority level 1", f"  police cir percent {voice}",
             " class VIDEO", "  priority level 2", f"  police cir percent {video}",
             " class CRITICAL", f"  bandwidth remaining percent {shares[0]}", "  random-detect dscp-based",
             f"  random-detect dscp af31 {rng.randint(28, 36)} 40 10",
             " class TRANSACTIONAL", f"  bandwidth remaining percent {shares[1]}", "  random-detect dscp-based",
             f"  queue-limit {rng.choice([64, 128, 256])} packets",
             " class BULK", f"  bandwidth remaining percent {shares[2]}", "  random-detect",
             " class class-default", f"  bandwidth remaining percent {rest}", "  fair-queue", "!",
             "policy-map PARENT", " class class-default", f"  shape average {shaper}", "  service-policy CHILD",
             "!", "policy-map LAN-IN", " class VOICE", "  set qos-group 5", "!",
             "interface GigabitEthernet0/0/0", " description WAN", " no ip address", "!",
             "interface GigabitEthernet0/0/0.10", " encapsulation dot1Q 10", " service-policy output PARENT", "!",
             "interface GigabitEthernet0/0/1", " service-policy input LAN-IN", "!",
             "router ospf 1", " network 10.0.0.0 0.255.255.255 area 0", "!", "line vty 0 4", " transport input ssh",
             "end"]
    return "\n".join(lines) + "\n"


def ios_edge(rng: random.Random, i: int) -> str:
    p = rng.choice([10, 15, 20, 25])
    b = rng.sample(range(5, 20), 3)
    return "\n".join([
        "version 17.9", f"hostname edge-{i:04d}",
        "class-map match-any VOICE", " match dscp ef", "class-map match-any VIDEO", " match dscp af41 af42 af43",
        "class-map match-any CRITICAL", " match dscp af31 af32 af33", "class-map match-any BULK",
        " match dscp af11 af12 af13",
        "policy-map OUT", " class VOICE", f"  priority percent {p}", " class VIDEO", f"  bandwidth percent {b[0]}",
        "  random-detect dscp-based", " class CRITICAL", f"  bandwidth percent {b[1]}",
        f"  police cir {rng.choice([50, 100, 150])}000000", "   conform-action transmit",
        "   exceed-action set-dscp-transmit af32", "   violate-action set-dscp-transmit af33",
        "  random-detect dscp-based", " class BULK", f"  bandwidth percent {b[2]}", "  random-detect",
        " class class-default", f"  bandwidth percent {100 - p - sum(b)}", "  random-detect",
        f"interface {rng.choice(['GigabitEthernet0/0/2', 'TenGigabitEthernet0/1/0'])}",
        f" tx-ring-limit {rng.choice([64, 128, 256])}", " service-policy output OUT", "end"]) + "\n"


def ios_xr_pe(rng: random.Random, i: int) -> str:
    return "\n".join([
        "!! IOS XR Configuration 7.9.2", f"hostname pe-{i:04d}",
        "class-map match-any CE-VOICE", " match dscp ipv4 ef", " end-class-map",
        "class-map match-any CE-DATA", " match dscp ipv4 af31 af21", " end-class-map",
        "class-map match-any QG5", " match qos-group 5", " end-class-map",
        "class-map match-any QG3", " match qos-group 3", " end-class-map",
        "policy-map CE-IN", " class CE-VOICE", "  set qos-group 5", " !", " class CE-DATA", "  set qos-group 3",
        " !", " class class-default", " !", " end-policy-map",
        "policy-map CORE-OUT", " class QG5", "  priority level 1", f"  police rate percent {rng.choice([10, 20])}",
        "  !", " !", " class QG3", f"  bandwidth remaining percent {rng.choice([40, 50, 60])}",
        "  queue-limit 50 ms", "  random-detect default", " !", " class class-default",
        f"  bandwidth remaining percent {rng.choice([20, 30, 40])}", " !", " end-policy-map",
        "interface TenGigE0/0/0/4", " service-policy input CE-IN", "!",
        "interface HundredGigE0/0/0/0", " service-policy output CORE-OUT", "!", "end"]) + "\n"


def junos_pe(rng: random.Random, i: int) -> str:
    ef, af, nc = rng.choice([10, 20, 30]), rng.choice([30, 40, 50]), 5
    return f"""system {{ host-name jpe-{i:04d}; }}
class-of-service {{
    classifiers {{ dscp IN {{
        forwarding-class expedited-forwarding {{ loss-priority low code-points ef; }}
        forwarding-class assured-forwarding {{ loss-priority low code-points [ af31 af41 ];
                                              loss-priority high code-points [ af32 af42 ]; }}
        forwarding-class best-effort {{ loss-priority low code-points be; }} }} }}
    drop-profiles {{ low {{ interpolate {{ fill-level [ 60 100 ]; drop-probability [ 0 100 ]; }} }}
                    high {{ interpolate {{ fill-level [ 30 70 ]; drop-probability [ 0 100 ]; }} }} }}
    interfaces {{
        ge-0/0/1 {{ unit 0 {{ classifiers {{ dscp IN; }} }} }}
        xe-0/1/0 {{ shaping-rate {rng.choice(RATES_MBIT)}m; scheduler-map M; }} }}
    scheduler-maps {{ M {{ forwarding-class expedited-forwarding scheduler EF;
                          forwarding-class assured-forwarding scheduler AF;
                          forwarding-class network-control scheduler NC;
                          forwarding-class best-effort scheduler BE; }} }}
    schedulers {{
        EF {{ transmit-rate percent {ef} rate-limit; priority strict-high; }}
        AF {{ transmit-rate percent {af}; buffer-size percent {af}; priority low;
             drop-profile-map loss-priority low protocol any drop-profile low;
             drop-profile-map loss-priority high protocol any drop-profile high; }}
        NC {{ transmit-rate percent {nc}; priority low; }}
        BE {{ transmit-rate remainder; priority low; }} }}
}}
"""


def tc_gateway(rng: random.Random, i: int) -> str:
    up = rng.choice([8, 16, 20, 40])
    v, d = max(1, up // 10), up // 2
    return f"""#!/bin/sh
WAN=eth1
tc qdisc del dev $WAN root 2>/dev/null
tc qdisc add dev $WAN root handle 1: htb default 30
tc class add dev $WAN parent 1: classid 1:1 htb rate {up}mbit burst 15k
tc class add dev $WAN parent 1:1 classid 1:10 htb rate {v}mbit ceil {up}mbit prio 0
tc class add dev $WAN parent 1:1 classid 1:20 htb rate {d}mbit ceil {up}mbit prio 1
tc class add dev $WAN parent 1:1 classid 1:30 htb rate {up - v - d}mbit ceil {up}mbit prio 2
tc qdisc add dev $WAN parent 1:10 handle 10: pfifo limit {rng.choice([20, 30, 50])}
tc qdisc add dev $WAN parent 1:20 handle 20: red limit 400000 min 30000 max 90000 avpkt 1000 burst 55 probability 0.02
tc qdisc add dev $WAN parent 1:30 handle 30: red limit 400000 min 30000 max 90000 avpkt 1000 burst 55 probability 0.05
tc filter add dev $WAN parent 1: protocol ip prio 1 u32 match ip dsfield 0xb8 0xfc flowid 1:10
tc filter add dev $WAN parent 1: protocol ip prio 2 u32 match ip dsfield 0x68 0xfc flowid 1:20
"""


def openconfig_leaf(rng: random.Random, i: int) -> str:
    w = rng.sample(range(10, 60), 3)
    return ('{"openconfig-interfaces:interfaces": {"interface": [{"name": "Ethernet1/49", '
            '"openconfig-if-ethernet:ethernet": {"config": {"port-speed": "SPEED_100GB"}}}]},\n'
            '"openconfig-qos:qos": {"forwarding-groups": {"forwarding-group": ['
            '{"name": "rt", "config": {"name": "rt", "output-queue": "q-rt"}},'
            '{"name": "af", "config": {"name": "af", "output-queue": "q-af"}},'
            '{"name": "be", "config": {"name": "be", "output-queue": "q-be"}}]},\n'
            '"classifiers": {"classifier": [{"name": "c", "config": {"name": "c", "type": "IPV4"}, "terms": {"term": ['
            '{"id": "1", "conditions": {"ipv4": {"config": {"dscp-set": [46]}}}, "actions": {"config": {"target-group": "rt"}}},'
            '{"id": "2", "conditions": {"ipv4": {"config": {"dscp-set": [26, 18]}}}, "actions": {"config": {"target-group": "af"}}},'
            '{"id": "3", "actions": {"config": {"target-group": "be"}}}]}}]},\n'
            '"scheduler-policies": {"scheduler-policy": [{"name": "sp", "schedulers": {"scheduler": ['
            '{"sequence": 0, "config": {"priority": "STRICT"}, "inputs": {"input": [{"id": "rt", "config": {"queue": "q-rt"}}]},'
            f'"one-rate-two-color": {{"config": {{"cir-pct": {rng.choice([10, 20])}, "bc": 100000}}, '
            '"exceed-action": {"config": {"drop": true}}}},'
            '{"sequence": 1, "inputs": {"input": ['
            f'{{"id": "af", "config": {{"queue": "q-af", "weight": "{w[0]}"}}}},'
            f'{{"id": "be", "config": {{"queue": "q-be", "weight": "{w[1]}"}}}}]}}}}]}}}}]}},\n'
            '"interfaces": {"interface": [{"interface-id": "Ethernet1/1", "input": {"classifiers": {"classifier": '
            '[{"type": "IPV4", "config": {"name": "c"}}]}}}, {"interface-id": "Ethernet1/49", '
            '"output": {"scheduler-policy": {"config": {"name": "sp"}}}}]}}}\n')


#: (generator, file suffix, weight in the mix)
KINDS = [(ios_branch, ".cfg", 30), (ios_edge, ".cfg", 20), (ios_xr_pe, ".cfg", 15), (junos_pe, ".conf", 15),
         (tc_gateway, ".sh", 10), (openconfig_leaf, ".json", 10)]


def generate(n: int, out: Path, seed: int = 1) -> list[Path]:
    rng = random.Random(seed)
    gens = [k for k in KINDS for _ in range(k[2])]
    paths = []
    for i in range(n):
        fn, suffix, _ = rng.choice(gens)
        p = out / f"{fn.__name__}-{i:04d}{suffix}"
        p.write_text(fn(rng, i))
        paths.append(p)
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--out", help="keep the generated files here")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or tmp)
        out.mkdir(parents=True, exist_ok=True)
        paths = generate(args.files, out, args.seed)
        size = sum(p.stat().st_size for p in paths)
        t0 = time.perf_counter()
        report = import_configs(paths)
        dt = time.perf_counter() - t0
        refused = len(report.refusals)
        print(f"{len(paths)} configurations ({size / 1e6:.1f} MB), {len(report.ports)} ports "
              f"({refused} refused): parse + map {dt:.2f} s = {len(paths) / dt:.0f} files/s, "
              f"{len(report.ports) / dt:.0f} ports/s, {dt / 30:.1%} of the 30 s budget for import + verify")


if __name__ == "__main__":
    main()
