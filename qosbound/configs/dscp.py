"""DiffServ code points: names and numbers (RFC 2474, RFC 2597, RFC 3246, RFC 5865), IP precedence.

Imported ports name DSCPs by their standard names where one exists (``EF``, ``AF31``, ``CS5``, ``DF`` for 0,
RFC 2474's default forwarding) and by number otherwise (``"13"``), the spelling the port system prints.
"""

from __future__ import annotations

__all__ = ["DSCP_BY_NAME", "dscp_name", "dscp_value", "precedence_dscps", "ALL_DSCPS", "sort_dscps"]

#: Standard names -> code point.
DSCP_BY_NAME: dict[str, int] = {"DF": 0, "BE": 0, "DEFAULT": 0, "CS0": 0, "EF": 46, "VA": 44, "VOICE-ADMIT": 44}
for _c in range(1, 5):
    for _d in range(1, 4):
        DSCP_BY_NAME[f"AF{_c}{_d}"] = 8 * _c + 2 * _d
for _c in range(0, 8):
    DSCP_BY_NAME[f"CS{_c}"] = 8 * _c
DSCP_BY_NAME["LE"] = 1  # RFC 8622 lower effort

_PREFERRED = {0: "DF", 46: "EF", 44: "VA", 1: "LE"}
for _name, _v in DSCP_BY_NAME.items():
    if (_name.startswith("AF") or _name.startswith("CS")) and _v not in _PREFERRED and _name != "CS0":
        _PREFERRED[_v] = _name

ALL_DSCPS = tuple(range(64))

#: Cisco's precedence keywords (IP precedence 0-7).
PRECEDENCE_NAMES = {"routine": 0, "priority": 1, "immediate": 2, "flash": 3, "flash-override": 4, "critical": 5,
                    "internet": 6, "network": 7}


def dscp_name(value: int) -> str:
    """The standard name of a code point, else its number as text."""
    return _PREFERRED.get(value, str(value))


def dscp_value(token: str) -> int | None:
    """A DSCP given by name (any case) or number 0-63, hexadecimal ``0x2e`` included; None when not one."""
    t = token.strip().upper()
    if t in DSCP_BY_NAME:
        return DSCP_BY_NAME[t]
    try:
        v = int(t, 16) if t.startswith("0X") else int(t)
    except ValueError:
        return None
    return v if 0 <= v <= 63 else None


def precedence_value(token: str) -> int | None:
    t = token.strip().lower()
    if t in PRECEDENCE_NAMES:
        return PRECEDENCE_NAMES[t]
    return int(t) if t.isdigit() and 0 <= int(t) <= 7 else None


def precedence_dscps(prec: int) -> list[int]:
    """The 8 code points whose top three bits are ``prec`` (IP precedence, MPLS EXP or 802.1p CoS by the usual
    one-to-one mapping)."""
    return list(range(8 * prec, 8 * prec + 8))


def sort_dscps(values) -> list[int]:
    return sorted(set(values))
