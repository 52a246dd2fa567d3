"""Run engine work (Storm builds and solves, simulations) in a forked child process.

Storm's C++ code does not return to the Python interpreter while it builds or
solves a model, so a SIGINT is only acted on when it finishes (minutes, or
never); it can also exhaust memory (``std::bad_alloc``) or die of a signal
(SIGFPE on ``const double p = 0/0``), taking the whole process with it and
printing nothing. :func:`run_isolated` runs a callable in a child forked from
this process and waits for it in a loop that stays responsive:

* SIGINT / SIGTERM in the parent kill the child at once and raise
  :class:`~qosbound.errors.Interrupted` (exit 130 / 143) carrying the last partial value the child reported
  (:meth:`qosbound.progress.Progress.partial`); the signal policy is :mod:`qosbound.interrupts` (a second
  signal while the child is being reaped is counted, not raised). Signals are blocked across ``fork`` and the
  child takes the default dispositions before it unblocks them, so a signal to the process group ends the
  child at once (inside Storm's C++ or numba's parallel threads too) and never runs the parent's handler in
  the child;
* an optional address-space limit (``RLIMIT_AS``) in the child turns a runaway
  build into a :class:`~qosbound.errors.ResourceError` (as does a
  ``MemoryError``, a ``std::bad_alloc`` or the kernel's OOM killer);
* a child that dies of a signal becomes one :class:`~qosbound.errors.QosboundError`
  naming the signal (the factory ``on_crash`` chooses the type and words);
* any other exception in the child comes back: a
  :class:`~qosbound.errors.QosboundError` as itself, anything else as an
  :class:`~qosbound.errors.InternalError` carrying the child's traceback.

The child's C-level standard output and error (Storm's ``ERROR``/``WARN`` log
lines) go to a temporary file, unless ``passthrough`` is set; the last lines
are attached to crash messages. Progress reported by the child through the
:class:`~qosbound.progress.Progress` interface is relayed to the parent's bar.
Results travel back pickled (the dataclasses of :mod:`qosbound.results` are).
Where ``fork`` is unavailable (not POSIX), or once this process runs numba's
GNU OpenMP threads (which a forked child cannot use; the CLI never starts
them in the parent), the callable runs in-process.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import struct
import sys
import tempfile
import time
import traceback
from typing import Any, Callable

from qosbound import interrupts
from qosbound.progress import report_partial, report_partial_items, report_status
from qosbound.errors import InternalError, QosboundError, ResourceError

__all__ = ["run_isolated", "memory_error", "describe_signal"]

_HDR = struct.Struct("!Q")


def describe_signal(sig: int) -> str:
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = f"signal {sig}"
    what = {signal.SIGFPE: "an arithmetic fault, e.g. a division by zero",
            signal.SIGSEGV: "a memory access fault", signal.SIGABRT: "an abort",
            signal.SIGKILL: "killed, usually by the kernel when memory runs out",
            signal.SIGBUS: "a bus error"}.get(sig)
    return f"{name} ({what})" if what else name


def memory_error(what: str, limit: int | None, how: str = "") -> ResourceError:
    lim = f" under the limit of {limit / 2**30:.3g} GiB (--max-memory)" if limit else ""
    return ResourceError(f"{what}: out of memory{lim}{how}; make the model or simulation smaller, or allow "
                         "more memory")


def _looks_like_memory(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    text = str(exc)
    # "failed to map segment": the dynamic loader could not map a shared library (mmap refused under RLIMIT_AS)
    return ("bad_alloc" in text or "Cannot allocate memory" in text or "out of memory" in text.lower()
            or "failed to map segment" in text)


class _ChildProgress:
    """The Progress interface inside the child: tasks and advances sent to the parent, batched."""

    def __init__(self, send):
        self._send = send
        self._n = 0
        self._pending: dict[int, float] = {}
        self._last = 0.0

    def task(self, description: str, total: float | None = None):
        self._n += 1
        tid = self._n
        self._send(("task", tid, description, total))

        def advance(n=1):
            self._pending[tid] = self._pending.get(tid, 0) + n
            now = time.monotonic()
            if now - self._last > 0.1:
                self.flush()
                self._last = now

        return advance

    def flush(self):
        for tid, n in self._pending.items():
            self._send(("adv", tid, n))
        self._pending.clear()

    def status(self, text: str, eta: float | None = None) -> None:
        self.flush()
        self._send(("status", text, eta))

    def partial(self, value) -> None:
        self.flush()
        self._send(("partial", value))

    def partial_items(self, items: dict) -> None:
        self.flush()
        self._send(("partial_items", items))


def _write_msg(fd: int, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HDR.pack(len(data)) + data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _child(fn, args, kwargs, wfd: int, memory_limit: int | None, log_fd: int | None, wants_progress: bool,
           mask, ignored):
    # Default dispositions: the parent decides about interrupts and kills us; a signal reaching the whole process
    # group (a terminal's Ctrl-C, CI's cancellation) ends the child at once even inside C++ code or numba's
    # threads. The signals are still blocked (since before the fork): take the defaults, then unblock them.
    for sig in _SIGNALS:
        if sig not in ignored:  # keep an ignored signal ignored (e.g. background jobs)
            signal.signal(sig, signal.SIG_DFL)
    if mask is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    code = 0
    try:
        import faulthandler

        if faulthandler.is_enabled():  # the parent reports a crash in one line; no dump from here
            faulthandler.disable()
        if log_fd is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(log_fd, 1)
            os.dup2(log_fd, 2)
        if memory_limit:
            import resource

            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            lim = memory_limit if hard == resource.RLIM_INFINITY else min(memory_limit, hard)
            resource.setrlimit(resource.RLIMIT_AS, (lim, hard))
        send = lambda m: _write_msg(wfd, m)  # noqa: E731
        if log_fd is None:
            _relay_python_streams(send)
        prog = _ChildProgress(send) if wants_progress else None
        if prog is not None:
            kwargs = dict(kwargs, progress=prog)
        try:
            value = fn(*args, **kwargs)
        finally:
            if prog is not None:
                prog.flush()
        msg = ("ok", value)
        try:
            _write_msg(wfd, msg)
        except (pickle.PicklingError, TypeError, AttributeError) as e:
            _write_msg(wfd, ("internal", f"the result cannot be sent back ({e.__class__.__name__}: {e})",
                             traceback.format_exc()))
    except BaseException as e:  # noqa: BLE001 - everything must reach the parent
        try:
            if _looks_like_memory(e):
                _write_msg(wfd, ("memory", str(e)))
            elif isinstance(e, QosboundError):
                try:
                    pickle.loads(pickle.dumps(e))
                    _write_msg(wfd, ("error", e))
                except Exception:  # noqa: BLE001
                    _write_msg(wfd, ("error", QosboundError(str(e))))
            else:
                _write_msg(wfd, ("internal", f"{e.__class__.__name__}: {e}", traceback.format_exc()))
        except BaseException:  # noqa: BLE001 - e.g. the pipe is gone: the parent has left
            code = 1
    finally:
        try:
            os.close(wfd)
        except OSError:
            pass
        os._exit(code)


class _Relay:
    """A text stream of the child that sends what is written to the parent's stream of the same name."""

    def __init__(self, send, name):
        self._send, self._name = send, name

    def write(self, text):
        if text:
            self._send(("write", self._name, text))
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False


