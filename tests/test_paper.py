"""The paper (paper/qosbound.tex, paper/generate.py, paper/Makefile): `make -C paper quick` builds the PDF from
a fresh run of every command it reports, and the PDF carries the numbers and tables those commands printed.

The build test runs the quick build end to end (every ``reproduce --quick``, two ``plan``s, ``validate --ns3``,
then LaTeX: a few minutes) and reads the PDF back with pdftotext. It skips, saying why, where TeX Live or
poppler is not installed (``.ci/run`` installs them)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "paper"


def _generator():
    spec = importlib.util.spec_from_file_location("paper_generate", PAPER / "generate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


gen = _generator()

TOOLS = ("pdflatex", "latexmk", "bibtex", "pdftotext", "make")
MISSING = [t for t in TOOLS if shutil.which(t) is None]

#: The sections the paper must have (issue: the system, the methods, the cross-checks, performance, one section
#: per source paper, threats to validity) as pdftotext reads their titles.
SECTIONS = ("The system and its questions", "Methods, and what each assumes", "Closed forms",
            "The exact chain and the tagged-arrival delay distribution", "The ring-count chain: an approximation",
            "The ring bound: an upper bound by model checking an MDP", "The simulator",
            "ns-3 as an independent reference", "Cross-checks: how the methods agree", "Performance",
            "The reproductions", "Ferrari, Pau & Raffaelli (2001)", "Takeo & Tasaka (2003)",
            "Köhler & Schäfer (1999)", "Jourjon, Lochin & Sénac (2008)", "Claypool, Kinicki & Kumar (2005)",
            "Threats to validity", "Reproducing this paper", "References")


def squash(text: str) -> str:
    """Text with every blank removed and the typesetter's glyph substitutions undone, for comparing a table
    cell with what pdftotext reads (cells wrap over lines)."""
    for a, b in (("\u2019", "'"), ("\u2018", "'"), ("\u201c", '"'), ("\u201d", '"'), ("\u2013", "--"),
                 ("\u2014", "---"), ("\ufb01", "fi"), ("\ufb02", "fl"), ("\ufb00", "ff"), ("\ufb03", "ffi"),
                 ("\ufb04", "ffl"), ("\u2212", "-"), ("\u00d7", "x")):
        text = text.replace(a, b)
    return re.sub(r"\s+", "", text)


# ----------------------------------------------------------------------------------------- the generator

def _row(paper, qos, meets):
    return {"claim": "r", "paper": paper, "qosbound": qos, "verdict": "reproduced", "meets_rule": meets}


DOC = {"claims": [
    {"id": "w-k1", "kind": "arithmetic", "where": "Table IV", "claim": "W for K = 1", "paper_value": 12649.41,
     "verdict": "reproduced", "reason": "", "p_adjusted": None,
     "rows": [_row("12649.41 us", "12649.41 us", True)]},
    {"id": "yellow", "kind": "behaviour", "where": "Table 4", "claim": "yellow share", "paper_value": 0.3,
     "verdict": "finding", "reason": "cause: PIR too low", "p_adjusted": None,
     "rows": [_row("30 %", "10 %", False)]},
    {"id": "order", "kind": "behaviour", "where": "Fig. 3", "claim": "case 3 largest", "paper_value": None,
     "verdict": "NOT MET", "reason": "not shown at the family level", "p_adjusted": 0.8,
     "rows": [_row("3 largest", "1: 5 ms", True), _row("3 largest", "2: 7 ms", False)]},
    {"id": "sync", "kind": "hypothesis", "where": "Fig. 8", "claim": "no model", "paper_value": [6400, 1.5],
     "verdict": "not attempted", "reason": "no playout model", "p_adjusted": None, "rows": []}]}


def test_claim_rows_read_every_claim_of_a_reproduce_document():
    claims = gen.claim_rows(DOC)
    assert [c.id for c in claims] == ["w-k1", "yellow", "order", "sync"]
    assert [c.kind for c in claims] == ["arithmetic", "behaviour", "behaviour", "hypothesis"]
    # the paper's number as the judging row prints it, else the claims file's own value
    assert claims[0].paper == "12649.41 us" and claims[3].paper == "6400, 1.5"
    # of several rows, the one that misses the rule is shown, with how many meet it
    assert claims[2].qosbound == "2: 7 ms [2 rows, 1 meet the rule]" and claims[2].p_adjusted == 0.8
    assert claims[1].reason == "cause: PIR too low" and claims[3].qosbound == ""


def test_verdicts_are_counted_per_kind_and_named_without_the_empty_ones():
    counts = gen.verdict_counts(gen.claim_rows(DOC))
    assert counts["behaviour"] == {"claims": 2, "reproduced": 0, "notmet": 1, "findings": 1, "notattempted": 0}
    assert counts["all"] == {"claims": 4, "reproduced": 1, "notmet": 1, "findings": 1, "notattempted": 1}
    assert gen.phrase(counts["behaviour"]) == "1 NOT MET, 1 finding"
    assert gen.phrase(counts["arithmetic"]) == "1 reproduced"
    assert gen.phrase({"claims": 0, "reproduced": 0, "notmet": 0, "findings": 0, "notattempted": 0}) == "none"


@pytest.mark.parametrize("field,value", [("verdict", "maybe"), ("kind", "opinion")])
def test_an_unknown_verdict_or_kind_stops_the_build_instead_of_being_miscounted(field, value):
    claim = {**DOC["claims"][0], field: value}
    with pytest.raises(SystemExit, match=f"unknown {field} '{value}'"):
        gen.claim_rows({"claims": [claim]})


def test_long_texts_are_cut_at_a_word_with_the_cut_marked():
    assert gen.shorten("short text", 20) == "short text"
    cut = gen.shorten("word " * 40, 30)
    assert len(cut) <= 30 and cut.endswith(" ...") and "wor ..." not in cut


@pytest.mark.parametrize("text,latex", [
    ("50 % of AF_11 & #2", r"50 \% of AF\_11 \& \#2"),
    ("p <= 0.05, ~1, x^2, {a}", r"p \textless{}= 0.05, \textasciitilde{}1, x\textasciicircum{}2, \{a\}"),
    ("a -- b", "a -{}- b"),
    ("\u00b11 \u2264 2", r"$\pm$1 $\leq$ 2"),
])
def test_text_enters_latex_escaped(text, latex):
    assert gen.tex(text) == latex


def test_numbers_keep_their_significant_figures_and_units():
    assert gen._sig(0.007875624, 4) == "0.007876"
    assert gen._sig(2.97e-5, 3) == "2.97e-05"
    assert gen._time(0.007875624) == ("7.876", "ms")
    assert gen._time(8.88e-5) == ("88.80", "\u00b5s")
    with pytest.raises(SystemExit, match="non-finite"):
        gen._sig(float("nan"))
    assert gen._macro_name("ferrari2001", "notmet") == "QBFerrariNotmet"


# ------------------------------------------------------------------------------ the performance table

def bench_doc():
    """A benchmark run as benchmarks/collect.py writes it (numbers made up, so that each can be traced)."""
    return {"schema": 1, "started": "2026-01-02T03:04:05+00:00", "commit": "abc123def456", "seconds": 321.4,
            "machine": {"cpu": "Test CPU 9000", "cores": 2, "platform": "Linux"},
            "versions": {"python": "3.11.7", "qosbound": "0.1.0"},
            "benchmarks": [
                {"name": "closed_forms", "title": "closed forms against per-point SymPy",
                 "command": "python benchmarks/bench_closed_forms.py --n 1e6", "target": ">= 1000x",
                 "figures": [{"name": "eq_seven_rate", "label": "eq. (7)", "value": 123456789.0,
                              "unit": "points/s"},
                             {"name": "eq_seven_ratio", "label": "eq. (7) / SymPy", "value": 4321.9, "unit": "x"}],
                 "wall_s": 2.61, "cpu_s": 1.49, "load_before": [3.03, 2.4, 2.9], "load_after": [3.51, 2.5, 2.9]},
                {"name": "storm", "title": "Storm", "command": "python benchmarks/bench_storm.py --quick",
                 "target": "", "figures": [{"name": "example_states", "label": "example", "value": 6580,
                                             "unit": "states"},
                                            {"name": "example_seconds", "label": "example", "value": 0.3141,
                                             "unit": "s"}],
                 "wall_s": 40.0, "cpu_s": 30.0, "load_before": [1.25, 2, 3], "load_after": [5.75, 2, 3]}]}


def write_bench(tmp_path, doc) -> Path:
    path = tmp_path / "benchmarks.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_performance_table_is_built_from_the_benchmark_run_alone(tmp_path):
    path = write_bench(tmp_path, bench_doc())
    rows, cells, macros = gen.bench_table(gen.load_benchmarks(path))
    assert len(rows) == 2
    # each row: the command that measured it, its figures (3 significant figures, counts whole), its run
    assert rows[0].startswith(r"closed forms against per-point SymPy\newline "
                              r"\texttt{bench\_closed\_forms.py -{}-n 1e6}")
    assert r"eq. (7): $1.23\times 10^{8}$\,points/s; eq. (7) / SymPy: 4322\texttimes{}" in rows[0]
    assert "2.6\\,s wall, 1.5\\,s CPU; load 3.0 $\\rightarrow$ 3.5" in rows[0]
    assert "example: 6{,}580\\,states; example: 0.314\\,s" in rows[1]
    assert cells == ["closed forms against per-point SymPy", "bench_closed_forms.py --n 1e6",
                     "eq. (7): 1.23\u00d7108 points/s", "eq. (7) / SymPy: 4322\u00d7",
                     "2.6 s wall, 1.5 s CPU; load 3.0 \u2192 3.5", "Storm", "bench_storm.py --quick",
                     "example: 6,580 states", "example: 0.314 s", "40.0 s wall, 30.0 s CPU; load 1.2 \u2192 5.8"]
    # one macro per figure, for the text
    assert macros["QBBenchClosedFormsEqSevenRatio"] == ("4322\\texttimes{}", "4322\u00d7")
    assert macros["QBBenchStormExampleStates"] == ("6{,}580\\,states", "6,580 states")


def test_the_caption_names_the_commit_date_load_and_machine_of_the_run(tmp_path):
    path = write_bench(tmp_path, bench_doc())
    o = gen.Out(tmp_path)
    gen._benchmarks(o, path)
    latex = (tmp_path / "tab-bench.tex").read_text()
    assert "from the benchmark run at commit abc123def456 on 2026-01-02 (load average 1.2 to 5.8)" in latex
    assert "Test CPU 9000, 2 cores" in latex
    assert o.tables["bench"][0] == ("from the benchmark run at commit abc123def456 on 2026-01-02 (load average 1.2 "
                                    "to 5.8)")
    plain = {n: p for n, (_, p) in o.macros.items()}
    assert plain["QBbenchRows"] == "2" and plain["QBbenchCommit"] == "abc123def456"
    assert plain["QBbenchLoadLow"] == "1.2" and plain["QBbenchLoadHigh"] == "5.8"
    assert plain["QBbenchSeconds"] == "321" and plain["QBbenchDate"] == "2026-01-02"


def _drop(doc, *keys):
    obj = doc
    for k in keys[:-1]:
        obj = obj[k]
    del obj[keys[-1]]
    return doc


@pytest.mark.parametrize("break_it,message", [
    (None, "no such file"),
    ("{not json", "not JSON"),
    ("[1, 2]", "not a JSON object"),
    (lambda d: _drop(d, "commit"), "field 'commit': missing"),
    (lambda d: d.update(schema=2) or d, "field 'schema': 2, this generator reads 1"),
    (lambda d: d.update(benchmarks=[]) or d, "field 'benchmarks': not a non-empty list"),
    (lambda d: _drop(d, "benchmarks", 1, "command"), "field 'benchmarks[1].command': missing"),
    (lambda d: d["benchmarks"][0]["figures"][1].update(value="fast") or d,
     "field 'benchmarks[0].figures[1].value': not a finite number: 'fast'"),
    (lambda d: d["benchmarks"][0]["figures"][1].update(value=float("inf")) or d,
     "field 'benchmarks[0].figures[1].value': not a finite number: inf"),
    (lambda d: d["benchmarks"][1].update(load_after=[1, 2]) or d, "field 'benchmarks[1].load_after': not three"),
    (lambda d: d["benchmarks"][1].update(name="Storm 2") or d, "field 'benchmarks[1].name'"),
])
def test_a_missing_or_malformed_benchmark_run_is_one_line_naming_the_file(tmp_path, break_it, message):
    path = tmp_path / "benchmarks.json"
    if isinstance(break_it, str):
        path.write_text(break_it)
    elif break_it is not None:
        path.write_text(json.dumps(break_it(bench_doc()), allow_nan=True))
    with pytest.raises(SystemExit) as e:
        gen.load_benchmarks(path)
    text = str(e.value)
    assert text.startswith(f"generate.py: {path}: ") and message in text and "\n" not in text, text


def test_the_committed_benchmark_run_is_readable_and_names_its_commands():
    """The quick build reads paper/data/benchmarks.json as committed; every command in it is one of the
    collector's."""
    collect_spec = importlib.util.spec_from_file_location("bench_collect", ROOT / "benchmarks" / "collect.py")
    collect = importlib.util.module_from_spec(collect_spec)
    sys.modules[collect_spec.name] = collect  # its dataclasses look their module up there (run alone, or first)
    collect_spec.loader.exec_module(collect)
    doc = gen.load_benchmarks(gen.BENCH_FILE)
    commands = {b.name: b.command for b in collect.BENCHMARKS}
    assert {b["name"]: b["command"] for b in doc["benchmarks"]} == commands
    assert "+local changes" not in doc["commit"]


