"""Poisson sampling as JAX stages it: Knuth's product of uniforms for rates below 10, Hormann's
transformed rejection (PTRS) above, each a while loop drawing full-shape uniforms from one key
per round, both run on every element and selected between.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.random.base import canonicalize_shape, check_prng_key, split_typed, unpack
from pyjax._src.random.continuous import uniform
from pyjax._src.random.threefry import threefry_prng_impl
from pyjax._src.transforms.jit import jit
from pyjax._src.parallel.placement import with_out_sharding

Shape = tuple[int, ...]


@jit(static_argnums=(2, 3, 4))
def _poisson_knuth(key: Any, lam: Any, shape: Shape, dtype: np.dtype, max_iters: Any) -> Any:
    """Count uniforms until their product drops below exp(-lam); the count less one."""
    def body_fn(carry: tuple) -> tuple:
        i, k, rng, log_prod = carry
        rng, subkey = unpack(split_typed(rng))
        k = lax.select(log_prod > -lam, k + 1, k)
        u = uniform(subkey, shape, np.float32)
        return i + 1, k, rng, log_prod + jnp.log(u)

    def cond_fn(carry: tuple) -> Any:
        i, log_prod = carry[0], carry[3]
        return (log_prod > -lam).any() & (i < max_iters)

    k_init = lax.full_like(lam, 0, dtype, shape)
    log_rate_init = lax.full_like(lam, 0, np.float32, shape)
    k = lax.while_loop(cond_fn, body_fn, (0, k_init, key, log_rate_init))[1]
    return (k - 1).astype(dtype)


@jit(static_argnums=(2, 3, 4))
def _poisson_rejection(key: Any, lam: Any, shape: Shape, dtype: np.dtype, max_iters: Any
                       ) -> Any:
    """PTRS: propose k from a transformed uniform, accept by a squeeze or the exact test."""
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body_fn(carry: tuple) -> tuple:
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = unpack(split_typed(key, 3))
        u = uniform(subkey_0, shape, lam.dtype) - 0.5
        v = uniform(subkey_1, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept2 = s <= t
        accept = accept1 | (~reject & accept2)
        k_out = lax.select(accept, k, k_out)
        accepted |= accept
        return i + 1, k_out, accepted, key

    def cond_fn(carry: tuple) -> Any:
        i, _, accepted, _ = carry
        return (~accepted).any() & (i < max_iters)

    k_init = lax.full_like(lam, -1, lam.dtype, shape)
    accepted = lax.full_like(lam, False, np.dtype(bool), shape)
    k = lax.while_loop(cond_fn, body_fn, (0, k_init, accepted, key))[1]
    return k.astype(dtype)


@jit(static_argnums=(2, 3))
def _poisson(key: Any, lam: Any, shape: Shape, dtype: np.dtype) -> Any:
    """Both samplers on every element (the other one's rate replaced by a harmless value)."""
    use_knuth = lax.ne(lam, lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, lax.full_like(lam, 0.0))
    # PTRS accepts at most ~89% of proposals as lam grows: any large rate will do
    lam_rejection = lax.select(use_knuth, lax.full_like(lam, 1e5), lam)
    max_iters = dtype.type(dtypes.iinfo(dtype).max)
    result = lax.select(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
    return lax.select(lam == 0, jnp.zeros_like(result), result)


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
