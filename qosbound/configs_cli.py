"""Router configurations as the scenarios of ``plan``, ``verify``, ``admit`` and ``sweep``.

``qosbound verify router.cfg --traffic traffic.yaml --slos slos.yaml`` and ``qosbound verify --configs DIR --slos
slos.yaml``: every configuration named (a positional argument that is a file but not a YAML scenario) or found in
a ``--configs`` folder is imported (:func:`qosbound.configs.import_configs`, with the traffic file), each port gets
the SLOs of the SLO file that concern its classes (:mod:`qosbound.configs.slos`), and becomes a scenario held in
memory under the label ``FILE#INTERFACE`` -- the commands then run on it as on a scenario file (several ports
are a batch). A port whose policy cannot be modelled stays in the run as its refusal (exit 2, naming the file and
the line), so the other ports are still checked. The class lines every answer carries come from the port
system (:mod:`qosbound.systems.port.origin`).
"""

from __future__ import annotations

from pathlib import Path

from qosbound.errors import ConfigError, QosboundError

__all__ = ["add_arguments", "prepare", "is_config", "port_label"]

#: Suffixes of scenario files: every other file named on the command line is read as a configuration.
_SCENARIO_SUFFIXES = (".yaml", ".yml")


def add_arguments(parser, *, folders: bool = True) -> None:
    """``--traffic``, ``--slos`` and (for commands that take many scenarios) ``--configs DIR``."""
    parser.add_argument("--traffic", metavar="T.yaml", help="router configurations: the traffic file (offered traffic "
                        "per class / DSCP / interface, interface rates); default: priority classes at their policer "
                        "rate, bandwidth classes saturated")
    parser.add_argument("--slos", metavar="SLOS.yaml", help="router configurations: the SLO file (slos: on every port "
                        "with the class; ports: per HOST:INTERFACE)")
    if folders:
        parser.add_argument("--configs", metavar="DIR", action="append", default=None,
                            help="a folder of router configurations: every port of every file (repeatable)")


def is_config(arg) -> bool:
    """A command-line argument naming a configuration file: an existing file that is not a YAML scenario."""
    return isinstance(arg, str) and Path(arg).is_file() and Path(arg).suffix.lower() not in _SCENARIO_SUFFIXES


def port_label(port) -> str:
    """The name an imported port goes by as a scenario: ``FILE#INTERFACE``."""
    return f"{port.file}#{port.interface}"


def prepare(args) -> None:
    """Replace the configurations among ``args.scenario`` (and the ``--configs`` folders) by their ports'
    in-memory scenarios (module docstring); nothing to do when none is named. ``args.per_slo`` is set for the
    JUnit report (one testcase per SLO per port)."""
    # the importers and the port schema load only when a configuration is named: every command's parser is
    # built with add_arguments, which must stay cheap
    from qosbound.configs import import_configs  # noqa: PLC0415
    from qosbound.configs.load import expand_paths  # noqa: PLC0415
    from qosbound.configs.slos import SLOSpec, check_all_used, load_slos, slos_for  # noqa: PLC0415
    from qosbound.scenario import register_virtual  # noqa: PLC0415

    scen = getattr(args, "scenario", None)
    single = isinstance(scen, str)
    items = [scen] if single else list(scen or [])
    configs = [a for a in items if is_config(a)]
    folders = list(getattr(args, "configs", None) or [])
    traffic, slo_file = getattr(args, "traffic", None), getattr(args, "slos", None)
    if not configs and not folders:
        if traffic or slo_file:
            raise QosboundError("--traffic and --slos apply to router configurations: name a configuration file or "
                                "--configs DIR")
        if not items:
            raise QosboundError("name a scenario file, a router configuration, or --configs DIR")
        return
    for d in folders:
        if not Path(d).is_dir():
            raise QosboundError(f"--configs {d}: not a folder")
        if not expand_paths([d]):
            raise QosboundError(f"--configs {d}: the folder holds no configuration files")
    report = import_configs(configs + folders, traffic)
    ports = report.ports
    if not ports:
        named = ", ".join(configs + folders)
        raise ConfigError("no interface has an output policy: nothing to check", file=named)
    spec = load_slos(slo_file) if slo_file else SLOSpec()
    used: set[int] = set()
    labels = []
    for p in ports:
        label = port_label(p)
        slos = slos_for(p, spec, used)
        if p.refusals:
            register_virtual(label, p.refusals[0])
        else:
            raw = p.document()
            if slos:
                raw["slos"] = slos
            register_virtual(label, raw)
        labels.append(label)
    check_all_used(spec, used, ports)
    args.per_slo = True
    if single:
        if len(labels) != 1:
            raise QosboundError(f"{scen}: {len(labels)} ports ({', '.join(p.interface for p in ports)}); this command "
                                "takes one: write them with 'qosbound import' and name one port's scenario")
        args.scenario = labels[0]
    else:
        args.scenario = [a for a in items if a not in configs] + labels
