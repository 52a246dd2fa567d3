"""Test configuration: Hypothesis profiles.

Locally Hypothesis draws new examples on every run (and keeps failures in its
ignored .hypothesis/ database). In CI (``CI`` set) the examples are derived
from each test's name, so a run is reproducible and a red build can be
replayed exactly.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
