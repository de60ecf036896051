"""Top-level helpers: moving values between host and device (device_put, device_get,
block_until_ready, all on pytrees), shapes (ShapeDtypeStruct, eval_shape, typeof) and
clear_caches."""
from __future__ import annotations

from typing import Any

import numpy as np

from pyjax._src import caches
from pyjax._src.core.array import Array, ArrayImpl
from pyjax._src.numpy.lax_numpy import asarray
from pyjax._src.tree_util import tree_map


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: Any = None) -> Any:
    """Put every leaf of `x` on the (host) device as an Array, copying NumPy inputs."""
    def put(leaf: Any) -> Any:
        out = leaf if isinstance(leaf, Array) else asarray(leaf)
        if device is not None and type(out) is ArrayImpl:  # placed explicitly: committed
            out = ArrayImpl(out._buf, out._weak)
            out._committed = True
        return out
    return tree_map(put, x)


def device_get(x: Any) -> Any:
    """Bring every Array leaf of `x` back as a NumPy array."""
    return tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, ArrayImpl) else leaf, x)


def block_until_ready(x: Any) -> Any:
    """Wait for every array in the pytree `x` (execution here is synchronous) and return x."""
    tree_map(lambda leaf: leaf.block_until_ready() if hasattr(leaf, "block_until_ready")
             else leaf, x)
    return x


class ShapeDtypeStruct:
    """A stand-in for an array that has only a shape and a dtype (what eval_shape returns)."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape: Any, dtype: Any, *, weak_type: bool = False, sharding: Any = None):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
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
