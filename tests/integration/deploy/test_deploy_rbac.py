"""deploy/rbac.yaml grants exactly the Kubernetes calls karp-provisioner makes: all of them, nothing more.

A recording proxy sits between the provisioner and the API emulator (sim/kube keeps no request log of
its own). For every request it derives what a real API server's authorizer sees (API group,
resource[/subresource], namespace, name, verb: get/list/watch/create/update/patch/delete), answers 403
Forbidden when deploy/rbac.yaml would not allow it (the ClusterRole everywhere, the Role in the
provisioner's namespace only), and records it.

The run is ``karp-provisioner run``'s replica (``provisioner.controller.service.Service``: leader
election, informers, provisioning, launch, registration, upkeep) against both emulators in the founding
scenario with the example NodePool, plus the upkeep writes a short run does not reliably reach, made
through the controller's own ``KubeFleet``. The test fails on any refused call (a missing grant) and on
any grant never used (least privilege).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from provisioner.azure.credentials import StaticCredential

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
Obj = dict[str, Any]


# ---- what the authorizer sees ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Attributes:
    """A resource request as Kubernetes authorization sees it (RequestInfo)."""

    verb: str
    group: str
    resource: str  # "pods", "nodeclaims/status"
    namespace: str
    name: str

    def __str__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        named = f" {self.name}" if self.name else ""
        return f"{self.verb} {self.resource}{'.' + self.group if self.group else ''}{named}{where}"


def request_attributes(method: str, url: str) -> Attributes | None:
    """The authorization attributes of one HTTP request; None for non-resource paths (/version, discovery)."""
    split = urlsplit(url)
    parts = [p for p in split.path.split("/") if p]
    query = {k: v[-1] for k, v in parse_qs(split.query).items()}
    if parts[:2] == ["api", "v1"]:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        return None
    if not rest:
        return None
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 2:
        namespace, rest = rest[1], rest[2:]
    elif rest[0] == "namespaces" and len(rest) == 2:
        namespace = rest[1]
    resource, name = rest[0], (rest[1] if len(rest) > 1 else "")
    if len(rest) > 2:
        resource += "/" + rest[2]
    if method == "GET":
        verb = "get" if name else ("watch" if query.get("watch") in ("true", "1") else "list")
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete" if name else "deletecollection"}[method]
    if verb in ("list", "watch") and query.get("fieldSelector", "").startswith("metadata.name="):
        name = query["fieldSelector"].split("=", 1)[1]
    return Attributes(verb, group, resource, namespace, name)


# ---- the rules ----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Grant:
    """One (group, resource, verb[, name]) a rule grants, and where: cluster-wide or in one namespace."""

    group: str
    resource: str
    verb: str
    name: str  # "" = any name
    namespace: str  # "" = every namespace (ClusterRole bound by a ClusterRoleBinding)

    def allows(self, a: Attributes) -> bool:
        if (self.group, self.resource, self.verb) != (a.group, a.resource, a.verb):
            return False
        if self.namespace and a.namespace != self.namespace:
            return False
        return not self.name or self.name == a.name


def grants(docs: list[Obj]) -> list[Grant]:
    """What the bound roles in rbac.yaml grant (wildcards are refused by the manifest test)."""
    roles = {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d for d in docs
             if d["kind"] in ("ClusterRole", "Role")}
    out = []
    for binding in (d for d in docs if d["kind"] in ("ClusterRoleBinding", "RoleBinding")):
        ns = binding["metadata"].get("namespace", "")
        ref = binding["roleRef"]
        role = roles[(ref["kind"], ns if ref["kind"] == "Role" else "", ref["name"])]
        for rule in role["rules"]:
            for g in rule["apiGroups"]:
                for r in rule["resources"]:
                    for v in rule["verbs"]:
                        for n in rule.get("resourceNames") or [""]:
                            out.append(Grant(g, r, v, n, ns))
    return out


# ---- a recording, enforcing proxy -----------------------------------------------------------------------
class RbacProxy(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, upstream_port: int, rules: list[Grant]) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        self.upstream_port = upstream_port
        self.rules = rules
        self.seen: list[Attributes] = []
        self.refused: list[Attributes] = []
        self.lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def authorize(self, method: str, path: str) -> bool:
        attrs = request_attributes(method, path)
        if attrs is None:
            return True  # discovery and /version: granted to every authenticated user by system:discovery
        allowed = any(g.allows(attrs) for g in self.rules)
        with self.lock:
            (self.seen if allowed else self.refused).append(attrs)
        return allowed


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: RbacProxy

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._forward("GET")

    def do_POST(self) -> None:
        self._forward("POST")

    def do_PUT(self) -> None:
        self._forward("PUT")

    def do_PATCH(self) -> None:
        self._forward("PATCH")

    def do_DELETE(self) -> None:
        self._forward("DELETE")

    def _forward(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        if not self.server.authorize(method, self.path):
            status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
                      "message": f"forbidden: {request_attributes(method, self.path)} is not granted by deploy/rbac.yaml"}
            self._reply(403, "application/json", json.dumps(status).encode())
            return
        upstream = http.client.HTTPConnection("127.0.0.1", self.server.upstream_port, timeout=120)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            upstream.request(method, self.path, body=body, headers=headers)
            upstream.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            response = upstream.getresponse()
            ctype = response.getheader("Content-Type") or "application/json"
            if response.getheader("Transfer-Encoding", "").lower() != "chunked":
                self._reply(response.status, ctype, response.read())
                return
            self.send_response(response.status)
            self.send_header("Content-Type", ctype)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while chunk := response.read1(65536):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (OSError, http.client.HTTPException):  # the emulator stopped, or the client went away
            self.close_connection = True
        finally:
            upstream.close()

    def _reply(self, status: int, ctype: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def rbac_docs() -> list[Obj]:
    return [d for d in yaml.safe_load_all((DEPLOY / "rbac.yaml").read_text()) if d]


def namespace() -> str:
    return str(yaml.safe_load((DEPLOY / "namespace.yaml").read_text())["metadata"]["name"])


@pytest.fixture()
def proxy_factory() -> Iterator[Any]:
    started: list[RbacProxy] = []

    def start(upstream_port: int, rules: list[Grant]) -> RbacProxy:
        proxy = RbacProxy(upstream_port, rules)
        threading.Thread(target=proxy.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        proxy.shutdown()
        proxy.server_close()


def kubeconfig_for(proxy: RbacProxy, path: Path) -> str:
    config = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "rbac", "cluster": {"server": f"http://127.0.0.1:{proxy.port}"}}],
        "users": [{"name": "karp-provisioner", "user": {"token": "karp"}}],
        "contexts": [{"name": "rbac", "context": {"cluster": "rbac", "user": "karp-provisioner"}}],
        "current-context": "rbac",
    }
    path.write_text(yaml.safe_dump(config))
    return str(path)


# ---- the mapping itself --------------------------------------------------------------------------------
@pytest.mark.parametrize(("method", "url", "expected"), [
    ("GET", "/api/v1/pods?watch=true&resourceVersion=5", "watch pods"),
    ("GET", "/api/v1/namespaces/default/pods", "list pods in default"),
    ("GET", "/api/v1/nodes/aks-a", "get nodes aks-a"),
    ("PATCH", "/api/v1/nodes/aks-a", "patch nodes aks-a"),
    ("POST", "/api/v1/namespaces/default/events", "create events in default"),
    ("PATCH", "/apis/karpenter.sh/v1/nodeclaims/x/status", "patch nodeclaims/status.karpenter.sh x"),
    ("DELETE", "/apis/karpenter.sh/v1/nodeclaims/x", "delete nodeclaims.karpenter.sh x"),
    ("PUT", "/apis/coordination.k8s.io/v1/namespaces/karp/leases/l", "update leases.coordination.k8s.io l in karp"),
    ("GET", "/apis/karpenter.sh/v1/nodepools?fieldSelector=metadata.name%3Dgp", "list nodepools.karpenter.sh gp"),
    ("GET", "/api/v1/namespaces/karp", "get namespaces karp in karp"),
])
def test_request_attributes_match_the_api_servers(method: str, url: str, expected: str) -> None:
    attrs = request_attributes(method, url)
    assert attrs is not None and str(attrs) == expected
    assert request_attributes("GET", "/version") is None and request_attributes("GET", "/apis") is None


def test_grants_honour_binding_scope_and_resource_names() -> None:
    docs = [
        *rbac_docs(),
        {"kind": "Role", "metadata": {"name": "r", "namespace": "ns"},
         "rules": [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["one"], "verbs": ["get"]}]},
        {"kind": "RoleBinding", "metadata": {"name": "r", "namespace": "ns"}, "roleRef": {"kind": "Role", "name": "r"}},
    ]
    rules = grants(docs)
    assert any(g.allows(Attributes("get", "", "configmaps", "ns", "one")) for g in rules)
    assert not any(g.allows(Attributes("get", "", "configmaps", "ns", "two")) for g in rules)
    assert not any(g.allows(Attributes("get", "", "configmaps", "other", "one")) for g in rules)
    assert not any(g.allows(Attributes("create", "", "configmaps", "ns", "")) for g in rules)


def wait_until(predicate: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            return False
        pause.wait(0.01)
    return True


# ---- the calls themselves -------------------------------------------------------------------------------
def exercise_kube_layer(kubeconfig: str, lease_namespace: str) -> None:
    """provisioner.kube's calls, quickly and without Azure: lead, watch, claim, register, report, let go."""
    from provisioner.kube.cluster import KubeCluster
    from provisioner.kube.connection import (
        AKSNODECLASSES,
        NODECLAIMS,
        NODEPOOLS,
        NODES,
        PODS,
        RawApi,
        api_client,
    )
    from provisioner.kube.leader import LeaderElector, LeaderGate

    api = api_client(kubeconfig)
    gate = LeaderGate()
    elector = LeaderElector(RawApi(api), namespace=lease_namespace, gate=gate)
    assert elector.try_acquire_or_renew(), "could not take the Lease"   # get (404), create
    assert elector.try_acquire_or_renew(), "could not renew the Lease"  # get, update
    gate.grant(30.0)
    cluster = KubeCluster(api, gate=gate)
    informers = [cluster.informer(r).start() for r in (PODS, NODES, NODECLAIMS, NODEPOOLS, AKSNODECLASSES)]
    try:
        for informer in informers:
            assert informer.wait_synced(10.0), f"{informer.resource.plural} informer did not sync"
            assert wait_until(lambda i=informer: i.watching), f"{informer.resource.plural} informer is not watching"
        node = informers[1].objects()[0]["metadata"]["name"]
        claim = cluster.create_nodeclaim({"metadata": {"name": "general-purpose-rbac1",
                                                       "labels": {"karpenter.sh/nodepool": "general-purpose"}},
                                          "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass",
                                                                    "name": "default"},
                                                   "requirements": []}})
        cluster.patch_nodeclaim_status(claim["metadata"]["name"], {"status": {"providerID": "azure:///x"}})
        cluster.patch_node(node, {"metadata": {"labels": {"karpenter.sh/registered": "true"}}})
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "inflate-0", "namespace": "default", "uid": "u1"}}
        for _ in range(2):  # the second one is aggregated into the first (PATCH)
            cluster.post_event(pod, "Warning", "FailedScheduling", "Failed to schedule pod")
        assert cluster.recorder.flush(10.0)
        assert cluster.recorder.stats.posted == 1 and cluster.recorder.stats.aggregated == 1, cluster.recorder.stats
        cluster.delete_nodeclaim(claim["metadata"]["name"])
    finally:
        for informer in informers:
            informer.stop()
        elector.release()  # get, update
        cluster.close()


