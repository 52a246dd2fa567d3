"""Linux ``tc`` scripts and ``tc -j`` JSON -> :class:`~qosbound.configs.tc_ast.TcConfig`.

Scripts: every ``tc qdisc|class|filter add|replace|change|del`` line (``sudo``, ``/sbin/tc``, ``$TC`` and line
continuations accepted), shell variables set by plain assignments (``WAN=eth0``, ``UP=20000``) substituted;
other shell lines are ignored. JSON: the output of ``tc -j qdisc show`` and ``tc -j class show`` (and
``tc -j filter show`` for u32 DSCP matches), in one file (concatenated, or as ``{"qdisc": [...], "class": [...]}``).
Units are read by :func:`qosbound.configs.tc_units.tc_quantity` (scripts) and :func:`~qosbound.configs.tc_units.tc_json_rate`
(JSON, bytes per second).
"""

from __future__ import annotations

import re
import shlex

from qosbound.configs.json_lines import JArray, JObject, JSONLineError, loads_with_lines
from qosbound.configs.source import ConfigText, Source
from qosbound.configs.tc_ast import TcClass, TcConfig, TcFilter, TcMatch, TcQdisc
from qosbound.configs.tc_units import TcUnitError, tc_json_rate, tc_quantity
from qosbound.errors import ConfigError

__all__ = ["parse_tc_script", "parse_tc_json", "OPTION_KINDS"]

#: Option -> kind of value, per qdisc/class kind ("*" for every kind).
OPTION_KINDS: dict[str, dict[str, str]] = {
    "*": {"rate": "rate", "ceil": "rate", "peakrate": "rate", "bandwidth": "rate", "burst": "size",
          "cburst": "size", "mtu": "size", "minburst": "size", "quantum": "size", "avpkt": "size", "min": "size",
          "max": "size", "limit": "size", "latency": "time", "probability": "float", "prio": "int",
          "bands": "int", "r2q": "int", "default": "hex", "priomap": "list", "DP": "int", "setup": "flag",
          "vqs": "int", "direct_qlen": "int", "ecn": "flag", "harddrop": "flag", "adaptive": "flag",
          "nodrop": "flag", "grio": "flag", "offload": "flag", "multiqueue": "flag"},
    "pfifo": {"limit": "int"},
    "red": {"burst": "int"},
    "gred": {"burst": "int"},
}

_KEYWORDS = {"dev", "root", "parent", "handle", "classid", "estimator", "stab", "ingress_block", "egress_block"}
_FILTER_KEYWORDS = _KEYWORDS | {"protocol", "prio", "pref", "chain"}
_QDISC_ALIASES = {"clsact": "clsact", "ingress": "ingress"}


def _kind_of(kind: str, key: str) -> str | None:
    return OPTION_KINDS.get(kind, {}).get(key) or OPTION_KINDS["*"].get(key)


def _value(kind: str, key: str, tok: str, src: Source, text: str, file: str):
    vk = _kind_of(kind, key)
    try:
        if vk in ("rate", "size", "time"):
            return tc_quantity(tok, vk)
        if vk == "float":
            return float(tok)
        if vk == "int":
            return int(float(tok))
        if vk == "hex":
            return int(tok, 16)
    except (TcUnitError, ValueError) as e:
        raise ConfigError(str(e) if isinstance(e, TcUnitError) else f"'{tok}' is not a number for {key}",
                          file=file, line=src.line, construct=text) from None
    return tok


def _options(kind: str, words: list[str], src: Source, text: str, file: str) -> dict:
    out: dict = {}
    i = 0
    while i < len(words):
        k = words[i]
        vk = _kind_of(kind, k)
        if vk == "flag":
            out[k] = True
            i += 1
        elif vk == "list":
            vals = []
            i += 1
            while i < len(words) and words[i].isdigit():
                vals.append(int(words[i]))
                i += 1
            out[k] = vals
        elif vk is not None and i + 1 < len(words):
            out[k] = _value(kind, k, words[i + 1], src, text, file)
            i += 2
        else:
            out.setdefault("_other", []).append(k)
            i += 1
    return out


