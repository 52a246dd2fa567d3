"""How a run ends on SIGINT or SIGTERM: once, promptly, with what it had done.

CI cancels a job by sending SIGTERM to the process, then to its whole process group, often twice; a user
presses Ctrl-C once or twice. Whatever the stage (parsing, a Storm build or solve in the child, a numba
simulation, plotting, a batch or sweep on Dask, an admission search), the run must end with exit 130 (SIGINT)
or 143 (SIGTERM), one line and no traceback, after writing what it had done, marked incomplete.

The policy, installed by :func:`handling` (the CLI's ``main`` and :func:`qosbound.isolate.run_isolated`):

* the **first** SIGINT or SIGTERM raises :class:`Stopped` in the main thread. It derives from
  ``BaseException`` (as ``KeyboardInterrupt`` does), so no ``except Exception`` in library code swallows it;
* every **later** signal is only counted: the clean-up that the first one started (killing and reaping the
  engine's child, closing a Dask cluster, writing the partial report) is not interrupted half-way, which is
  what a second signal used to do (a traceback from the reaping code and exit 1);
* the exit code is the first signal's: 130 for SIGINT, 143 for SIGTERM (:func:`exit_code`).

A loop that runs many units of work calls :func:`check` between them, so a signal whose exception was lost
(e.g. inside a third-party ``except BaseException``) still stops the run at the next unit.

Work in a forked child (:mod:`qosbound.isolate`) runs with the default dispositions: a signal sent to the
process group ends it at once, even inside C++ (Storm) or numba's parallel threads, and the parent reaps it.

:data:`HOOKS` lets a test stop the run at a named stage deterministically: :func:`stage` calls each hook
with the stage's name (``"reap"`` while a child is being reaped, with its pid). No hook is set outside tests.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

from qosbound.errors import Interrupted

__all__ = ["Stopped", "handling", "received", "count", "check", "exit_code", "signal_name", "stopped", "stage",
           "HOOKS", "EXIT_INTERRUPT", "EXIT_TERMINATED"]

EXIT_INTERRUPT = 130
EXIT_TERMINATED = 143

#: The signals a run ends on, and their exit codes.
CODES = {signal.SIGINT: EXIT_INTERRUPT, signal.SIGTERM: EXIT_TERMINATED}

#: Functions called as ``hook(stage, **info)`` at named stages (tests only; see the module docstring).
HOOKS: list = []


class Stopped(BaseException):
    """Raised in the main thread by the first SIGINT / SIGTERM of a run (see the module docstring)."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signal_name(signum))

    @property
    def exit_code(self) -> int:
        return CODES.get(self.signum, EXIT_TERMINATED)


_state = {"active": False, "signal": None, "count": 0, "raised": False}


def signal_name(signum: int | None) -> str:
    """'SIGINT', 'SIGTERM' (or 'signal N')."""
    if signum is None:
        return "no signal"
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _handler(signum, frame):
    _state["count"] += 1
    if _state["signal"] is None:
        _state["signal"] = signum
    if not _state["raised"]:
        _state["raised"] = True
        raise Stopped(_state["signal"])
    # a later signal: counted only, the clean-up goes on


@contextlib.contextmanager
def handling(program: bool = False):
    """Install the policy for the duration of the block (a no-op when it is already installed, or outside the
    main thread, where Python cannot set handlers). After the block the previous handlers are restored; for
    the ``qosbound`` program itself (``program``) a signal arriving after the work ended (while the
    interpreter exits) ends the process at once with the signal's exit code instead of a traceback."""
    if _state["active"] or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {}
    _state.update(active=True, signal=None, count=0, raised=False)
    try:
        for sig in CODES:
            try:
                old[sig] = signal.signal(sig, _handler)
            except (ValueError, OSError):  # pragma: no cover - not the main thread, or no such signal
                pass
        yield
    finally:
        for sig, h in old.items():
            try:
                signal.signal(sig, _late if program else (h if h is not None else signal.SIG_DFL))
            except (ValueError, OSError, TypeError):  # pragma: no cover
                pass
        _state["active"] = False


def _late(signum, frame):  # pragma: no cover - runs while the interpreter exits
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(CODES.get(signum, EXIT_TERMINATED))


def active() -> bool:
    """Whether the policy is installed."""
    return _state["active"]


def received() -> int | None:
    """The first signal of this run, or None."""
    return _state["signal"]


def count() -> int:
    """How many signals this run received."""
    return _state["count"]


def check() -> None:
    """Raise :class:`Stopped` again when a signal arrived (between units of work; see the module docstring)."""
    if _state["signal"] is not None:
        raise Stopped(_state["signal"])


def exit_code(default: int = EXIT_TERMINATED) -> int:
    """130 when the run's first signal was SIGINT, 143 for SIGTERM; ``default`` when none arrived."""
    sig = _state["signal"]
    return CODES.get(sig, default) if sig is not None else default


def stopped(what: str, partial=None, signum: int | None = None) -> Interrupted:
    """The error of a run stopped by a signal (the run's first, else ``signum``, else SIGTERM): "terminated
    (SIGTERM): WHAT stopped", exit 130 / 143, carrying ``partial`` (what was done)."""
    sig = received() or signum or signal.SIGTERM
    word = "interrupted" if sig == signal.SIGINT else "terminated"
    return Interrupted(f"{word} ({signal_name(sig)}): {what} stopped", CODES.get(sig, EXIT_TERMINATED), partial)


def stage(name: str, **info) -> None:
    """Tell the test hooks (if any) that the run reached ``name``."""
    for hook in list(HOOKS):
        hook(name, **info)
