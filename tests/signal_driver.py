"""Run ``qosbound`` with stage hooks, so that a test sends SIGINT / SIGTERM at a chosen stage deterministically.

Used by tests/test_signals.py as ``python tests/signal_driver.py ARGS...`` (ARGS as for ``qosbound``). Nothing
is mocked: the real commands run; the hooks only announce a stage and, where asked, wait there.

Environment:

* ``QB_EVENTS_FD``: the write end of a pipe; ``"<stage> <pid>\\n"`` is written there when a watched stage is
  reached (by this process or a child forked from it);
* ``QB_ACK_FD``: the read end of a pipe; at a blocking stage the process waits for one byte from it;
* ``QB_STAGES``: comma-separated ``stage:mode[:n]``: ``mode`` is ``block`` (wait for the test's byte) or ``pass``
  (announce and go on); ``n``: react the n-th time the stage is reached in that process (default 1).

Stages: ``load`` (the parent reads a scenario file), ``simulate`` (a batch of simulator replications starts,
in the engine's child), ``build`` (Storm starts building a model, in the child), ``plot`` (a figure is saved,
in the parent), ``evaluate`` (a batch scenario or sweep point is evaluated, in the child), ``record`` (a
finished point or scenario is stored, in the process that runs the executor), ``admit`` (an admission
search judges a value, in the child), ``reap`` (the parent reaps the engine's child after a signal: the
hook of :mod:`qosbound.interrupts`).
"""

from __future__ import annotations

import functools
import os
import sys

EVENTS = int(os.environ["QB_EVENTS_FD"])
ACK = int(os.environ["QB_ACK_FD"])
STAGES = {}
for item in filter(None, os.environ.get("QB_STAGES", "").split(",")):
    name, mode, *n = item.split(":")
    STAGES[name] = (mode, int(n[0]) if n else 1)
COUNTS: dict[str, int] = {}


def hit(stage: str, **info) -> None:
    spec = STAGES.get(stage)
    if spec is None:
        return
    COUNTS[stage] = COUNTS.get(stage, 0) + 1
    if COUNTS[stage] != spec[1]:
        return
    os.write(EVENTS, f"{stage} {os.getpid()}\n".encode())
    if spec[0] == "block":
        os.read(ACK, 1)


def announce(stage: str, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        hit(stage)
        return fn(*args, **kwargs)

    return wrapper


def everywhere(module, name: str, stage: str) -> None:
    """Wrap ``module.name`` with the stage's hook, in that module and in every loaded module that imported it by
    name (``from module import name`` binds the original when the importer loads)."""
    original = getattr(module, name)
    wrapped = announce(stage, original)
    for m in list(sys.modules.values()):
        if m is not None and getattr(m, name, None) is original:
            setattr(m, name, wrapped)


def install() -> None:
    import qosbound.admit as admit
    import qosbound.commands.admit  # noqa: F401 - every command module that binds a hooked function by name
    import qosbound.commands.batch as batch
    import qosbound.commands.batch_admit as batch_admit
    import qosbound.commands.plan  # noqa: F401
    import qosbound.commands.sweep  # noqa: F401
    import qosbound.commands.tune  # noqa: F401
    import qosbound.commands.validate  # noqa: F401
    import qosbound.commands.verify  # noqa: F401
    import qosbound.scenario as scenario
    import qosbound.sweep.cache as cache
    import qosbound.sweep.execute as execute
    import qosbound.validation.plots as plots
    import qosbound.validation.pq_txq_sim as sim
    from qosbound import interrupts

    everywhere(scenario, "load", "load")
    everywhere(sim, "simulate_batch", "simulate")
    everywhere(plots, "save", "plot")
    everywhere(batch, "evaluate_scenario", "evaluate")
    everywhere(batch_admit, "evaluate_admission", "evaluate")
    everywhere(execute, "evaluate_point", "evaluate")
    admit.Search.point = announce("admit", admit.Search.point)
    original_put = cache.Cache.put

    def put(self, key, rec):
        original_put(self, key, rec)
        hit("record")

    cache.Cache.put = put
    if "build" in STAGES:
        import stormpy

        stormpy.build_model = announce("build", stormpy.build_model)
    interrupts.HOOKS.append(lambda stage, **info: hit(stage))


if __name__ == "__main__":
    install()
    from qosbound.cli import main

    sys.argv = ["qosbound", *sys.argv[1:]]
    raise SystemExit(main())
