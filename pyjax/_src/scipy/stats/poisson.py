"""Poisson distribution (scipy.stats.poisson), JAX's formulas; the entropy sums the mass
function for small mu and uses the asymptotic series for large mu, as JAX does."""
from __future__ import annotations

from typing import Callable

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.nn.functions import ensure_arraylike
from pyjax._src.numpy.util import (lax_const, promote_args_inexact, promote_dtypes_inexact,
                                   staged_as_jit)
from pyjax._src.scipy.special import entr, gammaincc, gammaln, xlogy
from pyjax._src.scipy.stats._typing import Array, ArrayLike


def logpmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Log mass x log mu - lgamma(x + 1) - mu of x = k - loc; -inf for x < 0 or k not an
    integer."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    zero = lax_const(k, 0)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return jnp.where(jnp.logical_or(lax.lt(x, zero), lax.ne(jnp.round(k), k)), -np.inf,
                     log_probs)


def pmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Probability mass."""
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Distribution function Q(floor(x + 1), mu), 0 below loc."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    zero = lax_const(k, 0)
    x = lax.sub(k, loc)
    p = gammaincc(jnp.floor(1 + x), mu)
    return jnp.where(lax.lt(x, zero), zero, p)


@staged_as_jit
def entropy(mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Entropy -sum(p log p): summed over k < 35 (mu < 10) or k < 250 (mu < 100), else
    the asymptotic formula log(2 pi e mu)/2 - 1/(12 mu); 0 for mu = 0."""
    mu, loc = ensure_arraylike("poisson.entropy", mu, loc)
    promoted_mu, promoted_loc = promote_dtypes_inexact(mu, loc)
    result_shape = jnp.broadcast_shapes(promoted_mu.shape, promoted_loc.shape)
    mu_flat = jnp.ravel(promoted_mu)
    zero_result = jnp.zeros_like(mu_flat)
    result = jnp.where(mu_flat == 0, zero_result,
                       jnp.where(mu_flat < 10, _entropy_small_mu(mu_flat),
                                 jnp.where(mu_flat < 100, _entropy_medium_mu(mu_flat),
                                           _entropy_large_mu(mu_flat))))
    result_mu_shape = jnp.reshape(result, promoted_mu.shape)
    return jnp.broadcast_to(result_mu_shape, result_shape)


def _entropy_by_summing(mu: Array, max_k: int, upper: Callable[[Array], Array]) -> Array:
    """-sum(p log p) over 0 <= k < min(max_k, upper(mu))."""
    k = jnp.arange(max_k, dtype=mu.dtype)[:, None]
    probs = pmf(k, mu, 0)
    mask = k < upper(mu).astype(k.dtype)[None, :]
    probs_masked = jnp.where(mask, probs, 0.0)
    return jnp.sum(entr(probs_masked), axis=0)


def _entropy_small_mu(mu: Array) -> Array:
    return _entropy_by_summing(mu, 35, lambda mu: jnp.ceil(mu + 20))


def _entropy_medium_mu(mu: Array) -> Array:
    return _entropy_by_summing(mu, 250, lambda mu: jnp.ceil(mu + 10 * jnp.sqrt(mu) + 20))


def _entropy_large_mu(mu: Array) -> Array:
    return 0.5 * jnp.log(2 * np.pi * np.e * mu) - 1.0 / (12 * mu)
