"""The ``qosbound`` command line. Errors are caught here once and printed as one line.

Exit codes: 0 success / every SLO holds; 1 an SLO is violated or methods
disagree; 2 bad input (the message names the file, the field and the problem).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import json
import sys

from qosbound.errors import QosboundError

__all__ = ["main"]

PAPERS = {
    "ferrari2001": "qosbound.reproduce.ferrari2001",
    "takeo2003": "qosbound.reproduce.takeo2003",
    "koehler1999": "qosbound.reproduce.koehler1999",
    "qstp2008": "qosbound.reproduce.qstp2008",
    "tsq": "qosbound.reproduce.tsq",
}


@contextlib.contextmanager
def engine_output_to_stderr():
    """Send file descriptor 1 to stderr while engines run: Storm's C++ code prints warnings on stdout,
    which would corrupt --json output. Python's own prints are unaffected once it is restored."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):  # no real stdout (e.g. captured in tests)
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        os.dup2(saved, 1)
        os.close(saved)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        self.exit(2, f"qosbound: {message}\n")


def _methods_arg(text: str | None):
    if text is None:
        return None
    from qosbound.results import METHODS

    out = [m.strip() for m in text.split(",") if m.strip()]
    for m in out:
        if m not in METHODS:
            raise QosboundError(f"--methods: unknown method '{m}'; expected one of {', '.join(METHODS)}")
    return out


def _evaluate(args, scn):
    """Every requested method (timed one by one), the SLO verdicts and the agreement verdicts.

    Returns (system, results, SLO verdicts, agreement verdicts, seconds per method)."""
    import time

    from qosbound.progress import progress
    from qosbound.systems import get_system
    from qosbound.verdicts import judge_slos

    system = get_system(scn.system)
    methods = _methods_arg(getattr(args, "methods", None)) or system.default_methods(scn)
    results = []
    seconds: dict[str, float] = {}
    with progress(None if not args.quiet else False) as prog, engine_output_to_stderr():
        for m in methods:
            t0 = time.perf_counter()
            results += system.evaluate(scn, [m], prog)
            seconds[m] = time.perf_counter() - t0
    slo_verdicts = judge_slos(system, scn, results)
    from qosbound.agreement import agreements

    agree = agreements(results) + (system.agreements(scn, results) if hasattr(system, "agreements") else [])
    return system, results, slo_verdicts, agree, seconds


def cmd_plan(args) -> int:
    from qosbound.report import render_json, render_text
    from qosbound.scenario import load
    from qosbound.verdicts import exit_code

    scn = load(args.scenario)
    system, results, slos, agree, _ = _evaluate(args, scn)
    verdicts = slos + agree
    if args.json:
        print(render_json(scn.name, results, verdicts, {"system": scn.system, "file": args.scenario,
                                                        "exit_code": exit_code(verdicts)}))
    else:
        render_text(scn.name, results, verdicts)
    return exit_code(verdicts)


