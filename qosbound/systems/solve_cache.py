"""Solutions of the costly models and simulation runs kept on disk between runs (``QOSBOUND_CACHE_DIR``).

A CI gate re-verifies the same ports on every commit, a capacity-planning session re-plans the port it just
planned with one SLO changed, and a reader of ``reproduce`` re-runs a paper after editing a claim's rule. The ring
method's chain and its upper bound (tens of seconds to minutes on a large tx-ring) and the network runs of
``reproduce`` (Koehler & Schaefer's and Takeo & Tasaka's dumbbell runs, the TSQ replications, each reduced to
what the paper's rows use), the simulated replications of a pq_txq scenario or a port (each replication's
generator spawned from the scenario's seed) and ns-3's runs of ``validate --ns3`` (the ns3 wheel's version in the
key) are pure functions of their inputs, so when the environment variable
``QOSBOUND_CACHE_DIR`` names a folder their results are kept there and read back by the next run that asks the
same question; without it nothing is read or written.

What makes a read-back answer the one a fresh solve would give:

* the key is the SHA-256 of the function's name, its arguments (pickled: the port's parameters, the delays and
  quantiles asked, the budgets) and a *fingerprint of the code*: every ``.py`` file of the package (the models,
  the closed forms, the systems), qosbound's version and the versions of Python, NumPy and SciPy. Any change of
  the code or of the numerical libraries gives new keys, so a cache folder is never stale, only unused;
* the solvers are deterministic (sparse LU and policy iteration from fixed starting points, one BLAS thread), so
  the same inputs give the same numbers, bit for bit; a proved bound read back is the bound proved by the same
  code on the same inputs;
* a record is written to a temporary file and renamed over its name, so parallel runs sharing a folder (test
  workers, CI jobs) never read half a record; a record that cannot be read is recomputed.

The records are Python pickles: a cache folder must be as trusted as the code itself (the user's own folder or the
CI's cache, never one from elsewhere). Results answered from the cache say so in their provenance
(``"cache": "read back"``), with the original solve's time.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import platform
from pathlib import Path
from typing import Any, Callable

import numpy as np
import scipy

import qosbound
import qosbound.analytic
import qosbound.models
import qosbound.validation
from qosbound import __version__
from qosbound.kept_files import writable_folder, write_atomically

try:
    import fcntl  # POSIX: parallel runs sharing a folder take turns per key
except ImportError:  # pragma: no cover - elsewhere they may both solve, never read half a record
    fcntl = None

__all__ = ["ENV", "READ_BACK", "cache_folder", "cached", "cached_replications", "code_fingerprint"]

#: The environment variable naming the cache folder (unset or empty: no cache).
ENV = "QOSBOUND_CACHE_DIR"

#: What the provenance of a result read back says.
READ_BACK = "read back (QOSBOUND_CACHE_DIR)"


def cache_folder() -> Path | None:
    """The folder named by ``QOSBOUND_CACHE_DIR`` (created if needed), or None when the variable is unset or empty.
    A folder that cannot be created or written is a clear error naming the variable (in the place of a file: the
    command line checks it before any work, so a bad folder is never a method silently skipped)."""
    text = os.environ.get(ENV, "").strip()
    return writable_folder(text, file=ENV) if text else None


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 over the name and bytes of every ``.py`` file of the package and of its mapped ``models``,
    ``analytic`` and ``validation`` folders (named alike whether they lie beside ``qosbound/`` in a checkout or
    inside it in an installed wheel, so both give one fingerprint), and the versions of qosbound, Python, NumPy
    and SciPy."""
    h = hashlib.sha256()
    for v in (__version__, platform.python_version(), np.__version__, scipy.__version__):
        h.update(v.encode() + b"\0")
    mapped = {"models": qosbound.models, "analytic": qosbound.analytic, "validation": qosbound.validation}
    files = []
    root = Path(qosbound.__file__).parent
    for f in root.rglob("*.py"):
        rel = f.relative_to(root)
        if rel.parts[0] not in mapped:  # an installed wheel holds them here: named below, from their own folder
            files.append((rel.as_posix(), f))
    for name, pkg in mapped.items():
        base = Path(pkg.__file__).parent
        files += [(f"{name}/{f.relative_to(base).as_posix()}", f) for f in base.rglob("*.py")]
    for name, f in sorted(files):
        h.update(name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _key(name: str, args: tuple, kwargs: dict) -> str:
    payload = pickle.dumps((name, args, sorted(kwargs.items())), protocol=4)
    return hashlib.sha256(code_fingerprint().encode() + payload).hexdigest()


def _read(path: Path, key: str) -> tuple[bool, Any]:
    try:
        with open(path, "rb") as f:
            stored_key, value = pickle.load(f)
        return stored_key == key, value
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, ImportError):
        return False, None  # absent or unreadable: computed again


def _write(path: Path, key: str, value: Any) -> None:
    try:
        write_atomically(path, lambda f: pickle.dump((key, value), f, protocol=4), binary=True)
    except OSError:  # a full or read-only disk loses the record, not the answer
        pass


def cached(fn: Callable[..., Any], *args, unkeyed: dict | None = None, **kwargs) -> tuple[Any, bool]:
    """``(fn(*args, **kwargs), read_back)``: the value from the cache folder when one is set and holds it (then
    ``read_back`` is True), else computed (and stored when a folder is set). The function's module and name are
    part of the key: two functions never share a record. Processes asking the same question at once take turns
    (a lock file per key, released when its holder ends, however it ends): the second reads what the first
    stored instead of solving again. An error is raised, never stored. ``unkeyed``: keyword arguments passed to
    ``fn`` but not part of the key -- only what cannot change the value (a progress callback)."""
    folder = cache_folder()
    if unkeyed:
        fn = functools.partial(fn, **unkeyed)
    if folder is None:
        return fn(*args, **kwargs), False
    base = fn.func if isinstance(fn, functools.partial) else fn
    key = _key(f"{base.__module__}.{base.__qualname__}", args, kwargs)
    path = folder / key[:2] / f"{key}.pickle"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = open(path.with_suffix(".lock"), "a+b")
    except OSError:
        lock = None
    try:
        if lock is not None and fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        hit, value = _read(path, key)
        if hit:
            return value, True
        value = fn(*args, **kwargs)
        _write(path, key, value)
        return value, False
    finally:
        if lock is not None:
            lock.close()  # closing releases the lock


def cached_replications(run: Callable[..., Any], *args, replications: int, advance) -> tuple[Any, bool]:
    """A simulator's ``run(*args, advance=advance)`` of ``replications`` replications through :func:`cached`
    (``advance``, the progress callback, not in the key); read back, the progress is advanced by all of them at
    once. The replications must be a pure function of ``args`` (each its own generator spawned from the seed
    among them)."""
    rep, read_back = cached(run, *args, unkeyed={"advance": advance})
    if read_back:
        advance(replications)
    return rep, read_back
