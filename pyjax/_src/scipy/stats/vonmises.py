"""Von Mises distribution (scipy.stats.vonmises), JAX's formulas."""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.numpy.util import lax_const, promote_args_inexact
from pyjax._src.scipy.stats._typing import Array, ArrayLike


def logpdf(x: ArrayLike, kappa: ArrayLike) -> Array:
    """Log density kappa (cos x - 1) - log(2 pi i0e(kappa)); nan unless kappa > 0."""
    x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
    zero = lax_const(kappa, 0)
    positive = lax.gt(kappa, zero)
    value = kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * lax.bessel_i0e(kappa))
    return jnp.where(positive, value, np.nan)


def pdf(x: ArrayLike, kappa: ArrayLike) -> Array:
    """Density."""
    return lax.exp(logpdf(x, kappa))
