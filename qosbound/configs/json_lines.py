"""JSON with the line of every object, array and key: the standard library's ``json`` gives values, not where they
are, and every node of an imported configuration needs its line.

A small recursive-descent reader over JSON (RFC 8259): strings are decoded by the standard library's scanner
(``json.decoder.scanstring``), numbers by its number pattern. Objects become :class:`JObject` (a ``dict`` with
``line`` and ``key_lines``), arrays :class:`JArray` (a ``list`` with ``line``). Several JSON documents one after
another (two ``tc -j`` dumps in one file) are read as a :class:`JArray` of them.
"""

from __future__ import annotations

import json.decoder
import json.scanner
import re

__all__ = ["JObject", "JArray", "loads_with_lines", "JSONLineError"]

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = json.scanner.NUMBER_RE
_MAX_DEPTH = 200


class JSONLineError(ValueError):
    """Malformed JSON: ``line`` and the problem."""

    def __init__(self, problem: str, line: int):
        self.problem = problem
        self.line = line
        super().__init__(f"line {line}: {problem}")


class JObject(dict):
    """A JSON object with the line where it opens and the line of each key."""

    line: int = 0
    key_lines: dict

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


class JArray(list):
    line: int = 0


class _Reader:
    def __init__(self, text: str):
        self.s = text
        self.newlines = [m.start() for m in re.finditer("\n", text)]

    def line(self, pos: int) -> int:
        lo, hi = 0, len(self.newlines)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.newlines[mid] < pos:
                lo = mid + 1
            else:
                hi = mid
        return lo + 1

    def fail(self, problem: str, pos: int) -> JSONLineError:
        if pos >= len(self.s.rstrip()) - 1 and "truncated" not in problem:
            problem += " (the document ends there: truncated?)"
        return JSONLineError(problem, self.line(min(pos, len(self.s))))

    def ws(self, pos: int) -> int:
        return _WS.match(self.s, pos).end()

    def value(self, pos: int, depth: int):
        if depth > _MAX_DEPTH:
            raise self.fail("nested too deeply", pos)
        pos = self.ws(pos)
        if pos >= len(self.s):
            raise self.fail("unexpected end of the document (truncated?)", pos)
        ch = self.s[pos]
        if ch == "{":
            return self.obj(pos, depth)
        if ch == "[":
            return self.arr(pos, depth)
        if ch == '"':
            try:
                return json.decoder.scanstring(self.s, pos + 1, True)
            except json.JSONDecodeError as e:
                raise self.fail(e.msg, e.pos) from None
        m = _NUMBER.match(self.s, pos)
        if m and m.end() > pos:
            i, f, e = m.groups()
            return (float(i + (f or "") + (e or "")) if f or e else int(i)), m.end()
        for word, val in (("true", True), ("false", False), ("null", None)):
            if self.s.startswith(word, pos):
                return val, pos + len(word)
        raise self.fail(f"unexpected character {self.s[pos]!r}", pos)

    def obj(self, pos: int, depth: int):
        out = JObject()
        out.line, out.key_lines = self.line(pos), {}
        pos = self.ws(pos + 1)
        if self.s.startswith("}", pos):
            return out, pos + 1
        while True:
            pos = self.ws(pos)
            if not self.s.startswith('"', pos):
                raise self.fail("expected a key in double quotes", pos)
            kline = self.line(pos)
            try:
                key, pos = json.decoder.scanstring(self.s, pos + 1, True)
            except json.JSONDecodeError as e:
                raise self.fail(e.msg, e.pos) from None
            pos = self.ws(pos)
            if not self.s.startswith(":", pos):
                raise self.fail("expected ':' after a key", pos)
            val, pos = self.value(pos + 1, depth + 1)
            out[key] = val
            out.key_lines[key] = kline
            pos = self.ws(pos)
            if self.s.startswith(",", pos):
                pos += 1
                continue
            if self.s.startswith("}", pos):
                return out, pos + 1
            raise self.fail("expected ',' or '}'", pos)

    def arr(self, pos: int, depth: int):
        out = JArray()
        out.line = self.line(pos)
        pos = self.ws(pos + 1)
        if self.s.startswith("]", pos):
            return out, pos + 1
        while True:
            val, pos = self.value(pos, depth + 1)
            out.append(val)
            pos = self.ws(pos)
            if self.s.startswith(",", pos):
                pos += 1
                continue
            if self.s.startswith("]", pos):
                return out, pos + 1
            raise self.fail("expected ',' or ']'", pos)


def loads_with_lines(text: str):
    """The JSON value(s) of ``text`` with lines; several documents in a row come back as a JArray of them."""
    r = _Reader(text)
    docs = []
    pos = r.ws(0)
    while pos < len(text):
        val, pos = r.value(pos, 0)
        docs.append(val)
        pos = r.ws(pos)
    if not docs:
        raise JSONLineError("no JSON value", 1)
    if len(docs) == 1:
        return docs[0]
    out = JArray(docs)
    out.line = 1
    return out
