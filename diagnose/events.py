"""Kubernetes Events as rows of the normalised table.

Read from a file holding any of:

- ``kubectl get events -o json`` (a ``List``/``EventList`` with ``items``, a bare JSON
  array, or one Event object), core/v1 shape (``involvedObject``, ``message``,
  ``source.component``) or events.k8s.io/v1 shape (``regarding``, ``note``,
  ``reportingController``);
- the same as ``-o yaml`` (one document or several);
- ``kubectl describe pod|nodeclaim|nodepool|node`` text: the ``Events:`` table
  (Type, Reason, Age, From, Message) of each described object.

Each event becomes one row: ``source`` "event", ``shape`` "k8s-event", ``event``
"k8s.<Reason>", ``level`` WARN for Warning and INFO for Normal, ``component`` the
reporting component (``karpenter``, ``default-scheduler`` …), ``object_kind`` /
``object_name`` (``namespace/name`` for pods), ``pods`` for Pod objects, ``nodeclaim``
for NodeClaim objects and from "Pod should schedule on: nodeclaim/X", and the cloud
error (code, category, quota numbers) when the message carries one.

Time: ``lastTimestamp``, else ``eventTime``, ``series.lastObservedTime``,
``firstTimestamp``, ``metadata.creationTimestamp``. ``describe`` prints only relative
ages ("3m"), which cannot be turned into a time without knowing when the command ran:
those rows have no time. ``line`` is the line of the event in the file (for JSON and YAML
dumps, the line of its ``uid``, or its position in the list when it has none).
"""

from __future__ import annotations

import re
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import yaml

from diagnose.ingest.error_text import analyse
from diagnose.ingest.sources import IngestError
from diagnose.schema import SCHEMA

__all__ = ["events_from_objects", "parse_describe", "read_events"]

_NODECLAIM_REF = re.compile(r"nodeclaim/([a-z0-9][a-z0-9.-]*)")
_NODE_REF = re.compile(r"\bnode/([a-z0-9][a-z0-9.-]*)")
_HEADER = re.compile(r"^(\s*)Type\s+Reason\s+Age\s+From\s+Message\s*$")
_ROW = re.compile(r"^\s+(Normal|Warning)\s+")
_FIELD = re.compile(r"^([A-Z][A-Za-z ]*):\s*(.*)$")


def _time(value: Any) -> datetime | None:
    if isinstance(value, datetime):  # YAML turns unquoted timestamps into datetimes
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else None


def _row(
    file: str,
    line: int,
    *,
    kind: str,
    name: str,
    namespace: str,
    reason: str,
    kind_type: str,
    component: str,
    message: str,
    time: datetime | None,
) -> dict[str, Any]:
    object_name = f"{namespace}/{name}" if kind == "Pod" and namespace else name
    claim = name if kind == "NodeClaim" else None
    claim_ref = _NODECLAIM_REF.search(message)
    node_ref = _NODE_REF.search(message)
    row: dict[str, Any] = {
        "file": file,
        "line": line,
        "source": "event",
        "parse_status": "parsed",
        "shape": "k8s-event",
        "time": time,
        "level": "WARN" if kind_type == "Warning" else "INFO",
        "component": component or None,
        "message": message,
        "event": f"k8s.{reason}" if reason else None,
        "pods": [object_name] if kind == "Pod" else None,
        "pod_count": 1 if kind == "Pod" else None,
        "nodepool": name if kind == "NodePool" else None,
        "nodeclaim": claim or (claim_ref.group(1) if claim_ref else None),
        "node": name if kind == "Node" else (node_ref.group(1) if node_ref else None),
        "reason": reason or None,
        "object_kind": kind or None,
        "object_name": object_name or None,
    }
    facts = analyse(message) if message else None
    if facts is not None and (facts.code or facts.category):
        row.update(
            error_code=facts.code,
            error_message=facts.message,
            category=facts.category,
            quota_scope=facts.quota_scope,
            quota_name=facts.quota_name,
            quota_limit=facts.quota_limit,
            quota_usage=facts.quota_usage,
            quota_required=facts.quota_required,
            quota_new_limit=facts.quota_new_limit,
            region=facts.region,
        )
    return row


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    if not rows:
        return pl.DataFrame(schema=SCHEMA)
    columns = {name: [r.get(name) for r in rows] for name in SCHEMA}
    return pl.DataFrame(columns, schema=SCHEMA)


def _event_row(item: dict[str, Any], file: str, line: int) -> dict[str, Any]:
    obj = item.get("involvedObject") or item.get("regarding") or {}
    source = item.get("source") or {}
    series = item.get("series") or {}
    metadata = item.get("metadata") or {}
    moment = (
        _time(item.get("lastTimestamp"))
        or _time(item.get("eventTime"))
        or _time(series.get("lastObservedTime"))
        or _time(item.get("firstTimestamp"))
        or _time(item.get("deprecatedLastTimestamp"))
        or _time(metadata.get("creationTimestamp"))
    )
    return _row(
        file,
        line,
        kind=str(obj.get("kind") or ""),
        name=str(obj.get("name") or ""),
        namespace=str(obj.get("namespace") or ""),
        reason=str(item.get("reason") or ""),
        kind_type=str(item.get("type") or "Normal"),
        component=str(
            source.get("component") or item.get("reportingController") or item.get("reportingComponent") or ""
        ),
        message=str(item.get("message") or item.get("note") or ""),
        time=moment,
    )