def test_a_missing_grant_is_refused_and_reported(proxy_factory: Any, tmp_path: Path) -> None:
    from sim.kube.emulator import KubeEmulator

    ns = namespace()
    rules = [g for g in grants(rbac_docs()) if not (g.resource == "nodeclaims" and g.verb == "create")]
    with KubeEmulator(nodes=1, node_ready_delay=0.05, tick=0.05, bookmark_interval=0.2) as kube:
        kube.create("namespaces", {"metadata": {"name": ns}})
        proxy = proxy_factory(kube.port, rules)
        with pytest.raises(Exception, match=r"(?i)forbidden"):
            exercise_kube_layer(kubeconfig_for(proxy, tmp_path / "kubeconfig"), ns)
    assert [str(a) for a in proxy.refused] == ["create nodeclaims.karpenter.sh"]


# ---- a short controller run, both emulators, under the proxy ----------------------------------------------

def exercise_upkeep(service: Any) -> None:
    """The upkeep writes a short run may not reach (eviction, node and claim removal, NodePool conditions,
    aggregated Events), through the controller's own ``KubeFleet`` over the service's gated connection."""
    from provisioner.controller.fleet import DISRUPTED_TAINT, KubeFleet
    from provisioner.model.kube_port import Forbidden

    fleet = KubeFleet(service.kube, service.informers)
    claim = next(c for c in service.informers["nodeclaims"].objects() if (c.get("status") or {}).get("nodeName"))
    node = claim["status"]["nodeName"]
    pod = next(p for p in service.informers["pods"].objects() if (p.get("spec") or {}).get("nodeName") == node)
    name = claim["metadata"]["name"]
    steps: list[Any] = [
        lambda: fleet.taint_node(node, DISRUPTED_TAINT, "NoSchedule"),
        lambda: fleet.evict_pod(pod["metadata"]["namespace"], pod["metadata"]["name"]),
        lambda: fleet.set_nodepool_condition("general-purpose", "NodeRegistrationHealthy", "False",
                                             "RegistrationFailed", "deploy test", datetime.now(UTC)),
        lambda: fleet.event("NodeClaim", "", name, "Normal", "DisruptionBlocked", "deploy test"),
        lambda: fleet.event("NodeClaim", "", name, "Normal", "DisruptionBlocked", "deploy test"),  # aggregated: PATCH
        lambda: service.kube.recorder.flush(10.0),
        lambda: fleet.delete_node(node),
        lambda: fleet.delete_nodeclaim(name),
    ]
    for step in steps:
        with contextlib.suppress(Forbidden):  # the proxy records refusals; the test reports them all at once
            step()


