"""Packaging: the wheel maps models/, analytic/, validation/ and examples/ into the qosbound namespace, and an
installed wheel runs every command from any directory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from qosbound.systems.solve_cache import code_fingerprint
from tests.import_graph import modules

ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGES = ["qosbound", "qosbound.models", "qosbound.analytic", "qosbound.validation", "qosbound.systems",
               "qosbound.reproduce"]
#: Left out of the copy the wheel is built from: version control, caches and earlier build output (a stale
#: build/ folder would otherwise leak deleted files into the wheel).
BUILD_IGNORE = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".numba_cache",
                                      ".hypothesis", ".pytest_cache", "out", "validation-out", "*.parquet")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """A wheel built from a clean copy of the checkout (so parallel test workers never share a build folder)."""
    src = tmp_path_factory.mktemp("src") / "qosbound"
    shutil.copytree(ROOT, src, ignore=BUILD_IGNORE)
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(proc.stderr[-2000:])
    return next(out.glob("qosbound-*.whl"))


def test_wheel_holds_every_subpackage_and_model_file(wheel):
    """The wheel carries the top-level folders inside qosbound/, with the PRISM files."""
    names = set(zipfile.ZipFile(wheel).namelist())
    for f in ["qosbound/models/engine.py", "qosbound/models/pq_txq.prism", "qosbound/models/pq_txq.props",
              "qosbound/models/templates/pq_txq.prism", "qosbound/analytic/ferrari.py",
              "qosbound/validation/trace.py", "qosbound/cli.py", "qosbound/shipped.py",
              "qosbound/reproduce/claims.py"]:
        assert f in names, f
    assert not any(n.startswith(("models/", "analytic/", "validation/", "tests/", "examples/")) for n in names)


def test_wheel_ships_every_example_and_reference_file(wheel):
    """Every example scenario of the checkout and every paper's reference data is in the wheel, so the commands
    that read them (reproduce, plan by name) work without a checkout."""
    names = set(zipfile.ZipFile(wheel).namelist())
    examples = sorted(p.relative_to(ROOT / "examples").as_posix() for p in (ROOT / "examples").glob("*.yaml"))
    folders = sorted(p.relative_to(ROOT / "examples").as_posix() for p in (ROOT / "examples").glob("*/*.yaml"))
    assert examples and folders  # the folders of ports (edge-router, wan-ports) ship too
    for name in examples + folders:
        assert f"qosbound/examples/{name}" in names, name
    for p in sorted((ROOT / "qosbound" / "data").glob("*.yaml")):
        assert f"qosbound/data/{p.name}" in names, p.name
    claims = sorted((ROOT / "qosbound" / "data" / "claims").glob("*.yaml"))
    assert len(claims) == 5
    for p in claims:
        assert f"qosbound/data/claims/{p.name}" in names, p.name


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
            "qosbound.validation, qosbound.shipped; print(qosbound.models.__file__); "
            "print(qosbound.shipped.example_path('ferrari2001'))")
    proc = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, cwd="/")
    assert proc.returncode == 0, proc.stderr[-2000:]
    models, example = proc.stdout.split()
    assert Path(models).parent.name == "models"
    assert Path(example) == ROOT / "examples" / "ferrari2001.yaml"


def _outer_site_packages() -> list[str]:
    """The site-packages folders the interpreter running the tests imports its dependencies from, in its order:
    a virtual environment's own, the base interpreter's when it sees them, the user's. Not the checkout (the
    PYTHONPATH a developer sets) and not the standard library."""
    out: list[str] = []
    for entry in sys.path:
        if Path(entry).name in ("site-packages", "dist-packages") and Path(entry).is_dir() and entry not in out:
            out.append(entry)
    return out


def _venv_with_outer_dependencies(venv: Path) -> Path:
    """A fresh virtual environment that imports the dependencies of the environment running the tests, however
    that one was made (a venv, the base interpreter, an editable install).

    ``python -m venv --system-site-packages`` is no way to get them: it sees the *base* interpreter's packages,
    not those of the venv it is created from, so inside a venv (the README's test command) every dependency was
    missing. Instead the new venv (without system site packages) gets a ``.pth`` file naming the outer
    environment's site-packages folders. Lines of a ``.pth`` file are appended to ``sys.path`` after the venv's
    own site-packages, and the ``.pth`` files inside those folders are not run, so a qosbound installed there
    (editable, through its finder hook, or regular) never shadows the copy installed into the new venv. No
    package is downloaded: the test needs no network."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, env=_venv_env(venv)).stdout.strip()
    outer = _outer_site_packages()
    assert outer, f"no site-packages on {sys.path}"
    (Path(site) / "_qosbound_test_outer_env.pth").write_text("".join(f"{d}\n" for d in outer))
    return py


def _venv_env(venv: Path) -> dict:
    """The environment of a user of the venv: no PYTHONPATH (a checkout on it would shadow the installed copy).
    The test run's NUMBA_CACHE_DIR when it has one (.ci/run sets it): qosbound.kernel_cache keys compiled kernels by
    their sources, not their path, so the installed copy reuses what the checkout's tests compiled from the same
    bytes (asserted: the code fingerprints are equal); else a folder of the venv's own."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["NUMBA_CACHE_DIR"] = os.environ.get("NUMBA_CACHE_DIR") or str(venv / "numba_cache")
    env["MPLBACKEND"] = "Agg"
    return env


def _run(venv: Path, cwd: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv / "bin" / "qosbound"), *args], capture_output=True, text=True, cwd=str(cwd),
                          env=_venv_env(venv), timeout=timeout)


def test_the_test_venv_imports_the_dependencies_of_the_environment_running_the_tests(tmp_path):
    """The venv the installed-wheel test builds imports numpy and stormpy from where this interpreter does (a
    venv-inside-a-venv made with --system-site-packages found none of them: 'No module named numpy')."""
    import numpy
    import stormpy

    py = _venv_with_outer_dependencies(tmp_path / "venv")
    code = "import json, sys, numpy, stormpy, pydantic; print(json.dumps([numpy.__file__, stormpy.__file__, sys.prefix]))"
    proc = subprocess.run([str(py), "-c", code], capture_output=True, text=True, cwd=str(tmp_path),
                          env=_venv_env(tmp_path / "venv"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    np_file, storm_file, prefix = json.loads(proc.stdout)
    assert Path(prefix).resolve() == (tmp_path / "venv").resolve()
    assert Path(np_file).resolve() == Path(numpy.__file__).resolve()
    assert Path(storm_file).resolve() == Path(stormpy.__file__).resolve()


#: The shipped example of each system whose plan runs every method it enables from the installed wheel.
FULL_METHODS = {"pq_txq": "ferrari2001", "af": "qstp2008", "port": "port_branch10m", "tsq": "tsq_audio",
                "tfrc": "qstp_gtfrc", "network": "network_wan"}


@pytest.mark.slow
def test_installed_wheel_runs_every_reproduce_and_plan_from_any_directory(wheel, tmp_path):
    """The README's `pip install .`, then every command from an empty directory.

    The wheel goes into a fresh venv that imports the dependencies of the environment running the tests
    (:func:`_venv_with_outer_dependencies`: a venv, the base interpreter or an editable install alike), with
    ``pip install --no-deps`` of the wheel alone; the checkout is not on the path, and a qosbound installed in
    the outer environment (editable, as on a developer's machine, or regular, as after the README's
    ``pip install '.[test]'``) must not shadow the venv's copy. From an empty directory: every
    ``reproduce --quick`` judges every claim of its shipped claims file (exit 1 exactly when one is NOT MET), and
    ``plan`` runs on every shipped example by name (exit
    0, 1 or 3: an SLO or agreement check may fail there, which is a verdict, not a crash), printing JSON and no
    traceback: by every method it enables on one example of each system (:data:`FULL_METHODS`), by its closed
    forms on the others. The installed copy's code fingerprint must equal the checkout's; it shares the test run's
    folder of kept runs (tests/conftest.py), so a simulation the checkout's tests made is read back here and the
    other way round."""
    t0 = time.monotonic()
    venv = tmp_path / "venv"
    py = _venv_with_outer_dependencies(venv)
    # --ignore-installed: a qosbound of the same version in the outer environment would otherwise count as
    # "already satisfied" and leave the venv empty.
    proc = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed", "-q",
                           str(wheel)],
                          capture_output=True, text=True, env=_venv_env(venv))
    assert proc.returncode == 0, proc.stderr[-2000:]
    work = tmp_path / "empty"
    work.mkdir()

    code = ("import json, sys, qosbound, qosbound.models, qosbound.analytic, qosbound.validation, qosbound.shipped "
            "as s, qosbound.cli as c; print(json.dumps({'files': [qosbound.__file__, qosbound.models.__file__, "
            "qosbound.analytic.__file__, qosbound.validation.__file__, str(s.example_path(s.example_names()[0])), "
            "str(s.reference_path('ferrari2001'))], "
            "'examples': s.example_names(), 'papers': list(c.PAPERS), 'prefix': sys.prefix, "
            "'code': __import__('qosbound.systems.solve_cache', fromlist=['x']).code_fingerprint()}))")
    proc = subprocess.run([str(py), "-c", code], capture_output=True, text=True, cwd=str(work), env=_venv_env(venv))
    assert proc.returncode == 0, proc.stderr[-2000:]
    info = json.loads(proc.stdout)
    site = Path(info["prefix"]).resolve()
    assert site == venv.resolve()
    for f in info["files"]:                       # the venv's copy, not the checkout or a base-environment install
        assert str(Path(f).resolve()).startswith(str(site)), f
    shipped = sorted(n[len("qosbound/examples/"):-5] for n in zipfile.ZipFile(wheel).namelist()
                     if n.startswith("qosbound/examples/") and n.endswith(".yaml")
                     and "/" not in n[len("qosbound/examples/"):])       # a folder of ports is not an example name
    assert info["examples"] == shipped and shipped
    # The installed copy's code is the checkout's, file for file and byte for byte (the fingerprint of every .py
    # of the package and its mapped folders, solve_cache.code_fingerprint). That is also why it may share the test
    # run's QOSBOUND_CACHE_DIR (tests/conftest.py): a run the checkout's tests already made is one this copy would
    # make, bit for bit, and is read back; every command's own code still runs from the wheel.
    assert info["code"] == code_fingerprint()

    failures = []
    for paper in info["papers"]:
        proc = _run(venv, work, "reproduce", paper, "--quick", "--json", "--quiet")
        try:
            doc = json.loads(proc.stdout)
        except json.JSONDecodeError:
            failures.append(f"reproduce {paper}: exit {proc.returncode}, no JSON: {proc.stderr[-1500:]}")
            continue
        # the claims file ships: every claim of it is a row, judged or not attempted; the exit code is the
        # verdicts' (the verdicts themselves: tests/reproduce/test_<paper>_claims.py and the targets' tests)
        not_met = [c["id"] for c in doc["claims"] if c["verdict"] == "NOT MET"]
        if (proc.returncode != (1 if not_met else 0) or doc["exit_code"] != proc.returncode or "Traceback" in proc.stderr
                or len(doc["claims"]) < 10 or doc["unlisted_rows"]):
            failures.append(f"reproduce {paper}: exit {proc.returncode}, not met {not_met}, {proc.stderr[-1500:]}")
    # every example by its closed forms; then one example of each system by every method it enables (the
    # engines and their files from the wheel; the examples' numbers: tests/test_examples.py, test_agreement.py)
    systems = set()
    for name, methods in [(n, ["--methods", "closed-form"]) for n in shipped] + [(n, []) for n in FULL_METHODS.values()]:
        proc = _run(venv, work, "plan", name, "--json", "--quiet", *methods)
        ok = proc.returncode in (0, 1, 3) and "Traceback" not in proc.stderr
        try:
            doc = json.loads(proc.stdout)
            ok = ok and bool(doc["metrics"]) and doc["scenario"]
            systems.add(doc["system"])
        except (json.JSONDecodeError, KeyError, TypeError):
            ok = False
        if not ok:
            failures.append(f"plan {name} {' '.join(methods)}: exit {proc.returncode}: {proc.stderr[-1500:]}")
    assert systems == set(FULL_METHODS), f"a system without an example run by every method: {systems}"
    assert list(work.iterdir()) == [] or all(p.name.startswith(".") for p in work.iterdir())
    assert not failures, "\n".join(failures)
    print(f"installed-wheel run: {time.monotonic() - t0:.0f} s")


# --- One import mechanism for every way the project is used -------------------------------------------------
#
# The design keeps models/, analytic/ and validation/ at the top level beside qosbound/ and maps them into the
# qosbound namespace in three ways that must agree: pyproject.toml's package-dir for a wheel (the folders are
# copied inside qosbound/), the same mapping through setuptools' editable finder, and, for a source checkout
# first on sys.path (the README's test command runs the tests from the checkout after `pip install .`), the
# __path__ entry qosbound/__init__.py adds when the folders sit beside it. Each set-up imports every module
# of the package, and each module must come from that set-up's copy.

IMPORT_EVERY_MODULE = (
    "import importlib, json, sys; names = json.loads(sys.argv[1]); "
    "print(json.dumps({n: importlib.import_module(n).__file__ for n in names}))")


def _every_module() -> list[str]:
    """Every module of the package, read from the checkout (entry points that run on import left out)."""
    return [m for m in modules(ROOT) if not m.endswith("__main__")]


def _assert_every_module_from(proc: subprocess.CompletedProcess, copy: Path, names: list[str]) -> None:
    assert proc.returncode == 0, proc.stderr[-2000:]
    files = json.loads(proc.stdout.strip().splitlines()[-1])
    assert sorted(files) == sorted(names)
    elsewhere = {n: f for n, f in files.items() if not str(Path(f).resolve()).startswith(str(copy.resolve()))}
    assert elsewhere == {}


def _outer_dependencies_without_qosbound(folder: Path) -> Path:
    """One folder of links to everything in the outer site-packages but qosbound itself (a regular or editable
    install of it there would shadow the copy under test: setuptools' editable finder comes after sys.path)."""
    folder.mkdir()
    for site in _outer_site_packages():
        for entry in Path(site).iterdir():
            name = entry.name.lower()
            if name.startswith(("qosbound", "__editable__.qosbound", "__editable___qosbound")) or \
                    name.endswith(".pth") or (folder / entry.name).exists():
                continue
            (folder / entry.name).symlink_to(entry)
    return folder


def test_every_module_imports_from_the_checkout_first_on_the_path():
    """The README's test set-up: whatever is installed, Python started in the checkout imports the checkout."""
    names = _every_module()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["MPLBACKEND"] = "Agg"
    proc = subprocess.run([sys.executable, "-c", IMPORT_EVERY_MODULE, json.dumps(names)], capture_output=True,
                          text=True, cwd=str(ROOT), env=env, timeout=900)
    _assert_every_module_from(proc, ROOT, names)


@pytest.mark.slow
def test_every_module_imports_from_an_editable_install(tmp_path):
    """`pip install -e .` of a copy of the checkout, used from another directory, imports every module from the
    copy -- the mapped folders included."""
    src = tmp_path / "src" / "qosbound"
    shutil.copytree(ROOT, src, ignore=BUILD_IGNORE)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, env=_venv_env(venv)).stdout.strip()
    deps = _outer_dependencies_without_qosbound(tmp_path / "deps")
    (Path(site) / "_qosbound_test_outer_env.pth").write_text(f"{deps}\n")
    proc = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "-q", "-e", str(src)],
                          capture_output=True, text=True, env=_venv_env(venv), timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = _every_module()
    work = tmp_path / "elsewhere"
    work.mkdir()
    proc = subprocess.run([str(py), "-c", IMPORT_EVERY_MODULE, json.dumps(names)], capture_output=True, text=True,
                          cwd=str(work), env=_venv_env(venv), timeout=900)
    _assert_every_module_from(proc, src, names)


def test_every_module_imports_from_a_wheel_used_elsewhere(wheel, tmp_path):
    """The wheel unpacked alone on sys.path (no checkout) holds and imports every module of the package."""
    zipfile.ZipFile(wheel).extractall(tmp_path / "wheel")
    names = _every_module()
    code = f"import sys; sys.path.insert(0, {str(tmp_path / 'wheel')!r}); " + IMPORT_EVERY_MODULE
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["MPLBACKEND"] = "Agg"
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(names)], capture_output=True, text=True,
                          cwd=str(tmp_path), env=env, timeout=900)
    _assert_every_module_from(proc, tmp_path / "wheel", names)
