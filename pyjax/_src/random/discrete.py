"""Discrete samplers: randint, bernoulli, rademacher, geometric, categorical, choice,
permutation; as JAX derives them (jitted where JAX jits, same key splits)."""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.core.trace import Tracer
from pyjax._src.numpy.util import canonicalize_axis, check_arraylike, promote_dtypes_inexact
from pyjax._src.random.base import (
    UINT_DTYPES, broadcast_to_rank, canonicalize_shape, check_prng_key, check_shape,
    random_bits, shape_or_broadcast, split_typed, unpack)
from pyjax._src.random.continuous import gumbel, uniform
from pyjax._src.transforms.jit import jit
from pyjax._src.parallel.placement import with_out_sharding

Shape = tuple[int, ...]


# ---------------------------------------------------------------------------------------------
# randint
# ---------------------------------------------------------------------------------------------

def _convert_and_clip_integer(val: Any, dtype: np.dtype) -> Any:
    """An integer array converted to `dtype`, clipped to its range instead of wrapping."""
    from pyjax._src.numpy.util import lax_const
    info, val_info = dtypes.iinfo(dtype), dtypes.iinfo(val.dtype)
    lo = lax_const(val, max(int(info.min), int(val_info.min)))  # weak only when val is
    hi = lax_const(val, min(int(info.max), int(val_info.max)))
    return jnp.clip(val, lo, hi).astype(dtype)


