"""Continuous samplers: uniform, normal and the distributions JAX derives from them.

Each public function checks its arguments and calls a jitted `_name(key, ..., shape, dtype)`
with static shape and dtype, exactly where JAX does, so results (XLA's rewrites under jit)
and jaxprs match JAX's.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.core.trace import Tracer
from pyjax._src.core.trace_state import trace_state
from pyjax._src.numpy.util import promote_dtypes_inexact
from pyjax._src.random import fast
from pyjax._src.random.base import (
    UINT_DTYPES, broadcast_shapes, broadcast_to_rank, canonicalize_shape, check_prng_key,
    check_shape, float_dtype, random_bits, sampler_args, shape_or_broadcast, split_typed, unpack)
from pyjax._src.transforms.jit import jit
from pyjax._src.parallel.placement import with_out_sharding

Shape = tuple[int, ...]


def _const(dtype: np.dtype, value: Any) -> np.ndarray:
    return np.array(value, dtype)


# ---------------------------------------------------------------------------------------------
# uniform
# ---------------------------------------------------------------------------------------------

@with_out_sharding("uniform")
def uniform(key: Any, shape: Any = (), dtype: Any = None, minval: Any = fast.DEFAULT_MIN,
            maxval: Any = fast.DEFAULT_MAX) -> Any:
    """Uniform floats in [minval, maxval)."""
    if trace_state.trace is None:  # eager, with a concrete key: straight NumPy (fast.py)
        out = fast.uniform(key, shape, dtype, minval, maxval)
        if out is not None:
            return out
    key, _ = check_prng_key("uniform", key)
    dtype = float_dtype("uniform", dtype)
    return _uniform(key, minval, maxval, shape=canonicalize_shape(shape), dtype=dtype)


@jit(static_argnums=(3, 4))
def _uniform(key: Any, minval: Any, maxval: Any, shape: Shape, dtype: np.dtype) -> Any:
    """Random mantissa bits under the exponent of 1.0 give [1, 2); shift and scale."""
    check_shape("uniform", shape)
    minval = lax.convert_element_type(minval, dtype)
    maxval = lax.convert_element_type(maxval, dtype)
    minval = broadcast_to_rank(minval, len(shape))
    maxval = broadcast_to_rank(maxval, len(shape))
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
    rng_bits = 8 if nmant < 8 else nbits
    uint_dtype = UINT_DTYPES[nbits]
    bits = random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        bits = lax.convert_element_type(bits, uint_dtype)
    float_bits = lax.shift_right_logical(bits, _const(uint_dtype, rng_bits - nmant))
    float_bits = lax.bitwise_or(float_bits, np.array(1.0, dtype).view(uint_dtype))
    floats = lax.bitcast_convert_type(float_bits, dtype) - _const(dtype, 1.)
    return lax.max(minval, lax.reshape(floats * (maxval - minval) + minval, shape))


# ---------------------------------------------------------------------------------------------
# normal and its relatives
# ---------------------------------------------------------------------------------------------

@with_out_sharding("normal")
def normal(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard normal floats (complex: independent real and imaginary parts, variance 1)."""
    if trace_state.trace is None:  # eager, with a concrete key: straight NumPy (fast.py)
        out = fast.normal(key, shape, dtype)
        if out is not None:
            return out
    key, _ = check_prng_key("normal", key)
    shape = canonicalize_shape(shape)
    dtype = float_dtype("normal", dtype, "float or complex")
    return _normal(key, shape, dtype)


@jit(static_argnums=(1, 2))
def _normal(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    if dtypes.is_complex(dtype):
        key_re, key_im = unpack(split_typed(key))
        real_dtype = np.array(0, dtype).real.dtype
        re = _normal_real(key_re, shape, real_dtype).astype(dtype)
        im = _normal_real(key_im, shape, real_dtype).astype(dtype)
        return (re + 1j * im) / np.array(np.sqrt(2), dtype)
    return _normal_real(key, shape, dtype)


@jit(static_argnums=(1, 2))
def _normal_real(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    """sqrt(2) erf_inv(u) for u uniform in (-1, 1)."""
    check_shape("normal", shape)
    lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype), dtype=dtype)
    u = uniform(key, shape, dtype, lo, np.array(1., dtype))
    return lax.mul(np.array(np.sqrt(2), dtype), lax.erf_inv(u))


@with_out_sharding("truncated_normal")
def truncated_normal(key: Any, lower: Any, upper: Any, shape: Any = None,
                     dtype: Any = None) -> Any:
    """Standard normal floats conditioned on [lower, upper] (inverse-CDF of a uniform)."""
    shape = None if shape is None else canonicalize_shape(shape)
    key, _ = check_prng_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    return _truncated_normal(key, lower, upper, shape, dtype)


