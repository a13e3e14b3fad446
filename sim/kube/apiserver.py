"""The REST semantics of the Kubernetes API, independent of HTTP.

``ApiServer`` resolves a path to a resource, applies get/list/create/replace/patch/
delete to the store, serves the subresources we need (``status``, ``scale``, pod
``binding`` and ``log``), registers custom resources when their CRD is created, serves
events.k8s.io/v1 as a view of core/v1 Events, pages lists (``limit``/``continue``) and
opens watch streams (``sim.kube.watching``).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import yaml

from sim.kube import eventsview, openapi, watching
from sim.kube import kinds as kinds_mod
from sim.kube.kinds import BUILTINS, Kind
from sim.kube.kubelet import set_condition
from sim.kube.patching import PatchError, json_patch, merge_patch, strategic_merge_patch
from sim.kube.selectors import FieldSelector, LabelSelector, SelectorError
from sim.kube.store import ApiError, Store, now_iso

__all__ = ["ApiServer", "Request", "Route"]

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Route:
    kind: Kind
    namespace: str = ""
    name: str = ""
    subresource: str = ""


@dataclass(slots=True)
class Request:
    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    content_type: str = ""


class ApiServer:
    def __init__(self, store: Store, bookmark_interval: float = 1.0) -> None:
        self.store = store
        self.kinds: dict[tuple[str, str, str], Kind] = {}  # (group, version, plural)
        self.bookmark_interval = bookmark_interval
        self.pod_logs: dict[tuple[str, str, str, bool], str] = {}
        self._recorded: dict[tuple[str, str, str, str], tuple[str, str]] = {}
        self.version = {"major": "1", "minor": "36", "gitVersion": "v1.36.1", "gitCommit": "emulated",
                        "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.22.8",
                        "compiler": "gc", "platform": "linux/amd64"}
        for kind in BUILTINS:
            self.register(kind)

    # ---- registry -------------------------------------------------------------------------
    def register(self, kind: Kind) -> None:
        self.kinds[(kind.group, kind.version, kind.plural)] = kind

    def kind(self, group: str, version: str, plural: str) -> Kind:
        try:
            return self.kinds[(group, version, plural)]
        except KeyError:
            raise ApiError(404, "the server could not find the requested resource", "NotFound") from None

    def find_kind(self, plural_or_kind: str) -> Kind:
        for kind in self.kinds.values():
            if plural_or_kind in (kind.plural, kind.kind):
                return kind
        raise KeyError(plural_or_kind)

    def register_crd(self, crd: Obj) -> None:
        for kind in kinds_mod.kind_from_crd(crd):
            self.register(kind)

    # ---- routing --------------------------------------------------------------------------
    def route(self, path: str) -> Route | Obj:
        """A resource route, or a discovery document for discovery paths."""
        parts = [p for p in path.split("/") if p]
        if parts == ["api"]:
            return {"kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}
        if parts == ["apis"]:
            return kinds_mod.api_group_list(list(self.kinds.values()))
        if parts == ["version"]:
            return dict(self.version)
        if parts[:2] == ["openapi", "v3"]:
            kinds = list(self.kinds.values())
            if len(parts) == 2:
                return openapi.index(kinds)
            group, version = ("", parts[3]) if parts[2] == "api" else (parts[3], parts[4] if len(parts) > 4 else "")
            return openapi.group_version_document(kinds, group, version)
        if parts[:1] == ["openapi"]:
            raise ApiError(404, "the server could not find the requested resource")
        if parts[:1] == ["api"]:
            group, rest = "", parts[1:]
        elif parts[:1] == ["apis"] and len(parts) >= 2:
            group, rest = parts[1], parts[2:]
            if not rest:
                versions = sorted({k.version for k in self.kinds.values() if k.group == group})
                if not versions:
                    raise ApiError(404, "the server could not find the requested resource")
                return kinds_mod.api_group(group, versions)
        else:
            raise ApiError(404, "the server could not find the requested resource")
        version, rest = rest[0], rest[1:]
        if not rest:
            listed = [k for k in self.kinds.values() if k.group == group and k.version == version]
            if not listed:
                raise ApiError(404, "the server could not find the requested resource")
            return kinds_mod.api_resource_list(f"{group}/{version}" if group else version, listed)
        namespace = ""
        if rest[0] == "namespaces" and len(rest) >= 3 and (group, version, rest[2]) in self.kinds:
            namespace, rest = rest[1], rest[2:]
        kind = self.kind(group, version, rest[0])
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        if sub and sub not in kind.subresources:
            raise ApiError(404, "the server could not find the requested resource")
        return Route(kind, namespace, name, sub)

    # ---- verbs ------------------------------------------------------------------------------
    def handle(self, request: Request, route: Route) -> tuple[int, Obj | str]:
        if route.kind.storage == "/events":
            return self._events_view(request, route)
        return self._handle(request, route)

    def _events_view(self, request: Request, route: Route) -> tuple[int, Obj | str]:
        """events.k8s.io/v1: convert bodies to core/v1, answers back."""
        core = Route(self.kind("", "v1", "events"), route.namespace, route.name, route.subresource)
        query = dict(request.query)
        if query.get("fieldSelector"):
            fields = FieldSelector.parse(query["fieldSelector"])
            query["fieldSelector"] = ",".join(f"{eventsview.core_field_path(p)}{'=' if eq else '!='}{v}" for p, eq, v in fields.terms)
        body = request.body
        if request.method in ("POST", "PUT") and body:
            parsed = self._body(request)
            body = orjson.dumps(eventsview.to_core(parsed) if isinstance(parsed, dict) else parsed)
        elif request.method == "PATCH" and body:
            with self.store.lock:
                view = eventsview.from_core(self.store.get(core.kind, route.namespace, route.name))
                patched = self._apply_patch(view, request, route.kind)
                patched.setdefault("metadata", {})["resourceVersion"] = view["metadata"]["resourceVersion"]
                return 200, eventsview.from_core(self.store.replace(core.kind, route.namespace, route.name, eventsview.to_core(patched)))
        status, answer = self._handle(Request(request.method, request.path, query, body, request.content_type), core)
        if isinstance(answer, dict) and answer.get("kind") == "EventList":
            answer = {**answer, "apiVersion": "events.k8s.io/v1", "items": [eventsview.from_core(e) for e in answer["items"]]}
        elif isinstance(answer, dict) and answer.get("kind") == "Event":
            answer = eventsview.from_core(answer)
        return status, answer

    def _handle(self, request: Request, route: Route) -> tuple[int, Obj | str]:
        kind, ns, name, sub = route.kind, route.namespace, route.name, route.subresource
        if kind.namespaced and name and not ns:
            raise ApiError(404, "the server could not find the requested resource")
        method = request.method
        if sub == "log" and method == "GET":
            return 200, self._log(ns, name, request.query)
        if sub == "binding" and method == "POST":
            return 201, self._bind(ns, name, self._body(request))
        if sub == "scale":
            return self._scale(request, route)
        if method == "GET" and not name:
            return 200, self.list_answer(kind, ns, request.query)
        if method == "GET":
            return 200, self.store.get(kind, ns, name)
        if method == "POST" and not name:
            body = self._body(request)
            if kind.key == "/pods":
                return 201, self.create_pod(ns, body)
            obj = self.store.create(kind, ns, body)
            if kind.plural == "customresourcedefinitions":
                obj = self._establish(obj)
            return 201, obj
        if method == "PUT" and name:
            body = self._body(request)
            if (body.get("metadata") or {}).get("name", name) != name:
                raise ApiError(400, "the name of the object does not match the name on the URL")
            return 200, self.store.replace(kind, ns, name, body, sub)
        if method == "PATCH" and name:
            return self._patch(request, route)
        if method == "DELETE" and name:
            return 200, self._delete(kind, ns, name, request)
        if method == "DELETE":
            items, _ = self.list_objects(kind, ns, request.query)
            for item in items:
                self.store.delete(kind, item["metadata"].get("namespace", ""), item["metadata"]["name"])
            return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
        raise ApiError(405, f"the server does not allow this method on the requested resource ({method})")

    def _body(self, request: Request) -> Obj:
        try:
            if "yaml" in request.content_type:
                loaded = yaml.safe_load(request.body or b"{}")
            else:
                loaded = orjson.loads(request.body or b"{}")
        except Exception as e:
            raise ApiError(400, f"the request body could not be decoded: {e}") from e
        if not isinstance(loaded, (dict, list)):
            raise ApiError(400, "the request body must be a JSON object")
        return loaded  # type: ignore[return-value]

    def _selectors(self, query: dict[str, str]) -> tuple[LabelSelector, FieldSelector]:
        try:
            return LabelSelector.parse(query.get("labelSelector")), FieldSelector.parse(query.get("fieldSelector"))
        except SelectorError as e:
            raise ApiError(400, str(e)) from e

    def list_objects(self, kind: Kind, ns: str, query: dict[str, str]) -> tuple[list[Obj], int]:
        labels, fields = self._selectors(query)
        return self.store.select(kind, ns, labels, fields)

    def list_answer(self, kind: Kind, ns: str, query: dict[str, str]) -> Obj:
        """A list, in pages when ``limit`` is given (``continue`` tokens resume after the last key)."""
        items, rv = self.list_objects(kind, ns, query)
        items = sorted(items, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        meta: Obj = {"resourceVersion": str(rv)}
        token = query.get("continue")
        if token:
            try:
                state = orjson.loads(base64.urlsafe_b64decode(token.encode()))
                after, snapshot = tuple(state["after"]), int(state["rv"])
            except (ValueError, KeyError, TypeError) as e:
                raise ApiError(400, f"continue key is not valid: {e}") from e
            if snapshot < self.store.compacted_rv:
                raise ApiError(410, "The provided continue parameter is too old to display a consistent list result. "
                                    "You can start a new list without the continue parameter.", "Expired")
            items = [o for o in items if (o["metadata"].get("namespace", ""), o["metadata"]["name"]) > after]
            meta["resourceVersion"] = str(snapshot)
        limit = int(query.get("limit") or 0)
        if 0 < limit < len(items):
            last = items[limit - 1]["metadata"]
            state = {"rv": int(meta["resourceVersion"]), "after": [last.get("namespace", ""), last["name"]]}
            meta["continue"] = base64.urlsafe_b64encode(orjson.dumps(state)).decode()
            meta["remainingItemCount"] = len(items) - limit
            items = items[:limit]
        return {"kind": f"{kind.kind}List", "apiVersion": kind.api_version, "metadata": meta, "items": items}

    def handle_create_crd(self, crd: Obj) -> Obj:
        return self._establish(self.store.create(self.kind("apiextensions.k8s.io", "v1", "customresourcedefinitions"), "", crd))

    def _establish(self, crd: Obj) -> Obj:
        self.register_crd(crd)

        def ready(obj: Obj) -> None:
            obj["status"] = {
                "acceptedNames": obj["spec"]["names"],
                "storedVersions": [v["name"] for v in obj["spec"]["versions"] if v.get("storage", True)],
                "conditions": [
                    {"type": t, "status": "True", "reason": r, "message": m, "lastTransitionTime": now_iso()}
                    for t, r, m in (("NamesAccepted", "NoConflicts", "no conflicts found"),
                                    ("Established", "InitialNamesAccepted", "the initial names have been accepted"))
                ],
            }

        return self.store.mutate(self.kind("apiextensions.k8s.io", "v1", "customresourcedefinitions"), "",
                                 crd["metadata"]["name"], ready, "status")

    def _patch(self, request: Request, route: Route) -> tuple[int, Obj]:
        kind, ns, name, sub = route.kind, route.namespace, route.name, route.subresource
        ctype = request.content_type.split(";")[0].strip()
        body = self._body(request)
        is_custom = (kind.group, kind.version, kind.plural) not in {(k.group, k.version, k.plural) for k in BUILTINS}
        if ctype == "application/apply-patch+yaml":
            if self.store.find(kind, ns, name) is None:
                assert isinstance(body, dict)
                return 201, self.store.create(kind, ns, body)
        elif ctype == "application/strategic-merge-patch+json" and is_custom:
            raise ApiError(415, "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml", "UnsupportedMediaType")
        elif ctype not in ("application/merge-patch+json", "application/strategic-merge-patch+json", "application/json-patch+json"):
            raise ApiError(415, f"unsupported patch type {ctype!r}", "UnsupportedMediaType")
        with self.store.lock:
            old = self.store.get(kind, ns, name)
            new = self._apply_patch(old, request, kind)
            wanted = (body.get("metadata") or {}).get("resourceVersion") if isinstance(body, dict) else None
            meta = new.setdefault("metadata", {})
            meta["resourceVersion"] = str(wanted) if wanted else old["metadata"]["resourceVersion"]
            return 200, self.store.replace(kind, ns, name, new, sub)

    def _apply_patch(self, old: Obj, request: Request, kind: Kind) -> Obj:
        ctype = request.content_type.split(";")[0].strip()
        body = self._body(request)
        try:
            if ctype == "application/json-patch+json":
                if not isinstance(body, list):
                    raise PatchError("a JSON patch must be a list of operations", 400)
                new = json_patch(old, body)
            elif ctype == "application/strategic-merge-patch+json":
                new = strategic_merge_patch(old, body)
            else:
                new = merge_patch(old, body)
        except PatchError as e:
            raise ApiError(e.status, str(e)) from e
        if not isinstance(new, dict):
            raise ApiError(422, "the patch did not produce an object")
        return new

    def _delete(self, kind: Kind, ns: str, name: str, request: Request) -> Obj:
        options: Obj = {}
        if request.body:
            parsed = self._body(request)
            options = parsed if isinstance(parsed, dict) else {}
        pre = options.get("preconditions") or {}
        return self.store.delete(kind, ns, name, pre.get("resourceVersion"), pre.get("uid"))

    # ---- what admission and the scheduler add -------------------------------------------------
    def create_pod(self, ns: str, body: Obj) -> Obj:
        """Create a pod with the defaults admission adds (phase Pending, scheduler, tolerations)."""
        pod = dict(body)
        spec = dict(pod.get("spec") or {})
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("priority", 0)
        tolerations = list(spec.get("tolerations") or [])
        for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
            if not any(t.get("key") == key and t.get("effect") in ("NoExecute", None, "") for t in tolerations):
                tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
        spec["tolerations"] = tolerations
        pod["spec"] = spec
        requests = [c.get("resources") or {} for c in spec.get("containers") or []]
        qos = "BestEffort" if not any(r.get("requests") or r.get("limits") for r in requests) else "Burstable"
        pod["status"] = {"phase": "Pending", "qosClass": qos, **(pod.get("status") or {})}
        return self.store.create(self.kind("", "v1", "pods"), ns, pod)

    def bind(self, ns: str, name: str, node: str) -> Obj:
        return self._bind(ns, name, {"target": {"kind": "Node", "name": node}})

    def record_event(self, obj: Obj, type_: str, reason: str, message: str, component: str) -> Obj:
        """Post (or aggregate: count + 1) a core/v1 Event about ``obj``."""
        events = self.kind("", "v1", "events")
        meta = obj["metadata"]
        ns = meta.get("namespace") or "default"
        now = now_iso()
        key = (meta.get("uid", ""), reason, message, component)
        with self.store.lock:
            known = self._recorded.get(key)
            if known is not None and self.store.find(events, *known) is not None:
                return self.store.mutate(events, known[0], known[1],
                                         lambda e: e.update(count=int(e.get("count", 1)) + 1, lastTimestamp=now))
            body = {
                "metadata": {"name": f"{meta['name']}.{self.store.rng.getrandbits(64):016x}", "namespace": ns},
                "involvedObject": {"kind": obj.get("kind", ""), "namespace": meta.get("namespace", ""), "name": meta["name"],
                                   "uid": meta.get("uid", ""), "apiVersion": obj.get("apiVersion", ""),
                                   "resourceVersion": meta.get("resourceVersion", "")},
                "reason": reason, "message": message, "type": type_, "count": 1,
                "source": {"component": component}, "firstTimestamp": now, "lastTimestamp": now,
                "eventTime": None, "reportingComponent": component, "reportingInstance": "",
            }
            created = self.store.create(events, ns, body)
            self._recorded[key] = (ns, created["metadata"]["name"])
            return created

    # ---- subresources ------------------------------------------------------------------------
    def _bind(self, ns: str, name: str, body: Obj) -> Obj:
        pods = self.kind("", "v1", "pods")
        target = (body.get("target") or {}).get("name", "")
        if not target:
            raise ApiError(422, "Binding target name is required")

        def bind(pod: Obj) -> None:
            current = pod.get("spec", {}).get("nodeName")
            if current:
                raise ApiError(409, f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is already assigned to node "{current}"', "Conflict", pods, name)
            pod["spec"]["nodeName"] = target
            set_condition(pod, "PodScheduled", "True")

        with self.store.lock:
            pod = self.store.get(pods, ns, name)
            if pod["metadata"].get("deletionTimestamp"):
                raise ApiError(409, f"pod {name} is being deleted, cannot be assigned to a host", "Conflict", pods, name)
            self.store.mutate(pods, ns, name, bind, "*")
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}

    def _scale(self, request: Request, route: Route) -> tuple[int, Obj]:
        kind, ns, name = route.kind, route.namespace, route.name
        if request.method in ("PUT", "PATCH"):
            body = self._body(request)
            replicas = (body.get("spec") or {}).get("replicas") if isinstance(body, dict) else None
            if request.method == "PATCH" and isinstance(body, list):
                replicas = json_patch({"spec": {"replicas": 0}}, body)["spec"]["replicas"]
            if not isinstance(replicas, int) or replicas < 0:
                raise ApiError(422, "Scale.spec.replicas: Invalid value: must be a non-negative integer")
            wanted = (body.get("metadata") or {}).get("resourceVersion") if isinstance(body, dict) else None
            with self.store.lock:
                current = self.store.get(kind, ns, name)
                if wanted and str(wanted) != current["metadata"]["resourceVersion"]:
                    raise ApiError(409, f'Operation cannot be fulfilled on {kind.plural}.{kind.group} "{name}": the object has been modified; please apply your changes to the latest version and try again', "Conflict", kind, name)
                self.store.mutate(kind, ns, name, lambda o: o["spec"].__setitem__("replicas", replicas))
        obj = self.store.get(kind, ns, name)
        selector = (obj.get("spec") or {}).get("selector") or {}
        labels = ",".join(f"{k}={v}" for k, v in (selector.get("matchLabels") or {}).items())
        return 200, {
            "kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: obj["metadata"][k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")},
            "spec": {"replicas": obj["spec"].get("replicas", 1)},
            "status": {"replicas": (obj.get("status") or {}).get("replicas", 0), "selector": labels},
        }

    def _log(self, ns: str, name: str, query: dict[str, str]) -> str:
        pod = self.store.get(self.kind("", "v1", "pods"), ns, name)
        containers = [c["name"] for c in pod.get("spec", {}).get("containers", [])]
        container = query.get("container") or ""
        if not container:
            if len(containers) != 1:
                raise ApiError(400, f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]")
            container = containers[0]
        elif container not in containers:
            raise ApiError(400, f"container {container} is not valid for pod {name}")
        previous = query.get("previous") in ("true", "1", "True")
        text = self.pod_logs.get((ns, name, container, previous))
        if text is None and previous:
            raise ApiError(400, f'previous terminated container "{container}" in pod "{name}" not found')
        text = text or ""
        if query.get("tailLines"):
            lines = text.splitlines(keepends=True)
            text = "".join(lines[-int(query["tailLines"]):]) if int(query["tailLines"]) > 0 else ""
        return text

    # ---- watch -----------------------------------------------------------------------------------

    def watch(self, route: Route, query: dict[str, str], stopped: Any) -> Iterator[list[Obj]]:
        """Batches of watch events as dicts, ending at timeoutSeconds (or when ``stopped()``).

        Bad selectors, bad versions and 410 raise here, before the stream starts."""
        labels, fields = self._selectors(query)
        return watching.open_watch(self.store, route.kind, route.namespace, route.name, labels, fields, query, stopped,
                                   self.bookmark_interval)
