"""Every subcommand's arguments and help texts: what the parser (:func:`qosbound.cli.build_parser`) is built from.

A light module (argparse and the paper names only): building the parser, for ``--help`` or to read any command
line, loads none of the commands' code. Each subcommand has one entry in :data:`COMMANDS` -- its name, the
module that runs it, its one-line help, its description -- and one function here adding its arguments to its
sub-parser (the parser passes ``add``, which makes a sub-parser in the house style, for commands with
subcommands of their own).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from qosbound.commands.reproduce import PAPERS

__all__ = ["COMMANDS", "Command"]

BATCH_NOTE = ("Several scenarios (files, a folder, a glob) are evaluated by the sweep's executor and summarised "
              "in one table (one row per scenario); a file that cannot be loaded is a row with its one-line "
              "error and the others still run. The batch exits with the most serious of its scenarios' codes: "
              "70 (internal error), then 2 (bad input), 4 (resource limit), 1 (an SLO violated), 3 (methods "
              "disagree), 0.")

ADMIT_DESCRIPTION = (
    "The search judges each value on the proved bounds first (the closed forms: an upper bound "
    "below a limit proves the SLO) and finds the value up to which bounds prove every SLO; "
    "beyond it the search method runs, only where bounds leave an SLO undecided. On the "
    "simulator a value is replicated in looks (16, 32, ... replications, one plan "
    "simulation's packets at the cap) until the interval decides the SLO, and the bracket is "
    "refined to 0.5 %. The answer says what decided it: bounds, or the method with the "
    "binding SLO's estimate and interval at the answer. "
    "Several scenarios (files, a folder, a glob) are one search each on the sweep's executor, "
    "summarised in one table (one row per scenario: the value, its method and binding SLO); a "
    "file that cannot be loaded is a row with its one-line error and the others still run. The "
    "batch exits with the most serious code: 70, then 2, 4, 1 (a scenario where no value meets "
    "every SLO), 0.")


def common(sp, scenario=True):
    """The scenario (one file) and the output options every scenario command has."""
    if scenario:
        sp.add_argument("scenario", help="scenario YAML file")
    sp.add_argument("--json", action="store_true", help="print the machine-readable form")
    sp.add_argument("--quiet", action="store_true",
                    help="no progress: no bar on a terminal, no plain progress lines elsewhere")


def scenarios(sp, replications: bool = False):
    """The scenarios of ``plan``, ``verify`` and ``admit``: one file, or a batch (files, a folder, a glob, router
    configurations), with the batch's executor options (``replications``: with one network file, they also run
    its simulated replications on Dask, as ``plan`` does)."""
    sp.add_argument("scenario", nargs="*", metavar="SCENARIO",
                    help="scenario YAML file; several files, a folder (its .yaml and .yml files) or a quoted glob "
                         "pattern run as a batch with one summary table; a router configuration (any other file) "
                         "is one scenario per port with an output policy")
    common(sp, scenario=False)
    config_arguments(sp)
    one = "; one network file: its simulated replications as Dask tasks" if replications else ""
    sp.add_argument("--workers", default="1", metavar="N",
                    help=f"batch: local Dask worker processes (1: one scenario after another in one child){one}")
    sp.add_argument("--scheduler", metavar="ADDRESS", help=f"batch: an existing Dask scheduler, e.g. "
                                                           f"tcp://host:8786{one}")
    sp.add_argument("--html", metavar="FILE", help="also write one self-contained HTML page of the results "
                                                   "(a batch: every scenario, with an index)")


def config_arguments(parser, *, folders: bool = True) -> None:
    """``--traffic``, ``--slos`` and (for commands that take many scenarios) ``--configs DIR``."""
    parser.add_argument("--traffic", metavar="T.yaml", help="router configurations: the traffic file (offered traffic "
                        "per class / DSCP / interface, interface rates); default: priority classes at their policer "
                        "rate, bandwidth classes saturated")
    parser.add_argument("--slos", metavar="SLOS.yaml", help="router configurations: the SLO file (slos: on every port "
                        "with the class; ports: per HOST:INTERFACE)")
    if folders:
        parser.add_argument("--configs", metavar="DIR", action="append", default=None,
                            help="a folder of router configurations: every port of every file (repeatable)")


def sweep(sp, add=None) -> None:
    """The ``sweep`` sub-command's options."""
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


