"""jax.scipy.fft: the type-2 discrete cosine transform and its inverse (dct, dctn, idct,
idctn), computed with one complex FFT of the even/odd-interleaved input (Makhoul's method)."""
from __future__ import annotations

import math
import operator
from functools import partial
from typing import Any, Sequence

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.backend.dispatch import as_operand
from pyjax._src.core import dtypes
from pyjax._src.numpy.util import canonicalize_axis, check_arraylike, promote_dtypes_inexact
from pyjax._src.numpy.util import promote_dtypes_complex


def _ensure_array(name: str, x: Any) -> Any:
    check_arraylike(name, x)
    return as_operand(x)


def _W4(N: int, k: Any) -> Any:
    """The twiddle factors exp(-i pi k / (2N))."""
    N_arr, k = promote_dtypes_complex(N, k)
    return jnp.exp(-0.5j * np.pi * k / N_arr)


def _other_axes(ndim: int, axis: int) -> list[int]:
    return [a for a in range(ndim) if a != axis]


def _dct_interleave(x: Any, axis: int) -> Any:
    """The even-indexed samples followed by the odd-indexed ones reversed."""
    v0 = lax.slice_in_dim(x, None, None, 2, axis)
    v1 = lax.rev(lax.slice_in_dim(x, 1, None, 2, axis), (axis,))
    return lax.concatenate([v0, v1], axis)


def _dct_deinterleave(x: Any, axis: int) -> Any:
    """The inverse of _dct_interleave."""
    def along(sl: slice) -> tuple:
        return tuple(sl if i == axis else slice(None) for i in range(x.ndim))
    half = math.ceil(x.shape[axis] / 2)
    v0 = x[along(slice(None, half, 1))]
    v1 = lax.rev(x[along(slice(half, None, 1))], (axis,))
    out = jnp.zeros(x.shape, dtype=x.dtype)
    out = out.at[along(slice(None, None, 2))].set(v0)
    return out.at[along(slice(1, None, 2))].set(v1)


def _dct_ortho_norm(out: Any, axis: int) -> Any:
    """Scale by 1/sqrt(4N) for the first coefficient and 1/sqrt(2N) for the others."""
    factor = lax.concatenate([lax.full((1,), 4, out.dtype),
                              lax.full((out.shape[axis] - 1,), 2, out.dtype)], 0)
    factor = lax.expand_dims(factor, _other_axes(out.ndim, axis))
    return out / lax.sqrt(factor * out.shape[axis])


def _check_type_and_norm(name: str, type: int, norm: str | None) -> None:
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ["backward", "ortho"]:
        raise ValueError(f"jax.scipy.fft.{name}: {norm=} is not implemented")


def _pad_to(x: Any, lengths: dict[int, int]) -> Any:
    """x zero-padded (or cropped, by negative padding) at the end of the given axes."""
    pads = [(0, lengths[a] - x.shape[a] if a in lengths else 0, 0) for a in range(x.ndim)]
    return lax.pad(x, jnp.array(0, x.dtype), pads)


def dct(x: Any, type: int = 2, n: int | None = None, axis: int = -1,
        norm: str | None = None) -> Any:
    """The DCT-II of x along `axis` (length n, zero-padded or cropped); norm None/'backward'
    or 'ortho'. Complex inputs transform their real and imaginary parts."""
    x = _ensure_array("dct", x)
    _check_type_and_norm("dct", type, norm)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.complex(dct(x.real, type=type, n=n, norm=norm, axis=axis),
                           dct(x.imag, type=type, n=n, norm=norm, axis=axis))
    axis = canonicalize_axis(axis, x.ndim)
    if n is not None:
        x = _pad_to(x, {axis: n})
    N = x.shape[axis]
    V = jnp.fft.fft(_dct_interleave(x, axis), axis=axis)
    k = lax.expand_dims(jnp.arange(N, dtype=V.real.dtype), _other_axes(x.ndim, axis))
    out = 2 * (V * _W4(N, k)).real
    if norm == "ortho":
        out = _dct_ortho_norm(out, axis)
    return out


