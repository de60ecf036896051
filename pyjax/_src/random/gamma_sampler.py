"""The `random_gamma` primitive: one Gamma(a, 1) sample per element of `a`, each from its own
key split off the given key (Marsaglia and Tsang's rejection method).

As in JAX the primitive shows as one equation; its impl runs what JAX lowers it to, a jit of
the per-element sampler (nested while loops over lax operations) vmapped over the elements,
so pyjax's compiler makes XLA's rewrites and the samples are JAX's bit for bit in every float
dtype.  Its derivative in `a` is a lax.map of lax.random_gamma_grad (gamma_grad.py).
"""
from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.primitives.prng import bdim_at_front, key_primitive
from pyjax._src.random.base import split_typed, unpack
from pyjax._src.random.continuous import exponential, normal, uniform
from pyjax._src.random.gamma_grad import random_gamma_grad
from pyjax._src.random.keys import KeyTy, PRNGImpl
from pyjax._src.transforms import ad
from pyjax._src.transforms.batching import vmap
from pyjax._src.transforms.jit import jit


def _gamma_one(key: Any, alpha: Any, log_space: bool) -> Any:
    """One sample for a scalar key and alpha.  alpha < 1 is boosted to alpha + 1 and the
    sample scaled by u ** (1 / alpha) (in log space: plus log(u) / alpha, which keeps tiny
    samples of tiny alphas representable)."""
    zero, one, minus_one, two = (np.array(v, lax.dtype(alpha)) for v in (0, 1, -1, 2))
    one_over_two, one_over_three, squeeze_const = (np.array(v, lax.dtype(alpha))
                                                   for v in (0.5, 1. / 3., 0.0331))
    dtype = lax.dtype(alpha)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, one_over_three)
    c = lax.div(one_over_three, lax.sqrt(d))

    def cond_fn(kXVU: tuple) -> Any:  # still rejected: the squeeze test, then the exact one
        _, X, V, U = kXVU
        return lax.bitwise_and(
            lax.ge(U, lax.sub(one, lax.mul(squeeze_const, lax.mul(X, X)))),
            lax.ge(lax.log(U), lax.add(lax.mul(X, one_over_two),
                                       lax.mul(d, lax.add(lax.sub(one, V), lax.log(V))))))

    def body_fn(kXVU: tuple) -> tuple:
        def next_kxv(kxv: tuple) -> tuple:  # a normal x with v = 1 + c x > 0
            key, subkey = unpack(split_typed(kxv[0]))
            x = normal(subkey, (), dtype=dtype)
            return key, x, lax.add(one, lax.mul(x, c))

        key, x_key, U_key = unpack(split_typed(kXVU[0], 3))
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], zero), next_kxv,
                                 (x_key, zero, minus_one))
        X = lax.mul(x, x)
        V = lax.mul(lax.mul(v, v), v)
        U = uniform(U_key, (), dtype=dtype)
        return key, X, V, U

    key, subkey = unpack(split_typed(key))
    # the initial state (U = 2) is rejected, so the body runs at least once
    _, _, V, _ = lax.while_loop(cond_fn, body_fn, (key, zero, one, two))
    if log_space:
        log_samples = lax.neg(exponential(subkey, (), dtype=dtype))
        log_boost = lax.select(boost_mask | (log_samples == 0), zero,
                               lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(V)), log_boost)
    samples = 1 - uniform(subkey, (), dtype=dtype)
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, V), boost)


@functools.partial(jit, static_argnames=("log_space",))
def _samples(keys: Any, alphas: Any, log_space: bool) -> Any:
    """_gamma_one over a vector of keys and alphas."""
    return vmap(functools.partial(_gamma_one, log_space=log_space))(keys, alphas)


def _gamma_impl(keys: np.ndarray, a: np.ndarray, *, log_space: bool, impl: PRNGImpl
                ) -> np.ndarray:
    """Each key (of leading key axes, under vmap) splits into one key per element of a's
    remaining axes; the elements are sampled by the jitted vmap of _gamma_one."""
    key_ndim = keys.ndim - len(impl.key_shape)
    count = math.prod(a.shape[key_ndim:])
    flat_keys = impl.split(keys.reshape(-1, *impl.key_shape), (count,))
    flat_keys = KeyTy(impl).wrap_physical(flat_keys.reshape(-1, *impl.key_shape))
    samples = _samples(flat_keys, a.reshape(-1), log_space)
    return np.asarray(samples).reshape(a.shape)


def _gamma_abstract(keys: ShapedArray, a: ShapedArray, *, log_space: bool, impl: PRNGImpl
                    ) -> ShapedArray:
    return a


random_gamma_p = key_primitive("random_gamma", _gamma_impl, _gamma_abstract,
                               shown=("log_space",))


def _gamma_grad(sample: Any, a: Any, *, log_space: bool) -> Any:
    """d sample / d a, element by element (a lax.map over the flattened samples, as JAX runs
    it on the CPU)."""
    samples = jnp.reshape(sample, -1)
    alphas = jnp.reshape(a, -1)
    if log_space:  # sample = log x: d(log x)/da = (dx/da) / x, with x = 0 made the tiniest
        samples = lax.exp(samples)
        zero = np.array(0, lax.dtype(sample))
        tiny = lax.full_like(samples, dtypes.finfo(samples.dtype).tiny)
        samples = lax.select(lax.eq(samples, zero), tiny, samples)

        def gamma_grad(alpha: Any, x: Any) -> Any:
            return random_gamma_grad(alpha, x) / x
    else:
        gamma_grad = random_gamma_grad
    grads = lax.map(lambda args: gamma_grad(*args), (alphas, samples))
    return grads.reshape(np.shape(a))


def _gamma_jvp_a(g: Any, ans: Any, key: Any, a: Any, *, log_space: bool, impl: Any) -> Any:
    return g * _gamma_grad(ans, a, log_space=log_space)


ad.defjvp2(random_gamma_p, None, _gamma_jvp_a)


def _gamma_batch(vals: Any, dims: Any, *, log_space: bool, impl: PRNGImpl) -> tuple:
    """Keys and alphas batched at the front: the impl gives each leading key the alphas of its
    row (JAX's rule)."""
    size = next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not None)
    keys, a = (bdim_at_front(v, d, size) for v, d in zip(vals, dims))
    return random_gamma_p.bind(keys, a, log_space=log_space, impl=impl), 0


random_gamma_p.batch = _gamma_batch
