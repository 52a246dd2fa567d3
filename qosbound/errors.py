"""Error types. Library code raises these where it finds the problem; the CLI prints each as one line.

Exit codes (shared by every command; :mod:`qosbound.cli` documents them to users):

====  =====================================================================
0     success: every SLO holds (and methods agree)
1     an SLO is violated
2     bad input: a scenario, trace, model or argument is refused
      (:class:`ScenarioError`, :class:`TraceError`, :class:`ModelError`,
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

__all__ = ["QosboundError", "ScenarioError", "ModelError", "EngineError", "TraceError", "ResourceError",
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
