"""Student's t distribution (scipy.stats.t), JAX's formulas."""
from __future__ import annotations

import numpy as np

from pyjax import lax
from pyjax._src.numpy.util import lax_const, promote_args_inexact
from pyjax._src.scipy.stats._typing import Array, ArrayLike


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log density through lgamma(df/2), lgamma((df + 1)/2) and log1p(z^2/df)."""
    x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
    two = lax_const(x, 2)
    z = lax.div(lax.sub(x, loc), scale)
    df_over_two = lax.div(df, two)
    df_plus_one_over_two = lax.add(df_over_two, lax_const(x, 0.5))
    normalize_term_const = lax.mul(lax.mul(scale, scale), lax_const(x, np.pi))
    normalize_term_tmp = lax.div(lax.log(lax.mul(normalize_term_const, df)), two)
    normalize_term = lax.sub(lax.add(lax.lgamma(df_over_two), normalize_term_tmp),
                             lax.lgamma(df_plus_one_over_two))
    quadratic = lax.div(lax.mul(z, z), df)
    return lax.neg(lax.add(normalize_term, lax.mul(df_plus_one_over_two, lax.log1p(quadratic))))


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Density."""
    return lax.exp(logpdf(x, df, loc, scale))
