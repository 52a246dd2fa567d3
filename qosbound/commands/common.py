"""What several commands share: reading their common arguments, checking the files they will write, the inputs
as understood, the ``--html``/``--markdown`` pages, and engine output kept off standard output.

This module imports no command module (and nothing of :mod:`qosbound.cli`): every command, the batch forms and
the executors import it, never the other way round.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from pathlib import Path

from qosbound import pages
from qosbound.errors import QosboundError, ScenarioError
from qosbound.results import METHODS
from qosbound.systems import get_system
from qosbound.units import parse_quantity

__all__ = ["check_output_dir", "check_output_file", "check_outputs", "engine_output_to_stderr", "html_link",
           "is_config", "max_states_budget", "memory_arg", "methods_arg", "names_configurations", "understood",
           "workers_arg", "write_pages"]


@contextlib.contextmanager
def engine_output_to_stderr():
    """Send file descriptor 1 to stderr while engines run: Storm's C++ code prints warnings on stdout,
    which would corrupt --json output. Python's own prints are unaffected once it is restored."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):  # no real stdout (e.g. captured in tests)
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        os.dup2(saved, 1)
        os.close(saved)


def methods_arg(text: str | None):
    """``--methods a,b``: the list of method names (each one known), or None when not given."""
    if text is None:
        return None
    out = [m.strip() for m in text.split(",") if m.strip()]
    for m in out:
        if m not in METHODS:
            raise QosboundError(f"--methods: unknown method '{m}'; expected one of {', '.join(METHODS)}")
    return out


def workers_arg(text) -> int:
    """``--workers N``: a number of worker processes, 1 to 1024."""
    try:
        n = int(text)
    except (TypeError, ValueError):
        raise ScenarioError(f"expected a number of worker processes, got '{text}'", field="--workers") from None
    if not 1 <= n <= 1024:
        raise ScenarioError(f"must be between 1 and 1024, got {n}", field="--workers")
    return n


def max_states_budget(value) -> float:
    """A ``--max-states`` budget as a number (refused unless finite and >= 1); ``model check``, ``plan`` and
    ``verify`` read it alike."""
    try:
        n = float(value)
    except (TypeError, ValueError):
        raise ScenarioError(f"cannot read {value!r} as a number of states", field="--max-states") from None
    if not n >= 1 or n == float("inf"):
        raise ScenarioError(f"must be a finite number >= 1, got {value!r}", field="--max-states")
    return n


def memory_arg(text) -> int:
    """``--max-memory SIZE`` in bytes (at least 64 MiB)."""
    x = parse_quantity(text, "size", field="--max-memory")
    if not x >= 2**26:
        raise ScenarioError(f"'{text}' is too small to run anything (at least 64 MiB)", field="--max-memory")
    return int(x)


#: Suffixes of scenario files: every other file named on the command line is read as a configuration.
SCENARIO_SUFFIXES = (".yaml", ".yml")


def is_config(arg) -> bool:
    """A command-line argument naming a configuration file: an existing file that is not a YAML scenario."""
    return isinstance(arg, str) and Path(arg).is_file() and Path(arg).suffix.lower() not in SCENARIO_SUFFIXES


def names_configurations(args) -> bool:
    """True when the command line names router configurations (a file that is not a YAML scenario, or
    ``--configs DIR``), which :mod:`qosbound.commands.router_configs` turns into scenarios. Without one,
    ``--traffic`` and ``--slos`` are refused, as is a command line naming no scenario at all."""
    scen = getattr(args, "scenario", None)
    items = [scen] if isinstance(scen, str) else list(scen or [])
    if any(is_config(a) for a in items) or getattr(args, "configs", None):
        return True
    if getattr(args, "traffic", None) or getattr(args, "slos", None):
        raise QosboundError("--traffic and --slos apply to router configurations: name a configuration file or "
                            "--configs DIR")
    if not items:
        raise QosboundError("name a scenario file, a router configuration, or --configs DIR")
    return False


def understood(scn):
    """The scenario's inputs as understood (:class:`qosbound.understood.Inputs`), which every report shows first."""
    return get_system(scn.system).understood_inputs(scn)


