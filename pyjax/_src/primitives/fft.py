"""lax.fft: the `fft` primitive (complex FFT and its inverse, real-to-complex and back, over the
trailing `len(fft_lengths)` axes), computed with scipy.fft in the operand's precision."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.numpy.util import staged_as_jit
from pyjax._src.primitives import elementwise as ew
from pyjax._src.primitives import shape as shp
from pyjax._src.primitives._rules import make_primitive
from pyjax._src.primitives.enums import FftType
from pyjax._src.transforms import ad, batching


_BY_NAME = {"fft": FftType.FFT, "FFT": FftType.FFT, "ifft": FftType.IFFT, "IFFT": FftType.IFFT,
            "rfft": FftType.RFFT, "RFFT": FftType.RFFT, "irfft": FftType.IRFFT,
            "IRFFT": FftType.IRFFT}


def _real_of(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.finfo(dtype).dtype)


def _fft_abstract(x: ShapedArray, *, fft_type: FftType, fft_lengths: tuple) -> ShapedArray:
    k = len(fft_lengths)
    if k > x.ndim:
        raise ValueError(f"FFT input shape {x.shape} must have at least as many input "
                         f"dimensions as fft_lengths {fft_lengths}.")
    if fft_type == FftType.RFFT:
        if x.dtype not in (np.float32, np.float64):
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        if x.shape[-k:] != fft_lengths:
            raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal to "
                             f"fft_lengths {fft_lengths}")
        shape = x.shape[:-k] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
        dtype = dtypes.to_complex_dtype(x.dtype)
    elif fft_type == FftType.IRFFT:
        if not dtypes.is_complex(x.dtype):
            raise ValueError(f"IRFFT input must be complex64 or complex128, got {x.dtype}")
        if x.shape[-k:-1] != fft_lengths[:-1]:
            raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must be equal to "
                             f"all except the last fft_length, got {fft_lengths=}")
        shape = x.shape[:-k] + fft_lengths
        dtype = _real_of(x.dtype)
    else:
        if not dtypes.is_complex(x.dtype):
            raise ValueError(f"FFT input must be complex64 or complex128, got {x.dtype}")
        if x.shape[-k:] != fft_lengths:
            raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to "
                             f"fft_lengths {fft_lengths}")
        shape, dtype = x.shape, x.dtype
    return ShapedArray(tuple(shape), dtype, x.weak_type)


def _fft_impl(x: np.ndarray, *, fft_type: FftType, fft_lengths: tuple) -> np.ndarray:
    import scipy.fft  # noqa: PLC0415 - SciPy loads on first use
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    out_dtype = _fft_abstract(ShapedArray(x.shape, x.dtype), fft_type=fft_type,
                              fft_lengths=fft_lengths).dtype
    if x.size == 0 or math.prod(fft_lengths) == 0:
        shape = _fft_abstract(ShapedArray(x.shape, x.dtype), fft_type=fft_type,
                              fft_lengths=fft_lengths).shape
        return np.zeros(shape, out_dtype)
    fn = {FftType.FFT: scipy.fft.fftn, FftType.IFFT: scipy.fft.ifftn,
          FftType.RFFT: scipy.fft.rfftn, FftType.IRFFT: scipy.fft.irfftn}[fft_type]
    return np.asarray(fn(x, s=fft_lengths, axes=axes)).astype(out_dtype, copy=False)


fft_p = make_primitive("fft", _fft_impl, _fft_abstract)


def _fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    if isinstance(fft_type, str):
        if fft_type not in _BY_NAME:
            raise ValueError(f"Unknown FFT type '{fft_type}'")
        typ = _BY_NAME[fft_type]
    elif isinstance(fft_type, FftType):
        typ = fft_type
    else:
        raise TypeError(f"Unknown FFT type value '{fft_type}'")
    dtype = dtypes.dtype_and_weak(x)[0]
    if typ == FftType.RFFT:
        if dtypes.is_complex(dtype):
            raise ValueError("only real valued inputs supported for rfft")
        x = ew.convert_element_type(x, dtypes.to_inexact_dtype(dtype))
    else:
        x = ew.convert_element_type(x, dtypes.to_complex_dtype(dtype))
    if len(fft_lengths) == 0:
        return x
    return fft_p.bind(x, fft_type=typ, fft_lengths=tuple(int(n) for n in fft_lengths))


_fft.__name__ = "fft"
_fft_jit = staged_as_jit(_fft, static_argnums=(1, 2))


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """The FFT of `fft_type` over x's trailing len(fft_lengths) axes (jitted, as in JAX)."""
    return _fft_jit(x, fft_type, tuple(fft_lengths))


# -- transposes (fft is linear) -----------------------------------------------------------------

def _half_spectrum_mask(t: Any, n_out: int, odd: bool, dtype: Any) -> Any:
    """2 for the bins counted twice in a real signal's spectrum, 1 for DC (and Nyquist)."""
    from pyjax._src.primitives.extra import full_like
    from pyjax._src.primitives.indexing import dynamic_update_slice
    mask = full_like(t, 2.0, shape=(n_out,), dtype=dtype)
    mask = dynamic_update_slice(mask, full_like(t, 1.0, shape=(1,), dtype=dtype), (0,))
    if not odd:
        mask = dynamic_update_slice(mask, full_like(t, 1.0, shape=(1,), dtype=dtype),
                                    (n_out - 1,))
    return mask


@staged_as_jit(static_argnums=(1,))
def _rfft_transpose(t: Any, fft_lengths: tuple) -> Any:
    mask = _half_spectrum_mask(t, np.shape(t)[-1], fft_lengths[-1] % 2 == 1, None)
    mask = shp.expand_dims(mask, tuple(range(np.ndim(t) - 1)))
    return math.prod(fft_lengths) * fft(ew.conj(t) / mask, FftType.IRFFT, fft_lengths)


def _irfft_transpose(t: Any, fft_lengths: tuple) -> Any:
    x = fft(t, FftType.RFFT, fft_lengths)
    mask = _half_spectrum_mask(t, np.shape(x)[-1], fft_lengths[-1] % 2 == 1, x.dtype)
    scale = 1 / math.prod(fft_lengths)
    out = scale * shp.expand_dims(mask, tuple(range(np.ndim(x) - 1))) * x
    return ew.conj(out)


def _fft_transpose(t: Any, operand: Any, *, fft_type: FftType, fft_lengths: tuple) -> list:
    if type(t) is ad.Zero:
        return [ad.Zero(operand.aval)]
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(t, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(t, fft_lengths)]
    return [fft(t, fft_type, fft_lengths)]


def _fft_batch(vals: Sequence[Any], dims: Sequence[Any], *, fft_type: FftType,
               fft_lengths: tuple) -> tuple:
    x = batching.move_axis(vals[0], dims[0], 0)
    return fft(x, fft_type, fft_lengths), 0


ad.deflinear(fft_p, _fft_transpose)
fft_p.batch = _fft_batch
