"""Dirichlet distribution (scipy.stats.dirichlet), JAX's formulas: x's first axis runs over
the categories (the last one may be left out, it is 1 minus the rest)."""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.numpy.util import lax_const, promote_dtypes_inexact
from pyjax._src.scipy.special import gammaln, xlogy
from pyjax._src.scipy.stats._typing import Array, ArrayLike


def _is_simplex(x: Array) -> Array:
    x_sum = jnp.sum(x, axis=0)
    return jnp.all(x > 0, axis=0) & (abs(x_sum - 1) < 1e-6)


def logpdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """Log density sum((alpha - 1) log x) - log B(alpha); -inf off the simplex."""
    return _logpdf(*promote_dtypes_inexact(x, alpha))


def _logpdf(x: Array, alpha: Array) -> Array:
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    one = lax_const(x, 1)
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, lax.sub(one, x.sum(0, keepdims=True))], axis=0)
    normalize_term = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
    if x.ndim > 1:
        alpha = lax.broadcast_in_dim(alpha, alpha.shape + (1,) * (x.ndim - 1), (0,))
    log_probs = lax.sub(jnp.sum(xlogy(lax.sub(alpha, one), x), axis=0), normalize_term)
    return jnp.where(_is_simplex(x), log_probs, -np.inf)


def pdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """Density."""
    return lax.exp(logpdf(x, alpha))
