"""The ``qosbound`` command line. Errors are caught here once and printed as one line.

Exit codes (every command):

  0    success: every SLO holds and the methods agree
  1    an SLO is violated
  2    bad input: a scenario, trace, model, property or argument is refused;
       the one-line message names the file, the field and the problem
  3    the methods disagree while every SLO holds
  4    a resource is exhausted: memory (see --max-memory), or a state-space or
       simulation budget estimated before the work starts
  70   internal error (a bug, or an engine crash); rerun with --debug for the traceback
  130  interrupted (Ctrl-C / SIGINT); 143 terminated (SIGTERM)

Engine work (Storm, the simulators) runs in a child process
(:mod:`qosbound.isolate`), so an interrupt stops it promptly and a crash or
memory exhaustion of the engine becomes one line, not a dead process. SIGINT
and SIGTERM, once or repeated, to the process or its group, at any stage, end
the run with 130 / 143 and one line (:mod:`qosbound.interrupts`), after the
report of what was done, marked incomplete (:mod:`qosbound.incomplete`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import sys

from qosbound import interrupts
from qosbound.errors import (EXIT_INTERNAL, EXIT_INTERRUPT, Interrupted, InternalError, QosboundError, ResourceError,
                             ScenarioError)

__all__ = ["main"]

PAPERS = {
    "ferrari2001": "qosbound.reproduce.ferrari2001",
    "takeo2003": "qosbound.reproduce.takeo2003",
    "koehler1999": "qosbound.reproduce.koehler1999",
    "qstp2008": "qosbound.reproduce.qstp2008",
    "tsq": "qosbound.reproduce.tsq",
}

EPILOG = """exit codes:
  0    success: every SLO holds and the methods agree
  1    an SLO is violated
  2    bad input (the message names the file, the field and the problem)
  3    the methods disagree while every SLO holds
  4    a resource is exhausted (memory, or a state-space / simulation budget)
  70   internal error: rerun with --debug for the traceback
  130  interrupted (SIGINT, Ctrl-C); 143 terminated (SIGTERM): once or repeated, to the
       process or its group, at any stage (the first signal sets the code); what was done
       is still reported, marked incomplete: --junit gets a suite with the property
       'incomplete' and an error testcase naming the signal, --json "complete": false;
       admit prints the bracket it had found (feasible at >= N, infeasible at <= M)

progress (on standard error; standard output carries only the report):
  on a terminal, a progress bar; otherwise (CI logs, pipes) one plain line every 10 s
  (QOSBOUND_PROGRESS_INTERVAL=SECONDS sets another interval) naming the method, the
  value tried and the time left; a run shorter than that prints none; --quiet: nothing
"""

#: Options of the current run that library-side helpers read (set by :func:`main`).
_RUN = {"debug": False, "max_memory": None, "junit": None}


def isolated(fn, *args, what: str, progress=None, passthrough: bool = False, on_crash=None, **kwargs):
    """Run engine work in a child process (see :mod:`qosbound.isolate`) with this run's memory limit."""
    from qosbound.isolate import run_isolated

    return run_isolated(fn, *args, what=what, memory_limit=_RUN["max_memory"], progress=progress,
                        passthrough=passthrough or _RUN["debug"], on_crash=on_crash, **kwargs)


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


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        self.exit(2, f"qosbound: {message}\n")


def _methods_arg(text: str | None):
    if text is None:
        return None
    from qosbound.results import METHODS

    out = [m.strip() for m in text.split(",") if m.strip()]
    for m in out:
        if m not in METHODS:
            raise QosboundError(f"--methods: unknown method '{m}'; expected one of {', '.join(METHODS)}")
    return out


def _evaluate_methods(system, scn, methods, progress, optional=()):
    """Every requested method in turn (run in the isolated child), with the seconds each took.

    A method in ``optional`` (enabled by the scenario, not asked for on the command line) that would exceed a
    resource budget (a ResourceError, e.g. a model above ``max_states``) or does not cover the scenario
    (MethodNotApplicable) is skipped with its reason instead of failing the run; the other methods still
    answer. Returns (results, seconds per method, skipped: method ->
    reason)."""
    import time

    from qosbound.errors import SKIPPABLE
    from qosbound.progress import report_partial, report_status

    results, seconds, skipped = [], {}, {}
    for i, m in enumerate(methods):
        report_status(progress, f"{scn.name}: {m} (method {i + 1} of {len(methods)})")
        t0 = time.perf_counter()
        try:
            results += system.evaluate(scn, [m], progress)
        except SKIPPABLE as e:
            if m not in optional:
                raise
            skipped[m] = f"{'field ' + repr(e.field) + ': ' if e.field else ''}{e.problem}"
        else:
            seconds[m] = time.perf_counter() - t0
        # what is done so far, for a report marked incomplete if a signal stops the run
        report_partial(progress, {"results": list(results), "seconds": dict(seconds), "skipped": dict(skipped),
                                  "done": [x for x in methods[:i + 1] if x not in skipped],
                                  "not_done": methods[i + 1:]})
    return results, seconds, skipped


