"""Cauchy distribution (scipy.stats.cauchy), JAX's formulas."""
from __future__ import annotations

import numpy as np

from pyjax import lax
from pyjax._src.numpy.ufuncs import arctan
from pyjax._src.numpy.util import lax_const, promote_args_inexact
from pyjax._src.scipy.stats._typing import Array, ArrayLike


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log density -log(pi scale) - log1p(z^2)."""
    x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
    pi = lax_const(x, np.pi)
    z = lax.div(lax.sub(x, loc), scale)
    normalize_term = lax.log(lax.mul(pi, scale))
    return lax.neg(lax.add(normalize_term, lax.log1p(lax.mul(z, z))))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Density."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Distribution function 1/2 + arctan(z) / pi."""
    x, loc, scale = promote_args_inexact("cauchy.cdf", x, loc, scale)
    pi = lax_const(x, np.pi)
    z = lax.div(lax.sub(x, loc), scale)
    return lax.add(lax_const(x, 0.5), lax.mul(lax.div(lax_const(x, 1.0), pi), arctan(z)))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the distribution function."""
    return lax.log(cdf(x, loc, scale))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Survival function, the cdf reflected about loc."""
    x, loc, scale = promote_args_inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the survival function."""
    x, loc, scale = promote_args_inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Inverse survival function loc + scale tan(pi/2 - pi q)."""
    q, loc, scale = promote_args_inexact("cauchy.isf", q, loc, scale)
    pi = lax_const(q, np.pi)
    half_pi = lax_const(q, np.pi / 2)
    unscaled = lax.tan(lax.sub(half_pi, lax.mul(pi, q)))
    return lax.add(lax.mul(unscaled, scale), loc)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Quantile function loc + scale tan(pi q - pi/2)."""
    q, loc, scale = promote_args_inexact("cauchy.ppf", q, loc, scale)
    pi = lax_const(q, np.pi)
    half_pi = lax_const(q, np.pi / 2)
    unscaled = lax.tan(lax.sub(lax.mul(pi, q), half_pi))
    return lax.add(lax.mul(unscaled, scale), loc)
