"""Kubernetes Events, posted the way Karpenter posts them, off the hot path.

``EventRecorder.record()`` only enqueues; a background thread posts core/v1 Events
with ``source.component`` and ``reportingController``/``reportingComponent``
``"karpenter"`` so ``kubectl get events --field-selector source=karpenter`` and other
habits keep working. It:

- deduplicates: the same type and reason about the same object within the window
  (2 minutes) updates the existing Event (``count`` + 1, ``series``, last timestamp,
  latest message) instead of creating a new one;
- rate limits with a token bucket (``qps``, ``burst``): Events over the limit are
  dropped and counted, never queued without bound;
- caps messages at 1024 characters;
- logs and counts failures to post, and never raises to the caller.
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from provisioner.kube.connection import EVENTS, RawApi
from provisioner.model.kube_port import KubeError, NotFound

__all__ = ["COMPONENT", "MAX_MESSAGE", "EventRecorder", "RecorderStats", "object_reference"]

Obj = dict[str, Any]
COMPONENT = "karpenter"
MAX_MESSAGE = 1024
log = logging.getLogger(__name__)


def object_reference(obj: Obj) -> Obj:
    """An ObjectReference for a full object or a reference-shaped dict."""
    meta = obj.get("metadata")
    if meta is None:
        return {k: v for k, v in obj.items() if k in ("apiVersion", "kind", "name", "namespace", "uid", "resourceVersion") and v}
    ref = {"apiVersion": obj.get("apiVersion", ""), "kind": obj.get("kind", ""), "name": meta.get("name", ""),
           "namespace": meta.get("namespace", ""), "uid": meta.get("uid", ""), "resourceVersion": meta.get("resourceVersion", "")}
    return {k: v for k, v in ref.items() if v}


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _micro(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(slots=True)
class RecorderStats:
    posted: int = 0
    aggregated: int = 0
    dropped: int = 0
    failed: int = 0


@dataclass(slots=True)
class _Seen:
    name: str
    namespace: str
    count: int
    first: float  # monotonic time of the first occurrence in this window


class EventRecorder:
    def __init__(self, raw: RawApi, *, component: str = COMPONENT, instance: str | None = None, dedup_window: float = 120.0,
                 qps: float = 10.0, burst: int = 25, queue_size: int = 1000, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], datetime] = lambda: datetime.now(UTC), allowed: Callable[[], bool] | None = None) -> None:
        self.raw = raw
        self.component = component
        self.instance = instance or socket.gethostname()
        self.dedup_window = dedup_window
        self.qps = qps
        self.burst = burst
        self.clock = clock
        self.wall = wall
        self.allowed = allowed
        self.stats = RecorderStats()
        self._tokens = float(burst)
        self._refilled = clock()
        self._seen: dict[tuple[str, ...], _Seen] = {}
        self._queue: queue.Queue[tuple[Obj, str, str, str] | None] = queue.Queue(maxsize=queue_size)
        self._thread = threading.Thread(target=self._run, name="event-recorder", daemon=True)
        self._started = False
        self._lock = threading.Lock()

    # ---- public ---------------------------------------------------------------------------------
    def record(self, involved: Obj, type_: str, reason: str, message: str) -> None:
        """Queue an Event about ``involved`` (an object or an ObjectReference); never blocks or raises."""
        with self._lock:
            if not self._started:
                self._started = True
                self._thread.start()
        try:
            self._queue.put_nowait((involved, type_, reason, message))
        except queue.Full:
            self.stats.dropped += 1
            log.warning("event recorder: queue full, dropped %s event %s", type_, reason)

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queued Event has been handled (True) or the timeout ends (real time)."""
        deadline = time.monotonic() + timeout
        with self._queue.all_tasks_done:
            while self._queue.unfinished_tasks:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._queue.all_tasks_done.wait(remaining)
        return True

    def close(self, timeout: float = 5.0) -> None:
        if self._started:
            self._queue.put(None)
            self._thread.join(timeout)

    # ---- worker ---------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                self._post(*item)
            except Exception as e:  # never let one Event stop the recorder
                self.stats.failed += 1
                log.warning("event recorder: could not post event: %s", e)
            finally:
                self._queue.task_done()

    def _take_token(self) -> bool:
        now = self.clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._refilled) * self.qps)
        self._refilled = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False

    def _post(self, involved: Obj, type_: str, reason: str, message: str) -> None:
        if self.allowed is not None and not self.allowed():
            self.stats.dropped += 1
            return
        ref = object_reference(involved)
        if len(message) > MAX_MESSAGE:
            message = message[: MAX_MESSAGE - 3] + "..."
        namespace = ref.get("namespace") or "default"
        key = (ref.get("kind", ""), ref.get("namespace", ""), ref.get("name", ""), ref.get("uid", ""), type_, reason)
        now = self.clock()
        for stale in [k for k, seen in self._seen.items() if now - seen.first > self.dedup_window]:
            del self._seen[stale]
        if not self._take_token():
            self.stats.dropped += 1
            log.warning("event recorder: rate limited, dropped %s event %s about %s", type_, reason, ref.get("name"))
            return
        moment = self.wall()
        seen = self._seen.get(key)
        if seen is not None:
            patch = {"count": seen.count + 1, "message": message, "lastTimestamp": _stamp(moment),
                     "series": {"count": seen.count + 1, "lastObservedTime": _micro(moment)}}
            try:
                self.raw.call("PATCH", EVENTS.path(seen.namespace, seen.name), body=patch,
                              content_type="application/merge-patch+json")
                seen.count += 1
                self.stats.aggregated += 1
                return
            except NotFound:
                del self._seen[key]
            except KubeError as e:
                self.stats.failed += 1
                log.warning("event recorder: could not update event %s/%s: %s", seen.namespace, seen.name, e)
                return
        name = f"{ref.get('name', 'unknown')}.{time.time_ns():x}"
        body = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": ref, "reason": reason, "message": message, "type": type_, "count": 1,
            "firstTimestamp": _stamp(moment), "lastTimestamp": _stamp(moment),
            "source": {"component": self.component, "host": self.instance},
            "reportingComponent": self.component, "reportingInstance": self.instance,
        }
        try:
            self.raw.call("POST", EVENTS.path(namespace), body=body)
        except KubeError as e:
            self.stats.failed += 1
            log.warning("event recorder: could not post %s event %s about %s: %s", type_, reason, ref.get("name"), e)
            return
        self._seen[key] = _Seen(name, namespace, 1, now)
        self.stats.posted += 1
