"""jax.image resampling (JAX's jax/_src/image/scale.py).

Every spatial dimension is resampled by a dense weight matrix: entry (j, i) is a kernel
(triangle, Keys cubic, OpenCV cubic, Lanczos, box overlap) evaluated at the distance between
input pixel j and the inverse-warped centre of output pixel i, normalised per output pixel;
one einsum then contracts the image with all matrices.  Being jnp code, it is traced,
differentiated and batched like any other; nearest-neighbour resizing is a gather instead.
"""
from __future__ import annotations

import enum
import math
from typing import Any, Callable, Sequence

import numpy as np

import pyjax.numpy as jnp
from pyjax._src.core import dtypes
from pyjax._src.numpy.lax_numpy import _concrete, canonicalize_shape
from pyjax._src.numpy.util import canonicalize_axis, promote_dtypes_inexact
from pyjax._src.primitives import shape as shp
from pyjax._src.primitives.enums import Precision
from pyjax._src.transforms.jit import jit

#: weights whose column sum is below this are treated as all zero
_MIN_WEIGHT_SUM = 1000.0 * float(np.finfo(np.float32).eps)


class ResizeMethod(enum.Enum):
    """Image resize method: NEAREST, LINEAR, LANCZOS3 and LANCZOS5 (Lanczos kernels of radius
    3 and 5), CUBIC (Keys, a = -0.5), CUBIC_PYTORCH (OpenCV's a = -0.75 with edge padding
    when not antialiasing) and AREA (average over each output pixel's footprint)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        """The method a name stands for ('bilinear', 'tricubic', 'lanczos3', ...)."""
        method = _NAMES.get(s)
        if method is None:
            raise ValueError(f'Unknown resize method "{s}"')
        return method


_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    **dict.fromkeys(("linear", "bilinear", "trilinear", "triangle"), ResizeMethod.LINEAR),
    "lanczos3": ResizeMethod.LANCZOS3, "lanczos5": ResizeMethod.LANCZOS5,
    **dict.fromkeys(("cubic", "bicubic", "tricubic"), ResizeMethod.CUBIC),
    **dict.fromkeys(("cubic-pytorch", "bicubic-pytorch"), ResizeMethod.CUBIC_PYTORCH),
    "area": ResizeMethod.AREA,
}


# ---------------------------------------------------------------------------------------------
# kernels, evaluated at non-negative distances x (in input pixels, scaled when antialiasing)
# ---------------------------------------------------------------------------------------------

def _triangle(x: Any) -> Any:
    return jnp.maximum(0, 1 - jnp.abs(x))


def _keys_cubic(x: Any) -> Any:
    """Keys' cubic convolution kernel with a = -0.5 (Pillow, TensorFlow, PyTorch antialiased)."""
    near = ((1.5 * x - 2.5) * x) * x + 1.0
    out = jnp.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, near)
    return jnp.where(x >= 2.0, 0.0, out)


def _opencv_cubic(x: Any) -> Any:
    """The cubic kernel with a = -0.75 (OpenCV; PyTorch without antialiasing)."""
    a = -0.75
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = jnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, near)
    return jnp.where(x >= 2.0, 0.0, out)


def _lanczos(radius: float) -> Callable[[Any], Any]:
    """sinc(x) sinc(x / radius) on [0, radius], 1 near 0 (where the quotient is unstable)."""
    def kernel(x: Any) -> Any:
        y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
        away_from_zero = x > 1e-3
        out = jnp.where(away_from_zero, jnp.divide(y, jnp.where(x != 0, np.pi ** 2 * x ** 2, 1)),
                        1)
        return jnp.where(x > radius, 0.0, out)
    return kernel


#: marks the box-overlap weights of AREA, which are not a function of one distance
_AREA = object()

#: method -> (kernel radius in input pixels, kernel)
_KERNELS: dict[ResizeMethod, tuple[int, Any]] = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}


def _normalized(weights: Any) -> Any:
    """Columns divided by their sums; a column summing to (nearly) zero becomes zero."""
    total = jnp.sum(weights, axis=0, keepdims=True)
    return jnp.where(jnp.abs(total) > _MIN_WEIGHT_SUM,
                     jnp.divide(weights, jnp.where(total != 0, total, 1)), 0)


def _weight_matrix(in_size: int, out_size: int, scale: Any, translation: Any, kernel: Any,
                   antialias: bool, edge_padding: bool, radius: int) -> Any:
    """The (in_size, out_size) resampling weights of one dimension."""
    dtype = dtypes.result_type(scale, translation)
    inv_scale = 1.0 / scale
    # downsampling with antialias widens the kernel into a low-pass filter
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    # where each output pixel's centre falls in input coordinates
    centres = ((jnp.arange(out_size, dtype=dtype) + 0.5) * inv_scale
               - translation * inv_scale - 0.5)
    pad = 0
    if edge_padding:
        pad = radius
        if antialias:  # not reachable from resize / scale_and_translate
            concrete = _concrete(scale, "Antialiasing with edge padding requires a static "
                                        "scale.")
            pad = math.ceil(radius * max(1.0 / float(concrete), 1.0))
    positions = jnp.arange(-pad, in_size + pad, dtype=dtype)
    if kernel is _AREA:
        # overlap of output pixel [lo_i, lo_i + 1/scale] with input pixel [j, j + 1]
        out_lo = jnp.arange(out_size, dtype=dtype) * inv_scale - translation * inv_scale
        out_hi = out_lo + inv_scale
        in_lo = jnp.arange(in_size, dtype=dtype)
        in_hi = in_lo + 1.0
        weights = jnp.maximum(0.0, jnp.minimum(out_hi[np.newaxis, :], in_hi[:, np.newaxis])
                              - jnp.maximum(out_lo[np.newaxis, :], in_lo[:, np.newaxis]))
    else:
        distance = jnp.abs(centres[np.newaxis, :] - positions[:, np.newaxis])
        weights = kernel(distance / kernel_scale)
    if edge_padding:
        # fold the weights of the padding pixels onto the edge pixels they repeat
        source = jnp.clip(positions.astype(jnp.int32), 0, in_size - 1)
        out_index = jnp.arange(out_size)
        folded = jnp.zeros((in_size, out_size), dtype=dtype)
        columns = shp.broadcast_in_dim(out_index, (positions.shape[0], out_size), (1,))
        folded = folded.at[source[:, np.newaxis], columns].add(weights)
        return _normalized(folded)
    weights = _normalized(weights)
    # an output pixel whose centre lies outside the input image gets no weight at all
    inside = jnp.logical_and(centres >= -0.5, centres <= in_size - 0.5)
    return jnp.where(inside[np.newaxis, :], weights, 0)


