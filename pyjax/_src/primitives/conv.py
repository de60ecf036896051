"""conv_general_dilated: XLA's convolution (strides, padding, lhs/rhs dilation, feature and batch
groups, any dimension layout), its lax wrappers and shape helpers.

The NumPy impl works in the canonical layout (batch, feature, spatial...) and picks one of two
BLAS formulations: im2col (copy the receptive fields once, one matmul) when the input has few
features per group, or "matmul then shifted sums" (multiply every input position by every kernel
tap at once, then add the K shifted, strided views) when the output has fewer.  Neither loops over
output pixels.  Autodiff and batching follow JAX's rules, so their jaxprs print as JAX's do.
"""
from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple, Sequence, Union

import numpy as np
from numpy.lib.stride_tricks import as_strided

from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.primitives._rules import make_primitive
from pyjax._src.primitives.enums import Precision, canonicalize_precision


class ConvDimensionNumbers(NamedTuple):
    """Positions of (batch, feature, spatial...) in lhs and out, (out feature, in feature,
    spatial...) in rhs."""
    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]


# ---------------------------------------------------------------------------------------------
# shape helpers (JAX's public utilities)
# ---------------------------------------------------------------------------------------------

def dilate_dim(d: int, dilation: int) -> int:
    """Size of an axis of size `d` with `dilation - 1` holes between elements."""
    return d if dilation == 1 else max(1 + dilation * (d - 1), 0)


