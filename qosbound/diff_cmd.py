"""``qosbound diff OLD NEW``: what a configuration change does to every port's answers and SLOs.

OLD and NEW are two folders (or files) of router configurations, or, with ``--git``, two revisions of a folder in
the git repository of the current directory (``qosbound diff --git main HEAD configs/``). Both sides are imported
with the same traffic and SLO files (:mod:`qosbound.configs_cli`'s rules) and evaluated by the same methods (the
closed forms unless ``--methods`` says otherwise). Per port (matched by host and interface) and class it reports
what changed in the configuration -- each field with its value before and after and the line that sets it now --,
the answers before and after, and every SLO whose state changed. The report is Markdown, fit for a merge-request
comment (``--out FILE`` also writes it to a file).

Exit code: 1 when an SLO that held before fails after (or a port's new SLO fails); 2 when a side cannot be
imported (a refusal names the file and line); 0 otherwise.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from qosbound.configs import import_configs
from qosbound.configs.imported import ImportedPort
from qosbound.configs.slos import SLOSpec, check_all_used, load_slos, slos_for
from qosbound.errors import QosboundError
from qosbound.pages import write_html
from qosbound.units import format_quantity

__all__ = ["add_arguments", "run", "PortDiff", "diff_ports", "markdown"]

#: The answers a diff shows per class (the SLO metrics are added).
_SHOWN = ("delay.max", "delay.mean", "delay.p99", "loss", "throughput", "rate")


def add_arguments(parser) -> None:
    parser.add_argument("old", metavar="OLD", help="configurations before: a folder or file (with --git: a revision)")
    parser.add_argument("new", metavar="NEW", help="configurations after: a folder or file (with --git: a revision)")
    parser.add_argument("path", nargs="?", default=None, metavar="DIR",
                        help="with --git: the folder of configurations in the repository (default: all of it)")
    parser.add_argument("--git", action="store_true", help="OLD and NEW are git revisions of DIR in the current "
                                                           "directory's repository")
    parser.add_argument("--traffic", metavar="T.yaml", help="the traffic file, for both sides")
    parser.add_argument("--slos", metavar="SLOS.yaml", help="the SLO file, for both sides")
    parser.add_argument("--methods", default="closed-form", help="comma-separated methods (default: closed-form)")
    parser.add_argument("--out", metavar="FILE", help="also write the Markdown summary to FILE")
    parser.add_argument("--json", action="store_true", help="print the machine-readable form instead")
    parser.add_argument("--html", metavar="FILE", help="also write one self-contained HTML page of the diff to FILE")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


@dataclass
class Side:
    """One side of the diff for one port: its imported port, its results and its SLO outcomes."""

    port: ImportedPort
    results: list = field(default_factory=list)
    slos: dict = field(default_factory=dict)  # SLO name -> (status, verdicts)
    error: str = ""


@dataclass
class PortDiff:
    key: str  # host interface
    old: Side | None
    new: Side | None
    changes: list[tuple[str, str, str, str]] = field(default_factory=list)  # (path, before, after, line now)
    answers: list[tuple[str, str, str, str]] = field(default_factory=list)  # (metric, method, before, after)
    slo_changes: list[tuple[str, str, str]] = field(default_factory=list)  # (SLO, before, after)

    @property
    def breaks(self) -> list[str]:
        """The SLOs that held before (or did not exist) and fail now."""
        return [name for name, before, after in self.slo_changes
                if after in ("violated", "missing") and before not in ("violated", "missing")]


def _flatten(value, at: str, out: dict) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{at}.{k}" if at else str(k), out)
    else:
        out[at] = value


def _fields(p: ImportedPort) -> dict:
    """The port's queueing fields, flat, classes by name (``classes.VOICE.police.cir``)."""
    out: dict = {}
    scn = dict(p.scenario)
    classes = scn.pop("classes", [])
    scn.pop("name", None)
    scn.pop("description", None)
    _flatten(scn, "", out)
    for c in classes:
        _flatten({k: v for k, v in c.items() if k != "name"}, f"classes.{c['name']}", out)
        out.setdefault(f"classes.{c['name']}", "(class)")
    if p.shaper:
        _flatten({"rate": p.shaper["cir"], "bc": p.shaper["bc"]}, "shaper", out)
    return out


def _text(v) -> str:
    return "-" if v is None else (json.dumps(v) if isinstance(v, (list, dict)) else str(v))


def config_changes(old: ImportedPort | None, new: ImportedPort | None) -> list[tuple[str, str, str, str]]:
    """(field, before, after, the line that sets it now -- or set it before, for a removed field)."""
    a = _fields(old) if old else {}
    b = _fields(new) if new else {}
    out = []
    for path in list(a) + [k for k in b if k not in a]:
        if a.get(path) != b.get(path):
            where = (new.lines_for(path) if new and path in b else old.lines_for(path) if old else "") or ""
            out.append((path, _text(a.get(path)), _text(b.get(path)), where))
    return out


