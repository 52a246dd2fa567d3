"""DiffServ codepoints: the names routers and RFCs use, the six-bit values they stand for, and IP precedence --
one table for every layer (scenarios, configuration importers, reports).

Sources: RFC 2474 (class selectors CS0-CS7, the DS field; DF, default forwarding, is CS0 = 0, also written BE or
default), RFC 2597 (assured forwarding AFxy = 8x + 2y), RFC 3246 (expedited forwarding EF = 46), RFC 5865
(VOICE-ADMIT VA = 44), RFC 8622 (lower effort LE = 1). IP precedence (RFC 791) is the top three bits of the DS
field; MPLS EXP and 802.1p CoS carry it one-to-one by the usual mapping.

A codepoint is written as its name (any case: ``EF``, ``af41``, ``cs5``, ``voice-admit``) or its number 0-63
(decimal, or hexadecimal ``0x2e`` as some vendors print it). :func:`canonical` turns either into the one name
qosbound prints (``AF31``; a value without a name prints as its number, ``"5"``), so ``26`` and ``AF31`` are the
same precedence and the same metric name (``critical.drop.AF31``).
"""

from __future__ import annotations

__all__ = ["NAMES", "VALUES", "ALL", "PRECEDENCE_NAMES", "value", "parse", "canonical", "name",
           "af_drop_precedence", "precedence_value", "precedence_dscps"]

#: Canonical name -> six-bit value, for the names the RFCs define.
NAMES: dict[str, int] = {"DF": 0, "LE": 1, "EF": 46, "VA": 44}
NAMES.update({f"CS{i}": 8 * i for i in range(1, 8)})
NAMES.update({f"AF{x}{y}": 8 * x + 2 * y for x in range(1, 5) for y in range(1, 4)})

#: Value -> canonical name (CS0 is printed DF).
VALUES: dict[int, str] = {v: n for n, v in NAMES.items()}

#: Other spellings of named codepoints.
_ALIASES = {"CS0": "DF", "BE": "DF", "DEFAULT": "DF", "VOICE-ADMIT": "VA"}

#: Every codepoint.
ALL = tuple(range(64))

#: Cisco's precedence keywords (IP precedence 0-7, RFC 791).
PRECEDENCE_NAMES = {"routine": 0, "priority": 1, "immediate": 2, "flash": 3, "flash-override": 4, "critical": 5,
                    "internet": 6, "network": 7}


def parse(token) -> int | None:
    """The six-bit value of a codepoint given by name (any case), number 0-63 or hexadecimal ``0x2e``; None when
    the token is none of these."""
    if isinstance(token, bool):
        return None
    if isinstance(token, int) or (isinstance(token, float) and token.is_integer()):
        v = int(token)
        return v if 0 <= v <= 63 else None
    if not isinstance(token, str):
        return None
    t = token.strip().upper()
    t = _ALIASES.get(t, t)
    if t in NAMES:
        return NAMES[t]
    try:
        v = int(t, 16) if t.startswith("0X") else int(t)
    except ValueError:
        return None
    return v if 0 <= v <= 63 else None


def value(code) -> int:
    """The six-bit value of a codepoint (see :func:`parse`); ValueError naming what is accepted when it is none."""
    v = parse(code)
    if v is None:
        if isinstance(code, (int, float)) and not isinstance(code, bool):
            raise ValueError(f"DSCP {code!r} is outside 0-63")
        raise ValueError(f"{code!r} is not a DSCP: give a name (EF, AF11..AF43, CS0..CS7, DF, LE, VA) or a number "
                         "0-63")
    return v


def name(v: int) -> str:
    """The name qosbound prints for the codepoint of value ``v``: its RFC name, else its decimal value."""
    return VALUES.get(v, str(v))


def canonical(code) -> str:
    """The name qosbound prints for a codepoint given in any accepted form."""
    return name(value(code))


def af_drop_precedence(code) -> int | None:
    """The AF drop precedence (1, 2, 3) of an AFxy codepoint (RFC 2597: y), None for any other codepoint."""
    n = canonical(code)
    if len(n) == 4 and n.startswith("AF") and n[2] in "1234" and n[3] in "123":
        return int(n[3])
    return None


def precedence_value(token: str) -> int | None:
    """An IP precedence given by number 0-7 or Cisco's keyword (``critical`` = 5); None when it is neither."""
    t = token.strip().lower()
    if t in PRECEDENCE_NAMES:
        return PRECEDENCE_NAMES[t]
    return int(t) if t.isdigit() and 0 <= int(t) <= 7 else None


def precedence_dscps(prec: int) -> list[int]:
    """The 8 codepoints whose top three bits are ``prec`` (IP precedence, or MPLS EXP / 802.1p CoS by the usual
    one-to-one mapping)."""
    return list(range(8 * prec, 8 * prec + 8))
