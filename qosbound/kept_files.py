"""Folders of kept records (``QOSBOUND_CACHE_DIR``, a sweep's ``--cache``): the folder checked once, before any
work, and each record written whole or not at all, so that parallel runs sharing a folder never read half a
record."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable, IO

from qosbound.errors import ScenarioError

__all__ = ["writable_folder", "write_atomically"]


def writable_folder(text: str | Path, *, field: str | None = None, file: str | None = None) -> Path:
    """The folder ``text`` names, created if needed; a folder that cannot be created or written is a
    :class:`ScenarioError` naming ``field`` (a command-line option) or ``file`` (an environment variable)."""
    folder = Path(text).expanduser()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ScenarioError(f"cannot create the cache folder '{text}': {e.strerror}", field=field,
                            file=file) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ScenarioError(f"the cache folder '{text}' is not writable", field=field, file=file)
    return folder


def write_atomically(target: Path, write: Callable[[IO], None], *, binary: bool, sync: bool = False) -> None:
    """``write(f)`` into a temporary file beside ``target``, then renamed over it (``sync``: flushed to disk
    first): a reader sees the old record or the new one, never a part. On any error the temporary file is
    removed and the error raised."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=target.suffix)
    try:
        with os.fdopen(fd, "wb" if binary else "w") as f:
            write(f)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
