"""``plan`` and ``verify`` over many scenarios at once: several files, a folder (one router's ports) or a glob.

Each scenario is loaded and checked here (a file that cannot be loaded is a row of its own, with its one-line
error, and the others still run), then evaluated by the sweep's executor (:mod:`qosbound.sweep.execute`): one
after another in one isolated child by default, on a local Dask cluster with ``--workers N``, or on the
cluster at ``--scheduler ADDRESS``. Every scenario is evaluated as ``plan`` evaluates one file (the same
methods, the scenario's own seed, a model above its state budget skipped with the reason), so a batch row
says what the single command says. Nothing is cached: a CI run really evaluates.

The batch's exit code is the most serious of its scenarios' (:data:`SEVERITY`): 70 an internal error, then 2
bad input, 4 a resource limit, 1 an SLO violated, 3 methods disagree, 0. A scenario that gave no verdict (it
could not be loaded or evaluated) ranks above one that gave a failing verdict, because its SLOs were not
checked at all; a violated SLO ranks above a disagreement, as in :func:`qosbound.verdicts.exit_code`.
"""

from __future__ import annotations

import glob
import os
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from qosbound import interrupts
from qosbound.errors import (EXIT_INTERNAL, EXIT_RESOURCE, InternalError, Interrupted, QosboundError,
                             ScenarioError)
from qosbound.progress import progress
from qosbound.verdicts import EXIT_DISAGREE, EXIT_INPUT, EXIT_OK, EXIT_SLO

__all__ = ["Entry", "SEVERITY", "batch_exit_code", "evaluate_scenario", "expand", "guarded_record", "is_batch", "main", "run"]

#: Exit codes from the most to the least serious: the batch exits with the first that any scenario has.
SEVERITY = (EXIT_INTERNAL, EXIT_INPUT, EXIT_RESOURCE, EXIT_SLO, EXIT_DISAGREE, EXIT_OK)

#: File names read from a folder.
SUFFIXES = (".yaml", ".yml")

_MAGIC = set("*?[")


def batch_exit_code(codes) -> int:
    """The most serious of ``codes`` by :data:`SEVERITY` (a code it does not list ranks first); 0 for none."""
    codes = list(codes)
    for code in codes:
        if code not in SEVERITY:
            return code
    return min(codes, key=SEVERITY.index, default=EXIT_OK)


def _is_glob(arg: str) -> bool:
    return bool(_MAGIC & set(arg)) and not Path(arg).exists()


def is_batch(args: list[str]) -> bool:
    """A folder, a glob pattern, or arguments naming more than one file: the batch form of the command (a file
    named twice is the single-file form, as it runs once)."""
    from qosbound.shipped import resolve_folder, resolve_scenario

    args = [resolve_folder(a) for a in args]
    if any(Path(a).is_dir() or _is_glob(a) for a in args):
        return True
    # os.path.realpath, not Path.resolve: a symlink loop is then refused by the reader (exit 2), not raised here
    return len({os.path.realpath(resolve_scenario(a)) for a in args}) != 1


def expand(args: list[str]) -> list[str]:
    """The scenario files the arguments name, in order, each once: a file as given (or the shipped example of
    that name), a folder's ``*.yaml``/``*.yml`` files sorted by name, a glob pattern's matches sorted. A folder
    with no scenario file or a pattern matching nothing is refused (exit 2): it names nothing to run. A shipped
    folder of examples may be named as a shipped example is (``edge-router``, ``examples/edge-router``)."""
    from qosbound.shipped import resolve_folder, resolve_scenario

    out: list[str] = []
    seen: set[str] = set()
    for arg in map(resolve_folder, args):
        if Path(arg).is_dir():
            files = sorted(str(p) for p in Path(arg).iterdir() if p.suffix in SUFFIXES and p.is_file())
            if not files:
                raise ScenarioError(f"'{arg}' is a directory with no scenario files ({', '.join(SUFFIXES)})")
        elif _is_glob(arg):
            files = sorted(f for f in glob.glob(arg) if not Path(f).is_dir())
            if not files:
                raise ScenarioError(f"no file matches the pattern '{arg}'")
        else:
            files = [resolve_scenario(arg)]
        for f in files:
            ident = os.path.realpath(f)
            if ident not in seen:
                seen.add(ident)
                out.append(f)
    return out