def stride_dim(d: int, window: int, stride: int) -> int:
    """Number of windows of size `window` at `stride` in an axis of size `d`."""
    return max((d - window) // stride + 1, 0)


def dilate_shape(shape: Sequence[int], dilation: Sequence[int]) -> tuple:
    """`shape` with each trailing axis dilated (JAX's lax._dilate_shape, with its error)."""
    if not np.all(np.greater(dilation, 0)):
        raise TypeError(f"All dilations must be positive, got {dilation}.")
    dilation = (1,) * (len(shape) - len(dilation)) + tuple(dilation)
    return tuple(map(dilate_dim, shape, dilation))


_PADDING_TYPES = ("VALID", "SAME", "SAME_LOWER")


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: str) -> list[tuple[int, int]]:
    """(low, high) pads per axis for 'VALID', 'SAME' (odd extra at the end) or 'SAME_LOWER'
    (odd extra at the start)."""
    if isinstance(padding, str):
        if padding.upper() not in _PADDING_TYPES:
            raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or "
                               f"'SAME_LOWER', got {padding}.")
        padding = padding.upper()
    else:
        raise TypeError(f"Unknown padding type: {padding}.")
    if padding == "VALID":
        return [(0, 0)] * len(in_shape)
    in_shape = np.asarray(in_shape)
    out_shape = -np.floor_divide(np.negative(in_shape), window_strides)
    sizes = [int(max(d, 0)) for d in (out_shape - 1) * window_strides + window_shape - in_shape]
    if padding == "SAME":
        return [(s // 2, s - s // 2) for s in sizes]
    return [(s - s // 2, s // 2) for s in sizes]


def conv_general_permutations(dimension_numbers: Sequence[str]) -> tuple:
    """(lhs_perm, rhs_perm, out_perm) of string dimension numbers such as
    ('NCHW', 'OIHW', 'NCHW'): where batch/feature and each spatial axis sit."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(charpairs):
        if not dimension_numbers[i].count(a) == dimension_numbers[i].count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {dimension_numbers[i]}.")
        if len(dimension_numbers[i]) != len(set(dimension_numbers[i])):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {dimension_numbers[i]}.")
    if not (set(lhs_spec) - set(charpairs[0]) == set(rhs_spec) - set(charpairs[1])
            == set(out_spec) - set(charpairs[2])):
        raise TypeError("convolution dimension_numbers elements must each have the same set of "
                        f"spatial characters, got {dimension_numbers}.")

    def perm(spec: str, pair: tuple) -> tuple:
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            spatial = sorted(spatial, key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *spatial)

    return tuple(map(perm, dimension_numbers, charpairs))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: ConvGeneralDilatedDimensionNumbers
                           ) -> ConvDimensionNumbers:
    """`dimension_numbers` (None, three strings or ConvDimensionNumbers) in canonical form."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                        f"{type(dimension_numbers)}.")
    if len(dimension_numbers) != 3:
        raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                        f"{len(dimension_numbers)}.")
    if not all(isinstance(e, str) for e in dimension_numbers):
        raise TypeError("convolution dimension_numbers elements must be strings, got "
                        f"{tuple(map(type, dimension_numbers))}.")
    for i, e in enumerate(dimension_numbers):
        if len(e) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                            f"ndim of lhs and rhs, got {len(e)} for lhs and rhs shapes "
                            f"{lhs_shape} and {rhs_shape}.")
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int], pads: Any, batch_group_count: int = 1) -> tuple:
    """Output shape of a conv with operands in canonical (NC..., OI...) order."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError("Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    lhs_padded = np.add(lhs_shape[2:], np.sum(np.array(pads).reshape(-1, 2), axis=1))
    if np.any(lhs_padded < 0):
        raise ValueError("Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    out_space = tuple(map(stride_dim, lhs_padded, rhs_shape[2:], strides))
    batch = lhs_shape[0] // batch_group_count if batch_group_count > 1 else lhs_shape[0]
    return tuple((batch, rhs_shape[0]) + out_space)


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int], padding: Any,
                             dimension_numbers: Sequence[str]) -> tuple:
    """Output shape of a conv with string dimension numbers."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm),
                           window_strides, padding)
    return tuple(np.take(out, np.argsort(out_perm)))


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int], padding: Any,
                               dimension_numbers: Sequence[str]) -> tuple:
    """Output shape of conv_transpose."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t = np.take(lhs_shape, lhs_perm)
    rhs_t = np.take(rhs_shape, rhs_perm)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding)
                   for k, s in zip(rhs_t[2:], window_strides)]
    padding = list(map(np.sum, padding))
    unpadded = [(i - 1) * s - k + 2 for i, k, s in zip(lhs_t[2:], rhs_t[2:], window_strides)]
    out_space = np.sum([unpadded, padding], axis=0).tolist()
    out = tuple((lhs_t[0], rhs_t[0]) + tuple(out_space))
    return tuple(np.take(out, np.argsort(out_perm)))


# ---------------------------------------------------------------------------------------------
# abstract evaluation
# ---------------------------------------------------------------------------------------------

def _conv_shape(lhs: ShapedArray, rhs: ShapedArray, *, window_strides: tuple, padding: tuple,
                lhs_dilation: tuple, rhs_dilation: tuple, dimension_numbers: Any,
                feature_group_count: int, batch_group_count: int) -> tuple:
    """JAX's shape rule, with its errors."""
    if len(lhs.shape) != len(rhs.shape):
        raise ValueError("conv_general_dilated lhs and rhs must have the same number of "
                         f"dimensions, but got {lhs.shape} and {rhs.shape}.")
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if not feature_group_count > 0:
        raise ValueError("conv_general_dilated feature_group_count must be a positive integer, "
                         f"got {feature_group_count}.")
    lhs_features = lhs.shape[lhs_spec[1]]
    quot, rem = divmod(lhs_features, feature_group_count)
    if rem:
        raise ValueError("conv_general_dilated feature_group_count must divide lhs feature "
                         f"dimension size, but {feature_group_count} does not divide "
                         f"{lhs_features}.")
    if quot != rhs.shape[rhs_spec[1]]:
        raise ValueError("conv_general_dilated lhs feature dimension size divided by "
                         "feature_group_count must equal the rhs input feature dimension size, "
                         f"but {lhs_features} // {feature_group_count} != "
                         f"{rhs.shape[rhs_spec[1]]}.")
    out_features = rhs.shape[rhs_spec[0]]
    if out_features % feature_group_count:
        raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of feature_group_count, but {out_features} is not a "
                         f"multiple of {feature_group_count}.")
    if not batch_group_count > 0:
        raise ValueError("conv_general_dilated batch_group_count must be a positive integer, "
                         f"got {batch_group_count}.")
    lhs_batch = lhs.shape[lhs_spec[0]]
    if batch_group_count > 1 and lhs_batch % batch_group_count:
        raise ValueError("conv_general_dilated batch_group_count must divide lhs batch "
                         f"dimension size, but {batch_group_count} does not divide "
                         f"{lhs_batch}.")
    if out_features % batch_group_count:
        raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of batch_group_count, but {out_features} is not a "
                         f"multiple of {batch_group_count}.")
    if batch_group_count > 1 and feature_group_count > 1:
        raise ValueError("At most one of batch_group_count and feature_group_count may be > 1, "
                         f"got batch_group_count={batch_group_count} and "
                         f"feature_group_count={feature_group_count}")
    if len(rhs_spec) - 2 != len(window_strides):
        raise ValueError("conv_general_dilated window and window_strides must have the same "
                         f"number of dimensions, but got {len(rhs_spec) - 2} and "
                         f"{len(window_strides)}")
    lhs_t = dilate_shape(np.take(lhs.shape, lhs_spec), lhs_dilation)
    rhs_t = dilate_shape(np.take(rhs.shape, rhs_spec), rhs_dilation)
    out_t = conv_shape_tuple(lhs_t, rhs_t, window_strides, padding, batch_group_count)
    return tuple(int(d) for d in np.take(out_t, np.argsort(out_spec)))