def _with_max_states(args, scn):
    """The scenario with ``--max-states`` applied to its model-checked options (when given)."""
    value = getattr(args, "max_states", None)
    if value is None:
        return scn
    from qosbound.scenario import build, get_path, set_path

    from qosbound.model_cmd import max_states_budget

    n = max_states_budget(value)
    try:
        section = get_path(scn.raw, "methods.model-checked")
    except ScenarioError:
        raise ScenarioError("the scenario has no methods.model-checked section to budget", file=scn.path,
                            field="--max-states") from None
    # set (or add: the file need not give max_states) the budget; a section that is not a mapping is left for
    # the scenario's own validation to refuse
    section = dict(section or {}, max_states=n) if isinstance(section, dict) or section is None else section
    return build(set_path(scn.raw, "methods.model-checked", section), scn.path)


def _evaluate(args, scn):
    """Every requested method (timed one by one), the SLO verdicts and the agreement verdicts.

    Returns (system, results, SLO verdicts, agreement verdicts, seconds per method, skipped methods with the
    reason). Methods the scenario enables (no ``--methods``) may be skipped on a resource budget; methods asked
    for by name are never skipped silently: they fail the run (exit 4)."""
    from qosbound.progress import progress
    from qosbound.systems import get_system
    from qosbound.verdicts import judge_slos

    system = get_system(scn.system)
    asked = _methods_arg(getattr(args, "methods", None))
    methods = asked or system.default_methods(scn)
    optional = () if asked else tuple(methods)
    with progress(None if not args.quiet else False) as prog, engine_output_to_stderr():
        results, seconds, skipped = isolated(_evaluate_methods, system, scn, methods, optional=optional,
                                             what=f"evaluating {scn.name}", progress=prog)
    slo_verdicts = judge_slos(system, scn, results)
    from qosbound.agreement import agreements

    agree = agreements(results) + system.agreements(scn, results)
    return system, results, slo_verdicts, agree, seconds, skipped


def understood(scn):
    """The scenario's inputs as understood (:class:`qosbound.understood.Inputs`), which every report shows first."""
    from qosbound.systems import get_system

    return get_system(scn.system).understood_inputs(scn)


def _single(args) -> bool:
    """True when ``plan``/``verify``/``admit`` got one scenario file (or shipped example): ``args.scenario`` becomes its
    path. Several files, a folder or a glob pattern are a batch (:mod:`qosbound.batch`)."""
    from qosbound.batch import is_batch
    from qosbound.shipped import resolve_scenario

    if is_batch(args.scenario):
        return False
    args.scenario = resolve_scenario(args.scenario[0])
    return True


def write_pages(args, doc: dict, command: str) -> None:
    """``--html FILE`` and ``--markdown FILE``: the page and the summary of the command's JSON document."""
    from qosbound import pages

    html = getattr(args, "html", None)
    source = " ".join(args.scenario) if isinstance(args.scenario, list) else str(args.scenario)
    if html:
        pages.write_html(html, doc, command, source=source)
    if getattr(args, "markdown", None):
        pages.write_markdown(args.markdown, doc, command, html=pages.link_from(args.markdown, html) if html else None)


def _html_link(args, report_path: str) -> str | None:
    """The link to the ``--html`` page from a report written at ``report_path`` (None without a page)."""
    from qosbound.pages import link_from

    return link_from(report_path, args.html) if getattr(args, "html", None) else None


def cmd_plan(args) -> int:
    from qosbound.report import json_document, render_text
    from qosbound.scenario import load
    from qosbound.verdicts import exit_code

    if not _single(args):
        from qosbound.batch import main as batch_main

        return batch_main(args, verify=False)
    scn = inputs = None
    try:
        scn = _with_max_states(args, load(args.scenario))
        inputs = understood(scn)
        system, results, slos, agree, _, skipped = _evaluate(args, scn)
    except (Interrupted, interrupts.Stopped) as e:
        _report_interrupted(args, scn, e, verify=False, inputs=inputs)
        raise
    verdicts = slos + agree
    doc = json_document(scn.name, results, verdicts, {"system": scn.system, "file": args.scenario,
                                                      "inputs": inputs.to_json(), "exit_code": exit_code(verdicts),
                                                      "skipped": skipped, "complete": True})
    if args.json:
        print(json.dumps(doc, indent=2, allow_nan=False))
    else:
        render_text(scn.name, results, verdicts, skipped=skipped, inputs=inputs)
    write_pages(args, doc, "plan")
    return exit_code(verdicts)


