"""Label and field selectors, parsed once and matched against raw objects.

Label selectors follow the apiserver grammar: ``a=b``, ``a==b``, ``a!=b``,
``a in (x,y)``, ``a notin (x,y)``, ``a`` (exists) and ``!a`` (does not exist),
comma-separated and all required. Field selectors are ``path=value``,
``path==value`` or ``path!=value`` over dotted paths such as ``spec.nodeName``,
``status.phase`` or ``involvedObject.name``; a missing field reads as "".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["FieldSelector", "LabelSelector", "SelectorError", "field_value"]


class SelectorError(ValueError):
    """A selector string the apiserver would reject (answered with 400)."""


@dataclass(frozen=True, slots=True)
class _Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!exists"
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key, "")
        if self.op == "=":
            return present and value == self.values[0]
        if self.op == "!=":
            return not present or value != self.values[0]
        if self.op == "in":
            return present and value in self.values
        if self.op == "notin":
            return not present or value not in self.values
        if self.op == "exists":
            return present
        return not present


_SET = re.compile(r"^\s*([A-Za-z0-9._/-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EQ = re.compile(r"^\s*([A-Za-z0-9._/-]+)\s*(==|=|!=)\s*([A-Za-z0-9._-]*)\s*$")
_EXISTS = re.compile(r"^\s*(!?)\s*([A-Za-z0-9._/-]+)\s*$")


def _split_top(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


@dataclass(frozen=True, slots=True)
class LabelSelector:
    requirements: tuple[_Requirement, ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> LabelSelector:
        if not text:
            return cls()
        reqs: list[_Requirement] = []
        for part in _split_top(text):
            if m := _SET.match(part):
                values = tuple(v.strip() for v in m.group(3).split(",") if v.strip())
                reqs.append(_Requirement(m.group(1), m.group(2), values))
            elif m := _EQ.match(part):
                op = "!=" if m.group(2) == "!=" else "="
                reqs.append(_Requirement(m.group(1), op, (m.group(3),)))
            elif m := _EXISTS.match(part):
                reqs.append(_Requirement(m.group(2), "!exists" if m.group(1) else "exists"))
            else:
                raise SelectorError(f"unable to parse requirement: {part.strip()!r}")
        return cls(tuple(reqs))

    @classmethod
    def from_match(cls, selector: dict[str, Any] | None) -> LabelSelector:
        """A metav1.LabelSelector (matchLabels + matchExpressions) as a LabelSelector."""
        if not selector:
            return cls()
        reqs = [_Requirement(k, "=", (str(v),)) for k, v in (selector.get("matchLabels") or {}).items()]
        ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!exists"}
        for expr in selector.get("matchExpressions") or []:
            reqs.append(_Requirement(expr["key"], ops[expr["operator"]], tuple(expr.get("values") or ())))
        return cls(tuple(reqs))

    def matches(self, labels: dict[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def __bool__(self) -> bool:
        return bool(self.requirements)


def field_value(obj: dict[str, Any], path: str) -> str:
    """The string value at a dotted path ("" when missing), as field selectors see it."""
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, dict):
            return ""
        node = node.get(part)
        if node is None:
            return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


@dataclass(frozen=True, slots=True)
class FieldSelector:
    terms: tuple[tuple[str, bool, str], ...] = ()  # (path, equal?, value)

    @classmethod
    def parse(cls, text: str | None) -> FieldSelector:
        if not text:
            return cls()
        terms: list[tuple[str, bool, str]] = []
        for part in _split_top(text):
            m = re.match(r"^\s*([A-Za-z0-9._]+)\s*(==|=|!=)\s*(.*?)\s*$", part)
            if not m:
                raise SelectorError(f"invalid field selector: {part.strip()!r}")
            terms.append((m.group(1), m.group(2) != "!=", m.group(3)))
        return cls(tuple(terms))

    def matches(self, obj: dict[str, Any]) -> bool:
        return all((field_value(obj, path) == value) == equal for path, equal, value in self.terms)

    def __bool__(self) -> bool:
        return bool(self.terms)
