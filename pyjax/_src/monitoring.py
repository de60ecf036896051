"""`jax.monitoring`: named events, durations, time spans and scalars, sent to the listeners
registered for each kind.

pyjax reports the events JAX reports where it does the same work (names as in JAX 0.10.2):

* `/jax/core/compile/jaxpr_trace_duration`: `jit` tracing a function outside any other trace
  (transforms/jit.py), and `/jax/core/compile/backend_compile_duration`: compiling a jaxpr to an
  executable (backend/executor.py).  Each is a scalar (the start time, `time.time()`) when the
  work starts, then a duration in seconds and a time span when it ends, all with the keyword
  `fun_name` (the traced function's name; `jit_<name>` for the compile, JAX's module name).
* the persistent compilation cache's counters (backend/tier1/disk_cache.py), per native kernel
  (where JAX counts per executable): `/jax/compilation_cache/compile_requests_use_cache`,
  `cache_hits`, `cache_misses` (an entry written), and the duration
  `/jax/compilation_cache/cache_retrieval_time_sec`.

The emitting code asks `active()` (any listener of any kind) before timing anything, so an
unobserved program pays one list check per trace or compile and nothing per call.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Protocol


class EventListenerWithMetadata(Protocol):
    def __call__(self, event: str, **kwargs: str | int) -> None: ...


class EventDurationListenerWithMetadata(Protocol):
    def __call__(self, event: str, duration_secs: float, **kwargs: str | int) -> None: ...


class EventTimeSpanListenerWithMetadata(Protocol):
    def __call__(self, event: str, start_time: float, end_time: float,
                 **kwargs: str | int) -> None: ...


class ScalarListenerWithMetadata(Protocol):
    def __call__(self, event: str, value: float | int, **kwargs: str | int) -> None: ...


JAXPR_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"

# The registries.  Each list is replaced, never mutated in place, so a recorder iterating an
# old list while another thread (un)registers sees a consistent snapshot.
_event_listeners: list = []
_duration_listeners: list = []
_time_span_listeners: list = []
_scalar_listeners: list = []


def active() -> bool:
    """Whether any listener of any kind is registered (emitters skip their timing if not)."""
    return bool(_event_listeners or _duration_listeners or _time_span_listeners
                or _scalar_listeners)


def record_event(event: str, **kwargs: str | int) -> None:
    """Report that `event` happened; every event listener is called with it and `kwargs`.
    Pass the keyword arguments of one event in the same order every time."""
    for listener in _event_listeners:
        listener(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Report that `event` took `duration` seconds, to every duration listener."""
    for listener in _duration_listeners:
        listener(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float,
                           **kwargs: str | int) -> None:
    """Report that `event` ran from `start_time` to `end_time` (seconds, `time.time()`), to
    every time-span listener."""
    for listener in _time_span_listeners:
        listener(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Report a scalar value for `event`, to every scalar listener."""
    for listener in _scalar_listeners:
        listener(event, value, **kwargs)


def register_event_listener(callback: EventListenerWithMetadata) -> None:
    """Call `callback(event, **kwargs)` at each `record_event`."""
    global _event_listeners
    _event_listeners = [*_event_listeners, callback]


def register_event_duration_secs_listener(callback: EventDurationListenerWithMetadata) -> None:
    """Call `callback(event, duration_secs, **kwargs)` at each `record_event_duration_secs`."""
    global _duration_listeners
    _duration_listeners = [*_duration_listeners, callback]


def register_event_time_span_listener(callback: EventTimeSpanListenerWithMetadata) -> None:
    """Call `callback(event, start_time, end_time, **kwargs)` at each `record_event_time_span`."""
    global _time_span_listeners
    _time_span_listeners = [*_time_span_listeners, callback]


def register_scalar_listener(callback: ScalarListenerWithMetadata) -> None:
    """Call `callback(event, value, **kwargs)` at each `record_scalar`."""
    global _scalar_listeners
    _scalar_listeners = [*_scalar_listeners, callback]


def get_event_listeners() -> list:
    """A copy of the event listeners."""
    return list(_event_listeners)


def get_event_duration_listeners() -> list:
    """A copy of the duration listeners."""
    return list(_duration_listeners)


def get_event_time_span_listeners() -> list:
    """A copy of the time-span listeners."""
    return list(_time_span_listeners)


def get_scalar_listeners() -> list:
    """A copy of the scalar listeners."""
    return list(_scalar_listeners)


def clear_event_listeners() -> None:
    """Remove the event, duration and time-span listeners.  As in JAX 0.10.2, scalar listeners
    stay registered (remove those with `unregister_scalar_listener`)."""
    global _event_listeners, _duration_listeners, _time_span_listeners
    _event_listeners, _duration_listeners, _time_span_listeners = [], [], []


def _unregister(registry: list, callback: Callable) -> list:
    # JAX asserts the listener is registered: the same AssertionError here
    assert callback in registry
    out = list(registry)
    out.remove(callback)
    return out


def unregister_event_listener(callback: EventListenerWithMetadata) -> None:
    """Remove an event listener (AssertionError if it is not registered)."""
    global _event_listeners
    _event_listeners = _unregister(_event_listeners, callback)


def unregister_event_duration_listener(callback: EventDurationListenerWithMetadata) -> None:
    """Remove a duration listener (AssertionError if it is not registered)."""
    global _duration_listeners
    _duration_listeners = _unregister(_duration_listeners, callback)


def unregister_event_time_span_listener(callback: EventTimeSpanListenerWithMetadata) -> None:
    """Remove a time-span listener (AssertionError if it is not registered)."""
    global _time_span_listeners
    _time_span_listeners = _unregister(_time_span_listeners, callback)


def unregister_scalar_listener(callback: ScalarListenerWithMetadata) -> None:
    """Remove a scalar listener (AssertionError if it is not registered)."""
    global _scalar_listeners
    _scalar_listeners = _unregister(_scalar_listeners, callback)


class timed:
    """`with timed(event, fun_name):` reports the work inside as JAX's compile-time events do:
    the start time as a scalar on entry, then the duration and the time span on a normal or
    exceptional exit.  Emitters create one only when `active()`."""

    __slots__ = ("event", "fun_name", "start")

    def __init__(self, event: str, fun_name: str):
        self.event, self.fun_name = event, fun_name

    def __enter__(self) -> None:
        self.start = time.time()
        record_scalar(self.event, self.start, fun_name=self.fun_name)

    def __exit__(self, *exc: Any) -> None:
        end = time.time()
        record_event_duration_secs(self.event, end - self.start, fun_name=self.fun_name)
        record_event_time_span(self.event, self.start, end, fun_name=self.fun_name)