def tune(sp, add=None) -> None:
    """The ``tune`` sub-command's options."""
    sp.add_argument("scenario", help="scenario YAML file")
    sp.add_argument("--vary", action="append", required=True, metavar="PARAM=SPEC",
                    help="a dotted parameter and its range: LO..HI (a real parameter: refined by SciPy; an integer "
                         "one: every integer), LO..HI:N, LO..HI:N:log or a,b,c (a grid); repeat for several")
    g = sp.add_mutually_exclusive_group(required=True)
    g.add_argument("--maximise", "--maximize", metavar="TARGET",
                   help="a varied parameter (traffic.EF.rate) or a metric (AF1.throughput) to make as large as "
                        "every SLO allows")
    g.add_argument("--minimise", "--minimize", metavar="TARGET", help="a varied parameter or a metric to minimise")
    sp.add_argument("--method", help="the method that computes the objective and the SLOs (default: closed-form "
                                     "when enabled); the closed form also judges SLOs this method cannot")
    sp.add_argument("--slo", action="append", default=[], metavar="METRIC<=LIMIT",
                    help="an extra SLO constraint (METRIC<=LIMIT or METRIC>=LIMIT; a time, rate or size limit with "
                         "its unit, e.g. 'EF.delay.p99<=2 ms', a probability bare); repeat for several")
    sp.add_argument("--coarse", default="5", metavar="N",
                    help="grid points per continuous axis in the first stage (default 5)")
    sp.add_argument("--cache", metavar="DIR", default=None,
                    help="keep the grid's points in this folder (the sweep's cache; default: none)")
    sp.add_argument("--workers", default="1", metavar="N", help="local Dask worker processes for the grid")
    sp.add_argument("--scheduler", metavar="ADDRESS", help="an existing Dask scheduler for the grid")
    sp.add_argument("--json", action="store_true", help="print the machine-readable form")
    sp.add_argument("--quiet", action="store_true", help="no progress bar")


def convert(sp, add=None) -> None:
    sp.add_argument("scenario", help="a pq_txq or af scenario YAML file (or a shipped example's name)")
    sp.add_argument("--out", default=None, metavar="DIR", help="folder for the port scenarios (default: standard "
                                                               "output)")


def tfrc(parser, add=None) -> None:
    parser.add_argument("--s", default="1500 B", help="packet size (default 1500 B)")
    parser.add_argument("--rtt", help="round-trip time R, e.g. 30ms")
    parser.add_argument("--loss", help="loss event rate p in (0, 1], e.g. 1%% or 0.01")
    parser.add_argument("--target", help="gTFRC target rate g, e.g. 400kbit/s")
    parser.add_argument("--x-recv", dest="x_recv", help="receiver-reported rate X_recv (caps gTFRC at 2 X_recv)")
    parser.add_argument("--b", default="1", help="packets acknowledged per ACK (RFC 5348: 1)")
    parser.add_argument("--t-rto", dest="t_rto", help="retransmission timeout (default 4 R)")
    parser.add_argument("--csv", metavar="FILE", help="table input: columns s, rtt, loss[, target, x_recv]")
    parser.add_argument("--json", action="store_true", help="print the machine-readable form")
    parser.add_argument("--quiet", action="store_true", help="accepted for symmetry with the other commands "
                                                              "(the calculator prints no progress)")


