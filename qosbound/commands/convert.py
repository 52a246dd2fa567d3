"""``qosbound convert SCENARIO [--out DIR]``: a ``pq_txq`` or ``af`` scenario written as ``port`` scenarios.

One port per file (``af``: one per CBWFQ case), each validated by the port schema before it is written.
Without ``--out`` the ports go to standard output as YAML documents separated by ``---``; with it, each to
``DIR/<name>.yaml``. Notes (what changes, what is left out) go to standard error. The conversion itself is
:mod:`qosbound.systems.port.convert`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from qosbound.errors import ScenarioError
from qosbound.shipped import resolve_scenario
from qosbound.systems.port.convert import convert

__all__ = ["add_arguments", "run"]


def add_arguments(sp) -> None:
    sp.add_argument("scenario", help="a pq_txq or af scenario YAML file (or a shipped example's name)")
    sp.add_argument("--out", default=None, metavar="DIR", help="folder for the port scenarios (default: standard "
                                                               "output)")


def run(args) -> int:
    path = resolve_scenario(args.scenario)
    ports, notes = convert(path)
    for n in notes:
        print(f"note: {n}", file=sys.stderr)
    if args.out is None:
        sys.stdout.write(yaml.safe_dump_all(ports, sort_keys=False, allow_unicode=True))
        return 0
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for p in ports:
            f = out / f"{p['name']}.yaml"
            f.write_text(yaml.safe_dump(p, sort_keys=False, allow_unicode=True))
            print(f, file=sys.stderr)
    except OSError as e:
        raise ScenarioError(f"cannot write '{args.out}': {e.strerror}", field="--out") from None
    return 0
