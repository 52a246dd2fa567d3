"""The on-disk cache of finished sweep points.

A point is keyed by the SHA-256 of its canonical form: the scenario after the varied
parameters (and the derived simulation seed) are set, the requested methods and
qosbound's version, as JSON with sorted keys. The method options live in the
scenario's ``methods:`` section, so they are part of the key. Each record is written
to a temporary file in the cache folder and renamed over its final name, so a sweep
killed at any moment leaves either the whole record or none of it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from qosbound import __version__
from qosbound.kept_files import writable_folder, write_atomically

__all__ = ["Cache", "default_cache_dir", "point_key", "canonical"]

#: Name of the append-only log of stored keys (one line per record written), kept in the cache folder.
LOG_NAME = "stored.log"


def canonical(obj) -> str:
    """JSON with sorted keys and no spaces: the same mapping always gives the same text."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def point_key(raw: dict, methods: list[str]) -> str:
    return hashlib.sha256(canonical({"scenario": raw, "methods": list(methods),
                                     "qosbound": __version__}).encode()).hexdigest()


def default_cache_dir() -> Path:
    """The user's cache folder for qosbound's sweeps (platformdirs when installed, else ~/.cache/qosbound)."""
    try:
        from platformdirs import user_cache_dir  # optional: the fallback is ~/.cache

        base = Path(user_cache_dir("qosbound"))
    except ImportError:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "qosbound"
    return base / "sweep"


class Cache:
    """Records of finished points, one JSON file per key (``ab/abcdef....json``); ``None`` folder = no cache."""

    def __init__(self, folder: str | Path | None):
        self.folder = writable_folder(folder, field="--cache") if folder is not None else None

    def _file(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """The stored record, or None (absent, unreadable or from another key)."""
        if self.folder is None:
            return None
        try:
            rec = json.loads(self._file(key).read_text())
        except (OSError, ValueError):
            return None
        return rec if isinstance(rec, dict) and rec.get("key") == key else None

    def put(self, key: str, record: dict) -> None:
        """Store ``record`` atomically (temporary file + rename) and log its key."""
        if self.folder is None:
            return
        target = self._file(key)
        target.parent.mkdir(exist_ok=True)
        write_atomically(target, lambda f: f.write(canonical(dict(record, key=key))), binary=False, sync=True)
        with open(self.folder / LOG_NAME, "a") as log:  # one short line: appends of it do not interleave
            log.write(f"{key}\n")