@dataclass
class Entry:
    """One scenario of a batch: where it came from, and its evaluation or the error that stopped it."""

    file: str
    name: str  # the scenario's name, or the file's stem when it did not load
    system: str = ""
    results: list = field(default_factory=list)
    slos: list = field(default_factory=list)
    agreements: list = field(default_factory=list)
    seconds: dict = field(default_factory=dict)  # per method
    skipped: dict = field(default_factory=dict)
    error: QosboundError | None = None
    wall: float = 0.0  # seconds to load, evaluate and judge it
    suite: str = ""  # its name in the reports, unique in the batch
    unfinished: bool = False  # a signal stopped the batch before this scenario was evaluated
    inputs: object = None  # its inputs as understood (qosbound.understood.Inputs), once it loaded

    @property
    def exit_code(self) -> int:
        from qosbound.verdicts import exit_code

        if self.unfinished:
            return interrupts.exit_code()
        return self.error.exit_code if self.error is not None else exit_code(self.slos + self.agreements)


def _located(e: QosboundError, file: str) -> QosboundError:
    if isinstance(e, ScenarioError) and e.file is None and not (e.field or "").startswith("--"):
        return e.located(file=file)
    return e


def _prepare(file: str, args, *, verify: bool) -> tuple[Entry, dict | None]:
    """Load and check one file here: (its entry, the task for the executor) or (an entry with its error,
    None)."""
    from qosbound.cli import _with_max_states, understood
    from qosbound.scenario import get_path, load

    t0 = time.perf_counter()
    # a port imported from a configuration is labelled FILE#INTERFACE (qosbound.configs_cli)
    head, sep, tail = file.partition("#")
    entry = Entry(file=file, name=f"{Path(head).name}#{tail}" if sep else Path(file).stem)
    try:
        scn = load(file)
        entry.name, entry.system = scn.name, scn.system
        if getattr(args, "max_states", None) is not None:
            try:
                get_path(scn.raw, "methods.model-checked")
            except ScenarioError:  # a system without a model: the budget does not concern it
                pass
            else:
                scn = _with_max_states(args, scn)
        if verify and not scn.slos:
            raise QosboundError(f"{file}: field 'slos': the scenario declares no SLOs to verify")
        entry.inputs = understood(scn)
    except Interrupted:
        raise
    except QosboundError as e:
        entry.error, entry.wall = _located(e, file), time.perf_counter() - t0
        return entry, None
    return entry, {"raw": scn.raw, "path": scn.path}


def guarded_record(path: str, what: str, work) -> dict:
    """``{'status': 'ok', **work(), 'wall': seconds}``, or the record of the error that stopped ``work``: a
    qosbound error located in ``path``, an exhausted memory (``what`` says doing what), or any other exception
    as an internal error with its traceback -- a failure on one scenario must not lose the others'."""
    import traceback

    from qosbound.isolate import memory_error

    t0 = time.perf_counter()
    try:
        out = work()
    except Interrupted:
        raise
    except QosboundError as e:
        return {"status": "error", "error": _located(e, path), "wall": time.perf_counter() - t0}
    except MemoryError:
        return {"status": "error", "error": memory_error(f"{what} {path}", None), "wall": time.perf_counter() - t0}
    except Exception as e:  # noqa: BLE001
        return {"status": "error", "wall": time.perf_counter() - t0,
                "error": InternalError(f"{path}: {e.__class__.__name__}: {e}", traceback.format_exc())}
    return {"status": "ok", **out, "wall": time.perf_counter() - t0}


def evaluate_scenario(task: dict, _path, asked: list[str] | None) -> dict:
    """Evaluate one prepared scenario as ``plan`` does (in the executor's child or a Dask worker); a record
    {'status': 'ok' | 'error', ...} holding the results and verdicts, or the error."""

    def work() -> dict:
        from qosbound.agreement import agreements
        from qosbound.cli import _evaluate_methods, engine_output_to_stderr
        from qosbound.progress import QUIET
        from qosbound.scenario import build
        from qosbound.systems import get_system
        from qosbound.verdicts import judge_slos

        scn = build(task["raw"], task["path"])
        system = get_system(scn.system)
        methods = list(asked or system.default_methods(scn))
        with engine_output_to_stderr():
            results, seconds, skipped = _evaluate_methods(system, scn, methods, QUIET,
                                                          optional=() if asked else tuple(methods))
        slos = judge_slos(system, scn, results)
        agree = agreements(results) + system.agreements(scn, results)
        return {"results": results, "slos": slos, "agreements": agree, "seconds": seconds, "skipped": skipped}

    return guarded_record(task["path"], "evaluating", work)


