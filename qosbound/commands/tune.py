"""``qosbound tune SCENARIO --vary PARAM=RANGE ... --maximise|--minimise TARGET``: the best setting of several
parameters for an objective, every SLO a constraint (the search is :mod:`qosbound.tune`)."""

from __future__ import annotations

import json

from qosbound.commands.common import understood, workers_arg
from qosbound.errors import ScenarioError
from qosbound.scenario import load
from qosbound.sweep.cache import Cache
from qosbound.tune import lines, to_json, tune

__all__ = ["run"]


def run(args, context) -> int:
    """The ``tune`` command: 0 a feasible optimum, 1 nothing feasible, 2 bad input. ``context``: the run's
    :class:`~qosbound.commands.context.RunContext`."""
    try:
        coarse = int(args.coarse)
    except ValueError:
        raise ScenarioError(f"expected a number of points, got '{args.coarse}'", field="--coarse") from None
    workers = workers_arg(args.workers)
    scn = load(args.scenario)
    inputs = understood(scn)
    if not args.json:  # the inputs as understood, before the search
        print("\n".join(inputs.lines()), flush=True)
    res = tune(scn, args.vary, maximise=args.maximise, minimise=args.minimise, method=args.method, slos=args.slo,
               coarse=coarse, cache=Cache(args.cache), workers=workers, scheduler=args.scheduler,
               show_progress=None if not args.quiet else False, context=context)
    if args.json:
        print(json.dumps({**to_json(res), "inputs": inputs.to_json()}, indent=2, allow_nan=False))
    else:
        for line in lines(res):
            print(line)
    return 0 if res.best is not None else 1
