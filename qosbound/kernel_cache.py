"""Where numba keeps the compiled kernels, and when it must compile them again.

The simulators' kernels (``validation/``, ``analytic/tsq.py``) are compiled with ``cache=True``. Numba's own
rule for a folder given by ``NUMBA_CACHE_DIR`` keys the kept code by the absolute path of the kernel's source
file and checks only that one file's bytes before reusing it. Two consequences for this package:

* **A change in another file is not seen.** A kernel inlines the functions it calls from other modules (the
  dumbbell's loop calls ``tcp``, ``tfrc_sender``, ``droppers``, ``markers``, ``event_heap``); after an edit of
  one of those alone, numba would keep running the old compiled code (a limitation numba documents for its
  cache). Here a kernel's stamp is the SHA-256 of every ``.py`` file of the two folders kernels are written in
  and call into, ``analytic/`` and ``validation/``: any change to any of them compiles every kernel again.
* **The same code at another path is compiled again.** A checkout, an editable install and an installed wheel
  hold byte-identical kernel files at different paths; each compiled them anew. Here the folder is keyed by
  that stamp and the kernel's place in the package (``qosbound-<stamp>/validation``), so every installation of
  one version of the sources shares one compiled copy, and a different version never reads it.

Without ``NUMBA_CACHE_DIR`` numba's default places (``__pycache__`` beside each file) are used unchanged. Numba
still checks its own version and the machine before it reuses kept code. :func:`register` installs this rule
(numba's ``CACHE_LOCATOR_CLASSES`` setting, numba >= 0.62) unless the user has chosen locators of their own, in
which case theirs are kept; every kernel module calls it before its first ``@njit(cache=True)``.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

from numba.core import caching, config

__all__ = ["KernelCacheLocator", "register", "sources_stamp"]

#: The folders whose sources kernels are compiled from (the package's mapped ``analytic`` and ``validation``).
KERNEL_FOLDERS = ("analytic", "validation")

#: numba's own locators, tried in its order after ours (for every file that is not one of this package's kernels).
_NUMBA_LOCATORS = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator", "IPythonCacheLocator",
                   "ZipCacheLocator")


@functools.lru_cache(maxsize=None)
def sources_stamp(root: str) -> str:
    """SHA-256 (hex) over the relative name and bytes of every ``.py`` file of ``root/analytic`` and
    ``root/validation`` -- ``root`` the checkout (where they lie beside ``qosbound/``) or the installed
    ``qosbound/`` folder (where the wheel maps them): the same sources give the same stamp in either."""
    h = hashlib.sha256()
    base = Path(root)
    files = sorted((f.relative_to(base).as_posix(), f) for d in KERNEL_FOLDERS for f in (base / d).rglob("*.py"))
    for name, f in files:
        h.update(name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _kernel_root(py_file: str) -> tuple[str, str] | None:
    """(the root holding ``analytic/`` and ``validation/``, the kernel's folder name) when ``py_file`` is one of
    this package's kernel sources, else None."""
    path = Path(os.path.abspath(py_file))
    folder = path.parent
    if folder.name not in KERNEL_FOLDERS:
        return None
    root = folder.parent
    if not all((root / d / "__init__.py").is_file() for d in KERNEL_FOLDERS):
        return None
    here = Path(__file__).resolve().parent          # qosbound/: the installed root, or beside the checkout's
    if root.resolve() not in (here, here.parent):
        return None
    return str(root), folder.name


#: numba's locator for ``NUMBA_CACHE_DIR`` (public from numba 0.62, the release that added locator settings; with
#: an older numba this module installs nothing)
_UserDirLocator = getattr(caching, "UserProvidedCacheLocator", object)


class KernelCacheLocator(_UserDirLocator):
    """Numba's locator for ``NUMBA_CACHE_DIR``, with the folder keyed by :func:`sources_stamp` and the kernel's
    folder in the package instead of the file's absolute path, and that stamp as the sources' freshness."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        root, folder = _kernel_root(py_file)
        self._stamp = sources_stamp(root)
        self._cache_path = os.path.join(config.CACHE_DIR, f"qosbound-{self._stamp[:20]}", folder)

    def get_source_stamp(self):
        return self._stamp

    @classmethod
    def from_function(cls, py_func, py_file):
        if not config.CACHE_DIR or _kernel_root(py_file) is None:
            return None
        return super().from_function(py_func, py_file)


def register() -> None:
    """Make numba try :class:`KernelCacheLocator` first, then its own locators -- unless the user has set
    ``NUMBA_CACHE_LOCATOR_CLASSES``, or this numba has no such setting (then numba's rule holds as it is)."""
    if (_UserDirLocator is object or not hasattr(config, "CACHE_LOCATOR_CLASSES")
            or os.environ.get("NUMBA_CACHE_LOCATOR_CLASSES")):
        return
    config.CACHE_LOCATOR_CLASSES = ",".join([f"{__name__}.KernelCacheLocator", *_NUMBA_LOCATORS])


register()
