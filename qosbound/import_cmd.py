"""``qosbound import CONFIG... [--traffic T.yaml] --out DIR``: router configurations -> ``port`` scenarios.

One scenario per interface with an output policy, named ``<host>_<interface>_out.yaml``; each field's
configuration line (or the platform default assumed) is in the file's ``origin:`` section. A port whose policy
cannot be modelled is not written: the first refusal is the error (exit 2), the others are listed.
"""

from __future__ import annotations

import json
import sys

from qosbound.configs import import_configs
from qosbound.configs.writer import file_names, write_ports
from qosbound.model_cmd import check_output_dir

__all__ = ["add_arguments", "run"]


def add_arguments(parser) -> None:
    parser.add_argument("configs", nargs="+", metavar="CONFIG",
                        help="configuration files or folders: Cisco IOS / IOS XE / IOS XR, Junos (curly-brace or set), "
                             "Linux tc (script or tc -j JSON), OpenConfig QoS JSON")
    parser.add_argument("--traffic", metavar="T.yaml",
                        help="traffic file: offered traffic per class / DSCP / interface and interface rates "
                             "(default: priority classes at their policer rate, bandwidth classes saturated)")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the port scenarios (created)")
    parser.add_argument("--json", action="store_true", help="print the machine-readable summary")
    parser.add_argument("--quiet", action="store_true", help="print only errors")


def run(args) -> int:
    check_output_dir(args.out, "--out")
    report = import_configs(args.configs, args.traffic)
    good = [p for p in report.ports if not p.refusals]
    names = {id(p): n for n, p in file_names(good).items()}
    written = write_ports(good, args.out)
    refusals = report.refusals
    if args.json:
        doc = {"out": str(args.out), "formats": report.formats,
               "ports": [{"name": p.name, "file": p.file, "written": names.get(id(p)), "host": p.host,
                          "interface": p.interface, "classes": [c["name"] for c in p.scenario["classes"]],
                          "assumptions": len(p.assumptions), "not_modelled": p.not_modelled,
                          "refusals": [str(e) for e in p.refusals]} for p in report.ports],
               "notes": report.notes, "exit_code": 2 if refusals else 0}
        print(json.dumps(doc, indent=2))
    elif not args.quiet:
        for path, fmt in report.formats.items():
            ports = [p for p in report.ports if p.file == path]
            print(f"{path}: {fmt}, {len(ports)} port{'s' if len(ports) != 1 else ''} with an output policy")
            for p in ports:
                if p.refusals:
                    print(f"  {p.interface}: refused ({p.refusals[0]})")
                else:
                    print(f"  {p.interface}: {args.out}/{names[id(p)]} ({len(p.scenario['classes'])} classes, "
                          f"{len(p.assumptions)} assumed defaults, {len(p.not_modelled)} notes)")
            for n in report.notes.get(path, []):
                print(f"  note: {n}")
        print(f"{len(written)} port scenario{'s' if len(written) != 1 else ''} written to {args.out}")
    if refusals:
        for e in refusals[1:]:
            print(f"qosbound: {e}", file=sys.stderr)
        raise refusals[0]
    if not report.ports and not args.json and not args.quiet:
        print("note: no interface has an output policy: nothing to write", file=sys.stderr)
    return 0
