"""Bernoulli distribution (scipy.stats.bernoulli), JAX's formulas."""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.numpy.util import lax_const, promote_args_inexact
from pyjax._src.scipy.special import xlog1py, xlogy
from pyjax._src.scipy.stats._typing import Array, ArrayLike


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Log mass x log p + (1 - x) log(1 - p) of x = k - loc, -inf outside [0, 1]."""
    k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
    zero = lax_const(k, 0)
    one = lax_const(k, 1)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, p) + xlog1py(lax.sub(one, x), -p)
    return jnp.where(jnp.logical_or(lax.lt(x, zero), lax.gt(x, one)), -np.inf, log_probs)


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Probability mass."""
    return jnp.exp(logpmf(k, p, loc))


def cdf(k: ArrayLike, p: ArrayLike) -> Array:
    """Distribution function: 0 below 0, 1 - p on [0, 1), 1 from 1; nan for bad p."""
    k, p = promote_args_inexact("bernoulli.cdf", k, p)
    zero, one = lax_const(k, 0), lax_const(k, 1)
    conds = [jnp.isnan(k) | jnp.isnan(p) | (p < zero) | (p > one),
             lax.lt(k, zero),
             jnp.logical_and(lax.ge(k, zero), lax.lt(k, one)),
             lax.ge(k, one)]
    vals = [jnp.nan, zero, one - p, one]
    return jnp.select(conds, vals)


def ppf(q: ArrayLike, p: ArrayLike) -> Array:
    """Quantile function: 0 for q <= 1 - p, else 1; nan for q or p outside [0, 1]."""
    q, p = promote_args_inexact("bernoulli.ppf", q, p)
    zero, one = lax_const(q, 0), lax_const(q, 1)
    bad = jnp.isnan(q) | jnp.isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one)
    return jnp.where(bad, jnp.nan, jnp.where(lax.le(q, one - p), zero, one))