def write_pages(args, doc: dict, command: str) -> None:
    """``--html FILE`` and ``--markdown FILE``: the page and the summary of the command's JSON document."""
    html = getattr(args, "html", None)
    source = " ".join(args.scenario) if isinstance(args.scenario, list) else str(args.scenario)
    if html:
        pages.write_html(html, doc, command, source=source)
    if getattr(args, "markdown", None):
        pages.write_markdown(args.markdown, doc, command, html=pages.link_from(args.markdown, html) if html else None)


def html_link(args, report_path: str) -> str | None:
    """The link to the ``--html`` page from a report written at ``report_path`` (None without a page)."""
    return pages.link_from(report_path, args.html) if getattr(args, "html", None) else None


def check_output_file(path: str, flag: str) -> None:
    """Refuse a report file that cannot be written (missing folder, a folder, a full device, no permission)
    before any evaluation runs."""
    p = os.path.abspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise ScenarioError(f"cannot write '{path}': {e.strerror}", field=flag) from None
    if st is None:
        _probe_new_file(path, p, flag)
        return
    if stat.S_ISDIR(st.st_mode):
        raise ScenarioError(f"cannot write '{path}': it is a folder; give a file name", field=flag)
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode):  # writing would wait for a reader
        raise ScenarioError(f"cannot write '{path}': not a regular file (a FIFO or socket)", field=flag)
    if not os.access(p, os.W_OK):
        raise ScenarioError(f"cannot write '{path}': permission denied", field=flag)
    if stat.S_ISREG(st.st_mode):
        try:  # opened for appending: nothing is truncated or written
            with open(p, "ab"):
                pass
        except OSError as e:
            raise ScenarioError(f"cannot write '{path}': {e.strerror or e}", field=flag) from None
    if stat.S_ISCHR(st.st_mode):  # e.g. /dev/full: probe with one byte (harmless on /dev/null or a terminal)
        try:
            with open(p, "wb", buffering=0) as f:
                f.write(b"\n")
        except OSError as e:
            raise ScenarioError(f"cannot write '{path}': {e.strerror}", field=flag) from None


def _probe_new_file(path: str, p: str, flag: str) -> None:
    """A file that does not exist yet: its folder must exist, and a file must be creatable there."""
    parent = os.path.dirname(p)
    if not os.path.isdir(parent):
        raise ScenarioError(f"cannot write '{path}': the folder '{os.path.dirname(path) or '.'}' does not "
                            "exist", field=flag)
    try:  # a probe, not os.access: root passes that on /proc and on a read-only mount
        with open(p, "x"):
            pass
        os.unlink(p)
    except OSError as e:
        raise ScenarioError(f"cannot write '{path}': {e.strerror or e}", field=flag) from None


def check_output_dir(out: str, flag: str = "--out") -> None:
    """Refuse an output folder that cannot be created or written, before any work is done.

    Permission bits do not tell (root passes ``os.access`` on ``/proc`` and on a read-only mount), so the check
    is a probe: the missing folders are created, a file is created in the innermost one and removed, and the
    folders this check created are removed again (the command creates them when it writes).
    """
    p = Path(out)
    try:
        is_dir = p.is_dir()
        exists = is_dir or os.path.lexists(p)
    except OSError as e:  # e.g. a symlink loop on the way
        raise ScenarioError(f"cannot use '{out}': {e.strerror}", field=flag) from None
    if exists and not is_dir:
        raise ScenarioError(f"'{out}' exists and is not a folder", field=flag)
    created: list[Path] = []
    try:
        missing = []
        q = p
        while not q.is_dir():
            if os.path.lexists(q):
                raise ScenarioError(f"cannot create '{out}': '{q}' is not a folder", field=flag)
            missing.append(q)
            if q.parent == q:
                break
            q = q.parent
        for folder in reversed(missing):
            folder.mkdir()
            created.append(folder)
        fd, probe = tempfile.mkstemp(prefix=".qosbound-probe-", dir=p)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        what = "write into" if exists else "create"
        raise ScenarioError(f"cannot {what} '{out}': {e.strerror or e}", field=flag) from None
    finally:
        for folder in reversed(created):
            try:
                folder.rmdir()
            except OSError:
                pass


def check_outputs(args) -> None:
    """Every file or folder the command will write is checked for writability first."""
    for flag in ("junit", "html", "markdown"):
        if getattr(args, flag, None):
            check_output_file(getattr(args, flag), f"--{flag}")
    out = getattr(args, "out", None)
    if out and args.command in ("validate", "reproduce", "model"):
        check_output_dir(out, "--out")
