"""jax.nn.initializers: functions `init(key, shape, dtype=None, out_sharding=None)` and the
builders that return them (Keras/Sonnet conventions), drawing exactly JAX's samples.

Each builder fixes its parameters; the returned `init` draws with pyjax.random the way JAX's
does (same samplers, same constants, same eager arithmetic), so the same key gives the same
bits.  pyjax runs on one host device: `out_sharding` must be None (other values are rejected
with JAX's errors for a sharding it cannot place).
"""
from __future__ import annotations

import math
import typing
from collections.abc import Sequence
from typing import Any, Literal, Protocol

import numpy as np

import pyjax.numpy as jnp
from pyjax import random
from pyjax._src.core import dtypes
from pyjax._src.numpy.lax_numpy import canonicalize_shape

Array = Any
Shape = Sequence[int]
DTypeLike = Any
RealNumeric = Any
Axes = int | Sequence[int]

__all__ = ["Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
           "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
           "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
           "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]

#: Standard deviation of a standard normal truncated to (-2, 2), and of a complex standard
#: normal whose modulus is truncated to 2: dividing by them restores the requested variance.
_TRUNCATED_STDDEV = .87962566103423978
_COMPLEX_TRUNCATED_STDDEV = .95311164380491208


@typing.runtime_checkable
class Initializer(Protocol):
    """What the builders of jax.nn.initializers return: `init(key, shape, dtype, out_sharding)`
    giving an array of that shape and dtype."""

    def __call__(self, key: Array, shape: Shape, dtype: DTypeLike | None = None,
                 out_sharding: Any = None) -> Array:
        ...


def _default_dtype(dtype: DTypeLike | None) -> DTypeLike:
    return dtypes.default_float_dtype() if dtype is None else dtype


def _check_out_sharding(out_sharding: Any, api_name: str) -> None:
    """Only out_sharding=None places anything on pyjax's single host device; anything else is
    refused with the error JAX gives for a sharding it cannot use outside a mesh."""
    if out_sharding is None:
        return
    from pyjax._src.parallel.sharding import PartitionSpec
    if isinstance(out_sharding, PartitionSpec):
        raise ValueError("Using PartitionSpec when you are not under a mesh context is not "
                         "allowed. Please pass a NamedSharding instance or enter into a mesh "
                         f"context via `jax.set_mesh`. Got {out_sharding}")
    raise TypeError(f"`out_sharding` argument of {api_name} only supports instances of "
                    f"`NamedSharding` or `PartitionSpec`. Got {out_sharding} of type: "
                    f"{type(out_sharding)}")


def _sharded_unsupported(out_sharding: Any) -> None:
    """orthogonal and delta_orthogonal take no out_sharding at all (as in JAX)."""
    if out_sharding is not None:
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------
# Constant initializers
# ---------------------------------------------------------------------------------------------

def zeros(key: Array, shape: Shape, dtype: DTypeLike | None = None,
          out_sharding: Any = None) -> Array:
    """An array of zeros (the key is ignored)."""
    _check_out_sharding(out_sharding, "jnp.zeros")
    return jnp.zeros(shape, _default_dtype(dtype))


def ones(key: Array, shape: Shape, dtype: DTypeLike | None = None,
         out_sharding: Any = None) -> Array:
    """An array of ones (the key is ignored)."""
    _check_out_sharding(out_sharding, "jnp.ones")
    return jnp.ones(shape, _default_dtype(dtype))


def constant(value: Any, dtype: DTypeLike | None = None) -> Initializer:
    """An initializer filling arrays with `value` (dtype: its default dtype)."""
    def init(key: Array, shape: Shape, dtype: DTypeLike | None = dtype,
             out_sharding: Any = None) -> Array:
        dtype = _default_dtype(dtype)
        _check_out_sharding(out_sharding, "nn.initializers.constant")
        return jnp.full(shape, value, dtype=dtype)
    return init


# ---------------------------------------------------------------------------------------------
# Plain random initializers
# ---------------------------------------------------------------------------------------------

def uniform(scale: RealNumeric = 1e-2, dtype: DTypeLike | None = None) -> Initializer:
    """An initializer drawing uniformly from [0, scale)."""
    def init(key: Array, shape: Shape, dtype: DTypeLike | None = dtype,
             out_sharding: Any = None) -> Array:
        dtype = _default_dtype(dtype)
        _check_out_sharding(out_sharding, "uniform")
        return random.uniform(key, shape, dtype) * jnp.array(scale, dtype)
    return init


def normal(stddev: RealNumeric = 1e-2, dtype: DTypeLike | None = None) -> Initializer:
    """An initializer drawing from a centred normal of standard deviation `stddev`."""
    def init(key: Array, shape: Shape, dtype: DTypeLike | None = dtype,
             out_sharding: Any = None) -> Array:
        dtype = _default_dtype(dtype)
        _check_out_sharding(out_sharding, "normal")
        return random.normal(key, shape, dtype) * jnp.array(stddev, dtype)
    return init


def truncated_normal(stddev: RealNumeric = 1e-2, dtype: DTypeLike | None = None,
                     lower: RealNumeric = -2.0, upper: RealNumeric = 2.0) -> Initializer:
    """An initializer drawing a standard normal truncated to (lower, upper), times `stddev`
    (no correction of the variance the truncation removes)."""
    def init(key: Array, shape: Shape, dtype: DTypeLike | None = dtype,
             out_sharding: Any = None) -> Array:
        dtype = _default_dtype(dtype)
        _check_out_sharding(out_sharding, "truncated_normal")
        return random.truncated_normal(key, lower, upper, shape, dtype) * \
            jnp.array(stddev, dtype)
    return init


# ---------------------------------------------------------------------------------------------
# Variance scaling and its named specialisations
# ---------------------------------------------------------------------------------------------

def _axes_size(shape: tuple[int, ...], axes: Axes) -> int:
    if isinstance(axes, int):
        return shape[axes]
    return math.prod([shape[i] for i in axes])


def _compute_fans(shape: tuple[int, ...], in_axis: Axes = -2, out_axis: Axes = -1,
                  batch_axis: Axes = ()) -> tuple[float, float]:
    """(fan_in, fan_out) of a dense or convolution kernel: the input and output sizes times the
    receptive field (every axis that is neither input, output nor batch)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")
    in_size = _axes_size(shape, in_axis)
    out_size = _axes_size(shape, out_axis)
    batch_size = _axes_size(shape, batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def _complex_parts(key: Array, dtype: DTypeLike) -> tuple[Array, Array, np.dtype, np.dtype]:
    """Two keys (modulus, angle), the real dtype under `dtype`, and its complex dtype."""
    key_r, key_theta = random.split(key)
    real_dtype = np.array(0, dtype).real.dtype
    return key_r, key_theta, real_dtype, np.result_type(real_dtype, np.complex64)


def _complex_uniform(key: Array, shape: Shape, dtype: DTypeLike) -> Array:
    """Uniform on the disk of radius sqrt(2) in the complex plane: mean 0, variance 1."""
    key_r, key_theta, real_dtype, dtype = _complex_parts(key, dtype)
    r = jnp.sqrt(2 * random.uniform(key_r, shape, real_dtype)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key: Array, upper: Any, shape: Shape, dtype: DTypeLike) -> Array:
    """A complex standard normal (variance 1 before truncation) with modulus below `upper`,
    by inverting the modulus' CDF."""
    key_r, key_theta, real_dtype, dtype = _complex_parts(key, dtype)
    t = ((1 - jnp.exp(jnp.array(-(upper ** 2), dtype)))
         * random.uniform(key_r, shape, real_dtype).astype(dtype))
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


Mode = Literal["fan_in", "fan_out", "fan_avg", "fan_geo_avg"]
Distribution = Literal["truncated_normal", "normal", "uniform"]


def variance_scaling(scale: RealNumeric, mode: Mode, distribution: Distribution,
                     in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                     dtype: DTypeLike | None = None) -> Initializer:
    """An initializer of variance scale / n, n the fan the `mode` names (fans from in_axis,
    out_axis, batch_axis; other axes form the receptive field), drawn from a (truncated)
    normal, or uniform (a uniform disk for complex dtypes)."""
    def init(key: Array, shape: Shape, dtype: DTypeLike | None = dtype,
             out_sharding: Any = None) -> Array:
        shape = canonicalize_shape(shape)
        dtype = _default_dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denominator, dtype=dtype)
        real = dtypes.issubdtype(dtype, np.floating)
        if distribution == "truncated_normal":
            if real:
                stddev = jnp.sqrt(variance) / jnp.array(_TRUNCATED_STDDEV, dtype)
                _check_out_sharding(out_sharding, "truncated_normal")
                return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
            stddev = jnp.sqrt(variance) / jnp.array(_COMPLEX_TRUNCATED_STDDEV, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            _check_out_sharding(out_sharding, "normal")
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        if distribution == "uniform":
            if real:
                _check_out_sharding(out_sharding, "uniform")
                return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
            return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")
    return init


def glorot_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                   dtype: DTypeLike | None = None) -> Initializer:
    """Glorot (Xavier) uniform: variance_scaling(1.0, "fan_avg", "uniform")."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def glorot_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                  dtype: DTypeLike | None = None) -> Initializer:
    """Glorot (Xavier) normal: variance_scaling(1.0, "fan_avg", "truncated_normal")."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis=in_axis,
                            out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


