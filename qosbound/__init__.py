"""qosbound: formal and analytic queueing models and a verifier for DiffServ router queues.

Three independent methods answer each question -- closed forms (SymPy, in
``qosbound.analytic``), probabilistic models in the PRISM language checked on
Storm (``qosbound.models``) and packet traces (``qosbound.validation``) -- and
their results are compared with each other and with service-level objectives.
"""

import os as _os

__version__ = "0.1.0"
__all__ = ["__version__"]

# In an installed copy, models/, analytic/ and validation/ live inside this package (pyproject.toml maps
# them). Imported from a source checkout (e.g. with the checkout first on sys.path), they are the checkout's
# top-level folders: add the checkout root to this package's search path so the same names resolve.
_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if (not _os.path.isdir(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "models"))
        and _os.path.isfile(_os.path.join(_root, "models", "__init__.py"))
        and _os.path.isfile(_os.path.join(_root, "pyproject.toml"))):
    __path__.append(_root)  # noqa: F821 - __path__ is defined for packages
del _root
