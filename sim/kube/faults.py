"""Faults the emulator injects on request: slow answers, error statuses, dropped
watches and forced 410s, so client code can be tested against a misbehaving server.

Each rule matches a method and a path substring and may be limited to a number of
requests; rules are checked in the order they were added.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

__all__ = ["Faults", "Rule"]


@dataclass(slots=True)
class Rule:
    action: str  # "delay" | "status" | "expire"
    method: str | None = None
    path_contains: str | None = None
    remaining: int | None = None  # None: until cleared
    status: int = 500
    seconds: float = 0.0

    def matches(self, method: str, path: str, is_watch: bool) -> bool:
        if self.action == "expire" and not is_watch:
            return False
        if self.method and self.method.upper() != method:
            return False
        return not self.path_contains or self.path_contains in path


class Faults:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[Rule] = []
        self.drop_generation = 0

    def slow(self, seconds: float, *, method: str | None = None, path_contains: str | None = None, count: int | None = None) -> None:
        """Delay matching requests by ``seconds`` before answering."""
        self._add(Rule("delay", method, path_contains, count, seconds=seconds))

    def fail(self, status: int = 500, *, method: str | None = None, path_contains: str | None = None, count: int | None = 1) -> None:
        """Answer matching requests with ``status`` and a Status body."""
        self._add(Rule("status", method, path_contains, count, status=status))

    def expire_watches(self, count: int = 1, *, path_contains: str | None = None) -> None:
        """The next ``count`` matching watch requests get an ERROR event with a 410 Status."""
        self._add(Rule("expire", None, path_contains, count))

    def drop_watches(self) -> None:
        """Cut every open watch connection now, without the terminating chunk."""
        with self._lock:
            self.drop_generation += 1

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    def _add(self, rule: Rule) -> None:
        with self._lock:
            self._rules.append(rule)

    def take(self, method: str, path: str, is_watch: bool) -> list[Rule]:
        """The rules that apply to this request (consuming one use of each)."""
        taken: list[Rule] = []
        with self._lock:
            for rule in list(self._rules):
                if rule.matches(method, path, is_watch):
                    taken.append(rule)
                    if rule.remaining is not None:
                        rule.remaining -= 1
                        if rule.remaining <= 0:
                            self._rules.remove(rule)
        return taken
