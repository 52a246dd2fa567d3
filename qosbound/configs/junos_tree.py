"""Junos configuration text (curly-brace or ``set`` commands) -> statements, each a path of words with its line.

Both forms say the same thing: ``class-of-service { schedulers { be { transmit-rate percent 40; } } }`` and
``set class-of-service schedulers be transmit-rate percent 40`` are the statement
``('class-of-service', 'schedulers', 'be', 'transmit-rate', 'percent', '40')``. A bracketed list
(``code-points [ af11 af12 ];``) gives one statement per element; two lists of the same length
(``interpolate { fill-level [ 50 80 ]; drop-probability [ 0 50 ]; }`` is two statements) are paired element by element.
``inactive:`` / ``deactivate`` parts are left out (noted); ``replace:`` / ``protect:`` annotations are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Statement", "parse_curly", "parse_set", "JunosSyntaxError"]


class JunosSyntaxError(ValueError):
    def __init__(self, problem: str, line: int):
        self.problem = problem
        self.line = line
        super().__init__(f"line {line}: {problem}")


@dataclass(frozen=True)
class Statement:
    path: tuple[str, ...]
    line: int
    inactive: bool = False

    def starts(self, *prefix: str) -> bool:
        return self.path[:len(prefix)] == prefix


_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|/\*.*?\*/|[{};\[\]]|[^\s{};\[\]"]+', re.S)


def _expand(words: list, line: int, inactive: bool) -> list[Statement]:
    lists = [i for i, w in enumerate(words) if isinstance(w, list)]
    if not lists:
        return [Statement(tuple(words), line, inactive)]
    if len(lists) == 1:
        i = lists[0]
        return [Statement(tuple(words[:i] + [x] + words[i + 1:]), line, inactive) for x in words[i]] or \
            [Statement(tuple(words[:i] + words[i + 1:]), line, inactive)]
    n = len(words[lists[0]])
    if all(len(words[i]) == n for i in lists):
        out = []
        for k in range(n):
            out.append(Statement(tuple(w[k] if isinstance(w, list) else w for w in words), line, inactive))
        return out
    return [Statement(tuple(" ".join(w) if isinstance(w, list) else w for w in words), line, inactive)]


def parse_curly(text: str) -> list[Statement]:
    """The statements of a curly-brace configuration (comments ``#`` and ``/* */`` skipped)."""
    out: list[Statement] = []
    stack: list[tuple[list, bool]] = []
    words: list = []
    current_list: list | None = None
    stmt_line = 0
    inactive_next = False
    for ln, raw in enumerate(text.split("\n"), start=1):
        if raw.lstrip().startswith("#"):
            continue
        for m in _TOKEN.finditer(raw):
            tok = m.group(0)
            if tok.startswith("/*"):
                continue
            if tok.startswith('"'):
                tok = tok[1:-1]
            if current_list is not None:
                if tok == "]":
                    words.append(current_list)
                    current_list = None
                else:
                    current_list.append(tok)
                continue
            if tok == "[":
                current_list = []
                continue
            if tok in ("inactive:", "replace:", "protect:") and not words:
                inactive_next = inactive_next or tok == "inactive:"
                if not stmt_line:
                    stmt_line = ln
                continue
            if tok == "{":
                parent_inactive = stack[-1][1] if stack else False
                path = (stack[-1][0] if stack else []) + words
                stack.append((path, parent_inactive or inactive_next))
                words, stmt_line, inactive_next = [], 0, False
                continue
            if tok == ";":
                if words:
                    base = stack[-1][0] if stack else []
                    ina = (stack[-1][1] if stack else False) or inactive_next
                    out += _expand(base + words, stmt_line or ln, ina)
                words, stmt_line, inactive_next = [], 0, False
                continue
            if tok == "}":
                if not stack:
                    raise JunosSyntaxError("'}' without a matching '{'", ln)
                if words:
                    raise JunosSyntaxError(f"statement '{' '.join(map(str, words))}' not ended by ';'", ln)
                path, ina = stack.pop()
                continue
            if not words:
                stmt_line = ln
            words.append(tok)
    if current_list is not None:
        raise JunosSyntaxError("'[' without a matching ']' (truncated?)", len(text.split("\n")))
    if stack:
        raise JunosSyntaxError(f"{len(stack)} block(s) not closed by '}}' (truncated?)", len(text.split("\n")))
    if words:
        raise JunosSyntaxError(f"statement '{' '.join(map(str, words))}' not ended by ';'", stmt_line)
    return out


def parse_set(text: str) -> list[Statement]:
    """The statements of ``set`` commands (``deactivate`` marks a path inactive; other commands are ignored)."""
    out: list[Statement] = []
    inactive: list[tuple[str, ...]] = []
    for ln, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        toks = [m.group(0) for m in _TOKEN.finditer(line)]
        toks = [t[1:-1] if t.startswith('"') else t for t in toks if not t.startswith("/*")]
        if not toks:
            continue
        if toks[0] == "deactivate":
            inactive.append(tuple(toks[1:]))
            continue
        if toks[0] != "set":
            continue
        words: list = []
        cur: list | None = None
        for t in toks[1:]:
            if cur is not None:
                if t == "]":
                    words.append(cur)
                    cur = None
                else:
                    cur.append(t)
            elif t == "[":
                cur = []
            else:
                words.append(t)
        if cur is not None:
            raise JunosSyntaxError("'[' without a matching ']'", ln)
        out += _expand(words, ln, False)
    if inactive:
        out = [Statement(s.path, s.line, any(s.path[:len(p)] == p for p in inactive)) for s in out]
    return out
