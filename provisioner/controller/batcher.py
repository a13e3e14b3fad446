"""The batching window that turns a stream of pod arrivals into one planning pass.

A window opens with the first provisionable pod and closes when no *new* pod arrived
for ``idle`` seconds, or ``max`` seconds after it opened, whichever comes first
(Karpenter's BATCH_IDLE_DURATION 1 s and BATCH_MAX_DURATION 10 s). The batch is a
trigger: the planning pass then looks at every provisionable pod in the snapshot.

Time comes from an injected monotonic clock; ``ready(now)`` and ``deadline()`` are pure
so tests advance a fake clock. ``wait()`` blocks a worker thread on a condition variable
until the window closes, a ``trigger()`` asks for an immediate pass, or ``stop()``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

__all__ = ["Batcher"]


class Batcher:
    def __init__(self, idle: float = 1.0, maximum: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        if idle <= 0 or maximum <= 0:
            raise ValueError("batch durations must be positive")
        self.idle = idle
        self.maximum = maximum
        self._clock = clock
        self._cond = threading.Condition()
        self._seen: set[str] = set()
        self._pending: list[str] = []
        self._opened: float | None = None
        self._last: float | None = None
        self._forced = False
        self._stopped = False

    def add(self, keys: Iterable[str]) -> int:
        """Record pods seen provisionable; only keys not yet in the open window count as new."""
        now = self._clock()
        with self._cond:
            added = 0
            for key in keys:
                if key in self._seen:
                    continue
                self._seen.add(key)
                self._pending.append(key)
                added += 1
            if added:
                if self._opened is None:
                    self._opened = now
                self._last = now
                self._cond.notify_all()
            return added

    def poke(self) -> None:
        """Open (or extend) the window as a new pod would: a pass follows after ``idle``."""
        now = self._clock()
        with self._cond:
            if self._opened is None:
                self._opened = now
            self._last = now
            self._cond.notify_all()

    def trigger(self) -> None:
        """Ask for a planning pass as soon as possible (a launch failed, capacity came back...)."""
        with self._cond:
            self._forced = True
            self._cond.notify_all()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    @property
    def stopped(self) -> bool:
        return self._stopped

    def deadline(self) -> float | None:
        """When the open window closes, None when no window is open."""
        if self._opened is None or self._last is None:
            return None
        return min(self._last + self.idle, self._opened + self.maximum)

    def ready(self, now: float | None = None) -> bool:
        """Whether a pass should run now: the window closed, or a pass was asked for."""
        if self._forced:
            return True
        deadline = self.deadline()
        return deadline is not None and (self._clock() if now is None else now) >= deadline

    def take(self) -> list[str]:
        """Close the window and return the pod keys that opened or extended it."""
        with self._cond:
            batch = self._pending
            self._pending = []
            self._seen = set()
            self._opened = None
            self._last = None
            self._forced = False
            return batch

    def wait(self, timeout: float | None = None) -> list[str] | None:
        """Block until the window closes (returns its keys), or ``timeout``/``stop()`` (None)."""
        start = self._clock()
        with self._cond:
            while not self._stopped:
                now = self._clock()
                if self.ready(now):
                    break
                deadline = self.deadline()
                remaining = [] if deadline is None else [deadline - now]
                if timeout is not None:
                    left = start + timeout - now
                    if left <= 0:
                        return None
                    remaining.append(left)
                self._cond.wait(min(remaining) if remaining else None)
            if self._stopped:
                return None
        return self.take()
