"""Segment reductions (`jax.ops.segment_sum` etc., JAX's jax/_src/ops/scatter.py): an output
filled with the reduction's identity, into which `data` rows are scattered at `segment_ids` by
a lax scatter primitive, so jit, grad and vmap come from the scatter's own rules."""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

import pyjax.numpy as jnp
from pyjax._src.core import dtypes
from pyjax._src.numpy import reductions
from pyjax._src.numpy.indexing import scatter_update
from pyjax._src.numpy.lax_numpy import _concrete
from pyjax._src.numpy.util import check_arraylike
from pyjax._src.primitives import indexing as ix


def _identity(scatter_op: Callable, dtype: np.dtype) -> Any:
    """The value every segment starts from: the identity of the scatter's combination."""
    if scatter_op is ix.scatter_add:
        return 0
    if scatter_op is ix.scatter_mul:
        return 1
    if dtype == dtypes.bool_:
        return scatter_op is ix.scatter_min
    if dtypes.is_integer(dtype):
        info = dtypes.iinfo(dtype)
        return int(info.max if scatter_op is ix.scatter_min else info.min)
    return float("inf") if scatter_op is ix.scatter_min else -float("inf")


def _segment_update(name: str, data: Any, segment_ids: Any, scatter_op: Callable,
                    num_segments: int | None, indices_are_sorted: bool, unique_indices: bool,
                    bucket_size: int | None, reducer: Callable, mode: Any) -> Any:
    """Scatter `data` into `num_segments` identity-filled rows; with `bucket_size`, into one
    such block per bucket of consecutive entries, reduced afterwards (more accurate sums)."""
    check_arraylike(name, data, segment_ids)
    mode = ix.GatherScatterMode.FILL_OR_DROP if mode is None else mode
    data = jnp.asarray(data)
    segment_ids = jnp.asarray(segment_ids)
    dtype = data.dtype
    if num_segments is None:
        num_segments = np.max(segment_ids) + 1
    num_segments = _concrete(num_segments, "segment_sum() `num_segments` argument.")
    num_segments = operator.index(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    fill = _identity(scatter_op, dtype)
    if bucket_size is None:
        out = jnp.full((num_segments,) + data.shape[1:], fill, dtype=dtype)
        return scatter_update(out, segment_ids, data, scatter_op,
                              indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode, normalize_indices=False)
    num_buckets = -(-segment_ids.size // bucket_size)
    out = jnp.full((num_buckets, num_segments) + data.shape[1:], fill, dtype=dtype)
    index = np.index_exp[jnp.arange(segment_ids.shape[0]) // bucket_size, segment_ids[None, :]]
    out = scatter_update(out, index, data, scatter_op, indices_are_sorted=indices_are_sorted,
                         unique_indices=unique_indices, mode=mode, normalize_indices=False)
    return reducer(out, axis=0).astype(dtype)


_DOC = """Computes the {what} within segments of an array (TensorFlow's `segment_{op}`).

    Args:
      data: the values; rows (along axis 0) are combined by their segment.
      segment_ids: integer array of data.shape[0] segment indices; values outside
        [0, num_segments) are dropped (the default mode, FILL_OR_DROP).
      num_segments: static output length; default max(segment_ids) + 1 (needs concrete ids).
      indices_are_sorted, unique_indices: promises passed on to the scatter.
      bucket_size: scatter into buckets of this many entries, then reduce the buckets.
      mode: a lax.GatherScatterMode for out-of-range segment ids.

    Returns:
      An array of shape (num_segments,) + data.shape[1:]; empty segments hold {empty}.
    """


def _make(op: str, what: str, scatter_op: Callable, reducer: Callable,
          empty: str) -> Callable[..., Any]:
    """The public segment reduction `segment_<op>` built on `scatter_op`."""
    name = f"segment_{op}"

    def segment(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None,
                out_sharding: Any = None) -> Any:
        del out_sharding  # one device: every array is replicated
        return _segment_update(name, data, segment_ids, scatter_op, num_segments,
                               indices_are_sorted, unique_indices, bucket_size, reducer, mode)

    segment.__name__ = segment.__qualname__ = name
    segment.__doc__ = _DOC.format(what=what, op=op, empty=empty)
    return segment


segment_sum = _make("sum", "sum", ix.scatter_add, reductions.sum, "0")
segment_prod = _make("prod", "product", ix.scatter_mul, reductions.prod, "1")
segment_max = _make("max", "maximum", ix.scatter_max, reductions.max,
                    "the dtype's lowest value (-inf for floats)")
segment_min = _make("min", "minimum", ix.scatter_min, reductions.min,
                    "the dtype's highest value (inf for floats)")