def import_(parser, add=None) -> None:
    parser.add_argument("configs", nargs="+", metavar="CONFIG",
                        help="configuration files or folders: Cisco IOS / IOS XE / IOS XR, Junos (curly-brace or set), "
                             "Linux tc (script or tc -j JSON), OpenConfig QoS JSON")
    parser.add_argument("--traffic", metavar="T.yaml",
                        help="traffic file: offered traffic per class / DSCP / interface and interface rates "
                             "(default: priority classes at their policer rate, bandwidth classes saturated)")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the port scenarios (created)")
    parser.add_argument("--json", action="store_true", help="print the machine-readable summary")
    parser.add_argument("--quiet", action="store_true", help="print only errors")


def diff(parser, add=None) -> None:
    parser.add_argument("old", metavar="OLD", help="configurations before: a folder or file (with --git: a revision)")
    parser.add_argument("new", metavar="NEW", help="configurations after: a folder or file (with --git: a revision)")
    parser.add_argument("path", nargs="?", default=None, metavar="DIR",
                        help="with --git: the folder of configurations in the repository (default: all of it)")
    parser.add_argument("--git", action="store_true", help="OLD and NEW are git revisions of DIR in the current "
                                                           "directory's repository")
    parser.add_argument("--traffic", metavar="T.yaml", help="the traffic file, for both sides")
    parser.add_argument("--slos", metavar="SLOS.yaml", help="the SLO file, for both sides")
    parser.add_argument("--methods", default="closed-form", help="comma-separated methods (default: closed-form)")
    parser.add_argument("--out", metavar="FILE", help="also write the Markdown summary to FILE")
    parser.add_argument("--json", action="store_true", help="print the machine-readable form instead")
    parser.add_argument("--html", metavar="FILE", help="also write one self-contained HTML page of the diff to FILE")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def plan(sp, add=None) -> None:
    scenarios(sp, replications=True)
    sp.add_argument("--methods", help="comma-separated subset: closed-form,model-checked,simulated,...")
    sp.add_argument("--max-states", dest="max_states", metavar="N",
                    help="budget on a model's states (overrides methods.model-checked.max_states): a larger model is "
                         "skipped, or refused (exit 4) when model-checked is asked for by --methods")


def verify(sp, add=None) -> None:
    scenarios(sp)
    sp.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report (it links to the --html page)")
    sp.add_argument("--markdown", metavar="FILE", help="also write a short Markdown summary for a merge-request "
                                                       "comment (it links to the --html page)")
    sp.add_argument("--methods", help="comma-separated subset of methods")
    sp.add_argument("--max-states", dest="max_states", metavar="N",
                    help="budget on a model's states (overrides methods.model-checked.max_states)")


def admit(sp, add=None) -> None:
    scenarios(sp)
    sp.add_argument("--vary", required=True, metavar="PARAM", help="dotted parameter, e.g. traffic.EF.rate")
    sp.add_argument("--direction", choices=["largest", "smallest"], default=None,
                    help="the largest (default) or smallest value meeting every SLO; for a TSQ hint "
                         "(flows.NAME.hint) the default is the quality-maximising hint")
    sp.add_argument("--method", help="method to search with (default: model-checked, else closed-form)")
    sp.add_argument("--min", help="lower end of the search range, in the parameter's units (e.g. '100 kbit/s'; "
                                  "a bare number only for a count or a probability)")
    sp.add_argument("--max", help="upper end of the search range, in the parameter's units (e.g. '2 Mbit/s'; "
                                  "a count bare, e.g. 4000 calls)")


def validate(sp, add=None) -> None:
    common(sp)
    g = sp.add_mutually_exclusive_group(required=True)
    g.add_argument("--simulate", action="store_true", help="qosbound's own simulator")
    g.add_argument("--ns3", action="store_true", help="ns-3 (needs the ns3 wheel)")
    g.add_argument("--trace", metavar="FILE", help="a trace (Parquet/CSV) or an ingress,egress pcap pair")
    sp.add_argument("--out", default="validation-out", help="folder for plots (PNG and SVG)")


