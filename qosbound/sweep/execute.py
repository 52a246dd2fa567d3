"""Evaluating the points of a sweep: serially in this process, or on a Dask cluster.

A point is a scenario mapping with the varied parameters set. :func:`evaluate_point`
validates it (an invalid point is a record with its one-line reason, not an error),
runs every requested method and judges the SLOs and the agreement between methods;
it returns a JSON-able record, the same whichever process computes it. Simulation
seeds come from the point itself (:func:`point_seed`), never from the worker, so the
results do not depend on the number of workers.
"""

from __future__ import annotations

import contextlib
import copy
import ctypes
import hashlib
import logging
import os
import signal
import time

from qosbound import interrupts
from qosbound.agreement import agreements
from qosbound.commands.common import engine_output_to_stderr
from qosbound.commands.context import RunContext
from qosbound.commands.evaluation import evaluate_methods
from qosbound.errors import Interrupted, QosboundError, ScenarioError
from qosbound.progress import QUIET, report_partial_items, report_status
from qosbound.scenario import build
from qosbound.sweep.cache import Cache, canonical
from qosbound.systems import get_system
from qosbound.verdicts import judge_slos

__all__ = ["evaluate_point", "point_seed", "with_seed", "run_serial", "run_dask"]


#: Where a local cluster's scheduler serves HTTP: a free port. ``None`` still binds the default 8787, and when
#: another cluster holds it Dask warns on standard error, breaking a stopped run's one-line message.
SCHEDULER_HTTP = ":0"


def _reason(e: ScenarioError) -> str:
    return f"{e.field + ': ' if e.field else ''}{e.problem}"


def point_seed(base: int, point: dict) -> int:
    """The simulation seed of a point: the scenario's seed plus a hash of the point's parameter values."""
    h = int(hashlib.sha256(canonical(point).encode()).hexdigest()[:12], 16)
    return (int(base) + h) % 2**31


def with_seed(raw: dict, point: dict, methods: list[str]) -> dict:
    """``raw`` with ``methods.simulated.seed`` derived from the point, when the simulation is requested and the
    sweep does not vary the seed itself."""
    if "simulated" not in methods or "methods.simulated.seed" in point:
        return raw
    out = copy.deepcopy(raw)
    section = out.setdefault("methods", {})
    if not isinstance(section, dict):
        return raw  # invalid: the point's validation says so
    sim = section.get("simulated")
    if sim is None:
        sim = section["simulated"] = {}
    if not isinstance(sim, dict):
        return raw
    base = sim.get("seed", 1)
    if not isinstance(base, int) or isinstance(base, bool):
        return raw
    sim["seed"] = point_seed(base, point)
    return out


def evaluate_point(raw: dict, path: str | None, methods: list[str]) -> dict:
    """Validate and evaluate one point in this process; a record {'status': 'ok' | 'invalid' | 'error', ...}
    (see the module docstring)."""
    try:
        scn = build(raw, path)
    except ScenarioError as e:
        return {"status": "invalid", "reason": _reason(e)}
    system = get_system(scn.system)
    try:
        with engine_output_to_stderr():
            results, _, _ = evaluate_methods(system, scn, methods, QUIET)
    except Interrupted:
        raise
    except ScenarioError as e:  # refused at this point (e.g. an unstable regime, a model above its budget)
        return {"status": "invalid", "reason": _reason(e)}
    except QosboundError as e:
        return {"status": "error", "reason": str(e), "exit_code": e.exit_code}
    slos = judge_slos(system, scn, results)
    agree = agreements(results) + system.agreements(scn, results)
    return {"status": "ok", "reason": "", "results": [r.to_json() for r in results],
            "slos": [v.to_json() for v in slos], "agreements": [v.to_json() for v in agree]}


Task = tuple  # (key, raw mapping)


