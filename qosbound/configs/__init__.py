"""Router configurations in: Cisco MQC (IOS, IOS XE, IOS XR), Junos class-of-service, Linux tc, OpenConfig QoS
-> ``port`` scenarios with the configuration line behind every field.

The layers: :mod:`~qosbound.configs.detect` (format from content) -> a parser per vendor to its AST with
``file:line`` on every node -> the vendor's semantics (its queueing meaning, platform defaults labelled, notes and
refusals) -> :class:`~qosbound.configs.port.Port` -> :class:`~qosbound.configs.imported.ImportedPort` (the
scenario as a dict + its origin). :func:`load_configs` runs them all.
"""

from qosbound.configs.imported import ORIGIN_FIELDS, ImportedPort
from qosbound.configs.load import ImportReport, import_configs, load_configs
from qosbound.configs.traffic import TrafficSpec, load_traffic

__all__ = ["load_configs", "import_configs", "ImportReport", "ImportedPort", "ORIGIN_FIELDS", "TrafficSpec",
           "load_traffic"]
