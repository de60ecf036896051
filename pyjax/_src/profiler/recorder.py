"""The trace being collected: complete events ("X": name, start, duration, thread, args) kept
in memory while a session is active, written as Chrome trace-event JSON (the format Perfetto
and chrome://tracing load) when it stops.

Where JAX's profiler writes XLA's XPlane protobuf (plus a trace.json.gz derived from it),
pyjax writes the trace-event JSON directly, in the same place:
`<log_dir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.trace.json.gz`.  It holds what pyjax
itself knows: annotations (TraceAnnotation, StepTraceAnnotation, annotate_function), jit
tracing and compiling (from jax.monitoring's time spans) and each jit call outside a trace
(`PjitFunction(<name>)`, as JAX names it).

Nothing runs when no session is active: annotations test one module attribute, jit's call
is wrapped only while a session runs (session.py), the monitoring listener is registered
only then.
"""
from __future__ import annotations

import gzip
import json
import os
import socket
import threading
import time
from typing import Any

#: the active recorder, or None (read by annotations on entry)
current: "Recorder | None" = None


class Recorder:
    """Events of one session; times in microseconds from the session's start."""

    def __init__(self, metadata: dict[str, str]):
        self.origin_ns = time.time_ns()
        self.events: list[dict] = []
        self.threads: dict[int, str] = {}
        self.metadata = metadata
        self.lock = threading.Lock()

    def add(self, name: str, start_ns: int, end_ns: int, args: dict | None = None,
            tid: int | None = None) -> None:
        """One complete event from `start_ns` to `end_ns` (time.time_ns())."""
        if tid is None:
            tid = threading.get_ident()
        event = {"ph": "X", "pid": os.getpid(), "tid": tid,
                 "ts": (start_ns - self.origin_ns) / 1e3, "dur": (end_ns - start_ns) / 1e3,
                 "name": name}
        if args:
            event["args"] = {k: str(v) for k, v in args.items()}
        with self.lock:
            if tid not in self.threads:
                thread = threading.current_thread()
                self.threads[tid] = ("python" if thread is threading.main_thread()
                                     else thread.name)
            self.events.append(event)

    def trace(self) -> dict:
        """The Chrome trace-event document."""
        pid = os.getpid()
        meta = [{"ph": "M", "pid": pid, "name": "process_name", "args": {"name": "/host:CPU"}},
                {"ph": "M", "pid": pid, "name": "process_sort_index",
                 "args": {"sort_index": pid}}]
        with self.lock:
            for n, (tid, name) in enumerate(sorted(self.threads.items()), 1):
                meta.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                             "args": {"name": name}})
                meta.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index",
                             "args": {"sort_index": n}})
            events = sorted(self.events, key=lambda e: (e["ts"], -e["dur"]))
        return {"displayTimeUnit": "ns", "metadata": {"highres-ticks": True, **self.metadata},
                "traceEvents": meta + events}

    def write(self, log_dir: str) -> str:
        """Write the trace under `log_dir` as TensorBoard's profile plugin lays runs out; the
        path of the file."""
        run = time.strftime("%Y_%m_%d_%H_%M_%S", time.localtime(self.origin_ns / 1e9))
        folder = os.path.join(log_dir, "plugins", "profile", run)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{socket.gethostname()}.trace.json.gz")
        with gzip.open(path, "wt", encoding="utf-8") as f:
            json.dump(self.trace(), f)
        return path


def on_time_span(event: str, start: float, end: float, **kwargs: Any) -> None:
    """jax.monitoring time-span listener: jit's tracing and compiling become events."""
    rec = current
    if rec is None:
        return
    what = event.rsplit("/", 1)[-1].removesuffix("_duration")
    name = f"{what} {kwargs['fun_name']}" if "fun_name" in kwargs else what
    rec.add(name, int(start * 1e9), int(end * 1e9), {"event": event, **kwargs})
