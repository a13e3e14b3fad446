"""Watch streams: initial ADDED events, selector transitions, BOOKMARKs, 410 and timeouts.

A watch without a resource version (or "0") first sends ADDED for every matching
object; from a version it sends only later changes, or fails with 410 when that
version was compacted away. An object that starts or stops matching the selectors is
sent as ADDED or DELETED, as the apiserver does. With ``allowWatchBookmarks`` the
stream carries BOOKMARK events with the current version while quiet and at its end.
events.k8s.io watches are served from core/v1 Events, converted.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from sim.kube import eventsview
from sim.kube.kinds import Kind
from sim.kube.selectors import FieldSelector, LabelSelector
from sim.kube.store import ApiError, Store, WatchEvent

__all__ = ["open_watch"]

Obj = dict[str, Any]


def open_watch(store: Store, kind: Kind, ns: str, name: str, labels: LabelSelector, fields: FieldSelector,
               query: dict[str, str], stopped: Any, bookmark_interval: float) -> Iterator[list[Obj]]:
    if name:
        fields = FieldSelector((*fields.terms, ("metadata.name", True, name)))
    start = query.get("resourceVersion") or ""
    if start not in ("", "0"):
        try:
            int(start)
        except ValueError:
            raise ApiError(400, f"invalid resource version {start!r}") from None
        store.events_after(kind.key, int(start))
    if kind.storage == "/events":
        fields = FieldSelector(tuple((eventsview.core_field_path(p), eq, v) for p, eq, v in fields.terms))
        return _converted(_stream(store, kind, ns, labels, fields, query, stopped, bookmark_interval))
    return _stream(store, kind, ns, labels, fields, query, stopped, bookmark_interval)


def _converted(stream: Iterator[list[Obj]]) -> Iterator[list[Obj]]:
    for batch in stream:
        yield [e if e["type"] in ("BOOKMARK", "ERROR") else {"type": e["type"], "object": eventsview.from_core(e["object"])}
               for e in batch]


def _stream(store: Store, kind: Kind, ns: str, labels: LabelSelector, fields: FieldSelector, query: dict[str, str],
            stopped: Any, bookmark_interval: float) -> Iterator[list[Obj]]:
    timeout = float(query.get("timeoutSeconds") or 1800)
    deadline = time.monotonic() + timeout
    bookmarks = query.get("allowWatchBookmarks") in ("true", "1")
    start = query.get("resourceVersion") or ""

    def visible(obj: Obj | None) -> bool:
        if obj is None:
            return False
        if ns and obj["metadata"].get("namespace") != ns:
            return False
        return labels.matches(obj["metadata"].get("labels")) and (not fields or fields.matches(obj))

    if start in ("", "0"):
        items, after = store.select(kind, ns, labels, fields)
        ordered = sorted(items, key=lambda o: int(o["metadata"]["resourceVersion"]))
        for begin in range(0, len(ordered), 500):
            yield [{"type": "ADDED", "object": obj} for obj in ordered[begin : begin + 500]]
    else:
        after = int(start)
    last_bookmark = time.monotonic()
    while not stopped():
        now = time.monotonic()
        if now >= deadline:
            break
        try:
            events, head = store.events_after(kind.key, after)
        except ApiError as e:
            yield [{"type": "ERROR", "object": e.body()}]
            return
        batch = [t for t in (_translate(event, visible) for event in events) if t is not None]
        if batch:
            yield batch
        after = head
        if not events:
            if bookmarks and now - last_bookmark >= bookmark_interval:
                last_bookmark = now
                yield [_bookmark(kind, after)]
            wait = min(deadline - now, bookmark_interval if bookmarks else 0.5, 0.5)
            store.wait_changed(head, max(wait, 0.001))
    if bookmarks and not stopped():
        yield [_bookmark(kind, after)]


def _bookmark(kind: Kind, rv: int) -> Obj:
    return {"type": "BOOKMARK", "object": {"kind": kind.kind, "apiVersion": kind.api_version,
                                            "metadata": {"resourceVersion": str(rv)}}}


def _translate(event: WatchEvent, visible: Any) -> Obj | None:
    now_visible = visible(event.obj)
    was_visible = visible(event.prev)
    if event.type == "ADDED":
        return {"type": "ADDED", "object": event.obj} if now_visible else None
    if event.type == "DELETED":
        return {"type": "DELETED", "object": event.obj} if (was_visible or now_visible) else None
    if now_visible and was_visible:
        return {"type": "MODIFIED", "object": event.obj}
    if now_visible:
        return {"type": "ADDED", "object": event.obj}
    if was_visible:
        return {"type": "DELETED", "object": event.obj}
    return None
