"""Truncated normal distribution on [a, b] in standard units (scipy.stats.truncnorm), JAX's
formulas: the Gaussian mass of [a, b] in log space, taken from whichever tail is accurate."""
from __future__ import annotations

from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.numpy.util import promote_args_inexact, staged_as_jit
from pyjax._src.ops.special import logsumexp
from pyjax._src.scipy.special import log_ndtr, ndtr
from pyjax._src.scipy.stats import norm
from pyjax._src.scipy.stats._typing import Array


def _log_diff(x: Array, y: Array) -> Array:
    """log(exp(x) - exp(y))."""
    return logsumexp(jnp.array([x, y]), b=jnp.array([jnp.ones_like(x), -jnp.ones_like(y)]),
                     axis=0)


def _log_gauss_mass(a: Any, b: Any) -> Array:
    """log(ndtr(b) - ndtr(a)): from the left tail when b <= 0, the right one when a > 0, and
    as log1p(-ndtr(a) - ndtr(-b)) when the interval holds 0."""
    a, b = jnp.array(a), jnp.array(b)
    a, b = jnp.broadcast_arrays(a, b)
    case_left = b <= 0
    case_right = a > 0
    case_central = ~(case_left | case_right)
    a_tail = jnp.where(case_right, -b, a)
    b_tail = jnp.where(case_right, -a, b)
    mass_tail = _log_diff(log_ndtr(b_tail), log_ndtr(a_tail))
    mass_central = jnp.log1p(-ndtr(a) - ndtr(-b))
    return jnp.where(case_central, mass_central, mass_tail)


@staged_as_jit
def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """Log density norm.logpdf - log mass of [a, b]; -inf outside, nan when a >= b."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    val = lax.sub(norm.logpdf(x, loc, scale), _log_gauss_mass(a, b))
    x_scaled = lax.div(lax.sub(x, loc), scale)
    val = jnp.where((x_scaled < a) | (x_scaled > b), -np.inf, val)
    return jnp.where(a >= b, np.nan, val)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """Density."""
    return lax.exp(logpdf(x, a, b, loc, scale))


@staged_as_jit
def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """Log survival function, the log cdf of the mirrored distribution."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


@staged_as_jit
def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """Survival function."""
    return lax.exp(logsf(x, a, b, loc, scale))


@staged_as_jit
def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """Log distribution function: log mass of [a, x] minus that of [a, b], or log1p(-sf)
    when that is close to 0."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    x = lax.div(lax.sub(x, loc), scale)
    lgm_ab = _log_gauss_mass(a, b)
    log_cdf = _log_gauss_mass(a, x) - lgm_ab
    log_sf = _log_gauss_mass(x, b) - lgm_ab
    log_cdf = jnp.select([x >= b, x <= a, log_cdf > -0.1, x > a],
                         [0, -np.inf, jnp.log1p(-jnp.exp(log_sf)), log_cdf])
    return jnp.where(a >= b, np.nan, log_cdf)


@staged_as_jit
def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """Distribution function."""
    return lax.exp(logcdf(x, a, b, loc, scale))
