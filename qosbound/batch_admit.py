"""``admit`` over many scenarios at once: one router's ports, each answered by the single-file search.

"How many G.711 calls fit on each of our 40 WAN ports" is one search per port. Each file is loaded and its
search range checked here (a file that cannot be loaded, or whose range is bad, is a row with its one-line
error and the others still run); the searches then run on the sweep's executor
(:mod:`qosbound.sweep.execute`): one after another in one isolated child by default, on a local Dask cluster
with ``--workers N``, or on the cluster at ``--scheduler ADDRESS``. Each search is exactly the single-file
:func:`qosbound.admit.admit` (same default method, same fall-back when a model is above its state budget,
same tolerance), so a row says what ``qosbound admit FILE`` says.

Exit code: the most serious of the ports' (:func:`qosbound.batch.batch_exit_code`): 70 an internal error, 2
bad input, 4 a resource limit, 1 a port where no value meets every SLO, 0 every port answered.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from qosbound import interrupts
from qosbound.batch import (_located, _unique_suites, batch_exit_code, expand, guarded_record, prepare_all,
                            print_error, run)
from qosbound.errors import InternalError, Interrupted, QosboundError
from qosbound.verdicts import EXIT_OK, EXIT_SLO

__all__ = ["AdmitEntry", "evaluate_admission", "main"]


@dataclass
class AdmitEntry:
    """One port of a batch admission: its file, and its search's answer or the error that stopped it."""

    file: str
    name: str
    system: str = ""
    result: object = None  # qosbound.admit.AdmitResult
    error: QosboundError | None = None
    wall: float = 0.0
    suite: str = ""  # unique name in the batch (as qosbound.batch names report suites)
    skipped: dict = field(default_factory=dict)
    unfinished: bool = False  # a signal stopped the batch before this port's search ended
    inputs: object = None  # its inputs as understood (qosbound.understood.Inputs), once it loaded
    search: dict | None = None  # the search as understood (qosbound.cli.admit_search)

    @property
    def exit_code(self) -> int:
        if self.unfinished:
            return interrupts.exit_code()
        if self.error is not None:
            return self.error.exit_code
        return EXIT_OK if self.result.value is not None else EXIT_SLO


def _prepare(file: str, args) -> tuple[AdmitEntry, dict | None]:
    from qosbound.admit import search_range
    from qosbound.cli import admit_search, understood
    from qosbound.scenario import load

    t0 = time.perf_counter()
    entry = AdmitEntry(file=file, name=Path(file).stem)
    try:
        scn = load(file)
        entry.name, entry.system = scn.name, scn.system
        lo, hi = search_range(scn, args.vary, args.min, args.max, args.direction)
        entry.inputs, entry.search = understood(scn), admit_search(scn, args.vary, lo, hi)
    except Interrupted:
        raise
    except QosboundError as e:
        entry.error, entry.wall = _located(e, file), time.perf_counter() - t0
        return entry, None
    return entry, {"raw": scn.raw, "path": scn.path, "vary": args.vary, "direction": args.direction,
                   "method": args.method, "lo": lo, "hi": hi}


def evaluate_admission(task: dict, _path, _methods) -> dict:
    """One port's search (in the executor's child or a Dask worker): {'status': 'ok', 'result': AdmitResult}
    or {'status': 'error', 'error': ...}."""

    def work() -> dict:
        from qosbound.admit import admit
        from qosbound.cli import engine_output_to_stderr
        from qosbound.scenario import build

        scn = build(task["raw"], task["path"])
        with engine_output_to_stderr():
            return {"result": admit(scn, task["vary"], direction=task["direction"], method=task["method"],
                                    lo=task["lo"], hi=task["hi"])}

    return guarded_record(task["path"], "admission on", work)


def document(entry: AdmitEntry) -> dict:
    """One port's ``--json`` document: the single-file ``admit --json`` keys with ``file``, ``exit_code`` and
    ``seconds``; for a port that could not be searched, its file, error and exit code."""
    base = {"scenario": entry.name, "suite": entry.suite, "file": entry.file, "system": entry.system or None,
            "exit_code": entry.exit_code, "seconds": round(entry.wall, 3)}
    if entry.unfinished:
        return {**base, "complete": False}
    if entry.error is not None:
        return {**base, "error": str(entry.error)}
    from qosbound.cli import admit_document

    return {**admit_document(entry.name, entry.result, entry.inputs, entry.search), **base}


def _counts(entries) -> dict:
    done = [e for e in entries if not e.unfinished]
    return {"scenarios": len(entries),
            "answered": sum(e.error is None and e.result.value is not None for e in done),
            "none_feasible": sum(e.error is None and e.result.value is None for e in done),
            "not_evaluated": sum(e.error is not None for e in done),
            **({"not_finished": len(entries) - len(done)} if len(done) < len(entries) else {})}


