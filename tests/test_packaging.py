"""Packaging: the wheel maps models/, analytic/ and validation/ into the qosbound namespace."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGES = ["qosbound", "qosbound.models", "qosbound.analytic", "qosbound.validation", "qosbound.systems",
               "qosbound.reproduce"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                           "-w", str(out), str(ROOT)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(proc.stderr[-2000:])
    return next(out.glob("qosbound-*.whl"))


def test_wheel_holds_every_subpackage_and_model_file(wheel):
    """The wheel carries the three top-level folders inside qosbound/, with the PRISM files."""
    names = set(zipfile.ZipFile(wheel).namelist())
    for f in ["qosbound/models/engine.py", "qosbound/models/pq_txq.prism", "qosbound/models/pq_txq.props",
              "qosbound/models/templates/pq_txq.prism", "qosbound/analytic/ferrari.py",
              "qosbound/validation/trace.py", "qosbound/cli.py"]:
        assert f in names, f
    assert not any(n.startswith(("models/", "analytic/", "validation/", "tests/")) for n in names)


def test_every_subpackage_imports_from_an_installed_copy(wheel, tmp_path):
    """Unpacked alone on sys.path (no checkout), the wheel imports every subpackage and finds its models."""
    zipfile.ZipFile(wheel).extractall(tmp_path)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import importlib;"
            f"mods = [importlib.import_module(m) for m in {SUBPACKAGES!r}];"
            "import qosbound.models.engine as e; assert e.MODELS_DIR.joinpath('pq_txq.prism').exists();"
            "print(*[m.__file__ for m in mods], sep='\\n')")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    for line in proc.stdout.split():
        assert line.startswith(str(tmp_path)), line


def test_source_checkout_resolves_the_same_names():
    """From the checkout (root first on sys.path) the mapped subpackages resolve to the top-level folders."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import qosbound.models, qosbound.analytic, "
            "qosbound.validation; print(qosbound.models.__file__)")
    proc = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, cwd="/")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert Path(proc.stdout.strip()).parent.name in ("models",)