def cmd_verify(args) -> int:
    """Decide on the SLOs; report method disagreements in their own section (exit 3 when every SLO holds but
    methods disagree). With --junit a report is written even when the scenario cannot be loaded or evaluated."""
    import time

    from qosbound.report import console, omitted, render_json, write_junit, write_junit_error
    from qosbound.scenario import load
    from qosbound.units import format_quantity
    from qosbound.verdicts import EXIT_DISAGREE, EXIT_OK, exit_code

    t0 = time.perf_counter()
    if args.junit:  # refuse an unwritable report before the whole evaluation runs
        from pathlib import Path

        j = Path(args.junit)
        if j.is_dir() or not j.parent.is_dir():
            raise QosboundError(f"--junit {args.junit}: "
                                f"{'is a directory' if j.is_dir() else 'its directory does not exist'}")
    try:
        scn = load(args.scenario)
        if not scn.slos:
            raise QosboundError(f"{args.scenario}: field 'slos': the scenario declares no SLOs to verify")
        system, results, slos, agree, seconds = _evaluate(args, scn)
    except QosboundError as e:
        if args.junit:
            from pathlib import Path

            write_junit_error(args.junit, Path(args.scenario).stem, e, time.perf_counter() - t0)
        raise
    verdicts = slos + agree
    if args.junit:
        write_junit(args.junit, scn.name, verdicts, seconds)
    code = exit_code(verdicts)
    if args.json:
        print(render_json(scn.name, [r for r in results if any(r.metric == v.metric for v in slos)], verdicts,
                          {"system": scn.system, "file": args.scenario, "ok": code == EXIT_OK,
                           "slos_hold": not any(v.failed for v in slos),
                           "methods_agree": not any(v.disagrees for v in agree), "exit_code": code}))
        return code
    from rich.markup import escape

    c = console()

    def q(x, unit):
        return format_quantity(x, unit) if x is not None else "-"

    c.print("[bold]SLOs[/]", highlight=False)
    for v in slos:
        kind = escape(f" [{v.result_kind}]") if v.result_kind else ""
        if v.failed:
            by = f"by {format_quantity(-v.margin, v.unit)} " if v.margin is not None else ""
            c.print(f"[bold red]FAIL[/] {v.name}: {v.status} {by}({v.method}{kind}: {q(v.value, v.unit)}, "
                    f"limit {q(v.limit, v.unit)}){' - ' + escape(v.detail) if v.detail else ''}", highlight=False)
        else:
            tag = "[yellow]WARN[/]" if v.status == "inconclusive" else "[green]ok[/]  "
            c.print(f"{tag} {v.name} ({v.method}{kind}: {q(v.value, v.unit)}, limit {q(v.limit, v.unit)})"
                    f"{' - ' + escape(v.detail) if v.detail else ''}", highlight=False)
    for line in omitted(results):
        c.print(f"[yellow]note[/] {escape(line)}", highlight=False)
    if agree:
        c.print("[bold]agreement between methods[/] (not SLOs: a disagreement is a finding about the methods)",
                highlight=False)
    for v in agree:
        tag = {"agree": "[green]agree[/]     ", "approximate": "[yellow]approximate[/]",
               "disagree": "[bold red]DISAGREE[/]  "}.get(v.status, v.status)
        c.print(f"{tag} {escape(v.name)} ({escape(v.result_kind)}) - {escape(v.detail)}", highlight=False)
    nf = sum(v.failed for v in slos)
    nd = sum(v.disagrees for v in agree)
    na = sum(v.status == "approximate" for v in agree)
    c.print(f"{scn.name}: SLOs {len(slos) - nf} hold, {nf} fail; methods: {len(agree) - nd - na} checks agree, "
            f"{na} approximate, {nd} disagree", highlight=False)
    if code == EXIT_DISAGREE:
        c.print(f"{scn.name}: every SLO holds but methods disagree (exit {EXIT_DISAGREE})", highlight=False)
    return code


def cmd_admit(args) -> int:
    from qosbound.admit import admit
    from qosbound.progress import progress
    from qosbound.scenario import load
    from qosbound.units import format_quantity

    scn = load(args.scenario)
    lo = float(args.min) if args.min is not None else None
    hi = float(args.max) if args.max is not None else None
    with progress(None if not args.quiet else False) as prog, engine_output_to_stderr():
        res = admit(scn, args.vary, direction=args.direction, method=args.method, lo=lo, hi=hi, progress=prog)
    if args.json:
        print(json.dumps({"scenario": scn.name, "parameter": res.parameter, "direction": res.direction,
                          "value": res.value, "unit": res.unit, "method": res.method, "binding_slo": res.binding,
                          "evaluations": res.evaluations, "message": res.message,
                          "history": [{"value": x, "margin": (m if m != float('-inf') else None)}
                                      for x, m in res.history]}, indent=2, allow_nan=False))
    else:
        if res.value is None:
            print(f"{scn.name}: no value of {res.parameter} meets every SLO ({res.message}; method {res.method})")
        else:
            print(f"{scn.name}: {res.direction} {res.parameter} with every SLO holding = "
                  f"{format_quantity(res.value, res.unit, digits=6)} (method {res.method}, "
                  f"binding SLO: {res.binding or '-'}, {res.evaluations} evaluations)"
                  f"{'; ' + res.message if res.message else ''}")
    return 0 if res.value is not None else 1


def cmd_validate(args) -> int:
    mod = importlib.import_module("qosbound.validate_cmd")
    return mod.run(args)


def cmd_model(args) -> int:
    from qosbound.models import cli as mcli

    return mcli.run(args)


def cmd_tfrc(args) -> int:
    mod = importlib.import_module("qosbound.tfrc_cli")
    return mod.run(args)


