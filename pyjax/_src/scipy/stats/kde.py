"""Gaussian kernel density estimation (scipy.stats.gaussian_kde) as JAX provides it: an
immutable pytree holding the data, weights and bandwidth-scaled covariance."""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Union

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
import pyjax.random as random
from pyjax._src.core import dtypes
from pyjax._src.numpy.util import check_arraylike, promote_dtypes_inexact, staged_as_jit
from pyjax._src.ops.special import logsumexp
from pyjax._src.scipy import linalg, special
from pyjax._src.scipy.stats._typing import Array
from pyjax._src.transforms.batching import vmap
from pyjax._src.tree_util import register_pytree_node_class

#: how the bandwidth factor is chosen: a rule's name, a number, or a function of the kde
BwMethod = Union[None, str, Array, Callable[[Any], Array]]


@register_pytree_node_class
@dataclasses.dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:  # noqa: N801 (scipy's name)
    """Gaussian kernel density estimator of `dataset` (shape (d, n), or (n,) for d = 1), with
    optional `weights` and a bandwidth by Scott's or Silverman's rule, a scalar or a callable."""

    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset: Any, bw_method: BwMethod = None, weights: Any = None):
        check_arraylike("gaussian_kde", dataset)
        dataset = jnp.atleast_2d(dataset)
        if dtypes.issubdtype(lax.dtype(dataset), np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            check_arraylike("gaussian_kde", weights)
            dataset, weights = promote_dtypes_inexact(dataset, weights)
            weights = jnp.atleast_1d(weights)
            weights /= jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            dataset, = promote_dtypes_inexact(dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        self._setattr("dataset", dataset)
        self._setattr("weights", weights)
        neff = self._setattr("neff", 1 / jnp.sum(weights ** 2))
        bw_method = "scott" if bw_method is None else bw_method
        if bw_method == "scott":
            factor = jnp.power(neff, -1. / (d + 4))
        elif bw_method == "silverman":
            factor = jnp.power(neff * (d + 2) / 4.0, -1. / (d + 4))
        elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError(
                "`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")
        data_covariance = jnp.atleast_2d(
            jnp.cov(dataset, rowvar=1, bias=False, aweights=weights))
        data_inv_cov = jnp.linalg.inv(data_covariance)
        self._setattr("covariance", data_covariance * factor ** 2)
        self._setattr("inv_cov", data_inv_cov / factor ** 2)

    def _setattr(self, name: str, value: Any) -> Any:
        """Set a field of the frozen instance (construction and unflattening only)."""
        object.__setattr__(self, name, value)
        return value

    def tree_flatten(self) -> tuple[tuple, None]:
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data: None, children: Any) -> "gaussian_kde":
        del aux_data
        kde = cls.__new__(cls)
        for name, value in zip(("neff", "dataset", "weights", "covariance", "inv_cov"),
                               children):
            kde._setattr(name, value)
        return kde

    @property
    def d(self) -> int:
        """Number of dimensions."""
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        """Number of data points."""
        return self.dataset.shape[1]

    def evaluate(self, points: Any) -> Array:
        """The estimated density at `points` (shape (d, m))."""
        check_arraylike("evaluate", points)
        points = self._reshape_points(points)
        result = _gaussian_kernel_eval(False, self.dataset.T, self.weights[:, None], points.T,
                                       self.inv_cov)
        return result[:, 0]

    def __call__(self, points: Any) -> Array:
        return self.evaluate(points)

    def integrate_gaussian(self, mean: Any, cov: Any) -> Array:
        """The integral of the density times a Gaussian of `mean` and `cov`."""
        mean = jnp.atleast_1d(jnp.squeeze(mean))
        cov = jnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = linalg.cho_factor(self.covariance + cov)
        norm = jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0]))
        norm = 1.0 / norm
        return _gaussian_kernel_convolve(chol, norm, self.dataset, self.weights, mean)

    @staged_as_jit
    def integrate_box_1d(self, low: Any, high: Any) -> Array:
        """The integral of a one-dimensional density over [low, high]."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError(
                "the limits of integration in integrate_box_1d must be scalars")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        low = jnp.squeeze((low - self.dataset) / sigma)
        high = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (special.ndtr(high) - special.ndtr(low)))

    def integrate_kde(self, other: "gaussian_kde") -> Array:
        """The integral of the product of this density and `other`'s."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = linalg.cho_factor(self.covariance + other.covariance)
        norm = jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0]))
        norm = 1.0 / norm
        sm, lg = (self, other) if self.n < other.n else (other, self)
        result = vmap(functools.partial(_gaussian_kernel_convolve, chol, norm, lg.dataset,
                                        lg.weights), in_axes=1)(sm.dataset)
        return jnp.sum(result * sm.weights)

    @functools.partial(staged_as_jit, static_argnames=("shape",))
    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Array:
        """Samples of shape (d, *shape): a data point drawn by weight plus Gaussian noise of
        the kernel's covariance."""
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = random.multivariate_normal(eps_key, jnp.zeros(self.d, self.covariance.dtype),
                                         self.covariance, shape=shape,
                                         dtype=self.dataset.dtype).T
        return self.dataset[:, ind] + eps

    def pdf(self, x: Any) -> Array:
        """The estimated density (same as evaluate)."""
        return self.evaluate(x)

    def logpdf(self, x: Any) -> Array:
        """The log of the estimated density, summed in log space."""
        check_arraylike("logpdf", x)
        x = self._reshape_points(x)
        result = _gaussian_kernel_eval(True, self.dataset.T, self.weights[:, None], x.T,
                                       self.inv_cov)
        return result[:, 0]

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Array:
        """Not supported by JAX beyond one dimension: use integrate_box_1d."""
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError(
            "only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method: BwMethod = None) -> None:
        """Not supported by JAX: the estimator is immutable."""
        del bw_method
        raise NotImplementedError(
            "dynamically changing the bandwidth method is not supported")

    def _reshape_points(self, points: Any) -> Array:
        if dtypes.issubdtype(lax.dtype(points), np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                points = jnp.reshape(points, (self.d, 1))
            else:
                raise ValueError(
                    f"points have dimension {d}, dataset has dimension {self.d}")
        return points


def _gaussian_kernel_convolve(chol: Any, norm: Array, target: Array, weights: Array,
                              mean: Array) -> Array:
    diff = target - mean[:, None]
    alpha = linalg.cho_solve(chol, diff)
    arg = 0.5 * jnp.sum(diff * alpha, axis=0)
    return norm * jnp.sum(jnp.exp(-arg) * weights)


@functools.partial(staged_as_jit, static_argnums=(0,))
def _gaussian_kernel_eval(in_log: bool, points: Array, values: Array, xi: Array,
                          precision: Array) -> Array:
    """sum_j values_j N(xi_i; points_j, precision^-1) for each i (its log when in_log)."""
    points, values, xi, precision = promote_dtypes_inexact(points, values, xi, precision)
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if precision.shape != (d, d):
        raise ValueError("precision matrix must match data dims")
    whitening = linalg.cholesky(precision, lower=True)
    points = jnp.dot(points, whitening)
    xi = jnp.dot(xi, whitening)
    log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * jnp.log(2 * np.pi)

    def kernel(x_test: Array, x_train: Array, y_train: Array) -> Array:
        arg = log_norm - 0.5 * jnp.sum(jnp.square(x_train - x_test))
        if in_log:
            return jnp.log(y_train) + arg
        return y_train * jnp.exp(arg)

    reduce = logsumexp if in_log else jnp.sum

    def reduced_kernel(x: Array) -> Array:
        return reduce(vmap(kernel, in_axes=(None, 0, 0))(x, points, values), axis=0)

    return vmap(reduced_kernel)(xi)