def _evaluate(p: ImportedPort, slos: list[dict], methods: list[str]) -> Side:
    from qosbound.agreement import agreements
    from qosbound.cli import _evaluate_methods, isolated
    from qosbound.progress import QUIET
    from qosbound.report import slo_outcomes
    from qosbound.scenario import build
    from qosbound.systems import get_system
    from qosbound.verdicts import judge_slos

    side = Side(p)
    if p.refusals:
        side.error = str(p.refusals[0])
        return side
    raw = p.document()
    if slos:
        raw["slos"] = slos
    scn = build(raw, f"{p.file}#{p.interface}")
    system = get_system("port")
    results, _, _ = isolated(_evaluate_methods, system, scn, methods, QUIET, what=f"evaluating {scn.name}")
    side.results = results
    verdicts = judge_slos(system, scn, results) + [v for v in agreements(results) + system.agreements(scn, results)
                                                   if v.kind == "slo"]
    side.slos = {name: (status, vs) for name, status, vs in slo_outcomes(verdicts)}
    return side


def _value(results, metric: str, method: str) -> str:
    for r in results:
        if r.metric == metric and r.method == method:
            kind = f" ({r.interval.label()})" if r.interval is not None else ""
            return format_quantity(r.value, r.unit) + kind
    return "-"


def diff_ports(old: list[ImportedPort], new: list[ImportedPort], spec: SLOSpec, methods: list[str]) -> list[PortDiff]:
    """Per port (host and interface) of either side: the configuration's changes, the answers that changed and the
    SLOs whose state changed."""
    def key(p):
        return f"{p.host} {p.interface}"

    a = {key(p): p for p in old}
    b = {key(p): p for p in new}
    used: set[int] = set()
    out = []
    for k in list(a) + [k for k in b if k not in a]:
        po, pn = a.get(k), b.get(k)
        so = _evaluate(po, slos_for(po, spec, used), methods) if po else None
        sn = _evaluate(pn, slos_for(pn, spec, used), methods) if pn else None
        d = PortDiff(k, so, sn, config_changes(po, pn))
        metrics = []
        for s in (so, sn):
            for r in (s.results if s else []):
                wanted = r.metric.endswith(tuple("." + q for q in _SHOWN)) or any(
                    r.metric == vs[0].metric for _, vs in s.slos.values())
                if wanted and (r.metric, r.method) not in metrics:
                    metrics.append((r.metric, r.method))
        for m, meth in metrics:
            before = _value(so.results, m, meth) if so else "-"
            after = _value(sn.results, m, meth) if sn else "-"
            if before != after:
                d.answers.append((m, meth, before, after))
        names = list((so.slos if so else {}).keys())
        names += [n for n in (sn.slos if sn else {}) if n not in names]
        for n in names:
            before = so.slos[n][0] if so and n in so.slos else "absent"
            after = sn.slos[n][0] if sn and n in sn.slos else "absent"
            if before != after:
                d.slo_changes.append((n, before, after))
        out.append(d)
    check_all_used(spec, used, old + new)
    return out


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(diffs: list[PortDiff], old_label: str, new_label: str, methods: list[str]) -> str:
    """The summary: a headline (SLOs broken / fixed), then per port that changed its configuration changes, its
    SLO changes and its answers before and after."""
    broken = [(d.key, n) for d in diffs for n in d.breaks]
    fixed = [(d.key, n) for d in diffs for n, before, after in d.slo_changes
             if before in ("violated", "missing") and after == "holds"]
    lines = [f"## qosbound diff: {old_label} -> {new_label}", ""]
    changed = [d for d in diffs if d.changes or d.slo_changes or d.answers
               or (d.old and d.old.error) or (d.new and d.new.error)]
    head = (f"**{len(broken)} SLO{'s' if len(broken) != 1 else ''} broken**" if broken else "No SLO broken")
    lines.append(f"{head}, {len(fixed)} fixed; {len(changed)} of {len(diffs)} ports changed (methods: "
                 f"{', '.join(methods)}).")
    for port, n in broken:
        lines.append(f"- :x: `{port}`: {n}")
    for port, n in fixed:
        lines.append(f"- :white_check_mark: `{port}`: {n}")
    for d in changed:
        lines += ["", f"### {d.key}" + ("" if d.old else " (new port)") + ("" if d.new else " (removed)")]
        for s, label in ((d.old, "before"), (d.new, "after")):
            if s and s.error:
                lines.append(f"- refused {label}: {_cell(s.error)}")
        if d.changes:
            lines += ["", "| configuration | before | after | line |", "|---|---|---|---|"]
            lines += [f"| `{_cell(p)}` | {_cell(a)} | {_cell(b)} | {_cell(w)} |" for p, a, b, w in d.changes]
        if d.slo_changes:
            lines += ["", "| SLO | before | after |", "|---|---|---|"]
            for n, a, b in d.slo_changes:
                mark = " :x:" if n in d.breaks else ""
                lines.append(f"| {_cell(n)} | {a} | {b}{mark} |")
        if d.answers:
            lines += ["", "| answer | method | before | after |", "|---|---|---|---|"]
            lines += [f"| {_cell(m)} | {meth} | {a} | {b} |" for m, meth, a, b in d.answers]
    return "\n".join(lines) + "\n"


