"""Gamma sampling (`random_gamma`, Marsaglia-Tsang with per-element keys) and the samplers
built on it: gamma, loggamma, beta, dirichlet, chisquare, f, t, generalized_normal, ball.

`random_gamma` is a primitive as in JAX; its impl runs JAX's nested while loops vectorised
over elements (each element has its own key, so masking inactive ones changes nothing).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.primitives.prng import bdim_at_front, key_primitive
from pyjax._src.primitives.special import random_gamma_grad
from pyjax._src.transforms import ad
from pyjax._src.random import host
from pyjax._src.random.base import (
    canonicalize_shape, check_prng_key, check_safe_to_cast, check_shape, float_dtype,
    sampler_args, shape_or_broadcast, split, split_typed, unpack)
from pyjax._src.random.continuous import exponential, normal
from pyjax._src.random.discrete import rademacher
from pyjax._src.random.keys import PRNGImpl
from pyjax._src.transforms.jit import jit
from pyjax._src.parallel.placement import with_out_sharding

Shape = tuple[int, ...]


# ---------------------------------------------------------------------------------------------
# The random_gamma primitive
# ---------------------------------------------------------------------------------------------

def _gamma_one(impl: PRNGImpl, keys: np.ndarray, alpha: np.ndarray, log_space: bool
               ) -> np.ndarray:
    """One Gamma(alpha) sample per (key, alpha): Marsaglia-Tsang; alpha < 1 is boosted to
    alpha + 1 and scaled by u ** (1 / alpha)."""
    dtype = alpha.dtype.type
    one, third = dtype(1), dtype(1 / 3)
    boost = alpha >= one
    shifted = np.where(boost, alpha, alpha + one)
    with np.errstate(all="ignore"):
        d = shifted - third
        c = third / np.sqrt(d)
    key, subkey = host.split(impl, keys, 2)
    n = alpha.shape[0]
    # the loop state (X, V, U) = (x^2, v^3, u) of JAX's while loop, starting as (0, 1, 2)
    big_x, big_v, big_u = (np.full(n, v, alpha.dtype) for v in (0, 1, 2))

    def rejected() -> np.ndarray:
        with np.errstate(all="ignore"):
            squeeze = big_u >= host.fma(big_x * big_x, dtype(-0.0331), one)
            bound = host.fma(big_x, dtype(0.5), d * ((one - big_v) + host.log(big_v)))
            return squeeze & (host.log(big_u) >= bound)

    def propose(idx: np.ndarray) -> None:
        key[idx], x_key, u_key = host.split(impl, key[idx], 3)
        x, v = np.zeros(idx.size, alpha.dtype), np.full(idx.size, -1, alpha.dtype)

        def draw(j: np.ndarray) -> None:
            x_key[j], sub = host.split(impl, x_key[j], 2)
            x[j] = host.normal(impl, sub, alpha.dtype)
            with np.errstate(all="ignore"):
                v[j] = host.fma(x[j], c[idx][j], one)

        host.masked_loop(lambda: v <= 0, draw)
        big_x[idx] = x * x
        big_v[idx] = (v * v) * v
        big_u[idx] = host.uniform01(impl, u_key, (), alpha.dtype)

    host.masked_loop(rejected, propose)
    with np.errstate(all="ignore"):
        if log_space:
            log_samples = host.log1p(-host.uniform01(impl, subkey, (), alpha.dtype))
            log_boost = np.where(boost | (log_samples == 0), dtype(0),
                                 log_samples * (one / alpha))
            return (host.log(d) + host.log(big_v)) + log_boost
        samples = one - host.uniform01(impl, subkey, (), alpha.dtype)
        scale = np.where(boost, one, np.power(samples, one / alpha))
        return (d * big_v) * scale


def _gamma_impl(keys: np.ndarray, a: np.ndarray, *, log_space: bool, impl: PRNGImpl
                ) -> np.ndarray:
    """Each key splits into one key per element of a's trailing (non-key) axes."""
    key_ndim = keys.ndim - len(impl.key_shape)
    count = int(np.prod(a.shape[key_ndim:], dtype=np.int64))
    flat_keys = impl.split(keys.reshape(-1, *impl.key_shape), (count,))
    flat_keys = flat_keys.reshape(-1, *impl.key_shape)
    samples = _gamma_one(impl, flat_keys, a.reshape(-1), log_space)
    return samples.reshape(a.shape)


