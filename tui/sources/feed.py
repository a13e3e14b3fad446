"""Sources that keep delivering: the shape every live source has.

A ``Feed`` is polled from a worker thread. Each ``poll()`` returns what is new: records
(rows of the normalised table: log lines, Kubernetes Events) and/or a ``Snapshot`` of
pods, NodeClaims and quota. A poll that cannot reach its cluster or cloud raises
``FeedError``; the app shows it and polls again later, it never stops for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from diagnose.findings import Finding
from tui.state import Snapshot

__all__ = ["Feed", "FeedError", "FeedUpdate"]


class FeedError(Exception):
    """A poll failed (connection lost, refused, timed out); the message is shown as is."""


@dataclass(slots=True)
class FeedUpdate:
    records: list[dict[str, Any]] = field(default_factory=list)
    snapshot: Snapshot | None = None
    note: str = ""  # what was read, for the status line
    findings: list[Finding] | None = None  # karp-diagnose's findings over everything read so far


class Feed(Protocol):
    label: str  # "live: context aks-demo, westus2", "sim: http://127.0.0.1:…"
    interval: float  # seconds between polls

    def poll(self) -> FeedUpdate: ...

    def close(self) -> None: ...
