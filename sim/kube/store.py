"""The emulator's object store: one resource version counter, objects, watch history.

Every write takes the next resource version, replaces the stored object with a new
dict (stored objects are never mutated, so watch history can share them) and
appends a watch event to a bounded history. A watch from a version older than the
history answers 410 Gone, like an apiserver whose etcd history was compacted. Writes
carrying a stale ``metadata.resourceVersion`` answer 409 Conflict. Objects with
finalizers are only marked for deletion (``deletionTimestamp``) until the last
finalizer is removed.
"""

from __future__ import annotations

import bisect
import copy
import random
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sim.kube.kinds import Kind
from sim.kube.selectors import FieldSelector, LabelSelector

__all__ = ["ApiError", "Store", "WatchEvent", "now_iso", "random_suffix"]

Obj = dict[str, Any]
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def random_suffix(length: int = 5, rng: random.Random | None = None) -> str:
    chooser = rng or random
    return "".join(chooser.choice(_ALPHABET) for _ in range(length))


class ApiError(Exception):
    """A refusal the server answers with a ``Status`` body."""

    REASONS = {400: "BadRequest", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed", 409: "Conflict",
               410: "Expired", 415: "UnsupportedMediaType", 422: "Invalid", 500: "InternalError"}

    def __init__(self, status: int, message: str, reason: str = "", kind: Kind | None = None, name: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.reason = reason or self.REASONS.get(status, "Unknown")
        self.kind = kind
        self.name = name

    def body(self) -> Obj:
        details: Obj = {}
        if self.name:
            details["name"] = self.name
        if self.kind is not None:
            details["kind"] = self.kind.plural
            if self.kind.group:
                details["group"] = self.kind.group
        status: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "message": self.message, "reason": self.reason, "code": self.status}
        if details:
            status["details"] = details
        return status


def not_found(kind: Kind, name: str) -> ApiError:
    resource = f"{kind.plural}.{kind.group}" if kind.group else kind.plural
    return ApiError(404, f'{resource} "{name}" not found', "NotFound", kind, name)


@dataclass(frozen=True, slots=True)
class WatchEvent:
    rv: int
    key: str  # Kind.key
    type: str  # ADDED | MODIFIED | DELETED
    obj: Obj
    prev: Obj | None = None