def _validate_preferred(input_dtype: np.dtype, preferred: np.dtype) -> None:
    """JAX's compatibility rules between operand and preferred_element_type."""
    if not (dtypes.is_integer(input_dtype) and dtypes.is_float(preferred)):
        for kind in (np.integer, np.floating, np.complexfloating):
            if dtypes.issubdtype(input_dtype, kind) and not dtypes.issubdtype(preferred, kind):
                raise TypeError("Input type is incompatible with `preferred_element_type`. The "
                                "compatible combinations of (input_type, preferred_element_type)"
                                " are (integral, integral), (integral, floating), (floating, "
                                "floating), (complex, complex.")
        if (dtypes.issubdtype(input_dtype, np.signedinteger)
                and not dtypes.issubdtype(preferred, np.signedinteger)):
            raise TypeError("`preferred_element_type` must have the same signedness as the "
                            "original type.")
    if np.dtype(preferred).itemsize < np.dtype(input_dtype).itemsize:
        raise TypeError("`preferred_element_type` must not be narrower than the original type.")


def _conv_abstract(lhs: ShapedArray, rhs: ShapedArray, *, window_strides: tuple,
                   padding: tuple, lhs_dilation: tuple, rhs_dilation: tuple,
                   dimension_numbers: Any, feature_group_count: int, batch_group_count: int,
                   precision: Any, preferred_element_type: Any, out_sharding: Any = None
                   ) -> ShapedArray:
    if lhs.dtype != rhs.dtype:
        raise TypeError("lax.conv_general_dilated requires arguments to have the same dtypes, "
                        f"got {dtypes.dtype_name(lhs.dtype)}, {dtypes.dtype_name(rhs.dtype)}.")
    shape = _conv_shape(lhs, rhs, window_strides=window_strides, padding=padding,
                        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                        dimension_numbers=dimension_numbers,
                        feature_group_count=feature_group_count,
                        batch_group_count=batch_group_count)
    dtype = lhs.dtype
    if preferred_element_type is not None:
        _validate_preferred(dtype, preferred_element_type)
        dtype = preferred_element_type
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


# ---------------------------------------------------------------------------------------------
# NumPy implementation
# ---------------------------------------------------------------------------------------------

def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """Arithmetic type: float32 for half floats (XLA accumulates there), 64-bit integers
    (modular sums equal XLA's wrapped ones), int64 for bool (OR of ANDs is sum != 0)."""
    if dtype in (dtypes.float16, dtypes.bfloat16):
        return np.dtype(np.float32)
    if dtype == np.bool_:
        return np.dtype(np.int64)
    if dtypes.is_unsigned(dtype):
        return np.dtype(np.uint64)
    if dtypes.is_integer(dtype):
        return np.dtype(np.int64)
    return dtype


def _dilate_and_pad(x: np.ndarray, lhs_dilation: tuple, padding: tuple) -> np.ndarray:
    """x (N, C, spatial...) with `dilation - 1` zeros between elements and (possibly negative)
    edge padding, as one C-contiguous buffer."""
    if any(k != 1 for k in lhs_dilation):
        shape = x.shape[:2] + tuple(dilate_dim(d, k) for d, k in zip(x.shape[2:], lhs_dilation))
        spread = np.zeros(shape, x.dtype)
        spread[(slice(None), slice(None), *(slice(None, None, k) for k in lhs_dilation))] = x
        x = spread
    if all(lo == 0 and hi == 0 for lo, hi in padding):
        return np.ascontiguousarray(x)
    crop = tuple(slice(max(-lo, 0), max(d - max(-hi, 0), 0))
                 for d, (lo, hi) in zip(x.shape[2:], padding))
    x = x[(slice(None), slice(None), *crop)]
    out = np.zeros(x.shape[:2] + tuple(d + max(lo, 0) + max(hi, 0) for d, (lo, hi)
                                       in zip(x.shape[2:], padding)), x.dtype)
    out[(slice(None), slice(None), *(slice(max(lo, 0), max(lo, 0) + d)
                                     for d, (lo, _) in zip(x.shape[2:], padding)))] = x
    return out


def _windows(x: np.ndarray, out_sp: Sequence[int], k_sp: Sequence[int], strides: Sequence[int],
             rhs_dilation: Sequence[int]) -> np.ndarray:
    """View (..., out spatial..., kernel spatial...) of the trailing spatial axes of x."""
    nsp = len(out_sp)
    lead, sp_strides = x.strides[:-nsp] if nsp else x.strides, x.strides[x.ndim - nsp:]
    shape = (*x.shape[:x.ndim - nsp], *out_sp, *k_sp)
    strides_out = (*lead, *(st * s for st, s in zip(sp_strides, strides)),
                   *(st * d for st, d in zip(sp_strides, rhs_dilation)))
    return as_strided(x, shape, strides_out, writeable=False)


