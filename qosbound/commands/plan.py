"""``qosbound plan SCENARIO``: every metric by every method, with the SLO verdicts and the agreement between
methods. Several scenarios (files, a folder, a glob, a router's ports) are a batch (:mod:`.batch`)."""

from __future__ import annotations

import json

from qosbound import interrupts
from qosbound.commands import batch
from qosbound.commands.common import understood, write_pages
from qosbound.commands.evaluation import evaluate, report_interrupted, with_max_states
from qosbound.errors import Interrupted
from qosbound.report import json_document, render_text
from qosbound.scenario import load
from qosbound.verdicts import exit_code

__all__ = ["run"]


def run(args, context) -> int:
    """``plan``: its exit code (0, 1 an SLO is violated, 3 methods disagree). ``context``: the run's
    :class:`~qosbound.commands.context.RunContext`."""
    if not batch.single_file(args):
        return batch.main(args, context, verify=False)
    scn = inputs = None
    try:
        scn = with_max_states(args, load(args.scenario))
        inputs = understood(scn)
        system, results, slos, agree, _, skipped = evaluate(args, scn, context)
    except (Interrupted, interrupts.Stopped) as e:
        report_interrupted(args, scn, e, verify=False, inputs=inputs)
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
