"""Gamma sampling (the `random_gamma` primitive: gamma_sampler.py) and the samplers built on it:
gamma, loggamma, beta, dirichlet, chisquare, f, t, generalized_normal, ball.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.random.gamma_sampler import random_gamma_p
from pyjax._src.random.base import (
    canonicalize_shape, check_prng_key, check_safe_to_cast, check_shape, float_dtype,
    sampler_args, shape_or_broadcast, split, split_typed, unpack)
from pyjax._src.random.continuous import exponential, normal
from pyjax._src.random.discrete import rademacher
from pyjax._src.transforms.jit import jit
from pyjax._src.parallel.placement import with_out_sharding

Shape = tuple[int, ...]


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
    a = lax.convert_element_type(a, dtype)
    b = lax.convert_element_type(b, dtype)
    key_a, key_b = unpack(split_typed(key))
    a = jnp.broadcast_to(a, shape)
    b = jnp.broadcast_to(b, shape)
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
    from pyjax._src.nn.functions import softmax  # noqa: PLC0415 - jax.nn loads on first use
    log_gammas = loggamma(key, alpha, shape + np.shape(alpha)[-1:], dtype)
    return softmax(log_gammas, -1)


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
    chi2_dfn = chisquare(key_dfn, dfnum, shape, dtype)
    chi2_dfd = chisquare(key_dfd, dfden, shape, dtype)
    return lax.div(lax.div(chi2_dfn, dfnum), lax.div(chi2_dfd, dfden))


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
    keys = split(key)  # indexed where used, as JAX's keys[0], keys[1]
    g = gamma(keys[0], 1 / p, shape, dtype)
    r = rademacher(keys[1], shape, dtype)
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
