"""qosbound.validation: the packet simulator, trace I/O, the ns-3 runner, and comparisons."""
