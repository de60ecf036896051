"""`jax.memory`: memory spaces (`jax.memory.Space`, JAX's core.MemorySpace: Device, Host, Any)
and the types that carry them.  On CPU every buffer is the same host memory; what a program
sees is the type: an array placed by a sharding of memory kind 'pinned_host' is typed
`f32<host>[4]`, device_put to such a sharding stages that type, and an equation's results
live where its operands of rank > 0 do (JAX's default memory-space rule; its error when
they differ).  Staging types equations this way once some type outside device memory
exists (`activate`), so programs that never make one pay nothing."""
from __future__ import annotations

import types
from typing import Any

from pyjax._src.core.avals import MemorySpace, ShapedArray

memory = types.SimpleNamespace(Space=MemorySpace)

_DEVICE = MemorySpace.Device

#: primitives whose abstract evaluation sets their results' memory space itself
_OWN_RULE = frozenset({"device_put"})


def of_kind(memory_kind: Any) -> MemorySpace:
    """The memory space of a sharding's memory kind (JAX's mem_kind_to_space)."""
    return MemorySpace.Host if memory_kind == "pinned_host" else _DEVICE


def of_array(x: Any) -> MemorySpace:
    """Where a concrete Array lives: by the memory kind of the sharding that placed it."""
    placed = getattr(x, "_sharding", None)
    return _DEVICE if placed is None else of_kind(placed.memory_kind)


def _operands_space(prim: Any, avals: list) -> MemorySpace:
    if all(a.memory_space is MemorySpace.Any for a in avals):
        return MemorySpace.Any
    prev = None
    for a in avals:
        if not a.shape:
            continue
        if prev is not None and prev.memory_space is not a.memory_space:
            raise ValueError(
                f"memory_space of all inputs passed to `{prim.name}` must be the same. Got "
                f"one operand with type: {prev.str_short()} and another operand with type: "
                f"{a.str_short()}")
        prev = a
    return _DEVICE if prev is None else prev.memory_space


def type_equation(prim: Any, atoms: list, out: Any) -> Any:
    """A staged equation's result types in the memory space of its operands."""
    avals = [a.aval for a in atoms if type(a.aval) is ShapedArray]
    if prim.name in _OWN_RULE or all(a.memory_space is _DEVICE for a in avals):
        return out
    space = _operands_space(prim, avals)
    many = prim.multiple_results
    outs = [o.update(memory_space=space)
            if type(o) is ShapedArray and o.memory_space is not space else o
            for o in (out if many else [out])]
    return outs if many else outs[0]


def activate() -> None:
    """Type staged equations and arguments by memory space from now on."""
    from pyjax._src.transforms import staging
    staging.memory_typing = type_equation