def lecun_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                  dtype: DTypeLike | None = None) -> Initializer:
    """LeCun uniform: variance_scaling(1.0, "fan_in", "uniform")."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def lecun_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                 dtype: DTypeLike | None = None) -> Initializer:
    """LeCun normal: variance_scaling(1.0, "fan_in", "truncated_normal")."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis=in_axis,
                            out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


def he_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
               dtype: DTypeLike | None = None) -> Initializer:
    """He (Kaiming) uniform: variance_scaling(2.0, "fan_in", "uniform")."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def he_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
              dtype: DTypeLike | None = None) -> Initializer:
    """He (Kaiming) normal: variance_scaling(2.0, "fan_in", "truncated_normal")."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis=in_axis,
                            out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


# ---------------------------------------------------------------------------------------------
# Orthogonal initializers
# ---------------------------------------------------------------------------------------------

def orthogonal(scale: RealNumeric = 1.0, column_axis: int = -1,
               dtype: DTypeLike | None = None) -> Initializer:
    """An initializer of Haar-random (semi-)orthogonal matrices, times `scale`: the axis
    `column_axis` holds the columns, all other axes are flattened into rows."""
    def init(key: Array, shape: Shape, dtype: DTypeLike | None = dtype,
             out_sharding: Any = None) -> Array:
        _sharded_unsupported(out_sharding)
        dtype = _default_dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(dim == 0 for dim in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, dtype) * q
    return init


def delta_orthogonal(scale: RealNumeric = 1.0, column_axis: int = -1,
                     dtype: DTypeLike | None = None) -> Initializer:
    """An initializer of delta-orthogonal convolution kernels (3D, 4D or 5D): zero except an
    orthogonal matrix at the centre of the spatial axes (Xiao et al. 2018)."""
    def init(key: Array, shape: Shape, dtype: DTypeLike | None = dtype,
             out_sharding: Any = None) -> Array:
        _sharded_unsupported(out_sharding)
        dtype = _default_dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho_init = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)
        ortho_matrix = ortho_init(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dtype).at[(*centre, ...)].set(ortho_matrix)
    return init
