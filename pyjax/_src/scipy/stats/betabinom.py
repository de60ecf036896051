"""Beta-binomial distribution (scipy.stats.betabinom), JAX's formulas (jitted as in JAX)."""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.numpy.util import lax_const, promote_args_inexact, staged_as_jit
from pyjax._src.scipy.special import betaln
from pyjax._src.scipy.stats._typing import Array, ArrayLike


@staged_as_jit
def logpmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0
           ) -> Array:
    """Log mass -log(n + 1) - log B(n - y + 1, y + 1) + log B(y + a, n - y + b) - log B(a, b)
    of y = floor(k) - loc; -inf outside [0, n], nan for n < 0 or a, b <= 0."""
    k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = lax.sub(lax.floor(k), loc)
    one = lax_const(y, 1)
    zero = lax_const(y, 0)
    combiln = lax.neg(lax.add(lax.log1p(n), betaln(lax.add(lax.sub(n, y), one),
                                                   lax.add(y, one))))
    beta_lns = lax.sub(betaln(lax.add(y, a), lax.add(lax.sub(n, y), b)), betaln(a, b))
    log_probs = lax.add(combiln, beta_lns)
    log_probs = jnp.where(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)), 0.0, log_probs)
    y_cond = jnp.logical_or(jnp.logical_or(lax.lt(y, lax.neg(loc)), lax.gt(y, n)),
                            lax.le(lax.add(y, a), zero))
    log_probs = jnp.where(y_cond, -np.inf, log_probs)
    n_a_b_cond = jnp.logical_or(jnp.logical_or(lax.lt(n, zero), lax.le(a, zero)),
                                lax.le(b, zero))
    return jnp.where(n_a_b_cond, np.nan, log_probs)


def pmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Probability mass."""
    return lax.exp(logpmf(k, n, a, b, loc))