@jit(static_argnums=(3, 4))
def _truncated_normal(key: Any, lower: Any, upper: Any, shape: Shape | None,
                      dtype: np.dtype) -> Any:
    shape = shape_or_broadcast("truncated_normal", shape, lower, upper)
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    u = uniform(key, shape, dtype, minval=a, maxval=b)
    out = sqrt2 * lax.erf_inv(u)
    # clamp strictly inside (lower, upper): rounding must not put samples on the bounds
    return jnp.clip(out, lax.nextafter(lax.stop_gradient(lower), np.array(np.inf, dtype)),
                   lax.nextafter(lax.stop_gradient(upper), np.array(-np.inf, dtype)))


@with_out_sharding("lognormal")
def lognormal(key: Any, sigma: Any = np.float32(1), shape: Any = None, dtype: Any = None) -> Any:
    """exp(sigma * normal)."""
    key, shape, dtype = sampler_args("lognormal", key, shape, dtype, sigma,
                                     kind="float or complex")
    return _lognormal(key, sigma, shape, dtype)


@jit(static_argnums=(2, 3), inline=True)
def _lognormal(key: Any, sigma: Any, shape: Shape, dtype: np.dtype) -> Any:
    sigma = lax.convert_element_type(sigma, dtype)
    scaled_norm = normal(key, shape, dtype) * sigma
    return lax.exp(scaled_norm)


@with_out_sharding("multivariate_normal")
def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Any = None, dtype: Any = None,
                        method: str = "cholesky") -> Any:
    """mean + factor @ normal, where factor factor^T = cov (Cholesky, SVD or eigh)."""
    key, _ = check_prng_key("multivariate_normal", key)
    mean, cov = promote_dtypes_inexact(mean, cov)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else dtypes.check_user_dtype(dtype)
    if not dtypes.is_float(dtype):
        raise ValueError("dtype argument to `multivariate_normal` must be a float dtype, got "
                         f"{dtype}")
    shape = None if shape is None else canonicalize_shape(shape)
    if not hasattr(jnp, "linalg"):  # until jnp.linalg exists, factor a concrete cov with NumPy
        return _multivariate_normal_factored(key, mean, _host_factor(cov, method), shape, dtype)
    return _multivariate_normal(key, mean, cov, shape, dtype, method)


def _host_factor(cov: Any, method: str) -> Any:
    """The factor of a concrete covariance, computed by NumPy's LAPACK."""
    if isinstance(cov, Tracer):
        raise NotImplementedError("multivariate_normal of a traced covariance needs jnp.linalg")
    c = np.asarray(cov)
    if method == "svd":
        u, s, _ = np.linalg.svd(c)
        factor = u * np.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = np.linalg.eigh(c)
        factor = v * np.sqrt(w[..., None, :])
    else:
        factor = np.linalg.cholesky(c)
    return jnp.asarray(factor.astype(c.dtype))


def _covariance_factor(cov: Any, method: str) -> Any:
    """A matrix F with F F^T = cov, by jnp.linalg."""
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        return u * jnp.sqrt(s[..., None, :])
    if method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        return v * jnp.sqrt(w[..., None, :])
    return jnp.linalg.cholesky(cov)


def _sample_with_factor(key: Any, mean: Any, factor: Any, shape: Shape | None,
                        dtype: np.dtype) -> Any:
    if not np.ndim(mean) >= 1:
        raise ValueError("multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{np.ndim(mean)}")
    if not np.ndim(factor) >= 2:
        raise ValueError("multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{np.ndim(factor)}")
    n = mean.shape[-1]
    if np.shape(factor)[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but "
                         f"got cov.shape == {np.shape(factor)}.")
    if shape is None:
        shape = broadcast_shapes(mean.shape[:-1], factor.shape[:-2])
    else:
        check_shape("normal", shape, mean.shape[:-1], factor.shape[:-2])
    samples = normal(key, shape + mean.shape[-1:], dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, samples)


@jit(static_argnums=(3, 4, 5))
def _multivariate_normal(key: Any, mean: Any, cov: Any, shape: Shape | None, dtype: np.dtype,
                         method: str) -> Any:
    if not np.ndim(cov) >= 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{np.ndim(cov)}")
    return _sample_with_factor(key, mean, _covariance_factor(cov, method), shape, dtype)


_multivariate_normal_factored = jit(_sample_with_factor, static_argnums=(3, 4))


