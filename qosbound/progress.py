"""Progress reporting: a rich progress bar on an interactive terminal, silence otherwise."""

from __future__ import annotations

import sys
from contextlib import contextmanager

__all__ = ["Progress", "progress"]


class Progress:
    """Minimal progress interface passed to long computations. ``task(desc, total)`` returns ``advance(n=1)``."""

    def __init__(self, bar=None):
        self._bar = bar

    def task(self, description: str, total: float | None = None):
        if self._bar is None:
            return lambda n=1: None
        tid = self._bar.add_task(description, total=total)
        return lambda n=1: self._bar.advance(tid, n)


QUIET = Progress(None)


@contextmanager
def progress(enabled: bool | None = None):
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield QUIET
        return
    from rich.progress import BarColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn

    from rich.console import Console

    with RichProgress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                      console=Console(stderr=True), transient=True) as bar:
        yield Progress(bar)
