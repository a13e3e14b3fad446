"""Informers: a local, always-current cache of one kind of object, kept by list-then-watch.

``Watcher`` does the protocol: list (noting ``metadata.resourceVersion``), then watch
from that version with ``allowWatchBookmarks`` and a server-side ``timeoutSeconds``;
when a watch ends it resumes from the last version seen (bookmarks included); a
410 Gone (an ``ERROR`` event or an answer) means the history is gone, so it lists
again. ``Informer`` runs a Watcher on a thread, keeps the objects keyed
``namespace/name`` (or ``name`` for cluster-scoped kinds), and calls add/update/delete
handlers in order on that thread. Objects are raw dicts (orjson), never SDK models.

    pods = Informer(raw, PODS, field_selector="status.phase=Pending", on_add=print).start()
    pods.wait_synced(10)
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

from provisioner.kube.connection import RawApi, Resource
from provisioner.model.kube_port import Gone, KubeError

__all__ = ["Informer", "Watcher", "key_of"]

Obj = dict[str, Any]
log = logging.getLogger(__name__)


def key_of(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{namespace}/{meta.get('name')}" if namespace else str(meta.get("name"))


class Watcher:
    """List and watch one resource, resuming from the last resource version seen."""

    def __init__(self, raw: RawApi, resource: Resource, *, namespace: str | None = None, label_selector: str | None = None,
                 field_selector: str | None = None, timeout_seconds: int = 300) -> None:
        self.raw = raw
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.timeout_seconds = timeout_seconds
        self.resource_version = ""
        self._response: Any = None
        self._closed = False

    def close(self) -> None:
        """End the current watch request now (from any thread); later watches end at once too."""
        self._closed = True
        response = self._response
        if response is not None:
            with contextlib.suppress(Exception):  # already closed
                response.shutdown()

    def _open(self, response: Any) -> None:
        self._response = response
        if self._closed:
            self.close()

    def _query(self) -> dict[str, Any]:
        return {"labelSelector": self.label_selector, "fieldSelector": self.field_selector}

    def list_objects(self) -> list[Obj]:
        answer = self.raw.call("GET", self.resource.path(self.namespace), query=self._query())
        self.resource_version = str(((answer or {}).get("metadata") or {}).get("resourceVersion") or "")
        return list((answer or {}).get("items") or [])

    def watch(self) -> Iterator[tuple[str, Obj]]:
        """Events of one watch request from ``resource_version``; raises ``Gone`` on 410."""
        self._response = None
        query = {**self._query(), "resourceVersion": self.resource_version or None, "allowWatchBookmarks": "true",
                 "timeoutSeconds": self.timeout_seconds}
        for event in self.raw.watch_lines(self.resource.path(self.namespace), query, timeout=self.timeout_seconds + 30,
                                            on_open=self._open):
            kind = event.get("type")
            obj = event.get("object") or {}
            if kind == "ERROR":
                code = obj.get("code")
                if code == 410:
                    raise Gone(str(obj.get("message") or "resource version expired"))
                raise KubeError(f"watch {self.resource.title}: {obj.get('message')}", status=int(code or 0))
            rv = (obj.get("metadata") or {}).get("resourceVersion")
            if rv:
                self.resource_version = str(rv)
            if kind == "BOOKMARK":
                continue
            yield str(kind), obj
        self._response = None

    @property
    def watching(self) -> bool:
        """True while a watch request is open (its headers have arrived)."""
        return self._response is not None


Handler = Callable[[Obj], None]
UpdateHandler = Callable[[Obj, Obj], None]


class Informer:
    def __init__(self, raw: RawApi, resource: Resource, *, namespace: str | None = None, label_selector: str | None = None,
                 field_selector: str | None = None, on_add: Handler | None = None, on_update: UpdateHandler | None = None,
                 on_delete: Handler | None = None, timeout_seconds: int = 300, backoff: tuple[float, float] = (0.2, 5.0)) -> None:
        self.watcher = Watcher(raw, resource, namespace=namespace, label_selector=label_selector,
                               field_selector=field_selector, timeout_seconds=timeout_seconds)
        self.resource = resource
        self.on_add = on_add
        self.on_update = on_update
        self.on_delete = on_delete
        self.backoff = backoff
        self._cache: dict[str, Obj] = {}
        self._lock = threading.Lock()
        self._synced = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.lists = 0
        self.watches = 0
        self.last_error: Exception | None = None

    # ---- public --------------------------------------------------------------------------------
    def start(self) -> Informer:
        self._thread = threading.Thread(target=self._run, name=f"informer-{self.resource.plural}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.watcher.close()
        if self._thread is not None:
            self._thread.join(timeout)

    def wait_synced(self, timeout: float | None = None) -> bool:
        """True once the first list has filled the cache (False on timeout)."""
        return self._synced.wait(timeout)

    @property
    def synced(self) -> bool:
        return self._synced.is_set()

    @property
    def resource_version(self) -> str:
        return self.watcher.resource_version

    @property
    def watching(self) -> bool:
        return self.watcher.watching

    def get(self, key: str) -> Obj | None:
        with self._lock:
            return self._cache.get(key)

    def objects(self) -> list[Obj]:
        with self._lock:
            return list(self._cache.values())

    def keys(self) -> list[str]:
        with self._lock:
            return sorted(self._cache)

    def __len__(self) -> int:
        with self._lock:
            return len(self._cache)

    # ---- loop -----------------------------------------------------------------------------------
    def _run(self) -> None:
        need_list = True
        delay = self.backoff[0]
        while not self._stop.is_set():
            try:
                if need_list:
                    self._replace(self.watcher.list_objects())
                    self.lists += 1
                    need_list = False
                    self._synced.set()
                self.watches += 1
                for kind, obj in self.watcher.watch():
                    if self._stop.is_set():
                        return
                    self._apply(kind, obj)
                delay = self.backoff[0]
            except Gone:
                need_list = True
            except Exception as e:
                if self._stop.is_set():
                    return
                self.last_error = e
                log.warning("informer %s: %s; retrying in %.1fs", self.resource.title, e, delay)
                if self._stop.wait(delay):
                    return
                delay = min(delay * 2, self.backoff[1])

    def _call(self, handler: Callable[..., None] | None, *args: Obj) -> None:
        if handler is None:
            return
        try:
            handler(*args)
        except Exception:
            log.exception("informer %s: handler failed", self.resource.title)

    def _replace(self, items: list[Obj]) -> None:
        fresh = {key_of(obj): obj for obj in items}
        with self._lock:
            old = self._cache
            self._cache = fresh
        for key, obj in fresh.items():
            previous = old.get(key)
            if previous is None:
                self._call(self.on_add, obj)
            elif (previous.get("metadata") or {}).get("resourceVersion") != (obj.get("metadata") or {}).get("resourceVersion"):
                self._call(self.on_update, previous, obj)
        for key, obj in old.items():
            if key not in fresh:
                self._call(self.on_delete, obj)

    def _apply(self, kind: str, obj: Obj) -> None:
        key = key_of(obj)
        with self._lock:
            previous = self._cache.get(key)
            if kind == "DELETED":
                self._cache.pop(key, None)
            else:
                self._cache[key] = obj
        if kind == "DELETED":
            self._call(self.on_delete, obj)
        elif previous is None:
            self._call(self.on_add, obj)
        else:
            self._call(self.on_update, previous, obj)