def _dct2(x: Any, axes: Sequence[int], norm: str | None) -> Any:
    """The DCT-II over two axes with one 2-D FFT."""
    axis1, axis2 = map(partial(canonicalize_axis, ndim=x.ndim), axes)
    N1, N2 = x.shape[axis1], x.shape[axis2]
    V = jnp.fft.fftn(_dct_interleave(_dct_interleave(x, axis1), axis2), axes=axes)
    k1 = lax.expand_dims(jnp.arange(N1, dtype=V.dtype), _other_axes(x.ndim, axis1))
    k2 = lax.expand_dims(jnp.arange(N2, dtype=V.dtype), _other_axes(x.ndim, axis2))
    out = _W4(N1, k1) * (_W4(N2, k2) * V + _W4(N2, -k2) * jnp.roll(
        jnp.flip(V, axis=axis2), shift=1, axis=axis2))
    out = 2 * out.real
    if norm == "ortho":
        return _dct_ortho_norm(_dct_ortho_norm(out, axis1), axis2)
    return out


def _nd_axes(x: Any, s: Sequence[int] | None,
             axes: Sequence[int] | None) -> tuple[list[int] | None, tuple[int, ...]]:
    """SciPy's (s, axes) defaults: s alone picks the trailing len(s) axes."""
    if s is not None:
        try:
            s = list(s)
        except TypeError:
            s = [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    else:
        axes = tuple(axes) if isinstance(axes, Sequence) else (axes,)
        axes = tuple(canonicalize_axis(a, x.ndim) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis: {axes}")
    return s, axes


def dctn(x: Any, type: int = 2, s: Sequence[int] | None = None,
         axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The multidimensional DCT-II over `axes` (shape s), two axes per FFT."""
    x = _ensure_array("dctn", x)
    _check_type_and_norm("dctn", type, norm)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.complex(dctn(x.real, type=type, s=s, norm=norm, axes=axes),
                           dctn(x.imag, type=type, s=s, norm=norm, axes=axes))
    s, axes = _nd_axes(x, s, axes)
    if len(axes) == 1:
        return dct(x, n=s[0] if s is not None else None, axis=axes[0], norm=norm)
    if s is not None:
        x = _pad_to(x, dict(zip(axes, s)))
    if len(axes) == 2:
        return _dct2(x, axes=axes, norm=norm)
    for block in [axes[i:i + 2] for i in range(0, len(axes), 2)]:
        x = dctn(x, axes=block, norm=norm)
    return x


def idct(x: Any, type: int = 2, n: int | None = None, axis: int = -1,
         norm: str | None = None) -> Any:
    """The inverse of the DCT-II (a scaled DCT-III) along `axis`."""
    x = _ensure_array("idct", x)
    _check_type_and_norm("idct", type, norm)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.complex(idct(x.real, type=type, n=n, norm=norm, axis=axis),
                           idct(x.imag, type=type, n=n, norm=norm, axis=axis))
    axis = canonicalize_axis(axis, x.ndim)
    if n is not None:
        x = _pad_to(x, {axis: n})
    N = x.shape[axis]
    x, = promote_dtypes_inexact(x)
    if norm is None or norm == "backward":
        x = _dct_ortho_norm(x, axis)
    x = _dct_ortho_norm(x, axis)
    k = lax.expand_dims(jnp.arange(N, dtype=x.dtype), _other_axes(x.ndim, axis))
    w4 = _W4(N, k)
    x = x.astype(w4.dtype)
    x = x / _W4(N, k)
    x = x * 2 * N
    x = jnp.fft.ifft(x, axis=axis)
    return _dct_deinterleave(x.real, axis)


def idctn(x: Any, type: int = 2, s: Sequence[int] | None = None,
          axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The multidimensional inverse DCT-II, one axis at a time."""
    x = _ensure_array("idctn", x)
    _check_type_and_norm("idctn", type, norm)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.complex(idctn(x.real, type=type, s=s, norm=norm, axes=axes),
                           idctn(x.imag, type=type, s=s, norm=norm, axes=axes))
    s, axes = _nd_axes(x, s, axes)
    if len(axes) == 1:
        return idct(x, n=s[0] if s is not None else None, axis=axes[0], norm=norm)
    if s is not None:
        x = _pad_to(x, dict(zip(axes, s)))
    for axis in axes:
        x = idct(x, axis=axis, norm=norm)
    return x
