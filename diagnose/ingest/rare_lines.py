"""The per-line path: lines the vectorised path set aside, read one at a time in Python.

In a real log they are few: zap console-encoded lines (``time<TAB>LEVEL<TAB>logger<TAB>
message<TAB>{json}``), pretty-printed JSON records spread over several lines, almost-JSON
(a line whose string values lost the escaping of their inner quotes, like the founding
scenario's error line), and text that is no log record at all (Go stack traces, klog,
binary garbage, truncated lines).

Each recovered record becomes a JSON object text and goes through the same ``derive`` as
the vectorised path. Accounting, per physical line: a record spread over *n* lines counts
*n* parsed lines (its ``line`` is its first line); a repaired line counts as repaired; any
other line counts as unparsed and keeps its text, file and line number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = ["Recovered", "recover", "repair"]

_PREFIX = re.compile(r"^(\[[^\]]*\] )?(?:(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) )?")
_CONSOLE_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?$")
_CALLER = re.compile(r"^[\w./-]+\.go:\d+$")
_LEVEL = re.compile(r"^(?i:debug|info|warn|warning|error|dpanic|panic|fatal)$")
_KEY = re.compile(r'(?:^\{|,)"([A-Za-z0-9_.@/-]+)":')
_UNESCAPED_QUOTE = re.compile(r'(?<!\\)((?:\\\\)*)"')
MAX_RECORD_LINES = 20_000
MAX_RECORD_BYTES = 8 << 20


@dataclass(frozen=True, slots=True)
class Recovered:
    line: int
    span: int  # physical lines the record covers
    status: str  # parsed | repaired
    shape: str | None  # known shape (zap-console), else null: decided from the keys
    prefix_time: str | None
    record: dict[str, Any]
    raw: str


def _strip_prefix(text: str) -> tuple[str, str | None]:
    match = _PREFIX.match(text)
    if match is None or not match.group(0):
        return text, None
    return text[match.end() :], match.group(2)


def _loads_object(text: str) -> dict[str, Any] | None:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _value(text: str) -> Any:
    text = text.strip()
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        inner = _UNESCAPED_QUOTE.sub(lambda m: m.group(1) + '\\"', text[1:-1])
        try:
            return orjson.loads('"' + inner + '"')
        except orjson.JSONDecodeError:
            return text[1:-1]
    return text


def repair(text: str) -> dict[str, Any] | None:
    """Read almost-JSON: a compact object whose values may hold unescaped quotes.

    Keys are found at their boundaries (``{"key":`` and ``,"key":``, as zap writes them);
    each value runs to the next boundary and is decoded on its own, with its inner quotes
    escaped when it is a broken string. Only records with a message and at least three keys
    count, so that text which merely starts like JSON is not passed off as a record."""
    text = text.strip()
    if not (text.startswith('{"') and text.endswith("}")):
        return None
    keys = list(_KEY.finditer(text))
    if not keys or keys[0].start() != 0:
        return None
    out: dict[str, Any] = {}
    for k, match in enumerate(keys):
        end = keys[k + 1].start() if k + 1 < len(keys) else len(text) - 1
        out.setdefault(match.group(1), _value(text[match.end() : end]))
    if len(out) < 3 or not ({"message", "msg"} & out.keys()):
        return None
    return out


def _console(text: str) -> dict[str, Any] | None:
    """zap's console encoder: time, level, [logger], [caller], message, [JSON fields], tab-separated."""
    parts = text.split("\t")
    if len(parts) < 3 or not _CONSOLE_TIME.match(parts[0]) or not _LEVEL.match(parts[1]):
        return None
    fields: dict[str, Any] = {}
    if len(parts) > 3 and parts[-1].startswith("{"):
        loaded = _loads_object(parts[-1])
        if loaded is not None:
            fields = loaded
            parts = parts[:-1]
    middle = parts[2:]
    record: dict[str, Any] = {**fields, "time": parts[0], "level": parts[1]}
    if len(middle) >= 2 and not _CALLER.match(middle[0]):
        record["logger"] = middle.pop(0)
    if len(middle) >= 2 and _CALLER.match(middle[0]):
        record["caller"] = middle.pop(0)
    record["message"] = "\t".join(middle)
    return record


def _depth_end(text: str, depth: int, in_string: bool) -> tuple[int, bool]:
    escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return depth, in_string


def _multiline(rare: list[tuple[int, str]], start: int) -> tuple[dict[str, Any], int, str | None] | None:
    """A pretty-printed object starting at rare[start]: (record, lines used, prefix time)."""
    first, prefix_time = _strip_prefix(rare[start][1])
    if not first.lstrip().startswith("{"):
        return None
    depth, in_string = _depth_end(first, 0, False)
    parts, size, j = [first], len(first), start
    while depth > 0 and j + 1 < len(rare) and j - start < MAX_RECORD_LINES and size < MAX_RECORD_BYTES:
        if rare[j + 1][0] != rare[j][0] + 1:
            return None
        j += 1
        text, _ = _strip_prefix(rare[j][1])
        parts.append(text)
        size += len(text)
        depth, in_string = _depth_end(text, depth, in_string)
    if depth != 0 or j == start:
        return None
    record = _loads_object("\n".join(parts))
    return (record, j - start + 1, prefix_time) if record is not None else None


def recover(rare: list[tuple[int, str]]) -> tuple[list[Recovered], list[tuple[int, str]]]:
    """Records recovered from the rare lines of one input (sorted by line), and the unparsed lines."""
    records: list[Recovered] = []
    unparsed: list[tuple[int, str]] = []
    k = 0
    while k < len(rare):
        line, raw = rare[k]
        text, prefix_time = _strip_prefix(raw)
        body = text.strip()
        if body.startswith("{") and body.endswith("}"):
            record = _loads_object(body)
            if record is not None:
                records.append(Recovered(line, 1, "parsed", None, prefix_time, record, raw))
                k += 1
                continue
            repaired = repair(body)
            if repaired is not None:
                records.append(Recovered(line, 1, "repaired", None, prefix_time, repaired, raw))
                k += 1
                continue
        if body.startswith("{"):
            found = _multiline(rare, k)
            if found is not None:
                record, span, ptime = found
                lines_raw = "\n".join(r for _, r in rare[k : k + span])
                records.append(Recovered(line, span, "parsed", None, ptime, record, lines_raw))
                k += span
                continue
        console = _console(text)
        if console is not None:
            records.append(Recovered(line, 1, "parsed", "zap-console", prefix_time, console, raw))
        else:
            unparsed.append((line, raw))
        k += 1
    return records, unparsed
