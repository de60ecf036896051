"""jnp's sorting and searching beyond sort/argsort: partition, argpartition, sort_complex,
lexsort, searchsorted (JAX's four methods), argwhere, extract and compress.

Each follows JAX 0.10.2's construction (which functions are jitted, which lax ops they use), so
traced programs print JAX's jaxprs.
"""
from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.trace import Tracer
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import reductions, ufuncs
from pyjax._src.numpy import util
from pyjax._src.numpy.util import canonicalize_axis, check_arraylike, staged_as_jit
from pyjax._src.primitives import elementwise as lax
from pyjax._src.primitives import extra as lax_extra
from pyjax._src.primitives import indexing as slicing
from pyjax._src.primitives import shape as shp
from pyjax._src.primitives import total_order
from pyjax._src.primitives.topk import top_k
from pyjax._src.transforms.batching import vmap

_INT32_MAX = int(np.iinfo(np.int32).max)


def _ensure(name: str, *args: Any) -> list[Any]:
    check_arraylike(name, *args)
    return [util.as_operand(a) for a in args]


def int_dtype_for_dim(size: int) -> np.dtype:
    """The signed index dtype for an axis of `size` (int64 only past int32's range)."""
    return dtypes.int64 if size > _INT32_MAX else dtypes.int32


def index_dtype_for_dim(size: int) -> np.dtype:
    """int_dtype_for_dim, widened to the default int (so x64 gives NumPy's int64)."""
    dtype = int_dtype_for_dim(size)
    return dtypes.default_int_dtype() if dtype == dtypes.int32 else dtype


# ---------------------------------------------------------------------------------------------
# partition / argpartition / sort_complex / lexsort
# ---------------------------------------------------------------------------------------------

def _partition_operand(name: str, a: Any, kth: int, axis: int) -> tuple[Any, int, int]:
    """The operand with `axis` moved last, the canonical axis and kth; rejects complex."""
    (arr,) = _ensure("partition", a)
    if dtypes.is_complex(np.dtype(arr.dtype)):
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    axis = canonicalize_axis(axis, np.ndim(arr))
    kth = canonicalize_axis(kth, np.shape(arr)[axis])
    return lnp.swapaxes(arr, axis, -1), axis, kth


@staged_as_jit(static_argnames=("kth", "axis"))
def partition(a: Any, kth: int, axis: int = -1) -> Any:
    """A copy with the kth smallest element in place, smaller ones before it, larger after."""
    arr, axis, kth = _partition_operand("partition", a, kth, axis)
    if dtypes.is_unsigned(np.dtype(arr.dtype)):  # -(x + 1) keeps 0 the largest when negated
        bottom = -top_k(-(arr + 1), kth + 1)[0] - 1
    else:
        bottom = -top_k(-arr, kth + 1)[0]
    top = top_k(arr, np.shape(arr)[-1] - kth - 1)[0]
    out = shp.concatenate([bottom, top], np.ndim(arr) - 1)
    return lnp.swapaxes(out, -1, axis)


def _set_to_zero(a: Any, i: Any) -> Any:
    return a.at[i].set(0)


@staged_as_jit(static_argnames=("kth", "axis"))
def argpartition(a: Any, kth: int, axis: int = -1) -> Any:
    """Indices that partition `a` around its kth smallest element along `axis`."""
    arr, axis, kth = _partition_operand("argpartition", a, kth, axis)
    if dtypes.is_unsigned(np.dtype(arr.dtype)):
        bottom_ind = top_k(-(arr + 1), kth + 1)[1]
    else:
        bottom_ind = top_k(-arr, kth + 1)[1]
    # the top indices come from a proxy (ones, zeroed at the bottom ones): duplicates are safe
    set_to_zero = _set_to_zero
    for _ in range(np.ndim(arr) - 1):
        set_to_zero = vmap(set_to_zero)
    proxy = set_to_zero(lax_extra.full(np.shape(arr), 1.0), bottom_ind)
    top_ind = top_k(proxy, np.shape(arr)[-1] - kth - 1)[1]
    out = shp.concatenate([bottom_ind, top_ind], np.ndim(arr) - 1)
    return lnp.swapaxes(out, -1, axis)


