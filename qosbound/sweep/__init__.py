"""``qosbound sweep``: a scenario evaluated over a grid of parameter values, by every method.

Each point is the scenario with the varied parameters set, validated again (an
invalid point is recorded with its reason), evaluated by the requested methods and
judged against the SLOs and across methods. Points run in this process or on Dask
(:mod:`qosbound.sweep.execute`); each finished point is cached on disk
(:mod:`qosbound.sweep.cache`), so an interrupted sweep resumes where it stopped. See
``docs/sweep.md``.
"""

from __future__ import annotations

import json
import sys

from qosbound.sweep.cache import Cache, default_cache_dir
from qosbound.sweep.grid import Axis, parse_vary
from qosbound.sweep.run import Sweep, prepare, run, table_rows

__all__ = ["Axis", "Cache", "Sweep", "add_arguments", "default_cache_dir", "main", "parse_vary", "prepare", "run",
           "table_rows"]


def add_arguments(sp) -> None:
    """The ``sweep`` sub-command's options."""
    from qosbound.configs_cli import add_arguments as config_arguments

    sp.add_argument("scenario", help="scenario YAML file, or a router configuration with one output port")
    config_arguments(sp, folders=False)
    sp.add_argument("--vary", action="append", required=True, metavar="PARAM=SPEC",
                    help="a dotted parameter and its values: LO..HI:N, LO..HI:N:log or a,b,c, in the parameter's "
                         "units (e.g. traffic.BE.sizes.0.size=100B..1450B:14); repeat for a grid")
    sp.add_argument("--methods", help="comma-separated methods (default: the scenario's)")
    sp.add_argument("--out", default="sweep-out", help="folder for the table (CSV, Parquet) and the plots")
    sp.add_argument("--cache", metavar="DIR", default=None,
                    help="folder of finished points (default: the user's cache folder, qosbound/sweep)")
    sp.add_argument("--no-cache", dest="no_cache", action="store_true", help="neither read nor store points")
    sp.add_argument("--workers", default="1", metavar="N",
                    help="local Dask worker processes (1: one point after another in this process)")
    sp.add_argument("--scheduler", metavar="ADDRESS", help="an existing Dask scheduler, e.g. tcp://host:8786")
    sp.add_argument("--no-plots", dest="no_plots", action="store_true", help="write the table only")
    sp.add_argument("--json", action="store_true", help="print the machine-readable form (every point's results "
                                                        "and verdicts) instead of the summary")
    sp.add_argument("--html", metavar="FILE", help="also write one self-contained HTML page: the SLOs over the "
                                                   "grid and every metric's curves")
    sp.add_argument("--quiet", action="store_true",
                    help="no progress: no bar on a terminal, no plain progress lines elsewhere")


def _workers(text) -> int:
    from qosbound.errors import ScenarioError

    try:
        n = int(text)
    except (TypeError, ValueError):
        raise ScenarioError(f"expected a number of worker processes, got '{text}'", field="--workers") from None
    if not 1 <= n <= 1024:
        raise ScenarioError(f"must be between 1 and 1024, got {n}", field="--workers")
    return n


def main(args) -> int:
    """The ``sweep`` command: returns its exit code (0, 1 an SLO fails somewhere, 3 methods disagree)."""
    from pathlib import Path

    from qosbound.cli import _methods_arg
    from qosbound.model_cmd import check_output_dir
    from qosbound.scenario import load
    from qosbound.sweep.run import document, exit_code, summary, write_plots, write_table

    from qosbound.errors import Interrupted, ScenarioError

    workers = _workers(args.workers)
    check_output_dir(args.out, "--out")
    out = Path(args.out)
    try:  # before any point is computed
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ScenarioError(f"cannot create '{args.out}': {e.strerror}", field="--out") from None
    scn = load(args.scenario)
    sw = prepare(scn, args.vary, _methods_arg(args.methods))
    from qosbound.cli import understood

    inputs = understood(scn)
    if not args.json:
        for line in inputs.lines() + ["grid"] + [f"  {a.describe()}" for a in sw.axes]:
            print(line)
        sys.stdout.flush()
    cache = Cache(None if args.no_cache else (args.cache or default_cache_dir()))
    try:
        run(sw, cache=cache, workers=workers, scheduler=args.scheduler,
            show_progress=None if not args.quiet else False)
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
    from qosbound.cli import write_pages

    write_pages(args, doc, "sweep")
    if args.json:
        print(json.dumps(doc, indent=2, allow_nan=False))
        return exit_code(sw)
    for line in summary(sw):
        print(line)
    print(f"table: {', '.join(str(t) for t in tables)}"
          + (f"; plots: {len(plots)} metrics (PNG and SVG) in {out}" if plots else ""))
    return exit_code(sw)