def _im2col(xg: np.ndarray, wg: np.ndarray, out_sp: tuple, k_sp: tuple, strides: tuple,
            rhs_dilation: tuple) -> np.ndarray:
    """xg (G, Nn, Cg, S...), wg (G, Og, Cg, K...) -> (G, Nn, Og, P...): the receptive fields
    copied once, in the order whose innermost run is longest, then one batched matmul."""
    G, Nn, Cg = xg.shape[:3]
    Og = wg.shape[1]
    nsp = len(out_sp)
    P, K = math.prod(out_sp), math.prod(k_sp)
    win = _windows(xg, out_sp, k_sp, strides, rhs_dilation)   # (G, Nn, Cg, O..., K...)
    o_axes = tuple(range(3, 3 + nsp))
    k_axes = tuple(range(3 + nsp, 3 + 2 * nsp))
    if nsp and out_sp[-1] >= k_sp[-1]:
        # (G, Cg*K, Nn*P): out[g] = W_g (Og, CgK) @ patches (CgK, NnP), one GEMM per group
        cols = np.ascontiguousarray(win.transpose(0, 2, *k_axes, 1, *o_axes))
        out = np.matmul(wg.reshape(G, Og, Cg * K), cols.reshape(G, Cg * K, Nn * P))
        return np.moveaxis(out.reshape(G, Og, Nn, *out_sp), 1, 2)
    # (G, Nn*P, Cg*K): out[g] = patches (NnP, CgK) @ W_g^T (CgK, Og)
    cols = np.ascontiguousarray(win.transpose(0, 1, *o_axes, 2, *k_axes))
    cols = cols.reshape(G, Nn * P, Cg * K)
    out = np.matmul(cols, wg.reshape(G, Og, Cg * K).transpose(0, 2, 1))
    out = out.reshape(G, Nn, *out_sp, Og)
    return np.moveaxis(out, -1, 2)


def _shifted_sums(xg: np.ndarray, wg: np.ndarray, out_sp: tuple, k_sp: tuple,
                  strides: tuple, rhs_dilation: tuple) -> np.ndarray:
    """xg (G, Nn, Cg, S...), wg (G, Og, Cg, K...) -> (G, Nn, Og, P...): every kernel tap times
    every input position in one matmul, then the K shifted, strided views of it summed."""
    G, Nn, Cg = xg.shape[:3]
    Og = wg.shape[1]
    sp = xg.shape[3:]
    K, S = math.prod(k_sp), math.prod(sp)
    taps = np.moveaxis(wg.reshape(G, Og, Cg, K), 3, 1).reshape(G, K * Og, Cg)
    x_cn = np.ascontiguousarray(xg.swapaxes(1, 2)).reshape(G, Cg, Nn * S)
    y = np.matmul(taps, x_cn).reshape(G, K, Og, Nn, *sp)   # one GEMM per group
    out = None
    for t, offset in enumerate(np.ndindex(*k_sp)):
        index = tuple(slice(o * d, o * d + (n - 1) * s + 1, s)
                      for o, d, n, s in zip(offset, rhs_dilation, out_sp, strides))
        part = y[(slice(None), t, slice(None), slice(None), *index)]
        if out is None:
            out = part.copy()
        else:
            out += part
    return np.moveaxis(out, 1, 2)


