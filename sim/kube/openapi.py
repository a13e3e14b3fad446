"""The smallest OpenAPI v3 documents that let ``kubectl apply`` work.

kubectl downloads ``/openapi/v3`` (an index of group-versions) and the document of the
group-version it writes to, to learn whether the server validates fields itself
(the ``fieldValidation`` query parameter on the PATCH operation of that kind). Each
document here lists, per resource, a PATCH operation carrying that parameter and the
``x-kubernetes-group-version-kind`` extension, and no schemas: the emulator accepts
``fieldValidation`` and does not validate against schemas.
"""

from __future__ import annotations

from typing import Any

from sim.kube.kinds import Kind

__all__ = ["group_version_document", "index"]

Obj = dict[str, Any]


def _prefix(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def index(kinds: list[Kind]) -> Obj:
    paths = {}
    for kind in kinds:
        key = _prefix(kind.group, kind.version)
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash=0"}
    return {"paths": paths}


def group_version_document(kinds: list[Kind], group: str, version: str) -> Obj:
    paths: Obj = {}
    for kind in kinds:
        if kind.group != group or kind.version != version:
            continue
        base = "/" + _prefix(group, version)
        item = f"{base}/namespaces/{{namespace}}/{kind.plural}/{{name}}" if kind.namespaced else f"{base}/{kind.plural}/{{name}}"
        gvk = {"group": group, "version": version, "kind": kind.kind}
        params = [{"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
                  for n in ("dryRun", "fieldManager", "fieldValidation", "force")]
        paths[item] = {
            "get": {"operationId": f"read{kind.kind}", "x-kubernetes-action": "get", "x-kubernetes-group-version-kind": gvk,
                    "responses": {"200": {"description": "OK"}}},
            "patch": {"operationId": f"patch{kind.kind}", "x-kubernetes-action": "patch", "x-kubernetes-group-version-kind": gvk,
                      "parameters": params, "responses": {"200": {"description": "OK"}}},
        }
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.36.1"}, "paths": paths, "components": {"schemas": {}}}
