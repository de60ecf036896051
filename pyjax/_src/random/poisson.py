"""Poisson sampling: Knuth's product of uniforms for small rates, Hormann's transformed
rejection (PTRS) for rates >= 10, both drawing full-shape uniforms from one key per round.

JAX writes both as while loops; pyjax has no loop primitive, so `random_poisson` is a primitive
whose impl runs the two loops vectorised (the same keys, draws and acceptance tests).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.primitives.prng import bdim_at_front, key_primitive
from pyjax._src.transforms import ad
from pyjax._src.random import host
from pyjax._src.random.base import canonicalize_shape, check_prng_key
from pyjax._src.random.keys import PRNGImpl
from pyjax._src.random.threefry import threefry_prng_impl
from pyjax._src.transforms.jit import jit
from pyjax._src.parallel.placement import with_out_sharding

_F32 = np.float32


def _knuth(impl: PRNGImpl, key: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Count uniforms until their product drops below exp(-lam); returns count - 1."""
    k = np.zeros(lam.shape, np.int64)
    log_prod = np.zeros(lam.shape, _F32)
    with np.errstate(invalid="ignore"):
        while (log_prod > -lam).any():
            key, sub = host.split(impl, key, 2)
            k += log_prod > -lam
            log_prod += host.log(host.uniform01(impl, sub, lam.shape, np.dtype(_F32)))
    return k - 1


def _rejection(impl: PRNGImpl, key: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """PTRS: propose k from a transformed uniform, accept by a squeeze or the exact test."""
    import scipy.special as sps  # noqa: PLC0415 - SciPy loads on first use (import time)
    f = _F32
    with np.errstate(all="ignore"):
        log_lam = host.log(lam)
        b = host.fma(np.sqrt(lam), f(2.53), f(0.931))
        a = host.fma(b, f(0.02483), f(-0.059))
        inv_alpha = f(1.1239) + f(1.1328) / (b - f(3.4))
        v_r = f(0.9277) - f(3.6224) / (b - f(2))
        k_out = np.full(lam.shape, -1, f)
        accepted = np.zeros(lam.shape, bool)
        while not accepted.all():
            key, sub0, sub1 = host.split(impl, key, 3)
            u = host.uniform01(impl, sub0, lam.shape, np.dtype(f)) - f(0.5)
            v = host.uniform01(impl, sub1, lam.shape, np.dtype(f))
            u_shifted = f(0.5) - np.abs(u)
            k = np.floor(host.fma(f(2) * a / u_shifted + b, u, lam) + f(0.43))
            s = host.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
            t = host.fma(k, log_lam, -lam) - sps.gammaln(k + f(1)).astype(f)
            accept1 = (u_shifted >= f(0.07)) & (v <= v_r)
            reject = (k < 0) | ((u_shifted < f(0.013)) & (v > u_shifted))
            accept = accept1 | (~reject & (s <= t))
            k_out = np.where(accept, k, k_out)
            accepted |= accept
    return k_out


def _poisson_impl(key: np.ndarray, lam: np.ndarray, *, dtype: np.dtype, impl: PRNGImpl
                  ) -> np.ndarray:
    """Counts for one key, or for each of leading key axes (vmap: each key's loops run
    until its own draws are accepted, as JAX's batched while loops do)."""
    lead = key.shape[:key.ndim - len(impl.key_shape)]
    if lead:
        flat_keys = key.reshape(-1, *impl.key_shape)
        flat_lam = lam.reshape(-1, *lam.shape[len(lead):])
        rows = [_poisson_one(k, l, dtype, impl) for k, l in zip(flat_keys, flat_lam)]
        return np.stack(rows).reshape(lam.shape) if rows else np.zeros(lam.shape, dtype)
    return _poisson_one(key, lam, dtype, impl)


def _poisson_one(key: np.ndarray, lam: np.ndarray, dtype: np.dtype, impl: PRNGImpl
                 ) -> np.ndarray:
    use_knuth = np.isnan(lam) | (lam < 10)
    knuth = _knuth(impl, key, np.where(use_knuth, lam, _F32(0)))
    rejection = _rejection(impl, key, np.where(use_knuth, _F32(100000.0), lam))
    result = np.where(use_knuth, knuth.astype(dtype), rejection.astype(dtype))
    return np.where(lam == 0, np.zeros((), dtype), result)


def _poisson_abstract(key: ShapedArray, lam: ShapedArray, *, dtype: np.dtype, impl: PRNGImpl
                      ) -> ShapedArray:
    return ShapedArray(lam.shape, dtype)


random_poisson_p = key_primitive("random_poisson", _poisson_impl, _poisson_abstract,
                                 shown=("dtype",))
ad.defjvp_zero(random_poisson_p)  # integer counts: no tangent


def _poisson_batch(vals: Any, dims: Any, *, dtype: np.dtype, impl: PRNGImpl) -> tuple:
    """Keys and rates batched at the front (the impl runs each key's loops on its row)."""
    size = next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not None)
    key, lam = (bdim_at_front(v, d, size) for v, d in zip(vals, dims))
    return random_poisson_p.bind(key, lam, dtype=dtype, impl=impl), 0


random_poisson_p.batch = _poisson_batch


@with_out_sharding("poisson")
def poisson(key: Any, lam: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Poisson(lam) integers."""
    key, _ = check_prng_key("poisson", key)
    dtype = dtypes.check_user_dtype(int if dtype is None else dtype)
    impl = key.dtype._impl
    if impl is not threefry_prng_impl:
        raise NotImplementedError(f"`poisson` is only implemented for the threefry2x32 RNG, "
                                  f"not {impl}")
    shape = np.shape(lam) if shape is None else canonicalize_shape(shape)
    lam = lax.convert_element_type(jnp.broadcast_to(lam, shape), np.float32)
    return _poisson(key, lam, shape, dtype)


@jit(static_argnums=(2, 3))
def _poisson(key: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return random_poisson_p.bind(key, lam, dtype=dtype, impl=key.dtype._impl)
