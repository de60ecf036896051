"""jax.profiler on pyjax (behaviour: JAX's XPlane traces cannot be recorded for comparison).
A trace session writes Chrome trace-event JSON where TensorBoard looks for it, holding the
annotations, jit's tracing, compiling and calls; JAX's errors for misuse (texts as JAX 0.10.2's);
ProfileData reads the trace back; the memory profile is a pprof protocol buffer of the live
arrays; the server serves traces over HTTP; nothing is wrapped outside a session."""
from __future__ import annotations

import functools
import glob
import gzip
import json
import os
import urllib.request

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import profiler
from pyjax._src.profiler import recorder
from pyjax._src.transforms.jit import PjitFunction


def _trace_file(log_dir) -> str:
    files = glob.glob(os.path.join(str(log_dir), "plugins", "profile", "*", "*.trace.json.gz"))
    assert len(files) == 1
    return files[0]


def _names(path) -> list[str]:
    with gzip.open(path, "rt") as f:
        return [e["name"] for e in json.load(f)["traceEvents"] if e["ph"] == "X"]


def test_trace_records_annotations_and_jit(tmp_path):
    original = PjitFunction.__dict__["__call__"]

    @functools.partial(profiler.annotate_function, name="outer", tag=7)
    def outer(x):
        return g(x)

    g = pyjax.jit(lambda x: jnp.sin(x) + 1)
    with profiler.trace(tmp_path, create_perfetto_trace=True):
        assert PjitFunction.__dict__["__call__"] is not original
        assert profiler.TraceAnnotation.is_enabled()
        with profiler.TraceAnnotation("ann", a=1) as ann:
            ann.set_metadata(b="x")
            outer(jnp.ones(3))
            outer(jnp.ones(3))
        for step in range(2):
            with profiler.StepTraceAnnotation("train", step_num=step):
                pass
    assert PjitFunction.__dict__["__call__"] is original and recorder.current is None
    assert not profiler.TraceAnnotation.is_enabled()
    path = _trace_file(tmp_path)
    names = _names(path)
    assert names.count("PjitFunction(<lambda>)") == 2 and names.count("outer") == 2
    assert names.count("jaxpr_trace <lambda>") == 1
    assert names.count("backend_compile jit(<lambda>)") == 1
    with gzip.open(os.path.join(os.path.dirname(path), "perfetto_trace.json.gz"), "rt") as f:
        perfetto = json.load(f)
    assert "metadata" not in perfetto and perfetto["traceEvents"]

    data = profiler.ProfileData.from_file(path)
    plane = data.find_plane_with_name("/host:CPU")
    assert dict(plane.stats)["jax_version"] == pyjax.__version__
    line = plane.find_line_by_name("python")
    events = list(line.events)
    ann, = [e for e in events if e.name == "ann"]
    assert dict(ann.stats) == {"a": "1", "b": "x"}
    calls = [e for e in events if e.name.startswith("PjitFunction")]
    assert all(ann.start_ns <= e.start_ns and e.end_ns <= ann.end_ns for e in calls)
    steps = [dict(e.stats) for e in events if e.name == "train"]
    assert steps == [{"step_num": "0"}, {"step_num": "1"}]
    with open(path, "rb") as f:
        assert len(list(profiler.ProfileData.from_serialized_xspace(f.read()).planes)) == 1


def test_start_stop_errors(tmp_path):
    with pytest.raises(RuntimeError, match="^No profile started$"):
        profiler.stop_trace()
    profiler.start_trace(tmp_path)
    try:
        with pytest.raises(RuntimeError, match="Profile has already been started. Only one "
                                               "profile may be run at a time."):
            profiler.start_trace(tmp_path)
    finally:
        profiler.stop_trace()
    with pytest.raises(ValueError, match="^No active profiler server.$"):
        profiler.stop_server()


def test_trace_stops_on_exception(tmp_path):
    with pytest.raises(ZeroDivisionError):
        with profiler.trace(tmp_path):
            with profiler.TraceAnnotation("failing"):
                1 / 0
    assert recorder.current is None
    assert "failing" in _names(_trace_file(tmp_path))


def test_annotations_outside_a_session_record_nothing():
    with profiler.TraceAnnotation("nothing"):
        pass
    assert profiler.annotate_function(lambda: 3)() == 3
    assert recorder.current is None
    assert profiler.ProfileOptions().host_tracer_level == 2


def _decode(data: bytes) -> list[tuple[int, object]]:
    """(field number, value) pairs of one protocol buffer message (varints and bytes)."""
    out, i = [], 0

    def varint():
        nonlocal i
        n = shift = 0
        while True:
            b = data[i]
            i += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return n
    while i < len(data):
        key = varint()
        if key & 7 == 0:
            out.append((key >> 3, varint()))
        else:
            size = varint()
            out.append((key >> 3, data[i:i + size]))
            i += size
    return out


def test_device_memory_profile_is_pprof_of_live_arrays(tmp_path):
    keep = jnp.zeros((17, 3), jnp.float32) + 1  # noqa: F841  (alive during the profile)
    fields = _decode(gzip.decompress(profiler.device_memory_profile()))
    strings = [v.decode() for k, v in fields if k == 6]
    assert strings[0] == "" and {"allocations", "count", "space", "bytes"} <= set(strings)
    functions = {dict(_decode(v))[1]: strings[dict(_decode(v))[2]]
                 for k, v in fields if k == 5}
    samples = []
    for k, v in fields:
        if k == 2:
            sample = dict(_decode(v))  # 1: packed location ids (= function ids), 2: values
            samples.append((functions[_varints(sample[1])[0]], _varints(sample[2])))
    by_name = dict(samples)
    assert by_name["float32[17,3]"][1] == by_name["float32[17,3]"][0] * 17 * 3 * 4
    profiler.save_device_memory_profile(tmp_path / "mem.prof")
    assert gzip.decompress((tmp_path / "mem.prof").read_bytes())
    assert _decode(gzip.decompress(profiler.device_memory_profile("gpu"))) is not None


def _varints(data: bytes) -> list[int]:
    out, n, shift = [], 0, 0
    for b in data:
        n |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            out.append(n)
            n = shift = 0
    return out


def test_server_serves_traces():
    server = profiler.start_server(0)
    try:
        with pytest.raises(ValueError, match="Only one profiler server can be active at a "
                                             "time."):
            profiler.start_server(0)
        f = pyjax.jit(lambda x: x * 2)
        f(np.float32(1))
        import threading
        result = {}

        def fetch():
            with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/trace?duration_ms=400",
                                        timeout=30) as r:
                result["doc"] = json.loads(r.read())
        t = threading.Thread(target=fetch)
        t.start()
        import time
        deadline = time.time() + 10
        while recorder.current is None and time.time() < deadline:
            time.sleep(0.01)
        with profiler.TraceAnnotation("served"):
            f(np.float32(2))
        t.join()
        names = [e["name"] for e in result["doc"]["traceEvents"]]
        assert "served" in names and "PjitFunction(<lambda>)" in names
        with pytest.raises(RuntimeError, match="Failed to connect"):
            profiler.register_subprocess(12345, 1)
        unregister = profiler.register_subprocess(os.getpid() + 10**6, server.port)
        with pytest.raises(RuntimeError, match="already registered"):
            profiler.register_subprocess(os.getpid() + 10**6, server.port)
        unregister()
    finally:
        profiler.stop_server()