class Store:
    def __init__(self, history: int = 50_000, seed: int = 0) -> None:
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self._rv = 1000
        self._objects: dict[str, dict[tuple[str, str], Obj]] = {}
        self._history: list[WatchEvent] = []
        self._history_cap = history
        self.compacted_rv = 0
        self._listeners: list[Callable[[WatchEvent], None]] = []
        self.rng = random.Random(seed)

    # ---- plumbing -------------------------------------------------------------------------
    @property
    def resource_version(self) -> int:
        return self._rv

    def subscribe(self, listener: Callable[[WatchEvent], None]) -> None:
        self._listeners.append(listener)

    def _record(self, kind: Kind, type_: str, obj: Obj, prev: Obj | None) -> None:
        event = WatchEvent(int(obj["metadata"]["resourceVersion"]), kind.key, type_, obj, prev)
        self._history.append(event)
        if len(self._history) > 2 * self._history_cap:
            cut = len(self._history) - self._history_cap
            self.compacted_rv = self._history[cut - 1].rv
            del self._history[:cut]
        self.changed.notify_all()
        for listener in self._listeners:
            listener(event)

    def compact(self) -> None:
        """Forget all history: every older resource version now answers 410."""
        with self.lock:
            self._history.clear()
            self.compacted_rv = self._rv

    def _next_rv(self) -> str:
        self._rv += 1
        return str(self._rv)

    def _table(self, kind: Kind) -> dict[tuple[str, str], Obj]:
        return self._objects.setdefault(kind.key, {})

    # ---- reads ------------------------------------------------------------------------------
    def get(self, kind: Kind, namespace: str, name: str) -> Obj:
        with self.lock:
            obj = self._table(kind).get((namespace, name))
            if obj is None:
                raise not_found(kind, name)
            return obj

    def find(self, kind: Kind, namespace: str, name: str) -> Obj | None:
        with self.lock:
            return self._table(kind).get((namespace, name))

    def select(self, kind: Kind, namespace: str = "", labels: LabelSelector | None = None,
             fields: FieldSelector | None = None) -> tuple[list[Obj], int]:
        with self.lock:
            items = [
                obj
                for (ns, _), obj in self._table(kind).items()
                if (not namespace or ns == namespace)
                and (not labels or labels.matches(obj["metadata"].get("labels")))
                and (not fields or fields.matches(obj))
            ]
            return items, self._rv

    def events_after(self, key: str, after: int) -> tuple[list[WatchEvent], int]:
        """Watch events of one resource after a version, and the version they run up to.

        Raises 410 if that version was compacted away."""
        with self.lock:
            if after < self.compacted_rv:
                raise ApiError(410, f"too old resource version: {after} ({self.compacted_rv})", "Expired")
            start = bisect.bisect_right(self._history, after, key=lambda e: e.rv)
            return [e for e in self._history[start:] if e.key == key], self._rv

    # ---- writes -------------------------------------------------------------------------------
    def create(self, kind: Kind, namespace: str, body: Obj) -> Obj:
        with self.lock:
            obj = copy.deepcopy(body)
            meta = obj.setdefault("metadata", {})
            if not meta.get("name"):
                if not meta.get("generateName"):
                    raise ApiError(422, f"{kind.kind}.{kind.api_version} is invalid: metadata.name: Required value: name or generateName is required", "Invalid", kind)
                meta["name"] = meta["generateName"] + random_suffix(rng=self.rng)
            name = meta["name"]
            if kind.namespaced:
                if meta.get("namespace") and meta["namespace"] != namespace:
                    raise ApiError(400, "the namespace of the provided object does not match the namespace sent on the request")
                meta["namespace"] = namespace
                if kind.plural != "events" and not self._ns_exists(namespace):
                    raise ApiError(404, f'namespaces "{namespace}" not found', "NotFound", None, namespace)
            else:
                meta.pop("namespace", None)
            table = self._table(kind)
            if (namespace, name) in table:
                resource = f"{kind.plural}.{kind.group}" if kind.group else kind.plural
                raise ApiError(409, f'{resource} "{name}" already exists', "AlreadyExists", kind, name)
            obj["apiVersion"] = kind.api_version
            obj["kind"] = kind.kind
            meta["uid"] = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
            meta["creationTimestamp"] = now_iso()
            meta["generation"] = 1
            meta.pop("deletionTimestamp", None)
            meta["resourceVersion"] = self._next_rv()
            table[(namespace, name)] = obj
            self._record(kind, "ADDED", obj, None)
            return obj

    def _ns_exists(self, namespace: str) -> bool:
        return any(k[1] == namespace for k in self._objects.get("/namespaces", {}))

    def replace(self, kind: Kind, namespace: str, name: str, body: Obj, subresource: str = "") -> Obj:
        """PUT semantics: optimistic concurrency on metadata.resourceVersion when given."""
        with self.lock:
            old = self.get(kind, namespace, name)
            wanted = (body.get("metadata") or {}).get("resourceVersion")
            if wanted and str(wanted) != old["metadata"]["resourceVersion"]:
                resource = f"{kind.plural}.{kind.group}" if kind.group else kind.plural
                raise ApiError(409, f'Operation cannot be fulfilled on {resource} "{name}": the object has been modified; please apply your changes to the latest version and try again', "Conflict", kind, name)
            return self._write(kind, old, copy.deepcopy(body), subresource)

    def _write(self, kind: Kind, old: Obj, new: Obj, subresource: str) -> Obj:
        meta_old = old["metadata"]
        if subresource == "*":
            result = new
            result["metadata"] = {**new.get("metadata", {}), **{k: v for k, v in meta_old.items() if k in ("uid", "creationTimestamp", "name", "namespace")}}
        elif subresource == "status":
            result = dict(old)
            result["status"] = new.get("status", {})
            result["metadata"] = dict(meta_old)
        else:
            result = new
            result["apiVersion"] = kind.api_version
            result["kind"] = kind.kind
            meta = result.setdefault("metadata", {})
            for field in ("uid", "creationTimestamp", "namespace", "name", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
                if field in meta_old:
                    meta[field] = meta_old[field]
                else:
                    meta.pop(field, None)
            if "status" in kind.subresources:
                if "status" in old:
                    result["status"] = old["status"]
                else:
                    result.pop("status", None)
            spec_old = {k: v for k, v in old.items() if k not in ("metadata", "status")}
            spec_new = {k: v for k, v in result.items() if k not in ("metadata", "status")}
            if spec_old != spec_new:
                meta["generation"] = int(meta_old.get("generation", 1)) + 1
        result["apiVersion"] = kind.api_version
        result["kind"] = kind.kind
        result["metadata"]["resourceVersion"] = meta_old["resourceVersion"]
        if result == old:
            return old
        result["metadata"]["resourceVersion"] = self._next_rv()
        key = (meta_old.get("namespace", ""), meta_old["name"])
        if result["metadata"].get("deletionTimestamp") and not result["metadata"].get("finalizers"):
            del self._table(kind)[key]
            self._record(kind, "DELETED", result, old)
            return result
        self._table(kind)[key] = result
        self._record(kind, "MODIFIED", result, old)
        return result

    def mutate(self, kind: Kind, namespace: str, name: str, change: Callable[[Obj], None], subresource: str = "*") -> Obj:
        """Read-modify-write under the lock, for the emulator's own controllers and tests.

        ``subresource`` "*" (the default) writes spec and status alike; "" keeps the status
        as a main-resource update would, "status" keeps everything but the status."""
        with self.lock:
            old = self.get(kind, namespace, name)
            new = copy.deepcopy(old)
            change(new)
            return self._write(kind, old, new, subresource)

    def delete(self, kind: Kind, namespace: str, name: str, precondition_rv: str | None = None,
               precondition_uid: str | None = None) -> Obj:
        with self.lock:
            old = self.get(kind, namespace, name)
            meta = old["metadata"]
            if (precondition_rv and precondition_rv != meta["resourceVersion"]) or (precondition_uid and precondition_uid != meta["uid"]):
                raise ApiError(409, f'Operation cannot be fulfilled on {kind.plural} "{name}": the precondition was not met', "Conflict", kind, name)
            if meta.get("finalizers"):
                if meta.get("deletionTimestamp"):
                    return old
                new = copy.deepcopy(old)
                new["metadata"]["deletionTimestamp"] = now_iso()
                new["metadata"]["deletionGracePeriodSeconds"] = 0
                return self._write(kind, old, new, "*")
            gone = copy.deepcopy(old)
            gone["metadata"]["resourceVersion"] = self._next_rv()
            del self._table(kind)[(namespace, name)]
            self._record(kind, "DELETED", gone, old)
            return gone

    def all_objects(self, kind: Kind) -> list[Obj]:
        with self.lock:
            return list(self._table(kind).values())

    def wait_changed(self, after: int, timeout: float) -> bool:
        """Block until the resource version passes ``after`` (True) or the timeout ends (False)."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while self._rv <= after:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self.changed.wait(remaining)
            return True