def _u32(words: list[str], src: Source, text: str, file: str) -> tuple[list[TcMatch], str | None]:
    matches, flowid = [], None
    i = 0
    while i < len(words):
        w = words[i]
        if w == "match" and i + 3 < len(words):
            # match ip dsfield V M | match ip tos V M | match ip protocol V M | match u8 V M at N ...
            layer, field = words[i + 1], words[i + 2]
            if layer in ("ip", "ip6") and field in ("dsfield", "tos", "priority", "class") and i + 4 < len(words):
                try:
                    matches.append(TcMatch("dsfield", int(words[i + 3], 0), int(words[i + 4], 0)))
                except ValueError:
                    raise ConfigError(f"cannot read the DSCP match '{' '.join(words[i:i + 5])}'", file=file,
                                      line=src.line, construct=text) from None
                i += 5
                continue
            matches.append(TcMatch(f"{layer} {field}", 0, 0))
            i += 3
            continue
        if w in ("flowid", "classid") and i + 1 < len(words):
            flowid = words[i + 1]
            i += 2
            continue
        i += 1
    return matches, flowid


_ASSIGN = re.compile(r"^\s*(?:export\s+|local\s+|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_TC = re.compile(r"(?:^|[\s;&|(])(?:sudo\s+)?(?:\S*/)?(?:tc|\$\{?TC\}?)\s+((?:-\S+\s+)*(?:qdisc|class|filter)\s.*)$")


def _logical_lines(text: str):
    """(line number, text) with backslash continuations joined and comments removed."""
    buf, start = "", 0
    for n, raw in enumerate(text.split("\n"), start=1):
        line = raw
        if "#" in line:
            line = re.sub(r"(^|\s)#.*$", "", line)
        if not buf:
            start = n
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        buf += line
        yield start, buf
        buf = ""
    if buf:
        yield start, buf


def parse_tc_script(cfg: ConfigText) -> TcConfig:
    """Every tc command of a shell script, in order (``del root`` clears a device's tree)."""
    out = TcConfig(cfg.file, "tc-script")
    env: dict[str, str] = {"TC": "tc"}
    for line, text in _logical_lines(cfg.text):
        stripped = text.strip()
        if not stripped:
            continue
        m = _ASSIGN.match(stripped)
        if m and " " not in m.group(2).strip().strip("'\""):
            value = _assigned(m.group(2).strip().strip("'\""), env)
            if value is not None:  # a value from arguments or commands is left unset (an error where it is used)
                env[m.group(1)] = value
            else:
                env.pop(m.group(1), None)
            continue
        m = _TC.search(stripped)
        if not m:
            continue
        words = _words(m.group(1), env, cfg.file, line, stripped)
        while words and words[0].startswith("-"):
            words = words[1:]
        if len(words) < 2:
            continue
        obj, verb = words[0], words[1]
        if verb in ("show", "list", "ls", "get"):
            continue
        if verb not in ("add", "replace", "change", "del", "delete", "append", "link"):
            raise ConfigError(f"unknown tc verb '{verb}'", file=cfg.file, line=line, construct=stripped)
        attrs, kind, opts = _attributes(obj, words[2:])
        dev = attrs.get("dev", "")
        if not dev:
            raise ConfigError("a tc command without 'dev'", file=cfg.file, line=line, construct=stripped)
        if verb in ("del", "delete"):
            if obj == "qdisc" and attrs.get("parent") == "root":
                out.qdiscs = [q for q in out.qdiscs if q.dev != dev]
                out.classes = [c for c in out.classes if c.dev != dev]
                out.filters = [f for f in out.filters if f.dev != dev]
            continue
        src = cfg.at(line)
        if obj == "qdisc":
            _qdisc(out, verb, dev, attrs, kind, opts, src, stripped, cfg.file)
        elif obj == "class":
            cid = attrs.get("classid", "")
            if not cid:
                raise ConfigError("a tc class without a classid", file=cfg.file, line=line, construct=stripped)
            _class(out, verb, TcClass(dev, kind, cid, attrs.get("parent", ""),
                                      _options(kind, opts, src, stripped, cfg.file), src, stripped))
        elif obj == "filter":
            prio = attrs.get("prio") or attrs.get("pref") or "0"
            matches, flowid = _u32(opts, src, stripped, cfg.file) if kind == "u32" else ([], None)
            if kind != "u32":
                fl = [opts[j + 1] for j, w in enumerate(opts[:-1]) if w in ("flowid", "classid")]
                flowid = fl[0] if fl else None
            out.filters.append(TcFilter(dev, attrs.get("parent", "root"), int(prio) if prio.isdigit() else 0, kind,
                                        flowid, src, stripped, matches))
    return out


def _assigned(value: str, env: dict[str, str]) -> str | None:
    """The value of a plain assignment with the variables it uses expanded (``RATE=${RATE:-40mbit}``: the default
    when the script has not set RATE); None when it uses one the script does not set and gives no default, or a
    command substitution."""
    if "$(" in value or "`" in value or re.search(r"\$\{?[0-9@*#?]", value):
        return None  # a command's output or the script's arguments
    unknown = []

    def sub(v):
        name = v.group(1) or v.group(3)
        if name in env:
            return env[name]
        if v.group(2) is not None:
            return v.group(2)
        unknown.append(name)
        return ""

    out = _VAR.sub(sub, value)
    return None if unknown else out


def _words(cmd: str, env: dict[str, str], file: str, line: int, stripped: str) -> list[str]:
    """The words of one tc command, its ``$VAR`` / ``${VAR:-default}`` expanded from the script's plain
    assignments."""
    def sub(v):
        name = v.group(1) or v.group(3)
        if name in env:
            return env[name]
        if v.group(2) is not None:
            return v.group(2)
        raise ConfigError(f"uses ${name}, which the script does not set by a plain assignment (loops, functions "
                          "and arguments are not run)", file=file, line=line, construct=stripped)

    cmd = _VAR.sub(sub, cmd)
    try:
        return shlex.split(cmd, comments=False)
    except ValueError:
        raise ConfigError("unbalanced quotes", file=file, line=line, construct=stripped) from None


def _attributes(obj: str, rest: list[str]) -> tuple[dict[str, str], str, list[str]]:
    """(the keyword attributes -- dev, parent, handle, classid, ...; the kind; its options) of a tc command's
    words after the verb."""
    attrs: dict[str, str] = {}
    i = 0
    keywords = _FILTER_KEYWORDS if obj == "filter" else _KEYWORDS
    while i < len(rest) and rest[i] in keywords:
        k = rest[i]
        if k == "root":
            attrs["parent"] = "root"
            i += 1
        elif k == "estimator":
            i += 3
        elif i + 1 < len(rest):
            attrs[k] = rest[i + 1]
            i += 2
        else:
            i += 1
    return attrs, rest[i] if i < len(rest) else "", rest[i + 1:]


def _qdisc(out: TcConfig, verb: str, dev: str, attrs: dict[str, str], kind: str, opts: list[str], src: Source,
           stripped: str, file: str) -> None:
    """A qdisc command: added, replacing its parent's, or (``change``) merged into the one it names; ingress
    qdiscs are noted as not modelled."""
    if kind in ("ingress", "clsact") or attrs.get("parent") in ("ffff:", "ffff:fff1"):
        out.notes.append(f"{src}: {stripped}: not modelled: ingress traffic control (policing on input)")
        return
    q = TcQdisc(dev, kind, attrs.get("handle", "0:"), attrs.get("parent", "root"),
                _options(kind, opts, src, stripped, file), src, stripped)
    if verb == "change":
        prev = next((x for x in out.qdiscs if x.dev == dev and x.major == q.major and x.kind == kind), None)
        if prev is not None:
            if kind == "gred" and "DP" in q.options:
                prev.options.setdefault("_dps", []).append((q.options, src))
            else:
                prev.options.update(q.options)
            return
    if verb == "replace":
        out.qdiscs = [x for x in out.qdiscs if not (x.dev == dev and x.parent == q.parent)]
    out.qdiscs.append(q)


def _class(out: TcConfig, verb: str, c: TcClass) -> None:
    """A class command: added, or (``change``, ``replace``) merged into the class of the same id."""
    if verb in ("change", "replace"):
        prev = next((x for x in out.classes if x.dev == c.dev and x.classid == c.classid), None)
        if prev is not None:
            prev.options.update(c.options)
            return
    out.classes.append(c)


# ---------------------------------------------------------------------------------------------- tc -j JSON

_JSON_SIZES = {"burst", "cburst", "limit", "min", "max", "avpkt", "quantum", "mtu", "minburst"}


def _json_options(kind: str, opts: JObject, src: Source, text: str, file: str) -> dict:
    out: dict = {}
    for k, v in (opts or {}).items():
        try:
            if k in ("rate", "ceil", "peakrate", "bandwidth"):
                out[k] = tc_json_rate(v)
            elif k in _JSON_SIZES and isinstance(v, (int, float)) and not isinstance(v, bool):
                out[k] = int(v) if (kind == "pfifo" and k == "limit") or (kind in ("red", "gred") and k == "burst") \
                    else float(v)
            elif k == "priomap" and isinstance(v, list):
                out[k] = [int(x) for x in v]
            elif k == "probability" and isinstance(v, (int, float)):
                out[k] = float(v)
            elif k in ("prio", "bands", "r2q", "direct_qlen") and isinstance(v, (int, float)):
                out[k] = int(v)
            elif k == "default" and isinstance(v, str):
                out[k] = int(v.replace("0x", ""), 16)
            elif k == "default" and isinstance(v, int):
                out[k] = v
            elif k in ("ecn", "harddrop", "adaptive") and v:
                out[k] = True
            elif k == "ewma" and isinstance(v, int):
                out["wlog"] = v
            else:
                out.setdefault("_other", []).append(k)
        except (TcUnitError, ValueError) as e:
            raise ConfigError(f"option {k}: {e}", file=file, line=src.line, construct=text) from None
    return out


def parse_tc_json(cfg: ConfigText) -> TcConfig:
    """``tc -j qdisc show`` / ``class show`` / ``filter show`` output (one or several documents)."""
    try:
        doc = loads_with_lines(cfg.text)
    except JSONLineError as e:
        raise ConfigError(f"malformed JSON: {e.problem}", file=cfg.file, line=e.line) from None
    items: list = []

    def collect(d):
        if isinstance(d, JArray) or isinstance(d, list):
            for x in d:
                collect(x)
        elif isinstance(d, JObject):
            if any(k in d for k in ("kind", "class", "handle")) and not any(k in d for k in ("qdisc", "qdiscs")):
                items.append(d)
            else:
                for k in ("qdisc", "qdiscs", "class", "classes", "filter", "filters"):
                    if k in d:
                        collect(d[k])
    collect(doc)
    out = TcConfig(cfg.file, "tc-json")
    for it in items:
        src = cfg.at(it.line)
        dev = str(it.get("dev", "") or "unnamed-device")
        if "class" in it and "kind" not in it:
            kind = str(it.get("class"))
            handle = str(it.get("handle", ""))
            text = f"class {kind} {handle} dev {dev}"
            # tc prints a class's own attributes at the top level of its object (a qdisc's under "options")
            opts = it.get("options") if isinstance(it.get("options"), dict) else it
            parent = handle.split(":", 1)[0] + ":" if it.get("root") else str(it.get("parent", ""))
            out.classes.append(TcClass(dev, kind, handle, parent, _json_options(kind, opts, src, text, cfg.file),
                                       src, text))
            continue
        kind = str(it.get("kind", ""))
        if "protocol" in it or kind in ("u32", "fw", "basic", "flower", "matchall", "bpf", "route", "flow"):
            text = f"filter {kind} dev {dev}"
            o = it.get("options") or {}
            flowid = o.get("flowid") or o.get("classid") if isinstance(o, dict) else None
            matches = []
            for m in (o.get("match") or []) if isinstance(o, dict) else []:
                if isinstance(m, dict) and "value" in m and "mask" in m:
                    try:
                        val, mask = int(str(m["value"]), 16), int(str(m["mask"]), 16)
                    except ValueError:
                        continue
                    off = int(m.get("off", m.get("offset", 0)) or 0)
                    if off == 0 and mask & 0x00FF0000:  # the TOS byte is the second byte of the IPv4 header
                        matches.append(TcMatch("dsfield", (val >> 16) & 0xFF, (mask >> 16) & 0xFF))
                    if mask & 0xFF00FFFF:
                        matches.append(TcMatch("other", 0, 0))
            out.filters.append(TcFilter(dev, str(it.get("parent", "root")), int(it.get("pref", 0) or 0), kind,
                                        str(flowid) if flowid else None, src, text, matches))
            continue
        handle = str(it.get("handle", "0:"))
        parent = "root" if it.get("root") else str(it.get("parent", "root"))
        text = f"qdisc {kind} {handle} dev {dev} {'root' if parent == 'root' else 'parent ' + parent}"
        if kind in ("ingress", "clsact"):
            continue
        out.qdiscs.append(TcQdisc(dev, kind, handle, parent, _json_options(kind, it.get("options"), src, text,
                                                                          cfg.file), src, text,
                                  explicit=handle not in ("0:", "0")))
    return out