# ------------------------------------------------------------------------------------------- the build

def build_quick(build: Path) -> dict:
    """`make -C paper quick` into ``build``; the PDF read back as text, the generated check list, the log."""
    pdf = build / "qosbound.pdf"
    env = {**os.environ, "PYTHON": sys.executable, "MPLBACKEND": "Agg"}
    proc = subprocess.run(["make", "-C", str(PAPER), "quick", f"BUILD={build}", f"PDF={pdf}",
                           f"PYTHON={sys.executable}"], capture_output=True, text=True, env=env, timeout=3000)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return read_back(build, pdf)


def read_back(build: Path, pdf: Path) -> dict:
    """The PDF as text (squashed for comparisons), the generator's check list and LaTeX's log."""
    raw = subprocess.run(["pdftotext", "-raw", str(pdf), "-"], capture_output=True, text=True,
                         check=True).stdout
    # the page number closes each page: a paragraph broken over a page break is read without it
    pages = [re.sub(r"\n\s*\d+\s*$", "\n", page.rstrip()) for page in raw.split("\f")]
    raw = "\n".join(pages)
    check = json.loads((build / "generated" / "check.json").read_text())
    log = (build / "latex" / "qosbound.log").read_text(errors="replace")
    return {"build": build, "pdf": pdf, "raw": raw, "flat": squash(raw), "check": check, "log": log}


