"""Test configuration: Hypothesis profiles, and the long tests first.

The suite is deterministic by default, wherever it runs (CI, ``.ci/run`` on a
laptop, a bare ``pytest``): the ``ci`` profile derives every test's examples
from its name (``derandomize=True``), so a run is reproducible and a red build
can be replayed exactly. A developer who wants Hypothesis to explore new
examples opts in with ``HYPOTHESIS_PROFILE=dev`` (random draws, failures kept
in the ignored ``.hypothesis/`` database).
"""

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import settings

# Progress lines (on stderr, every QOSBOUND_PROGRESS_INTERVAL seconds in a non-interactive run) depend on how
# long a command takes, hence on the machine's load: off for the suite and the commands it starts, so that a
# test of a command's stderr does not see them by chance; tests/test_progress.py sets the interval it tests.
os.environ.setdefault("QOSBOUND_PROGRESS_INTERVAL", "1e9")

#: The solutions and runs kept for the test run (qosbound/systems/solve_cache.py: the ring method's, reproduce's
#: network runs, validate's ns-3 runs): one folder for the whole run, created by the process pytest starts in and
#: inherited by its xdist workers and by every command a test runs (the installed wheel's too: its code
#: fingerprint is asserted equal to the checkout's), so a port the README, the docs pages, the examples and the
#: agreement tests all plan is solved once, and a paper's quick runs are made once. A fresh folder each run
#: (removed at its end): no run reads another's. A developer's own QOSBOUND_CACHE_DIR is left as it is.
_OWN_CACHE: list[Path] = []


def pytest_configure(config):
    if hasattr(config, "workerinput") or os.environ.get("QOSBOUND_CACHE_DIR"):
        return
    folder = Path(tempfile.mkdtemp(prefix="qosbound-test-solutions-"))
    os.environ["QOSBOUND_CACHE_DIR"] = str(folder)
    _OWN_CACHE.append(folder)


def pytest_unconfigure(config):
    for folder in _OWN_CACHE:
        shutil.rmtree(folder, ignore_errors=True)


settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)

#: The profile in force: ``HYPOTHESIS_PROFILE`` if set (``ci`` or ``dev``), else the deterministic ``ci``.
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)


#: Tests known to take a minute or more besides those marked ``slow``: the docs pages that run every command.
_LONG_PREFIXES = ("tests/test_docs.py::test_page_runs_top_to_bottom",)


def pytest_collection_modifyitems(session, config, items):
    """Run the long tests first (a stable sort: the order is otherwise unchanged and the same on every xdist
    worker), so that with ``-n 2`` they spread over both workers instead of one of them finishing alone."""
    def long(item) -> bool:
        return item.get_closest_marker("slow") is not None or item.nodeid.startswith(_LONG_PREFIXES)

    items.sort(key=lambda item: 0 if long(item) else 1)
