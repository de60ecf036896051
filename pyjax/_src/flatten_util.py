"""`ravel_pytree`: a pytree of arrays as one 1-D array, plus the function undoing it.

Leaves are promoted to their common dtype (each leaf's dtype taken strongly, canonicalized, as
JAX's `dtypes.dtype` does).  When every leaf already has that dtype the unravel function is
dtype-polymorphic; otherwise it insists on that dtype and casts each piece back.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src import tree_util
from pyjax._src.core import dtypes


class _Unravel:
    """A picklable, hashable unravel function: equal when built from equal layouts, so jit
    caches keyed on it are reused across calls (JAX's are too)."""

    __slots__ = ("treedef", "sizes", "shapes", "from_dtypes", "to_dtype")

    def __init__(self, treedef: Any, sizes: tuple, shapes: tuple,
                 from_dtypes: tuple | None, to_dtype: np.dtype | None):
        self.treedef, self.sizes, self.shapes = treedef, sizes, shapes
        self.from_dtypes, self.to_dtype = from_dtypes, to_dtype

    def _key(self) -> tuple:
        return (self.treedef, self.sizes, self.shapes, self.from_dtypes, self.to_dtype)

    def __eq__(self, other: object) -> bool:
        return type(other) is _Unravel and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __call__(self, flat: Any) -> Any:
        from pyjax import lax
        if self.to_dtype is not None:
            got = dtypes.dtype_and_weak(flat)[0]
            if got != self.to_dtype:
                raise TypeError(f"unravel function given array of dtype {got}, but expected "
                                f"dtype {self.to_dtype}")
        if not self.sizes:
            return tree_util.tree_unflatten(self.treedef, [])
        chunks = lax.split(flat, self.sizes)
        leaves = [lax.reshape(chunk, shape) for chunk, shape in zip(chunks, self.shapes)]
        if self.from_dtypes is not None:
            leaves = [lax.convert_element_type(leaf, dt)
                      for leaf, dt in zip(leaves, self.from_dtypes)]
        return tree_util.tree_unflatten(self.treedef, leaves)


def _leaf_dtype(x: Any) -> np.dtype:
    return dtypes.canonicalize_dtype(dtypes.dtype_and_weak(x)[0])


def _ravel_list(leaves: Sequence[Any]) -> tuple[Any, tuple, tuple, tuple | None, Any]:
    from pyjax import lax
    if not leaves:
        return lax.full([0], 0, "float32"), (), (), None, None
    from_dtypes = tuple(_leaf_dtype(x) for x in leaves)
    to_dtype = dtypes.result_type(*from_dtypes)
    shapes = tuple(tuple(np.shape(x)) for x in leaves)
    sizes = tuple(math.prod(s) for s in shapes)
    if all(dt == to_dtype for dt in from_dtypes):
        flat = lax.concatenate([lax.reshape(x, (size,)) for x, size in zip(leaves, sizes)], 0)
        return flat, sizes, shapes, None, None
    flat = lax.concatenate([lax.reshape(lax.convert_element_type(x, to_dtype), (size,))
                            for x, size in zip(leaves, sizes)], 0)
    return flat, sizes, shapes, from_dtypes, to_dtype


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """(1-D array of every leaf raveled and concatenated in promoted dtype, unravel function).
    An empty pytree gives an empty float32 array."""
    leaves, treedef = tree_util.tree_flatten(pytree)
    flat, sizes, shapes, from_dtypes, to_dtype = _ravel_list(leaves)
    return flat, _Unravel(treedef, sizes, shapes, from_dtypes, to_dtype)
