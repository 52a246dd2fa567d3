"""Error types. Library code raises these; the CLI prints them as one line and exits 2 (input) or 3 (engine)."""

from __future__ import annotations

__all__ = ["QosboundError", "ScenarioError", "ModelError", "EngineError", "TraceError"]


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

    def _format(self) -> str:
        where = []
        if self.file:
            where.append(str(self.file))
        if self.field:
            where.append(f"field '{self.field}'")
        prefix = ": ".join(where)
        return f"{prefix}: {self.problem}" if prefix else self.problem

    def located(self, file: str | None = None, prefix: str | None = None) -> "ScenarioError":
        """Return a copy with a file name and/or a field-path prefix filled in."""
        field = self.field
        if prefix:
            field = f"{prefix}.{field}" if field else prefix
        return ScenarioError(self.problem, file=self.file or file, field=field)


class ModelError(QosboundError):
    """A PRISM model or property file cannot be parsed, built or checked."""


class EngineError(QosboundError):
    """A requested engine (Storm, PRISM, ns-3) is missing or failed."""

    exit_code = 2


class TraceError(QosboundError):
    """A packet trace or capture is malformed, truncated or inconsistent."""
