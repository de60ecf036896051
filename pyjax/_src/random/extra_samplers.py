"""orthogonal, binomial and multinomial samplers, derived from normal/uniform draws exactly as
JAX derives them (same keys, same loops, jitted where JAX jits) so results match bit for bit.
"""
from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.compat.core import concrete_or_error
from pyjax._src.core import dtypes
from pyjax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from pyjax._src.random.base import (
    broadcast_shapes, canonicalize_shape, check_prng_key, check_shape, split_typed, unpack)
from pyjax._src.random.continuous import normal, uniform
from pyjax._src.transforms.jit import jit
from pyjax._src.parallel.placement import with_out_sharding

Shape = tuple[int, ...]


# ---------------------------------------------------------------------------------------------
# orthogonal
# ---------------------------------------------------------------------------------------------

@with_out_sharding("orthogonal")
def orthogonal(key: Any, n: int, shape: Any = (), dtype: Any = None,
               m: int | None = None) -> Any:
    """Haar-random (semi-)orthogonal, or unitary for complex dtypes, (*shape, n, m) matrices:
    Q of the QR factorisation of a normal matrix, columns signed by R's diagonal (Mezzadri)."""
    m_ = n if m is None else m
    shape = canonicalize_shape(shape)
    key, _ = check_prng_key("orthogonal", key)
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype)
    check_shape("orthogonal", shape)
    context = "The error occurred in jax.random.orthogonal()"
    n = concrete_or_error(operator.index, n, context)
    m_ = concrete_or_error(operator.index, m_, context)
    return _orthogonal(key, n, m_, shape, dtype)


@jit(static_argnums=(1, 2, 3, 4))
def _orthogonal(key: Any, n: int, m: int, shape: Shape, dtype: np.dtype) -> Any:
    z = normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    x = q * jnp.expand_dims(jnp.sign(jnp.linalg.diagonal(r)), -2)
    return x.mT if n < m else x


# ---------------------------------------------------------------------------------------------
# binomial: inversion for count * q <= 10, BTRS (Hormann's transformed rejection) otherwise
# ---------------------------------------------------------------------------------------------

#: log(k!) - Stirling's log(k!) for k = 0..9 (beyond, the series 1/12k - 1/360k^3 + ...).
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _isnan(x: Any) -> Any:
    return lax.ne(x, x)


def _stirling_approx_tail(k: Any) -> Any:
    """The error of Stirling's approximation to log(k!): tabulated below 10, a series above."""
    table = jnp.array(_STIRLING_TAIL, dtype=k.dtype)
    use_table = k <= 9
    k = lax.clamp(np.array(0.0, k.dtype), k, np.array(9.0, k.dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = jnp.floor(k)
    return lax.select(use_table, table[jnp.asarray(k, dtype="int32")], approx)


def _inline_jit(static_argnums: tuple[int, ...]) -> Any:
    """jit(..., inline=True), as JAX declares these helpers."""
    return functools.partial(jit, static_argnums=static_argnums, inline=True)


@_inline_jit((3, 4, 5))
def _binomial_inversion(key: Any, count: Any, prob: Any, shape: Shape, dtype: np.dtype,
                        max_iters: Any) -> Any:
    """Count geometric(prob) waiting times until their sum exceeds count."""
    log1minusprob = jnp.log1p(-prob)

    def body_fn(carry: tuple) -> tuple:
        i, num_geom, geom_sum, key = carry
        subkey, key = unpack(split_typed(key))
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = uniform(subkey, shape, prob.dtype)
        geom = jnp.ceil(jnp.log(u) / log1minusprob)
        geom_sum = geom_sum + geom
        return i + 1, num_geom_out, geom_sum, key

    def cond_fn(carry: tuple) -> Any:
        i, geom_sum = carry[0], carry[2]
        return (geom_sum <= count).any() & (i < max_iters)

    num_geom_init = lax.full_like(prob, 0, prob.dtype, shape)
    geom_sum_init = lax.full_like(prob, 0, prob.dtype, shape)
    k = lax.while_loop(cond_fn, body_fn, (0, num_geom_init, geom_sum_init, key))[1]
    return (k - 1).astype(dtype)


@_inline_jit((3, 4, 5))
def _btrs(key: Any, count: Any, prob: Any, shape: Shape, dtype: np.dtype,
          max_iters: Any) -> Any:
    """Hormann's BTRS: propose k from a transformed uniform; accept by a squeeze test or by
    the exact log-density bound (Stirling tails)."""
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body_fn(carry: tuple) -> tuple:
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = unpack(split_typed(key, 3))
        u = uniform(subkey_0, shape, prob.dtype)
        v = uniform(subkey_1, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m)
              + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k)
              - _stirling_approx_tail(count - k))
        accept2 = v <= ub
        accept = accept1 | (~reject & accept2)
        k_out = lax.select(accept, k, k_out)
        accepted |= accept
        return i + 1, k_out, accepted, key

    def cond_fn(carry: tuple) -> Any:
        i, accepted = carry[0], carry[2]
        return (~accepted).any() & (i < max_iters)

    k_init = lax.full_like(prob, -1, prob.dtype, shape)
    carry = (0, k_init, jnp.full(shape, False, bool), key)
    return lax.while_loop(cond_fn, body_fn, carry)[1].astype(dtype)