def prepare_all(files: list[str], prepare, entry_type) -> tuple[list[tuple], Interrupted | None, str]:
    """``prepare(file)`` for each file in turn: (the prepared (entry, task) pairs, the interruption that
    stopped the loading or None, where the work ran: '-'). Files a signal left unread are entries marked not
    finished, so the batch's report still names every file."""
    prepared: list[tuple] = []
    try:
        for f in files:
            prepared.append(prepare(f))
    except (Interrupted, interrupts.Stopped) as e:
        stop = e if isinstance(e, Interrupted) else interrupts.stopped("loading the scenarios")
        for f in files[len(prepared):]:
            prepared.append((entry_type(file=f, name=Path(f).stem, unfinished=True), None))
        return prepared, stop, "-"
    return prepared, None, "-"


def _unique_suites(entries: list[Entry]) -> None:
    """Give each entry a report name unique in the batch: its scenario name, with the file's stem when two
    scenarios share a name, and a number when that is still not enough."""
    from collections import Counter

    names = Counter(e.name for e in entries)
    taken: set[str] = set()
    for e in entries:
        # a port imported from a configuration is labelled FILE#INTERFACE: the configuration's file name tells it
        stem = Path(e.file.split("#", 1)[0]).name if "#" in e.file else Path(e.file).stem
        base = e.name if names[e.name] == 1 else f"{e.name}@{stem}"
        name, k = base, 1
        while name in taken:
            k += 1
            name = f"{base}#{k}"
        taken.add(name)
        e.suite = name


def _executor(workers: int, scheduler: str | None) -> bool:
    """Whether to use Dask: with a scheduler, or more than one worker and distributed installed."""
    if scheduler:
        return True
    if workers <= 1:
        return False
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("qosbound: note: Dask's distributed is not installed; running the scenarios one after another",
              file=sys.stderr)
        return False
    return True


def _fill_evaluation(entry: Entry, rec: dict) -> None:
    entry.results, entry.slos, entry.agreements = rec["results"], rec["slos"], rec["agreements"]
    entry.seconds, entry.skipped = rec["seconds"], rec["skipped"]


def run(entries_tasks: list[tuple], asked, *, workers: int = 1, scheduler: str | None = None,
        show_progress: bool | None = None, command: str = "verify", evaluate=None, fill=None) -> str:
    """Evaluate every prepared entry on the executor, filling it in place; the executor's description.

    ``evaluate(task, path, asked)`` computes a record in the child or worker (default
    :func:`evaluate_scenario`), ``fill(entry, record)`` copies a successful one into the entry (default: the
    results and verdicts); an error record sets ``entry.error``, and every record sets ``entry.wall``."""
    evaluate = evaluate or evaluate_scenario
    fill = fill or _fill_evaluation
    from qosbound.sweep.cache import Cache
    from qosbound.sweep.execute import run_dask, run_serial

    run_id = uuid.uuid4().hex[:12]
    tasks = [(f"{command}-{run_id}-{i}", task) for i, (_, task) in enumerate(entries_tasks) if task is not None]
    dask = _executor(workers, scheduler)
    where = (f"the Dask cluster at {scheduler}" if scheduler else
             f"{workers} Dask workers" if dask else "one child process")
    if not tasks:
        return where
    label = f"{command}: {len(tasks)} scenarios"
    stopped = None
    with progress(False if show_progress is False else None) as prog:
        try:
            if dask:
                got = run_dask(tasks, None, asked, Cache(None), prog, workers=workers, scheduler=scheduler,
                               evaluate=evaluate, label=label)
            else:
                got = run_serial(tasks, None, asked, Cache(None), prog, evaluate=evaluate, label=label)
        except (Interrupted, interrupts.Stopped) as e:
            # the scenarios that finished before the signal are reported; the others are marked not finished
            stopped = e
            got = getattr(e, "partial", None) or prog.partial_value or {}
    for i, (entry, task) in enumerate(entries_tasks):
        if task is None:
            continue
        rec = got.get(f"{command}-{run_id}-{i}")
        if rec is None:
            entry.unfinished = True
            continue
        entry.wall = rec["wall"]
        if rec["status"] == "ok":
            fill(entry, rec)
        else:
            entry.error = rec["error"]
    if stopped is not None:
        if isinstance(stopped, Interrupted):
            raise stopped
        raise interrupts.stopped(label) from None
    return where