def _conv_impl(lhs: np.ndarray, rhs: np.ndarray, *, window_strides: tuple, padding: tuple,
               lhs_dilation: tuple, rhs_dilation: tuple, dimension_numbers: Any,
               feature_group_count: int, batch_group_count: int, precision: Any,
               preferred_element_type: Any, out_sharding: Any = None) -> np.ndarray:
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    out_dtype = preferred_element_type or lhs.dtype
    ct = _compute_dtype(np.dtype(out_dtype))
    x = lhs.transpose(lhs_spec).astype(ct, copy=False)
    w = rhs.transpose(rhs_spec).astype(ct, copy=False)
    x = _dilate_and_pad(x, lhs_dilation, padding)
    N, C = x.shape[:2]
    O, k_sp = w.shape[0], w.shape[2:]
    eff_k = [dilate_dim(k, d) for k, d in zip(k_sp, rhs_dilation)]
    out_sp = tuple(stride_dim(d, k, s) for d, k, s in zip(x.shape[2:], eff_k, window_strides))
    G = max(feature_group_count, batch_group_count)
    Og = O // G
    if batch_group_count > 1:
        xg = x.reshape(G, N // G, C, *x.shape[2:])
    else:
        xg = x.reshape(N, G, C // G, *x.shape[2:]).swapaxes(0, 1)
    wg = w.reshape(G, Og, *w.shape[1:])
    Nn, Cg = xg.shape[1], xg.shape[2]
    P, K = math.prod(out_sp), math.prod(k_sp)
    if Nn * Og * P == 0 or Cg * K == 0:
        outg = np.zeros((G, Nn, Og, *out_sp), ct)
    elif Cg * P <= Og * (math.prod(x.shape[2:]) + P):
        outg = _im2col(xg, wg, out_sp, k_sp, window_strides, rhs_dilation)
    else:
        outg = _shifted_sums(xg, wg, out_sp, k_sp, window_strides, rhs_dilation)
    out = outg.swapaxes(0, 1).reshape(Nn, G * Og, *out_sp)
    if ct == np.int64 and out_dtype == np.bool_:
        out = out != 0
    out = out.astype(out_dtype, copy=False)
    return out.transpose(np.argsort(out_spec))


conv_general_dilated_p = make_primitive("conv_general_dilated", _conv_impl, _conv_abstract)


# ---------------------------------------------------------------------------------------------
# lax functions
# ---------------------------------------------------------------------------------------------

def _shape(x: Any) -> tuple:
    return tuple(np.shape(x))


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int],
                         padding: str | Sequence[tuple[int, int]],
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
                         feature_group_count: int = 1, batch_group_count: int = 1,
                         precision: Any = None, preferred_element_type: Any = None,
                         out_sharding: Any = None) -> Any:
    """General n-d convolution with strides, padding, dilations, groups and any layout."""
    lhs_shape, rhs_shape = _shape(lhs), _shape(rhs)
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    if lhs_dilation is None:
        lhs_dilation = (1,) * (len(lhs_shape) - 2)
    elif isinstance(padding, str) and not len(lhs_dilation) == list(lhs_dilation).count(1):
        raise ValueError("String padding is not implemented for transposed convolution using "
                         "this op. Please either exactly specify the required padding or use "
                         "conv_transpose.")
    if rhs_dilation is None:
        rhs_dilation = (1,) * (len(rhs_shape) - 2)
    if isinstance(padding, str):
        lhs_perm, rhs_perm, _ = dnums
        k_shape = np.take(rhs_shape, rhs_perm)[2:]
        eff = [dilate_dim(k, r) for k, r in zip(k_shape, rhs_dilation)]
        padding = padtype_to_pads(np.take(lhs_shape, lhs_perm)[2:], eff, window_strides,
                                  padding)
    try:
        padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (ValueError, TypeError) as e:
        raise ValueError("padding argument to conv_general_dilated should be a string or a "
                         f"sequence of (low, high) pairs, got {padding}") from e
    pref = None if preferred_element_type is None else dtypes.check_user_dtype(
        preferred_element_type)
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=tuple(int(s) for s in window_strides), padding=padding,
        lhs_dilation=tuple(int(d) for d in lhs_dilation),
        rhs_dilation=tuple(int(d) for d in rhs_dilation), dimension_numbers=dnums,
        feature_group_count=operator.index(feature_group_count),
        batch_group_count=operator.index(batch_group_count),
        precision=canonicalize_precision(precision), preferred_element_type=pref,
        out_sharding=None)


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: str,
         precision: Any = None, preferred_element_type: Any = None) -> Any:
    """NCHW/OIHW convolution with 'SAME'/'VALID' (or explicit) padding."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int],
                              padding: str | Sequence[tuple[int, int]],
                              lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Any:
    """`conv` with explicit padding pairs and dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    """(before, after) padding of the fractionally strided conv for one spatial axis."""
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a = pads[0]
        pad_len = sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


