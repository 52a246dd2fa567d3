"""Generate the inputs of the qosbound paper from qosbound's own outputs.

Two stages, both driven by ``paper/Makefile``:

``python paper/generate.py run --out DIR [--quick]``
    runs the commands whose outputs the paper reports -- ``qosbound reproduce PAPER --json`` for every
    source paper (figures into ``DIR/PAPER/``), ``qosbound plan`` on the Ferrari et al. test bed and on the
    100 Mbit/s WAN port, ``qosbound validate --ns3`` on the ns-3-matched port -- and records the versions of
    qosbound, Storm/stormpy, PRISM, ns-3 and Python, the commit, the date and each command's time
    (``DIR/data/``). Full mode (no ``--quick``) writes into ``paper/`` itself: it regenerates every
    committed output folder.

``python paper/generate.py tex --data DIR --out GEN``
    writes what ``qosbound.tex`` inputs: ``macros.tex`` (one ``\\newcommand`` per number quoted in the
    text), the tables (``tab-*.tex``), the figure blocks and the figures drawn from the JSON documents
    (``fig-*.pdf``), and ``check.json``: the plain text of every macro and table cell, which
    ``tests/test_paper.py`` looks for in the PDF.

Nothing in the tables or macros is typed: each value is read from a JSON document written by a command of
the ``run`` stage. Reading the claims of a ``reproduce --json`` document is :func:`claim_rows`, the one
place that knows their layout (kinds, verdicts, the result rows judging each claim).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.metadata
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPER_DIR = ROOT / "paper"

#: The source papers, in the order of the paper's sections: (name, BibTeX key, authors and year).
PAPERS = (
    ("ferrari2001", "ferrari2001", "Ferrari, Pau \\& Raffaelli (2001)"),
    ("takeo2003", "takeo2003", "Takeo \\& Tasaka (2003)"),
    ("koehler1999", "koehler1999", "K\\\"ohler \\& Sch\\\"afer (1999)"),
    ("qstp2008", "jourjon2008", "Jourjon, Lochin \\& S\\'enac (2008)"),
    ("tsq", "claypool2005", "Claypool, Kinicki \\& Kumar (2005)"),
)

#: The figures each paper's section shows: (file stem written by ``reproduce --out``, caption, width as a
#: fraction of the text width). Figures of several panels take the whole width; two consecutive half-width
#: figures share a float.
FIGURES = {
    "ferrari2001": [
        ("ferrari2001_fig3", "Fig.~3 of Ferrari et al.\\ recomputed: mean EF delay against the best-effort payload "
                             "by the exact chain, the simulator (95\\,\\% intervals) and eq.~(7).", 0.75),
        ("ferrari2001_wm", "Hypotheses for the growth of the measured $W_m$ with $K$ (simulated paths of several "
                           "hops) against the paper's measurements.", 1.0),
    ],
    "takeo2003": [
        ("takeo2003_cases", "The six cases of Table~V simulated as a network, against the additional delay "
                            "(Figs.~3--7 in the paper's form).", 1.0),
    ],
    "koehler1999": [
        ("koehler1999_fig4", "Two-Bit DS: goodput per data/ACK class combination, one panel per RTT, one line per "
                             "load (error bars: 95\\,\\% intervals).", 1.0),
        ("koehler1999_fig6", "One AF class with trTCM and n-RED: the same as the figure above.", 1.0),
    ],
    "qstp2008": [
        ("qstp2008_fig4", "Fig.~4 of Jourjon et al.: the studied flow's throughput (TCP, TFRC, gTFRC) against "
                          "15 TCP flows.", 1.0),
        ("qstp2008_fig7", "Fig.~7: the CBQ test bed, the studied flow against UDP.", 0.8),
    ],
    "tsq": [
        ("tsq_quality_vs_hint", "Audio flow: quality against the delay hint (TSQ over PI).", 0.49),
        ("tsq_video_quality_vs_hint", "Video flow: quality against the delay hint.", 0.49),
        ("tsq_mixed_normalised_quality", "Mixed traffic: quality normalised by PI alone's.", 0.49),
        ("tsq_udp_mix_normalised_quality", "Unresponsive UDP audio mixes: normalised quality.", 0.49),
    ],
}

#: The scenarios whose ``plan`` the methods section reports.
PLANS = (("ferrari2001", "examples/ferrari2001.yaml"), ("wan100", "examples/wan100.yaml"))
NS3_SCENARIO = "examples/ns3_matched.yaml"


# --------------------------------------------------------------------------------------------- the run stage

def _qosbound(args: list[str], stdout: Path) -> tuple[int, float]:
    """Run ``python -m qosbound ARGS`` from the repository's root with stdout into a file; (exit code, s)."""
    t0 = time.monotonic()
    with open(stdout, "w", encoding="utf-8") as f:
        proc = subprocess.run([sys.executable, "-m", "qosbound", *args], stdout=f, stderr=subprocess.PIPE,
                              text=True, cwd=str(ROOT))
    seconds = time.monotonic() - t0
    # the files the command wrote under the repository are named from its root (no machine's path committed)
    text = stdout.read_text(encoding="utf-8")
    root = json.dumps(str(ROOT) + os.sep)[1:-1]
    if root in text:
        stdout.write_text(text.replace(root, ""), encoding="utf-8")
    # 0 and 1 are answers (1: a claim NOT MET, an SLO violated): the paper shows them; anything else is a failure
    if proc.returncode not in (0, 1):
        raise SystemExit(f"generate.py: qosbound {' '.join(args)} exited {proc.returncode}:\n"
                         f"{proc.stderr[-3000:]}")
    return proc.returncode, seconds


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=str(ROOT),
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def versions() -> dict[str, str]:
    """The versions the paper records: qosbound, Storm and stormpy, PRISM, ns-3, Python; and the commit."""
    out = {"python": platform.python_version()}
    sys.path.insert(0, str(ROOT))
    import qosbound  # the worktree's, as the commands run it

    out["qosbound"] = qosbound.__version__
    try:
        import stormpy
        import stormpy.info

        out["stormpy"] = stormpy.__version__
        out["storm"] = stormpy.info.storm_version()
    except ImportError:
        out["stormpy"] = out["storm"] = "not installed"
    try:
        out["ns3"] = importlib.metadata.version("ns3")
    except importlib.metadata.PackageNotFoundError:
        out["ns3"] = "not installed"
    prism = shutil.which("prism")
    out["prism"] = "not on PATH"
    if prism:
        try:
            text = subprocess.run([prism, "-version"], capture_output=True, text=True, timeout=120).stdout
            m = re.search(r"PRISM version\s+(\S+)", text) or re.search(r"(\d+\.\d+\S*)", text)
            out["prism"] = m.group(1) if m else text.strip().splitlines()[0]
        except (OSError, subprocess.SubprocessError, IndexError):
            out["prism"] = "not runnable"
    commit = _git("rev-parse", "--short=12", "HEAD") or "unknown"
    dirty = _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!paper/build")
    out["commit"] = commit + ("+local changes" if dirty else "")
    return out


