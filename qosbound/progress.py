"""Progress of long work: which method, which point, how far, and the time left.

On an interactive terminal a rich progress bar (transient: it disappears when the work ends); in a
non-interactive run (CI logs, pipes) one plain line on stderr every :data:`INTERVAL` seconds (10 s; the
environment variable ``QOSBOUND_PROGRESS_INTERVAL`` sets another, in seconds) and nothing more, so a short run
prints nothing; with ``--quiet`` nothing at all. Standard output is never touched (``--json`` stays clean).

A plain line reads::

    qosbound: [0:00:20] admit traffic.EF.calls = 6400 (simulated); feasible at >= 3200, infeasible at <= 12800;
    simulating 8 x 2,000,000 EF packets: 3/8, ETA 0:00:33

Long computations receive a :class:`Progress` and call

* ``task(description, total)``, which returns ``advance(n=1)``: a unit of work done (a replication, a point);
* ``status(text)``: what is being computed now (the method, the point, an admission search's bracket);
* ``partial(value)``: what is done so far, for a report marked incomplete when a signal stops the run
  (:mod:`qosbound.interrupts`); the last value is kept as ``partial_value``;
* ``partial_items(items)``: finished entries of a partial value that is a mapping (a batch's points), merged
  into ``partial_value``: work that finishes one entry at a time reports it in time independent of how many
  are done (resending the whole mapping after each made a batch of n points cost n^2/2 records).

Work in a forked child reports through a relay (:mod:`qosbound.isolate`), which calls :meth:`Progress.tick`
while it waits, so the plain line keeps its rhythm while an engine computes.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager

__all__ = ["Progress", "QUIET", "progress", "interval", "INTERVAL", "report_partial", "report_partial_items",
           "report_status"]

#: Seconds between two plain progress lines in a non-interactive run (``QOSBOUND_PROGRESS_INTERVAL``).
INTERVAL = 10.0


def interval() -> float:
    """The plain lines' interval: ``QOSBOUND_PROGRESS_INTERVAL`` (seconds, > 0) or :data:`INTERVAL`."""
    text = os.environ.get("QOSBOUND_PROGRESS_INTERVAL")
    if text:
        try:
            x = float(text)
        except ValueError:
            return INTERVAL
        if x > 0 and x == x and x != float("inf"):
            return x
    return INTERVAL


def _hms(seconds: float) -> str:
    s = int(max(0.0, seconds) + 0.5)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class _Task:
    def __init__(self, description: str, total: float | None, now: float):
        self.description, self.total, self.done, self.start = description, total, 0.0, now

    def finished(self) -> bool:
        return self.total is not None and self.done >= self.total

    def eta(self, now: float) -> float | None:
        if self.total is None or self.done <= 0:
            return None
        return (now - self.start) * (self.total - self.done) / self.done

    def text(self, now: float) -> str:
        if self.total is None:
            return f"{self.description}: {self.done:g} done"
        eta = self.eta(now)
        return f"{self.description}: {self.done:g}/{self.total:g}" + (f", ETA {_hms(eta)}" if eta is not None else "")


