"""The three patch formats the apiserver accepts, applied to raw objects.

- JSON merge patch (RFC 7386, ``application/merge-patch+json``): maps merge, ``null``
  deletes, lists are replaced.
- Strategic merge patch (``application/strategic-merge-patch+json``, built-in kinds
  only): like a merge patch, but the lists Kubernetes declares with a merge key are
  merged item by item (status conditions by ``type``, containers by ``name``,
  owner references by ``uid``…), ``metadata.finalizers`` is merged as a set, an item
  ``{"$patch": "delete", <key>: …}`` removes that item, and
  ``$deleteFromPrimitiveList/<field>`` removes primitives. ``spec.taints`` and
  ``spec.tolerations`` have no merge key in Kubernetes, so they are replaced.
- JSON patch (RFC 6902, ``application/json-patch+json``): add, remove, replace,
  test, move, copy.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["PatchError", "json_patch", "merge_patch", "strategic_merge_patch"]


class PatchError(ValueError):
    """A patch that cannot be applied (answered with 422, or 409 for a failed test)."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


MERGE_KEYS: dict[str, str] = {
    "conditions": "type",
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "env": "name",
    "ports": "containerPort",
    "ownerReferences": "uid",
    "imagePullSecrets": "name",
    "containerStatuses": "name",
    "addresses": "type",
    "hostAliases": "ip",
}
SET_LISTS = frozenset({"finalizers"})


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _merge_list(key: str, current: list[Any], patch: list[Any]) -> list[Any]:
    if key in SET_LISTS:
        merged = list(current)
        merged.extend(item for item in patch if item not in merged)
        return merged
    merge_key = MERGE_KEYS.get(key)
    if merge_key is None or not all(isinstance(i, dict) for i in patch):
        return copy.deepcopy(patch)
    if any(isinstance(i, dict) and i.get("$patch") == "replace" for i in patch):
        return [copy.deepcopy(i) for i in patch if i.get("$patch") != "replace"]
    merged = [copy.deepcopy(i) for i in current]
    for item in patch:
        index = next(
            (n for n, old in enumerate(merged) if isinstance(old, dict) and old.get(merge_key) == item.get(merge_key)),
            None,
        )
        if item.get("$patch") == "delete":
            if index is not None:
                merged.pop(index)
            continue
        if index is None:
            merged.append(strategic_merge_patch({}, item))
        else:
            merged[index] = strategic_merge_patch(merged[index], item)
    return merged


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    deletions = {k: v for k, v in patch.items() if k.startswith("$deleteFromPrimitiveList/")}
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, list) and isinstance(result.get(key), list):
            result[key] = _merge_list(key, result[key], value)
        elif isinstance(value, list):
            result[key] = [strategic_merge_patch({}, i) if isinstance(i, dict) else i for i in value]
        else:
            result[key] = strategic_merge_patch(result.get(key), value)
    for directive, values in deletions.items():
        field = directive.split("/", 1)[1]
        if isinstance(result.get(field), list):
            result[field] = [v for v in result[field] if v not in values]
    return result


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str]) -> Any:
    node = doc
    for part in parts[:-1]:
        if isinstance(node, list):
            try:
                node = node[int(part)]
            except (ValueError, IndexError) as e:
                raise PatchError(f"path segment {part!r} not found") from e
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise PatchError(f"path segment {part!r} not found")
    return node


def _get(doc: Any, parts: list[str]) -> Any:
    if not parts:
        return doc
    parent = _parent(doc, parts)
    last = parts[-1]
    try:
        return parent[int(last)] if isinstance(parent, list) else parent[last]
    except (KeyError, ValueError, IndexError, TypeError) as e:
        raise PatchError(f"path {'/'.join(parts)!r} not found") from e


def _add(doc: Any, parts: list[str], value: Any) -> Any:
    if not parts:
        return value
    parent = _parent(doc, parts)
    last = parts[-1]
    if isinstance(parent, list):
        index = len(parent) if last == "-" else int(last)
        if index > len(parent):
            raise PatchError(f"index {index} out of range")
        parent.insert(index, value)
    elif isinstance(parent, dict):
        parent[last] = value
    else:
        raise PatchError(f"cannot add at {'/'.join(parts)!r}")
    return doc


def _remove(doc: Any, parts: list[str]) -> Any:
    parent = _parent(doc, parts)
    last = parts[-1]
    try:
        if isinstance(parent, list):
            parent.pop(int(last))
        else:
            del parent[last]
    except (KeyError, ValueError, IndexError, TypeError) as e:
        raise PatchError(f"path {'/'.join(parts)!r} not found") from e
    return doc


def json_patch(target: Any, operations: list[dict[str, Any]]) -> Any:
    doc = copy.deepcopy(target)
    if not isinstance(operations, list):
        raise PatchError("a JSON patch must be a list of operations")
    for op in operations:
        kind = op.get("op")
        parts = _pointer(str(op.get("path", "")))
        if kind == "add":
            doc = _add(doc, parts, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            doc = _remove(doc, parts)
        elif kind == "replace":
            _get(doc, parts)
            doc = _add(_remove(doc, parts), parts, copy.deepcopy(op.get("value"))) if parts else op.get("value")
        elif kind == "test":
            if _get(doc, parts) != op.get("value"):
                raise PatchError(f"test operation failed at {op.get('path')!r}", status=422)
        elif kind in ("move", "copy"):
            source = _pointer(str(op.get("from", "")))
            value = copy.deepcopy(_get(doc, source))
            if kind == "move":
                doc = _remove(doc, source)
            doc = _add(doc, parts, value)
        else:
            raise PatchError(f"unknown JSON patch operation {kind!r}")
    return doc