_TRANSPOSE_DEFAULTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                       4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int],
                   padding: str | Sequence[tuple[int, int]],
                   rhs_dilation: Sequence[int] | None = None,
                   dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Any:
    """The fractionally strided convolution (the gradient-shaped 'deconvolution'), with
    TensorFlow-style defaults; `transpose_kernel` flips and swaps the kernel as Keras does."""
    from pyjax._src.primitives.shape import rev, transpose
    lhs_shape, rhs_shape = _shape(lhs), _shape(rhs)
    assert len(lhs_shape) == len(rhs_shape) and len(lhs_shape) >= 2
    ndims = len(lhs_shape)
    one = (1,) * (ndims - 2)
    if dimension_numbers is None:
        if ndims not in _TRANSPOSE_DEFAULTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_DEFAULTS[ndims]
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    k_sdims = np.take(rhs_shape, dn.rhs_spec)[2:]
    if rhs_dilation is None:
        rhs_dilation = (1,) * (len(rhs_shape) - 2)
    if use_consistent_padding or (isinstance(padding, str) and padding in {"SAME", "VALID"}):
        eff = [dilate_dim(k, r) for k, r in zip(k_sdims, rhs_dilation)]
        replicated = [padding] * len(strides) if isinstance(padding, str) else padding
        pads: Any = tuple(_conv_transpose_padding(k, s, p)
                          for k, s, p in zip(eff, strides, replicated))
    else:
        pads = padding
    if transpose_kernel:
        for axis in np.array(dn.rhs_spec)[2:]:
            rhs = rev(rhs, (int(axis),))
        perm = list(range(ndims))
        a, b = dn.rhs_spec[0], dn.rhs_spec[1]
        perm[a], perm[b] = perm[b], perm[a]
        rhs = transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, one, pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs: Any, filter_shape: Sequence[int],
                                 window_strides: Sequence[int],
                                 padding: str | Sequence[tuple[int, int]],
                                 lhs_dilation: Sequence[int] | None = None,
                                 rhs_dilation: Sequence[int] | None = None,
                                 dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
                                 precision: Any = None,
                                 preferred_element_type: Any = None) -> Any:
    """The receptive-field patches of a conv, flattened into the output feature axis (a conv
    with a one-hot kernel, as JAX builds it)."""
    from pyjax._src.primitives import elementwise as ew
    from pyjax._src.primitives.extra import asarray
    from pyjax._src.primitives.shape import broadcast_in_dim, broadcasted_iota, reshape, transpose
    lhs = asarray(lhs)
    filter_shape = tuple(filter_shape)
    dn = conv_dimension_numbers(lhs.shape, (1, 1) + filter_shape, dimension_numbers)
    lhs_spec, rhs_spec, _ = dn
    spatial = math.prod(filter_shape)
    channels = lhs.shape[lhs_spec[1]]
    dtype = dtypes.dtype_and_weak(lhs)[0]
    rows = ew.add(broadcasted_iota(np.int32, (spatial, spatial), 0), np.int32(0))
    eye = ew.convert_element_type(ew.eq(rows, broadcasted_iota(np.int32, (spatial, spatial), 1)),
                                  dtype)
    rhs = broadcast_in_dim(eye, (channels, spatial, spatial), (1, 2))
    rhs = reshape(rhs, (channels * spatial, 1, *filter_shape))
    perm = [i for i in range(rhs.ndim) if i not in (0, 1)]
    for src, dst in sorted(zip((0, 1), (rhs_spec[0], rhs_spec[1])), key=lambda p: p[1]):
        perm.insert(dst, src)
    rhs = transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                dn, feature_group_count=channels,
                                precision=None if precision is None else (precision, Precision.DEFAULT),
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs: Any, rhs: Any, window_strides: Sequence[int],
                               padding: str | Sequence[tuple[int, int]],
                               filter_shape: Sequence[int],
                               lhs_dilation: Sequence[int] | None = None,
                               rhs_dilation: Sequence[int] | None = None,
                               dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
                               precision: Any = None) -> Any:
    """Unshared ("locally connected") convolution: patches contracted with a kernel that has
    one filter per output position."""
    from pyjax._src.primitives.dot import dot_general
    from pyjax._src.primitives.extra import asarray
    from pyjax._src.primitives.shape import transpose
    lhs = asarray(lhs)
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dimension_numbers,
                                           precision=precision)
    _, rhs_spec, out_spec = conv_dimension_numbers(lhs.shape, (1, 1) + tuple(filter_shape),
                                                   dimension_numbers)
    lhs_b = list(out_spec[2:])
    rhs_b = list(rhs_spec[2:])
    rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
    lhs_b = sorted(lhs_b)
    out = dot_general(patches, rhs, (([out_spec[1]], [rhs_spec[1]]), (lhs_b, rhs_b)),
                      precision=precision)
    ndim = np.ndim(out)
    rest = [i for i in range(ndim) if i not in (ndim - 2, ndim - 1)]
    perm = list(rest)
    for src, dst in sorted(zip((ndim - 2, ndim - 1), (out_spec[0], out_spec[1])),
                           key=lambda p: p[1]):
        perm.insert(dst, src)
    return transpose(out, perm)


# ---------------------------------------------------------------------------------------------
# Autodiff: bilinear; the transposes are themselves convolutions (JAX's rules)
# ---------------------------------------------------------------------------------------------

def _spec_transpose(spec: Sequence[int]) -> tuple:
    return (spec[1], spec[0]) + tuple(spec[2:])


def vjp_lhs_padding(in_shape: Sequence[int], window_dimensions: Sequence[int],
                    window_strides: Sequence[int], out_shape: Sequence[int], padding: Sequence,
                    lhs_dilation: Sequence[int], rhs_dilation: Sequence[int]) -> list:
    """Padding of the conv that maps output cotangents back onto the lhs (NumPy ints, as
    JAX computes them)."""
    lhs_d = dilate_shape(in_shape, lhs_dilation)
    rhs_d = dilate_shape(window_dimensions, rhs_dilation)
    out_d = dilate_shape(out_shape, window_strides)
    before = np.subtract(rhs_d, [lo for lo, _ in padding]) - 1
    after = np.add(lhs_d, rhs_d) - 1 - out_d - before
    return list(zip(before, after))


def _vjp_rhs_padding(in_shape: Sequence[int], window_dimensions: Sequence[int],
                     window_strides: Sequence[int], out_shape: Sequence[int], padding: Sequence,
                     lhs_dilation: Sequence[int], rhs_dilation: Sequence[int]) -> list:
    if len(in_shape) == 0:
        return []
    lhs_d = dilate_shape(in_shape, lhs_dilation)
    rhs_d = dilate_shape(window_dimensions, rhs_dilation)
    out_d = dilate_shape(out_shape, window_strides)
    lows = [lo for lo, _ in padding]
    from_lhs = map(operator.sub, out_d, lhs_d)
    from_rhs = tuple(rd - pd - 1 for rd, pd in zip(rhs_d, lows))
    return list(zip(lows, map(operator.add, from_lhs, from_rhs)))


def _reshape_axis_into(src: int, dst: int, x: Any) -> Any:
    """Merge axis `src` into axis `dst` (numbered after removing src), src as the major part."""
    from pyjax._src.primitives.shape import reshape
    shape = np.shape(x)
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = list(np.delete(shape, src))
    new_shape[dst] *= shape[src]
    return reshape(x, new_shape, perm)


