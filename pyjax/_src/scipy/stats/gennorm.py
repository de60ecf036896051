"""Generalized normal distribution (scipy.stats.gennorm), JAX's formulas."""
from __future__ import annotations

from pyjax import lax
from pyjax._src.numpy.util import promote_args_inexact
from pyjax._src.scipy.stats._typing import Array, ArrayLike


def logpdf(x: ArrayLike, beta: ArrayLike) -> Array:
    """Log density log(beta/2) - lgamma(1/beta) - |x|^beta."""
    x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
    return lax.log(0.5 * beta) - lax.lgamma(1 / beta) - lax.abs(x) ** beta


def cdf(x: ArrayLike, beta: ArrayLike) -> Array:
    """Distribution function (1 + sign(x) P(1/beta, |x|^beta)) / 2."""
    x, beta = promote_args_inexact("gennorm.cdf", x, beta)
    return 0.5 * (1 + lax.sign(x) * lax.igamma(1 / beta, lax.abs(x) ** beta))


def pdf(x: ArrayLike, beta: ArrayLike) -> Array:
    """Density."""
    return lax.exp(logpdf(x, beta))