def _die_with_parent(parent: int) -> None:
    """In a forked child: be killed when the sweep's process dies (even of SIGKILL), so no orphan goes on
    computing points that the next run would compute again. Linux only; elsewhere the loop checks the parent."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)


def _batch(tasks: list[Task], path: str | None, methods: list[str], cache_folder, parent: int | None = None,
           progress=None, evaluate=None, label: str | None = None) -> dict:
    """Every task in turn, each record stored in the cache as soon as it is finished; {key: record}.

    ``parent``: the pid of the sweep's process when this runs in a child of it. ``evaluate(raw, path, methods)``
    computes a record (default :func:`evaluate_point`); ``label`` names the work on the progress bar."""
    evaluate = evaluate or evaluate_point
    forked = parent is not None and os.getpid() != parent
    if forked:
        _die_with_parent(parent)
    cache = Cache(cache_folder)
    advance = progress.task(label or f"sweep: {len(tasks)} points", len(tasks)) if progress is not None else None
    out = {}
    for i, (key, raw) in enumerate(tasks):
        if forked and os.getppid() != parent:
            os._exit(1)
        interrupts.check()  # in this process (no fork): a signal whose exception was lost stops at the next point
        report_status(progress, f"{label or 'sweep'}: point {i + 1} of {len(tasks)}")
        rec = evaluate(raw, path, methods)
        out[key] = rec
        if rec["status"] != "error":  # an engine failure is not a property of the point: retried next time
            cache.put(key, rec)
        report_partial_items(progress, {key: rec}, out)  # a finished point, for a report marked incomplete
        if advance is not None:
            advance()
    return out


def run_serial(tasks: list[Task], path: str | None, methods: list[str], cache, progress, *, evaluate=None,
               label: str | None = None, context: RunContext | None = None) -> dict:
    """Every task in turn in one forked child (as ``plan`` runs its engines: Ctrl-C stops it at once, an
    engine crash is one line), storing each finished point in ``cache``; {key: record}. ``evaluate`` and
    ``label``: as for :func:`_batch`; ``context``: the command's run context (its memory limit and debug
    output for the child; default: none)."""
    with engine_output_to_stderr():
        return (context or RunContext()).isolated(_batch, list(tasks), path, methods, cache.folder, os.getpid(),
                                                  evaluate=evaluate, label=label,
                                                  what=label or f"a sweep of {len(tasks)} points", progress=progress)


def run_dask(tasks: list[Task], path: str | None, methods: list[str], cache, progress, *, workers: int = 2,
             scheduler: str | None = None, client=None, evaluate=None, label: str | None = None) -> dict:
    """Every task on Dask: a local cluster of ``workers`` single-threaded processes, the cluster at
    ``scheduler``, or an open distributed ``client``. Each record is stored in ``cache`` by this process as soon as its point finishes (the
    cache needs no shared file system); {key: record}."""
    try:
        from distributed import Client, LocalCluster, as_completed  # optional (the dask extra)
    except ImportError:
        raise ScenarioError("needs Dask's distributed scheduler: pip install 'qosbound[dask]'",
                            field="--scheduler" if scheduler else "--workers") from None

    tasks = list(tasks)
    with contextlib.ExitStack() as stack:
        if client is not None:
            pass
        elif scheduler:
            try:
                client = stack.enter_context(Client(scheduler, timeout="10s"))
            except (OSError, TimeoutError, ValueError) as e:
                raise ScenarioError(f"cannot reach the Dask scheduler at '{scheduler}': {e}",
                                    field="--scheduler") from None
        else:
            cluster = stack.enter_context(LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                       dashboard_address=SCHEDULER_HTTP, memory_limit=0,
                                                       silence_logs=logging.ERROR))
            client = stack.enter_context(Client(cluster))
        futures = {client.submit(evaluate or evaluate_point, raw, path, methods, key=f"qosbound-point-{key}",
                                 pure=False): key for key, raw in tasks}
        advance = progress.task(label or f"sweep: {len(tasks)} points", len(tasks))
        out = {}
        try:
            pending = as_completed(futures, with_results=False)
            while len(out) < len(futures):
                # wait in short steps: the progress line keeps its rhythm and a signal is acted on promptly
                batch = pending.next_batch(block=False) if not pending.is_empty() else []
                if not batch:
                    time.sleep(0.2)
                    tick = getattr(progress, "tick", None)
                    if tick is not None:
                        tick()
                    continue
                for fut in batch:
                    key, rec = futures[fut], fut.result()
                    out[key] = rec
                    if rec["status"] != "error":
                        cache.put(key, rec)
                    report_partial_items(progress, {key: rec}, out)
                    advance()
        except (interrupts.Stopped, KeyboardInterrupt, Interrupted) as e:
            _quiet_shutdown(client, futures)
            if isinstance(e, Interrupted):
                raise
            raise interrupts.stopped(label or "the sweep", dict(out), getattr(e, "signum", None)) from None
        except BaseException:
            client.cancel(list(futures))
            raise
    return out


def _quiet_shutdown(client, futures) -> None:
    """Cancel the work and silence Dask's loggers: a cluster torn down by a signal (its workers may have had it
    too) logs connection errors with tracebacks that say nothing to the user."""
    for name in ("distributed", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    try:
        client.cancel(list(futures))
    except Exception:  # noqa: BLE001 - the cluster may already be gone
        pass
