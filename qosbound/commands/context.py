"""The run context: the options of one command's run that the code below the command reads.

One :class:`RunContext` is made by :func:`qosbound.cli.main` for each run and passed down explicitly to the
command and from there to the executors it drives (the sweep's, the batch's, ``tune``'s refinement): it carries
what the global options ask (``--debug``, ``--max-memory``) and the run's bookkeeping for a report marked
incomplete (whether ``verify`` has taken charge of its ``--junit`` report). Code used outside a command (a
library call, a test) gets the default context: no memory limit, no debug output.
"""

from __future__ import annotations

from dataclasses import dataclass

from qosbound.isolate import run_isolated

__all__ = ["RunContext"]


@dataclass
class RunContext:
    """What one run of a command was asked, and what it has taken charge of.

    ``debug``: ``--debug`` (tracebacks, and the engines' own output passed through); ``max_memory``: the
    address-space limit of engine work in bytes (``--max-memory``; None: none); ``junit``: the JUnit report
    ``verify`` writes itself, marked incomplete if a signal stops it (None until ``verify`` takes charge: a
    signal before that still gets a report written by the error funnel)."""

    debug: bool = False
    max_memory: int | None = None
    junit: str | None = None

    def isolated(self, fn, *args, what: str, progress=None, passthrough: bool = False, on_crash=None, **kwargs):
        """Run engine work in a child process (see :mod:`qosbound.isolate`) with this run's memory limit."""
        return run_isolated(fn, *args, what=what, memory_limit=self.max_memory, progress=progress,
                            passthrough=passthrough or self.debug, on_crash=on_crash, **kwargs)
