"""Laplace distribution (scipy.stats.laplace), JAX's formulas."""
from __future__ import annotations

from pyjax import lax
from pyjax._src.numpy.util import lax_const, promote_args_inexact
from pyjax._src.scipy.stats._typing import Array, ArrayLike


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log density -|x - loc| / scale - log(2 scale)."""
    x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
    two = lax_const(x, 2)
    linear_term = lax.div(lax.abs(lax.sub(x, loc)), scale)
    return lax.neg(lax.add(linear_term, lax.log(lax.mul(two, scale))))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Density."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Distribution function, exp(z)/2 left of loc and 1 - exp(-z)/2 right of it."""
    x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
    half = lax_const(x, 0.5)
    one = lax_const(x, 1)
    zero = lax_const(x, 0)
    diff = lax.div(lax.sub(x, loc), scale)
    return lax.select(lax.le(diff, zero), lax.mul(half, lax.exp(diff)),
                      lax.sub(one, lax.mul(half, lax.exp(lax.neg(diff)))))