def _is_event(item: Any) -> bool:
    return isinstance(item, dict) and ("involvedObject" in item or "regarding" in item or item.get("kind") == "Event")


def _items(document: Any) -> list[dict[str, Any]] | None:
    if isinstance(document, list):
        return [i for i in document if _is_event(i)] if all(_is_event(i) for i in document) else None
    if isinstance(document, dict):
        if isinstance(document.get("items"), list):
            return [i for i in document["items"] if isinstance(i, dict)]
        if _is_event(document):
            return [document]
    return None


def _uid_lines(text: str, items: list[dict[str, Any]]) -> list[int]:
    lines: list[int] = []
    for k, item in enumerate(items, start=1):
        uid = (item.get("metadata") or {}).get("uid")
        at = text.find(str(uid)) if uid else -1
        lines.append(text.count("\n", 0, at) + 1 if at >= 0 else k)
    return lines


def events_from_objects(items: list[dict[str, Any]], file: str, lines: list[int] | None = None) -> pl.DataFrame:
    """Rows for Event objects (dicts as the API returns them)."""
    lines = lines or list(range(1, len(items) + 1))
    return _frame([_event_row(item, file, line) for item, line in zip(items, lines, strict=True)])


def _describe_fields(lines: list[str]) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in lines:
        match = _FIELD.match(line)
        if match and match.group(1) not in fields:
            fields[match.group(1)] = match.group(2).strip()
    return fields


def parse_describe(text: str, file: str) -> pl.DataFrame:
    """Rows for the Events tables of ``kubectl describe`` output (one or more objects)."""
    all_lines = text.splitlines()
    starts = [k for k, line in enumerate(all_lines) if line.startswith("Name:")] or [0]
    rows: list[dict[str, Any]] = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(all_lines)
        section = all_lines[start:end]
        fields = _describe_fields(section)
        kind = fields.get("Kind") or ("Pod" if "Containers" in fields or "Node" in fields else "")
        name, namespace = fields.get("Name", ""), fields.get("Namespace", "")
        columns: list[int] | None = None
        last: dict[str, Any] | None = None
        for offset, line in enumerate(section):
            header = _HEADER.match(line)
            if header:
                columns = [line.index(word) for word in ("Type", "Reason", "Age", "From", "Message")]
                continue
            if columns is None or line.strip().startswith("----"):
                continue
            if _ROW.match(line):
                cells = [line[columns[i] : columns[i + 1]].strip() for i in range(4)]
                message = line[columns[4] :].strip() if len(line) > columns[4] else ""
                last = _row(
                    file, start + offset + 1, kind=kind, name=name, namespace=namespace, reason=cells[1],
                    kind_type=cells[0], component=cells[3], message=message, time=None,
                )
                rows.append(last)
            elif last is not None and line.startswith(" " * columns[4]) and line.strip():
                last["message"] = f"{last['message']}\n{line.strip()}"  # a wrapped message
            elif line and not line[0].isspace():
                columns = None  # the table ended
    return _frame(rows)


def read_events(path: str) -> pl.DataFrame:
    """Rows for an events file (JSON, YAML or describe text); raises IngestError naming it."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError as e:
        raise IngestError(f"{path}: no such events file") from e
    except OSError as e:
        raise IngestError(f"{path}: cannot read events file: {e.strerror or e}") from e
    if data[:2] == b"\x1f\x8b":
        try:
            data = zlib.decompress(data, wbits=31)
        except zlib.error as e:
            raise IngestError(f"{path}: not a valid gzip file: {e}") from e
    text = data.decode("utf-8-sig", errors="replace")
    stripped = text.lstrip()
    if not stripped:
        raise IngestError(f"{path}: empty events file")
    if stripped[0] in "[{":
        try:
            document = orjson.loads(stripped)
        except orjson.JSONDecodeError as e:
            raise IngestError(f"{path}: not a valid events dump: invalid JSON ({e})") from e
        items = _items(document)
        if items is None:
            raise IngestError(f"{path}: not a valid events dump: no Event objects (expected kubectl get events -o json)")
        return events_from_objects(items, path, _uid_lines(text, items))
    if "Events:" in text and re.search(r"^Name:", text, re.MULTILINE):
        return parse_describe(text, path)
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        documents = [d for d in yaml.load_all(text, Loader=loader) if d is not None]
    except yaml.YAMLError as e:
        raise IngestError(f"{path}: not a valid events dump: invalid YAML ({e.__class__.__name__})") from e
    items = []
    for document in documents:
        found = _items(document)
        if found is None:
            raise IngestError(f"{path}: not a valid events dump: no Event objects (expected kubectl get events -o yaml)")
        items.extend(found)
    return events_from_objects(items, path, _uid_lines(text, items))
