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

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
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
            if path.name == "README.md" and index < 2:
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
