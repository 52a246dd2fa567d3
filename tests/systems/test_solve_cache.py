"""qosbound/systems/solve_cache.py: solutions kept between runs only when QOSBOUND_CACHE_DIR is set, read back
for the same function, inputs and code, never for others; a read-back answer equals a fresh solve and says so."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest

from qosbound.errors import ScenarioError
from qosbound.progress import QUIET
from qosbound.scenario import build, load
from qosbound.systems import get_system, pq_txq, solve_cache
from qosbound.systems.solve_cache import ENV, cached
from tests.helpers import ROOT, example
from tests.models.test_pq_txq_ring import IMIX, raw

CALLS: list[tuple] = []


def square(x, *, offset=0):
    CALLS.append((x, offset))
    return x * x + offset


def cube(x, *, offset=0):
    CALLS.append(("cube", x))
    return x ** 3 + offset


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, str(tmp_path / "solutions"))
    CALLS.clear()
    return tmp_path / "solutions"


def test_without_the_variable_nothing_is_kept(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    CALLS.clear()
    assert cached(square, 3) == (9, False)
    assert cached(square, 3) == (9, False)
    assert len(CALLS) == 2


def test_the_same_question_is_solved_once_and_read_back(folder):
    assert cached(square, 3, offset=1) == (10, False)
    assert cached(square, 3, offset=1) == (10, True)
    assert CALLS == [(3, 1)]
    assert len(list(folder.rglob("*.pickle"))) == 1


def test_other_inputs_or_another_function_are_solved_anew(folder):
    cached(square, 3, offset=1)
    assert cached(square, 3, offset=2) == (11, False)
    assert cached(square, 4, offset=1) == (17, False)
    assert cached(cube, 3, offset=1) == (28, False)  # same arguments, another function
    assert len(CALLS) == 4


def test_a_change_of_the_code_gives_new_keys(folder, monkeypatch):
    cached(square, 5)
    monkeypatch.setattr(solve_cache, "code_fingerprint", lambda: "another version of the code")
    assert cached(square, 5) == (25, False)
    assert len(CALLS) == 2


def test_an_unreadable_or_foreign_record_is_solved_again(folder):
    cached(square, 6)
    (record,) = folder.rglob("*.pickle")
    record.write_bytes(b"not a pickle")
    assert cached(square, 6) == (36, False)
    record.write_bytes(pickle.dumps(("another key", 0)))
    assert cached(square, 6) == (36, False)
    assert cached(square, 6) == (36, True)
    assert len(CALLS) == 3


def test_an_error_is_raised_not_kept(folder):
    def fails(x):
        CALLS.append(x)
        raise ValueError("no")

    for _ in range(2):
        with pytest.raises(ValueError):
            cached(fails, 1)
    assert CALLS == [1, 1] and not list(folder.rglob("*.pickle"))


def test_a_folder_that_cannot_be_made_is_one_error_naming_the_variable(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(ENV, str(blocker / "solutions"))
    with pytest.raises(ScenarioError, match="cannot create the cache folder") as e:
        cached(square, 1)
    assert str(e.value).startswith(f"{ENV}: cannot create the cache folder")


def test_the_fingerprint_covers_the_models_folder():
    import qosbound.models

    solve_cache.code_fingerprint.cache_clear()
    try:
        assert len(solve_cache.code_fingerprint()) == 64
        # the models' folder lies beside qosbound/ in a checkout, inside it in a wheel: both are read
        from pathlib import Path

        assert any(Path(qosbound.models.__file__).parent.glob("pq_txq_ring*.py"))
    finally:
        solve_cache.code_fingerprint.cache_clear()


def test_a_ring_port_read_back_gives_the_fresh_solve_and_says_so(folder):
    """Through the pq_txq system: a 12-packet ring (the ring chain and its upper bound), planned twice."""
    scn = build({**raw(12, "2 Mbit/s", 200, IMIX, 16, link="10 Mbps"),
                 "metrics": {"ccdf_at": ["1 ms"], "quantiles": [0.99, 0.999]}})
    first = pq_txq.evaluate(scn, ["model-checked"], QUIET)
    second = pq_txq.evaluate(scn, ["model-checked"], QUIET)
    assert any(r.interval.kind.value == "upper bound" for r in first)  # the bound is among the answers
    assert [(r.metric, r.value, r.interval) for r in first] == [(r.metric, r.value, r.interval) for r in second]
    assert all("cache" not in r.provenance for r in first)
    assert all(r.provenance["cache"].startswith("read back") for r in second)
    assert len(list(folder.rglob("*.pickle"))) == 2  # the chain and the bound


def test_simulated_replications_read_back_give_the_fresh_run_and_say_so(folder):
    """pq_txq's and the port's simulators: the same scenario and seed simulated twice give the same results, the
    second read back (and saying so), the progress bar still completed; another seed is simulated anew."""
    steps = []

    class Bar:
        def task(self, label, total):
            return lambda n=1: steps.append(n)

    scn = build({**raw(12, "2 Mbit/s", 200, IMIX, 16, link="10 Mbps"),
                 "methods": {"simulated": {"packets": 20_000, "replications": 3, "seed": 5}}})
    first = pq_txq.evaluate(scn, ["simulated"], Bar())
    second = pq_txq.evaluate(scn, ["simulated"], Bar())
    assert [(r.metric, r.value, r.interval) for r in first] == [(r.metric, r.value, r.interval) for r in second]
    assert all("cache" not in r.provenance for r in first)
    assert all(r.provenance["cache"].startswith("read back") for r in second)
    assert sum(steps) == 6  # three replications run, then three read back at once
    other = build({**scn.raw, "methods": {"simulated": {"packets": 20_000, "replications": 3, "seed": 6}}})
    assert all("cache" not in r.provenance for r in pq_txq.evaluate(other, ["simulated"], QUIET))
    port = get_system("port")
    pscn = load(example("port_branch10m"))
    pscn = build({**pscn.raw, "methods": {"simulated": {"packets": 20_000, "replications": 2}}}, pscn.path)
    a, b = port.evaluate(pscn, ["simulated"], QUIET), port.evaluate(pscn, ["simulated"], QUIET)
    assert [(r.metric, r.value, r.interval) for r in a] == [(r.metric, r.value, r.interval) for r in b]
    assert all(r.provenance["cache"].startswith("read back") for r in b if r.method == "simulated")


def test_the_command_line_refuses_a_bad_folder_in_one_line(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {k: v for k, v in __import__("os").environ.items()}
    env[ENV] = str(blocker / "solutions")
    proc = subprocess.run([sys.executable, "-m", "qosbound", "plan", str(ROOT / "examples" / "wan100.yaml"),
                           "--methods", "model-checked", "--quiet"], capture_output=True, text=True, env=env,
                          cwd=str(tmp_path), timeout=600)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"qosbound: {ENV}: cannot create the cache folder"), proc.stderr