def _report_interrupted(args, scn, error, *, verify: bool, seconds: float = 0.0, inputs=None) -> None:
    """What ``plan``/``verify`` had when a signal stopped them, marked incomplete (:mod:`qosbound.incomplete`):
    the JUnit report (``--junit``), the JSON document (``--json``) or the SLO lines judged on the methods that
    finished. The run then exits with the signal's code (130 / 143)."""
    from pathlib import Path

    from qosbound.agreement import agreements
    from qosbound.incomplete import interrupted_info, mark_junit_suites, message_of, split_judged
    from qosbound.report import junit_suites, render_json, write_junit_batch
    from qosbound.systems import get_system
    from qosbound.verdicts import judge_slos

    part = getattr(error, "partial", None) or {}
    results, secs, skipped = part.get("results", []), part.get("seconds", {}), part.get("skipped", {})
    done, not_done = list(part.get("done", [])), list(part.get("not_done", []))
    name = scn.name if scn is not None else Path(str(args.scenario)).stem
    verdicts, unjudged = [], []
    if scn is not None and inputs is None:
        inputs = understood(scn)
    if scn is not None:
        system = get_system(scn.system)
        if not done and not not_done:
            not_done = list(_methods_arg(getattr(args, "methods", None)) or system.default_methods(scn))
        slos = judge_slos(system, scn, results)
        agree = agreements(results) + system.agreements(scn, results) if results else []
        verdicts, unjudged = split_judged(slos + agree)
    if verify and getattr(args, "junit", None):
        lines = junit_suites(name, verdicts, secs, skipped, inputs) if verdicts or skipped or inputs else []
        write_junit_batch(args.junit, name, [mark_junit_suites(lines, name, error, unjudged=unjudged, done=done,
                                                               not_done=not_done, seconds=seconds)])
    info = interrupted_info(error, methods_done=done, methods_not_done=not_done, slos_not_judged=unjudged)
    if args.json:
        keep = [r for r in results if not verify or any(r.metric == v.metric for v in verdicts)]
        print(render_json(name, keep, verdicts, {"system": scn.system if scn is not None else None,
                                                 "file": str(args.scenario),
                                                 "inputs": inputs.to_json() if inputs is not None else None,
                                                 "exit_code": info["exit_code"], "skipped": skipped,
                                                 "complete": False, "interrupted": info}))
    elif verdicts:
        from qosbound.report import console, slo_line

        c = console()
        c.print(f"[bold]{name}: incomplete[/] ({message_of(error)}); SLOs judged on {', '.join(done) or 'nothing'}"
                f"{'; not run: ' + ', '.join(not_done) if not_done else ''}", highlight=False)
        for v in verdicts:
            if v.kind == "slo":
                c.print(slo_line(v), highlight=False)
        for t in unjudged:
            c.print(f"[yellow]not judged[/] {t}", highlight=False)


def cmd_verify(args) -> int:
    """Decide on the SLOs; report method disagreements in their own section (exit 3 when every SLO holds but
    methods disagree). With --junit a report is written even when the scenario cannot be loaded or evaluated."""
    import time

    from qosbound.report import (agreement_line, console, json_document, omitted, skipped_lines, slo_counts, slo_line,
                                 slo_outcomes, slo_summary, write_junit, write_junit_error)
    from qosbound.scenario import load
    from qosbound.verdicts import EXIT_DISAGREE, EXIT_OK, exit_code

    t0 = time.perf_counter()
    _RUN["junit"] = args.junit  # from here on this command writes the report, incomplete or not
    if args.junit:  # refuse an unwritable report before the whole evaluation runs
        from pathlib import Path

        j = Path(args.junit)
        if j.is_dir() or not j.parent.is_dir():
            raise QosboundError(f"--junit {args.junit}: "
                                f"{'is a directory' if j.is_dir() else 'its directory does not exist'}")
    if not _single(args):
        from qosbound.batch import main as batch_main

        return batch_main(args, verify=True)
    scn = inputs = None
    try:
        scn = _with_max_states(args, load(args.scenario))
        if not scn.slos:
            raise QosboundError(f"{args.scenario}: field 'slos': the scenario declares no SLOs to verify")
        inputs = understood(scn)
        system, results, slos, agree, seconds, skipped = _evaluate(args, scn)
    except (Interrupted, interrupts.Stopped) as e:
        _report_interrupted(args, scn, e, verify=True, seconds=time.perf_counter() - t0, inputs=inputs)
        raise
    except QosboundError as e:
        from pathlib import Path

        if args.junit:
            write_junit_error(args.junit, Path(args.scenario).stem, e, time.perf_counter() - t0,
                              html=_html_link(args, args.junit))
        write_pages(args, {"scenario": Path(args.scenario).stem, "file": args.scenario, "error": str(e),
                           "exit_code": e.exit_code}, "verify")
        raise
    verdicts = slos + agree
    if args.junit:
        write_junit(args.junit, scn.name, verdicts, seconds, skipped=skipped, inputs=inputs,
                    html=_html_link(args, args.junit), per_slo=getattr(args, "per_slo", False))
    code = exit_code(verdicts)
    doc = json_document(scn.name, [r for r in results if any(r.metric == v.metric for v in slos)], verdicts,
                        {"system": scn.system, "file": args.scenario, "inputs": inputs.to_json(),
                         "ok": code == EXIT_OK, "slos_hold": not any(v.failed for v in slos),
                         "slo_counts": slo_counts(slos),
                         "methods_agree": not any(v.disagrees for v in agree), "exit_code": code,
                         "skipped": skipped, "complete": True}, curves_of=results)
    write_pages(args, doc, "verify")
    if args.json:
        print(json.dumps(doc, indent=2, allow_nan=False))
        return code
    from rich.markup import escape

    c = console()
    for line in inputs.lines():
        c.print(escape(line), highlight=False)
    c.print("[bold]SLOs[/]", highlight=False)
    for name, status, vs in slo_outcomes(slos):
        for v in vs:
            c.print(slo_line(v), highlight=False)
        if len({v.status for v in vs}) > 1 and status in ("violated", "missing"):
            bad = ", ".join(v.method for v in vs if v.failed)
            c.print(f"     [bold red]=> {escape(name)} fails[/] (by {escape(bad)}; an SLO fails when a verdict on it "
                    "fails)", highlight=False)
    for line in omitted(results) + skipped_lines(skipped):
        c.print(f"[yellow]note[/] {escape(line)}", highlight=False)
    if agree:
        c.print("[bold]agreement between methods[/] (not SLOs: a disagreement is a finding about the methods)",
                highlight=False)
    for v in agree:
        c.print(agreement_line(v), highlight=False)
    nd = sum(v.disagrees for v in agree)
    na = sum(v.status == "approximate" for v in agree)
    c.print(f"{scn.name}: {slo_summary(slos)}; methods: {len(agree) - nd - na} checks agree, "
            f"{na} approximate, {nd} disagree", highlight=False)
    if code == EXIT_DISAGREE:
        c.print(f"{scn.name}: every SLO holds but methods disagree (exit {EXIT_DISAGREE})", highlight=False)
    return code