def _gamma_abstract(keys: ShapedArray, a: ShapedArray, *, log_space: bool, impl: PRNGImpl
                    ) -> ShapedArray:
    return a


random_gamma_p = key_primitive("random_gamma", _gamma_impl, _gamma_abstract,
                                shown=("log_space",))


def _gamma_jvp_a(g: Any, ans: Any, key: Any, a: Any, *, log_space: bool, impl: Any) -> Any:
    if log_space:  # ans = log x: d(log x)/da = (dx/da) / x
        x = lax.exp(ans)
        return lax.mul(g, lax.div(random_gamma_grad(a, x), x))
    return lax.mul(g, random_gamma_grad(a, ans))


ad.defjvp2(random_gamma_p, None, _gamma_jvp_a)


def _gamma_batch(vals: Any, dims: Any, *, log_space: bool, impl: PRNGImpl) -> tuple:
    """Keys and alphas batched at the front: the impl gives each leading key the alphas of its
    row (JAX's rule)."""
    size = next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not None)
    keys, a = (bdim_at_front(v, d, size) for v, d in zip(vals, dims))
    return random_gamma_p.bind(keys, a, log_space=log_space, impl=impl), 0


random_gamma_p.batch = _gamma_batch


# ---------------------------------------------------------------------------------------------
# gamma, loggamma
# ---------------------------------------------------------------------------------------------

@with_out_sharding("gamma")
def gamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Gamma(a, 1) floats."""
    key, _ = check_prng_key("gamma", key)
    dtype = float_dtype("gamma", dtype)
    shape = None if shape is None else canonicalize_shape(shape)
    return _gamma(key, a, shape=shape, dtype=dtype)


@with_out_sharding("loggamma")
def loggamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Any:
    """log of Gamma(a, 1) floats, accurate for small a."""
    key, _ = check_prng_key("loggamma", key)
    dtype = float_dtype("gamma", dtype)
    shape = None if shape is None else canonicalize_shape(shape)
    return _gamma(key, a, shape=shape, dtype=dtype, log_space=True)


@jit(static_argnames=("shape", "dtype", "log_space"))
def _gamma(key: Any, a: Any, shape: Shape | None, dtype: np.dtype, log_space: bool = False
           ) -> Any:
    if shape is None:
        shape = np.shape(a)
    else:
        check_shape("gamma", shape, np.shape(a))
    a = lax.convert_element_type(a, dtype)
    if np.shape(a) != shape:
        a = jnp.broadcast_to(a, shape)
    return random_gamma_p.bind(key, a, log_space=log_space, impl=key.dtype._impl)


# ---------------------------------------------------------------------------------------------
# Built on gamma
# ---------------------------------------------------------------------------------------------

@with_out_sharding("beta")
def beta(key: Any, a: Any, b: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Beta(a, b) floats: Ga / (Ga + Gb), computed from log-gammas."""
    key, _ = check_prng_key("beta", key)
    dtype = float_dtype("beta", dtype)
    check_safe_to_cast("beta", dtype, a, b)
    shape = shape_or_broadcast("beta", shape, a, b)
    return _beta(key, a, b, shape, dtype)


@jit(static_argnums=(3, 4))
def _beta(key: Any, a: Any, b: Any, shape: Shape, dtype: np.dtype) -> Any:
    check_shape("beta", shape, np.shape(a), np.shape(b))
    a = jnp.broadcast_to(lax.convert_element_type(a, dtype), shape)
    b = jnp.broadcast_to(lax.convert_element_type(b, dtype), shape)
    key_a, key_b = unpack(split_typed(key))
    log_gamma_a = loggamma(key_a, a, shape, dtype)
    log_gamma_b = loggamma(key_b, b, shape, dtype)
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a = jnp.exp(log_gamma_a - log_max)
    gamma_b = jnp.exp(log_gamma_b - log_max)
    return gamma_a / (gamma_a + gamma_b)