def _relay_python_streams(send) -> None:
    """Output passed through: where Python's stdout/stderr is not the process's file descriptor (e.g. captured
    in memory by a test harness), what the child prints is relayed to the parent's stream instead of lost."""
    for name, fd in (("stdout", 1), ("stderr", 2)):
        stream = getattr(sys, name)
        try:
            real = stream.fileno() == fd
        except (AttributeError, OSError, ValueError):
            real = False
        if not real:
            setattr(sys, name, _Relay(send, name))


def _tail(path: str | None, lines: int = 3) -> str:
    if not path:
        return ""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 4096))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    keep = [x.strip() for x in text.splitlines() if x.strip()][-lines:]
    return " | ".join(keep)


def run_isolated(fn: Callable[..., Any], *args, what: str = "the engine", memory_limit: int | None = None,
                 progress=None, passthrough: bool = False,
                 on_crash: Callable[[str], QosboundError] | None = None, **kwargs) -> Any:
    """Return ``fn(*args, **kwargs)`` computed in a forked child (see the module docstring).

    ``what`` names the work in messages ("model check of m.prism"); ``progress`` (a
    :class:`~qosbound.progress.Progress`) is replaced by a relay and passed to ``fn`` as ``progress=``;
    ``memory_limit`` is an address-space limit in bytes; ``passthrough`` leaves the child's standard
    output and error alone (otherwise they are kept in a temporary file and only their tail is shown in a
    crash message); ``on_crash(text)`` builds the error for a child killed by a signal.
    """
    if not hasattr(os, "fork") or not _fork_safe():
        # Non-POSIX, or this process already runs GNU OpenMP threads (numba's 'omp' layer, after a parallel
        # simulation in-process, as in a test session): a forked child could not use them. Run here instead.
        if progress is not None:
            kwargs = dict(kwargs, progress=progress)
        with interrupts.handling():
            try:
                return fn(*args, **kwargs)
            except (interrupts.Stopped, KeyboardInterrupt) as e:
                raise _stopped(what, getattr(progress, "partial_value", None),
                               getattr(e, "signum", signal.SIGINT)) from None
    log_path = None
    log_fd = None
    if not passthrough:
        fd, log_path = tempfile.mkstemp(prefix="qosbound-engine-", suffix=".log")
        log_fd = fd
    with interrupts.handling():
        return _fork_and_wait(fn, args, kwargs, what, memory_limit, progress, log_fd, log_path, on_crash)


