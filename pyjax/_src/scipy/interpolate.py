"""jax.scipy.interpolate.RegularGridInterpolator: linear or nearest interpolation on a
rectilinear grid (SciPy's class, a registered pytree so it passes through jit and vmap)."""
from __future__ import annotations

from itertools import product
from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from pyjax._src.tree_util import register_pytree_node


def _ndim_coords_from_arrays(points: Any, ndim: int | None = None) -> Any:
    """Query points as one array whose last axis holds the coordinates: a tuple of per-axis
    arrays is broadcast and stacked; a 1-D array is reshaped to rows of `ndim`."""
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]
    if isinstance(points, tuple):
        parts = jnp.broadcast_arrays(*points)
        for other in parts[1:]:
            if other.shape != parts[0].shape:
                raise ValueError("coordinate arrays do not have the same shape")
        points = jnp.empty(parts[0].shape + (len(points),), dtype=float)
        for j, item in enumerate(parts):
            points = points.at[..., j].set(item)
    else:
        check_arraylike("_ndim_coords_from_arrays", points)
        points = jnp.asarray(points)
        if points.ndim == 1:
            points = points.reshape(-1, 1) if ndim is None else points.reshape(-1, ndim)
    return points


class RegularGridInterpolator:
    """Interpolate `values` given on the grid `points` (one increasing 1-D array per leading
    axis of values); queries outside the grid give `fill_value` (None: extrapolate)."""

    def __init__(self, points: Any, values: Any, method: str = "linear",
                 bounds_error: bool = False, fill_value: Any = np.nan) -> None:
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if self.bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        check_arraylike("RegularGridInterpolator", values)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        values, = promote_dtypes_inexact(values)
        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = jnp.asarray(fill_value)
            if not np.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible "
                                 "with values")
        self.fill_value = fill_value
        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi: Any, method: str | None = None) -> Any:
        """The interpolated values at the points xi (..., ndim)."""
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _ndim_coords_from_arrays(xi, ndim=ndim)
        if xi.shape[-1] != len(self.grid):
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[1]}, "
                             f"but this RegularGridInterpolator has dimension {ndim}")
        xi_shape = xi.shape
        xi = xi.reshape(-1, xi_shape[-1])
        indices, norm_distances, out_of_bounds = self._find_indices(xi.T)
        if method == "linear":
            result = self._evaluate_linear(indices, norm_distances)
        else:
            result = self._evaluate_nearest(indices, norm_distances)
        if not self.bounds_error and self.fill_value is not None:
            bc_shp = result.shape[:1] + (1,) * (result.ndim - 1)
            result = jnp.where(out_of_bounds.reshape(bc_shp), self.fill_value, result)
        return result.reshape(xi_shape[:-1] + self.values.shape[ndim:])

    def _evaluate_linear(self, indices: list, norm_distances: list) -> Any:
        """Sum over the 2**ndim corners of each cell, weighted by the distances."""
        vslice = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        values = jnp.asarray(0.0)
        for edge_indices in product(*[[i, i + 1] for i in indices]):
            weight = jnp.asarray(1.0)
            for ei, i, yi in zip(edge_indices, indices, norm_distances):
                weight *= jnp.where(ei == i, 1 - yi, yi)
            values += self.values[edge_indices] * weight[vslice]
        return values

    def _evaluate_nearest(self, indices: list, norm_distances: list) -> Any:
        idx_res = [jnp.where(yi <= 0.5, i, i + 1) for i, yi in zip(indices, norm_distances)]
        return self.values[tuple(idx_res)]

    def _find_indices(self, xi: Any) -> tuple[list, list, Any]:
        """Per axis: the cell index (clamped to the grid), the position within the cell, and
        whether each point lies outside the grid."""
        indices = []
        norm_distances = []
        out_of_bounds = jnp.zeros((xi.shape[1],), dtype=bool)
        for x, g in zip(xi, self.grid):
            i = jnp.searchsorted(g, x) - 1
            i = jnp.where(i < 0, 0, i)
            i = jnp.where(i > g.size - 2, g.size - 2, i)
            indices.append(i)
            norm_distances.append((x - g[i]) / (g[i + 1] - g[i]))
            if not self.bounds_error:
                out_of_bounds += x < g[0]
                out_of_bounds += x > g[-1]
        return indices, norm_distances, out_of_bounds


register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    lambda aux, children: RegularGridInterpolator(*children[:2], *aux, *children[2:]))