@_inline_jit((3, 4))
def _binomial(key: Any, count: Any, prob: Any, shape: Shape | None, dtype: np.dtype) -> Any:
    """Sample with q = min(p, 1 - p) and reflect; NaN for invalid p or count, inf for an
    infinite count (TensorFlow Probability's conventions, as JAX)."""
    if shape is None:
        shape = broadcast_shapes(np.shape(count), np.shape(prob))
    else:
        check_shape("binomial", shape, np.shape(count), np.shape(prob))
    (prob,) = promote_dtypes_inexact(prob)
    count = lax.convert_element_type(count, prob.dtype)
    count = jnp.broadcast_to(count, shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = _isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = _isnan(q)
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, lax.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)  # a float count behaves as np.random.binomial's
    count_inv = lax.select(use_inversion, count, lax.full_like(count, 0.0))
    count_btrs = lax.select(use_inversion, lax.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, lax.full_like(q, 0.5), q)
    max_iters = dtype.type(dtypes.finfo(dtype).max)
    samples = lax.select(use_inversion,
                         _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
                         _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, jnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(count_inf & (~invalid), jnp.full_like(samples, np.inf, dtype), samples)
    return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf,
                      samples, count.astype(dtype) - samples)


def binomial(key: Any, n: Any, p: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Binomial(n, p) counts as floats."""
    key, _ = check_prng_key("binomial", key)
    check_arraylike("binomial", n, p)
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `binomial` must be a float dtype, got {dtype}")
    if shape is not None:
        shape = canonicalize_shape(shape)
    return _binomial(key, n, p, shape, dtype)


# ---------------------------------------------------------------------------------------------
# multinomial: one binomial per category, of the trials left, with conditional probabilities
# ---------------------------------------------------------------------------------------------

def multinomial(key: Any, n: Any, p: Any, *, shape: Any = None, dtype: Any = None,
                unroll: int | bool = 1) -> Any:
    """Multinomial(n, p) counts along p's last axis (a scan of conditional binomials)."""
    key, _ = check_prng_key("multinomial", key)
    check_arraylike("multinomial", n, p)
    n, p = promote_dtypes_inexact(n, p)
    if shape is None:
        shape = p.shape
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.broadcast_to(p, shape)

    def f(remainder: Any, ratio_key: tuple) -> tuple:
        ratio, key = ratio_key
        count = binomial(key, remainder, ratio.clip(0, 1), dtype=remainder.dtype)
        return remainder - count, count

    p = jnp.moveaxis(p, -1, 0)
    remaining_probs = lax.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(remaining_probs == 0, 1, remaining_probs)
    keys = split_typed(key, ratios.shape[0])
    _, counts = lax.scan(f, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dtype)
