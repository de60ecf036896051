"""`jax.interpreters.batching` over pyjax's transforms/batching.py: the batcher registries are
views of the Primitive's `batch` (plain rules) and `batch_collective` (axis-aware) slots."""
from __future__ import annotations

from typing import Any, Sequence

from pyjax._src.compat.rules import AxisData, RuleTable, axis_batcher, fancy_batcher
from pyjax._src.core.primitive import Primitive
from pyjax._src.transforms import batching as _batching
from pyjax._src.transforms.batching import (  # noqa: F401  (re-exported)
    defbroadcasting, defvectorized, not_mapped)


def _unwrap(prim: Primitive, slot: Any) -> Any:
    return getattr(slot, "rule", slot)


primitive_batchers = RuleTable("batch")
fancy_primitive_batchers = RuleTable("batch_collective", to_rule=fancy_batcher, from_rule=_unwrap)
axis_primitive_batchers = RuleTable("batch_collective", to_rule=axis_batcher, from_rule=_unwrap)


def bdim_at_front(x: Any, bdim: int | None, size: int, mesh_axis: Any = None) -> Any:
    """`x` with its batch axis first (broadcast to `size` when unbatched)."""
    return _batching.bdim_at_front(x, bdim, size)


def broadcast(x: Any, sz: int, axis: int, mesh_axis: Any = None) -> Any:
    """Unbatched `x` with a new axis of size `sz` at `axis`."""
    return _batching.broadcast_batch(x, sz, axis)


def defreducer(prim: Primitive) -> None:
    """A reduction over the `axes` param: the batch axis moves to the front and the reduced
    axes shift past it."""
    def rule(vals: Sequence[Any], dims: Sequence[Any], *, axes: Sequence[int], **params: Any
             ) -> tuple:
        operand = _batching.move_axis(vals[0], dims[0], 0)
        out = prim.bind(operand, *vals[1:], axes=tuple(a + 1 for a in axes), **params)
        return out, 0
    prim.batch = rule


__all__ = ["AxisData", "axis_primitive_batchers", "bdim_at_front", "broadcast",
           "defbroadcasting", "defreducer", "defvectorized", "fancy_primitive_batchers",
           "not_mapped", "primitive_batchers"]