def _git_tree(rev: str, path: str | None, dest: Path) -> str:
    """Write the files of ``path`` at revision ``rev`` of the current directory's repository into ``dest``."""
    def git(*args) -> bytes:
        proc = subprocess.run(["git", *args], capture_output=True)
        if proc.returncode != 0:
            raise QosboundError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace').strip()}")
        return proc.stdout

    if shutil.which("git") is None:
        raise QosboundError("--git: git is not installed")
    prefix = git("rev-parse", "--show-prefix").decode().strip()
    spec = f"{prefix}{path.rstrip('/')}" if path and path != "." else prefix.rstrip("/")
    names = git("ls-tree", "-r", "--name-only", "--full-tree", rev, "--", spec or ".").decode().splitlines()
    if not names:
        raise QosboundError(f"--git: revision {rev} has no files under '{path or '.'}'")
    for name in names:
        rel = Path(name).relative_to(spec) if spec else Path(name)
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(git("show", f"{rev}:{name}"))
    return f"{rev}:{path or '.'}"


def run(args) -> int:
    from qosbound.cli import _methods_arg

    methods = _methods_arg(args.methods) or ["closed-form"]
    spec = load_slos(args.slos) if args.slos else SLOSpec()
    with tempfile.TemporaryDirectory(prefix="qosbound-diff-") as tmp:
        if args.git:
            sides = []
            for label, rev in (("old", args.old), ("new", args.new)):
                dest = Path(tmp) / label
                dest.mkdir()
                sides.append((_git_tree(rev, args.path, dest), dest))
            # the files read from git carry the folder's own names in their provenance
            (old_label, old_dir), (new_label, new_dir) = sides
            old_paths, new_paths = [str(old_dir)], [str(new_dir)]
        else:
            if args.path:
                raise QosboundError("DIR is for --git (two revisions of one folder); compare two folders as OLD NEW")
            for p in (args.old, args.new):
                if not Path(p).exists():
                    raise QosboundError(f"{p}: no such file or folder (two revisions of a folder: --git OLD NEW DIR)")
            old_label, new_label, old_paths, new_paths = args.old, args.new, [args.old], [args.new]
        old = import_configs(old_paths, args.traffic).ports
        new = import_configs(new_paths, args.traffic).ports
        if args.git:
            for ports, label, d in ((old, old_label, old_dir), (new, new_label, new_dir)):
                _relabel(ports, str(d), label.split(":", 1)[0])
        diffs = diff_ports(old, new, spec, methods)
    text = markdown(diffs, old_label, new_label, methods)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    broken = [n for d in diffs for n in d.breaks]
    refused = [s.error for d in diffs for s in (d.old, d.new) if s and s.error]
    code = 2 if refused else 1 if broken else 0
    doc = {"old": old_label, "new": new_label, "methods": methods, "exit_code": code,
           "ports": [{"port": d.key, "new_only": d.old is None, "removed": d.new is None,
                      "changes": [dict(zip(("field", "before", "after", "line"), c)) for c in d.changes],
                      "slo_changes": [dict(zip(("slo", "before", "after"), c)) for c in d.slo_changes],
                      "broken": d.breaks,
                      "answers": [dict(zip(("metric", "method", "before", "after"), c)) for c in d.answers],
                      "refused": [s.error for s in (d.old, d.new) if s and s.error]}
                     for d in diffs]}
    if args.html:
        write_html(args.html, doc, "diff", source=f"{old_label} -> {new_label}")
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(text, end="")
    return code


def _relabel(ports: list[ImportedPort], folder: str, rev: str) -> None:
    """Files read from a revision name the revision instead of the temporary folder: ``REV:path:line``."""
    def fix(text: str) -> str:
        return text.replace(folder + "/", f"{rev}:") if isinstance(text, str) else text

    for p in ports:
        p.file = fix(p.file)
        p.provenance = {k: fix(v) for k, v in p.provenance.items()}
        p.refusals = [type(e)(e.problem, file=fix(e.file), line=getattr(e, "line", None),
                              construct=getattr(e, "construct", None), field=e.field) if hasattr(e, "construct")
                      else e for e in p.refusals]
