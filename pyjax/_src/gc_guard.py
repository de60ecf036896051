"""`jax.array_garbage_collection_guard`: what happens when Python's cyclic garbage collector,
rather than reference counting, frees an Array (one held by a reference cycle, whose memory
stays taken until a collection runs).  "log" logs JAX's error, "fatal" aborts the process;
None or "allow" does nothing.

While some setting (the process-wide one or a thread's) is "log" or "fatal", ArrayImpl gets a
finalizer; `gc.callbacks` mark the collections, and an Array finalized during one is in the
collector's unreachable set (CPython finalizes every object there before breaking cycles:
PEP 442), so freed by it.  The setting read is the collecting thread's.  With no such setting
the finalizer is removed, so arrays cost nothing extra.  (JAX's message ends with the
traceback of the Array's creation, which pyjax does not record.)"""
from __future__ import annotations

import gc
import logging
import os
import sys
import threading
from typing import Any

logger = logging.getLogger("pyjax")

MESSAGE = ("`jax.Array` was deleted by the Python garbage collector instead of reference "
           "counting. Break the reference cycle that delays the deletion of this `jax.Array` "
           "to avoid hogging memory.")
_GUARDING = ("log", "fatal")

_lock = threading.Lock()
_active = 0  # how many stored settings (global, threads' overrides) are "log" or "fatal"
_collecting = threading.local()  # .on: this thread is running a collection


def _on_gc(phase: str, info: dict) -> None:
    _collecting.on = phase == "start"


def _finalize(self: Any) -> None:
    if not getattr(_collecting, "on", False):
        return  # freed by reference counting
    from pyjax._src.config import config
    level = config.array_garbage_collection_guard
    if level == "log":
        logger.error("RuntimeError: %s", MESSAGE)
    elif level == "fatal":
        sys.stderr.write(f"F pyjax: {MESSAGE}\n")
        sys.stderr.flush()
        os.abort()


def _install(on: bool) -> None:
    from pyjax._src.core.array import ArrayImpl
    if on:
        ArrayImpl.__del__ = _finalize
        if _on_gc not in gc.callbacks:
            gc.callbacks.append(_on_gc)
    else:
        if "__del__" in ArrayImpl.__dict__:
            del ArrayImpl.__del__
        if _on_gc in gc.callbacks:
            gc.callbacks.remove(_on_gc)


def on_change(old: Any, new: Any, local: bool) -> None:
    """A stored setting changed (config's hook): keep the finalizer while any is guarding."""
    global _active
    with _lock:
        before = _active
        _active += (new in _GUARDING) - (old in _GUARDING)
        if (before == 0) != (_active == 0):
            _install(_active > 0)
