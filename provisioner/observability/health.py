"""HTTP endpoints for probes and scrapes: ``/healthz``, ``/readyz`` and ``/metrics``.

``Endpoints`` is a small threaded HTTP server. Each probe is a set of named checks
(callables returning True when fine); the answer is ``200 ok`` when all pass, else
``503`` with one line per failing check, so ``kubectl describe pod`` shows why::

    GET /healthz   200 ok                      (liveness: the loops are turning)
    GET /readyz    503 informers: not synced    (readiness: caches synced)
    GET /metrics   Prometheus text format       (when a ``Metrics`` is given)

Karpenter serves metrics on 8080 and probes on 8081; run two ``Endpoints`` for that, or
one for all three. A check that raises counts as failing (and says so).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from provisioner.observability.metrics import CONTENT_TYPE, Metrics

__all__ = ["Check", "Endpoints", "run_checks"]

Check = Callable[[], bool]


def run_checks(checks: Mapping[str, Check]) -> tuple[bool, str]:
    """(all passed, the body to answer with)."""
    failing: list[str] = []
    for name, check in checks.items():
        try:
            ok = bool(check())
        except Exception as e:  # a broken check is a failing check
            failing.append(f"{name}: {type(e).__name__}: {e}")
            continue
        if not ok:
            failing.append(f"{name}: failing")
    return (not failing), ("ok\n" if not failing else "\n".join(failing) + "\n")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    endpoints: Endpoints

    def log_message(self, format: str, *args: Any) -> None:
        return  # probes every few seconds would flood the log

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        e = self.endpoints
        if path in ("/healthz", "/livez"):
            ok, body = run_checks(e.health)
            self._answer(200 if ok else 503, body.encode(), "text/plain; charset=utf-8")
        elif path == "/readyz":
            ok, body = run_checks(e.ready)
            self._answer(200 if ok else 503, body.encode(), "text/plain; charset=utf-8")
        elif path == "/metrics" and e.metrics is not None:
            self._answer(200, e.metrics.exposition(), CONTENT_TYPE)
        else:
            self._answer(404, b"not found\n", "text/plain; charset=utf-8")

    def _answer(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Endpoints:
    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, health: Mapping[str, Check] | None = None,
                 ready: Mapping[str, Check] | None = None, metrics: Metrics | None = None) -> None:
        self.host = host
        self.requested_port = port
        self.health: dict[str, Check] = dict(health or {})
        self.ready: dict[str, Check] = dict(ready or {})
        self.metrics = metrics
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the endpoints are not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> Endpoints:
        handler = type("EndpointsHandler", (_Handler,), {"endpoints": self})
        server = ThreadingHTTPServer((self.host, self.requested_port), handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="karp-endpoints", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            with contextlib.suppress(OSError):
                self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