def model(sp, add) -> None:
    msub = sp.add_subparsers(dest="model_command", required=True, parser_class=type(sp))
    r = add(msub, "render", help="write the PRISM model and properties for a scenario")
    r.add_argument("scenario", help="scenario YAML file (or a shipped example's name)")
    r.add_argument("--out", default=".", help="output folder")
    ch = add(msub, "check", help="check a PRISM model with a property file on Storm or PRISM")
    ch.add_argument("model", help=".prism file, or a scenario YAML")
    ch.add_argument("props", nargs="?", help=".props file (default: beside the model)")
    ch.add_argument("--const", action="append", default=[], help="NAME=VALUE for undefined constants")
    ch.add_argument("--engine", choices=["storm", "prism"], default="storm",
                    help="the model checker: Storm through stormpy (default) or PRISM on PATH")
    ch.add_argument("--exact", action="store_true", help="Storm's exact (rational) arithmetic")
    ch.add_argument("--precision", default="1e-10", help="requested relative precision, in (0, 0.1)")
    ch.add_argument("--max-states", dest="max_states", default="1e9",
                    help="refuse a model whose state space (product of its variable ranges) may exceed this")
    ch.add_argument("--json", action="store_true", help="print the machine-readable form")
    ch.add_argument("--quiet", action="store_true", help="no progress bar")


def reproduce(sp, add=None) -> None:
    sp.add_argument("paper", help=", ".join(PAPERS))
    sp.add_argument("--json", action="store_true", help="print the machine-readable form")
    sp.add_argument("--out", default=None, help="folder for figures")
    sp.add_argument("--quick", action="store_true", help="smaller simulations (for CI)")
    sp.add_argument("--quiet", action="store_true", help="no progress bar")


class Command(NamedTuple):
    """One subcommand: its name, the module that runs it (``run(args, context)``), its one-line help, its
    description (or None) and the function adding its arguments."""

    name: str
    module: str
    help: str
    description: str | None
    arguments: Callable


#: The subcommands, in the order ``--help`` lists them.
COMMANDS = (
    Command("plan", "qosbound.commands.plan", "every metric by every method, with SLO verdicts", BATCH_NOTE, plan),
    Command("verify", "qosbound.commands.verify", "check the SLOs (exit 1 when one fails)",
            BATCH_NOTE + " --junit then writes one report, a group of test suites per scenario.", verify),
    Command("admit", "qosbound.commands.admit", "largest (or smallest) parameter value meeting every SLO",
            ADMIT_DESCRIPTION, admit),
    Command("sweep", "qosbound.commands.sweep",
            "every method over a grid of parameter values: table, plots, SLO verdicts", None, sweep),
    Command("tune", "qosbound.commands.tune",
            "best setting of several parameters for an objective, every SLO a constraint", None, tune),
    Command("validate", "qosbound.commands.validate", "model and bounds against packet traces, with plots", None,
            validate),
    Command("model", "qosbound.commands.model", "render PRISM files for a scenario, or check any PRISM model",
            None, model),
    Command("convert", "qosbound.commands.convert", "a pq_txq or af scenario written as port scenarios", None,
            convert),
    Command("tfrc", "qosbound.commands.tfrc", "TFRC / gTFRC rate calculator", None, tfrc),
    Command("import", "qosbound.commands.import_", "router configurations (Cisco MQC, Junos, tc, OpenConfig) -> "
                                                   "port scenarios, with the configuration line behind every field",
            None, import_),
    Command("diff", "qosbound.commands.diff", "two versions of router configurations: per port and class what "
                                              "changed, the answers before and after, the SLOs that change state "
                                              "(Markdown; exit 1 when one breaks)", None, diff),
    Command("reproduce", "qosbound.commands.reproduce", "the tables and figures of a source paper", None, reproduce),
)
