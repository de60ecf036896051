"""Binomial distribution (scipy.stats.binom), JAX's formulas."""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.numpy.util import lax_const, promote_args_inexact
from pyjax._src.scipy.special import gammaln, xlog1py, xlogy
from pyjax._src.scipy.stats._typing import Array, ArrayLike


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Log mass log C(n, y) + y log p + (n - y) log1p(-p) of y = k - loc; -inf outside
    [loc, loc + n]."""
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = lax.sub(k, loc)
    zero = lax_const(y, 0)
    comb_term = lax.sub(gammaln(n + 1), lax.add(gammaln(y + 1), gammaln(n - y + 1)))
    log_linear_term = lax.add(xlogy(y, p), xlog1py(lax.sub(n, y), lax.neg(p)))
    log_probs = lax.add(comb_term, log_linear_term)
    y_n_cond = jnp.logical_or(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)),
                              lax.eq(log_linear_term, zero))
    log_probs = jnp.where(y_n_cond, 0.0, log_probs)
    return jnp.where(lax.ge(k, loc) & lax.lt(k, loc + n + 1), log_probs, -np.inf)


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Probability mass."""
    return lax.exp(logpmf(k, n, p, loc))
