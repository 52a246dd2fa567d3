"""Cisco IOS / IOS XE / IOS XR configuration text -> a tree of command lines, each with its line number.

IOS reads a configuration by *modes*, not by indentation: ``policy-map P`` enters policy-map mode, ``class C``
inside it enters class mode, a command the current mode does not know returns to the mode that does (global at
the top). ``show running-config`` indents sub-mode commands, hand-written files and documentation snippets often
do not, and some carry the prompt (``Router(config-pmap-c)# priority 100``). This builder follows the modes, and
uses indentation where it is present: a line indented deeper than the line that opened the current mode belongs
to that mode even if the mode does not know the command (it is then reported as unknown, not misplaced).

Handled on the way: comments (``!``, ``#``), banners (``banner motd ^C ... ^C``), ``exit`` / ``end`` /
``end-policy-map`` / ``end-class-map`` / ``end-policy-map``, tabs, prompts, XR's ``!! `` header lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Node", "parse_tree", "MODES"]


@dataclass
class Node:
    """One command line: its words, its 1-based line number, the mode it opened (if any) and its children."""

    text: str
    line: int
    mode: str = ""
    children: list["Node"] = field(default_factory=list)

    @property
    def words(self) -> list[str]:
        return self.text.split()

    def first(self, n: int = 1) -> str:
        return " ".join(self.words[:n]).lower()


#: Sub-commands each mode knows by first word (a command outside this set at the same indentation returns to the
#: enclosing mode, as IOS does).
MODES: dict[str, set[str]] = {
    "class-map": {"match", "description", "no", "exit"},
    "policy-map": {"class", "description", "no", "exit", "rate", "end-policy-map"},
    "policy-class": {"priority", "bandwidth", "police", "queue-limit", "random-detect", "fair-queue", "shape",
                     "service-policy", "set", "description", "no", "compress", "queue-buffers", "estimate",
                     "account", "conform-action", "exceed-action", "violate-action", "trust", "drop",
                     "priority-level", "admit", "fair-queue-limit", "exit", "police-rate"},
    "police": {"conform-action", "exceed-action", "violate-action", "conform-color", "exceed-color", "exit"},
    "interface": {"bandwidth", "speed", "tx-ring-limit", "service-policy", "description", "shutdown", "no", "ip",
                  "ipv6", "encapsulation", "hold-queue", "fair-queue", "random-detect", "mtu", "duplex",
                  "negotiation", "load-interval", "priority-group", "max-reserved-bandwidth", "switchport",
                  "channel-group", "vrf", "media-type", "cdp", "mpls", "standby", "vrrp", "dot1q", "exit",
                  "qos", "carrier-delay", "keepalive", "ppp", "clock", "tx-queue-limit", "hw-module", "pppoe",
                  "dialer", "nat", "zone-member", "tunnel", "crypto", "lldp", "arp", "mac-address", "logging",
                  "bfd", "ipv4", "frame-relay", "service", "l2transport", "rewrite", "bundle", "lacp",
                  "transceiver", "flow", "storm-control", "spanning-tree", "platform", "ethernet", "isis", "ospf"},
    "other": set(),
}

#: Global commands that open a mode this importer reads.
OPENERS = {"class-map": "class-map", "policy-map": "policy-map", "interface": "interface"}

_PROMPT = re.compile(r"^\s*[\w./:-]+\((?:config[^)]*)\)#\s?")
_XR_PROMPT = re.compile(r"^\s*RP/\d+/\w+/CPU\d+:[\w.-]+\((?:config[^)]*)\)#\s?")
_EXITS = {"exit", "end-policy-map", "end-class-map", "end-policy", "exit-address-family"}


def _indent(raw: str) -> int:
    return len(raw.expandtabs(8)) - len(raw.expandtabs(8).lstrip(" "))


def _banner_delimiter(words: list[str], text: str) -> str | None:
    """The delimiter of a ``banner <type> <delim>...`` line, None when the banner ends on the same line."""
    m = re.match(r"\s*banner\s+\S+\s+(.*)$", text)
    if not m or not m.group(1):
        return None
    rest = m.group(1)
    delim = "^C" if rest.startswith("^C") else rest[0]
    if delim in rest[len(delim):]:
        return None
    return delim


def _accepts(mode: str, word: str) -> bool:
    return word in MODES.get(mode, set())


def _opened_mode(parent_mode: str, node: Node) -> str:
    """The mode a command opens in its parent mode ('' when it opens none)."""
    w = node.words
    first = w[0].lower()
    if parent_mode == "global":
        return OPENERS.get(first, "other")
    if parent_mode == "policy-map" and first == "class":
        return "policy-class"
    if parent_mode == "policy-class" and first == "police":
        # the multi-line form: actions follow on their own lines (IOS XR always allows it)
        low = [x.lower() for x in w]
        if not any(x.endswith("-action") for x in low[1:]):
            return "police"
    if parent_mode in ("interface", "other", "class-map", "police", "policy-class"):
        return "other-leaf"
    return "other-leaf"


def parse_tree(text: str) -> list[Node]:
    """The top-level command nodes of a configuration, sub-mode commands as children (see the module doc).

    In an indented file (``show running-config``) a line in column 0 is a global command. Any other line goes to
    the innermost open mode that knows its command, or that it is indented deeper than (an unknown command inside
    that mode); in a flat file (no indentation) only the modes' command sets decide, as on the router.
    """
    raw_lines = text.split("\n")
    indented = any(re.match(r"^[ \t]+(class|match|priority|bandwidth|police|service-policy|queue-limit|"
                            r"random-detect|shape|set|description)\b", ln) for ln in raw_lines)
    root = Node("", 0, "global")
    stack: list[tuple[int, Node]] = [(-1, root)]  # (indent of the opener, node)
    banner: str | None = None
    for lineno, raw in enumerate(raw_lines, start=1):
        if banner is not None:
            if banner in raw:
                banner = None
            continue
        line = _XR_PROMPT.sub("", raw, count=1) if "CPU" in raw else raw
        line = _PROMPT.sub("", line, count=1) if "(config" in line else line
        stripped = line.strip()
        if not stripped or stripped.startswith(("!", "#", "%")):
            continue
        words = stripped.split()
        first = words[0].lower()
        if first == "banner":
            banner = _banner_delimiter(words, stripped)
            continue
        if first == "end" and len(words) == 1:
            del stack[1:]
            continue
        indent = _indent(line)
        if first in _EXITS and len(words) == 1:
            if first.startswith("end-"):
                del stack[1:]
            elif len(stack) > 1:
                stack.pop()
            continue
        keep = 1
        if not (indented and indent == 0):
            for j in range(len(stack) - 1, 0, -1):
                ind, node = stack[j]
                if node.mode in ("other-leaf",):
                    continue
                if _accepts(node.mode, first) or (indented and indent > ind):
                    keep = j + 1
                    break
        del stack[keep:]
        parent = stack[-1][1]
        node = Node(stripped, lineno)
        parent.children.append(node)
        node.mode = _opened_mode(parent.mode, node)
        stack.append((indent, node))
    return root.children
