"""Wrapped Cauchy distribution on [0, 2 pi] (scipy.stats.wrapcauchy), JAX's formulas."""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.numpy.util import lax_const, promote_args_inexact
from pyjax._src.scipy.stats._typing import Array, ArrayLike


def logpdf(x: ArrayLike, c: ArrayLike) -> Array:
    """Log density log(1 - c^2) - log(2 pi) - log(1 + c^2 - 2 c cos x); -inf outside
    [0, 2 pi], nan unless 0 < c < 1."""
    x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
    c_ok = lax.gt(c, lax_const(c, 0)) & lax.lt(c, lax_const(c, 1))
    x_ok = lax.ge(x, lax_const(x, 0)) & lax.le(x, lax_const(x, np.pi * 2))
    value = (jnp.log(1 - c * c) - jnp.log(2 * np.pi)
             - jnp.log(1 + c * c - 2 * c * jnp.cos(x)))
    return jnp.where(c_ok, jnp.where(x_ok, value, -np.inf), np.nan)


def pdf(x: ArrayLike, c: ArrayLike) -> Array:
    """Density."""
    return lax.exp(logpdf(x, c))
