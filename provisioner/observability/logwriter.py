"""The provisioner's JSON log: one Karpenter-shaped object per line.

Every line is built by ``provisioner.model.logvocab.record()`` from an event key of the
shared vocabulary; this writer only adds the level filter, the clock, the commit, and the
destinations (a text stream, a file appended to, and in-process listeners such as the
Event recorder or a test). It is thread-safe: launches run on a small pool.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import IO, Any

from provisioner.model.logvocab import record

__all__ = ["LEVELS", "LogWriter", "Record"]

LEVELS = {"DEBUG": 10, "INFO": 20, "WARN": 30, "ERROR": 40}
Record = dict[str, Any]


def _utcnow() -> datetime:
    return datetime.now(UTC)


class LogWriter:
    """Writes vocabulary records as JSON lines to a stream and/or a file."""

    def __init__(
        self,
        *,
        stream: IO[str] | None = None,
        path: str = "",
        level: str = "INFO",
        commit: str = "karp-0.1.0",
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        self._stream = stream
        self._file: IO[str] | None = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115
        self.path = path
        self._threshold = LEVELS[level]
        self._commit = commit
        self._clock = clock
        self._lock = threading.Lock()
        self._listeners: list[Callable[[Record], None]] = []

    def subscribe(self, listener: Callable[[Record], None]) -> None:
        """Call ``listener(record)`` for every record, whatever its level."""
        self._listeners.append(listener)

    def log(self, event: str, *, name: str = "", namespace: str = "", message: str | None = None, **fields: Any) -> Record:
        """Build and write the record for ``event`` (a key of ``logvocab.EVENTS``)."""
        rec = record(
            event, self._clock(), commit=self._commit, name=name, namespace=namespace, message=message, **fields
        )
        if LEVELS.get(rec["level"], 20) >= self._threshold:
            line = json.dumps(rec, separators=(",", ":"), ensure_ascii=False, default=str) + "\n"
            with self._lock:
                if self._stream is not None:
                    self._stream.write(line)
                    self._stream.flush()
                if self._file is not None:
                    self._file.write(line)
                    self._file.flush()
        for listener in list(self._listeners):
            listener(rec)
        return rec

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
