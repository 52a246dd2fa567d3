"""Every code block in the README and in docs/ runs: commands exit as documented, YAML parses, Python executes.

Conventions for the documentation (stated here, where they are enforced):

* ```` ```console ```` blocks: lines starting with ``$ `` are commands; the
  lines after one, up to the next command, are a sample of its output. The
  command is run and must exit with the code written as ``# exit N`` at its
  end (0 when absent); each sample line's text up to its first digit must
  appear in the real output (numbers may move as models improve, the report's
  shape may not).
* ```` ```bash ```` blocks: each ``qosbound`` line is run the same way (an
  inline ``# comment`` is dropped, ``# exit N`` is honoured). The README's first
  two blocks (install + run, install + test) are what ``.ci/run`` and the
  packaging test execute, so they are not run again here.
* ```` ```yaml ```` blocks parse; a block with ``name:`` and ``system:`` is
  loaded as a full scenario.
* ```` ```python ```` blocks are executed in a fresh interpreter.

Each page runs top to bottom in its own scratch folder that links ``examples/``
and ``models/`` of the checkout, so a Python block may write a file that a later
command reads, and files the commands write (``--out``, ``--junit``) stay out of
the tree. Plain ```` ``` ```` blocks are sample output and are not run.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT

README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def _split_exit(cmd: str) -> tuple[str, int]:
    m = re.search(r"#\s*exit\s+(\d+)\s*$", cmd)
    code = int(m.group(1)) if m else 0
    return re.sub(r"\s+#.*$", "", cmd).strip(), code


def steps(path: Path) -> list[tuple]:
    """The page's runnable steps in order: ('cmd', line, command, exit code, sample), ('python', line, code),
    ('yaml', line, text)."""
    text = path.read_text()
    out = []
    for index, m in enumerate(FENCE.finditer(text)):
        lang, body = m.group(1), m.group(2)
        line = text[: m.start()].count("\n") + 1
        if lang == "console":
            cur = None
            for ln in body.splitlines():
                if ln.startswith("$ "):
                    cmd, code = _split_exit(ln[2:])
                    cur = ["cmd", line, cmd, code, []]
                    out.append(cur)
                elif cur is not None and ln.strip():
                    cur[4].append(ln)
        elif lang == "bash":
            if path == README and index < 2:
                continue
            for ln in body.splitlines():
                if ln.strip().startswith("qosbound "):
                    cmd, code = _split_exit(ln.strip())
                    out.append(["cmd", line, cmd, code, []])
        elif lang == "python":
            out.append(["python", line, body])
        elif lang == "yaml":
            out.append(["yaml", line, body])
    return out


PAGES = [p for p in DOCS if steps(p)]


def test_every_page_with_code_is_collected():
    cmds = [s for p in DOCS for s in steps(p) if s[0] == "cmd"]
    assert len(cmds) >= 10 and all(s[2].startswith("qosbound ") for s in cmds), [s[2] for s in cmds]
    # The README's own examples (one per use) are run, not only its install command.
    assert README in PAGES and sum(s[0] == "cmd" for s in steps(README)) >= 3


def test_readme_commands_are_what_ci_runs():
    """The README's second block is the test command `.ci/run` executes, character for character; the first
    installs and runs the main job."""
    blocks = [m.group(2).strip() for m in FENCE.finditer(README.read_text()) if m.group(1) == "bash"][:2]
    assert blocks[0].startswith("pip install . && qosbound ")
    assert blocks[1] in (ROOT / ".ci" / "run").read_text().splitlines()


def test_docs_index_links_every_page():
    """docs/README.md lists every page of docs/, and every link on it resolves."""
    index = (ROOT / "docs" / "README.md").read_text()
    links = set(re.findall(r"\]\(([^)#]+\.md)(?:#[^)]*)?\)", index))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"README.md"}
    assert pages <= links, sorted(pages - links)
    assert all((ROOT / "docs" / link).is_file() for link in links), links


def test_relative_links_resolve():
    """Every relative Markdown link of the README and docs names a file of the checkout."""
    bad = []
    for page in DOCS:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text()):
            if not (page.parent / target).exists():
                bad.append(f"{page.relative_to(ROOT)}: {target}")
    assert not bad, bad


def test_named_test_modules_exist():
    """Every test module the README, docs/ and tests/README.md name (``tests/.../test_x.py``) is a file of the
    checkout: a test module moved or split takes its mentions with it."""
    bad = [f"{page.relative_to(ROOT)}: {name}" for page in [*DOCS, ROOT / "tests" / "README.md"]
           for name in re.findall(r"\btests/[\w/]*test_\w+\.py\b", page.read_text()) if not (ROOT / name).is_file()]
    assert not bad, bad


def _doctest_modules() -> list[str]:
    """The importable names of the package's modules whose docstrings hold examples (``>>>``)."""
    out = []
    for folder, package in (("qosbound", "qosbound"), ("analytic", "qosbound.analytic"),
                            ("models", "qosbound.models"), ("validation", "qosbound.validation")):
        for f in sorted((ROOT / folder).rglob("*.py")):
            if ">>> " in f.read_text(encoding="utf-8"):
                rel = f.relative_to(ROOT / folder).with_suffix("")
                parts = [p for p in rel.parts if p != "__init__"]
                out.append(".".join([package, *parts]))
    return out


