"""The profiler server: start_server(port) serves traces of this process over HTTP on
127.0.0.1:`port` (JAX's speaks TensorBoard's gRPC profiling protocol; pyjax's answers plain
HTTP with its trace-event JSON):

    GET /trace?duration_ms=N   trace whatever runs in the next N ms (default 1000); the
                               trace-event JSON document, with the traces of the subprocesses
                               registered by `register_subprocess` merged in
    GET /ping                  "ok" (how register_subprocess checks a server is there)
"""
from __future__ import annotations

import http.server
import json
import threading
import urllib.parse
import urllib.request
from typing import Any, Callable

from pyjax._src.profiler import session

_server: "ProfilerServer | None" = None
_subprocesses: dict[int, int] = {}  # pid -> port of its profiler server
_sub_lock = threading.Lock()


def _fetch(port: int, path: str, timeout: float) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
        return r.read()


def collect_with_subprocesses(duration_ms: float) -> dict:
    """This process's trace of the next `duration_ms`, and those of registered subprocesses
    collected over the same time."""
    with _sub_lock:
        subs = dict(_subprocesses)
    results: dict[int, Any] = {}

    def fetch(pid: int, port: int) -> None:
        try:
            results[pid] = json.loads(_fetch(port, f"/trace?duration_ms={duration_ms}",
                                             duration_ms / 1e3 + 30))
        except OSError as e:
            results[pid] = e
    threads = [threading.Thread(target=fetch, args=item, daemon=True) for item in subs.items()]
    for t in threads:
        t.start()
    document = session.collect(duration_ms / 1e3)
    for t in threads:
        t.join()
    for pid, sub in sorted(results.items()):
        if isinstance(sub, dict):
            document["traceEvents"].extend(sub.get("traceEvents", []))
    return document


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        url = urllib.parse.urlparse(self.path)
        if url.path == "/ping":
            return self._reply(200, b"ok", "text/plain")
        if url.path != "/trace":
            return self._reply(404, b"not found", "text/plain")
        query = urllib.parse.parse_qs(url.query)
        try:
            duration = float(query.get("duration_ms", ["1000"])[0])
            body = json.dumps(collect_with_subprocesses(duration)).encode()
        except (ValueError, RuntimeError) as e:
            return self._reply(409, str(e).encode(), "text/plain")
        self._reply(200, body, "application/json")

    def _reply(self, code: int, body: bytes, kind: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:  # (quiet)
        pass


class ProfilerServer:
    """A running profiler server (threads serving 127.0.0.1:`port`)."""

    def __init__(self, port: int):
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        name=f"pyjax-profiler-server-{self.port}", daemon=True)
        self._thread.start()

    def _stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


def start_server(port: int, requires_backend: bool = True) -> ProfilerServer:
    """Start the profiler server on `port` (0: any free port; the server's `port` says
    which).  `requires_backend` is accepted as in JAX (pyjax's host backend is always up).
    ValueError if a server is already running."""
    global _server
    if _server is not None:
        raise ValueError("Only one profiler server can be active at a time.")
    _server = ProfilerServer(port)
    return _server


def stop_server() -> None:
    """Stop the running profiler server (ValueError if none is running)."""
    global _server
    if _server is None:
        raise ValueError("No active profiler server.")
    server, _server = _server, None
    server._stop()


class _Unregister:
    """Unregisters a subprocess when called or garbage collected."""

    def __init__(self, pid: int):
        self._pid: int | None = pid

    def __call__(self) -> None:
        pid, self._pid = self._pid, None
        if pid is not None:
            with _sub_lock:
                _subprocesses.pop(pid, None)

    __del__ = __call__


def register_subprocess(pid: int, port: int) -> Callable[[], None]:
    """Profile the subprocess `pid`, whose profiler server listens on `port`, with this
    process: traces collected by this process's server include the subprocess's.  Returns a
    function that unregisters it (also run when the function is garbage collected).
    RuntimeError if it is already registered or its server does not answer."""
    with _sub_lock:
        if pid in _subprocesses:
            raise RuntimeError(f"Subprocess {pid} is already registered.")
    try:
        _fetch(port, "/ping", 5)
    except OSError as e:
        raise RuntimeError(f"Failed to connect to the profiler server of subprocess {pid} on "
                           f"port {port}: {e}") from None
    with _sub_lock:
        _subprocesses[pid] = port
    return _Unregister(pid)