@staged_as_jit
def sort_complex(a: Any) -> Any:
    """`a` sorted along its last axis, as a complex array."""
    (a,) = _ensure("sort_complex", a)
    a = lax_extra.sort(a)
    complex_dtype = dtypes.complex128 if dtypes.to_inexact_dtype(np.dtype(a.dtype)) in (
        dtypes.float64, dtypes.complex128) else dtypes.complex64
    return lax.convert_element_type(a, complex_dtype)


@staged_as_jit(static_argnames=("axis",))
def lexsort(keys: Any, axis: int = -1) -> Any:
    """Indices sorting by the last key, ties broken by the one before, and so on."""
    if isinstance(keys, Tracer):  # iterated as JAX iterates a tracer (index_in_dim)
        keys = [slicing.index_in_dim(keys, i, keepdims=False) for i in range(len(keys))]
    key_arrays = _ensure("lexsort", *tuple(keys))
    if not key_arrays:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({np.shape(key) for key in key_arrays}) > 1:
        raise ValueError("all keys need to be the same shape")
    if np.ndim(key_arrays[0]) == 0:
        return lax_extra.full((), 0, dtypes.default_int_dtype())
    axis = canonicalize_axis(axis, np.ndim(key_arrays[0]))
    shape = np.shape(key_arrays[0])
    iota = shp.broadcasted_iota(index_dtype_for_dim(shape[axis]), shape, axis)
    return lax_extra.sort((*key_arrays[::-1], iota), dimension=axis,
                          num_keys=len(key_arrays))[-1]


# ---------------------------------------------------------------------------------------------
# searchsorted
# ---------------------------------------------------------------------------------------------

@staged_as_jit(static_argnames=("side", "method"))
def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *,
                 method: str = "scan") -> Any:
    """Where to insert `v` into the sorted 1-D `a` (optionally sorted by `sorter`)."""
    if sorter is None:
        a, v = _ensure("searchsorted", a, v)
    else:
        a, v, sorter = _ensure("searchsorted", a, v, sorter)
    if np.ndim(a) != 1:
        raise ValueError("a should be 1-dimensional")
    a, v = util.promote_dtypes(a, v)
    if sorter is not None:
        a = a[sorter]
    dtype = int_dtype_for_dim(np.shape(a)[0])
    if side not in ("left", "right"):
        raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
    if method in ("scan", "scan_unrolled"):
        return _searchsorted_scan_impl(a, v, side=side, dtype=dtype,
                                  unrolled=method == "scan_unrolled")
    if method == "compare_all":
        return _searchsorted_compare_all_impl(a, v, side=side, dtype=dtype)
    if method == "sort":
        return _searchsorted_sort_impl(a, v, side=side, dtype=dtype)
    raise ValueError(f"invalid argument method={method!r}, expected one of "
                     f"{list(_SEARCHSORTED_METHODS)}")


_SEARCHSORTED_METHODS = ("compare_all", "scan", "scan_unrolled", "sort")


@staged_as_jit(static_argnames=("side", "dtype", "unrolled"))
def _searchsorted_scan_impl(sorted_arr: Any, query: Any, side: str, dtype: np.dtype,
                       unrolled: bool) -> Any:
    """Binary search by a scan of ceil(log2(n + 1)) halvings (vmapped over the queries)."""
    (n,) = np.shape(sorted_arr)
    if n == 0:
        return lax_extra.full(np.shape(query), 0, dtype)
    if np.ndim(query) > 0:
        return vmap(functools.partial(_searchsorted_scan_impl, side=side, dtype=dtype,
                                      unrolled=unrolled), in_axes=(None, 0))(sorted_arr, query)
    go_left_if = (total_order.sort_le_comparator if side == "left"
                  else total_order.sort_lt_comparator)
    unsigned = np.uint64 if np.dtype(dtype).itemsize == 8 else np.uint32

    def body(state: tuple, _: Any) -> tuple:
        low, high = state
        mid = low + (high - low) // 2  # this form cannot overflow
        go_left = go_left_if(query, sorted_arr[mid])
        return (lax.select(go_left, low, mid), lax.select(go_left, mid, high)), ()

    from pyjax._src.primitives.control_flow import scan  # loaded on first use (issue 16)
    levels = int(np.ceil(np.log2(n + 1)))
    carry, _ = scan(body, (unsigned(0), unsigned(n)), (), length=levels,
                    unroll=levels if unrolled else 1)
    return carry[1].astype(dtype)


