"""Small top-level API functions of JAX 0.10.2 (jax/_src/api.py, xla_bridge.py) whose meaning
on pyjax's one synchronous host device is exact: effects_barrier, copy_to_host_async,
process_indices."""
from __future__ import annotations

from typing import Any

from pyjax._src.parallel.devices import process_count
from pyjax._src.tree_util import tree_map


def effects_barrier() -> None:
    """Wait until every dispatched computation has finished its side effects (callbacks,
    prints).  pyjax runs each computation, effects included, before returning from it, so
    there is never anything outstanding."""


def copy_to_host_async(x: Any) -> Any:
    """Start copying each array leaf of `x` to the host (its `copy_to_host_async` method;
    other leaves are left alone) and return `x`."""
    def start(leaf: Any) -> Any:
        method = getattr(leaf, "copy_to_host_async", None)
        if callable(method):
            method()
        return leaf
    tree_map(start, x)
    return x


def process_indices(backend: Any = None) -> list[int]:
    """The indices of every process of the backend: [0, ..., process_count - 1]."""
    return list(range(process_count(backend)))