def has_every_section_and_the_theorem(built):
    text = re.sub(r"\s+", " ", built["raw"])
    missing = [s for s in SECTIONS if s not in text]
    assert not missing, missing
    assert "Theorem 1 (ring bound)" in text and "Proof." in text
    pages = int(re.search(r"Pages:\s+(\d+)", subprocess.run(["pdfinfo", str(built["pdf"])], capture_output=True,
                                                             text=True).stdout).group(1))
    assert 10 <= pages <= 20, pages  # the usual length of a full paper


def has_no_undefined_reference_or_citation(built):
    assert "??" not in built["raw"]
    assert not re.search(r"(Reference|Citation) `[^']+' .*undefined", built["log"])
    assert "There were undefined references" not in built["log"]


def every_number_the_text_quotes_is_the_generated_one(built):
    """Each macro the .tex uses appears in the PDF with the generated value (so no number was typed instead)."""
    source = (PAPER / "qosbound.tex").read_text()
    used = set(re.findall(r"\\(QB[A-Za-z]+)", source))
    macros = built["check"]["macros"]
    assert used <= set(macros), used - set(macros)
    absent = {m: macros[m] for m in used if squash(macros[m]) not in built["flat"]}
    assert not absent, absent


def the_performance_table_is_the_committed_benchmark_run(built):
    """Read here from paper/data/benchmarks.json itself, not from the generator: its commit and date in the caption,
    every command and every figure's label in the table."""
    doc = json.loads((PAPER / "data" / "benchmarks.json").read_text())
    assert squash(f"benchmark run at commit {doc['commit']} on {doc['started'][:10]}") in built["flat"]
    for b in doc["benchmarks"]:
        assert squash(b["command"].replace("python benchmarks/", "")) in built["flat"], b["command"]
        for f in b["figures"]:
            assert squash(f["label"]) in built["flat"], (b["name"], f["label"])


