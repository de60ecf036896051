"""`jax.interpreters.mlir`, as far as it can exist without MLIR: a lowering written as a
Python function over arrays (`lower_fun`) is how a library primitive runs under jit."""
from __future__ import annotations

from typing import Any, Callable

from pyjax._src.compat.extend_core import on_buffers
from pyjax._src.core.primitive import Primitive


class LoweredFun:
    """`lower_fun(fun)`: the primitive computed by `fun` on arrays (traced and fused by
    pyjax's own compiler rather than emitted as MLIR)."""

    __slots__ = ("fun", "multiple_results")

    def __init__(self, fun: Callable, multiple_results: bool):
        self.fun, self.multiple_results = fun, multiple_results


def lower_fun(fun: Callable, multiple_results: bool = True) -> LoweredFun:
    return LoweredFun(fun, multiple_results)


#: MLIR emitter rules registered by libraries, by primitive: kept, never run (pyjax has no
#: MLIR); such a primitive runs under jit through its `def_impl` implementation
mlir_rules: dict[Primitive, Callable] = {}


def register_lowering(prim: Primitive, rule: Any, platform: str | None = None,
                      **_: Any) -> Any:
    """Register how `prim` runs under jit.  Only CPU (or platform-independent) lowerings
    apply: pyjax runs on the host."""
    if platform not in (None, "cpu"):
        return rule
    if isinstance(rule, LoweredFun):
        impl = on_buffers(rule.fun, prim)
        impl.lowered = True
        prim.impl = impl
    else:
        mlir_rules[prim] = rule
    return rule


__all__ = ["lower_fun", "register_lowering"]