def render_table(entries, parameter: str, where: str, seconds: float, code: int, out=None) -> None:
    """One row per port (its answer with unit, method, binding SLO, evaluations, exit, seconds), then the
    notes and errors, then totals."""
    from rich.markup import escape
    from rich.table import Table

    from qosbound.report import console
    from qosbound.units import format_quantity

    c = console(out)
    direction = next((e.result.direction for e in entries if e.result is not None), "largest")
    t = Table(title=f"qosbound admit: {direction} {parameter} meeting every SLO, {len(entries)} scenarios",
              title_justify="left")
    for col, just in (("scenario", "left"), ("file", "left"), ("value", "right"), ("method", "left"),
                      ("binding SLO", "left"), ("evaluations", "right"), ("exit", "right"), ("seconds", "right")):
        t.add_column(col, justify=just, overflow="fold")
    for e in entries:
        style = "green" if e.exit_code == EXIT_OK else "bold red"
        if e.unfinished:
            value, method, binding, evals = "[yellow]not finished[/]", "-", "-", "-"
        elif e.error is not None:
            value, method, binding, evals = "[red]not evaluated[/]", "-", "-", "-"
        else:
            r = e.result
            value = (format_quantity(r.value, r.unit, digits=6) if r.value is not None
                     else "[bold red]none feasible[/]")
            method, binding, evals = r.method, escape(r.binding or "-"), str(r.evaluations)
        t.add_row(escape(e.suite), escape(e.file), value, method, binding, evals, f"[{style}]{e.exit_code}[/]",
                  f"{e.wall:.1f}")
    c.print(t)
    for e in entries:
        if e.unfinished:
            continue
        if e.error is not None:
            print_error(c, e)
            continue
        for note in e.result.notes:
            c.print(f"[yellow]note[/] {escape(e.suite)}: {escape(note)}", highlight=False, soft_wrap=True)
        if e.result.value is None:
            c.print(f"{escape(e.suite)}: no value of {escape(parameter)} meets every SLO "
                    f"({escape(e.result.message)}; method {e.result.method})", highlight=False, soft_wrap=True)
        elif e.result.message:  # what stops the search where no SLO binds (the range's end, an invalid value)
            c.print(f"{escape(e.suite)}: {escape(e.result.message)}", highlight=False, soft_wrap=True)
    n = _counts(entries)
    c.print(f"{n['scenarios']} scenarios in {seconds:.1f} s on {where}: {n['answered']} answered, "
            f"{n['none_feasible']} with no feasible value, {n['not_evaluated']} not evaluated"
            + (f", {n['not_finished']} not finished (incomplete)" if n.get("not_finished") else "")
            + f"; exit {code}",
            highlight=False, soft_wrap=True)


def main(args) -> int:
    """``admit`` over several scenarios (see the module docstring); the batch's exit code."""
    import json

    from qosbound.cli import _RUN, write_pages
    from qosbound.sweep import _workers

    t0 = time.perf_counter()
    workers = _workers(args.workers)
    files = expand(args.scenario)
    prepared, stopped, where = prepare_all(files, lambda f: _prepare(f, args), AdmitEntry)
    entries = [e for e, _ in prepared]
    _unique_suites(entries)
    if stopped is None:
        try:
            where = run(prepared, None, workers=workers, scheduler=args.scheduler,
                        show_progress=None if not args.quiet else False, command="admit",
                        evaluate=evaluate_admission, fill=lambda entry, rec: setattr(entry, "result", rec["result"]))
        except Interrupted as e:  # the ports that finished are reported; the rest are marked not finished
            stopped = e
    code = batch_exit_code(e.exit_code for e in entries) if stopped is None else interrupts.exit_code(
        stopped.exit_code)
    seconds = time.perf_counter() - t0
    if _RUN.get("debug"):
        for e in entries:
            if isinstance(e.error, InternalError) and e.error.details:
                print(e.error.details, file=sys.stderr, end="")
    doc = {"parameter": args.vary, "scenarios": [document(e) for e in entries], "exit_code": code,
           "counts": _counts(entries), "seconds": round(seconds, 3), "executor": where,
           "complete": stopped is None}
    if stopped is not None:
        from qosbound.incomplete import interrupted_info

        doc["interrupted"] = interrupted_info(stopped, scenarios_not_finished=[e.suite for e in entries
                                                                               if e.unfinished])
    write_pages(args, doc, "admit")
    if args.json:
        print(json.dumps(doc, indent=2, allow_nan=False))
    else:
        render_table(entries, args.vary, where, seconds, code)
    if stopped is not None:
        raise stopped
    return code