# ---------------------------------------------------------------------------------------------
# Inverse-CDF samplers of one uniform
# ---------------------------------------------------------------------------------------------

def _simple(name: str, body: Any) -> Any:
    """A sampler `name(key, shape=(), dtype=None)` whose jitted core is `body`."""
    core = jit(body, static_argnums=(1, 2))

    def sampler(key: Any, shape: Any = (), dtype: Any = None) -> Any:
        key, _ = check_prng_key(name, key)
        dtype = float_dtype(name, dtype)
        return core(key, canonicalize_shape(shape), dtype)

    sampler.__name__ = name
    sampler.__doc__ = body.__doc__
    return sampler


def _exponential(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    """Exponential floats (rate 1): -log1p(-u)."""
    check_shape("exponential", shape)
    u = uniform(key, shape, dtype)
    return lax.neg(lax.log1p(lax.neg(u)))


def _cauchy(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    """Standard Cauchy floats: tan(pi (u - 1/2)), u in [eps, 1)."""
    check_shape("cauchy", shape)
    u = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).eps, maxval=1.0)
    return lax.tan(lax.mul(_const(dtype, np.pi), lax.sub(u, _const(dtype, 0.5))))


def _laplace(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    """Standard Laplace floats: sign(u) log1p(-|u|), u in (-1, 1)."""
    check_shape("laplace", shape)
    u = uniform(key, shape, dtype, minval=-1.0 + dtypes.finfo(dtype).epsneg, maxval=1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def _logistic(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    """Standard logistic floats: log(u) - log1p(-u), u in [tiny, 1)."""
    check_shape("logistic", shape)
    x = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).tiny, maxval=1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


exponential = with_out_sharding("exponential")(_simple("exponential", _exponential))
cauchy = with_out_sharding("cauchy")(_simple("cauchy", _cauchy))
laplace = with_out_sharding("laplace")(_simple("laplace", _laplace))
logistic = with_out_sharding("logistic")(_simple("logistic", _logistic))


@with_out_sharding("gumbel")
def gumbel(key: Any, shape: Any = (), dtype: Any = None, mode: str | None = None) -> Any:
    """Standard Gumbel floats: -log(-log(u)); mode "high" resolves small u with a second draw."""
    key, _ = check_prng_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype)
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return _gumbel(key, canonicalize_shape(shape), dtype, mode)


@jit(static_argnums=(1, 2, 3))
def _gumbel(key: Any, shape: Shape, dtype: np.dtype, mode: str) -> Any:
    check_shape("gumbel", shape)
    info = dtypes.finfo(dtype)
    if mode == "low":
        u = _uniform(key, minval=info.tiny, maxval=1.0, shape=shape, dtype=dtype)
        return -jnp.log(-jnp.log(u))
    if mode == "highest" and dtype == dtypes.float32:
        return _gumbel_highest(key, shape)
    high, low = unpack(_uniform(key, minval=0.0, maxval=1.0, shape=(2, *shape), dtype=dtype))
    x = jnp.where(high >= 0.5, high, high + 2 ** (-info.nmant) * low + info.tiny)
    return -jnp.log(-jnp.log1p(-x))


def _bits_to_float(bits: Any) -> Any:
    """Two 32-bit words (stacked on axis 0) as one float32 in [0, 1) with all the precision
    of the 64 bits near 0: exponent from the leading zeros, mantissa from the next bits."""
    finfo = dtypes.finfo(dtypes.float32)
    hiclz, loclz = unpack(lax.clz(bits))
    hi, lo = unpack(bits)
    mantissa = lax.bitwise_or(lax.shift_left(hi, hiclz), jnp.where(
        hiclz == 32, lax.shift_left(lo, loclz), lax.shift_right_logical(lo, 32 - hiclz)))
    mantissa = lax.shift_right_logical(mantissa, np.array(32 - finfo.nmant - 1, np.uint32))
    mantissa = lax.bitwise_and(mantissa, np.array((1 << finfo.nmant) - 1, np.uint32))
    exp = lax.shift_left(-finfo.minexp - jnp.where(hiclz == 32, 32 + loclz, hiclz),
                         np.array(finfo.nmant, np.uint32))
    exp = lax.bitwise_and(exp, np.array((1 << 30) - (1 << finfo.nmant - 1), np.uint32))
    return lax.bitcast_convert_type(lax.bitwise_or(exp, mantissa), dtypes.float32)


def _gumbel_highest(key: Any, shape: Shape) -> Any:
    """float32 Gumbel from 64 random bits per sample (resolves u down to 2**-64)."""
    bits = random_bits(key, 32, (2, *shape))
    neg = lax.bitwise_not(bits)
    lo_bits = unpack(neg)[1]
    carry = jnp.array([lo_bits == np.array(0xFFFFFFFF, np.uint32), jnp.ones_like(lo_bits)],
                      dtype=np.uint32)
    neg = neg + carry
    flip = unpack(bits)[0] < np.array(1 << 31, np.uint32)
    x = _bits_to_float(jnp.where(flip, bits, neg))
    return jnp.where(flip, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))