def admit_document(name: str, res, inputs=None, search: dict | None = None) -> dict:
    """``admit --json`` for one scenario's answer (also a row of the batch form's document); ``inputs`` (the
    inputs as understood) and ``search`` (the parameter's kind, current value and range, SI) when known."""
    doc = {"scenario": name, "parameter": res.parameter, "direction": res.direction, "value": res.value,
           "unit": res.unit, "method": res.method, "decided_by": res.decided_by, "binding_slo": res.binding,
           "estimate": res.estimate, "bound_value": res.bound_value, "bound_proofs": res.bound_proofs,
           "infeasible": res.infeasible, "evaluations": res.evaluations,
           "bound_evaluations": res.bound_evaluations, "message": res.message, "notes": res.notes,
           "history": [{"value": x, "margin": (m if math.isfinite(m) else None)} for x, m in res.history],
           "complete": True}
    if inputs is not None:
        doc["inputs"] = inputs.to_json()
    if search is not None:
        doc["search"] = search
    return doc


def admit_search(scn, parameter: str, lo, hi) -> dict:
    """The admission search as understood: the parameter, its kind (from the schema), its current value and
    the range given by --min/--max, in SI units."""
    from qosbound.scenario import get_path, parameter_kind
    from qosbound.units import SI_UNIT, parse_quantity

    kind = parameter_kind(scn.raw, parameter)
    current = get_path(scn.raw, parameter)
    try:
        now = parse_quantity(current, kind) if kind not in (None, "count") else float(current)
    except (ScenarioError, TypeError, ValueError):
        now = None
    return {"parameter": parameter, "kind": kind, "unit": SI_UNIT.get(kind or "", "1"), "current": now,
            "min": lo, "max": hi}


def admit_lines(name: str, res, search: dict | None = None) -> list[str]:
    """The text answer of ``admit``: what was searched, then the value and what stops it -- the binding SLO, or
    the end of the range where every SLO still holds (then no SLO is called binding), or where the scenario
    stops being valid --, what decided it (bounds, or the search method with the binding SLO's estimate and
    interval at the answer), the bracket, and the value up to which bounds prove every SLO."""
    from qosbound.admit import bracket_text
    from qosbound.units import format_quantity

    def q(x):
        return format_quantity(x, res.unit, digits=6) if res.unit != "1" else f"{x:.6g}"

    out = []
    if search is not None:
        rng = "".join(t for t in (f" from {q(search['min'])} (--min)" if search["min"] is not None else "",
                                  f" up to {q(search['max'])} (--max)" if search["max"] is not None else ""))
        now = f", now {q(search['current'])}" if search["current"] is not None else ""
        out.append(f"search: {res.parameter} ({search['kind'] or 'a parameter'}{now}), the {res.direction} value "
                   f"with every SLO holding{rng}, by {res.method}")
    if res.value is None:
        out.append(f"{name}: no value of {res.parameter} meets every SLO ({res.message}; method {res.method})")
        return out
    stop = f"binding SLO: {res.binding}" if res.binding else "no SLO binds"
    out.append(f"{name}: {res.direction} {res.parameter} with every SLO holding = {q(res.value)} (method "
               f"{res.method}, {stop}, {res.evaluations} evaluations){'; ' + res.message if res.message else ''}")
    e = res.estimate
    if e:
        val = format_quantity(e["value"], e["unit"])
        iv = (f" [{format_quantity(e['low'], e['unit'])}, {format_quantity(e['high'], e['unit'])}] "
              f"({e['kind']})" if "low" in e else f" ({e['kind']})")
        reps = (f", {e['replications']} replications" + (f" of {e['packets_per_replication']:,} packets"
                                                            if e.get("packets_per_replication") else "")
                if e.get("replications") else "")
        which = e["slo"] if res.binding else f"the tightest SLO, {e['slo']}"
        by = "proved by bounds" if res.decided_by == "bound" else f"decided by {res.decided_by or res.method}"
        out.append(f"{name}: {by}: at the answer {which}: {e['method']} {e['metric']} = {val}{iv}{reps}")
    if res.infeasible is not None:
        out.append(f"{name}: {bracket_text(res.direction, res.value, res.infeasible, res.unit)}")
    if res.bound_value is not None:
        proofs = "; ".join(f"{k} by {v}" for k, v in res.bound_proofs.items())
        out.append(f"{name}: every SLO is proved by bounds at {res.parameter} = {q(res.bound_value)} ({proofs})")
    return out


