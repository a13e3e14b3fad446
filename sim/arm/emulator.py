"""``ArmEmulator``: a local Azure Resource Manager over HTTPS, for the real management SDKs.

It serves one subscription, one location and one AKS-style node resource group (with a
VNet and subnet from the start) on ``https://127.0.0.1:<port>`` with a throwaway CA
(``trustme``) whose PEM is written to a temp file, so clients pass
``connection_verify=<ca_cert>``. Any bearer token is accepted (the request log records
only that one was sent). ``ThreadingHTTPServer`` with HTTP/1.1 keep-alive and TCP_NODELAY
keeps a call under a millisecond on loopback.

    with ArmEmulator(location="westus2", quotas={"cores": 20}, usages={"cores": 14}) as arm:
        info = arm.endpoint   # endpoint, ca_cert, subscription, resource_group, location, subnet_id
        ...
        arm.request_log       # every request, in order
"""

from __future__ import annotations

import contextlib
import os
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import orjson
import trustme

from provisioner.model.ports import VmInfo
from sim.arm.faults import FaultPlan, FaultRule, plan_from_data
from sim.arm.ledger import QuotaLedger
from sim.arm.service import ArmRequest, ArmResponse, ArmService, RequestRecord
from sim.arm.skus import SkuTable, load_sku_fixture
from sim.arm.state import ArmState, Nic, Timings, Vm

__all__ = ["DEFAULT_SUBSCRIPTION", "ArmEmulator", "ArmEndpoint"]

DEFAULT_SUBSCRIPTION = "6f1d2c3b-0a4e-4b7d-9c8f-5e2a1b0c9d8e"


@dataclass(frozen=True, slots=True)
class ArmEndpoint:
    endpoint: str
    ca_cert: str
    subscription: str
    resource_group: str
    location: str
    subnet_id: str

    def as_dict(self) -> dict[str, str]:
        return {
            "endpoint": self.endpoint,
            "ca_cert": self.ca_cert,
            "subscription": self.subscription,
            "resource_group": self.resource_group,
            "location": self.location,
            "subnet_id": self.subnet_id,
        }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "karp-arm-emulator"
    sys_version = ""
    service: ArmService  # set on the subclass made per emulator

    def log_message(self, format: str, *args: Any) -> None:
        return  # the request log is the record; never print headers (they carry the token)

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        host = self.headers.get("Host") or f"127.0.0.1:{self.connection.getsockname()[1]}"
        request = ArmRequest(self.command, self.path, body, self.headers.get("Authorization") or "", f"https://{host}")
        response = self.service.handle(request)
        if response.delay_s > 0:
            time.sleep(response.delay_s)
        if response.drop:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(2)
            return
        self._write(response)

    def _write(self, response: ArmResponse) -> None:
        payload = orjson.dumps(response.body) if response.body is not None else b""
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        if payload:
            self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = _serve
    do_PUT = _serve
    do_PATCH = _serve
    do_DELETE = _serve
    do_POST = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    ssl_context: ssl.SSLContext

    def get_request(self) -> tuple[Any, Any]:
        sock, address = super().get_request()
        # the handshake runs in the handler's thread, so a slow client never stalls accept()
        return self.ssl_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # dropped and reset connections are part of the job