@with_out_sharding("dirichlet")
def dirichlet(key: Any, alpha: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Dirichlet(alpha) vectors (last axis): softmax of log-gammas."""
    key, _ = check_prng_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    shape = None if shape is None else canonicalize_shape(shape)
    return _dirichlet(key, alpha, shape, dtype)


@jit(static_argnums=(2, 3))
def _dirichlet(key: Any, alpha: Any, shape: Shape | None, dtype: np.dtype) -> Any:
    if not np.ndim(alpha) >= 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{np.ndim(alpha)}")
    if shape is None:
        shape = np.shape(alpha)[:-1]
    else:
        check_shape("dirichlet", shape, np.shape(alpha)[:-1])
    alpha = lax.convert_element_type(alpha, dtype)
    log_gammas = loggamma(key, alpha, shape + np.shape(alpha)[-1:], dtype)
    unnormalized = jnp.exp(log_gammas - lax.stop_gradient(jnp.max(log_gammas, -1,
                                                                   keepdims=True)))
    return unnormalized / jnp.sum(unnormalized, -1, keepdims=True)


@with_out_sharding("chisquare")
def chisquare(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Chi-square(df) floats: 2 Gamma(df / 2)."""
    key, shape, dtype = sampler_args("chisquare", key, shape, dtype, df)
    return _chisquare(key, df, shape, dtype)


@jit(static_argnums=(2, 3))
def _chisquare(key: Any, df: Any, shape: Shape, dtype: np.dtype) -> Any:
    df = lax.convert_element_type(df, dtype)
    two = np.array(2, dtype)
    log_g = loggamma(key, lax.div(df, two), shape, dtype)
    return lax.mul(jnp.exp(log_g), two)


@with_out_sharding("f")
def f(key: Any, dfnum: Any, dfden: Any, shape: Any = None, dtype: Any = None) -> Any:
    """F(dfnum, dfden) floats: ratio of scaled chi-squares."""
    key, shape, dtype = sampler_args("f", key, shape, dtype, dfnum, dfden)
    return _f(key, dfnum, dfden, shape, dtype)


@jit(static_argnums=(3, 4))
def _f(key: Any, dfnum: Any, dfden: Any, shape: Shape, dtype: np.dtype) -> Any:
    dfden = lax.convert_element_type(dfden, dtype)
    dfnum = lax.convert_element_type(dfnum, dtype)
    key_dfd, key_dfn = unpack(split_typed(key))
    num = lax.div(chisquare(key_dfn, dfnum, shape, dtype), dfnum)
    den = lax.div(chisquare(key_dfd, dfden, shape, dtype), dfden)
    return lax.div(num, den)


@with_out_sharding("t")
def t(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Student's t(df) floats: normal * sqrt(df / 2 / Gamma(df / 2))."""
    key, shape, dtype = sampler_args("t", key, shape, dtype, df)
    return _t(key, df, shape, dtype)


@jit(static_argnums=(2, 3))
def _t(key: Any, df: Any, shape: Shape, dtype: np.dtype) -> Any:
    df = lax.convert_element_type(df, dtype)
    key_n, key_g = unpack(split_typed(key))
    n = normal(key_n, shape, dtype)
    half_df = lax.div(df, np.array(2, dtype))
    g = gamma(key_g, half_df, shape, dtype)
    return n * jnp.sqrt(half_df / g)


@with_out_sharding("generalized_normal")
def generalized_normal(key: Any, p: float, shape: Any = (), dtype: Any = None) -> Any:
    """Generalized normal floats of power p: sign * Gamma(1/p) ** (1/p)."""
    shape = canonicalize_shape(shape)
    key, _ = check_prng_key("generalized_normal", key)
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype)
    check_shape("generalized_normal", shape)
    return _generalized_normal(key, p, shape, dtype)


@jit(static_argnums=(2, 3))
def _generalized_normal(key: Any, p: Any, shape: Shape, dtype: np.dtype) -> Any:
    key_g, key_r = unpack(split(key))
    g = gamma(key_g, 1 / p, shape, dtype)
    r = rademacher(key_r, shape, dtype)
    return r * g ** (1 / p)


@with_out_sharding("ball")
def ball(key: Any, d: int, p: float = 2, shape: Any = (), dtype: Any = None) -> Any:
    """Points uniform in the d-dimensional unit p-norm ball."""
    shape = canonicalize_shape(shape)
    key, _ = check_prng_key("ball", key)
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype)
    check_shape("ball", shape)
    return _ball(key, p, int(d), shape, dtype)


@jit(static_argnums=(2, 3, 4))
def _ball(key: Any, p: Any, d: int, shape: Shape, dtype: np.dtype) -> Any:
    k1, k2 = unpack(split(key))
    g = generalized_normal(k1, p, (*shape, d), dtype)
    e = exponential(k2, shape, dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]
