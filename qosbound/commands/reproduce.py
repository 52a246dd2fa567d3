"""``qosbound reproduce PAPER``: the tables and figures of a source paper, with its claims judged
(:mod:`qosbound.reproduce`). The reproduction runs in the isolated child and prints as it goes: its output is
passed through, and its exit code returned."""

from __future__ import annotations

import importlib

from qosbound.errors import QosboundError, ScenarioError

__all__ = ["PAPERS", "run"]

#: The papers reproduced, each by its module (imported only when that paper is asked for).
PAPERS = {
    "ferrari2001": "qosbound.reproduce.ferrari2001",
    "takeo2003": "qosbound.reproduce.takeo2003",
    "koehler1999": "qosbound.reproduce.koehler1999",
    "qstp2008": "qosbound.reproduce.qstp2008",
    "tsq": "qosbound.reproduce.tsq",
}


def run(args, context) -> int:
    """``reproduce``: the paper's exit code (0 every claim met). ``context``: the run's
    :class:`~qosbound.commands.context.RunContext`."""
    if args.paper not in PAPERS:
        raise ScenarioError(f"unknown paper '{args.paper}'; expected one of {', '.join(PAPERS)}", field="paper")
    try:
        mod = importlib.import_module(PAPERS[args.paper])
    except ModuleNotFoundError:
        raise QosboundError(f"reproduce {args.paper}: not available in this version") from None
    return context.isolated(mod.run, args, what=f"reproduce {args.paper}", passthrough=True)
