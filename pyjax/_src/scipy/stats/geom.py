"""Geometric distribution on 1, 2, ... (scipy.stats.geom), JAX's formulas."""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.numpy.util import lax_const, promote_args_inexact
from pyjax._src.scipy.special import xlog1py
from pyjax._src.scipy.stats._typing import Array, ArrayLike


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Log mass (x - 1) log1p(-p) + log p of x = k - loc, -inf for x <= 0."""
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    zero = lax_const(k, 0)
    one = lax_const(k, 1)
    x = lax.sub(k, loc)
    log_probs = xlog1py(lax.sub(x, one), -p) + lax.log(p)
    return jnp.where(lax.le(x, zero), -np.inf, log_probs)


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Probability mass."""
    return jnp.exp(logpmf(k, p, loc))