@with_out_sharding("pareto")
def pareto(key: Any, b: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Pareto floats of shape `b`: exp(exponential / b)."""
    key, shape, dtype = sampler_args("pareto", key, shape, dtype, b)
    return _pareto(key, b, shape, dtype)


@jit(static_argnums=(2, 3))
def _pareto(key: Any, b: Any, shape: Shape, dtype: np.dtype) -> Any:
    b = lax.convert_element_type(b, dtype)
    return lax.exp(exponential(key, shape, dtype) / b)


@with_out_sharding("rayleigh")
def rayleigh(key: Any, scale: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Rayleigh floats: scale sqrt(-2 log u)."""
    key, shape, dtype = sampler_args("rayleigh", key, shape, dtype, scale)
    return _rayleigh(key, scale, shape, dtype)


@jit(static_argnums=(2, 3))
def _rayleigh(key: Any, scale: Any, shape: Shape, dtype: np.dtype) -> Any:
    u = uniform(key, shape, dtype)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), _const(dtype, -2))))


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Any = (),
                dtype: Any = None) -> Any:
    """Weibull floats: scale (-log1p(-u)) ** (1 / concentration)."""
    key, _ = check_prng_key("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    return _weibull_min(key, scale, concentration, canonicalize_shape(shape), dtype)


@jit(static_argnums=(3, 4))
def _weibull_min(key: Any, scale: Any, concentration: Any, shape: Shape, dtype: np.dtype) -> Any:
    u = uniform(key, shape, dtype, 0, 1)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


@with_out_sharding("maxwell")
def maxwell(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Maxwell floats: the norm of three standard normals."""
    key, _ = check_prng_key("maxwell", key)
    dtype = float_dtype("maxwell", dtype)
    return _maxwell(key, canonicalize_shape(shape), dtype)


@jit(static_argnums=(1, 2))
def _maxwell(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    samples = normal(key, (*shape, 3), dtype)
    return jnp.linalg.norm(samples, axis=-1)


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Any = (),
                         dtype: Any = None) -> Any:
    """loc + scale * (random sign) * maxwell."""
    key, _ = check_prng_key("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype)
    return _double_sided_maxwell(key, loc, scale, canonicalize_shape(shape), dtype)


@jit(static_argnums=(3, 4))
def _double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Shape, dtype: np.dtype) -> Any:
    from pyjax._src.random.discrete import rademacher  # discrete builds on this module
    params_shape = broadcast_shapes(np.shape(loc), np.shape(scale))
    shape = (shape or params_shape) + params_shape
    maxwell_key, sign_key = unpack(split_typed(key))
    magnitude = maxwell(maxwell_key, shape=shape, dtype=dtype)
    sign = rademacher(sign_key, shape=shape, dtype=dtype)
    return sign * magnitude * scale + loc


@with_out_sharding("wald")
def wald(key: Any, mean: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Inverse Gaussian floats (Michael, Schucany and Haas: a normal, then a uniform to pick
    one of the two roots)."""
    key, shape, dtype = sampler_args("wald", key, shape, dtype, mean)
    return _wald(key, mean, shape, dtype)


@jit(static_argnums=(2, 3))
def _wald(key: Any, mean: Any, shape: Shape, dtype: np.dtype) -> Any:
    k1, k2 = unpack(split_typed(key, 2))
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    v = normal(k1, shape, dtype)
    z = uniform(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


@with_out_sharding("triangular")
def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Any = None,
               dtype: Any = None) -> Any:
    """Triangular floats on [left, right] peaking at mode (inverse CDF)."""
    key, shape, dtype = sampler_args("triangular", key, shape, dtype, left, mode, right)
    return _triangular(key, left, mode, right, shape, dtype)


@jit(static_argnums=(4, 5), inline=True)
def _triangular(key: Any, left: Any, mode: Any, right: Any, shape: Shape,
                dtype: np.dtype) -> Any:
    left, right, mode = (jnp.broadcast_to(lax.convert_element_type(v, dtype), shape)
                         for v in (left, right, mode))
    fc = (mode - left) / (right - left)
    u = uniform(key, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)
