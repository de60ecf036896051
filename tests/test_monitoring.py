"""jax.monitoring against JAX 0.10.2's recording (tests/data/monitoring.json, written by
tests/oracle/record_monitoring.py): the listener calls jit's tracing and compiling report, in
JAX's order and with JAX's keywords; the registry's behaviour; the persistent cache's events
(behaviour: JAX reports them per executable, pyjax per native kernel)."""
from __future__ import annotations

import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import monitoring
from pyjax._src import monitoring as impl
from pyjax._src.backend.tier1 import disk_cache
from recorded import load

import record_monitoring as recorder

DATA = load("monitoring.json")
#: events JAX reports for work pyjax does not do: lowering to an MLIR module, and the
#: persistent cache JAX consults at every compile (pyjax's is off unless a directory is set)
_ABSENT = ("/jax/core/compile/jaxpr_to_mlir_module_duration", "/jax/compilation_cache/")


@pytest.fixture(autouse=True)
def no_listeners():
    saved = [list(impl._event_listeners), list(impl._duration_listeners),
             list(impl._time_span_listeners), list(impl._scalar_listeners)]
    impl._event_listeners, impl._duration_listeners = [], []
    impl._time_span_listeners, impl._scalar_listeners = [], []
    yield
    (impl._event_listeners, impl._duration_listeners, impl._time_span_listeners,
     impl._scalar_listeners) = saved


def test_names_match_jax():
    assert sorted(n for n in dir(monitoring) if not n.startswith("_")) == DATA["names"]


@pytest.mark.parametrize("name", sorted(DATA["scenarios"]))
def test_scenario_reports_what_jax_reports(name):
    log = []
    listeners = recorder.listen(monitoring, log)
    recorder.scenarios(pyjax, jnp)[name]()
    want = [e for e in DATA["scenarios"][name] if not e[1].startswith(_ABSENT)]
    assert [list(e) for e in log] == want
    monitoring.unregister_event_listener(listeners[0])
    monitoring.unregister_event_duration_listener(listeners[1])
    monitoring.unregister_event_time_span_listener(listeners[2])
    monitoring.unregister_scalar_listener(listeners[3])
    assert not impl.active()


def test_durations_and_spans_are_consistent():
    spans, durations, scalars = [], [], []
    monitoring.register_event_time_span_listener(lambda e, s, t, **k: spans.append((e, s, t)))
    monitoring.register_event_duration_secs_listener(lambda e, d, **k: durations.append((e, d)))
    monitoring.register_scalar_listener(lambda e, v, **k: scalars.append((e, v)))
    pyjax.jit(lambda x: jnp.cos(x) + 1)(jnp.ones(3))
    assert [e for e, *_ in spans] == [impl.JAXPR_TRACE_EVENT, impl.BACKEND_COMPILE_EVENT]
    for (e, s, t), (e2, d), (e3, v) in zip(spans, durations, scalars):
        assert e == e2 == e3 and s == v and t >= s and d == pytest.approx(t - s)


def test_registry_behaves_as_jax():
    assert recorder.registry_behaviour(monitoring) == DATA["registry"]


def test_listener_errors_propagate_and_nothing_is_reported_without_listeners():
    def boom(event, **kwargs):
        raise RuntimeError("listener failed")
    monitoring.register_event_listener(boom)
    with pytest.raises(RuntimeError, match="listener failed"):
        monitoring.record_event("/x")
    monitoring.unregister_event_listener(boom)
    assert not impl.active()


def test_persistent_cache_events(tmp_path):
    saved = {n: pyjax.config.read(n) for n in (
        "jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs")}
    disk_cache.reset_cache()
    pyjax.config.update("jax_compilation_cache_dir", str(tmp_path))
    pyjax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    events, durations = [], []
    monitoring.register_event_listener(lambda e, **k: events.append(e))
    monitoring.register_event_duration_secs_listener(lambda e, d, **k: durations.append(e))
    try:
        name = disk_cache.key("define void @k() { ret void }", "host")
        assert disk_cache.store(name, b"\x7fELF" + b"\0" * 64, 1.0)
        assert events == ["/jax/compilation_cache/cache_misses"]
        assert disk_cache.load(name) is not None
        assert disk_cache.load(disk_cache.key("other", "host")) is None
        assert events[1:] == ["/jax/compilation_cache/compile_requests_use_cache",
                              "/jax/compilation_cache/cache_hits",
                              "/jax/compilation_cache/compile_requests_use_cache"]
        assert durations == ["/jax/compilation_cache/cache_retrieval_time_sec"]
    finally:
        for n, v in saved.items():
            pyjax.config.update(n, v)
        disk_cache.reset_cache()