def document(entry: Entry, verify: bool) -> dict:
    """One scenario's ``--json`` document: the single-file command's, with ``seconds`` and ``suite`` (its name in
    the reports, unique in the batch); for a scenario that could not be evaluated, its file, error and exit
    code."""
    from qosbound.report import json_document

    if entry.unfinished:
        return {"scenario": entry.name, "file": entry.file, "system": entry.system or None, "complete": False,
                "exit_code": entry.exit_code}
    if entry.error is not None:
        return {"scenario": entry.name, "suite": entry.suite, "file": entry.file, "system": entry.system or None,
                "error": str(entry.error), "exit_code": entry.exit_code, "seconds": round(entry.wall, 3)}
    results, verdicts, extra = doc_parts(entry, verify)
    doc = json_document(entry.name, results, verdicts, extra, curves_of=entry.results)
    doc["suite"] = entry.suite
    doc["seconds"] = round(entry.wall, 3)
    return doc


def doc_parts(entry: Entry, verify: bool) -> tuple[list, list, dict]:
    """(results, verdicts, extra keys) of one evaluated scenario's JSON document, as ``plan``/``verify`` print
    it for a single file."""
    from qosbound.report import slo_counts

    verdicts = entry.slos + entry.agreements
    code = entry.exit_code
    inputs = entry.inputs.to_json() if entry.inputs is not None else None
    if not verify:
        return entry.results, verdicts, {"system": entry.system, "file": entry.file, "inputs": inputs,
                                         "exit_code": code, "skipped": entry.skipped, "complete": True}
    results = [r for r in entry.results if any(r.metric == v.metric for v in entry.slos)]
    return results, verdicts, {"system": entry.system, "file": entry.file, "inputs": inputs, "ok": code == EXIT_OK,
                               "slos_hold": not any(v.failed for v in entry.slos),
                               "slo_counts": slo_counts(entry.slos),
                               "methods_agree": not any(v.disagrees for v in entry.agreements), "exit_code": code,
                               "skipped": entry.skipped, "complete": True}


def _counts(entries: list[Entry]) -> dict:
    codes = [e.exit_code for e in entries]
    return {"scenarios": len(entries), "pass": codes.count(EXIT_OK), "slo_violated": codes.count(EXIT_SLO),
            "methods_disagree": codes.count(EXIT_DISAGREE),
            "not_evaluated": sum(e.error is not None for e in entries),
            **({"not_finished": n} if (n := sum(e.unfinished for e in entries)) else {})}


def print_error(c, entry) -> None:
    """A batch entry's error under the summary table: its name, exit code and one-line error."""
    from rich.markup import escape

    c.print(f"[bold red]error[/] {escape(entry.suite)} (exit {entry.exit_code}): {escape(str(entry.error))}",
            highlight=False, soft_wrap=True)


def render_table(entries: list[Entry], where: str, seconds: float, code: int, out=None) -> None:
    """The batch summary: one row per scenario, then each failing SLO, disagreement and error, then totals."""
    from rich.markup import escape
    from rich.table import Table

    from qosbound.report import agreement_line, console, slo_counts, slo_line

    c = console(out)
    t = Table(title=f"qosbound: {len(entries)} scenarios", title_justify="left")
    for col, just in (("scenario", "left"), ("file", "left"), ("system", "left"), ("SLOs", "left"),
                      ("methods", "left"), ("skipped", "left"), ("exit", "right"), ("seconds", "right")):
        t.add_column(col, justify=just, overflow="fold")
    for e in entries:
        if e.unfinished:
            slos = methods = "[yellow]not finished (stopped by a signal)[/]"
        elif e.error is not None:
            slos = methods = "[red]not evaluated[/]"
        else:
            n = slo_counts(e.slos)  # per SLO, not per method verdict
            nf = n["fail"]
            nd = sum(v.disagrees for v in e.agreements)
            na = sum(v.status == "approximate" for v in e.agreements)
            slos = f"{n['hold']} hold, " + (f"[bold red]{nf} fail[/]" if nf else "0 fail")
            methods = (f"{len(e.agreements) - nd - na} agree, {na} approx., "
                       + (f"[bold red]{nd} disagree[/]" if nd else "0 disagree"))
        style = "green" if e.exit_code == EXIT_OK else "bold red"
        t.add_row(escape(e.suite), escape(e.file), e.system or "-", slos, methods,
                  escape(", ".join(e.skipped)) or "-", f"[{style}]{e.exit_code}[/]", f"{e.wall:.1f}")
    c.print(t)
    for e in entries:
        if e.error is not None:
            print_error(c, e)
            continue
        for v in e.slos:
            if v.failed:
                c.print(f"{escape(e.suite)}: {slo_line(v)}", highlight=False, soft_wrap=True)
        for v in e.agreements:
            if v.disagrees:
                c.print(f"{escape(e.suite)}: {agreement_line(v)}", highlight=False, soft_wrap=True)
        for m, why in e.skipped.items():
            c.print(f"[yellow]note[/] {escape(e.suite)}: {m} skipped: {escape(why)}", highlight=False, soft_wrap=True)
    n = _counts(entries)
    c.print(f"{n['scenarios']} scenarios in {seconds:.1f} s on {where}: {n['pass']} pass, {n['slo_violated']} "
            f"violate an SLO, {n['methods_disagree']} only disagree between methods, {n['not_evaluated']} not "
            f"evaluated" + (f", {n['not_finished']} not finished (incomplete)" if n.get("not_finished") else "")
            + f"; exit {code}", highlight=False, soft_wrap=True)


