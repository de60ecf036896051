"""`jax.ds` (`dslice`) and its `Slice`: a slice given by a start index, which may be traced,
and a static size (and stride), so `x[jax.ds(i, 2)]` works where `x[i:i + 2]` needs a static i.

jnp indexing (numpy/indexing.py) lowers a Slice with a unit stride to `dynamic_slice` (negative
starts wrapped, then clamped into the axis, as `lax.dynamic_slice` does) and a strided one, or
one mixed with array indices, to a gather; `x.at[ds(...)]` scatters, dropping a window that does
not fit (FILL_OR_DROP), with no wrapping of negative starts.  References (state/ops.py) index
by it too: `r[ds(i, 2)]` prints `c[b:b+2]`.
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Any

from pyjax._src.core.trace import Tracer
from pyjax._src.tree_util import register_pytree_node_class


def is_static(x: Any) -> bool:
    """Whether `x` is known now as an integer (JAX's `core.is_dim`): a Python or NumPy int, or
    a concrete integer scalar (not an abstract tracer)."""
    if isinstance(x, Tracer) and x.concrete_value() is None:
        return False
    try:
        operator.index(x)
    except Exception:  # noqa: BLE001 - anything that is not an index is dynamic
        return False
    return True


@register_pytree_node_class
@dataclasses.dataclass(slots=True)
class Slice:
    """A slice with a start index and a size (and a static stride).

    The start and the size may each be static (known when tracing) or dynamic (traced); as a
    pytree, the static ones are auxiliary data and the dynamic ones leaves."""

    start: Any
    size: Any
    stride: int = 1

    def __post_init__(self) -> None:
        if self.stride < 0:
            raise ValueError("`stride` must be >= 0.")

    @property
    def is_dynamic_start(self) -> bool:
        return not is_static(self.start)

    @property
    def is_dynamic_size(self) -> bool:
        return not is_static(self.size)

    def tree_flatten(self) -> tuple[tuple, tuple]:
        dyn_start, dyn_size = self.is_dynamic_start, self.is_dynamic_size
        children = (self.start if dyn_start else None, self.size if dyn_size else None)
        aux = (None if dyn_start else self.start, None if dyn_size else self.size, self.stride)
        return children, aux

    @classmethod
    def tree_unflatten(cls, aux: tuple, children: Any) -> "Slice":
        start, size = (c if c is not None else a for c, a in zip(children, aux[:2]))
        return cls(start, size, aux[2])

    @classmethod
    def from_slice(cls, slc: slice, size: int) -> "Slice":
        """The Slice selecting what the builtin slice `slc` selects on an axis of `size`."""
        start, stop, step = slc.indices(size)
        if step < 1:
            raise ValueError(f"slice must have a step >= 1 (found: {step})")
        return cls(start, len(range(start, stop, step)), step)


def dslice(start: Any, size: Any = None, stride: int | None = None) -> "slice | Slice":
    """A Slice from a start index and a size, read as the builtin slice reads its arguments:
    `dslice(None)` is `:`, `dslice(j)` is `:j`, `dslice(i, j)` is `i:i+j` and
    `dslice(i, j, stride)` is `i:i+j:stride` (in elements taken: `j` of them).  The start may
    be traced (`x[jax.ds(i, 2)]` inside jit); the stride must be a Python int."""
    if start is None:
        return slice(None)
    if stride is None:
        stride = 1
    if not isinstance(stride, int):
        raise ValueError("Non-static stride in `dslice`")
    if size is None:
        start, size = 0, start
    return Slice(start, size, stride)


ds = dslice
