"""Negative binomial distribution (scipy.stats.nbinom), JAX's formulas."""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.numpy.util import lax_const, promote_args_inexact
from pyjax._src.scipy.special import gammaln, xlogy
from pyjax._src.scipy.stats._typing import Array, ArrayLike


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Log mass lgamma(y + n) - lgamma(n) - lgamma(y + 1) + n log p + y log(1 - p) of
    y = k - loc, -inf below loc."""
    k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    one = lax_const(k, 1)
    y = lax.sub(k, loc)
    comb_term = lax.sub(lax.sub(gammaln(lax.add(y, n)), gammaln(n)), gammaln(lax.add(y, one)))
    log_linear_term = lax.add(xlogy(n, p), xlogy(y, lax.sub(one, p)))
    log_probs = lax.add(comb_term, log_linear_term)
    return jnp.where(lax.lt(k, loc), -np.inf, log_probs)


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Probability mass."""
    return lax.exp(logpmf(k, n, p, loc))
