"""The emulator's control loops: scheduler, kubelet, workload controllers, garbage collection.

One thread runs them in turn whenever the store changes (or a timer falls due, or on
a short tick), so the behaviour is deterministic for a given sequence of API calls:

- workloads: a Deployment owns a ReplicaSet per pod-template hash, a ReplicaSet keeps
  ``spec.replicas`` pods (``inflate-74ccd665f4-79x4g``), a DaemonSet keeps one pod on
  every node it matches (bound directly, so its overhead is real);
- scheduler: see ``sim.kube.scheduler``;
- kubelet: nodes turn Ready after their delay; pods bound to a Ready node run;
- garbage collection: dependents of deleted owners and pods of deleted nodes go away.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from sim.kube import kubelet, scheduler
from sim.kube.apiserver import ApiServer
from sim.kube.kinds import Kind
from sim.kube.kubelet import set_condition
from sim.kube.store import ApiError, WatchEvent, random_suffix

__all__ = ["Controllers", "template_hash"]

Obj = dict[str, Any]
_WATCHED = {"/pods", "/nodes", "apps/deployments", "apps/replicasets", "apps/daemonsets", "/namespaces"}
_OWNERS = {"/nodes", "apps/deployments", "apps/replicasets", "apps/daemonsets", "/namespaces"}
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def template_hash(template: Obj) -> str:
    """The pod-template-hash label, made like the Deployment controller's: an FNV-1a 32-bit hash
    of the template, printed in decimal, each digit mapped into the safe alphabet ("74ccd665f4")."""
    import orjson

    value = 0x811C9DC5
    for byte in orjson.dumps(template, option=orjson.OPT_SORT_KEYS):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(_ALPHABET[ord(c) % len(_ALPHABET)] for c in str(value))


def _owned_by(obj: Obj, uid: str) -> bool:
    return any(ref.get("uid") == uid for ref in obj["metadata"].get("ownerReferences") or [])


def _owner_ref(owner: Obj) -> Obj:
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


class Controllers:
    def __init__(self, api: ApiServer, *, scheduler_enabled: bool = True, kubelet_enabled: bool = True,
                 workloads_enabled: bool = True, tick: float = 0.25) -> None:
        self.api = api
        self.store = api.store
        self.scheduler_enabled = scheduler_enabled
        self.kubelet_enabled = kubelet_enabled
        self.workloads_enabled = workloads_enabled
        self.tick = tick
        self._dirty = threading.Event()
        self._stop = threading.Event()
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self._ips = itertools.count(4)
        self._thread: threading.Thread | None = None
        self.passes = 0
        self._collect = False
        self._requests: dict[str, tuple[str, dict[str, int]]] = {}
        self.idle = threading.Event()
        self.store.subscribe(self._on_event)

    def requests(self, pod: Obj) -> dict[str, int]:
        """A pod's effective requests, parsed once per version."""
        meta = pod["metadata"]
        cached = self._requests.get(meta["uid"])
        if cached is not None and cached[0] == meta["resourceVersion"]:
            return cached[1]
        if len(self._requests) > 100_000:
            self._requests.clear()
        need = scheduler.pod_requests(pod)
        self._requests[meta["uid"]] = (meta["resourceVersion"], need)
        return need

    def kind(self, key: str) -> Kind:
        group, plural = key.split("/")
        return next(k for k in self.api.kinds.values() if k.group == group and k.plural == plural)

    # ---- loop -------------------------------------------------------------------------------
    def _on_event(self, event: WatchEvent) -> None:
        if event.key in _WATCHED:
            if event.type == "DELETED" and event.key in _OWNERS:
                self._collect = True
            self._dirty.set()
            self.idle.clear()

    def after(self, delay: float, action: Callable[[], None]) -> None:
        with self.store.lock:
            heapq.heappush(self._timers, (time.monotonic() + delay, next(self._seq), action))
        self._dirty.set()

    def start(self) -> None:
        self._dirty.set()  # a first pass over whatever was created before the start
        self._thread = threading.Thread(target=self._run, name="kube-emulator-controllers", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._dirty.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.is_set():
            with self.store.lock:
                due = self._timers[0][0] - time.monotonic() if self._timers else self.tick
            woke = self._dirty.wait(timeout=max(0.0, min(self.tick, due)))
            self._dirty.clear()
            if self._stop.is_set():
                return
            with self.store.lock:
                timers_due = bool(self._timers) and self._timers[0][0] <= time.monotonic()
            if not woke and not timers_due:
                self.idle.set()
                continue
            try:
                self.run_once()
            except Exception:  # a bad object must not kill the emulator
                import logging

                logging.getLogger(__name__).exception("controller pass failed")
            if not self._dirty.is_set():
                self.idle.set()

    def run_once(self) -> None:
        """One pass of every loop (tests may call it directly on a stopped emulator)."""
        self.passes += 1
        now = time.monotonic()
        due: list[Callable[[], None]] = []
        with self.store.lock:
            while self._timers and self._timers[0][0] <= now:
                due.append(heapq.heappop(self._timers)[2])
        for action in due:
            with contextlib.suppress(ApiError):
                action()
        if self.workloads_enabled:
            if self._collect:
                self._collect = False
                self._garbage_collect()
                self._empty_deleted_namespaces()
            self._deployments()
            self._replicasets()
            self._daemonsets()
        if self.scheduler_enabled:
            self._schedule()
        if self.kubelet_enabled:
            self._run_pods()

    # ---- workloads ------------------------------------------------------------------------------
    def _deployments(self) -> None:
        rs_kind = self.kind("apps/replicasets")
        replicasets = self.store.all_objects(rs_kind)
        pods = self.store.all_objects(self.kind("/pods"))
        for deploy in self.store.all_objects(self.kind("apps/deployments")):
            meta, spec = deploy["metadata"], deploy.get("spec") or {}
            if meta.get("deletionTimestamp"):
                continue
            template = spec.get("template") or {}
            pth = template_hash(template)
            name = f"{meta['name']}-{pth}"
            owned = [rs for rs in replicasets if _owned_by(rs, meta["uid"])]
            replicas = int(spec.get("replicas", 1))
            current = next((rs for rs in owned if rs["metadata"]["name"] == name), None)
            if current is None:
                labels = {**((template.get("metadata") or {}).get("labels") or {}), "pod-template-hash": pth}
                tmpl = {**template, "metadata": {**(template.get("metadata") or {}), "labels": labels}}
                selector = dict(spec.get("selector") or {})
                selector["matchLabels"] = {**(selector.get("matchLabels") or {}), "pod-template-hash": pth}
                body = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                        "metadata": {"name": name, "namespace": meta["namespace"], "labels": labels,
                                     "annotations": {"deployment.kubernetes.io/revision": str(len(owned) + 1)},
                                     "ownerReferences": [_owner_ref(deploy)]},
                        "spec": {"replicas": replicas, "selector": selector, "template": tmpl}}
                current = self.store.create(rs_kind, meta["namespace"], body)
            elif int(current["spec"].get("replicas", 0)) != replicas:
                current = self.store.mutate(rs_kind, meta["namespace"], name, _set_replicas(replicas))
            for rs in owned:
                if rs["metadata"]["name"] != name and int(rs["spec"].get("replicas", 0)) != 0:
                    self.store.mutate(rs_kind, meta["namespace"], rs["metadata"]["name"], _set_replicas(0))
            mine = [p for p in pods if any(_owned_by(p, rs["metadata"]["uid"]) for rs in owned) and not p["metadata"].get("deletionTimestamp")]
            ready = sum(1 for p in mine if _pod_ready(p))
            updated = sum(1 for p in mine if _owned_by(p, current["metadata"]["uid"]))
            status = {"observedGeneration": meta.get("generation", 1), "replicas": len(mine), "updatedReplicas": updated,
                      "readyReplicas": ready, "availableReplicas": ready, "unavailableReplicas": max(replicas - ready, 0)}
            status = {k: v for k, v in status.items() if v or k in ("observedGeneration", "replicas")}
            self._set_status(self.kind("apps/deployments"), deploy, status, available=ready >= replicas)

    def _set_status(self, kind: Kind, obj: Obj, fields: Obj, available: bool | None = None) -> None:
        old = obj.get("status") or {}
        wanted = {**{k: v for k, v in old.items() if k == "conditions"}, **fields}
        if available is not None:
            probe: Obj = {"status": {"conditions": [dict(c) for c in old.get("conditions") or []]}}
            set_condition(probe, "Available", "True" if available else "False",
                          "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
                          "Deployment has minimum availability." if available else "Deployment does not have minimum availability.")
            for cond in probe["status"]["conditions"]:
                cond.pop("lastProbeTime", None)
            wanted["conditions"] = probe["status"]["conditions"]
        if wanted != old:
            self.store.mutate(kind, obj["metadata"].get("namespace", ""), obj["metadata"]["name"],
                              lambda o: o.__setitem__("status", wanted), "status")

    def _replicasets(self) -> None:
        pod_kind = self.kind("/pods")
        pods = self.store.all_objects(pod_kind)
        for rs in self.store.all_objects(self.kind("apps/replicasets")):
            meta, spec = rs["metadata"], rs.get("spec") or {}
            if meta.get("deletionTimestamp"):
                continue
            mine = [p for p in pods if _owned_by(p, meta["uid"]) and not p["metadata"].get("deletionTimestamp")]
            want = int(spec.get("replicas", 1))
            template = spec.get("template") or {}
            for _ in range(want - len(mine)):
                body = {"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": f"{meta['name']}-{random_suffix(rng=self.store.rng)}", "generateName": f"{meta['name']}-",
                                     "namespace": meta["namespace"], "labels": dict((template.get("metadata") or {}).get("labels") or {}),
                                     "annotations": dict((template.get("metadata") or {}).get("annotations") or {}),
                                     "ownerReferences": [_owner_ref(rs)]},
                        "spec": dict(template.get("spec") or {})}
                try:
                    mine.append(self.api.create_pod(meta["namespace"], body))
                except ApiError:
                    continue
            if len(mine) > want:
                victims = sorted(mine, key=lambda p: (bool((p.get("spec") or {}).get("nodeName")), _pod_ready(p), p["metadata"]["creationTimestamp"]))
                for pod in victims[: len(mine) - want]:
                    self.store.delete(pod_kind, pod["metadata"]["namespace"], pod["metadata"]["name"])
                mine = victims[len(mine) - want :]
            ready = sum(1 for p in mine if _pod_ready(p))
            status = {"replicas": len(mine), "fullyLabeledReplicas": len(mine), "readyReplicas": ready,
                      "availableReplicas": ready, "observedGeneration": meta.get("generation", 1)}
            self._set_status(self.kind("apps/replicasets"), rs, {k: v for k, v in status.items() if v or k in ("replicas", "observedGeneration")})

    def _daemonsets(self) -> None:
        pod_kind = self.kind("/pods")
        pods = self.store.all_objects(pod_kind)
        nodes = [n for n in self.store.all_objects(self.kind("/nodes")) if not n["metadata"].get("deletionTimestamp")]
        for ds in self.store.all_objects(self.kind("apps/daemonsets")):
            meta, template = ds["metadata"], (ds.get("spec") or {}).get("template") or {}
            if meta.get("deletionTimestamp"):
                continue
            tolerations = list((template.get("spec") or {}).get("tolerations") or []) + DAEMON_TOLERATIONS
            probe = {"spec": {**(template.get("spec") or {}), "tolerations": tolerations}}
            mine = {(p.get("spec") or {}).get("nodeName"): p for p in pods if _owned_by(p, meta["uid"])}
            wanted = set()
            for node in nodes:
                reasons = scheduler.fits_reasons(probe, {**node, "status": {**node["status"], "conditions": [{"type": "Ready", "status": "True"}]}}, {})
                if any(not r.startswith("Insufficient") and r != "Too many pods" for r in reasons):
                    continue
                name = node["metadata"]["name"]
                wanted.add(name)
                if name in mine:
                    continue
                spec = {**(template.get("spec") or {}), "tolerations": tolerations, "nodeName": name,
                        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}]}}}}
                body = {"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": f"{meta['name']}-{random_suffix(rng=self.store.rng)}", "generateName": f"{meta['name']}-",
                                     "namespace": meta["namespace"], "labels": dict((template.get("metadata") or {}).get("labels") or {}),
                                     "ownerReferences": [_owner_ref(ds)]},
                        "spec": spec}
                try:
                    self.api.create_pod(meta["namespace"], body)
                except ApiError:
                    continue
            for node_name, pod in mine.items():
                if node_name not in wanted:
                    self.store.delete(pod_kind, pod["metadata"]["namespace"], pod["metadata"]["name"])
            ready = sum(1 for n, p in mine.items() if n in wanted and _pod_ready(p))
            self._set_status(self.kind("apps/daemonsets"), ds, {
                "desiredNumberScheduled": len(wanted), "currentNumberScheduled": len(wanted & set(mine)),
                "numberReady": ready, "numberMisscheduled": 0, "observedGeneration": meta.get("generation", 1)})

    def _empty_deleted_namespaces(self) -> None:
        """What the namespace controller does: a deleted namespace's objects go with it."""
        names = {n["metadata"]["name"] for n in self.store.all_objects(self.kind("/namespaces"))}
        for kind in list(self.api.kinds.values()):
            if not kind.namespaced or kind.storage:
                continue
            for obj in self.store.all_objects(kind):
                namespace = obj["metadata"].get("namespace", "")
                if namespace and namespace not in names:
                    with contextlib.suppress(ApiError):
                        self.store.delete(kind, namespace, obj["metadata"]["name"])

    def _garbage_collect(self) -> None:
        pod_kind = self.kind("/pods")
        owners: set[str] = set()
        for key in ("apps/deployments", "apps/replicasets", "apps/daemonsets", "/nodes"):
            owners.update(o["metadata"]["uid"] for o in self.store.all_objects(self.kind(key)))
        node_names = {n["metadata"]["name"] for n in self.store.all_objects(self.kind("/nodes"))}
        for key in ("apps/replicasets", "/pods"):
            kind = self.kind(key)
            for obj in self.store.all_objects(kind):
                refs = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("kind") in ("Deployment", "ReplicaSet", "DaemonSet", "Node")]
                orphan = bool(refs) and all(r.get("uid") not in owners for r in refs)
                lost = key == "/pods" and (obj.get("spec") or {}).get("nodeName") and obj["spec"]["nodeName"] not in node_names
                if orphan or lost:
                    with contextlib.suppress(ApiError):
                        self.store.delete(kind if key != "/pods" else pod_kind, obj["metadata"]["namespace"], obj["metadata"]["name"])

    # ---- scheduler ------------------------------------------------------------------------------
    def _schedule(self) -> None:
        pod_kind = self.kind("/pods")
        pods = self.store.all_objects(pod_kind)
        pending = [p for p in pods if not (p.get("spec") or {}).get("nodeName") and not p["metadata"].get("deletionTimestamp")
                   and (p.get("spec") or {}).get("schedulerName", "default-scheduler") == "default-scheduler"
                   and (p.get("status") or {}).get("phase", "Pending") == "Pending"]
        if not pending:
            return
        nodes = sorted((n for n in self.store.all_objects(self.kind("/nodes")) if not n["metadata"].get("deletionTimestamp")),
                       key=lambda n: n["metadata"]["name"])
        used: dict[str, Counter[str]] = {n["metadata"]["name"]: Counter() for n in nodes}
        for pod in pods:
            node_name = (pod.get("spec") or {}).get("nodeName")
            if node_name in used and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                used[node_name].update(self.requests(pod))
        pending.sort(key=lambda p: (-int((p.get("spec") or {}).get("priority") or 0), p["metadata"]["creationTimestamp"], int(p["metadata"]["resourceVersion"])))
        for pod in pending:
            if (pod.get("spec") or {}).get("schedulingGates"):
                self._gated(pod)
                continue
            reasons: Counter[str] = Counter()
            resource_only = 0
            best: tuple[int, str] | None = None
            for node in nodes:
                name = node["metadata"]["name"]
                why = scheduler.fits_reasons(pod, node, used[name], self.requests(pod))
                if why:
                    reasons.update(why)
                    if all(r.startswith("Insufficient") or r == "Too many pods" for r in why):
                        resource_only += 1
                    continue
                free = scheduler.node_allocatable(node)["cpu"] - used[name]["cpu"]
                if best is None or free > best[0]:
                    best = (free, name)
            meta = pod["metadata"]
            if best is not None:
                target = best[1]
                try:
                    self.api.bind(meta["namespace"], meta["name"], target)
                except ApiError:
                    continue
                used[target].update(self.requests(pod))
                self.api.record_event(pod, "Normal", "Scheduled", f"Successfully assigned {meta['namespace']}/{meta['name']} to {target}", "default-scheduler")
                continue
            message = scheduler.unschedulable_message(len(nodes), reasons, resource_only)
            current: Obj = next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"), {})
            if current.get("status") == "False" and current.get("message") == message:
                continue
            try:
                self.store.mutate(pod_kind, meta["namespace"], meta["name"], _unschedulable(message), "status")
            except ApiError:
                continue
            self.api.record_event(pod, "Warning", "FailedScheduling", message, "default-scheduler")

    def _gated(self, pod: Obj) -> None:
        """A pod with scheduling gates is not considered: PodScheduled=False, reason SchedulingGated."""
        current: Obj = next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"), {})
        if current.get("reason") == "SchedulingGated":
            return
        change = _condition("SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates")
        with contextlib.suppress(ApiError):
            self.store.mutate(self.kind("/pods"), pod["metadata"]["namespace"], pod["metadata"]["name"], change, "status")

    # ---- kubelet -------------------------------------------------------------------------------
    def _run_pods(self) -> None:
        pod_kind = self.kind("/pods")
        nodes = {n["metadata"]["name"]: n for n in self.store.all_objects(self.kind("/nodes"))}
        for pod in self.store.all_objects(pod_kind):
            spec, status = pod.get("spec") or {}, pod.get("status") or {}
            node = nodes.get(spec.get("nodeName") or "")
            if node is None or status.get("phase", "Pending") != "Pending" or pod["metadata"].get("deletionTimestamp"):
                continue
            if not scheduler.node_is_ready(node):
                continue
            host_ip = next((a["address"] for a in node["status"].get("addresses") or [] if a.get("type") == "InternalIP"), "10.224.0.4")
            n = next(self._ips)
            pod_ip = f"10.244.{(n // 250) % 250}.{n % 250 + 2}"
            try:
                self.store.mutate(pod_kind, pod["metadata"]["namespace"], pod["metadata"]["name"], _running(pod_ip, host_ip), "status")
            except ApiError:
                continue


def _condition(reason: str, message: str) -> Callable[[Obj], None]:
    def change(pod: Obj) -> None:
        set_condition(pod, "PodScheduled", "False", reason, message)

    return change


def _unschedulable(message: str) -> Callable[[Obj], None]:
    return _condition("Unschedulable", message)


def _running(pod_ip: str, host_ip: str) -> Callable[[Obj], None]:
    def change(pod: Obj) -> None:
        kubelet.pod_running_status(pod, pod_ip, host_ip)

    return change


def _set_replicas(replicas: int) -> Callable[[Obj], None]:
    def change(obj: Obj) -> None:
        obj["spec"]["replicas"] = replicas

    return change


def _pod_ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (pod.get("status") or {}).get("conditions") or [])

