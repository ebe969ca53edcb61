"""The errors of a batch run's own files: its output and job record held by another runner, or
not what a run wrote. Both are :class:`~llm_core.errors.ConfigurationError` (the command line
exits 3): the fix is in the files or the choice of output, not in the items."""

from __future__ import annotations

from pathlib import Path

from llm_core.errors import ConfigurationError


class BatchBusyError(ConfigurationError):
    """Another runner is writing this output. ``pid``, ``host`` and ``started`` (ISO 8601,
    UTC) name it when it said who it is (``None`` otherwise)."""

    def __init__(
        self, message: str, *, pid: int | None = None, host: str | None = None, started: str | None = None
    ) -> None:
        super().__init__(message)
        self.pid = pid
        self.host = host
        self.started = started


class BatchFileError(ConfigurationError):
    """The output or the job record of a run is damaged, or is not this run's: ``path`` names the
    file, ``line`` the output line (``None`` for the record)."""

    def __init__(self, message: str, *, path: Path, line: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.line = line


__all__ = ["BatchBusyError", "BatchFileError"]
