"""qosbound: formal and analytic queueing models and a verifier for DiffServ router queues.

Three independent methods answer each question -- closed forms (SymPy, in
``qosbound.analytic``), probabilistic models in the PRISM language checked on
Storm (``qosbound.models``) and packet traces (``qosbound.validation``) -- and
their results are compared with each other and with service-level objectives.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
