"""Top-level helpers: moving values between host and device (device_put, device_get,
block_until_ready, all on pytrees), shapes (ShapeDtypeStruct, eval_shape, typeof) and
clear_caches."""
from __future__ import annotations

from typing import Any

import numpy as np

from pyjax._src import caches
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.dtypes import ExtendedDType
from pyjax._src.tree_util import tree_map


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: Any = None) -> Any:
    """Put every leaf of `x` on the (host) devices as an Array, copying NumPy inputs; `device`
    (a Device, Sharding or PartitionSpec, or a pytree prefix of `x` of them) lays it out."""
    from pyjax._src.core.trace import trace_state
    from pyjax._src.parallel.placement import put_leaf, stage_device_put
    from pyjax._src.transforms.batching import _broadcast_prefix
    from pyjax._src.tree_util import tree_flatten, tree_unflatten
    leaves, tree = tree_flatten(x)
    if device is None or _is_target(device):
        targets = [device] * len(leaves)
    else:
        targets = _broadcast_prefix(device, tree_unflatten(tree, leaves), "device")
    if trace_state.trace is not None and leaves:  # traced: a device_put equation, as in JAX
        return tree_unflatten(tree, stage_device_put(leaves, targets, donate, may_alias))
    return tree_unflatten(tree, [put_leaf(leaf, t) for leaf, t in zip(leaves, targets)])


def _is_target(device: Any) -> bool:
    """A single placement target (not a pytree of them)."""
    from pyjax._src.parallel.devices import Device
    from pyjax._src.parallel.sharding import PartitionSpec, Sharding
    return isinstance(device, (Device, Sharding, PartitionSpec))


def device_get(x: Any) -> Any:
    """Bring every Array leaf of `x` back as a NumPy array."""
    return tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, ArrayImpl) else leaf, x)


def block_until_ready(x: Any) -> Any:
    """Wait for every array in the pytree `x` (a large jitted call's results may still be
    computing: backend/async_dispatch.py) and return x."""
    tree_map(lambda leaf: leaf.block_until_ready() if hasattr(leaf, "block_until_ready")
             else leaf, x)
    return x


class ShapeDtypeStruct:
    """A stand-in for an array that has only a shape and a dtype (what eval_shape returns)."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape: Any, dtype: Any, *, weak_type: bool = False, sharding: Any = None):
        self.shape = tuple(int(d) for d in shape)
        # extended dtypes (key<fry>) stay as they are: NumPy cannot interpret them
        self.dtype = dtype if isinstance(dtype, ExtendedDType) else np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self.sharding = sharding

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))


def eval_shape(fun: Any, *args: Any, **kwargs: Any) -> Any:
    """Shapes and dtypes of `fun`'s outputs, found by tracing (nothing is computed)."""
    from pyjax._src.transforms.staging import make_jaxpr
    _, shapes = make_jaxpr(lambda *a: fun(*a, **kwargs), return_shape=True)(*args)
    return shapes


def typeof(x: Any) -> Any:
    """The abstract value (shape, dtype, weak type) that tracing would give `x`."""
    from pyjax._src.transforms.staging import abstractify
    try:
        return abstractify(x)
    except TypeError:
        raise TypeError(f"Argument '{x}' of type '{type(x)}' is not a valid JAX type") from None


def clear_caches() -> None:
    """Forget every compiled function and cached trace (jit, batched call bodies, abstract
    evaluation of eager ops); the next call traces and compiles again."""
    caches.clear_all()
