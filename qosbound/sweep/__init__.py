"""A scenario evaluated over a grid of parameter values, by every method (the engine of ``qosbound sweep``,
:mod:`qosbound.commands.sweep`, and of ``tune``'s grid stage).

Each point is the scenario with the varied parameters set, validated again (an
invalid point is recorded with its reason), evaluated by the requested methods and
judged against the SLOs and across methods. Points run in this process or on Dask
(:mod:`qosbound.sweep.execute`); each finished point is cached on disk
(:mod:`qosbound.sweep.cache`), so an interrupted sweep resumes where it stopped. See
``docs/sweep.md``.
"""

from __future__ import annotations

from qosbound.sweep.cache import Cache, default_cache_dir
from qosbound.sweep.grid import Axis, parse_vary
from qosbound.sweep.run import Sweep, prepare, run, table_rows

__all__ = ["Axis", "Cache", "Sweep", "default_cache_dir", "parse_vary", "prepare", "run", "table_rows"]
