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
import importlib
import sys
import traceback
from pathlib import Path

from qosbound import __version__, interrupts
from qosbound.commands.arguments import COMMANDS
from qosbound.commands.common import check_outputs, memory_arg, names_configurations
from qosbound.commands.context import RunContext
from qosbound.commands.reproduce import PAPERS
from qosbound.errors import (EXIT_INTERNAL, EXIT_INTERRUPT, Interrupted, InternalError, QosboundError, ResourceError,
                             ScenarioError)
from qosbound.incomplete import incomplete_suites
from qosbound.report import write_junit_batch
from qosbound.shipped import resolve_scenario
from qosbound.systems.solve_cache import cache_folder

__all__ = ["PAPERS", "build_parser", "main"]

#: The module that runs each subcommand (``run(args, context)``), imported only when that subcommand is chosen.
MODULES = {c.name: c.module for c in COMMANDS}

#: The commands whose scenarios may be router configurations (:mod:`qosbound.commands.router_configs`).
CONFIG_COMMANDS = ("plan", "verify", "admit", "sweep")

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

solutions kept between runs:
  QOSBOUND_CACHE_DIR=FOLDER keeps the ring method's chain and upper bound (the costly
  model-checked answers of large tx-rings), the simulated replications of pq_txq scenarios
  and ports, reproduce's network runs and validate's ns-3 runs in FOLDER, keyed by their
  inputs and the code; an unchanged port is answered from it, its provenance saying "read
  back"; a paper reproduced again reruns no simulation
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        self.exit(2, f"qosbound: {message}\n")


def _global_options() -> argparse.ArgumentParser:
    g = argparse.ArgumentParser(add_help=False)
    g.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="on an internal error print the full traceback (and the engines' own log output)")
    g.add_argument("--max-memory", dest="max_memory", metavar="SIZE", default=argparse.SUPPRESS,
                   help="address-space limit for engine work, e.g. '4 GB' (exceeding it: exit 4)")
    return g


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand (:data:`qosbound.commands.arguments.COMMANDS`), each with the global options
    and the exit codes in its help."""
    glob = _global_options()
    fmt = argparse.RawDescriptionHelpFormatter
    p = _Parser(prog="qosbound", description="Formal and analytic queueing models and a verifier for DiffServ "
                                             "router queues.", epilog=EPILOG, parents=[glob], formatter_class=fmt)
    p.add_argument("--version", action="version", version=f"qosbound {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def add(sub_, name, **kw):
        return sub_.add_parser(name, parents=[glob], epilog=EPILOG, formatter_class=fmt, **kw)

    for c in COMMANDS:
        c.arguments(add(sub, c.name, help=c.help, description=c.description), add)
    return p


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


def _print_error(text: str) -> None:
    try:
        print(f"qosbound: {text}", file=sys.stderr)
    except (OSError, ValueError):
        pass


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit code (see the module docstring). SIGINT and SIGTERM end the run with 130 / 143
    and one line, at any stage, once or repeated (:mod:`qosbound.interrupts`)."""
    context = RunContext()
    with interrupts.handling(program=argv is None):
        try:
            return _main(argv, context)
        except (interrupts.Stopped, KeyboardInterrupt) as e:
            code = interrupts.exit_code(EXIT_INTERRUPT if isinstance(e, KeyboardInterrupt) else e.exit_code)
            if context.junit is None:  # stopped before verify took charge of its report
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
    suite = Path(names[0]).stem if names else "qosbound"
    try:
        write_junit_batch(path, suite, [incomplete_suites(suite, error)])
    except QosboundError:
        pass


def _main(argv: list[str] | None, context: RunContext) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(_join_negative_values(parser, argv))
    context.debug = bool(getattr(args, "debug", False))
    try:
        return _run(args, context)
    except Interrupted as e:
        _print_error(str(e))
        return interrupts.exit_code(e.exit_code)
    except QosboundError as e:
        if isinstance(e, ScenarioError) and e.file is None and isinstance(getattr(args, "scenario", None), str) \
                and not (e.field or "").startswith("--"):
            e = e.located(file=args.scenario)
        if isinstance(e, InternalError):
            if context.debug and e.details:
                print(e.details, file=sys.stderr, end="")
            _print_error(f"internal error: {e}" + ("" if context.debug else " (rerun with --debug for the traceback)"))
        else:
            _print_error(str(e))
        return e.exit_code
    except MemoryError:
        if context.debug:
            traceback.print_exc()
        _print_error(str(ResourceError("out of memory; make the scenario smaller, or allow more memory")))
        return ResourceError.exit_code
    except BrokenPipeError:
        return 0
    except Exception as e:  # noqa: BLE001 - the one place an unexpected failure becomes one line
        if context.debug:
            traceback.print_exc()
        _print_error(f"internal error: {e.__class__.__name__}: {e}"
                     + ("" if context.debug else " (rerun with --debug for the traceback)"))
        return EXIT_INTERNAL


def _run(args, context: RunContext) -> int:
    """The chosen subcommand, after the global options are read and the inputs and outputs are checked."""
    cache_folder()  # QOSBOUND_CACHE_DIR, when set, is a folder that can be written (else exit 2 before any work)
    if getattr(args, "max_memory", None) is not None:
        context.max_memory = memory_arg(args.max_memory)
    if args.command in CONFIG_COMMANDS and names_configurations(args):
        # the importers and the port schema load only when a router configuration is named
        importlib.import_module("qosbound.commands.router_configs").prepare(args)
    if isinstance(getattr(args, "scenario", None), str):  # a shipped example by name: `plan ferrari2001`
        args.scenario = resolve_scenario(args.scenario)
    check_outputs(args)
    # only the chosen command's code is loaded: every other command's stays unread (the CLI starts fast)
    return int(importlib.import_module(MODULES[args.command]).run(args, context) or 0)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
