"""scipy.stats' array statistics: mode, rankdata and sem, as JAX computes them (sorting,
unique with a static size, cumulative sums), each jitted as in JAX."""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.numpy.util import (canonicalize_axis, check_arraylike, promote_args_inexact,
                                   staged_as_jit)
from pyjax._src.scipy.stats._typing import Array, ArrayLike
from pyjax._src.transforms.batching import vmap

_NAN_POLICIES = ("propagate", "omit", "raise")


class ModeResult(NamedTuple):
    """mode's result: the most common values and how often each occurs."""
    mode: Array
    count: Array


def _check_nan_policy(fun_name: str, nan_policy: str) -> None:
    """JAX supports only nan_policy='propagate' in mode and rankdata."""
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy == "omit":
        raise NotImplementedError(
            f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{fun_name}`, we cannot know whether `x` contains "
            f"nans. Please check if nans exist in `x` outside of the `{fun_name}` function.")


@staged_as_jit(static_argnames=("axis", "nan_policy", "keepdims"))
def mode(a: ArrayLike, axis: int | None = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """The most common value along `axis` (the smallest of ties) and its count."""
    check_arraylike("mode", a)
    x = jnp.atleast_1d(a)
    _check_nan_policy("mode", nan_policy)
    if axis is not None:
        axis = canonicalize_axis(axis, x.ndim)
    shape = x.shape
    if keepdims:
        out_shape = (tuple(1 for _ in shape) if axis is None
                     else tuple(1 if i == axis else s for i, s in enumerate(shape)))
    else:
        out_shape = () if axis is None else tuple(s for i, s in enumerate(shape) if i != axis)
    if axis is None:
        axis = 0
        x = x.ravel()

    def mode_of_column(col: Array) -> tuple[Array, Array]:
        if col.size == 0:
            float_dtype = dtypes.default_float_dtype()
            return jnp.array(np.nan, dtype=float_dtype), jnp.array(0, dtype=float_dtype)
        vals, counts = jnp.unique(col, return_counts=True, size=col.size)
        return vals[jnp.argmax(counts)], counts.max()

    x = jnp.moveaxis(x, axis, 0)
    x = x.reshape(x.shape[0], math.prod(x.shape[1:]))
    vals, counts = vmap(mode_of_column, in_axes=1)(x)
    return ModeResult(vals.reshape(out_shape), counts.reshape(out_shape))


def invert_permutation(i: Array) -> Array:
    """The inverse of the permutation `i` (a 1-D array of indices)."""
    return jnp.empty_like(i).at[i].set(jnp.arange(i.size, dtype=i.dtype))


@staged_as_jit(static_argnames=("method", "axis", "nan_policy"))
def rankdata(a: ArrayLike, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Array:
    """Ranks of the data (1-based, ties by `method`); all nan if any value is nan."""
    check_arraylike("rankdata", a)
    _check_nan_policy("rankdata", nan_policy)
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        return jnp.apply_along_axis(rankdata, axis, a, method)
    a = jnp.ravel(a)
    out_dtype = dtypes.default_float_dtype()

    def ranks(a: Array) -> Array:
        arr, sorter = lax.sort_key_val(a, jnp.arange(a.size))
        inv = invert_permutation(sorter)
        if method == "ordinal":
            return (inv + 1).astype(out_dtype)
        obs = jnp.concatenate([jnp.array([True]), arr[1:] != arr[:-1]])
        dense = obs.cumsum()[inv]
        if method == "dense":
            return dense.astype(out_dtype)
        count = jnp.nonzero(obs, size=arr.size + 1, fill_value=obs.size)[0].astype(out_dtype)
        if method == "max":
            return count[dense]
        if method == "min":
            return count[dense - 1] + 1
        return 0.5 * (count[dense] + count[dense - 1] + 1)

    return lax.cond(jnp.any(jnp.isnan(a)), lambda a: jnp.full_like(a, jnp.nan, out_dtype),
                    ranks, a)


@staged_as_jit(static_argnames=("axis", "nan_policy", "keepdims"))
def sem(a: ArrayLike, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Array:
    """Standard error of the mean: std(ddof) / sqrt(count)."""
    b, = promote_args_inexact("sem", a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return b.std(axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = (~jnp.isnan(b)).sum(axis, keepdims=keepdims)
        return jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")