def _reshape_axis_out_of(src: int, size1: int, x: Any) -> Any:
    """Split axis `src` into (size1, rest)."""
    from pyjax._src.primitives.shape import reshape
    shape = list(np.shape(x))
    size2, ragged = divmod(shape[src], size1)
    assert not ragged
    shape[src:src + 1] = [size1, size2]
    return reshape(x, shape)


def _transpose_lhs(g: Any, lhs: Any, rhs: Any, *, window_strides: tuple, padding: tuple,
                   lhs_dilation: tuple, rhs_dilation: tuple, dimension_numbers: Any,
                   feature_group_count: int, batch_group_count: int, precision: Any,
                   preferred_element_type: Any, out_sharding: Any = None) -> Any:
    """The lhs cotangent: g convolved with the spatially reversed kernel, its in/out features
    swapped (groups moved into the output features), with strides as lhs dilation."""
    from pyjax._src.primitives.elementwise import convert_element_type
    from pyjax._src.primitives.shape import rev
    rhs_shape = np.shape(rhs)
    lhs_shape = lhs.aval.shape
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_sdims, rhs_sdims, out_sdims = lhs_spec[2:], rhs_spec[2:], out_spec[2:]
    t_rhs_spec = _spec_transpose(rhs_spec)
    if feature_group_count > 1:
        rhs = _reshape_axis_out_of(rhs_spec[0], feature_group_count, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
    elif batch_group_count > 1:
        rhs = _reshape_axis_out_of(rhs_spec[0], batch_group_count, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
        feature_group_count = batch_group_count
    trans_dnums = ConvDimensionNumbers(out_spec, t_rhs_spec, lhs_spec)
    pads = vjp_lhs_padding(np.take(lhs_shape, lhs_sdims), np.take(rhs_shape, rhs_sdims),
                           window_strides, np.take(np.shape(g), out_sdims), padding,
                           lhs_dilation, rhs_dilation)
    revd = rev(rhs, rhs_sdims)
    g_dtype = dtypes.dtype_and_weak(g)[0]
    if g_dtype != dtypes.dtype_and_weak(revd)[0]:
        revd = convert_element_type(revd, g_dtype)
    out = conv_general_dilated(g, revd, window_strides=lhs_dilation, padding=pads,
                               lhs_dilation=window_strides, rhs_dilation=rhs_dilation,
                               dimension_numbers=trans_dnums,
                               feature_group_count=feature_group_count, batch_group_count=1,
                               precision=precision,
                               preferred_element_type=preferred_element_type)
    if dtypes.dtype_and_weak(out)[0] != lhs.aval.dtype:
        out = convert_element_type(out, lhs.aval.dtype)
    if batch_group_count > 1:
        out = _reshape_axis_out_of(lhs_spec[1], batch_group_count, out)
        out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    return out


def _transpose_rhs(g: Any, lhs: Any, rhs: Any, *, window_strides: tuple, padding: tuple,
                   lhs_dilation: tuple, rhs_dilation: tuple, dimension_numbers: Any,
                   feature_group_count: int, batch_group_count: int, precision: Any,
                   preferred_element_type: Any, out_sharding: Any = None) -> Any:
    """The rhs cotangent: lhs convolved with g, batch and feature roles swapped (feature groups
    become batch groups and back), strides as rhs dilation."""
    from pyjax._src.primitives.elementwise import convert_element_type
    from pyjax._src.transforms import ad
    if np.size(g) == 0:
        return ad.Zero(rhs.aval)
    lhs_shape = np.shape(lhs)
    rhs_shape = rhs.aval.shape
    lhs_sdims, rhs_sdims, out_sdims = (s[2:] for s in dimension_numbers)
    lhs_t, rhs_t, out_t = map(_spec_transpose, dimension_numbers)
    if batch_group_count > 1:
        feature_group_count, batch_group_count = batch_group_count, 1
    elif feature_group_count > 1:
        batch_group_count, feature_group_count = feature_group_count, 1
    trans_dnums = ConvDimensionNumbers(lhs_t, out_t, rhs_t)
    pads = _vjp_rhs_padding(np.take(lhs_shape, lhs_sdims), np.take(rhs_shape, rhs_sdims),
                            window_strides, np.take(np.shape(g), out_sdims), padding,
                            lhs_dilation, rhs_dilation)
    g_dtype = dtypes.dtype_and_weak(g)[0]
    if g_dtype != dtypes.dtype_and_weak(lhs)[0]:
        lhs = convert_element_type(lhs, g_dtype)
    out = conv_general_dilated(lhs, g, window_strides=rhs_dilation, padding=pads,
                               lhs_dilation=lhs_dilation, rhs_dilation=window_strides,
                               dimension_numbers=trans_dnums,
                               feature_group_count=feature_group_count,
                               batch_group_count=batch_group_count, precision=precision,
                               preferred_element_type=preferred_element_type)
    if dtypes.dtype_and_weak(out)[0] != rhs.aval.dtype:
        out = convert_element_type(out, rhs.aval.dtype)
    return out


def _conv_transpose_rule(ct: Any, lhs: Any, rhs: Any, **params: Any) -> list:
    """Bilinear: exactly one operand is the linear (undefined) one."""
    from pyjax._src.transforms import ad
    if ad.is_undefined(lhs):
        if type(ct) is ad.Zero:
            return [ad.Zero(ad.tangent_aval(lhs.aval)), None]
        return [_transpose_lhs(ct, lhs, rhs, **params), None]
    if type(ct) is ad.Zero:
        return [None, ad.Zero(ad.tangent_aval(rhs.aval))]
    return [None, _transpose_rhs(ct, lhs, rhs, **params)]


# ---------------------------------------------------------------------------------------------
# Batching: the vmapped axis folded into the batch or feature axes (JAX's rule)
# ---------------------------------------------------------------------------------------------

def _conv_batch(vals: Sequence[Any], dims: Sequence[Any], *, window_strides: tuple,
                padding: tuple, lhs_dilation: tuple, rhs_dilation: tuple,
                dimension_numbers: Any, feature_group_count: int, batch_group_count: int,
                precision: Any, preferred_element_type: Any, out_sharding: Any = None) -> tuple:
    from pyjax._src.primitives.extra import full
    lhs, rhs = vals
    lhs_bdim, rhs_bdim = dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    params = dict(window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
                  rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
                  precision=precision, preferred_element_type=preferred_element_type)
    lshape, rshape = np.shape(lhs), np.shape(rhs)
    if ((lhs_bdim is not None and lshape[lhs_bdim] == 0)
            or (rhs_bdim is not None and rshape[rhs_bdim] == 0)):
        lu, ru = list(lshape), list(rshape)
        if lhs_bdim is not None:
            lu.pop(lhs_bdim)
        if rhs_bdim is not None:
            ru.pop(rhs_bdim)
        dtype = dtypes.dtype_and_weak(lhs)[0]
        shape = _conv_shape(ShapedArray(tuple(lu), dtype), ShapedArray(tuple(ru), dtype),
                            window_strides=window_strides, padding=padding,
                            lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                            dimension_numbers=dimension_numbers,
                            feature_group_count=feature_group_count,
                            batch_group_count=batch_group_count)
        return full((0,) + shape, 0, dtype if preferred_element_type is None
                    else preferred_element_type), 0
    conv = lambda l, r, fgc, bgc: conv_general_dilated(  # noqa: E731
        l, r, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
        feature_group_count=fgc, batch_group_count=bgc, precision=precision,
        preferred_element_type=preferred_element_type)
    if lhs_bdim is not None and rhs_bdim is not None:
        size = lshape[lhs_bdim]
        if batch_group_count > 1:
            new_lhs = _reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
            batch_group_count *= size
        else:
            new_lhs = _reshape_axis_into(lhs_bdim, lhs_spec[1], lhs)
            feature_group_count *= size
        new_rhs = _reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
        out = conv(new_lhs, new_rhs, feature_group_count, batch_group_count)
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    if lhs_bdim is not None:
        size = lshape[lhs_bdim]
        if batch_group_count == 1:
            new_lhs = _reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
            out = conv(new_lhs, rhs, feature_group_count, 1)
            return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
        new_lhs = _reshape_axis_out_of(lhs_spec[0] + int(lhs_bdim <= lhs_spec[0]),
                                       batch_group_count, lhs)
        new_lhs = _reshape_axis_into(lhs_bdim + int(lhs_spec[0] < lhs_bdim), lhs_spec[0] + 1,
                                     new_lhs)
        new_lhs = _reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
        out = conv(new_lhs, rhs, feature_group_count, batch_group_count)
        return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
    size = rshape[rhs_bdim]
    if feature_group_count == 1 and batch_group_count == 1:
        new_rhs = _reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
        out = conv(lhs, new_rhs, feature_group_count, batch_group_count)
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    groups = feature_group_count if feature_group_count > 1 else batch_group_count
    new_rhs = _reshape_axis_out_of(rhs_spec[0] + int(rhs_bdim <= rhs_spec[0]), groups, rhs)
    new_rhs = _reshape_axis_into(rhs_bdim + int(rhs_spec[0] < rhs_bdim), rhs_spec[0] + 1,
                                 new_rhs)
    new_rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
    out = conv(lhs, new_rhs, feature_group_count, batch_group_count)
    out = _reshape_axis_out_of(out_spec[1], groups, out)
    out = _reshape_axis_out_of(out_spec[1] + 1, size, out)
    out = _reshape_axis_into(out_spec[1], out_spec[1] + 1, out)
    return out, out_spec[1]


def _register_rules() -> None:
    from pyjax._src.transforms import ad
    ad.defjvp(conv_general_dilated_p,
              lambda g, x, y, **params: conv_general_dilated_p.bind(g, y, **params),
              lambda g, x, y, **params: conv_general_dilated_p.bind(x, g, **params))
    conv_general_dilated_p.transpose = _conv_transpose_rule
    conv_general_dilated_p.batch = _conv_batch


_register_rules()