def interrupted_admit_document(name: str, part: dict, error) -> dict:
    """``admit --json`` when a signal stopped the search: the bracket found so far, marked incomplete."""
    from qosbound.incomplete import interrupted_info

    part = part or {}
    return {"scenario": name, "parameter": part.get("parameter"), "direction": part.get("direction"),
            "value": None, "unit": part.get("unit"), "method": part.get("method"),
            "bracket": {"feasible": part.get("feasible"), "infeasible": part.get("infeasible")},
            "bound_value": part.get("bound_value"), "evaluations": part.get("evaluations", 0),
            "history": [{"value": x, "margin": (m if math.isfinite(m) else None)}
                        for x, m in part.get("history", [])],
            "notes": part.get("notes", []), "complete": False, "interrupted": interrupted_info(error)}


def interrupted_admit_line(name: str, part: dict, error) -> str:
    """The text form: '... stopped by SIGTERM after 7 evaluations: feasible at >= 3200, infeasible at <= 12800'."""
    from qosbound.admit import bracket_text
    from qosbound.incomplete import signal_of

    part = part or {}
    if not part.get("parameter"):
        return f"{name}: admission search stopped by {signal_of(error)} before any value was judged"
    return (f"{name}: admission search over {part['parameter']} stopped by {signal_of(error)} after "
            f"{part.get('evaluations', 0)} evaluations: "
            f"{bracket_text(part['direction'], part.get('feasible'), part.get('infeasible'), part['unit'])}")


def cmd_admit(args) -> int:
    """``admit``: one scenario's search; several files, a folder or a glob are a batch
    (:mod:`qosbound.batch_admit`)."""
    from qosbound.admit import admit, search_range
    from qosbound.progress import progress
    from qosbound.scenario import load

    if not _single(args):
        from qosbound.batch_admit import main as batch_main

        return batch_main(args)
    scn = load(args.scenario)
    lo, hi = search_range(scn, args.vary, args.min, args.max, args.direction)
    inputs, search = understood(scn), admit_search(scn, args.vary, lo, hi)
    if not args.json:  # the inputs as understood before the (long) search
        print("\n".join(inputs.lines()), flush=True)
    prog = None
    try:
        with progress(None if not args.quiet else False) as prog, engine_output_to_stderr():
            res = isolated(admit, scn, args.vary, direction=args.direction, method=args.method, lo=lo, hi=hi,
                           what=f"admission search over {args.vary}", progress=prog)
    except (Interrupted, interrupts.Stopped) as e:
        part = getattr(e, "partial", None) or (prog.partial_value if prog is not None else None)
        if args.json:
            doc = interrupted_admit_document(scn.name, part, e)
            print(json.dumps({**doc, "inputs": inputs.to_json(), "search": search}, indent=2, allow_nan=False))
        else:
            print(interrupted_admit_line(scn.name, part, e))
        raise
    code = 0 if res.value is not None else 1
    doc = admit_document(scn.name, res, inputs, search)
    if args.json:
        print(json.dumps(doc, indent=2, allow_nan=False))
    else:
        for note in res.notes:
            print(f"note: {note}", file=sys.stderr)
        print("\n".join(admit_lines(scn.name, res, search)))
    write_pages(args, {**doc, "exit_code": code}, "admit")
    return code


def cmd_sweep(args) -> int:
    from qosbound.sweep import main as sweep_main

    return sweep_main(args)


def cmd_tune(args) -> int:
    from qosbound.tune import main as tune_main

    return tune_main(args)


def cmd_validate(args) -> int:
    mod = importlib.import_module("qosbound.validate_cmd")
    return mod.run(args)


def cmd_model(args) -> int:
    from qosbound import model_cmd as mcli

    return mcli.run(args)


def cmd_tfrc(args) -> int:
    mod = importlib.import_module("qosbound.tfrc_cli")
    return mod.run(args)


def cmd_import(args) -> int:
    return importlib.import_module("qosbound.import_cmd").run(args)


def cmd_diff(args) -> int:
    return importlib.import_module("qosbound.diff_cmd").run(args)


def cmd_reproduce(args) -> int:
    if args.paper not in PAPERS:
        raise ScenarioError(f"unknown paper '{args.paper}'; expected one of {', '.join(PAPERS)}", field="paper")
    try:
        mod = importlib.import_module(PAPERS[args.paper])
    except ModuleNotFoundError:
        raise QosboundError(f"reproduce {args.paper}: not available in this version") from None
    # The reproduction prints as it goes: its output is passed through, and its exit code returned.
    return isolated(mod.run, args, what=f"reproduce {args.paper}", passthrough=True)


def check_output_file(path: str, flag: str) -> None:
    """Refuse a report file that cannot be written (missing folder, a folder, a full device, no permission)
    before any evaluation runs."""
    import stat

    p = os.path.abspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise ScenarioError(f"cannot write '{path}': {e.strerror}", field=flag) from None
    if st is None:
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