class ArmEmulator:
    def __init__(
        self,
        location: str = "westus2",
        quotas: dict[str, int] | None = None,
        usages: dict[str, int] | None = None,
        faults: FaultPlan | list[FaultRule] | list[dict[str, Any]] | None = None,
        vm_created_hook: Callable[[VmInfo], None] | None = None,
        vm_deleted_hook: Callable[[VmInfo], None] | None = None,
        *,
        subscription: str = DEFAULT_SUBSCRIPTION,
        resource_group: str | None = None,
        subnet_prefix: str = "10.224.0.0/16",
        skus: list[dict[str, Any]] | None = None,
        timings: Timings | None = None,
        quota_ceiling: int | None = None,
        quota_request_delay_s: float = 0.0,
        port: int = 0,
    ) -> None:
        self.location = location
        table = SkuTable(location, skus if skus is not None else load_sku_fixture(location))
        ledger = QuotaLedger(subscription, location, table.families(), quotas, usages, quota_ceiling,
                             quota_request_delay_s)
        self.state = ArmState(subscription, resource_group or f"MC_karp_karp_{location}", location, ledger,
                              subnet_prefix, timings)
        if vm_created_hook is not None:
            self.state.vm_created_hooks.append(vm_created_hook)
        if vm_deleted_hook is not None:
            self.state.vm_deleted_hooks.append(vm_deleted_hook)
        if isinstance(faults, FaultPlan):
            plan = faults
        elif faults and all(isinstance(rule, dict) for rule in faults):
            plan = plan_from_data(list(faults), "faults")
        else:
            plan = FaultPlan([rule for rule in faults or [] if isinstance(rule, FaultRule)])
        self.service = ArmService(self.state, table, plan)
        self._initial_limits = dict(ledger.limits)
        self._initial_usage = dict(ledger.preset_usage)
        self._port = port
        self._server: _Server | None = None
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._ca_path = ""
        self._endpoint: ArmEndpoint | None = None

    # --- lifecycle -------------------------------------------------------------------
    def start(self) -> ArmEndpoint:
        if self._endpoint is not None:
            return self._endpoint
        ca = trustme.CA()
        cert = ca.issue_cert("127.0.0.1", "localhost")
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        cert.configure_cert(context)
        handle, self._ca_path = tempfile.mkstemp(prefix="karp-arm-ca-", suffix=".pem")
        with os.fdopen(handle, "wb") as file:
            file.write(ca.cert_pem.bytes())
        handler = type("ArmHandler", (_Handler,), {"service": self.service})
        server = _Server(("127.0.0.1", self._port), handler)
        server.ssl_context = context
        self._server = server
        self._stopping.clear()
        self._threads = [
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="arm-http", daemon=True),
            threading.Thread(target=self._tick, name="arm-clock", daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        port = server.server_address[1]
        self._endpoint = ArmEndpoint(f"https://127.0.0.1:{port}", self._ca_path, self.state.subscription,
                                     self.state.resource_group, self.location, self.state.subnet_id)
        return self._endpoint

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads = []
        if self._ca_path:
            with contextlib.suppress(OSError):
                os.unlink(self._ca_path)
        self._endpoint = None

    def __enter__(self) -> ArmEmulator:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()

    def _tick(self) -> None:
        """Settle operations when they fall due, even when nobody polls them."""
        while not self._stopping.is_set():
            due = self.service.next_due()
            wait = 0.05 if due is None else max(0.0, min(0.05, due - self.service.clock()))
            if self._stopping.wait(wait):
                return
            self.service.settle()

    # --- inspection and control ----------------------------------------------------------
    @property
    def endpoint(self) -> ArmEndpoint:
        if self._endpoint is None:
            raise RuntimeError("the ARM emulator is not started")
        return self._endpoint

    @property
    def faults(self) -> FaultPlan:
        return self.service.faults

    @property
    def request_log(self) -> list[RequestRecord]:
        with self.service.lock:
            return list(self.service.log)

    @property
    def vms(self) -> dict[str, Vm]:
        with self.service.lock:
            return dict(self.state.vms)

    @property
    def nics(self) -> dict[str, Nic]:
        with self.service.lock:
            return dict(self.state.nics)

    def usage(self) -> dict[str, int]:
        with self.service.lock:
            return self.state.usage()

    def limits(self) -> dict[str, int]:
        with self.service.lock:
            return dict(self.state.ledger.limits)

    def set_limit(self, name: str, limit: int) -> None:
        with self.service.lock:
            self.state.ledger.limits[name] = limit

    def add_vm_hooks(self, created: Callable[[VmInfo], None] | None = None,
                     deleted: Callable[[VmInfo], None] | None = None) -> None:
        """Also call these when a VM create succeeds / a VM delete completes (after construction)."""
        with self.service.lock:
            if created is not None:
                self.state.vm_created_hooks.append(created)
            if deleted is not None:
                self.state.vm_deleted_hooks.append(deleted)

    def deny(self, *ops: str) -> None:
        """Answer these operations (``create_vm``, ``get_usages``, …) with 403 AuthorizationFailed."""
        with self.service.lock:
            self.service.denied.update(ops)

    def allow_all(self) -> None:
        with self.service.lock:
            self.service.denied.clear()

    def restrict_images(self, images: list[str] | None) -> None:
        """Only these images exist (404 PlatformImageNotFound otherwise); None: every image exists."""
        with self.service.lock:
            self.service.resources.known_images = frozenset(images) if images is not None else None

    def reset(self, quotas: dict[str, int] | None = None, usages: dict[str, int] | None = None) -> None:
        """Back to the starting state (no VMs, NICs, operations, faults or log), with these figures.

        Lets one emulator serve many tests: ``quotas``/``usages`` replace the starting ones when given.
        """
        with self.service.lock:
            state, ledger = self.state, self.state.ledger
            state.vms.clear()
            state.nics.clear()
            state.operations.clear()
            state.pending.clear()
            state.release_ips()
            ledger.limits = dict(self._initial_limits)
            ledger.limits.update(quotas or {})
            ledger.preset_usage = dict(self._initial_usage if usages is None else usages)
            ledger.requests.clear()
            self.service.log.clear()
            self.service.denied.clear()
            self.service.resources.known_images = None
            self.service.faults.clear()

    def set_usage(self, name: str, vcpus: int) -> None:
        """Set the preset usage (vCPUs used outside the emulator's VMs) of one quota."""
        with self.service.lock:
            self.state.ledger.preset_usage[name] = vcpus

    def set_quota_policy(self, ceiling: int | None, delay_s: float = 0.0) -> None:
        """Reject increases above ``ceiling`` (None: grant all), granted ``delay_s`` after the request."""
        with self.service.lock:
            self.state.ledger.ceiling = ceiling
            self.state.ledger.request_delay_s = delay_s

    def set_timings(self, timings: Timings) -> None:
        with self.service.lock:
            self.state.timings = timings

    def clear_log(self) -> None:
        with self.service.lock:
            self.service.log.clear()

    def records(self, op: str) -> Iterator[RequestRecord]:
        return (r for r in self.request_log if r.op == op)
