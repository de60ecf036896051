"""jax.scipy.ndimage.map_coordinates: nearest (order 0) or linear (order 1) interpolation of an
array at given coordinates, with SciPy's boundary modes, under one jit as in JAX."""
from __future__ import annotations

import functools
import itertools
import operator
from typing import Any, Callable, Sequence

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.transforms.jit import jit


def _mirror_index(index: Any, size: int) -> Any:
    """Reflect about the edge samples (SciPy's 'mirror': d c b | a b c d | c b a)."""
    period = size - 1
    return jnp.abs((index + period) % (2 * period) - period)


def _reflect_index(index: Any, size: int) -> Any:
    """Reflect about the edges themselves (SciPy's 'reflect': c b a | a b c | c b a)."""
    return jnp.floor_divide(_mirror_index(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_FIXERS: dict[str, Callable[[Any, int], Any]] = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror_index,
    "reflect": _reflect_index,
}


def _round_half_away(a: Any) -> Any:
    return a if dtypes.issubdtype(a.dtype, np.integer) else lax.round(a)


def _nearest_nodes(coordinate: Any) -> list[tuple[Any, Any]]:
    """Order 0: the rounded coordinate with weight 1."""
    return [(_round_half_away(coordinate).astype(np.int32), coordinate.dtype.type(1))]


def _linear_nodes(coordinate: Any) -> list[tuple[Any, Any]]:
    """Order 1: the two neighbouring samples weighted by distance."""
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    lower_weight = 1 - upper_weight
    index = lower.astype(np.int32)
    return [(index, lower_weight), (index + 1, upper_weight)]


@jit(static_argnums=(2, 3, 4))
def _map_coordinates(input: Any, coordinates: Sequence[Any], order: int, mode: str,
                     cval: Any) -> Any:
    input_arr = jnp.asarray(input)
    coordinate_arrs = [jnp.asarray(c) for c in coordinates]
    cval = jnp.asarray(cval, input_arr.dtype)
    if len(coordinates) != input_arr.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {input_arr.ndim}")
    index_fixer = _INDEX_FIXERS.get(mode)
    if index_fixer is None:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
            f"Currently supported modes are {set(_INDEX_FIXERS)}.")
    if order == 0:
        nodes_of = _nearest_nodes
    elif order == 1:
        nodes_of = _linear_nodes
    else:
        raise NotImplementedError(
            "jax.scipy.ndimage.map_coordinates currently requires order<=1")
    per_axis = []
    for coordinate, size in zip(coordinate_arrs, input_arr.shape):
        nodes = []
        for index, weight in nodes_of(coordinate):
            fixed = index_fixer(index, size)
            valid = ((0 <= index) & (index < size)) if mode == "constant" else True
            nodes.append((fixed, valid, weight))
        per_axis.append(nodes)
    outputs = []
    for items in itertools.product(*per_axis):
        indices, validities, weights = zip(*items) if items else ((), (), ())
        if all(valid is True for valid in validities):
            contribution = input_arr[indices]
        else:
            all_valid = functools.reduce(operator.and_, validities)
            contribution = jnp.where(all_valid, input_arr[indices], cval)
        outputs.append(functools.reduce(operator.mul, weights) * contribution)
    result = sum(outputs[1:], outputs[0])
    if dtypes.issubdtype(input_arr.dtype, np.integer):
        result = _round_half_away(result)
    return result.astype(input_arr.dtype)


def map_coordinates(input: Any, coordinates: Sequence[Any], order: int,
                    mode: str = "constant", cval: Any = 0.0) -> Any:
    """input sampled at `coordinates` (one array per axis of input) by interpolation of
    `order` 0 or 1; outside points follow `mode` ('constant' uses cval)."""
    return _map_coordinates(input, coordinates, order, mode, cval)
