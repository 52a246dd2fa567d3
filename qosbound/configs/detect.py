"""Which configuration format a file holds, read from its content (the file name's extension only breaks ties).

Read: Cisco IOS / IOS XE / IOS XR (MQC), Junos (curly-brace and ``set`` forms), Linux ``tc`` (scripts and
``tc -j`` JSON), OpenConfig QoS JSON. Recognised and refused, naming the format: Cisco NX-OS, Arista EOS,
SONiC ``config_db.json``, Huawei VRP, Nokia SR OS, MikroTik RouterOS, VyOS, FortiOS, ``tc`` text output, binary
data; anything else is refused as an unknown format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from qosbound.configs.source import ConfigText
from qosbound.errors import UnsupportedFormat

__all__ = ["Format", "detect_format", "READ_FORMATS"]

#: Formats this package reads (name -> what it is).
READ_FORMATS = {
    "cisco-ios": "Cisco IOS (MQC)", "cisco-ios-xe": "Cisco IOS XE (MQC)", "cisco-ios-xr": "Cisco IOS XR (MQC)",
    "junos": "Juniper Junos (curly-brace)", "junos-set": "Juniper Junos (set commands)",
    "tc-script": "Linux tc commands", "tc-json": "Linux tc -j JSON", "openconfig": "OpenConfig QoS JSON",
}


@dataclass(frozen=True)
class Format:
    name: str
    #: platform family for the defaults table: ios, ios-xe, ios-xr, junos, linux, openconfig
    family: str


def _count(pattern: str, text: str) -> int:
    return len(re.findall(pattern, text, re.M))


def _refuse(cfg: ConfigText, what: str) -> UnsupportedFormat:
    return UnsupportedFormat(f"{what}: not a format qosbound reads (it reads {', '.join(READ_FORMATS.values())})",
                             file=cfg.file)


def _json(cfg: ConfigText, head: str) -> Format:
    if re.search(r'"(openconfig-qos:)?qos"\s*:', head) or '"openconfig-qos:' in head or \
            re.search(r'"(scheduler-policies|forwarding-groups|classifiers)"\s*:', head):
        return Format("openconfig", "openconfig")
    if re.search(r'"(DEVICE_METADATA|SCHEDULER|DSCP_TO_TC_MAP|QUEUE|WRED_PROFILE|PORT_QOS_MAP)"\s*:', head):
        raise _refuse(cfg, "SONiC config_db.json")
    if re.search(r'"kind"\s*:', head) and re.search(r'"handle"\s*:', head) or \
            re.search(r'"class"\s*:\s*"(htb|prio|hfsc|drr|qfq|cbq|ets|mqprio)"', head):
        return Format("tc-json", "linux")
    if head.lstrip().startswith("[") and head.strip() in ("[]", "[ ]", "[\n]"):
        return Format("tc-json", "linux")
    raise _refuse(cfg, "JSON that is neither OpenConfig QoS nor the output of tc -j")


def detect_format(cfg: ConfigText) -> Format:
    """The format of a configuration text (see the module docstring); an unread format is refused naming it."""
    head = cfg.text[:262144]
    body = head.lstrip("\ufeff \t\n")
    if not body:
        raise UnsupportedFormat("empty file: no configuration to import", file=cfg.file)
    if body[0] in "{[":
        return _json(cfg, head)
    lines = [ln for ln in head.split("\n") if ln.strip()]
    # Linux tc
    tc_cmds = _count(r"(^|[\s;/$}{])(tc|TC\}?)\s+(-\S+\s+)*(qdisc|class|filter)\s+(add|replace|change|del|delete)\b",
                     head)
    if tc_cmds:
        return Format("tc-script", "linux")
    if _count(r"^qdisc \S+ [0-9a-f]*: (root|parent|dev)", head) or _count(r"^class (htb|prio|hfsc) \S+ ", head):
        raise _refuse(cfg, "tc text output (use the JSON of tc -j qdisc show / tc -j class show)")
    # set-style
    sets = [ln for ln in lines if ln.lstrip().startswith("set ")]
    if sets and len(sets) >= 0.5 * len([ln for ln in lines if not ln.lstrip().startswith("#")]):
        joined = "\n".join(sets)
        if re.search(r"^\s*set (class-of-service|interfaces [a-z]{2,3}-\d|firewall|routing-options|chassis)\b",
                     joined, re.M):
            return Format("junos-set", "junos")
        if re.search(r"^\s*set (qos|traffic-policy|interfaces ethernet)\b", joined, re.M):
            raise _refuse(cfg, "VyOS configuration commands")
    # Junos curly-brace
    if re.search(r"^\s*class-of-service\s*\{", head, re.M) or (
            _count(r"^\s*[\w.-]+(\s+[\w./:-]+)?\s*\{\s*$", head) >= 2 and _count(r";\s*$", head) >= 2 and
            not re.search(r"^\s*(config|configure)\b", head, re.M)):
        if re.search(r"^\s*(configure\s*\{|sap-ingress|sap-egress)", head, re.M):
            raise _refuse(cfg, "Nokia SR OS configuration")
        return Format("junos", "junos")
    # other vendors
    if re.search(r"^/(queue|interface|ip|system)\b", head, re.M):
        raise _refuse(cfg, "MikroTik RouterOS export")
    if re.search(r"^config (system|firewall) ", head, re.M):
        raise _refuse(cfg, "FortiOS configuration")
    if re.search(r"^\s*(sysname |traffic classifier |traffic behavior |qos queue-profile )", head, re.M):
        raise _refuse(cfg, "Huawei VRP configuration")
    if re.search(r"^\s*(configure$|exit all$|sap-ingress |sap-egress )", head, re.M):
        raise _refuse(cfg, "Nokia SR OS configuration")
    if re.search(r"^! device: .*EOS|^\s*daemon TerminAttr|^\s*management api http-commands|^\s*qos map |"
                 r"^\s*transceiver qsfp default-mode|^! Command: show running-config", head, re.M):
        raise _refuse(cfg, "Arista EOS configuration")
    if re.search(r"^!Command: show running-config|^\s*feature \S+|^system qos$|^\s*policy-map type network-qos|"
                 r"^\s*vdc |^\s*hardware access-list tcam", head, re.M):
        raise _refuse(cfg, "Cisco NX-OS configuration")
    ios = _count(r"^\s*(class-map|policy-map|interface|hostname|service-policy|ip route|router \w+|line vty)\b", head)
    if not ios:
        raise _refuse(cfg, "unknown format (no class-map, policy-map or interface section, no tc command, no "
                           "class-of-service)")
    m = re.search(r"^version (\d+)\.", head, re.M)
    if m:  # IOS and IOS XE print their version at the top; IOS XR does not
        return Format("cisco-ios", "ios") if int(m.group(1)) < 16 else Format("cisco-ios-xe", "ios-xe")
    xr = _count(r"^\s*(end-policy-map|end-class-map|commit)\s*$|^!! IOS XR|^RP/\d+/|"
                r"^interface (Bundle-Ether|TenGigE|HundredGigE|FortyGigE|TwentyFiveGigE|GigabitEthernet)"
                r"\d+/\d+/\d+/\d+", head)
    if xr:
        return Format("cisco-ios-xr", "ios-xr")
    return Format("cisco-ios-xe", "ios-xe")
