"""Multivariate normal distribution (scipy.stats.multivariate_normal), JAX's formulas: a
Cholesky factor of cov and a triangular solve per point."""
from __future__ import annotations

import functools

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.numpy.util import promote_dtypes_inexact
from pyjax._src.scipy.stats._typing import Array, ArrayLike


def logpdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike, allow_singular: None = None
           ) -> ArrayLike:
    """Log density of points x (last axis the dimension); cov a matrix, or a scalar meaning
    cov times the identity; a scalar mean makes it one-dimensional."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes_inexact(x, mean, cov)
    if not mean.shape:
        return (-1 / 2 * jnp.square(x - mean) / cov
                - 1 / 2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
    n = mean.shape[-1]
    if not np.shape(cov):
        y = x - mean
        return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) / cov
                - n / 2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    L = lax.linalg.cholesky(cov)
    solve = functools.partial(lax.linalg.triangular_solve, lower=True, transpose_a=True)
    y = jnp.vectorize(solve, signature="(n,n),(n)->(n)")(L, x - mean)
    return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) - n / 2 * jnp.log(2 * np.pi)
            - jnp.log(jnp.diagonal(L, axis1=-1, axis2=-2)).sum(-1))


def pdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike) -> Array:
    """Density."""
    return lax.exp(logpdf(x, mean, cov))