def _check_outputs(args) -> None:
    """Every file or folder the command will write is checked for writability first."""
    from qosbound.model_cmd import check_output_dir

    for flag in ("junit", "html", "markdown"):
        if getattr(args, flag, None):
            check_output_file(getattr(args, flag), f"--{flag}")
    out = getattr(args, "out", None)
    if out and args.command in ("validate", "reproduce", "model"):
        check_output_dir(out, "--out")


def _value_options(parser: argparse.ArgumentParser) -> tuple[set[str], set[str]]:
    """(options taking one value, every option string) over the parser and its sub-commands."""
    takes, every = set(), set()
    stack = [parser]
    while stack:
        p = stack.pop()
        for a in p._actions:
            every.update(a.option_strings)
            if a.option_strings and a.nargs is None:
                takes.update(a.option_strings)
            if isinstance(a, argparse._SubParsersAction):
                stack.extend(a.choices.values())
    return takes, every


def _join_negative_values(parser, argv: list[str]) -> list[str]:
    """``--rtt -5ms`` -> ``--rtt=-5ms``: argparse would read '-5ms' as an unknown option and say only
    'expected one argument'; joined, the value reaches the command, which refuses it with a clear message."""
    takes, every = _value_options(parser)
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            out.extend(argv[i:])
            break
        if (tok in takes and i + 1 < len(argv) and argv[i + 1].startswith("-") and argv[i + 1] != "--"
                and argv[i + 1].split("=", 1)[0] not in every):
            out.append(f"{tok}={argv[i + 1]}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


def _memory_arg(text) -> int:
    from qosbound.units import parse_quantity

    x = parse_quantity(text, "size", field="--max-memory")
    if not x >= 2**26:
        raise ScenarioError(f"'{text}' is too small to run anything (at least 64 MiB)", field="--max-memory")
    return int(x)


def _global_options() -> argparse.ArgumentParser:
    g = argparse.ArgumentParser(add_help=False)
    g.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="on an internal error print the full traceback (and the engines' own log output)")
    g.add_argument("--max-memory", dest="max_memory", metavar="SIZE", default=argparse.SUPPRESS,
                   help="address-space limit for engine work, e.g. '4 GB' (exceeding it: exit 4)")
    return g