@with_out_sharding("randint")
def randint(key: Any, shape: Any, minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Integers in [minval, maxval) (minval where maxval <= minval)."""
    key, _ = check_prng_key("randint", key)
    dtype = dtypes.check_user_dtype(int if dtype is None else dtype)
    shape = canonicalize_shape(shape)
    if not dtypes.is_integer(dtype):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = dtypes.iinfo(dtype)
    sampling_dtype = dtype
    if info.bits < 32:  # sample in 32 bits: less modulo bias
        sampling_dtype = dtypes.int32
        minval = jnp.asarray(minval).astype("int32").clip(int(info.min), int(info.max))
        maxval = jnp.asarray(maxval).astype("int32").clip(int(info.min), int(info.max) + 1)
    return _randint(key, minval, maxval, shape=shape, dtype=sampling_dtype).astype(dtype)


@jit(static_argnums=(3, 4))
def _randint(key: Any, minval: Any, maxval: Any, shape: Shape, dtype: np.dtype) -> Any:
    """Two words of random bits per value, reduced modulo the span (2 nbits of randomness)."""
    check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    check_arraylike("randint", minval, maxval)
    minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
    if not dtypes.is_integer(minval.dtype):
        minval = minval.astype(int)
    if not dtypes.is_integer(maxval.dtype):
        maxval = maxval.astype(int)
    # maxval beyond the dtype's range (randint(key, s, 0, 256, uint8)) widens the span by one
    top = _convert_and_clip_integer(jnp.array(dtypes.iinfo(dtype).max, dtype), maxval.dtype)
    maxval_out_of_range = lax.gt(maxval, top)
    minval = _convert_and_clip_integer(minval, dtype)
    maxval = _convert_and_clip_integer(maxval, dtype)
    minval = broadcast_to_rank(minval, len(shape))
    maxval = broadcast_to_rank(maxval, len(shape))
    nbits = dtypes.iinfo(dtype).bits
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}")
    k1, k2 = unpack(split_typed(key))
    higher_bits, lower_bits = random_bits(k1, nbits, shape), random_bits(k2, nbits, shape)
    unsigned_dtype = UINT_DTYPES[nbits]
    span = lax.convert_element_type(maxval - minval, unsigned_dtype)
    span = lax.select(maxval <= minval, lax.full_like(span, 1), span)
    span = lax.select(maxval_out_of_range & (maxval > minval),
                      lax.add(span, np.array(1, unsigned_dtype)), span)
    # (hi 2**nbits + lo) mod span, with 2**nbits mod span as (2**(nbits/2) mod span)**2 mod span
    multiplier = lax.rem(np.array(2 ** (nbits // 2), unsigned_dtype), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier), lax.rem(lower_bits, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


# ---------------------------------------------------------------------------------------------
# bernoulli, rademacher, geometric
# ---------------------------------------------------------------------------------------------

@with_out_sharding("bernoulli")
def bernoulli(key: Any, p: Any = 0.5, shape: Any = None, mode: str = "low") -> Any:
    """Booleans that are True with probability p (u < p; mode "high": with 2 nmant bits)."""
    shape = None if shape is None else canonicalize_shape(shape)
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    key, _ = check_prng_key("bernoulli", key)
    dtype = dtypes.dtype_and_weak(p)[0]
    if not dtypes.is_float(dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    p = lax.convert_element_type(p, dtype)
    return _bernoulli(key, p, shape=shape, mode=mode)


@jit(static_argnames=("shape", "mode"))
def _bernoulli(key: Any, p: Any, shape: Shape | None, mode: str) -> Any:
    if shape is None:
        shape = np.shape(p)
    else:
        check_shape("bernoulli", shape, np.shape(p))
    dtype = p.dtype
    if mode == "high":
        u1, u2 = unpack(uniform(key, (2, *shape), dtype))
        u2 = u2 * 2 ** (-dtypes.finfo(dtype).nmant)
        return u2 < p - u1
    return uniform(key, shape, dtype) < p


@with_out_sharding("rademacher")
def rademacher(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """-1 or +1 with equal probability."""
    key, _ = check_prng_key("rademacher", key)
    dtype = dtypes.check_user_dtype(int if dtype is None else dtype)
    return _rademacher(key, canonicalize_shape(shape), dtype)


@jit(static_argnums=(1, 2))
def _rademacher(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    samples = bernoulli(key=key, p=0.5, shape=shape).astype(dtype)
    return (2 * samples - 1).astype(dtype)


@with_out_sharding("geometric")
def geometric(key: Any, p: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Number of Bernoulli(p) trials up to the first success: floor(log u / log1p(-p)) + 1."""
    key, _ = check_prng_key("geometric", key)
    dtype = dtypes.check_user_dtype(int if dtype is None else dtype)
    if not dtypes.is_integer(dtype):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = shape_or_broadcast("geometric", shape, p)
    return _geometric(key, p, shape, dtype)


@jit(static_argnums=(2, 3))
def _geometric(key: Any, p: Any, shape: Shape, dtype: np.dtype) -> Any:
    check_arraylike("geometric", p)
    p, = promote_dtypes_inexact(p)
    u = uniform(key, shape, p.dtype)
    u = jnp.where(u == 0, 1, u)
    log_u = lax.log(u)
    log_one_minus_p = jnp.broadcast_to(lax.log1p(-p), shape)
    g = lax.floor(lax.div(log_u, log_one_minus_p)) + 1
    return g.astype(dtype)


# ---------------------------------------------------------------------------------------------
# categorical and choice
# ---------------------------------------------------------------------------------------------

@with_out_sharding("categorical")
def categorical(key: Any, logits: Any, axis: int = -1, shape: Any = None,
                replace: bool = True, mode: str | None = None) -> Any:
    """Category indices drawn with probabilities softmax(logits) (the Gumbel-max trick)."""
    key, _ = check_prng_key("categorical", key)
    check_arraylike("categorical", logits)
    logits = jnp.asarray(logits)
    batch_shape = tuple(np.delete(logits.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = canonicalize_shape(shape)
        check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        if axis >= 0:
            axis -= logits.ndim
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % logits.ndim, logits.shape[axis])
        noise = gumbel(key, (*prefix, *logits_shape), logits.dtype, mode=mode)
        return jnp.argmax(noise + lax.expand_dims(logits, tuple(range(len(prefix)))),
                          axis=axis)
    logits = logits + gumbel(key, logits.shape, logits.dtype, mode=mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits.shape[axis]}).")
    _, indices = lax.top_k(jnp.moveaxis(logits, axis, -1), k)
    return lax.reshape(indices, shape, (indices.ndim - 1, *range(indices.ndim - 1)))


def _concrete_int(x: Any, what: str) -> int:
    if isinstance(x, Tracer):
        from pyjax._src import errors
        raise errors.ConcretizationTypeError(x, what)
    return operator.index(x) if not hasattr(x, "item") else int(x.item())


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None,
           axis: int = 0, mode: str | None = None) -> Any:
    """Samples of `a` (or of arange(a)), with or without replacement, optionally weighted."""
    key, _ = check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    check_arraylike("choice", a)
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = _concrete_int(a, "The error occurred in jax.random.choice()")
    else:
        axis = canonicalize_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    shape = tuple(shape)
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population (size "
                         f"{n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)[slices]
    else:
        check_arraylike("choice", p)
        p_arr, = promote_dtypes_inexact(p)
        if p_arr.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {p_arr.shape} and a.shape[axis] is "
                             f"{n_inputs}.")
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform(key, shape, dtype=p_cuml.dtype))
            ind = jnp.searchsorted(p_cuml, r).astype(int)
        else:  # Gumbel top-k: the n_draws largest of log p + Gumbel noise
            g = gumbel(key, (n_inputs,), dtype=p_arr.dtype, mode=mode) + jnp.log(p_arr)
            ind = lax.top_k(g, k=n_draws)[1].astype(int)
        result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    return result.reshape(shape if arr.ndim == 0 else
                          arr.shape[0:axis] + tuple(shape) + arr.shape[axis + 1:])


# ---------------------------------------------------------------------------------------------
# permutation
# ---------------------------------------------------------------------------------------------

@with_out_sharding("permutation")
def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A shuffled copy of x along `axis` (or a permutation of arange(x) for an integer x)."""
    key, _ = check_prng_key("permutation", key)
    check_arraylike("permutation", x)
    axis = canonicalize_axis(axis, np.ndim(x) or 1)
    if not np.ndim(x):
        if not dtypes.is_integer(dtypes.dtype_and_weak(x)[0]):
            raise TypeError("x must be an integer or at least 1-dimensional")
        r = _concrete_int(x, "argument x of jax.random.permutation()")
        return _shuffle(key, jnp.arange(r), axis)
    if independent or np.ndim(x) == 1:
        return _shuffle(key, x, axis)
    ind = _shuffle(key, jnp.arange(x.shape[axis]), 0)
    return jnp.take(x, ind, axis, unique_indices=True)


@jit(static_argnums=(2,))
def _shuffle(key: Any, x: Any, axis: int) -> Any:
    """Sort by fresh random 32-bit keys, enough rounds to make key collisions unlikely
    (3 log n / log 2**32 rounds)."""
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(dtypes.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, subkey = unpack(split_typed(key))
        sort_keys = random_bits(subkey, 32, x.shape)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x
