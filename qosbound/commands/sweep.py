"""``qosbound sweep SCENARIO --vary PARAM=SPEC ...``: a scenario evaluated over a grid of parameter values, by
every method (:mod:`qosbound.sweep`): the table (CSV, Parquet), one plot per metric, the SLO verdicts over the
grid. Finished points are cached, so an interrupted sweep resumes where it stopped. See ``docs/sweep.md``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from qosbound.commands.common import check_output_dir, methods_arg, understood, workers_arg, write_pages
from qosbound.errors import Interrupted, ScenarioError
from qosbound.scenario import load
from qosbound.sweep.cache import Cache, default_cache_dir
from qosbound.sweep.run import document, exit_code, prepare, summary, write_plots, write_table
from qosbound.sweep.run import run as run_sweep

__all__ = ["run"]


def run(args, context) -> int:
    """The ``sweep`` command: returns its exit code (0, 1 an SLO fails somewhere, 3 methods disagree).
    ``context``: the run's :class:`~qosbound.commands.context.RunContext`."""
    workers = workers_arg(args.workers)
    check_output_dir(args.out, "--out")
    out = Path(args.out)
    try:  # before any point is computed
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ScenarioError(f"cannot create '{args.out}': {e.strerror}", field="--out") from None
    scn = load(args.scenario)
    sw = prepare(scn, args.vary, methods_arg(args.methods))
    inputs = understood(scn)
    if not args.json:
        for line in inputs.lines() + ["grid"] + [f"  {a.describe()}" for a in sw.axes]:
            print(line)
        sys.stdout.flush()
    cache = Cache(None if args.no_cache else (args.cache or default_cache_dir()))
    try:
        run_sweep(sw, cache=cache, workers=workers, scheduler=args.scheduler,
                  show_progress=None if not args.quiet else False, context=context)
    except Interrupted:
        # the finished points are cached (unless --no-cache): the same command resumes from them
        done = sum(k in sw.records for k in set(sw.keys))
        print(f"{scn.name}: sweep stopped after {done} of {len(set(sw.keys))} points"
              + ("" if args.no_cache else "; the finished points are cached: run the same command to resume")
              + "; no table or plots written (incomplete)", file=sys.stderr if args.json else sys.stdout)
        raise
    tables = write_table(sw, out)
    plots = [] if args.no_plots else write_plots(sw, out)
    doc = document(sw, inputs)
    write_pages(args, doc, "sweep")
    if args.json:
        print(json.dumps(doc, indent=2, allow_nan=False))
        return exit_code(sw)
    for line in summary(sw):
        print(line)
    print(f"table: {', '.join(str(t) for t in tables)}"
          + (f"; plots: {len(plots)} metrics (PNG and SVG) in {out}" if plots else ""))
    return exit_code(sw)
