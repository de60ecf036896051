"""Multinomial distribution (scipy.stats.multinomial), JAX's formulas; counts must be
integers."""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.numpy.util import promote_args_inexact, promote_args_numeric
from pyjax._src.scipy.special import gammaln, xlogy
from pyjax._src.scipy.stats._typing import Array, ArrayLike


def logpmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Array:
    """Log mass lgamma(n + 1) + sum(x log p - lgamma(x + 1)) over the last axis; -inf unless
    the counts sum to n."""
    p, = promote_args_inexact("multinomial.logpmf", p)
    x, n = promote_args_numeric("multinomial.logpmf", x, n)
    if not dtypes.issubdtype(x.dtype, np.integer):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, "
                         f"n.dtype={n.dtype}")
    x = x.astype(p.dtype)
    n = n.astype(p.dtype)
    logprobs = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return jnp.where(jnp.equal(jnp.sum(x), n), logprobs, -np.inf)


def pmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Array:
    """Probability mass."""
    return lax.exp(logpmf(x, n, p))
