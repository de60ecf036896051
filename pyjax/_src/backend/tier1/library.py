"""Native kernels that impls call directly (threefry.py, xla_math.py), built on demand.

Unlike a jit cluster's kernel, these implement one primitive's impl for any caller, eager or
compiled.  Each is compiled once per key on tier 1's background thread (synchronously when
tier 1 is forced); until it is ready, `get` answers None and the impl computes with NumPy.
"""
from __future__ import annotations

import threading
from typing import Any, Callable


class KernelLibrary:
    """Kernels made from the IR `ir_of(key)`, one per key."""

    def __init__(self, ir_of: Callable[[Any], str]) -> None:
        self._ir_of = ir_of
        self._kernels: dict[Any, Any] = {}  # key -> kernel; None while building; False: failed
        self._pending: dict[Any, Any] = {}  # key -> engine.Patience while building
        self._lock = threading.Lock()

    def get(self, key: Any) -> Callable | None:
        """The compiled kernel for `key`, or None (compiling it starts on the first ask; after
        engine.PATIENCE asks answered None the next one waits for it)."""
        fn = self._kernels.get(key)
        if fn is None:
            if key not in self._kernels:
                self._start(key)
            if (patience := self._pending.get(key)) is not None:
                patience.slow_call()
            fn = self._kernels.get(key)
        return fn or None

    def _start(self, key: Any) -> None:
        from pyjax._src.backend import tier1
        if tier1.reason() is not None:  # asked again later: a test may turn tier 1 on
            return
        with self._lock:
            if key in self._kernels:
                return
            self._kernels[key] = None
            self._pending[key] = tier1.engine.Patience()
        if tier1.FORCED:
            self._build(key)
        else:
            tier1.engine.submit(lambda: self._build(key))

    def _build(self, key: Any) -> None:
        from pyjax._src.backend.tier1 import engine
        try:
            fn = engine.compile_ir(self._ir_of(key))
        except Exception:  # noqa: BLE001 - without it the impl computes with NumPy, as before
            fn = False
        with self._lock:
            self._kernels[key] = fn
            self._pending.pop(key).done.set()
