"""``qosbound plan SCENARIO``: every metric by every method, with the SLO verdicts and the agreement between
methods. Several scenarios (files, a folder, a glob, a router's ports) are a batch (:mod:`.batch`).

With one file, ``--workers N`` (N > 1: a local Dask cluster of N single-threaded processes) or ``--scheduler
ADDRESS`` (an existing cluster) run a network's simulated replications as Dask tasks, each reduced to its
estimates on its worker (:mod:`qosbound.systems.network.distributed`); the results are the serial run's. Other
systems have no replications to distribute: they refuse the options (exit 2). Without Dask installed,
``--workers`` runs the replications one after another with a one-line note; ``--scheduler`` is refused."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import sys

from qosbound import interrupts
from qosbound.commands import batch
from qosbound.commands.common import understood, workers_arg, write_pages
from qosbound.commands.evaluation import evaluate, report_interrupted, with_max_states
from qosbound.errors import Interrupted, ScenarioError
from qosbound.report import json_document, render_text
from qosbound.scenario import load
from qosbound.systems import get_system
from qosbound.verdicts import exit_code

__all__ = ["replications", "run"]


def run(args, context) -> int:
    """``plan``: its exit code (0, 1 an SLO is violated, 3 methods disagree). ``context``: the run's
    :class:`~qosbound.commands.context.RunContext`."""
    if not batch.single_file(args):
        return batch.main(args, context, verify=False)
    workers = workers_arg(args.workers)
    scn = inputs = None
    try:
        scn = with_max_states(args, load(args.scenario))
        on_dask = replications(scn, workers, args.scheduler)
        inputs = understood(scn)
        with on_dask:
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


def replications(scn, workers: int, scheduler: str | None):
    """Where one file's simulated replications run (module docstring): a context for the evaluation."""
    if not scheduler and workers <= 1:
        return contextlib.nullcontext()
    option = "--scheduler" if scheduler else "--workers"
    on = getattr(get_system(scn.system), "replications_on", None)  # only a system that can distribute them has it
    if on is None:
        raise ScenarioError(f"a {scn.system} scenario has no replications to distribute: with one file, {option} runs "
                            "a network's simulated replications on Dask (several files run as a batch)", field=option)
    if not _dask_installed():
        if scheduler:
            raise ScenarioError("needs Dask's distributed scheduler: pip install 'qosbound[dask]'", field=option)
        print("qosbound: note: Dask's distributed is not installed; running the replications one after another",
              file=sys.stderr)
        return contextlib.nullcontext()
    return on(workers, scheduler)


def _dask_installed() -> bool:
    """Whether Dask's distributed scheduler is installed (found, not imported: the workers import it)."""
    try:
        return importlib.util.find_spec("distributed") is not None
    except ValueError:  # a module entry set to None (imports of it refused)
        return False
