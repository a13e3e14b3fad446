"""The resource types the emulator serves, and the discovery documents that list them.

A ``Kind`` names one REST resource (group, version, plural, kind, scope and
subresources). Built-in kinds are fixed; custom resources are added when a
CustomResourceDefinition is created, exactly as the apiserver does, so loading
``deploy/crds/*.yaml`` is what makes ``nodepools.karpenter.sh`` exist.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["BUILTINS", "Kind", "api_group_list", "api_resource_list", "kind_from_crd"]


@dataclass(frozen=True, slots=True)
class Kind:
    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: frozenset[str] = frozenset()
    categories: tuple[str, ...] = ()
    singular: str = ""
    columns: tuple[dict[str, Any], ...] = field(default=(), compare=False)
    storage: str = ""  # another kind's storage key when this one is a view of it

    @property
    def key(self) -> str:
        """Storage key, independent of the version served."""
        return self.storage or f"{self.group}/{self.plural}"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version(self) -> str:
        return self.api_version

    def discovery(self) -> list[dict[str, Any]]:
        verbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
        entry: dict[str, Any] = {
            "name": self.plural,
            "singularName": self.singular or self.kind.lower(),
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": verbs,
        }
        if self.short_names:
            entry["shortNames"] = list(self.short_names)
        if self.categories:
            entry["categories"] = list(self.categories)
        entries = [entry]
        for sub in sorted(self.subresources):
            sub_kind = {"scale": "Scale", "binding": "Binding", "log": "Pod"}.get(sub, self.kind)
            sub_verbs = {"binding": ["create"], "log": ["get"]}.get(sub, ["get", "patch", "update"])
            sub_entry: dict[str, Any] = {
                "name": f"{self.plural}/{sub}",
                "singularName": "",
                "namespaced": self.namespaced,
                "kind": sub_kind,
                "verbs": sub_verbs,
            }
            if sub == "scale":
                sub_entry.update(group="autoscaling", version="v1")
            entries.append(sub_entry)
        return entries


def _core(plural: str, kind: str, namespaced: bool, short: tuple[str, ...] = (), subs: tuple[str, ...] = (), cats: tuple[str, ...] = ()) -> Kind:
    return Kind("", "v1", plural, kind, namespaced, short, frozenset(subs), cats)


BUILTINS: tuple[Kind, ...] = (
    _core("namespaces", "Namespace", False, ("ns",), ("status",)),
    _core("pods", "Pod", True, ("po",), ("status", "binding", "log"), ("all",)),
    _core("nodes", "Node", False, ("no",), ("status",)),
    _core("events", "Event", True, ("ev",)),
    _core("configmaps", "ConfigMap", True, ("cm",)),
    _core("services", "Service", True, ("svc",), ("status",), ("all",)),
    _core("serviceaccounts", "ServiceAccount", True, ("sa",)),
    Kind("apps", "v1", "deployments", "Deployment", True, ("deploy",), frozenset({"status", "scale"}), ("all",)),
    Kind("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",), frozenset({"status", "scale"}), ("all",)),
    Kind("apps", "v1", "daemonsets", "DaemonSet", True, ("ds",), frozenset({"status"}), ("all",)),
    Kind("coordination.k8s.io", "v1", "leases", "Lease", True),
    Kind("events.k8s.io", "v1", "events", "Event", True, ("ev",), storage="/events"),
    Kind("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False, ("crd", "crds"), frozenset({"status"})),
)


def kind_from_crd(crd: dict[str, Any]) -> list[Kind]:
    """One Kind per served version of a CustomResourceDefinition."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    kinds: list[Kind] = []
    for version in spec.get("versions") or []:
        if not version.get("served", True):
            continue
        subs = frozenset((version.get("subresources") or {}).keys())
        kinds.append(
            Kind(
                group=spec["group"],
                version=version["name"],
                plural=names["plural"],
                kind=names["kind"],
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                short_names=tuple(names.get("shortNames") or ()),
                subresources=subs,
                categories=tuple(names.get("categories") or ()),
                singular=names.get("singular", ""),
                columns=tuple(version.get("additionalPrinterColumns") or ()),
            )
        )
    return kinds


def api_resource_list(group_version: str, kinds: list[Kind]) -> dict[str, Any]:
    resources: list[dict[str, Any]] = []
    for kind in kinds:
        resources.extend(kind.discovery())
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}


def api_group_list(kinds: list[Kind]) -> dict[str, Any]:
    groups: dict[str, list[str]] = {}
    for kind in kinds:
        if kind.group:
            versions = groups.setdefault(kind.group, [])
            if kind.version not in versions:
                versions.append(kind.version)
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [api_group(name, versions) for name, versions in groups.items()],
    }


def api_group(name: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": name, "versions": entries, "preferredVersion": entries[0]}
