"""Where numba keeps the compiled kernels (qosbound.kernel_cache): one compiled copy per version of the kernel
sources, shared by every installation of them, and compiled again after a change to any file a kernel may
inline."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from qosbound import kernel_cache
from qosbound.kernel_cache import KERNEL_FOLDERS, KernelCacheLocator, sources_stamp

ROOT = Path(__file__).resolve().parents[1]

#: Compile (or load) one small cached kernel and print numba's cache statistics for it, and the folder it is kept in.
PROBE = ("import json; from qosbound.validation import droppers as D; D.ewma_idle(0.5, 0.1, 3.0); "
         "st = D.ewma_idle.stats; import qosbound.validation as V; "
         "print(json.dumps([sum(st.cache_hits.values()), sum(st.cache_misses.values()), V.__file__]))")


def _copy_checkout(dest: Path) -> Path:
    """The package and its mapped folders, copied to another path (as another installation would hold them)."""
    for name in ("qosbound", *KERNEL_FOLDERS, "models"):
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", dest)  # a checkout's root: qosbound/__init__.py maps the folders beside it
    return dest


def _probe(cwd: Path, cache: Path) -> tuple[int, int, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_LOCATOR_CLASSES")}
    env["NUMBA_CACHE_DIR"] = str(cache)
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=str(cwd), env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    hits, misses, where = json.loads(proc.stdout.splitlines()[-1])
    return hits, misses, where


def test_the_same_sources_at_two_paths_have_one_stamp_and_the_kernels_folder_is_named_by_it(tmp_path, monkeypatch):
    copy = _copy_checkout(tmp_path / "elsewhere")
    assert sources_stamp(str(copy)) == sources_stamp(str(ROOT))
    assert kernel_cache._kernel_root(str(ROOT / "validation" / "droppers.py")) == (str(ROOT), "validation")
    assert kernel_cache._kernel_root(str(ROOT / "qosbound" / "cli.py")) is None   # not a kernel folder
    assert kernel_cache._kernel_root(str(copy / "validation" / "droppers.py")) is None  # not this installation's
    monkeypatch.setattr(kernel_cache.config, "CACHE_DIR", str(tmp_path / "numba"))
    from qosbound.validation import droppers
    loc = KernelCacheLocator.from_function(droppers.ewma_idle.py_func, droppers.__file__)
    assert loc.get_cache_path() == str(tmp_path / "numba" / f"qosbound-{sources_stamp(str(ROOT))[:20]}" / "validation")
    assert loc.get_source_stamp() == sources_stamp(str(ROOT))
    monkeypatch.setattr(kernel_cache.config, "CACHE_DIR", "")
    assert KernelCacheLocator.from_function(droppers.ewma_idle.py_func, droppers.__file__) is None  # numba's own


def test_a_change_to_any_file_a_kernel_may_inline_gives_a_new_stamp(tmp_path):
    """numba alone checks only the kernel's own file: the dumbbell's loop inlines tcp.py's functions, so an edit of
    tcp.py alone would leave its old compiled code in use. The stamp covers every file of both kernel folders."""
    copy = _copy_checkout(tmp_path / "edited")
    before = sources_stamp(str(copy))
    tcp = copy / "validation" / "tcp.py"
    tcp.write_text(tcp.read_text() + "\n# an edit\n")
    sources_stamp.cache_clear()
    assert sources_stamp(str(copy)) != before
    (copy / "analytic" / "wred.py").write_text((copy / "analytic" / "wred.py").read_text() + "\n")
    tcp.write_text(tcp.read_text()[:-len("\n# an edit\n")])
    sources_stamp.cache_clear()
    assert sources_stamp(str(copy)) not in (before, sources_stamp(str(ROOT)))


def test_a_kernel_compiled_from_one_installation_is_loaded_by_another_of_the_same_sources(tmp_path):
    """The first copy compiles the kernel; a second copy at another path loads it (a hit, no compile); a third copy
    with one validation file changed compiles it again (a miss), in a folder of its own."""
    cache = tmp_path / "numba"
    first = _copy_checkout(tmp_path / "first")
    second = _copy_checkout(tmp_path / "second")
    hits, misses, where = _probe(first, cache)
    assert where.startswith(str(first)) and misses == 1 and hits == 0
    hits, misses, where = _probe(second, cache)
    assert where.startswith(str(second)) and (hits, misses) == (1, 0)
    third = _copy_checkout(tmp_path / "third")
    (third / "validation" / "tcp.py").write_text((third / "validation" / "tcp.py").read_text() + "\n# an edit\n")
    hits, misses, _ = _probe(third, cache)
    assert (hits, misses) == (0, 1)
    assert len([p for p in cache.iterdir() if p.name.startswith("qosbound-")]) == 2