#: The signals that end a run (:mod:`qosbound.interrupts`).
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _fork_and_wait(fn, args, kwargs, what, memory_limit, progress, log_fd, log_path, on_crash):
    rfd, wfd = os.pipe()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    ignored = {sig for sig in _SIGNALS if signal.getsignal(sig) is signal.SIG_IGN}
    # Block the signals across the fork: the child must not run this process's handler (which raises) before it
    # has taken the default dispositions. A signal arriving meanwhile stays pending and is delivered at the
    # unblocking below: in the parent inside the try (the child is killed), in the child to SIG_DFL (it ends).
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS) if hasattr(signal, "pthread_sigmask") else None
    pid = -1
    waiting = False  # from here on _wait reaps the child
    try:
        try:
            pid = os.fork()
        finally:
            if pid != 0 and mask is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if pid == 0:  # pragma: no cover - runs in the child (its coverage is not collected)
            os.close(rfd)
            _child(fn, args, kwargs, wfd, memory_limit, log_fd, progress is not None, mask, ignored)
        os.close(wfd)
        wfd = -1
        if log_fd is not None:
            os.close(log_fd)
            log_fd = None
        waiting = True
        return _wait(pid, rfd, what, memory_limit, progress, log_path, on_crash)
    except (interrupts.Stopped, KeyboardInterrupt) as e:
        if pid > 0 and not waiting:  # a signal delivered between the fork and the wait: end the child too
            state = {"partial": None, "buf": bytearray(), "tasks": {}}
            try:
                _drain(rfd, progress, state)  # what the child already sent still counts as done
                _kill(pid)
            except (interrupts.Stopped, KeyboardInterrupt):  # pragma: no cover - held while reaping
                pass
            raise _stopped(what, state["partial"], getattr(e, "signum", signal.SIGINT)) from None
        raise
    except BaseException:
        if pid > 0 and not waiting:
            _kill(pid)
        raise
    finally:
        for fd in (rfd, wfd, log_fd):
            if fd is not None and fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        if log_path:
            try:
                os.unlink(log_path)
            except OSError:
                pass


def _fork_safe() -> bool:
    """False once numba's GNU OpenMP threading layer is running in this process (it aborts a forked child)."""
    nb = sys.modules.get("numba")
    if nb is None:
        return True
    try:
        layer = nb.threading_layer()
    except ValueError:  # no parallel region has run yet
        return True
    return layer != "omp"


def _kill(pid: int) -> None:
    """Kill the child and reap it. A signal arriving meanwhile (the second of CI's cancellation, a second
    Ctrl-C) must not leave the child unreaped nor escape as a traceback: the policy of
    :mod:`qosbound.interrupts` only counts it; a first one is held until the child is reaped, then raised."""
    held = None
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except interrupts.Stopped as e:  # pragma: no cover - the signal arrived exactly here
        held = e
        os.kill(pid, signal.SIGKILL)
    hooked = False
    while True:
        try:
            if not hooked:
                hooked = True
                interrupts.stage("reap", pid=pid)
            os.waitpid(pid, 0)
            break
        except ChildProcessError:
            break
        except (interrupts.Stopped, KeyboardInterrupt) as e:
            held = held or e
    if held is not None:
        raise held


def _stopped(what: str, partial, signum: int | None = None):
    """The error of a run stopped by a signal (the run's first, else ``signum``), with the partial value."""
    return interrupts.stopped(what, partial, signum)


