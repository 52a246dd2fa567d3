"""DiffServ codepoints: the names routers and RFCs use, and the six-bit values they stand for.

Sources: RFC 2474 (class selectors CS0-CS7, the DS field), RFC 2597 (assured forwarding AFxy =
8x + 2y), RFC 3246 (expedited forwarding EF = 46), RFC 5865 (VOICE-ADMIT VA = 44), RFC 8622 (lower effort
LE = 1); DF (default forwarding, RFC 2474) is CS0 = 0, also written BE or default.

A codepoint is written in a scenario as its name (any case: ``EF``, ``af41``, ``cs5``) or as its number
0-63. :func:`canonical` turns either into the one name qosbound prints (``AF31``; a value without a name
prints as its number, ``"5"``), so ``26`` and ``AF31`` are the same precedence and the same metric name
(``critical.drop.AF31``).
"""

from __future__ import annotations

__all__ = ["NAMES", "VALUES", "value", "canonical", "af_drop_precedence"]

#: Name -> six-bit value, for the names the RFCs define (canonical spellings).
NAMES: dict[str, int] = {"DF": 0, "LE": 1, "EF": 46, "VA": 44}
NAMES.update({f"CS{i}": 8 * i for i in range(1, 8)})
NAMES.update({f"AF{x}{y}": 8 * x + 2 * y for x in range(1, 5) for y in range(1, 4)})

#: Value -> canonical name (CS0 is printed DF).
VALUES: dict[int, str] = {v: n for n, v in NAMES.items()}

_ALIASES = {"CS0": "DF", "BE": "DF", "DEFAULT": "DF"}


def value(code) -> int:
    """The six-bit value of a codepoint given by name (any case) or number; ValueError when it is neither."""
    if isinstance(code, bool):
        raise ValueError(f"{code!r} is not a DSCP")
    if isinstance(code, int) or (isinstance(code, float) and code.is_integer()):
        v = int(code)
        if not 0 <= v <= 63:
            raise ValueError(f"DSCP {v} is outside 0-63")
        return v
    if isinstance(code, str):
        text = code.strip().upper()
        if text.isdigit():
            return value(int(text))
        text = _ALIASES.get(text, text)
        if text in NAMES:
            return NAMES[text]
    raise ValueError(f"{code!r} is not a DSCP: give a name (EF, AF11..AF43, CS0..CS7, DF, LE, VA) or a number "
                     "0-63")


def canonical(code) -> str:
    """The name qosbound prints for a codepoint: its RFC name, else its decimal value."""
    v = value(code)
    return VALUES.get(v, str(v))


def af_drop_precedence(code) -> int | None:
    """The AF drop precedence (1, 2, 3) of an AFxy codepoint (RFC 2597: y), None for any other codepoint."""
    name = canonical(code)
    if len(name) == 4 and name.startswith("AF") and name[2] in "1234" and name[3] in "123":
        return int(name[3])
    return None
