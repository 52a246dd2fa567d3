"""Error types. Library code raises these where it finds the problem; the CLI prints each as one line.

Exit codes (shared by every command; :mod:`qosbound.cli` documents them to users):

====  =====================================================================
0     success: every SLO holds (and methods agree)
1     an SLO is violated
2     bad input: a scenario, trace, model, router configuration or argument is refused
      (:class:`ScenarioError`, :class:`ConfigError`, :class:`TraceError`, :class:`ModelError`,
      :class:`EngineError`)
3     methods disagree while every SLO holds (:mod:`qosbound.verdicts`)
4     a resource limit is exhausted: memory, a state-space or simulation
      budget (:class:`ResourceError`)
70    internal error: a bug in qosbound or an engine (:class:`InternalError`);
      rerun with ``--debug`` for the traceback
130   interrupted (Ctrl-C, SIGINT); 143 terminated (SIGTERM)
====  =====================================================================
"""

from __future__ import annotations

__all__ = ["QosboundError", "ScenarioError", "ConfigError", "ConfigRefused", "UnsupportedFormat", "ModelError", "EngineError", "TraceError", "ResourceError",
           "MethodNotApplicable", "SKIPPABLE", "InternalError", "Interrupted", "EXIT_RESOURCE", "EXIT_INTERNAL", "EXIT_INTERRUPT", "EXIT_TERMINATED"]

EXIT_RESOURCE = 4
EXIT_INTERNAL = 70
EXIT_INTERRUPT = 130
EXIT_TERMINATED = 143


class QosboundError(Exception):
    """Base class of every error qosbound reports to the user."""

    exit_code = 2


class ScenarioError(QosboundError):
    """A scenario file (or a parameter value) is malformed or describes an unstable regime.

    The message names the file, the field (dotted path) and the problem.
    """

    def __init__(self, problem: str, *, file: str | None = None, field: str | None = None):
        self.file = file
        self.field = field
        self.problem = problem
        super().__init__(self._format())

    def __reduce__(self):  # keep file and field across pickling (errors cross process boundaries)
        return (_rebuild_scenario_error, (type(self), self.problem, self.file, self.field))

    def _format(self) -> str:
        where = []
        if self.file:
            where.append(str(self.file))
        if self.field and self.field.startswith("-"):  # a command-line option
            where.append(self.field)
        elif self.field:
            where.append(f"field '{self.field}'")
        prefix = ": ".join(where)
        return f"{prefix}: {self.problem}" if prefix else self.problem

    def located(self, file: str | None = None, prefix: str | None = None) -> "ScenarioError":
        """Return a copy with a file name and/or a field-path prefix filled in."""
        field = self.field
        if prefix:
            field = f"{prefix}.{field}" if field else prefix
        return type(self)(self.problem, file=self.file or file, field=field)


def _rebuild_scenario_error(cls, problem, file, field):
    return cls(problem, file=file, field=field)


class ConfigError(ScenarioError):
    """A router configuration cannot be imported as written: names the file, the line and the construct.

    Printed as ``FILE:LINE: 'CONSTRUCT': problem`` (the construct is the configuration text, shortened)."""

    def __init__(self, problem: str, *, file: str | None = None, line: int | None = None,
                 construct: str | None = None, field: str | None = None):
        self.line = line
        self.construct = construct
        super().__init__(problem, file=file, field=field)

    def __reduce__(self):
        return (_rebuild_config_error, (type(self), self.problem, self.file, self.line, self.construct, self.field))

    def _format(self) -> str:
        where = str(self.file or "")
        if self.line is not None:
            where = f"{where}:{self.line}" if where else f"line {self.line}"
        parts = [where] if where else []
        if self.construct:
            text = " ".join(self.construct.split())
            parts.append(repr(text if len(text) <= 80 else text[:77] + "..."))
        if self.field:
            parts.append(f"field '{self.field}'")
        return ": ".join(parts + [self.problem])

    def located(self, file: str | None = None, prefix: str | None = None) -> "ConfigError":
        field = f"{prefix}.{self.field}" if prefix and self.field else (prefix or self.field)
        return type(self)(self.problem, file=self.file or file, line=self.line, construct=self.construct, field=field)


class ConfigRefused(ConfigError):
    """A construct of a router configuration that cannot be modelled honestly (e.g. ``fq_codel``, a three-level
    hierarchy): the message says why."""


class UnsupportedFormat(ConfigError):
    """A configuration file in a format the importer does not read (NX-OS, EOS, SONiC, binary ...): the message
    names the format detected."""


def _rebuild_config_error(cls, problem, file, line, construct, field):
    return cls(problem, file=file, line=line, construct=construct, field=field)


class ModelError(QosboundError):
    """A PRISM model or property file cannot be parsed, built or checked."""


class EngineError(QosboundError):
    """A requested engine (Storm, PRISM, ns-3) is missing or failed."""

    exit_code = 2


class TraceError(QosboundError):
    """A packet trace or capture is malformed, truncated or inconsistent."""


class ResourceError(ScenarioError):
    """Memory, a state-space budget or a simulation budget is exhausted (or would be: estimated up front).

    The message says what ran out, the estimate or limit, and what to change; ``file`` and ``field`` name
    the scenario setting responsible, when there is one.
    """

    exit_code = EXIT_RESOURCE


class MethodNotApplicable(ScenarioError):
    """A method that does not cover the scenario (e.g. the PRISM model of the PQ + TxQ port with a best-effort
    load: its slot-start chain is exact only while the line never idles). Bad input (exit 2) when the method is
    asked for by name; skipped with this reason when the scenario merely enables it, as a model above its state
    budget is (:data:`SKIPPABLE`)."""


#: Errors that skip a method the scenario merely enables (the others still answer), with the error as reason.
SKIPPABLE = (ResourceError, MethodNotApplicable)


class InternalError(QosboundError):
    """An unexpected failure: a bug in qosbound or a crash of an engine. ``details`` holds the traceback."""

    exit_code = EXIT_INTERNAL

    def __init__(self, message: str, details: str = ""):
        self.details = details
        super().__init__(message)

    def __reduce__(self):
        return (InternalError, (str(self), self.details))


class Interrupted(QosboundError):
    """The run was stopped by SIGINT (Ctrl-C, exit 130) or SIGTERM (exit 143).

    ``partial`` carries what the stopped work had done (the last value it reported, see
    :class:`qosbound.progress.Progress`), for a report marked incomplete; None when nothing was reported."""

    def __init__(self, message: str = "interrupted", exit_code: int = EXIT_INTERRUPT, partial=None):
        self.exit_code = exit_code
        self.partial = partial
        super().__init__(message)

    def __reduce__(self):
        return (Interrupted, (str(self), self.exit_code, self.partial))
