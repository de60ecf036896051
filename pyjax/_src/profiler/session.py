"""start_trace / stop_trace / trace: one profiling session at a time, recorded by
recorder.py and written under the log directory when it stops.

While a session runs, `PjitFunction.__call__` is replaced by a wrapper recording each call
made outside a trace (`PjitFunction(<name>)`, including any tracing and compiling it does,
which appear nested as their own events through jax.monitoring); the original is put back
when the session stops, so jit's cached call costs nothing extra otherwise.
"""
from __future__ import annotations

import contextlib
import gzip
import http.server
import json
import logging
import os
import socketserver
import threading
import time
from typing import Any, Iterator

from pyjax._src import monitoring
from pyjax._src.profiler import recorder

logger = logging.getLogger(__name__)
_lock = threading.Lock()
_state: dict[str, Any] = {}


class ProfileOptions:
    """Options of a profiling session, with JAX's fields and defaults.  pyjax's recorder
    records its own events whatever the tracer levels say; `duration_ms` > 0 stops a
    session started by the profiler server after that long."""

    def __init__(self) -> None:
        self.host_tracer_level = 2
        self.python_tracer_level = 1
        self.enable_hlo_proto = True
        self.include_dataset_ops = True
        self.start_timestamp_ns = 0
        self.duration_ms = 0
        self.repository_path = ""
        self.session_id = ""
        self.raise_error_on_start_failure = False
        self.advanced_configuration: dict = {}

    def __repr__(self) -> str:
        return f"ProfileOptions({vars(self)})"


def _metadata() -> dict[str, str]:
    from pyjax import __version__
    return {"jax_version": __version__, "jaxlib_version": __version__}


def _traced_call(original: Any) -> Any:
    from pyjax._src.core.trace import trace_state

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        rec = recorder.current
        if rec is None or trace_state.trace is not None:
            return original(self, *args, **kwargs)
        start = time.time_ns()
        try:
            return original(self, *args, **kwargs)
        finally:
            rec.add(f"PjitFunction({self._name})", start, time.time_ns())
    __call__.__wrapped__ = original  # type: ignore[attr-defined]
    return __call__


def start_trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False,
                profiler_options: ProfileOptions | None = None) -> None:
    """Start collecting a trace, to be written under `log_dir` by `stop_trace`.

    pyjax writes Chrome trace-event JSON (`plugins/profile/<run>/<host>.trace.json.gz`, which
    Perfetto (https://ui.perfetto.dev) and TensorBoard's trace viewer load) where JAX writes
    XLA's XPlane: it holds annotations, jit tracing, compiling and calls.
    `create_perfetto_trace` also writes `perfetto_trace.json.gz` (the same trace without its
    metadata); `create_perfetto_link` then serves that file on 127.0.0.1:9001, prints the
    Perfetto link and blocks until Perfetto has fetched it.  Only one trace at a time: a
    RuntimeError if one is running."""
    from pyjax._src.transforms.jit import PjitFunction
    with _lock:
        if recorder.current is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be run "
                               "at a time.")
        _state.update(log_dir=str(log_dir), link=create_perfetto_link,
                      perfetto=create_perfetto_trace or create_perfetto_link,
                      options=profiler_options or ProfileOptions(),
                      call=PjitFunction.__dict__["__call__"])
        recorder.current = recorder.Recorder(_metadata())
        monitoring.register_event_time_span_listener(recorder.on_time_span)
        PjitFunction.__call__ = _traced_call(_state["call"])


def _finish() -> recorder.Recorder:
    """End the session (the caller holds _lock): the recorder, with everything undone."""
    from pyjax._src.transforms.jit import PjitFunction
    rec = recorder.current
    if rec is None:
        raise RuntimeError("No profile started")
    PjitFunction.__call__ = _state["call"]
    monitoring.unregister_event_time_span_listener(recorder.on_time_span)
    recorder.current = None
    return rec


def stop_trace() -> None:
    """Stop the running trace and write it under the `log_dir` given to `start_trace`.
    RuntimeError if no trace was started."""
    with _lock:
        rec = _finish()
        state = dict(_state)
        _state.clear()
        path = rec.write(state["log_dir"])
        if state["perfetto"]:
            perfetto = _write_perfetto_trace(rec, path)
            if state["link"]:
                _host_perfetto_trace_file(perfetto)


def _write_perfetto_trace(rec: recorder.Recorder, path: str) -> str:
    """perfetto_trace.json.gz beside the trace: the trace without its `metadata` field."""
    document = rec.trace()
    del document["metadata"]
    out = os.path.join(os.path.dirname(path), "perfetto_trace.json.gz")
    with gzip.open(out, "wt", encoding="utf-8") as f:
        json.dump(document, f)
    return out


class _PerfettoHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the trace file to ui.perfetto.dev (which asks for it cross-origin)."""

    def end_headers(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()

    def do_GET(self) -> None:
        self.server.last_request = self.path  # type: ignore[attr-defined]
        super().do_GET()

    def log_message(self, *args: Any) -> None:
        logger.debug(*args)


def _host_perfetto_trace_file(path: str, port: int = 9001) -> None:
    """Serve `path` on 127.0.0.1:`port` (where ui.perfetto.dev looks), print the link, and
    return once Perfetto has fetched the file."""
    folder, name = os.path.split(path)
    handler = lambda *a, **k: _PerfettoHandler(*a, directory=folder, **k)  # noqa: E731
    socketserver.TCPServer.allow_reuse_address = True
    with socketserver.TCPServer(("127.0.0.1", port), handler) as httpd:
        print(f"Open URL in browser: https://ui.perfetto.dev/#!/?url=http://127.0.0.1:{port}/"
              f"{name}")
        while getattr(httpd, "last_request", None) != "/" + name:
            httpd.handle_request()


@contextlib.contextmanager
def trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
          create_perfetto_trace: bool = False,
          profiler_options: ProfileOptions | None = None) -> Iterator[None]:
    """Context manager collecting a trace of the enclosed code (`start_trace` on entry,
    `stop_trace` on exit, even on an exception)."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


def collect(duration_s: float) -> dict:
    """Trace whatever runs in the next `duration_s` seconds (for the profiler server): the
    trace-event document.  RuntimeError if a trace is already running."""
    from pyjax._src.transforms.jit import PjitFunction
    with _lock:
        if recorder.current is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be run "
                               "at a time.")
        _state.update(call=PjitFunction.__dict__["__call__"])
        recorder.current = recorder.Recorder(_metadata())
        monitoring.register_event_time_span_listener(recorder.on_time_span)
        PjitFunction.__call__ = _traced_call(_state["call"])
    time.sleep(duration_s)
    with _lock:
        rec = _finish()
        _state.clear()
    return rec.trace()


