"""TraceAnnotation, StepTraceAnnotation and annotate_function: named spans of the program
recorded in the active trace (recorder.py); outside a session they cost one attribute read."""
from __future__ import annotations

import functools
import time
from typing import Any, Callable

from pyjax._src.profiler import recorder


class TraceAnnotation:
    """Context manager that records an event spanning the enclosed code in the active profiler
    trace, named `name`, with the keyword arguments as the event's arguments.

    >>> with jax.profiler.TraceAnnotation("my_label"):   # doctest: +SKIP
    ...   result = jnp.dot(x, x.T).block_until_ready()
    """

    __slots__ = ("_name", "_kwargs", "_start", "_rec")

    def __init__(self, name: str, **kwargs: Any):
        self._name, self._kwargs = name, kwargs
        self._rec = None

    def __enter__(self) -> "TraceAnnotation":
        self._rec = recorder.current
        if self._rec is not None:
            self._start = time.time_ns()
        return self

    def __exit__(self, *exc: Any) -> None:
        rec, self._rec = self._rec, None
        if rec is not None:
            rec.add(self._name, self._start, time.time_ns(), self._kwargs)

    def set_metadata(self, **kwargs: Any) -> None:
        """Add arguments to the event (recorded when the annotation ends)."""
        self._kwargs = {**self._kwargs, **kwargs}

    @staticmethod
    def is_enabled() -> bool:
        """Whether a trace is being collected (annotations are recorded)."""
        return recorder.current is not None


class StepTraceAnnotation(TraceAnnotation):
    """A TraceAnnotation marking one step of a loop (a training step, say): pass the step's
    number as `step_num`; it is recorded as the event's argument."""

    __slots__ = ()

    def __init__(self, name: str, **kwargs: Any):
        super().__init__(name, **kwargs)


def annotate_function(func: Callable, name: str | None = None,
                      **decorator_kwargs: Any) -> Callable:
    """Decorator recording each call of `func` as an event named `name` (default: its
    qualified name), with `decorator_kwargs` as the event's arguments; use
    `functools.partial(annotate_function, name=...)` to pass them."""
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper
