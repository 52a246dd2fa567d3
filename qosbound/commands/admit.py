"""``qosbound admit SCENARIO --vary PARAM``: the largest (or smallest) value of one parameter with every SLO
holding (the search is :mod:`qosbound.admit`). Several scenarios are a batch (:mod:`.batch_admit`)."""

from __future__ import annotations

import json
import sys

from qosbound import interrupts
from qosbound.admit import admit, search_range
from qosbound.commands import batch, batch_admit
from qosbound.commands.admit_report import admit_document, admit_lines, admit_search, interrupted_admit_document, \
    interrupted_admit_line
from qosbound.commands.common import engine_output_to_stderr, understood, write_pages
from qosbound.errors import Interrupted
from qosbound.progress import progress
from qosbound.scenario import load

__all__ = ["run"]


def run(args, context) -> int:
    """``admit``: one scenario's search (exit 0 a value found, 1 none meets every SLO); several files, a folder
    or a glob are a batch. ``context``: the run's :class:`~qosbound.commands.context.RunContext`."""
    if not batch.single_file(args):
        return batch_admit.main(args, context)
    scn = load(args.scenario)
    lo, hi = search_range(scn, args.vary, args.min, args.max, args.direction)
    inputs, search = understood(scn), admit_search(scn, args.vary, lo, hi)
    if not args.json:  # the inputs as understood before the (long) search
        print("\n".join(inputs.lines()), flush=True)
    prog = None
    try:
        with progress(None if not args.quiet else False) as prog, engine_output_to_stderr():
            res = context.isolated(admit, scn, args.vary, direction=args.direction, method=args.method, lo=lo,
                                   hi=hi, what=f"admission search over {args.vary}", progress=prog)
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