def every_table_cell_in_the_pdf_is_the_generated_one(built):
    tables = built["check"]["tables"]
    assert {"summary", "plan-ferrari2001", "plan-wan100", "ns3", "bench", "commands"} <= set(tables)
    for name, cells in tables.items():
        absent = [c for c in cells if squash(c) not in built["flat"]]
        assert not absent, (name, absent[:5])


KIND_NAMES = {"behaviour": "behaviour claims", "arithmetic": "arithmetic and transcription checks",
              "hypothesis": "own hypotheses"}
VERDICT_NAMES = (("reproduced", "reproduced"), ("NOT MET", "NOT MET"), ("finding", "finding"),
                 ("not attempted", "not attempted"))


def each_source_paper_is_named_with_its_verdicts_as_reproduce_printed_them(built):
    """Counted here from the reproduce documents themselves, not from the generator's tables: per kind and
    per verdict, with the number of one-sided tests in the run's Holm-Bonferroni family; and the abstract's
    NOT MET total is the sum of the documents' NOT MET claims."""
    not_met = 0
    for paper, _, _ in gen.PAPERS:
        doc = json.loads((built["build"] / "quick" / paper / "reproduce.json").read_text())
        parts = []
        for kind, name in KIND_NAMES.items():
            verdicts = Counter(c["verdict"] for c in doc["claims"] if c["kind"] == kind)
            words = [f"{verdicts[v]} {label}" + ("s" if v == "finding" and verdicts[v] != 1 else "")
                     for v, label in VERDICT_NAMES if verdicts[v]]
            parts.append(f"{name} {sum(verdicts.values())}: {', '.join(words) or 'none'}")
        not_met += sum(c["verdict"] == "NOT MET" for c in doc["claims"])
        tests = doc["multiple_testing"]["tests"]
        expected = (f"{len(doc['claims'])} claims -- " + "; ".join(parts)
                    + f"; {tests} one-sided test{'s' if tests != 1 else ''} in the Holm-Bonferroni family")
        assert f"qosboundreproduce{paper}" in built["flat"]
        assert squash(expected) in built["flat"], (paper, expected)
        # the document's own count agrees (reproduce counted the same claims)
        assert sum(doc["counts"][k]["NOT MET"] for k in doc["counts"]) == sum(
            c["verdict"] == "NOT MET" for c in doc["claims"])
    text = re.sub(r"\s+", " ", built["raw"])
    assert f"In all, {not_met} claims are NOT MET" in text
    assert not re.search(r"\b0 not met", text, re.I), "a zero NOT MET count is stated instead of left out"


@pytest.mark.slow
def test_make_quick_builds_the_paper_from_the_commands_outputs(tmp_path):
    """One build, every check on it (a single test so that xdist's workers do not build it twice)."""
    if MISSING:
        pytest.skip(f"the paper needs {', '.join(MISSING)} (Debian: texlive-latex-extra latexmk poppler-utils; "
                    f".ci/run installs them)")
    built = build_quick(tmp_path)
    has_every_section_and_the_theorem(built)
    has_no_undefined_reference_or_citation(built)
    every_number_the_text_quotes_is_the_generated_one(built)
    every_table_cell_in_the_pdf_is_the_generated_one(built)
    the_performance_table_is_the_committed_benchmark_run(built)
    each_source_paper_is_named_with_its_verdicts_as_reproduce_printed_them(built)