class Progress:
    """The progress interface passed to long computations (see the module docstring).

    ``bar``: a rich progress display (terminal), or None; ``lines``: a stream for the plain lines
    (non-interactive runs), or None; ``clock``: the time source (``time.monotonic``)."""

    def __init__(self, bar=None, lines=None, every: float | None = None, clock=time.monotonic):
        self._bar = bar
        self._lines = lines
        self._every = interval() if every is None else every
        self._clock = clock
        self._t0 = clock()
        self._last = self._t0
        self._tasks: list[_Task] = []
        self._status = ""
        self._status_eta: float | None = None
        self._status_at = self._t0
        self.partial_value = None

    # ---- what long work calls ----------------------------------------------------------------------------
    def task(self, description: str, total: float | None = None):
        t = _Task(description, total, self._clock())
        self._tasks.append(t)
        tid = self._bar.add_task(description, total=total) if self._bar is not None else None

        def advance(n=1):
            t.done += n
            if tid is not None:
                self._bar.advance(tid, n)
                if t.finished():  # a finished task leaves the display (an admission search runs dozens)
                    self._bar.update(tid, visible=False)
            if t.finished() and t in self._tasks:
                self._tasks.remove(t)
            self.tick()

        return advance

    def status(self, text: str, eta: float | None = None) -> None:
        """What is being computed now; ``eta``: seconds left for the whole work, when the caller can tell."""
        self._status, self._status_eta, self._status_at = text, eta, self._clock()
        if self._bar is not None:
            self._bar.status = text + (f" (ETA {_hms(eta)})" if eta is not None else "")
            self._bar.refresh()
        self.tick()

    def partial(self, value) -> None:
        """Record what is done so far (the last value is kept as ``partial_value``)."""
        self.partial_value = value

    def partial_items(self, items: dict) -> None:
        """Merge finished entries into ``partial_value`` (a mapping; started when there is none)."""
        if not isinstance(self.partial_value, dict):
            self.partial_value = {}
        self.partial_value.update(items)

    # ---- the plain lines ------------------------------------------------------------------------------------
    def line(self) -> str:
        """The plain progress line for now."""
        now = self._clock()
        parts = []
        if self._status:
            eta = self._status_eta
            if eta is not None:
                eta = max(0.0, eta - (now - self._status_at))
            parts.append(self._status + (f", ETA {_hms(eta)}" if eta is not None else ""))
        live = [t for t in self._tasks if not t.finished()]
        if live:
            parts.append(live[-1].text(now))
        return f"qosbound: [{_hms(now - self._t0)}] " + ("; ".join(parts) or "working")

    def tick(self) -> None:
        """Print the plain line when :func:`interval` seconds have passed since the last one (or the start)."""
        if self._lines is None:
            return
        now = self._clock()
        if now - self._last < self._every:
            return
        self._last = now
        try:
            print(self.line(), file=self._lines, flush=True)
        except (OSError, ValueError):  # stderr closed: progress is not worth failing for
            self._lines = None


class _Quiet(Progress):
    """The silent default of library code: nothing shown, nothing kept."""

    def task(self, description: str, total: float | None = None):
        return lambda n=1: None

    def status(self, text: str, eta: float | None = None) -> None:
        pass

    def partial(self, value) -> None:
        pass

    def partial_items(self, items: dict) -> None:
        pass


#: Progress that shows nothing (the default of library functions called without one).
QUIET = _Quiet()


def report_partial(progress, value) -> None:
    """``progress.partial(value)`` when ``progress`` offers it (a duck-typed progress may not)."""
    fn = getattr(progress, "partial", None)
    if fn is not None:
        fn(value)


def report_partial_items(progress, items: dict, whole: dict) -> None:
    """``progress.partial_items(items)`` when ``progress`` offers it, else ``progress.partial(whole)`` (``whole``:
    every entry finished so far, ``items`` among them)."""
    fn = getattr(progress, "partial_items", None)
    if fn is not None:
        fn(items)
    else:
        report_partial(progress, whole)


def report_status(progress, text: str, eta: float | None = None) -> None:
    """``progress.status(text, eta)`` when ``progress`` offers it."""
    fn = getattr(progress, "status", None)
    if fn is not None:
        try:
            fn(text, eta)
        except TypeError:  # a status(text) without the ETA
            fn(text)


@contextmanager
def progress(enabled: bool | None = None, stream=None):
    """The run's :class:`Progress`: a bar on an interactive terminal, plain lines every :func:`interval`
    seconds otherwise (``enabled`` None), or silent (``enabled`` False: ``--quiet``). ``stream``: stderr."""
    stream = stream or sys.stderr
    if enabled is False:
        yield Progress()
        return
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        yield Progress(lines=stream)
        return
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    class _Bar(RichProgress):
        status = ""

        def get_renderables(self):
            if self.status:
                yield self.status
            yield from super().get_renderables()

    with _Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
              TextColumn("ETA"), TimeRemainingColumn(), console=Console(file=stream), transient=True) as bar:
        yield Progress(bar)