def cmd_reproduce(args) -> int:
    if args.paper not in PAPERS:
        raise QosboundError(f"unknown paper '{args.paper}'; expected one of {', '.join(PAPERS)}")
    try:
        mod = importlib.import_module(PAPERS[args.paper])
    except ModuleNotFoundError:
        raise QosboundError(f"reproduce {args.paper}: not available in this version") from None
    return mod.run(args)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="qosbound", description="Formal and analytic queueing models and a verifier for DiffServ "
                                             "router queues.")
    from qosbound import __version__

    p.add_argument("--version", action="version", version=f"qosbound {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(sp, scenario=True):
        if scenario:
            sp.add_argument("scenario", help="scenario YAML file")
        sp.add_argument("--json", action="store_true", help="print the machine-readable form")
        sp.add_argument("--quiet", action="store_true", help="no progress bar")

    sp = sub.add_parser("plan", help="every metric by every method, with SLO verdicts")
    common(sp)
    sp.add_argument("--methods", help="comma-separated subset: closed-form,model-checked,simulated,...")
    sp.set_defaults(func=cmd_plan)

    sp = sub.add_parser("verify", help="check the SLOs (exit 1 when one fails)")
    common(sp)
    sp.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report")
    sp.add_argument("--methods", help="comma-separated subset of methods")
    sp.set_defaults(func=cmd_verify)

    sp = sub.add_parser("admit", help="largest (or smallest) parameter value meeting every SLO")
    common(sp)
    sp.add_argument("--vary", required=True, metavar="PARAM", help="dotted parameter, e.g. traffic.EF.rate")
    sp.add_argument("--direction", choices=["largest", "smallest"], default="largest")
    sp.add_argument("--method", help="method to search with (default: model-checked, else closed-form)")
    sp.add_argument("--min", help="lower end of the search range (SI units)")
    sp.add_argument("--max", help="upper end of the search range (SI units)")
    sp.set_defaults(func=cmd_admit)

    sp = sub.add_parser("validate", help="model and bounds against packet traces, with plots")
    common(sp)
    g = sp.add_mutually_exclusive_group(required=True)
    g.add_argument("--simulate", action="store_true", help="qosbound's own simulator")
    g.add_argument("--ns3", action="store_true", help="ns-3 (needs the ns3 wheel)")
    g.add_argument("--trace", metavar="FILE", help="a trace (Parquet/CSV) or an ingress,egress pcap pair")
    sp.add_argument("--out", default="validation-out", help="folder for plots (PNG and SVG)")
    sp.set_defaults(func=cmd_validate)

    sp = sub.add_parser("model", help="render PRISM files for a scenario, or check any PRISM model")
    msub = sp.add_subparsers(dest="model_command", required=True, parser_class=_Parser)
    r = msub.add_parser("render", help="write the PRISM model and properties for a scenario")
    r.add_argument("scenario")
    r.add_argument("--out", default=".", help="output folder")
    r.set_defaults(func=cmd_model)
    ch = msub.add_parser("check", help="check a PRISM model with a property file on Storm or PRISM")
    ch.add_argument("model", help=".prism file, or a scenario YAML")
    ch.add_argument("props", nargs="?", help=".props file (default: beside the model)")
    ch.add_argument("--const", action="append", default=[], help="NAME=VALUE for undefined constants")
    ch.add_argument("--engine", choices=["storm", "prism"], default="storm")
    ch.add_argument("--exact", action="store_true", help="Storm's exact (rational) arithmetic")
    ch.add_argument("--precision", type=float, default=1e-10)
    ch.add_argument("--json", action="store_true")
    ch.add_argument("--quiet", action="store_true")
    ch.set_defaults(func=cmd_model)

    sp = sub.add_parser("tfrc", help="TFRC / gTFRC rate calculator")
    try:
        importlib.import_module("qosbound.tfrc_cli").add_arguments(sp)
    except ModuleNotFoundError:
        sp.add_argument("rest", nargs="*")
    sp.set_defaults(func=cmd_tfrc)

    sp = sub.add_parser("reproduce", help="the tables and figures of a source paper")
    sp.add_argument("paper", help=", ".join(PAPERS))
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--out", default=None, help="folder for figures")
    sp.add_argument("--quick", action="store_true", help="smaller simulations (for CI)")
    sp.add_argument("--quiet", action="store_true")
    sp.set_defaults(func=cmd_reproduce)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except QosboundError as e:
        from qosbound.errors import ScenarioError

        if isinstance(e, ScenarioError) and e.file is None and isinstance(getattr(args, "scenario", None), str):
            e = e.located(file=args.scenario)
        print(f"qosbound: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("qosbound: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
