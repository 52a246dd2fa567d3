"""``qosbound verify SCENARIO``: decide on the SLOs (exit 1 when one fails) and report the disagreements between
methods in their own section (exit 3 when every SLO holds but methods disagree). With ``--junit`` a report is
written even when the scenario cannot be loaded or evaluated. Several scenarios are a batch (:mod:`.batch`)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from rich.markup import escape

from qosbound import interrupts
from qosbound.commands import batch
from qosbound.commands.common import html_link, understood, write_pages
from qosbound.commands.evaluation import evaluate, report_interrupted, with_max_states
from qosbound.errors import Interrupted, QosboundError
from qosbound.report import (agreement_line, console, json_document, omitted, skipped_lines, slo_counts, slo_line,
                             slo_outcomes, slo_summary, write_junit, write_junit_error)
from qosbound.scenario import load
from qosbound.verdicts import EXIT_DISAGREE, EXIT_OK, exit_code

__all__ = ["run"]


def run(args, context) -> int:
    """``verify``: its exit code. ``context``: the run's :class:`~qosbound.commands.context.RunContext`; from
    here on this command writes its JUnit report, incomplete or not."""
    t0 = time.perf_counter()
    context.junit = args.junit
    if args.junit:  # refuse an unwritable report before the whole evaluation runs
        j = Path(args.junit)
        if j.is_dir() or not j.parent.is_dir():
            raise QosboundError(f"--junit {args.junit}: "
                                f"{'is a directory' if j.is_dir() else 'its directory does not exist'}")
    if not batch.single_file(args):
        return batch.main(args, context, verify=True)
    scn, inputs, results, slos, agree, seconds, skipped = _evaluate_one(args, context, t0)
    verdicts = slos + agree
    if args.junit:
        write_junit(args.junit, scn.name, verdicts, seconds, skipped=skipped, inputs=inputs,
                    html=html_link(args, args.junit), per_slo=getattr(args, "per_slo", False))
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
    render_text(scn, inputs, results, slos, agree, skipped, code)
    return code


def _evaluate_one(args, context, t0: float):
    """Load and evaluate the one scenario: (scenario, inputs, results, SLO verdicts, agreement verdicts, seconds
    per method, skipped methods). A signal leaves its report marked incomplete; an error still writes the JUnit
    report and the pages, naming it."""
    scn = inputs = None
    try:
        scn = with_max_states(args, load(args.scenario))
        if not scn.slos:
            raise QosboundError(f"{args.scenario}: field 'slos': the scenario declares no SLOs to verify")
        inputs = understood(scn)
        _, results, slos, agree, seconds, skipped = evaluate(args, scn, context)
    except (Interrupted, interrupts.Stopped) as e:
        report_interrupted(args, scn, e, verify=True, seconds=time.perf_counter() - t0, inputs=inputs)
        raise
    except QosboundError as e:
        if args.junit:
            write_junit_error(args.junit, Path(args.scenario).stem, e, time.perf_counter() - t0,
                              html=html_link(args, args.junit))
        write_pages(args, {"scenario": Path(args.scenario).stem, "file": args.scenario, "error": str(e),
                           "exit_code": e.exit_code}, "verify")
        raise
    return scn, inputs, results, slos, agree, seconds, skipped


def render_text(scn, inputs, results, slos, agree, skipped, code: int) -> None:
    """The text report: the inputs as understood, the SLO lines (an SLO fails when a verdict on it fails), the
    notes, the agreement between methods, and the summary line."""
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
