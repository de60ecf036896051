"""The current trace of each thread (None means eager evaluation), in a module of its own so
that arrays, tracers and primitives can all read it without importing one another."""
from __future__ import annotations

import threading
from typing import Any


class _TraceState(threading.local):
    trace: Any = None


trace_state = _TraceState()


def note_side_effect() -> None:
    """Tell the current trace that the running function did more than bind primitives (it
    warned, say): a replay of its primitives alone would not repeat that."""
    trace = trace_state.trace
    if trace is not None:
        trace.side_effect()
