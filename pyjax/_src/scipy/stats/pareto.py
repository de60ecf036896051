"""Pareto distribution (scipy.stats.pareto), JAX's formulas."""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.numpy.util import lax_const, promote_args_inexact
from pyjax._src.scipy.stats._typing import Array, ArrayLike


def logpdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log density log(b/scale) - (b + 1) log(z), -inf below loc + scale."""
    x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    one = lax_const(x, 1)
    z = lax.div(lax.sub(x, loc), scale)
    normalize_term = lax.log(lax.div(scale, b))
    log_probs = lax.neg(lax.add(normalize_term, lax.mul(lax.add(b, one), lax.log(z))))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), -np.inf, log_probs)


def pdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Density."""
    return lax.exp(logpdf(x, b, loc, scale))


def cdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Distribution function 1 - z^-b, 0 below loc + scale."""
    x, b, loc, scale = promote_args_inexact("pareto.cdf", x, b, loc, scale)
    one = lax_const(x, 1)
    zero = lax_const(x, 0)
    z = lax.div(lax.sub(x, loc), scale)
    value = lax.sub(one, lax.pow(z, lax.neg(b)))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), zero, value)


def logcdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log distribution function log1p(-z^-b), -inf below loc + scale."""
    x, b, loc, scale = promote_args_inexact("pareto.logcdf", x, b, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    value = lax.log1p(lax.neg(lax.pow(z, lax.neg(b))))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), -np.inf, value)


def logsf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log survival function -b log(z), 0 below loc + scale."""
    x, b, loc, scale = promote_args_inexact("pareto.logsf", x, b, loc, scale)
    zero = lax_const(x, 0)
    z = lax.div(lax.sub(x, loc), scale)
    value = lax.neg(lax.mul(b, lax.log(z)))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), zero, value)


def sf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Survival function."""
    return lax.exp(logsf(x, b, loc, scale))


def ppf(q: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Quantile function loc + scale (1 - q)^(-1/b) (nan outside [0, 1])."""
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    one = lax_const(q, 1)
    value = lax.add(loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b)))))
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, value)
