"""HTTP/1.1 for the emulated API: a threading server, JSON bodies, chunked watches.

Every JSON answer carries ``Content-Type: application/json`` and a Content-Length,
creates answer 201, refusals answer a ``Status`` body with the matching code. A
watch is one chunk per batch of events, one JSON event per line, and ends with the
terminating chunk (or is cut abruptly when the "drop watches" fault fires).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson

from sim.kube.apiserver import ApiServer, Request, Route
from sim.kube.faults import Faults
from sim.kube.store import ApiError
from sim.kube.tables import as_table, wants_table

__all__ = ["ApiHttpServer"]


class ApiHttpServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, api: ApiServer, faults: Faults, host: str = "127.0.0.1", port: int = 0) -> None:
        self.api = api
        self.faults = faults
        self.closing = threading.Event()
        self.requests_served = 0
        self.open_watches = 0
        self.watch_lock = threading.Lock()
        super().__init__((host, port), _Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ApiHttpServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    # ---------------------------------------------------------------------------------------
    def _send(self, status: int, payload: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        self.wfile.write(payload)

    def _send_json(self, status: int, body: Any) -> None:
        self._send(status, orjson.dumps(body))

    def _serve(self, method: str) -> None:
        api = self.server.api
        self.server.requests_served += 1
        url = urlsplit(self.path)
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        is_watch = method == "GET" and query.get("watch") in ("true", "1", "True")
        try:
            for rule in self.server.faults.take(method, url.path, is_watch):
                if rule.action == "delay":
                    time.sleep(rule.seconds)
                elif rule.action == "status":
                    raise ApiError(rule.status, f"injected fault: {rule.status}")
                elif rule.action == "expire":
                    self._stream_error(ApiError(410, "too old resource version: injected (fault)", "Expired"))
                    return
            if url.path in ("/healthz", "/readyz", "/livez"):
                self._send(200, b"ok", "text/plain; charset=utf-8")
                return
            route = api.route(url.path)
            if not isinstance(route, Route):
                self._send_json(200, route)
                return
            if is_watch:
                self._watch(route, query)
                return
            request = Request(method, url.path, query, body, self.headers.get("Content-Type") or "")
            status, answer = api.handle(request, route)
            if isinstance(answer, str):
                self._send(status, answer.encode(), "text/plain; charset=utf-8")
            elif method == "GET" and wants_table(self.headers.get("Accept") or ""):
                self._send_json(status, as_table(route.kind, answer))
            else:
                self._send_json(status, answer)
        except ApiError as e:
            self._send_json(e.status, e.body())
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _stream_error(self, error: ApiError) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        line = orjson.dumps({"type": "ERROR", "object": error.body()}) + b"\n"
        self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(line), line))

    def _watch(self, route: Route, query: dict[str, str]) -> None:
        server = self.server
        generation = server.faults.drop_generation
        stopped: Callable[[], bool] = lambda: server.closing.is_set() or server.faults.drop_generation != generation  # noqa: E731
        stream = server.api.watch(route, query, stopped)  # raises ApiError (410, 400) before the headers
        with server.watch_lock:
            server.open_watches += 1
        if wants_table(self.headers.get("Accept") or ""):
            stream = _as_tables(route, stream)
        try:
            self._write_stream(stream, stopped, generation)
        finally:
            with server.watch_lock:
                server.open_watches -= 1

    def _write_stream(self, stream: Any, stopped: Callable[[], bool], generation: int) -> None:
        server = self.server
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            self.wfile.flush()
            batch = next(stream, None)
            while batch is not None:
                if stopped():
                    break
                data = b"".join(orjson.dumps(event) + b"\n" for event in batch)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                batch = next(stream, None)
            if server.faults.drop_generation != generation or server.closing.is_set():
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True


def _as_tables(route: Route, stream: Any) -> Any:
    """Watch events whose objects are one-row Tables, as kubectl get -w asks for."""
    for batch in stream:
        yield [e if e["type"] in ("BOOKMARK", "ERROR") else {"type": e["type"], "object": as_table(route.kind, e["object"])}
               for e in batch]