def write_junit(path: str, entries: list[Entry], stopped=None, html: str | None = None,
                per_slo: bool = False) -> None:
    """One JUnit report: each scenario's suites (``NAME.slo``, ``NAME.agreement``, ``NAME.methods``) or, when
    it could not be evaluated, ``NAME.input`` with one failing testcase; NAME is unique in the batch. When a
    signal (``stopped``) ended the batch, a scenario it did not finish is a ``NAME.slo`` suite marked
    incomplete with an error testcase naming the signal (:mod:`qosbound.incomplete`). ``html``: the link to the
    page (see :func:`qosbound.report.write_junit`). ``per_slo``: one testcase per SLO (its methods' verdicts in
    it) instead of one per verdict."""
    from qosbound.incomplete import incomplete_suites
    from qosbound.report import junit_error_suite, junit_suites, write_junit_batch

    groups = [incomplete_suites(e.suite, stopped) if e.unfinished
              else junit_error_suite(e.suite, e.error, e.wall, html) if e.error is not None
              else junit_suites(e.suite, e.slos + e.agreements, e.seconds, e.skipped, e.inputs, html,
                                per_slo=per_slo)
              for e in entries]
    write_junit_batch(path, "qosbound", groups)


def main(args, *, verify: bool) -> int:
    """``plan``/``verify`` over several scenarios (see the module docstring); the batch's exit code."""
    import json

    from qosbound.cli import _methods_arg
    from qosbound.model_cmd import max_states_budget
    from qosbound.sweep import _workers

    t0 = time.perf_counter()
    workers = _workers(args.workers)
    asked = _methods_arg(getattr(args, "methods", None))
    if getattr(args, "max_states", None) is not None:  # a bad value is refused once, before any file is read
        max_states_budget(args.max_states)
    files = expand(args.scenario)
    prepared, stopped, where = prepare_all(files, lambda f: _prepare(f, args, verify=verify), Entry)
    entries = [e for e, _ in prepared]
    _unique_suites(entries)
    if stopped is None:
        try:
            where = run(prepared, asked, workers=workers, scheduler=args.scheduler,
                        show_progress=None if not args.quiet else False, command="verify" if verify else "plan")
        except Interrupted as e:  # report what finished, marked incomplete, then exit with the signal's code
            stopped = e
    code = batch_exit_code(e.exit_code for e in entries) if stopped is None else interrupts.exit_code(
        stopped.exit_code)
    seconds = time.perf_counter() - t0
    from qosbound.cli import _html_link, write_pages

    if verify and getattr(args, "junit", None):
        write_junit(args.junit, entries, stopped, _html_link(args, args.junit),
                    per_slo=getattr(args, "per_slo", False))
    from qosbound.cli import _RUN

    if _RUN.get("debug"):
        for e in entries:
            if isinstance(e.error, InternalError) and e.error.details:
                print(e.error.details, file=sys.stderr, end="")
    doc = {"scenarios": [document(e, verify) for e in entries], "exit_code": code, "counts": _counts(entries),
           "seconds": round(seconds, 3), "executor": where, "complete": stopped is None}
    if stopped is not None:
        from qosbound.incomplete import interrupted_info

        doc["interrupted"] = interrupted_info(stopped, scenarios_not_finished=[e.suite for e in entries
                                                                               if e.unfinished])
    write_pages(args, doc, "verify" if verify else "plan")
    if args.json:
        print(json.dumps(doc, indent=2, allow_nan=False))
    else:
        render_table(entries, where, seconds, code)
    if stopped is not None:
        raise stopped
    return code

