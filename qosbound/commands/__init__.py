"""The subcommands, one module each, named after the command (``qosbound convert`` -> :mod:`.convert`)."""
