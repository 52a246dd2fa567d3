"""qosbound.models: PRISM-language models of the queueing systems, and the engine glue (Storm, PRISM)."""
