"""Redaction: mask subscription, tenant and client ids and IP addresses in a whole report.

``--redact`` makes a report safe to paste into an issue. Every string of the report is
masked (summaries, fixes, quoted cloud errors, evidence text, unparsed lines), and the
same value always gets the same mask, so the report still reads: the subscription in a
resource id and in a quota command are both ``sub-1``, a node's address is ``ip-2``
everywhere it appears.

* GUIDs become ``sub-N`` after ``/subscriptions/`` or near the word "subscription",
  ``tenant-N`` near "tenant", ``client-N`` near "client", "object id", "principal" or
  "app id", and ``id-N`` otherwise;
* the path segment after ``/subscriptions/`` is masked even when it is not a GUID;
* IPv4 addresses become ``ip-N`` (a CIDR prefix length is kept: ``ip-1/20``), and so do
  IPv6 addresses written with ``::`` or all eight groups.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime
from typing import Any, TypeVar

__all__ = ["Redactor", "redact_report"]

_GUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_SUBSCRIPTION_SEGMENT = re.compile(r"(/subscriptions/)([^/\s\"'\\,;)]+)", re.IGNORECASE)
_IPV4 = re.compile(r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w.]*\d)")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9a-fA-F]{1,4}:){1,7}(?::|[0-9a-fA-F]{1,4})(?:[0-9a-fA-F:]*)(?![\w:])")
_MASK = re.compile(r"^(?:sub|tenant|client|id|ip)-\d+$")
_CONTEXT = 48

T = TypeVar("T")


class Redactor:
    """Stable masks: a value seen again gets the mask it got the first time."""

    def __init__(self) -> None:
        self._masks: dict[str, str] = {}
        self._counts: dict[str, int] = {}

    def mask(self, value: str, kind: str) -> str:
        key = value.lower()
        found = self._masks.get(key)
        if found is None:
            self._counts[kind] = self._counts.get(kind, 0) + 1
            found = self._masks[key] = f"{kind}-{self._counts[kind]}"
        return found

    @property
    def masks(self) -> dict[str, str]:
        return dict(self._masks)

    def _guid_kind(self, text: str, start: int) -> str:
        before = text[max(0, start - _CONTEXT) : start].lower()
        if before.endswith("/subscriptions/"):
            return "sub"
        positions = {
            "sub": max(before.rfind("subscription"), before.rfind("sub id")),
            "tenant": max(before.rfind("tenant"), before.rfind("tid")),
            "client": max(
                before.rfind("client"),
                before.rfind("object id"),
                before.rfind("objectid"),
                before.rfind("principal"),
                before.rfind("app id"),
                before.rfind("appid"),
            ),
        }
        kind, where = max(positions.items(), key=lambda item: item[1])
        return kind if where >= 0 else "id"

    def text(self, text: str) -> str:
        if not text:
            return text

        def segment(match: re.Match[str]) -> str:
            value = match.group(2)
            if _MASK.match(value) or value.startswith("<"):
                return match.group(0)
            return match.group(1) + self.mask(value, "sub")

        out = _SUBSCRIPTION_SEGMENT.sub(segment, text)
        out = _GUID.sub(lambda m: self.mask(m.group(0), self._guid_kind(m.string, m.start())), out)
        out = _IPV4.sub(lambda m: self.mask(m.group(0), "ip"), out)
        return _IPV6.sub(self._ipv6, out)

    def _ipv6(self, match: re.Match[str]) -> str:
        value = match.group(0)
        if "::" in value or value.count(":") == 7:
            return self.mask(value, "ip")
        return value

    def value(self, value: T) -> T:
        """Mask every string inside ``value`` (dataclasses, lists, dicts, tuples)."""
        return self._walk(value)  # type: ignore[no-any-return]

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, datetime | int | float | bool) or value is None:
            return value
        if isinstance(value, list):
            return [self._walk(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self._walk(v) for v in value)
        if isinstance(value, dict):
            return {self._walk(k): self._walk(v) for k, v in value.items()}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes = {f.name: self._walk(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
            return dataclasses.replace(value, **changes)
        return value


def redact_report(report: T, redactor: Redactor | None = None) -> T:
    """A copy of ``report`` (or any value) with ids and addresses masked."""
    return (redactor or Redactor()).value(report)
