"""A scenario parameter addressed by its dotted path: the one dialect of ``admit --vary``, ``sweep --vary``,
``tune --vary`` / ``--maximise`` and ``--max-states``.

A path walks the scenario's mapping from its top: a segment is a mapping's key, or a list's element by its
index or by its ``name`` (``traffic.BE.sizes.0.size``, ``classes.voice.police.cir``,
``flows.voip-ab.traffic.calls``). A name with dots is found as written (``classes.VOICE.RTP.police.cir``: the
longest run of segments naming an element) or quoted (``classes."VOICE.RTP".police.cir``). A path that does
not resolve is a :class:`~qosbound.errors.ScenarioError` (exit 2) naming the path and the first segment that
does not resolve, with where it was looked for.
"""

from __future__ import annotations

import copy

from qosbound.errors import ScenarioError

__all__ = ["get_path", "path_parts", "resolve_path", "set_path"]


def path_parts(dotted: str) -> list[str]:
    """The segments of a dotted parameter path: split at dots, a segment in double or single quotes taken whole
    (``classes."VOICE.RTP".police.cir`` -> ``['classes', 'VOICE.RTP', 'police', 'cir']``). Unquoted names with
    dots are joined again by :func:`resolve_path` against the scenario's own names."""
    parts: list[str] = []
    i, n = 0, len(dotted)
    while i <= n:
        if i < n and dotted[i] in "\"'":
            q = dotted[i]
            j = dotted.find(q, i + 1)
            if j < 0 or (j + 1 < n and dotted[j + 1] != "."):
                raise ScenarioError(f"'{dotted}': a quoted segment is closed by {q} and followed by '.' or the end",
                                    field=dotted)
            parts.append(dotted[i + 1:j])
            i = j + 2
            continue
        j = dotted.find(".", i)
        j = n if j < 0 else j
        parts.append(dotted[i:j])
        i = j + 1
    if any(p == "" for p in parts):
        raise ScenarioError(f"'{dotted}': an empty segment in the parameter path", field=dotted)
    return parts


def _named(item, name: str) -> bool:
    return isinstance(item, dict) and str(item.get("name")) == name


def not_found(dotted: str, resolved: list[str], segment: str) -> ScenarioError:
    """The error of a path that does not resolve: the path, the first segment that does not, and where it was
    looked for (the segments before it, or the scenario's top)."""
    where = f"'{'.'.join(resolved)}'" if resolved else "the scenario's top level"
    return ScenarioError(f"the scenario has no parameter '{dotted}': no '{segment}' in {where}", field=dotted)


def _element(cur: list, parts: list[str], i: int) -> tuple[str, object, int] | None:
    """A list's element addressed from ``parts[i]``: (the segment as resolved, the element, the next index), or
    None. A name (the longest run of segments that names an element) comes before an index, as names with
    dots are read; an index only when no element is so named."""
    for j in range(len(parts), i + 1, -1):
        name = ".".join(parts[i:j])
        hit = next((item for item in cur if _named(item, name)), None)
        if hit is not None:
            return name, hit, j
    part = parts[i]
    if part.isdigit() and int(part) < len(cur):
        return part, cur[int(part)], i + 1
    hit = next((item for item in cur if _named(item, part)), None)
    return (part, hit, i + 1) if hit is not None else None


def resolve_path(raw: dict, dotted: str) -> list[str]:
    """The segments of ``dotted`` as they address ``raw``: a mapping's key, or a list's element by its index or
    its ``name`` -- a name with dots (``classes.VOICE.RTP.police.cir``) is the longest run of segments that
    names an element, so a class named ``VOICE.RTP`` is found whether or not its name is quoted."""
    parts = path_parts(dotted)
    out: list[str] = []
    cur = raw
    i = 0
    while i < len(parts):
        part = parts[i]
        if isinstance(cur, dict) and part in cur:
            out.append(part)
            cur = cur[part]
            i += 1
            continue
        found = _element(cur, parts, i) if isinstance(cur, list) else None
        if found is None:
            raise not_found(dotted, out, part)
        segment, cur, i = found
        out.append(segment)
    return out


def _child(cur, part: str, dotted: str):
    """One step of a resolved parameter path: a mapping's key, or a list's element by its ``name`` or index."""
    if isinstance(cur, dict) and part in cur:
        return cur[part]
    if isinstance(cur, list):
        if part.isdigit() and int(part) < len(cur):
            return cur[int(part)]
        for item in cur:
            if _named(item, part):
                return item
    raise ScenarioError(f"the scenario has no parameter '{dotted}'", field=dotted)


def get_path(raw: dict, dotted: str):
    """The value at a dotted parameter path (see the module docstring)."""
    cur = raw
    for part in resolve_path(raw, dotted):
        cur = _child(cur, part, dotted)
    return cur


def set_path(raw: dict, dotted: str, value) -> dict:
    """Return a copy of ``raw`` with the dotted parameter (as :func:`get_path` addresses it) replaced."""
    out = copy.deepcopy(raw)
    parts = resolve_path(raw, dotted)
    cur = out
    for part in parts[:-1]:
        cur = _child(cur, part, dotted)
    last = parts[-1]
    target = _child(cur, last, dotted)  # the parameter exists
    if isinstance(cur, dict):
        cur[last] = value
    else:
        cur[next(i for i, x in enumerate(cur) if x is target)] = value
    return out