def _resample(x: Any, out_shape: tuple[int, ...], spatial_dims: Sequence[int],
              scale: Sequence[Any], translation: Sequence[Any], kernel: Any, antialias: bool,
              precision: Any, edge_padding: bool, radius: int) -> Any:
    """x contracted with one weight matrix per spatial dimension (a single einsum)."""
    if not spatial_dims:
        return x
    rank = len(out_shape)
    operands: list[Any] = []
    out_axes = list(range(rank))
    for i, d in enumerate(spatial_dims):
        d = canonicalize_axis(d, x.ndim)
        w = _weight_matrix(x.shape[d], out_shape[d], scale[i], translation[i], kernel,
                           antialias, edge_padding, radius).astype(x.dtype)
        operands += [w, [d, rank + i]]
        out_axes[d] = rank + i
    return jnp.einsum(x, list(range(rank)), *operands, out_axes, precision=precision)


def _check_rank(shape: tuple[int, ...], image: Any) -> None:
    if len(shape) != image.ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x; "
                         f" {shape} vs {image.shape}")


def _kernel_of(method: ResizeMethod, antialias: bool) -> tuple[int, Any, bool]:
    """(radius, kernel, edge_padding): antialiased CUBIC_PYTORCH is plain CUBIC."""
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    return radius, kernel, method == ResizeMethod.CUBIC_PYTORCH and not antialias


def scale_and_translate(image: Any, shape: Sequence[int], spatial_dims: Sequence[int],
                        scale: Any, translation: Any, method: "str | ResizeMethod",
                        antialias: bool = True, precision: Any = Precision.HIGHEST) -> Any:
    """Resample `image` to `shape` under the warp x -> x * scale + translation of each of
    `spatial_dims` (half-centred pixels; output pixels mapping outside the input are zero).

    `method` is a ResizeMethod or its name (linear, cubic, cubic-pytorch, lanczos3,
    lanczos5, area; not nearest).  With `antialias`, downsampling widens the kernel into a
    low-pass filter.  `scale` and `translation` may be traced (one entry per spatial dim)."""
    shape = canonicalize_shape(shape)
    _check_rank(shape, image)
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    radius, kernel, edge_padding = _kernel_of(method, antialias)
    image, = promote_dtypes_inexact(image)
    scale, translation = promote_dtypes_inexact(scale, translation)
    return _resample(image, shape, spatial_dims, scale, translation, kernel, antialias,
                     precision, edge_padding, radius)


def _resize_nearest(x: Any, out_shape: tuple[int, ...]) -> Any:
    """Output pixel i of a resized dimension takes input pixel floor((i + 0.5) * m / n)
    (computed in float32 as JAX does), one gather per resized dimension."""
    for d, (m, n) in enumerate(zip(x.shape, out_shape)):
        if m == n:
            continue
        centres = (jnp.arange(n, dtype=np.float32) + 0.5) * m / n
        source = jnp.floor(centres.astype(np.float32)).astype(np.int32)
        index: list[Any] = [slice(None)] * x.ndim
        index[d] = source
        x = x[tuple(index)]
    return x


def _resize(image: Any, shape: tuple[int, ...], method: "str | ResizeMethod", antialias: bool,
            precision: Any) -> Any:
    """resize's body, staged as JAX's jitted `_resize` (all but the image static)."""
    _check_rank(shape, image)
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image, = promote_dtypes_inexact(image)
    # unchanged dimensions are skipped: every kernel interpolates (identity warp = identity)
    spatial_dims = tuple(d for d in range(len(shape)) if image.shape[d] != shape[d])
    radius, kernel, edge_padding = _kernel_of(method, antialias)
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in spatial_dims]
    return _resample(image, shape, spatial_dims, scale, [0.0] * len(spatial_dims), kernel,
                     antialias, precision, edge_padding, radius)


_resize_jit = jit(_resize, static_argnums=(1, 2, 3, 4))


def resize(image: Any, shape: Sequence[int], method: "str | ResizeMethod",
           antialias: bool = True, precision: Any = Precision.HIGHEST) -> Any:
    """Resize `image` to `shape` (every dimension, batch and channels included: keep those
    sizes unchanged).  `method`: nearest (same dtype, ignores antialias and precision),
    linear/bilinear/trilinear/triangle, cubic/bicubic/tricubic, cubic-pytorch, lanczos3,
    lanczos5, area, or a ResizeMethod; other methods return an inexact dtype.  Emulate
    torch's align_corners with scale_and_translate."""
    return _resize_jit(image, canonicalize_shape(shape), method, antialias, precision)