def test_doctests_are_found():
    assert "qosbound.analytic.tfrc" in _doctest_modules()


@pytest.mark.parametrize("module", _doctest_modules())
def test_doctests_pass(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, result


def _run_command(where, cmd, code, sample, cwd):
    argv = shlex.split(cmd)
    proc = subprocess.run([sys.executable, "-m", "qosbound", *argv[1:]], cwd=str(cwd), capture_output=True,
                          text=True, timeout=1200, env=dict(os.environ, COLUMNS="200"))
    assert proc.returncode == code, (f"{where}: `{cmd}` exited {proc.returncode}, documented {code}\n"
                                     f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    text = proc.stdout + proc.stderr
    for ln in sample:
        stem = re.split(r"\d", ln, maxsplit=1)[0].strip()
        if len(stem) >= 4:
            assert stem in text, f"{where}: sample line {ln!r} (text {stem!r}) not in the output of `{cmd}`"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_runs_top_to_bottom(page, tmp_path):
    for name in ("examples", "models"):
        os.symlink(ROOT / name, tmp_path / name)
    rel = page.relative_to(ROOT)
    for step in steps(page):
        where = f"{rel}:{step[1]}"
        if step[0] == "cmd":
            _run_command(where, *step[2:], tmp_path)
        elif step[0] == "python":
            proc = subprocess.run([sys.executable, "-c", step[2]], cwd=str(tmp_path), capture_output=True,
                                  text=True, timeout=600)
            assert proc.returncode == 0, f"{where}: Python block failed\n{proc.stderr[-3000:]}"
        else:
            doc = yaml.safe_load(step[2])
            if isinstance(doc, dict) and "name" in doc and "system" in doc:
                from qosbound.scenario import load

                f = tmp_path / "documented.yaml"
                f.write_text(step[2])
                load(f)


def test_bibtex_lists_the_source_papers():
    """paper/references.bib holds an entry with authors, title and year for each source paper of references.md."""
    bib = (ROOT / "paper" / "references.bib").read_text(encoding="utf-8")
    entries = re.findall(r"@\w+\{(\w+),(.*?)\n\}", bib, re.S)
    assert len(entries) >= 5
    for key, body in entries:
        for field in ("author", "title", "year"):
            assert re.search(rf"\b{field}\s*=", body), (key, field)
    refs = (ROOT / "docs" / "references.md").read_text(encoding="utf-8")
    for year in re.findall(r"^\* \*\*[^*]*\((\d{4})\)\.\*\*", refs, re.M):
        assert any(re.search(rf"year\s*=\s*\{{{year}\}}", body) for _, body in entries), year