def build_parser() -> argparse.ArgumentParser:
    glob = _global_options()
    fmt = argparse.RawDescriptionHelpFormatter
    p = _Parser(prog="qosbound", description="Formal and analytic queueing models and a verifier for DiffServ "
                                             "router queues.", epilog=EPILOG, parents=[glob], formatter_class=fmt)
    from qosbound import __version__

    p.add_argument("--version", action="version", version=f"qosbound {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def add(sub_, name, **kw):
        return sub_.add_parser(name, parents=[glob], epilog=EPILOG, formatter_class=fmt, **kw)

    def common(sp, scenario=True):
        if scenario:
            sp.add_argument("scenario", help="scenario YAML file")
        sp.add_argument("--json", action="store_true", help="print the machine-readable form")
        sp.add_argument("--quiet", action="store_true",
                        help="no progress: no bar on a terminal, no plain progress lines elsewhere")

    def scenarios(sp):
        from qosbound.configs_cli import add_arguments as config_arguments

        sp.add_argument("scenario", nargs="*", metavar="SCENARIO",
                        help="scenario YAML file; several files, a folder (its .yaml and .yml files) or a quoted glob "
                             "pattern run as a batch with one summary table; a router configuration (any other file) "
                             "is one scenario per port with an output policy")
        common(sp, scenario=False)
        config_arguments(sp)
        sp.add_argument("--workers", default="1", metavar="N",
                        help="batch: local Dask worker processes (1: one scenario after another in one child)")
        sp.add_argument("--scheduler", metavar="ADDRESS", help="batch: an existing Dask scheduler, e.g. "
                                                               "tcp://host:8786")
        sp.add_argument("--html", metavar="FILE", help="also write one self-contained HTML page of the results "
                                                       "(a batch: every scenario, with an index)")

    batch_note = ("Several scenarios (files, a folder, a glob) are evaluated by the sweep's executor and summarised "
                  "in one table (one row per scenario); a file that cannot be loaded is a row with its one-line "
                  "error and the others still run. The batch exits with the most serious of its scenarios' codes: "
                  "70 (internal error), then 2 (bad input), 4 (resource limit), 1 (an SLO violated), 3 (methods "
                  "disagree), 0.")
    sp = add(sub, "plan", help="every metric by every method, with SLO verdicts", description=batch_note)
    scenarios(sp)
    sp.add_argument("--methods", help="comma-separated subset: closed-form,model-checked,simulated,...")
    sp.add_argument("--max-states", dest="max_states", metavar="N",
                    help="budget on a model's states (overrides methods.model-checked.max_states): a larger model is "
                         "skipped, or refused (exit 4) when model-checked is asked for by --methods")
    sp.set_defaults(func=cmd_plan)

    sp = add(sub, "verify", help="check the SLOs (exit 1 when one fails)",
             description=batch_note + " --junit then writes one report, a group of test suites per scenario.")
    scenarios(sp)
    sp.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report (it links to the --html page)")
    sp.add_argument("--markdown", metavar="FILE", help="also write a short Markdown summary for a merge-request "
                                                       "comment (it links to the --html page)")
    sp.add_argument("--methods", help="comma-separated subset of methods")
    sp.add_argument("--max-states", dest="max_states", metavar="N",
                    help="budget on a model's states (overrides methods.model-checked.max_states)")
    sp.set_defaults(func=cmd_verify)

    sp = add(sub, "admit", help="largest (or smallest) parameter value meeting every SLO",
             description="The search judges each value on the proved bounds first (the closed forms: an upper bound "
                         "below a limit proves the SLO) and finds the value up to which bounds prove every SLO; "
                         "beyond it the search method runs, only where bounds leave an SLO undecided. On the "
                         "simulator a value is replicated in looks (16, 32, ... replications, one plan "
                         "simulation's packets at the cap) until the interval decides the SLO, and the bracket is "
                         "refined to 0.5 %. The answer says what decided it: bounds, or the method with the "
                         "binding SLO's estimate and interval at the answer. "
                         "Several scenarios (files, a folder, a glob) are one search each on the sweep's executor, "
                         "summarised in one table (one row per scenario: the value, its method and binding SLO); a "
                         "file that cannot be loaded is a row with its one-line error and the others still run. The "
                         "batch exits with the most serious code: 70, then 2, 4, 1 (a scenario where no value meets "
                         "every SLO), 0.")
    scenarios(sp)
    sp.add_argument("--vary", required=True, metavar="PARAM", help="dotted parameter, e.g. traffic.EF.rate")
    sp.add_argument("--direction", choices=["largest", "smallest"], default=None,
                    help="the largest (default) or smallest value meeting every SLO; for a TSQ hint "
                         "(flows.NAME.hint) the default is the quality-maximising hint")
    sp.add_argument("--method", help="method to search with (default: model-checked, else closed-form)")
    sp.add_argument("--min", help="lower end of the search range, in the parameter's units (e.g. '100 kbit/s'; "
                                  "a bare number only for a count or a probability)")
    sp.add_argument("--max", help="upper end of the search range, in the parameter's units (e.g. '2 Mbit/s'; "
                                  "a count bare, e.g. 4000 calls)")
    sp.set_defaults(func=cmd_admit)

    sp = add(sub, "sweep", help="every method over a grid of parameter values: table, plots, SLO verdicts")
    importlib.import_module("qosbound.sweep").add_arguments(sp)
    sp.set_defaults(func=cmd_sweep)

    sp = add(sub, "tune", help="best setting of several parameters for an objective, every SLO a constraint")
    importlib.import_module("qosbound.tune").add_arguments(sp)
    sp.set_defaults(func=cmd_tune)

    sp = add(sub, "validate", help="model and bounds against packet traces, with plots")
    common(sp)
    g = sp.add_mutually_exclusive_group(required=True)
    g.add_argument("--simulate", action="store_true", help="qosbound's own simulator")
    g.add_argument("--ns3", action="store_true", help="ns-3 (needs the ns3 wheel)")
    g.add_argument("--trace", metavar="FILE", help="a trace (Parquet/CSV) or an ingress,egress pcap pair")
    sp.add_argument("--out", default="validation-out", help="folder for plots (PNG and SVG)")
    sp.set_defaults(func=cmd_validate)

    sp = add(sub, "model", help="render PRISM files for a scenario, or check any PRISM model")
    msub = sp.add_subparsers(dest="model_command", required=True, parser_class=_Parser)
    r = add(msub, "render", help="write the PRISM model and properties for a scenario")
    r.add_argument("scenario", help="scenario YAML file (or a shipped example's name)")
    r.add_argument("--out", default=".", help="output folder")
    r.set_defaults(func=cmd_model)
    ch = add(msub, "check", help="check a PRISM model with a property file on Storm or PRISM")
    ch.add_argument("model", help=".prism file, or a scenario YAML")
    ch.add_argument("props", nargs="?", help=".props file (default: beside the model)")
    ch.add_argument("--const", action="append", default=[], help="NAME=VALUE for undefined constants")
    ch.add_argument("--engine", choices=["storm", "prism"], default="storm",
                    help="the model checker: Storm through stormpy (default) or PRISM on PATH")
    ch.add_argument("--exact", action="store_true", help="Storm's exact (rational) arithmetic")
    ch.add_argument("--precision", default="1e-10", help="requested relative precision, in (0, 0.1)")
    ch.add_argument("--max-states", dest="max_states", default="1e9",
                    help="refuse a model whose state space (product of its variable ranges) may exceed this")
    ch.add_argument("--json", action="store_true", help="print the machine-readable form")
    ch.add_argument("--quiet", action="store_true", help="no progress bar")
    ch.set_defaults(func=cmd_model)

    sp = add(sub, "convert", help="a pq_txq or af scenario written as port scenarios")
    importlib.import_module("qosbound.commands.convert").add_arguments(sp)
    sp.set_defaults(func=lambda args: importlib.import_module("qosbound.commands.convert").run(args))

    sp = add(sub, "tfrc", help="TFRC / gTFRC rate calculator")
    try:
        importlib.import_module("qosbound.tfrc_cli").add_arguments(sp)
    except ModuleNotFoundError:
        sp.add_argument("rest", nargs="*")
    sp.set_defaults(func=cmd_tfrc)

    sp = add(sub, "import", help="router configurations (Cisco MQC, Junos, tc, OpenConfig) -> port scenarios, with "
                                 "the configuration line behind every field")
    importlib.import_module("qosbound.import_cmd").add_arguments(sp)
    sp.set_defaults(func=cmd_import)

    sp = add(sub, "diff", help="two versions of router configurations: per port and class what changed, the answers "
                               "before and after, the SLOs that change state (Markdown; exit 1 when one breaks)")
    importlib.import_module("qosbound.diff_cmd").add_arguments(sp)
    sp.set_defaults(func=cmd_diff)

    sp = add(sub, "reproduce", help="the tables and figures of a source paper")
    sp.add_argument("paper", help=", ".join(PAPERS))
    sp.add_argument("--json", action="store_true", help="print the machine-readable form")
    sp.add_argument("--out", default=None, help="folder for figures")
    sp.add_argument("--quick", action="store_true", help="smaller simulations (for CI)")
    sp.add_argument("--quiet", action="store_true", help="no progress bar")
    sp.set_defaults(func=cmd_reproduce)
    return p


def _print_error(text: str) -> None:
    try:
        print(f"qosbound: {text}", file=sys.stderr)
    except (OSError, ValueError):
        pass


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit code (see the module docstring). SIGINT and SIGTERM end the run with 130 / 143
    and one line, at any stage, once or repeated (:mod:`qosbound.interrupts`)."""
    with interrupts.handling(program=argv is None):
        try:
            return _main(argv)
        except (interrupts.Stopped, KeyboardInterrupt) as e:
            code = interrupts.exit_code(EXIT_INTERRUPT if isinstance(e, KeyboardInterrupt) else e.exit_code)
            if _RUN.get("junit") is None:  # stopped before verify took charge of its report
                _early_junit(list(sys.argv[1:] if argv is None else argv), e)
            _print_error(f"{'interrupted' if code == EXIT_INTERRUPT else 'terminated'} "
                         f"({interrupts.signal_name(interrupts.received() or getattr(e, 'signum', None))})")
            return code


def _early_junit(argv: list[str], error) -> None:
    """A signal before ``verify`` read its arguments (while the parser and its modules load): the JUnit report
    asked for is still written, marked incomplete, for the scenario named first (best effort: the arguments
    are not parsed yet)."""
    if "verify" not in argv:
        return
    path = next((a.split("=", 1)[1] for a in argv if a.startswith("--junit=")), None)
    if path is None and "--junit" in argv and argv.index("--junit") + 1 < len(argv):
        path = argv[argv.index("--junit") + 1]
    if not path:
        return
    rest = argv[argv.index("verify") + 1:]
    takes = {"--junit", "--methods", "--max-states", "--workers", "--scheduler", "--max-memory"}
    names = [a for i, a in enumerate(rest) if not a.startswith("-") and (i == 0 or rest[i - 1] not in takes)]
    from pathlib import Path

    from qosbound.incomplete import incomplete_suites
    from qosbound.report import write_junit_batch

    suite = Path(names[0]).stem if names else "qosbound"
    try:
        write_junit_batch(path, suite, [incomplete_suites(suite, error)])
    except QosboundError:
        pass


def _main(argv: list[str] | None) -> int:
    import traceback

    _RUN["junit"] = None

    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(_join_negative_values(parser, argv))
    debug = bool(getattr(args, "debug", False))
    _RUN["debug"] = debug
    _RUN["max_memory"] = None
    try:
        if getattr(args, "max_memory", None) is not None:
            _RUN["max_memory"] = _memory_arg(args.max_memory)
        if getattr(args, "func", None) in (cmd_plan, cmd_verify, cmd_admit, cmd_sweep):  # router configurations
            importlib.import_module("qosbound.configs_cli").prepare(args)
        if isinstance(getattr(args, "scenario", None), str):  # a shipped example by name: `plan ferrari2001`
            from qosbound.shipped import resolve_scenario

            args.scenario = resolve_scenario(args.scenario)
        _check_outputs(args)
        return int(args.func(args) or 0)
    except Interrupted as e:
        _print_error(str(e))
        return interrupts.exit_code(e.exit_code)
    except QosboundError as e:
        if isinstance(e, ScenarioError) and e.file is None and isinstance(getattr(args, "scenario", None), str) \
                and not (e.field or "").startswith("--"):
            e = e.located(file=args.scenario)
        if isinstance(e, InternalError):
            if debug and e.details:
                print(e.details, file=sys.stderr, end="")
            _print_error(f"internal error: {e}" + ("" if debug else " (rerun with --debug for the traceback)"))
        else:
            _print_error(str(e))
        return e.exit_code
    except MemoryError:
        if debug:
            traceback.print_exc()
        _print_error(str(ResourceError("out of memory; make the scenario smaller, or allow more memory")))
        return ResourceError.exit_code
    except BrokenPipeError:
        return 0
    except Exception as e:  # noqa: BLE001 - the one place an unexpected failure becomes one line
        if debug:
            traceback.print_exc()
        _print_error(f"internal error: {e.__class__.__name__}: {e}"
                     + ("" if debug else " (rerun with --debug for the traceback)"))
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
