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

def test_claim_rows_read_every_row_of_a_reproduce_document():
    doc = {"claims": [
        {"claim": "W for K = 1", "source": "Table IV", "paper": "12649.41 us", "qosbound": "12649.41 us",
         "verdict": "reproduced", "rule": "|a - b| <= 0.01", "evidence": ""},
        {"claim": "yellow share", "source": "Table 4", "paper": "30 %", "qosbound": "10 %",
         "verdict": "finding (differs from the paper)", "rule": "r", "evidence": "PIR too low"},
        {"claim": "no source", "paper": "x", "qosbound": "y", "verdict": "NOT MET"}]}
    rows = gen.claim_rows(doc)
    assert [r.claim for r in rows] == ["W for K = 1", "yellow share", "no source"]
    assert rows[1].evidence == "PIR too low" and rows[2].source == "" and rows[2].evidence == ""
    assert gen.verdict_counts(rows) == {"claims": 3, "reproduced": 1, "findings": 1, "notmet": 1,
                                        "notattempted": 0}


def test_an_unknown_verdict_stops_the_build_instead_of_being_miscounted():
    rows = gen.claim_rows({"claims": [{"claim": "c", "verdict": "maybe"}]})
    with pytest.raises(SystemExit, match="unknown verdict 'maybe'"):
        gen.verdict_counts(rows)


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


def every_table_cell_in_the_pdf_is_the_generated_one(built):
    tables = built["check"]["tables"]
    assert {"summary", "plan-ferrari2001", "plan-wan100", "ns3", "bench", "commands"} <= set(tables)
    for name, cells in tables.items():
        absent = [c for c in cells if squash(c) not in built["flat"]]
        assert not absent, (name, absent[:5])


def each_source_paper_is_named_with_its_verdicts_as_reproduce_printed_them(built):
    """Counted here from the reproduce documents themselves, not from the generator's tables."""
    for paper, _, _ in gen.PAPERS:
        doc = json.loads((built["build"] / "quick" / paper / "reproduce.json").read_text())
        verdicts = Counter(c["verdict"] for c in doc["claims"])
        findings = sum(n for v, n in verdicts.items() if v.startswith("finding"))
        expected = (f"{len(doc['claims'])}claims,{verdicts['reproduced']}reproduced,{findings}findings"
                    f"(qosbounddiffersfromthepaper,withtheevidencebelow),{verdicts['NOT MET']}notmet")
        assert f"qosboundreproduce{paper}" in built["flat"]
        assert expected in built["flat"], (paper, expected)


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
    each_source_paper_is_named_with_its_verdicts_as_reproduce_printed_them(built)