@staged_as_jit(static_argnames=("side", "dtype"))
def _searchsorted_sort_impl(sorted_arr: Any, query: Any, side: str, dtype: np.dtype) -> Any:
    """Ranks from sorting the queries together with the array (and the queries alone)."""
    total = math.prod(np.shape(sorted_arr)) + math.prod(np.shape(query))
    working = dtypes.int32 if total <= _INT32_MAX else dtypes.int64

    def rank(x: Any) -> Any:
        idx = shp.iota(working, np.shape(x)[0])
        return lax_extra.full_like(idx, 0).at[lax_extra.sort_key_val(x, idx)[1]].set(idx)

    n = np.shape(sorted_arr)[0]
    if side == "left":
        index = rank(shp.concatenate([lnp.ravel(query), sorted_arr], 0))[:np.size(query)]
    else:
        index = rank(shp.concatenate([sorted_arr, lnp.ravel(query)], 0))[n:]
    return shp.reshape(lax.sub(index, rank(lnp.ravel(query))), np.shape(query)).astype(dtype)


@staged_as_jit(static_argnames=("side", "dtype"))
def _searchsorted_compare_all_impl(sorted_arr: Any, query: Any, side: str, dtype: np.dtype) -> Any:
    """Count, for each query, the array entries before it (O(n·m) comparisons)."""
    compare = (total_order.sort_lt_comparator if side == "left"
               else total_order.sort_le_comparator)
    comparisons = vmap(compare, in_axes=(0, None))(sorted_arr, query)
    return comparisons.sum(dtype=dtype, axis=0)


# ---------------------------------------------------------------------------------------------
# argwhere / extract / compress
# ---------------------------------------------------------------------------------------------

def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the non-zero elements, one row per element (static `size` under jit)."""
    (a,) = _ensure("argwhere", a)
    result = lnp.transpose(lnp.vstack(lnp.nonzero(lnp.atleast_1d(a), size=size,
                                                   fill_value=fill_value)))
    if np.ndim(a) == 0:
        return lnp.reshape(result[:0], (np.shape(result)[0], 0))
    return lnp.reshape(result, (np.shape(result)[0], np.ndim(a)))


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Any:
    """The elements of `arr` where `condition` is true, both flattened."""
    check_arraylike("extreact", condition, arr, fill_value)  # JAX's spelling
    return compress(lnp.ravel(condition), lnp.ravel(arr), size=size, fill_value=fill_value)


def compress(condition: Any, a: Any, axis: int | None = None, *, size: int | None = None,
             fill_value: Any = 0, out: None = None) -> Any:
    """The slices of `a` along `axis` where the 1-D `condition` is true."""
    condition_arr, arr, fill_value = _ensure("compress", condition, a, fill_value)
    condition_arr = condition_arr.astype(bool)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    if np.ndim(condition_arr) != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        axis = 0
        arr = lnp.ravel(arr)
    else:
        arr = lnp.moveaxis(arr, axis, 0)
    length = np.shape(arr)[0]
    condition_arr, extra = condition_arr[:length], condition_arr[length:]
    arr = arr[:np.shape(condition_arr)[0]]
    if size is None:
        if reductions.any(extra):
            raise ValueError("condition contains entries that are out of bounds")
        result = arr[condition_arr]
    elif not 0 <= size <= np.shape(arr)[0]:
        raise ValueError("size must be positive and not greater than the size of the array "
                         f"axis; got size={size!r} for a.shape[axis]={np.shape(arr)[0]}")
    else:
        mask = lnp.expand_dims(condition_arr, range(1, np.ndim(arr)))
        arr = ufuncs.where(mask, arr, lnp.array(fill_value, dtype=arr.dtype))
        result = arr[lnp.argsort(condition_arr, stable=True, descending=True)][:size]
    return lnp.moveaxis(result, 0, axis)

