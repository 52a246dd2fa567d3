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
* ```` ```python ```` blocks are executed.

Commands run in a scratch folder that links ``examples/`` and ``models/`` of the
checkout, so files they write (``--out``, ``--junit``) stay out of the tree.
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


def blocks():
    out = []
    for path in DOCS:
        text = path.read_text()
        for i, m in enumerate(FENCE.finditer(text)):
            line = text[: m.start()].count("\n") + 1
            out.append((path, line, m.group(1), m.group(2), i))
    return out


def _split_exit(cmd: str) -> tuple[str, int]:
    m = re.search(r"#\s*exit\s+(\d+)\s*$", cmd)
    code = int(m.group(1)) if m else 0
    cmd = re.sub(r"\s+#.*$", "", cmd).strip()
    return cmd, code


def commands():
    cases = []
    for path, line, lang, body, index in blocks():
        rel = path.relative_to(ROOT)
        if lang == "console":
            cur = None
            for ln in body.splitlines():
                if ln.startswith("$ "):
                    if cur:
                        cases.append(cur)
                    cmd, code = _split_exit(ln[2:])
                    cur = (f"{rel}:{line}", cmd, code, [])
                elif cur and ln.strip():
                    cur[3].append(ln)
            if cur:
                cases.append(cur)
        elif lang == "bash":
            if path.name == "README.md" and index < 2:
                continue
            for ln in body.splitlines():
                if ln.strip().startswith("qosbound "):
                    cmd, code = _split_exit(ln.strip())
                    cases.append((f"{rel}:{line}", cmd, code, []))
    return cases


CASES = commands()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    d = tmp_path_factory.mktemp("docs")
    for name in ("examples", "models"):
        os.symlink(ROOT / name, d / name)
    return d


def test_the_docs_have_runnable_blocks():
    assert len(CASES) >= 10, [c[1] for c in CASES]
    assert all(c[1].startswith("qosbound ") for c in CASES), [c[1] for c in CASES]


@pytest.mark.parametrize("where,cmd,code,sample", CASES, ids=[f"{c[0]}:{c[1][:60]}" for c in CASES])
def test_documented_command_runs(where, cmd, code, sample, scratch):
    argv = shlex.split(cmd)
    env = dict(os.environ, COLUMNS="200")
    proc = subprocess.run([sys.executable, "-m", "qosbound", *argv[1:]], cwd=str(scratch), capture_output=True,
                          text=True, timeout=1200, env=env)
    assert proc.returncode == code, f"{where}: `{cmd}` exited {proc.returncode}, documented {code}\n" \
                                    f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    text = proc.stdout + proc.stderr
    for ln in sample:
        stem = re.split(r"\d", ln, maxsplit=1)[0].strip()
        if len(stem) >= 4:
            assert stem in text, f"{where}: sample line {ln!r} (text {stem!r}) not in the output of `{cmd}`"


@pytest.mark.parametrize("where,body", [(f"{p.relative_to(ROOT)}:{ln}", b) for p, ln, lang, b, _ in blocks()
                                        if lang == "yaml"])
def test_documented_yaml_parses(where, body, tmp_path):
    doc = yaml.safe_load(body)
    if isinstance(doc, dict) and "name" in doc and "system" in doc:
        from qosbound.scenario import load

        f = tmp_path / "s.yaml"
        f.write_text(body)
        load(f)


@pytest.mark.parametrize("where,body", [(f"{p.relative_to(ROOT)}:{ln}", b) for p, ln, lang, b, _ in blocks()
                                        if lang == "python"])
def test_documented_python_runs(where, body):
    exec(compile(body, where, "exec"), {"__name__": "__docs__"})