def run_service(proxy_factory: Any, tmp_path: Path, rules: list[Grant]) -> RbacProxy:
    """``karp-provisioner run``'s replica (leader election, provisioning, registration, upkeep) against both
    emulators, every Kubernetes call through the proxy: the founding scenario with the example NodePool."""
    from provisioner.azure.compute import AzureCompute
    from provisioner.azure.config import AzureConfig
    from provisioner.controller.manager import ControllerOptions
    from provisioner.controller.service import Service, ServiceOptions
    from provisioner.controller.upkeep import UpkeepOptions
    from provisioner.model.catalog import load_catalog
    from provisioner.observability.logwriter import LogWriter
    from sim.arm.emulator import ArmEmulator
    from sim.arm.state import Timings
    from sim.kube.emulator import KubeEmulator
    from sim.scenarios import founding

    pool = next(d for d in yaml.safe_load_all((DEPLOY / "examples" / "nodepool-general-purpose.yaml").read_text()) if d)
    kube = KubeEmulator(region=founding.REGION, node_ready_delay=0.1, tick=0.05)
    founding.seed_cluster(kube, pool)
    kube.create("namespaces", {"metadata": {"name": namespace()}})
    bridge = founding.NodeBridge(kube)
    arm = ArmEmulator(founding.REGION, quotas={"cores": 20}, usages={"cores": 14}, vm_created_hook=bridge.created,
                      vm_deleted_hook=bridge.deleted, timings=Timings(vm_create_s=0.1, vm_delete_s=0.02, nic_s=0.01))
    kube.start()
    arm.start()
    service: Any = None
    try:
        proxy: RbacProxy = proxy_factory(kube.port, rules)
        compute = AzureCompute(AzureConfig.for_emulator(arm.endpoint.as_dict(), StaticCredential("karp-rbac"), max_retries=0))
        options = ControllerOptions(cluster="karpenter", subnet_id=arm.endpoint.subnet_id, batch_idle=0.3,
                                    batch_max=3.0, requeue=1.0, quota_refresh=1.0, failed_linger=0.5, tick=0.05)
        service_options = ServiceOptions(UpkeepOptions("karpenter", tick=0.1, liveness_interval=0.5,
                                                       disruption_interval=0.5),
                                         lease_namespace=namespace(), identity="karp-rbac", lease_duration=6.0,
                                         renew_deadline=4.0, retry_period=0.2, bind="127.0.0.1", metrics_port=None,
                                         health_port=None, shutdown_grace=2.0)
        service = Service.connect(kubeconfig_for(proxy, tmp_path / "kubeconfig"), None, compute, options,
                                  founding.REGION, LogWriter(level="ERROR"), service_options,
                                  load_catalog(founding.REGION).types)
        service.closers.append(compute.close)
        service.start()
        assert wait_until(lambda: service.is_leader and service.controller is not None), "never became the leader"
        founding.set_replicas(kube, 10)

        def ready_claims() -> int:
            return sum(1 for claim in kube.objects("nodeclaims") for c in (claim.get("status") or {}).get("conditions") or []
                       if c["type"] == "Ready" and c["status"] == "True")

        assert wait_until(lambda: ready_claims() >= 2, timeout=30), kube.objects("nodeclaims")
        exercise_upkeep(service)
        # emptiness: consolidate at once, and take every pod away
        kube.store.mutate(kube.kind("nodepools"), "", "general-purpose",
                          lambda o: o["spec"]["disruption"].update(consolidateAfter="0s"))
        founding.set_replicas(kube, 0)
        wait_until(lambda: not kube.objects("nodeclaims"), timeout=10)  # emptiness, when upkeep gets to it
        service.stop(grace=2.0)  # releases the Lease
        service = None
        return proxy
    finally:
        if service is not None:
            service.kill()
        arm.stop()
        kube.stop()


@pytest.mark.slow
def test_rbac_covers_every_call_and_grants_nothing_unused(proxy_factory: Any, tmp_path: Path) -> None:
    rules = grants(rbac_docs())
    proxy = run_service(proxy_factory, tmp_path, rules)
    refused = sorted({str(a) for a in proxy.refused})
    assert refused == [], "deploy/rbac.yaml does not grant: " + "; ".join(refused)
    unused = sorted({f"{g.verb} {g.resource}.{g.group or 'core'}" + (f" {g.name}" if g.name else "")
                     for g in rules if not any(g.allows(a) for a in proxy.seen)})
    assert unused == [], "deploy/rbac.yaml grants more than the code uses: " + "; ".join(unused)
