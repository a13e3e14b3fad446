"""The QuotaSource port: where karp-diagnose gets vCPU quota figures from.

Three sources answer the same question, "what are the vCPU limits and usages of this
subscription in this region", each saying where its figures come from and when they
were true:

* :class:`LogQuotaSource` (``source="log"``): the numbers Azure printed in the quota
  errors found in the input, at the time each error was logged. Always available offline.
* :class:`SnapshotQuotaSource` (``source="snapshot"``): a saved JSON of usages, as written by
  ``az vm list-usage -l <region> -o json``, by the REST usages API (``{"value": [...]}``)
  or in karp's own form ``{"region", "read_at", "items": {name: {"limit", "usage"}}}``.
* a live Azure source (``source="azure"``), provided by ``provisioner.azure``; anything with
  ``read(region) -> QuotaSnapshot`` fits the port.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from diagnose.correlate import Occurrence
from provisioner.model.errors import InputError, KarpError
from provisioner.model.quota import QuotaSnapshot, QuotaUsage

__all__ = ["LogQuotaSource", "QuotaSource", "SnapshotQuotaSource", "TolerantQuotaSource"]


@runtime_checkable
class QuotaSource(Protocol):
    def read(self, region: str) -> QuotaSnapshot: ...


class LogQuotaSource:
    """Quota figures as the log's own error text gave them (the latest per quota name)."""

    source = "log"

    def __init__(self, occurrences: list[Occurrence]) -> None:
        self._latest: dict[tuple[str, str], Occurrence] = {}
        for occurrence in occurrences:
            numbers = occurrence.quota
            if numbers is None:
                continue
            key = ((occurrence.region or numbers.region).lower(), numbers.quota)
            previous = self._latest.get(key)
            if previous is None or _later(occurrence.time, previous.time):
                self._latest[key] = occurrence

    def read(self, region: str) -> QuotaSnapshot:
        items: dict[str, QuotaUsage] = {}
        read_at: datetime | None = None
        for (where, name), occurrence in self._latest.items():
            if where != region.lower() or occurrence.quota is None:
                continue
            numbers = occurrence.quota
            items[name] = QuotaUsage(name, numbers.limit, numbers.usage)
            if occurrence.time is not None and (read_at is None or occurrence.time > read_at):
                read_at = occurrence.time
        return QuotaSnapshot(region, read_at or datetime.fromtimestamp(0, UTC), "log", items)


def _later(this: datetime | None, that: datetime | None) -> bool:
    if this is None:
        return False
    return that is None or this >= that


class SnapshotQuotaSource:
    """Quota figures from a saved JSON of usages (see the module doc for the forms read)."""

    source = "snapshot"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            document = json.loads(self.path.read_text(encoding="utf-8"))
        except OSError as e:
            raise InputError(f"quota snapshot {self.path}: cannot read it ({e.strerror or e})") from e
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise InputError(f"quota snapshot {self.path}: not valid JSON ({e})") from e
        self._region, self._read_at, self._items = _parse_snapshot(document, self.path)

    def read(self, region: str) -> QuotaSnapshot:
        if self._region and region and self._region.lower() != region.lower():
            return QuotaSnapshot(region, self._read_at, "snapshot", {})
        return QuotaSnapshot(region or self._region, self._read_at, "snapshot", dict(self._items))


def _number(value: Any, path: Path, what: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError) as e:
        raise InputError(f"quota snapshot {path}: {what} is not a number ({value!r})") from e


def _parse_snapshot(document: Any, path: Path) -> tuple[str, datetime, dict[str, QuotaUsage]]:
    mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    region = ""
    read_at = mtime
    if isinstance(document, dict) and isinstance(document.get("items"), dict):
        region = str(document.get("region") or "")
        if document.get("read_at"):
            try:
                read_at = datetime.fromisoformat(str(document["read_at"]).replace("Z", "+00:00"))
            except ValueError as e:
                raise InputError(f"quota snapshot {path}: read_at is not an ISO time") from e
            if read_at.tzinfo is None:
                read_at = read_at.replace(tzinfo=UTC)
        items = {}
        for name, entry in document["items"].items():
            if not isinstance(entry, dict):
                raise InputError(f"quota snapshot {path}: item {name!r} is not an object")
            items[str(name)] = QuotaUsage(
                str(name),
                _number(entry.get("limit"), path, f"{name}.limit"),
                _number(entry.get("usage"), path, f"{name}.usage"),
                str(entry.get("localized_name") or ""),
            )
        return region, read_at, items
    entries = document.get("value") if isinstance(document, dict) else document
    if not isinstance(entries, list):
        raise InputError(
            f"quota snapshot {path}: expected a list of usages (az vm list-usage -o json), "
            "{'value': [...]} or {'items': {...}}"
        )
    items = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise InputError(f"quota snapshot {path}: a usage entry is not an object")
        name_field = entry.get("name")
        if isinstance(name_field, dict):
            name, localized = str(name_field.get("value") or ""), str(name_field.get("localizedValue") or "")
        else:
            name, localized = str(name_field or ""), str(entry.get("localName") or "")
        if not name:
            raise InputError(f"quota snapshot {path}: a usage entry has no name")
        usage = entry.get("currentValue", entry.get("usage"))
        items[name] = QuotaUsage(
            name, _number(entry.get("limit"), path, f"{name}.limit"), _number(usage, path, f"{name}.currentValue"), localized
        )
    return region, read_at, items


class TolerantQuotaSource:
    """Wraps a live or saved source so that a failure to read it (no permission, no login,
    Azure unreachable) costs only the current figures: the offline findings still print,
    and ``failure`` says why the current figures are missing."""

    def __init__(self, inner: QuotaSource) -> None:
        self.inner = inner
        self.source = str(getattr(inner, "source", "azure"))
        self.failure = ""

    def read(self, region: str) -> QuotaSnapshot:
        try:
            return self.inner.read(region)
        except KarpError as e:
            self.failure = str(e).splitlines()[0] if str(e) else type(e).__name__
            return QuotaSnapshot(region, datetime.now(UTC), self.source, {})
