"""One scenario evaluated as ``plan`` and ``verify`` evaluate it: every method in turn in the isolated child,
the SLO and agreement verdicts, and what a signal leaves to report (marked incomplete).

The batch forms, the sweep's executor and ``diff`` evaluate their scenarios with :func:`evaluate_methods` too,
so a batch row or a sweep point says what the single command says.
"""

from __future__ import annotations

import time
from pathlib import Path

from qosbound.agreement import agreements
from qosbound.commands.common import engine_output_to_stderr, max_states_budget, methods_arg, understood
from qosbound.errors import SKIPPABLE, ScenarioError
from qosbound.incomplete import interrupted_info, mark_junit_suites, message_of, split_judged
from qosbound.progress import progress, report_partial, report_status
from qosbound.report import console, junit_suites, render_json, slo_line, write_junit_batch
from qosbound.parameter_path import get_path, set_path
from qosbound.scenario import build
from qosbound.systems import get_system
from qosbound.verdicts import judge_slos

__all__ = ["evaluate", "evaluate_methods", "report_interrupted", "with_max_states"]


def evaluate_methods(system, scn, methods, progress, optional=()):
    """Every requested method in turn (run in the isolated child), with the seconds each took.

    A method in ``optional`` (enabled by the scenario, not asked for on the command line) that would exceed a
    resource budget (a ResourceError, e.g. a model above ``max_states``) or does not cover the scenario
    (MethodNotApplicable) is skipped with its reason instead of failing the run; the other methods still
    answer. Returns (results, seconds per method, skipped: method ->
    reason)."""
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


def with_max_states(args, scn):
    """The scenario with ``--max-states`` applied to its model-checked options (when given)."""
    value = getattr(args, "max_states", None)
    if value is None:
        return scn
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


def evaluate(args, scn, run):
    """Every requested method (timed one by one), the SLO verdicts and the agreement verdicts.

    Returns (system, results, SLO verdicts, agreement verdicts, seconds per method, skipped methods with the
    reason). Methods the scenario enables (no ``--methods``) may be skipped on a resource budget; methods asked
    for by name are never skipped silently: they fail the run (exit 4). ``run``: the run's context (its memory
    limit and debug output for the isolated child)."""
    system = get_system(scn.system)
    asked = methods_arg(getattr(args, "methods", None))
    methods = asked or system.default_methods(scn)
    optional = () if asked else tuple(methods)
    with progress(None if not args.quiet else False) as prog, engine_output_to_stderr():
        results, seconds, skipped = run.isolated(evaluate_methods, system, scn, methods, optional=optional,
                                                 what=f"evaluating {scn.name}", progress=prog)
    slo_verdicts = judge_slos(system, scn, results)
    agree = agreements(results) + system.agreements(scn, results)
    return system, results, slo_verdicts, agree, seconds, skipped


def report_interrupted(args, scn, error, *, verify: bool, seconds: float = 0.0, inputs=None) -> None:
    """What ``plan``/``verify`` had when a signal stopped them, marked incomplete (:mod:`qosbound.incomplete`):
    the JUnit report (``--junit``), the JSON document (``--json``) or the SLO lines judged on the methods that
    finished. The run then exits with the signal's code (130 / 143)."""
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
            not_done = list(methods_arg(getattr(args, "methods", None)) or system.default_methods(scn))
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
        _print_judged(name, error, verdicts, unjudged, done, not_done)


def _print_judged(name, error, verdicts, unjudged, done, not_done) -> None:
    """The text form of an incomplete run: the SLO lines judged on the methods that finished."""
    c = console()
    c.print(f"[bold]{name}: incomplete[/] ({message_of(error)}); SLOs judged on {', '.join(done) or 'nothing'}"
            f"{'; not run: ' + ', '.join(not_done) if not_done else ''}", highlight=False)
    for v in verdicts:
        if v.kind == "slo":
            c.print(slo_line(v), highlight=False)
    for t in unjudged:
        c.print(f"[yellow]not judged[/] {t}", highlight=False)