def run(out: Path, quick: bool) -> None:
    """Run every command of the paper, writing its outputs under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    data = out / "data"
    data.mkdir(exist_ok=True)
    mode = ["--quick"] if quick else []
    # the versions and the commit before any output is written (full mode rewrites committed files)
    log = {"mode": "quick" if quick else "full", "started": _dt.datetime.now(_dt.timezone.utc).isoformat(
        timespec="seconds"), "versions": versions(), "commands": []}
    for paper, _, _ in PAPERS:
        folder = out / paper
        if folder.exists() and not quick:  # full mode regenerates the committed folder from scratch
            shutil.rmtree(folder)
        folder.mkdir(parents=True, exist_ok=True)
        args = ["reproduce", paper, *mode, "--json", "--quiet", "--out", str(folder)]
        print(f"qosbound {' '.join(args)}", flush=True)
        code, seconds = _qosbound(args, folder / "reproduce.json")
        log["commands"].append({"name": paper, "command": _shown(args, out), "exit_code": code,
                                "seconds": round(seconds, 1)})
    for name, scenario in PLANS:
        args = ["plan", scenario, "--json", "--quiet"]
        print(f"qosbound {' '.join(args)}", flush=True)
        code, seconds = _qosbound(args, data / f"plan_{name}.json")
        log["commands"].append({"name": f"plan_{name}", "command": _shown(args, out), "exit_code": code,
                                "seconds": round(seconds, 1)})
    args = ["validate", NS3_SCENARIO, "--ns3", "--json", "--quiet", "--out", str(data / "ns3")]
    print(f"qosbound {' '.join(args)}", flush=True)
    code, seconds = _qosbound(args, data / "validate_ns3.json")
    log["commands"].append({"name": "validate_ns3", "command": _shown(args, out), "exit_code": code,
                            "seconds": round(seconds, 1)})
    (data / "run.json").write_text(json.dumps(log, indent=1) + "\n", encoding="utf-8")
    if not quick:
        for paper, _, authors in PAPERS:
            _folder_readme(out / paper, paper, log)


def _shown(args: list[str], out: Path) -> str:
    """A command as a reader would type it from the repository's root (paths relative to it)."""
    shown = []
    for a in args:
        p = Path(a)
        if p.is_absolute():
            try:
                a = str(p.relative_to(ROOT))
            except ValueError:
                pass
        shown.append(a)
    return "python -m qosbound " + " ".join(shown)


