"""Test configuration: Hypothesis profiles.

The suite is deterministic by default, wherever it runs (CI, ``.ci/run`` on a
laptop, a bare ``pytest``): the ``ci`` profile derives every test's examples
from its name (``derandomize=True``), so a run is reproducible and a red build
can be replayed exactly. A developer who wants Hypothesis to explore new
examples opts in with ``HYPOTHESIS_PROFILE=dev`` (random draws, failures kept
in the ignored ``.hypothesis/`` database).
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)

#: The profile in force: ``HYPOTHESIS_PROFILE`` if set (``ci`` or ``dev``), else the deterministic ``ci``.
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)
