"""Checks every file reader runs before it reads: the path exists, is a regular file and is not too large.

One routine for scenarios, PRISM files, traces, timestamp CSVs and captures, so ``plan /dev/zero`` and a
directory given as a trace are refused the same way, as one line, before anything is read.
"""

from __future__ import annotations

import os
import stat
from typing import Callable

__all__ = ["check_input_file"]


def _size(n: float) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def check_input_file(path, what: str, error: Callable[[str], Exception], *, max_bytes: float | None = None,
                     too_large_hint: str = "") -> os.stat_result:
    """``os.stat`` of ``path`` once it is known to be a readable regular file of at most ``max_bytes``.

    ``error(problem)`` builds the exception to raise (it adds the file name the way its type does);
    ``what`` names the expected content ("scenario file", "PRISM model", "trace file", ...).
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise error("file not found") from None
    except OSError as e:
        raise error(f"cannot read the {what}: {e.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise error(f"is a directory, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        raise error(f"not a regular file (a device, FIFO or socket): give a {what}")
    if max_bytes is not None and st.st_size > max_bytes:
        raise error(f"{_size(st.st_size)} is too large for a {what} (at most {_size(max_bytes)})"
                    + (f"; {too_large_hint}" if too_large_hint else ""))
    return st