def _wait(pid, rfd, what, memory_limit, progress, log_path, on_crash):
    """The child's answer (or its error) once it has ended and been reaped. A signal at any point kills the
    child if it is still there and becomes one :class:`Interrupted` with the last partial value it sent."""
    state = {"reaped": False, "partial": None, "buf": bytearray(), "tasks": {}}
    try:
        messages, status = _read(pid, rfd, progress, state)
        return _answer(messages, status, what, memory_limit, log_path, on_crash, state["partial"])
    except (interrupts.Stopped, KeyboardInterrupt) as e:
        if not state["reaped"]:
            try:
                _drain(rfd, progress, state)  # what the child sent before the signal still counts as done
                _kill(pid)
            except (interrupts.Stopped, KeyboardInterrupt):  # pragma: no cover - held while reaping
                pass
        raise _stopped(what, state["partial"], getattr(e, "signum", signal.SIGINT)) from None
    except BaseException:
        if not state["reaped"]:
            _kill(pid)
        raise


def _read(pid, rfd, progress, state) -> tuple[list, int]:
    """Relay the child's messages until it closes the pipe, then reap it: (its final messages, wait status)."""
    messages: list = []
    tick = getattr(progress, "tick", None)
    while True:
        ready, _, _ = select.select([rfd], [], [], 0.2)
        if tick is not None:
            tick()
        if not ready:
            continue
        with _signals_held():  # a message read is a message handled: a signal raises only after it
            chunk = os.read(rfd, 1 << 20)
            if chunk:
                _handle(chunk, progress, state, messages)
        if not chunk:
            break
    _, status = os.waitpid(pid, 0)
    state["reaped"] = True
    return messages, status


@contextlib.contextmanager
def _signals_held():
    """SIGINT and SIGTERM held (pending) for the duration of the block, delivered after it."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _drain(rfd, progress, state) -> None:
    """Read what the child has already written (without waiting): its last partial value counts."""
    messages: list = []
    while select.select([rfd], [], [], 0)[0]:
        chunk = os.read(rfd, 1 << 20)
        if not chunk:
            break
        _handle(chunk, progress, state, messages)


def _handle(chunk: bytes, progress, state, messages: list) -> None:
    """Decode the complete messages in the buffer; relay progress, output and partial values."""
    buf = state["buf"]
    tasks: dict[int, Callable] = state["tasks"]
    buf += chunk
    while len(buf) >= _HDR.size:
        (n,) = _HDR.unpack_from(buf)
        if len(buf) < _HDR.size + n:
            break
        msg = pickle.loads(bytes(buf[_HDR.size:_HDR.size + n]))
        del buf[:_HDR.size + n]
        if msg[0] == "task":
            if progress is not None:
                tasks[msg[1]] = progress.task(msg[2], msg[3])
        elif msg[0] == "adv":
            if msg[1] in tasks:
                tasks[msg[1]](msg[2])
        elif msg[0] == "write":
            getattr(sys, msg[1]).write(msg[2])
        elif msg[0] == "partial":
            state["partial"] = msg[1]
            report_partial(progress, msg[1])
        elif msg[0] == "partial_items":  # finished entries of a mapping (Progress.partial_items)
            if not isinstance(state["partial"], dict):
                state["partial"] = {}
            state["partial"].update(msg[1])
            report_partial_items(progress, msg[1], state["partial"])
        elif msg[0] == "status":
            report_status(progress, msg[1], msg[2])
        else:
            messages.append(msg)


def _answer(messages, status, what, memory_limit, log_path, on_crash, partial):
    """The value the child sent, or the error it sent or died of."""
    for msg in messages:
        kind = msg[0]
        if kind == "ok":
            return msg[1]
        if kind == "error":
            raise msg[1]
        if kind == "memory":
            raise memory_error(what, memory_limit)
        if kind == "internal":
            raise InternalError(f"{what} failed unexpectedly: {msg[1]}", msg[2])
    # No answer: the child died.
    log = _tail(log_path)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGKILL:
            raise memory_error(what, memory_limit, " (killed with SIGKILL)")
        if memory_limit and sig in (signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS):
            # Under an address-space limit a failed allocation often ends C++ code this way.
            raise memory_error(what, memory_limit, f" (it crashed with {signal.Signals(sig).name}, the usual end of "
                                                   "a failed allocation there)")
        if sig in _SIGNALS:  # the child ended by a signal to the process group (this process has it too)
            raise _stopped(what, partial, sig)
        text = f"{what} crashed with {describe_signal(sig)}" + (f"; last output: {log}" if log else "")
        raise on_crash(text) if on_crash else InternalError(text)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    raise InternalError(f"{what} ended without an answer (exit status {code})"
                        + (f"; last output: {log}" if log else ""))