def _folder_readme(folder: Path, paper: str, log: dict) -> None:
    """The README of a committed output folder: the command, commit, date, time and the claim table."""
    cmd = next(c for c in log["commands"] if c["name"] == paper)
    doc = json.loads((folder / "reproduce.json").read_text(encoding="utf-8"))
    claims = claim_rows(doc)
    counts = verdict_counts(claims)
    lines = [f"# `reproduce {paper}` in full mode", "",
             "Generated by `make -C paper` (`paper/generate.py run`); do not edit.", "",
             f"    {cmd['command']} > paper/{paper}/reproduce.json", "",
             f"- commit {log['versions']['commit']}, started {log['started']} (UTC);",
             f"- {cmd['seconds']:.0f} s of wall-clock time on a shared 2-core machine; exit code {cmd['exit_code']}"
             + (" (a claim is NOT MET)" if cmd["exit_code"] == 1 else "") + ";",
             f"- {len(claims)} claims -- " + "; ".join(
                 f"{KINDS[k][0]} {counts[k]['claims']}: {phrase(counts[k])}" for k in KINDS) + ";",
             f"- {(doc.get('multiple_testing') or {}).get('statement', '')}", "",
             "`reproduce.json` is the command's output (each claim with its result rows, its rule, p-values and "
             "reason); the figures beside it are what `--out` wrote. Long texts are cut here (...).", ""]
    for kind, (heading, _) in KINDS.items():
        mine = [c for c in claims if c.kind == kind]
        lines += [f"## {heading[:1].upper() + heading[1:]} ({len(mine)})", ""]
        if not mine:
            lines += ["none", ""]
            continue
        lines += ["| claim | where | paper | qosbound | verdict | reason |", "|---|---|---|---|---|---|"]
        for c in mine:
            cells = [f"{c.claim} (`{c.id}`)", c.where, c.paper, c.qosbound, c.verdict,
                     shorten(c.reason, NOTE_CHARS) if c.verdict != "reproduced" else ""]
            lines.append("| " + " | ".join(x.replace("|", "/").replace("\n", " ") for x in cells) + " |")
        lines.append("")
    (folder / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------------- reading the outputs

@dataclass(frozen=True)
class Claim:
    """One claim of a source paper's claims file as ``reproduce`` judged it (one object of ``claims``)."""

    id: str
    kind: str
    where: str
    claim: str
    paper: str       # the paper's own number(s): the judging rows' paper column, else the file's paper_value
    qosbound: str    # qosbound's number: the judging row (the first that misses the rule, else the first)
    verdict: str
    reason: str      # why NOT MET or not attempted; a finding's cause
    p_adjusted: float | None
    rows: int        # result rows that judge it
    rows_met: int    # of which meet the rule


#: The kinds of claim a claims file holds, in the order the paper shows them: kind -> (heading, macro part).
KINDS = {"behaviour": ("behaviour claims", "Behaviour"),
         "arithmetic": ("arithmetic and transcription checks", "Arithmetic"),
         "hypothesis": ("own hypotheses", "Hypothesis")}
#: The kinds as the summary table's narrow column names them.
KIND_SHORT = {"behaviour": "behaviour", "arithmetic": "arithmetic", "hypothesis": "own hypotheses"}

#: How each claim verdict is counted and shown: verdict -> (label, counter; the counter names a macro part).
VERDICTS = {"reproduced": ("reproduced", "reproduced"),
            "NOT MET": ("NOT MET", "notmet"),
            "finding": ("finding", "findings"),
            "not attempted": ("not attempted", "notattempted")}

#: The longest text of one table cell (a row's value, a not-attempted reason) and of one note (a NOT MET's or a
#: finding's reason); the rest is in the command's reproduce.json, which the caption names.
CELL_CHARS = 100
NOTE_CHARS = 240


def _value_plain(v) -> str:
    """A claims file's ``paper_value`` as text: numbers to 6 significant figures, lists and mappings flat."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, float)):
        return f"{v:.6g}"
    if isinstance(v, (list, tuple)):
        return ", ".join(_value_plain(x) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{k}: {_value_plain(x)}" for k, x in v.items())
    return str(v)


def shorten(text: str, limit: int) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters, an ellipsis marking the cut."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 4].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + " ..."


def claim_rows(doc: dict) -> list[Claim]:
    """The claims of one ``qosbound reproduce PAPER --json`` document (its ``claims`` list, one object per claim
    of the paper's claims file; the result rows judging a claim are its ``rows``).

    The only function that knows the layout of a claim; an unknown kind or verdict stops the build."""
    out = []
    for c in doc["claims"]:
        kind, verdict = str(c.get("kind", "")), str(c.get("verdict", ""))
        if kind not in KINDS:
            raise SystemExit(f"generate.py: unknown kind {kind!r} of claim {c.get('id')!r}")
        if verdict not in VERDICTS:
            raise SystemExit(f"generate.py: unknown verdict {verdict!r} of claim {c.get('id')!r}")
        rows = c.get("rows") or []
        papers = list(dict.fromkeys(str(r.get("paper") or "") for r in rows if r.get("paper")))
        paper = shorten("; ".join(papers), CELL_CHARS // 2) if papers else _value_plain(c.get("paper_value"))
        shown = next((r for r in rows if r.get("meets_rule") is False), rows[0] if rows else None)
        qos = shorten(str(shown.get("qosbound") or ""), CELL_CHARS) if shown else ""
        met = sum(bool(r.get("meets_rule")) for r in rows)
        if len(rows) > 1:
            qos += f" [{len(rows)} rows, {met} meet the rule]"
        out.append(Claim(id=str(c.get("id", "")), kind=kind, where=str(c.get("where") or ""),
                         claim=str(c.get("claim", "")), paper=paper, qosbound=qos, verdict=verdict,
                         reason=str(c.get("reason") or ""), p_adjusted=c.get("p_adjusted"), rows=len(rows),
                         rows_met=met))
    return out


def verdict_counts(claims: list[Claim]) -> dict:
    """kind -> counter -> number, with ``claims`` per kind, and ``all`` the sums over the kinds."""
    keys = ("claims",) + tuple(k for _, k in VERDICTS.values())
    counts = {kind: dict.fromkeys(keys, 0) for kind in (*KINDS, "all")}
    for c in claims:
        for kind in (c.kind, "all"):
            counts[kind]["claims"] += 1
            counts[kind][VERDICTS[c.verdict][1]] += 1
    return counts


def phrase(counts: dict) -> str:
    """``4 reproduced, 2 NOT MET, 9 not attempted``: the verdicts of one kind, those with no claim left out."""
    parts = []
    for verdict, (label, key) in VERDICTS.items():
        n = counts[key]
        if n:
            parts.append(f"{n} {label}" + ("s" if key == "findings" and n != 1 else ""))
    return ", ".join(parts) if parts else "none"


# ------------------------------------------------------------------------------------------ LaTeX helpers

_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
          "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
          ">": r"\textgreater{}", "|": r"\textbar{}", "\u2264": r"$\leq$", "\u2265": r"$\geq$",
          "\u00b1": r"$\pm$", "\u00d7": r"$\times$", "\u2192": r"$\rightarrow$", "\u03c1": r"$\rho$",
          "\u00b5": r"\textmu{}", "\u03bc": r"\textmu{}", "\u2212": "-", "\u2013": "--", "\u2014": "---",
          "\u2248": r"$\approx$", "\u2260": r"$\neq$", "\u221e": r"$\infty$", "\u03b1": r"$\alpha$",
          "\u03bb": r"$\lambda$", "\u2026": r"\dots{}"}


def tex(text: str) -> str:
    """Plain text as LaTeX: special characters escaped, ``--`` and ``<<`` kept as typed."""
    out = []
    for ch in str(text):
        if ch in _LATEX:
            out.append(_LATEX[ch])
        elif ord(ch) > 255:
            out.append(f"[U+{ord(ch):04X}]")  # a character no font here has: shown by its code point
        else:
            out.append(ch)
    s = "".join(out)
    return s.replace("--", "-{}-").replace("''", "'{}'").replace("``", "`{}`").replace(",,", ",{},")


def _macro_name(*parts: str) -> str:
    """``QB`` + the parts in CamelCase, letters only (digits dropped: ``ferrari2001`` -> ``Ferrari``)."""
    name = "QB"
    for p in parts:
        name += "".join(w[:1].upper() + w[1:] for w in re.split(r"[^A-Za-z]+", p) if w)
    return name


def _sig(x: float, digits: int = 4) -> str:
    """``x`` to ``digits`` significant figures, in plain notation where that stays short."""
    if x == 0:
        return "0"
    if not math.isfinite(x):
        raise SystemExit(f"generate.py: a non-finite value {x!r} would enter the paper")
    e = math.floor(math.log10(abs(x)))
    if -4 <= e < 6:
        return f"{x:.{max(digits - 1 - e, 0)}f}"
    return f"{x:.{digits - 1}e}"


def _sci_tex(s: str) -> str:
    """``1.23e-05`` as ``1.23\\times10^{-5}`` (math), other numbers unchanged."""
    m = re.fullmatch(r"(-?[\d.]+)e([+-]\d+)", s)
    if not m:
        return s
    return f"${m.group(1)}\\times 10^{{{int(m.group(2))}}}$"


def _sci_plain(s: str) -> str:
    m = re.fullmatch(r"(-?[\d.]+)e([+-]\d+)", s)
    return s if not m else f"{m.group(1)}\u00d710{int(m.group(2))}"


TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "\u00b5s"))


def _time(seconds: float, digits: int = 4) -> tuple[str, str]:
    """A duration in the unit a reader takes (s, ms, µs): (value text, unit)."""
    for scale, unit in TIME_UNITS:
        if abs(seconds) >= scale or unit == "\u00b5s":
            return _sig(seconds / scale, digits), unit
    raise AssertionError


class Out:
    """Collects macros and table cells, and writes them with the plain text the PDF must show."""

    def __init__(self, gen: Path):
        self.gen = gen
        self.macros: dict[str, tuple[str, str]] = {}  # name -> (LaTeX, plain text)
        self.tables: dict[str, list[str]] = {}

    def macro(self, name: str, latex: str, plain: str | None = None) -> None:
        if name in self.macros:
            raise SystemExit(f"generate.py: macro \\{name} defined twice")
        self.macros[name] = (latex, plain if plain is not None else latex)

    def text(self, name: str, value: str) -> None:
        self.macro(name, tex(value), value)

    def number(self, name: str, x: float, unit: str = "", digits: int = 4) -> None:
        s = _sig(x, digits)
        self.macro(name, _sci_tex(s) + (f"\\,{tex(unit)}" if unit else ""),
                   _sci_plain(s) + (f" {unit}" if unit else ""))

    def integer(self, name: str, n: int) -> None:
        self.macro(name, f"{int(n):,}".replace(",", "{,}"), f"{int(n):,}")

    def duration(self, name: str, seconds: float, digits: int = 4) -> None:
        v, unit = _time(seconds, digits)
        self.macro(name, f"{v}\\,{tex(unit)}", f"{v} {unit}")

    def table(self, name: str, latex: str, cells: list[str]) -> None:
        (self.gen / f"tab-{name}.tex").write_text(latex, encoding="utf-8")
        self.tables[name] = cells

    def write(self) -> None:
        lines = ["% Generated by paper/generate.py from qosbound's outputs; do not edit."]
        for name, (latex, _) in sorted(self.macros.items()):
            lines.append(f"\\newcommand{{\\{name}}}{{{latex}}}")
        (self.gen / "macros.tex").write_text("\n".join(lines) + "\n", encoding="utf-8")
        check = {"macros": {n: p for n, (_, p) in self.macros.items()}, "tables": self.tables}
        (self.gen / "check.json").write_text(json.dumps(check, indent=1) + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------------------- the tex stage

def _load(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise SystemExit(f"generate.py: {path}: {e}") from None


def claims_caption(authors: str, key: str, paper: str, counts: dict, tests: int) -> tuple[str, str]:
    """The caption of a paper's claim table (LaTeX) and the plain text the test finds in the PDF: the claims per
    kind and per verdict as counted here from the document."""
    per_kind = "; ".join(f"{KINDS[k][0]} {counts[k]['claims']}: {phrase(counts[k])}" for k in KINDS)
    plain = (f"{counts['all']['claims']} claims -- {per_kind}; {tests} one-sided "
             f"test{'s' if tests != 1 else ''} in the Holm-Bonferroni family")
    latex = (f"The claims of {authors}~\\cite{{{key}}} as \\texttt{{qosbound reproduce {paper}}} judged them, one "
             f"row per claim of its claims file: {tex(plain)}.")
    return latex, plain


def _claims(o: Out, data: Path, paper: str, key: str, authors: str) -> str:
    """The claim table, the notes, the counts' macros and the figures of one paper: its LaTeX block."""
    doc = _load(data / paper / "reproduce.json")
    claims = claim_rows(doc)
    counts = verdict_counts(claims)
    tests = int((doc.get("multiple_testing") or {}).get("tests", 0))
    _count_macros(o, paper, counts)
    o.integer(_macro_name(paper, "tests"), tests)
    o.text(_macro_name(paper, "tests", "phrase"), f"{tests} one-sided test{'s' if tests != 1 else ''}")
    caption, plain = claims_caption(authors, key, paper, counts, tests)
    body, cells, notes = [], [plain], []
    number = 0
    for kind, (heading, _) in KINDS.items():
        mine = [c for c in claims if c.kind == kind]
        if not mine:
            continue
        head = f"{heading} ({len(mine)})"
        cells.append(head)
        body.append(f"\\midrule\\multicolumn{{5}}{{@{{}}l}}{{\\textit{{{tex(head)}}}}} \\\\")
        for c in mine:
            number += 1
            label = VERDICTS[c.verdict][0]
            verdict = label
            if c.verdict in ("NOT MET", "finding"):
                notes.append((number, c))
                verdict += f" [{number}]"
            if c.p_adjusted is not None:
                verdict += f" Holm p = {_sci_plain(_sig(float(c.p_adjusted), 2))}"
            qos = c.qosbound if c.verdict != "not attempted" or not c.reason else shorten(c.reason, CELL_CHARS)
            row = [f"{number}. {c.claim}", c.where, c.paper or "--", qos, verdict]
            cells += [x for x in row if x]
            cols = [tex(x) for x in row[:3]]
            cols.append(f"\\textit{{{tex(qos)}}}" if c.verdict == "not attempted" else tex(qos))
            if c.p_adjusted is not None:
                verdict_tex = tex(label + (f" [{number}]" if c.verdict in ("NOT MET", "finding") else "")) \
                    + f" \\newline Holm p = {_sci_tex(_sig(float(c.p_adjusted), 2))}"
            else:
                verdict_tex = tex(verdict)
            cols.append(f"\\textbf{{{verdict_tex}}}" if c.verdict in ("NOT MET", "finding") else verdict_tex)
            body.append(" & ".join(cols) + r" \\")
    lat = [r"\begin{scriptsize}\setlength{\tabcolsep}{3pt}",
           r"\begin{longtable}{@{}P{0.27\linewidth}P{0.11\linewidth}P{0.13\linewidth}P{0.34\linewidth}"
           r"P{0.10\linewidth}@{}}",
           f"\\caption{{{caption}}}\\label{{tab:claims-{paper}}}\\\\",
           r"\toprule claim & where & paper & qosbound & verdict \\ \endfirsthead",
           r"\toprule claim & where & paper & qosbound & verdict \\ \endhead",
           r"\bottomrule \endlastfoot", *body, r"\end{longtable}", r"\end{scriptsize}"]
    if notes:
        # no hyphenation, no page break inside an item: the test reads the reasons back word for word
        lat += [r"\begin{scriptsize}\raggedright\hyphenpenalty=10000\exhyphenpenalty=10000"
                r"\interlinepenalty=10000",
                f"\\paragraph{{\\small Why NOT MET, and the findings' causes ({tex(paper)}).}}",
                r"\begin{description}[leftmargin=1.2em,style=nextline,itemsep=1pt]"]
        for i, c in notes:
            reason = shorten(c.reason or "(no reason given)", NOTE_CHARS)
            lat.append(f"\\item[{{[{i}]}} {tex(c.verdict)}: \\texttt{{{tex(c.id)}}}] {tex(reason)}")
            cells += [c.id, reason]
        lat += [r"\end{description}", r"\end{scriptsize}"]
    o.table(f"claims-{paper}", "\n".join(lat) + "\n", cells)
    figs = []
    for stem, caption, width in FIGURES.get(paper, []):
        png = data / paper / f"{stem}.png"
        if not png.exists():
            raise SystemExit(f"generate.py: {png} is missing (reproduce {paper} --out wrote no such figure)")
        figs.append((png, caption, stem, width))
    return _figure_block(figs, paper)


def _count_macros(o: Out, scope: str, counts: dict) -> None:
    """The counts of one paper (or ``all``): per kind and over the kinds, and each kind's verdicts in words."""
    for kind, (_, part) in KINDS.items():
        for k, n in counts[kind].items():
            o.integer(_macro_name(scope, part, k), n)
        o.text(_macro_name(scope, part, "phrase"), phrase(counts[kind]))
    for k, n in counts["all"].items():
        o.integer(_macro_name(scope, k), n)


def _figure_block(figs: list[tuple[Path, str, str, float]], paper: str) -> str:
    """One float per figure, except two consecutive half-width figures, which share one."""
    groups: list[list] = []
    for f in figs:
        if f[3] < 0.5 and groups and len(groups[-1]) == 1 and groups[-1][0][3] < 0.5:
            groups[-1].append(f)
        else:
            groups.append([f])
    out = []
    for group in groups:
        out.append(r"\begin{figure}[htbp]\centering")
        for png, caption, stem, width in group:
            out += [f"\\begin{{minipage}}[t]{{{width}\\linewidth}}\\centering",
                    f"\\includegraphics[width=\\linewidth]{{{png.resolve().as_posix()}}}",
                    r"\end{minipage}" + (r"\hfill" if len(group) > 1 else "")]
        if len(group) == 1:
            out.append(f"\\caption{{\\texttt{{reproduce {paper}}}: {group[0][1]}}}\\label{{fig:{group[0][2]}}}")
        else:
            out.append(f"\\caption{{\\texttt{{reproduce {paper}}}: "
                       + " ".join(f"({chr(97 + i)}, {'left' if i == 0 else 'right'}) {g[1]}"
                                  for i, g in enumerate(group)) + f"}}\\label{{fig:{group[0][2]}}}")
        out.append(r"\end{figure}")
    return "\n".join(out) + "\n"


def _by(doc: dict, metric: str, method: str) -> dict:
    for m in doc["metrics"]:
        if m["metric"] == metric and m["method"] == method:
            return m
    raise SystemExit(f"generate.py: {doc.get('scenario', '?')}: no {metric} by {method} in the plan")


_KIND_SHORT = {"confidence interval": "95\\,\\% CI", "numerical": "numerical", "upper bound": "upper bound",
               "lower bound": "lower bound", "approximation": "approximation", "exact": "exact"}


def _interval_text(low: float, high: float) -> str:
    """``[low, high]`` with as many significant figures as it takes to tell them apart (4 to 7)."""
    for d in range(4, 8):
        a, b = _sig(low, d), _sig(high, d)
        if a != b:
            break
    return f"[{a}, {b}]"


def _value_text(m: dict) -> tuple[str, str, str]:
    """(value, interval, unit) as printed in a methods table; times in ms, probabilities plain."""
    unit = m.get("unit", "")
    scale, shown = (1e3, "ms") if unit == "s" else (1.0, unit if unit not in ("1", "") else "")
    v = _sig(m["value"] * scale, 4)
    iv = m.get("interval") or {}
    ivs = ""
    if m.get("kind") == "confidence interval" and iv.get("low") is not None:
        ivs = _interval_text(iv["low"] * scale, iv["high"] * scale)
    return v, ivs, shown


def _plan_table(o: Out, doc: dict, name: str, caption: str) -> None:
    rows, cells = [], []
    for m in doc["metrics"]:
        v, ivs, unit = _value_text(m)
        row = [m["metric"], m["method"], m["kind"], v, ivs, unit]
        cells += [m["metric"], _sci_plain(v)] + ([ivs] if ivs else [])
        rows.append(" & ".join([f"\\texttt{{{tex(row[0])}}}", tex(row[1]), tex(row[2]),
                                _sci_tex(v), tex(ivs), tex(unit)]) + r" \\")
    lat = [r"\begin{table}[htbp]\centering\footnotesize", f"\\caption{{{caption}}}\\label{{tab:plan-{name}}}",
           r"\begin{tabular}{@{}lllrll@{}}", r"\toprule metric & method & kind & value & 95\,\% interval & unit \\",
           r"\midrule", *rows, r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    o.table(f"plan-{name}", "\n".join(lat) + "\n", cells)


def _agreement(o: Out, doc: dict, prefix: str) -> None:
    st = [v["status"] for v in doc["agreement_verdicts"]]
    o.integer(f"QB{prefix}Checks", len(st))
    for s in ("agree", "approximate", "disagree"):
        o.integer(f"QB{prefix}{s.capitalize()}", st.count(s))


def _plans(o: Out, data: Path) -> None:
    fe = _load(data / "data" / "plan_ferrari2001.json")
    _plan_table(o, fe, "ferrari2001", "The Ferrari et al.\\ test bed (\\texttt{examples/ferrari2001.yaml}: "
                "2\\,Mbit/s, $Q_t = 5$ units of 512\\,B, PQ of 10 packets, Poisson EF of 128\\,B, saturated IMIX "
                "best effort) by the three methods, as \\texttt{qosbound plan --json} printed them.")
    _agreement(o, fe, "ex")
    mm, ms = _by(fe, "EF.delay.mean", "model-checked"), _by(fe, "EF.delay.mean", "simulated")
    o.duration("QBexMeanModel", mm["value"])
    o.duration("QBexMeanSim", ms["value"])
    o.duration("QBexMeanSimLow", ms["interval"]["low"])
    o.duration("QBexMeanSimHigh", ms["interval"]["high"])
    o.duration("QBexPNinetyNineModel", _by(fe, "EF.delay.p99", "model-checked")["value"])
    o.duration("QBexPNinetyNineSim", _by(fe, "EF.delay.p99", "simulated")["value"])
    o.number("QBexLossModel", _by(fe, "EF.loss", "model-checked")["value"], digits=3)
    o.number("QBexLossSim", _by(fe, "EF.loss", "simulated")["value"], digits=3)
    o.duration("QBexEqSeven", _by(fe, "EF.delay.worst_case_mean", "closed-form")["value"])
    o.duration("QBexMaxBound", _by(fe, "EF.delay.max", "closed-form")["value"])
    o.duration("QBexMaxSim", _by(fe, "EF.delay.max", "simulated")["value"])
    o.duration("QBexCobham", _by(fe, "EF.delay.cobham_mean", "closed-form")["value"])
    prov = mm.get("provenance") or {}
    o.integer("QBexStates", prov.get("states", 0))
    o.integer("QBexTransitions", prov.get("transitions", 0))
    o.number("QBexLittleRel", abs(float(prov.get("little_law_rel_diff", 0.0))), digits=2)

    wan = _load(data / "data" / "plan_wan100.json")
    _plan_table(o, wan, "wan100", "The 100\\,Mbit/s WAN port (\\texttt{examples/wan100.yaml}: a tx-ring of "
                "64 packets, EF at 10\\,\\% of the link, IMIX best effort, PQ of 64) as \\texttt{qosbound plan} "
                "answers it: the exact chain is far above the state budget, so \\texttt{model-checked} is the "
                "ring bound (an upper bound) and the ring-count chain (\\texttt{EF.approx.*}, an approximation).")
    _agreement(o, wan, "wan")
    for stat, mac in (("mean", "Mean"), ("p99", "PNinetyNine"), ("p99.9", "PNinetyNineNine")):
        b = _by(wan, f"EF.delay.{stat}", "model-checked")
        s = _by(wan, f"EF.delay.{stat}", "simulated")
        a = _by(wan, f"EF.approx.delay.{stat}", "model-checked")
        o.duration(f"QBwan{mac}Bound", b["value"])
        o.duration(f"QBwan{mac}Sim", s["value"])
        o.duration(f"QBwan{mac}Approx", a["value"])
        o.number(f"QBwan{mac}Ratio", b["value"] / s["value"], digits=4)
        o.number(f"QBwan{mac}ApproxErr", 100 * (a["value"] / s["value"] - 1), "%", digits=2)
    b = _by(wan, "EF.delay.mean", "model-checked")
    o.integer("QBwanStates", (b.get("provenance") or {}).get("states", 0))
    o.number("QBwanLossBound", _by(wan, "EF.loss", "model-checked")["value"], digits=2)
    o.duration("QBwanMaxBound", _by(wan, "EF.delay.max", "closed-form")["value"])
    o.duration("QBwanEqSeven", _by(wan, "EF.delay.worst_case_mean", "closed-form")["value"])
    _ccdf_figure(fe, "ferrari2001", o.gen)
    _ccdf_figure(wan, "wan100", o.gen)


def _ccdf_figure(doc: dict, name: str, gen: Path) -> None:
    """The delay CCDFs of a plan: every method's curve, the bound's points (CCDF points and quantiles of kind
    upper bound) as triangles, the closed-form bounds as vertical lines. Drawn at the size it is printed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3.4, 2.5))
    styles = {"model-checked": "-", "simulated": "--"}
    for c in doc.get("curves", []):
        if not c["metric"].endswith("delay.ccdf"):
            continue
        pts = [(x * 1e3, y) for x, y in zip(c["x"], c["value"]) if y > 0]  # a log axis cannot show 0
        approx = c.get("kind") == "approximation"
        ax.semilogy([p[0] for p in pts], [p[1] for p in pts], ":" if approx else styles.get(c["method"], "-."),
                    lw=1.4, label=f"{c['method']}: {c.get('kind')}")
    bx, by = [], []
    for m in doc["metrics"]:
        if m["method"] != "model-checked" or m["kind"] != "upper bound" or not m["metric"].startswith("EF.delay."):
            continue
        stat = m["metric"][len("EF.delay."):]
        if stat.startswith("ccdf@") and m["value"] > 0:
            x = m["metric"].split("@")[1]
            scale = {"ms": 1.0, "us": 1e-3, "s": 1e3}[re.sub(r"[\d.]", "", x)]
            bx.append(float(re.sub(r"[a-z]", "", x)) * scale)
            by.append(m["value"])
        elif re.fullmatch(r"p\d+(\.\d+)?", stat):
            bx.append(m["value"] * 1e3)
            by.append(1 - float(stat[1:]) / 100)
    if bx:
        ax.semilogy(bx, by, "v", color="C3", ms=5, label="model-checked: ring bound (upper bound)")
    for metric, colour in (("EF.delay.worst_case_mean", "k"), ("EF.delay.max", "r")):
        m = next((m for m in doc["metrics"] if m["metric"] == metric and m["method"] == "closed-form"), None)
        if m:
            ax.axvline(m["value"] * 1e3, color=colour, ls="-." if colour == "r" else ":", lw=1.1,
                       label="closed form: " + ("eq. (7), mean" if "worst" in metric else "max. delay"))
    ax.set_xlabel("EF delay x (ms)", fontsize=8)
    ax.set_ylabel("P(D > x)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_ylim(1e-6, 2)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=6, loc="lower left", framealpha=0.9)
    fig.tight_layout(pad=0.3)
    fig.savefig(gen / f"ccdf_{name}.pdf", metadata={"CreationDate": None})
    plt.close(fig)


def _ns3(o: Out, data: Path) -> None:
    doc = _load(data / "data" / "validate_ns3.json")
    rows, cells = [], []
    for r in doc["rows"]:
        model, obs = r.get("model") or {}, r.get("observed") or {}
        mv = _value_text(model) if model else ("", "", "")
        ov = _value_text(obs) if obs else ("", "", "")
        oi = obs.get("interval") or {}
        ivs = ""
        if obs and obs.get("kind") == "confidence interval" and oi.get("low") is not None:
            scale = 1e3 if obs.get("unit") == "s" else 1.0
            ivs = _interval_text(oi["low"] * scale, oi["high"] * scale)
        unit = mv[2] or ov[2]
        bounds = ", ".join(f"{_sig(b['value'] * (1e3 if b.get('unit') == 's' else 1), 4)}"
                           for b in r.get("bounds", []))
        row = [r["metric"], mv[0], bounds, ov[0], ivs, unit, r["verdict"]]
        cells += [_sci_plain(c) if i in (1, 3) else c for i, c in enumerate(row) if c]
        rows.append(f"\\texttt{{{tex(row[0])}}} & " + " & ".join(
            _sci_tex(c) if i in (1, 3) else tex(c) for i, c in enumerate(row[1:], start=1)) + r" \\")
    lat = [r"\begin{table}[htbp]\centering\footnotesize",
           r"\caption{ns-3 against the model: \texttt{qosbound validate examples/ns3\_matched.yaml --ns3}. "
           r"Model: the exact chain on Storm; bounds: the closed forms (eq.~(7), the maximum-delay bound); "
           r"ns-3: its trace, batch means with 95\,\% intervals.}\label{tab:ns3}",
           r"\begin{tabular}{@{}lrrrlll@{}}",
           r"\toprule metric & model & bounds & ns-3 & 95\,\% interval & unit & verdict \\ \midrule",
           *rows, r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    o.table("ns3", "\n".join(lat) + "\n", cells)
    info = next((v for k, v in doc.items() if k == "info"), None) or {}
    verdicts = [r["verdict"] for r in doc["rows"]]
    o.integer("QBnsRows", len(verdicts))
    o.integer("QBnsAgree", sum(v in ("agrees", "within bound") for v in verdicts))
    o.integer("QBnsDisagree", sum(v in ("disagree", "exceeds bound") for v in verdicts))
    mean = next(r for r in doc["rows"] if r["metric"] == "EF.delay.mean")
    o.duration("QBnsMeanModel", mean["model"]["value"])
    o.duration("QBnsMeanObs", mean["observed"]["value"])
    del info


def _runs(o: Out, data: Path) -> None:
    log = _load(data / "data" / "run.json")
    v = log["versions"]
    for key, name in (("qosbound", "QBverQosbound"), ("storm", "QBverStorm"), ("stormpy", "QBverStormpy"),
                      ("prism", "QBverPrism"), ("ns3", "QBverNsThree"), ("python", "QBverPython"),
                      ("commit", "QBverCommit")):
        o.text(name, v[key])
    o.text("QBbuildMode", log["mode"])
    o.text("QBbuildDate", log["started"][:10])
    rows, cells = [], []
    for c in log["commands"]:
        # a long path may break after any slash (an absolute one, outside the repository, would overflow)
        shown = tex(c["command"]).replace("/", "/\\allowbreak{}")
        rows.append(f"\\texttt{{{shown}}} & {c['exit_code']} & {c['seconds']:.0f} \\\\")
        cells += [c["command"]]
    lat = [r"\begin{table}[tbp]\centering\scriptsize",
           f"\\caption{{The commands this build ran ({tex(log['mode'])} mode, commit \\texttt{{{tex(v['commit'])}}}, "
           f"{tex(log['started'])}), their exit codes and wall-clock seconds on a shared 2-core machine.}}"
           r"\label{tab:commands}", r"\begin{tabular}{@{}p{0.78\linewidth}rr@{}}",
           r"\toprule command & exit & s \\ \midrule", *rows, r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    o.table("commands", "\n".join(lat) + "\n", cells)
    o.integer("QBtotalSeconds", round(sum(c["seconds"] for c in log["commands"])))


#: The JSON file ``benchmarks/collect.py`` writes (``make -C paper`` reruns it; the quick build reads it as committed).
BENCH_FILE = PAPER_DIR / "data" / "benchmarks.json"
BENCH_SCHEMA = 1
#: Units whose figures are counts, shown as integers.
COUNT_UNITS = {"states", "transitions", "testcases", "packets", "ports", "flows", "packet-hops"}


def _bench_field(path: Path, where: str, problem: str) -> SystemExit:
    return SystemExit(f"generate.py: {path}: field '{where}': {problem}")


def load_benchmarks(path: Path) -> dict:
    """The benchmark run ``benchmarks/collect.py`` wrote, checked field by field: a missing file, bad JSON or a
    missing or mistyped field stops the build with one line naming the file and the field."""
    if not path.is_file():
        raise SystemExit(f"generate.py: {path}: no such file (run python benchmarks/collect.py --out {path})")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SystemExit(f"generate.py: {path}: not JSON: {e}") from None

    def need(obj, key, kind, where):
        v = obj.get(key) if isinstance(obj, dict) else None
        ok = isinstance(v, kind) and not isinstance(v, bool)
        if ok and kind in ((int, float), float):
            ok = math.isfinite(v)
        if ok and isinstance(v, (str, list)):
            ok = len(v) > 0
        if not ok:
            raise _bench_field(path, where, "missing" if v is None else f"not a {_KIND_NAMES[kind]}: {v!r}")
        return v

    if not isinstance(doc, dict):
        raise SystemExit(f"generate.py: {path}: not a JSON object")
    if doc.get("schema") != BENCH_SCHEMA:
        raise _bench_field(path, "schema", f"{doc.get('schema')!r}, this generator reads {BENCH_SCHEMA}")
    for key in ("started", "commit"):
        need(doc, key, str, key)
    need(doc, "seconds", (int, float), "seconds")
    need(need(doc, "machine", dict, "machine"), "cpu", str, "machine.cpu")
    need(doc["machine"], "cores", int, "machine.cores")
    for key in ("python", "qosbound"):
        need(need(doc, "versions", dict, "versions"), key, str, f"versions.{key}")
    for i, b in enumerate(need(doc, "benchmarks", list, "benchmarks")):
        w = f"benchmarks[{i}]"
        for key in ("name", "title", "command"):
            need(b, key, str, f"{w}.{key}")
        if not re.fullmatch(r"[a-z_]+", b["name"]):
            raise _bench_field(path, f"{w}.name", f"{b['name']!r} is not lower-case letters and underscores")
        for key in ("wall_s", "cpu_s"):
            need(b, key, (int, float), f"{w}.{key}")
        for key in ("load_before", "load_after"):
            loads = need(b, key, list, f"{w}.{key}")
            if len(loads) != 3 or not all(isinstance(x, (int, float)) and math.isfinite(x) for x in loads):
                raise _bench_field(path, f"{w}.{key}", f"not three load averages: {loads!r}")
        for j, f in enumerate(need(b, "figures", list, f"{w}.figures")):
            for key in ("name", "label", "unit"):
                need(f, key, str, f"{w}.figures[{j}].{key}")
            need(f, "value", (int, float), f"{w}.figures[{j}].value")
    return doc


_KIND_NAMES = {str: "non-empty text", (int, float): "finite number", int: "whole number", dict: "mapping",
               list: "non-empty list"}


def _bench_value(f: dict) -> tuple[str, str]:
    """A figure's value as (LaTeX, plain text): counts as integers, the rest to 3 significant figures (powers of ten
    from 1e4)."""
    v = float(f["value"])
    if f["unit"] in COUNT_UNITS and v == round(v):
        return f"{int(v):,}".replace(",", "{,}"), f"{int(v):,}"
    s = _sig(v, 3) if 1e-3 <= abs(v) < 1e4 or v == 0 else f"{v:.2e}"
    return _sci_tex(s), _sci_plain(s)


def _bench_unit(unit: str) -> tuple[str, str]:
    """``x`` (a ratio) is written as the times sign after the number; other units after a thin space."""
    if unit == "x":
        return r"\texttimes{}", "\u00d7"
    return f"\\,{tex(unit)}", f" {unit}"


def bench_table(doc: dict) -> tuple[list[str], list[str], dict[str, tuple[str, str]]]:
    """The performance table's LaTeX rows, the plain text of its cells (for the PDF check) and one macro per
    figure (name -> (LaTeX, plain)), from a document :func:`load_benchmarks` accepted."""
    rows, cells, macros = [], [], {}
    for b in doc["benchmarks"]:
        shown = tex(b["command"].replace("python benchmarks/", "")).replace("/", "/\\allowbreak{}")
        figs_tex, figs_plain = [], []
        for f in b["figures"]:
            (vt, vp), (ut, up) = _bench_value(f), _bench_unit(f["unit"])
            figs_tex.append(f"{tex(f['label'])}: {vt}{ut}")
            figs_plain.append(f"{f['label']}: {vp}{up}")
            macros[_macro_name("bench", b["name"], f["name"])] = (vt + ut, vp + up)
        run = (f"{b['wall_s']:.1f}\\,s wall, {b['cpu_s']:.1f}\\,s CPU; load {b['load_before'][0]:.1f} "
               f"$\\rightarrow$ {b['load_after'][0]:.1f}")
        run_plain = (f"{b['wall_s']:.1f} s wall, {b['cpu_s']:.1f} s CPU; load {b['load_before'][0]:.1f} \u2192 "
                     f"{b['load_after'][0]:.1f}")
        rows.append(f"{tex(b['title'])}\\newline \\texttt{{{shown}}} & " + "; ".join(figs_tex)
                    + f" & {run} \\\\")
        cells += [b["title"], b["command"].replace("python benchmarks/", ""), *figs_plain, run_plain]
    return rows, cells, macros


def _benchmarks(o: Out, path: Path) -> None:
    """The performance table and the numbers the performance section quotes: from the benchmark run's JSON file
    alone (``benchmarks/collect.py``), each figure with the command that measured it."""
    doc = load_benchmarks(path)
    rows, cells, macros = bench_table(doc)
    for name, (latex, plain) in macros.items():
        o.macro(name, latex, plain)
    loads = [x for b in doc["benchmarks"] for x in (b["load_before"][0], b["load_after"][0])]
    commit, date = doc["commit"], doc["started"][:10]
    m = doc["machine"]
    o.text("QBbenchCommit", commit)
    o.text("QBbenchDate", date)
    o.macro("QBbenchLoadLow", f"{min(loads):.1f}")  # as the caption gives them
    o.macro("QBbenchLoadHigh", f"{max(loads):.1f}")
    o.text("QBbenchCPU", f"{m['cpu']}, {m['cores']} cores")
    o.text("QBbenchPython", doc["versions"]["python"])
    o.integer("QBbenchSeconds", round(doc["seconds"]))
    caption_plain = (f"from the benchmark run at commit {commit} on {date} (load average {min(loads):.1f} to "
                     f"{max(loads):.1f})")
    lat = [r"\begin{scriptsize}", r"\begin{longtable}{@{}P{0.27\linewidth}P{0.52\linewidth}P{0.15\linewidth}@{}}",
           r"\caption{Performance: the headline figures " + tex(caption_plain) + r", \texttt{python "
           r"benchmarks/collect.py} on " + tex(f"{m['cpu']}, {m['cores']} cores") + r", each with the command of "
           r"\texttt{benchmarks/} that measured it (a quick form where the script has one: smaller runs "
           r"than those of \texttt{docs/benchmarks.md}), its wall-clock and CPU seconds and the 1-minute load average before and "
           r"after it. Ratios are measured side by side in one run; absolute rates depend on the load.}"
           r"\label{tab:bench}\\",
           r"\toprule benchmark (command) & headline figures & run \\ \midrule \endfirsthead",
           r"\toprule benchmark (command) & headline figures & run \\ \midrule \endhead",
           r"\bottomrule \endlastfoot", *rows, r"\end{longtable}", r"\end{scriptsize}"]
    o.table("bench", "\n".join(lat) + "\n", [caption_plain, *cells])
    o.integer("QBbenchRows", len(rows))


def _constants(o: Out) -> None:
    """The constants of the methods the text quotes, read from the code that uses them."""
    sys.path.insert(0, str(ROOT))
    from qosbound.agreement import FAMILY_CONFIDENCE
    from qosbound.models.pq_txq_ring import POISSON_TAIL

    e = round(math.log10(POISSON_TAIL))
    o.macro("QBPoissonTail", f"$10^{{{e}}}$", f"10{e}")
    o.number("QBFamilyError", 100 * (1 - FAMILY_CONFIDENCE), "%", digits=2)


def make_tex(data: Path, gen: Path, bench: Path = BENCH_FILE) -> Out:
    """Write every generated LaTeX input for the outputs under ``data`` (and the benchmark run ``bench``) into
    ``gen``."""
    gen.mkdir(parents=True, exist_ok=True)
    o = Out(gen)
    _constants(o)
    _runs(o, data)
    _plans(o, data)
    _ns3(o, data)
    _benchmarks(o, bench)
    total: list[Claim] = []
    tests_all, levels = 0, set()
    summary_rows, cells = [], []
    keys = ("claims", "reproduced", "notmet", "findings", "notattempted")
    for paper, key, authors in PAPERS:
        block = _claims(o, data, paper, key, authors)
        (gen / f"figs-{paper}.tex").write_text(block, encoding="utf-8")
        doc = _load(data / paper / "reproduce.json")
        claims = claim_rows(doc)
        total += claims
        mt = doc.get("multiple_testing") or {}
        tests_all += int(mt.get("tests", 0))
        levels.add(float(mt.get("family_level", float("nan"))))
        counts = verdict_counts(claims)
        first = True
        for kind in KINDS:
            lead = f"{authors}~\\cite{{{key}}}" if first else ""
            summary_rows.append(f"{lead} & {tex(KIND_SHORT[kind])} & " + " & ".join(str(counts[kind][k]) for k in keys)
                                + r" & \\")
            first = False
        summary_rows.append(r"& \textit{all kinds} & " + " & ".join(str(counts["all"][k]) for k in keys)
                            + f" & {int(mt.get('tests', 0))} \\\\ \\midrule")
        cells += [str(counts["all"][k]) for k in keys]
    if len(levels) != 1:
        raise SystemExit(f"generate.py: the runs state different family-wise levels {sorted(levels)}")
    o.number("QBFamilyLevel", 100 * levels.pop(), "%", digits=2)
    o.integer("QBAllTests", tests_all)
    counts = verdict_counts(total)
    _count_macros(o, "all", counts)
    for i, kind in enumerate(KINDS):
        lead = "total" if i == 0 else ""
        summary_rows.append(f"{lead} & {tex(KIND_SHORT[kind])} & " + " & ".join(str(counts[kind][k]) for k in keys)
                            + r" & \\")
        cells += [KIND_SHORT[kind]] + [str(counts[kind][k]) for k in keys]
    summary_rows.append(r"& \textit{all kinds} & " + " & ".join(str(counts["all"][k]) for k in keys)
                        + f" & {tests_all} \\\\")
    lat = [r"\begin{table}[tbp]\centering\footnotesize",
           r"\caption{The reproductions in brief: the claims of each source paper by kind and verdict, and the "
           r"one-sided tests of each run (one Holm-Bonferroni family per run).}\label{tab:summary}",
           r"\begin{tabular}{@{}llrrrrrr@{}}",
           r"\toprule source paper & kind & claims & reproduced & NOT MET & findings & not attempted & tests \\",
           r"\midrule", *summary_rows, r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    o.table("summary", "\n".join(lat) + "\n", cells)
    o.write()
    return o


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="stage", required=True)
    r = sub.add_parser("run", help="run the commands whose outputs the paper reports")
    r.add_argument("--out", required=True, help="folder for the outputs (paper/ itself in full mode)")
    r.add_argument("--quick", action="store_true", help="reproduce --quick (the CI version)")
    t = sub.add_parser("tex", help="write the macros, tables and figure blocks from the outputs")
    t.add_argument("--data", required=True, help="the folder the run stage wrote")
    t.add_argument("--out", required=True, help="folder for the generated LaTeX inputs")
    t.add_argument("--bench", default=str(BENCH_FILE), help="the benchmark run benchmarks/collect.py wrote "
                   "(default paper/data/benchmarks.json)")
    args = ap.parse_args(argv)
    os.environ.setdefault("MPLBACKEND", "Agg")
    if args.stage == "run":
        run(Path(args.out).resolve(), args.quick)
    else:
        make_tex(Path(args.data).resolve(), Path(args.out).resolve(), Path(args.bench).resolve())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
