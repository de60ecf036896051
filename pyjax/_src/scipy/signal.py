"""jax.scipy.signal: N-d convolution and correlation (direct on conv_general_dilated, or by
FFT), detrend, and the windowed-FFT family (stft, istft, csd, welch) with SciPy's defaults,
following JAX 0.10.2's recipes so traced programs print JAX's jaxprs."""
from __future__ import annotations

import math
import operator
import warnings
from functools import partial
from typing import Any, Callable, Sequence

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core.trace_state import note_side_effect
from pyjax._src.backend.dispatch import as_operand
from pyjax._src.compat.core import concrete_or_error
from pyjax._src.core import dtypes
from pyjax._src.numpy.lax_numpy import _index_tuple
from pyjax._src.numpy.util import (
    canonicalize_axis, check_arraylike, promote_dtypes_complex, promote_dtypes_inexact)
from pyjax._src.transforms.batching import vmap

_MODES = ("full", "same", "valid")


# ---------------------------------------------------------------------------------------------
# convolution and correlation
# ---------------------------------------------------------------------------------------------

def fftconvolve(in1: Any, in2: Any, mode: str = "full", axes: Sequence[int] | None = None) -> Any:
    """The N-d convolution of in1 and in2 through FFTs (over `axes`; the other axes, of equal
    sizes, are batched)."""
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = promote_dtypes_inexact(in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ["same", "full", "valid"]:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    conv = partial(_fftconvolve_unbatched, mode=mode)
    if axes is None:
        return conv(in1, in2)
    axes = tuple(canonicalize_axis(ax, in1.ndim) for ax in _index_tuple(axes))
    mapped_axes = set(range(in1.ndim)) - set(axes)
    if any(in1.shape[i] != in2.shape[i] for i in mapped_axes):
        raise ValueError(f"mapped axes must have same shape; got {in1.shape=} {in2.shape=} "
                         f"{axes=}")
    for ax in sorted(mapped_axes):
        conv = vmap(conv, in_axes=ax, out_axes=ax)
    return conv(in1, in2)


def _fftconvolve_unbatched(in1: Any, in2: Any, mode: str) -> Any:
    full_shape = tuple(s1 + s2 - 1 for s1, s2 in zip(in1.shape, in2.shape))
    if mode == "valid":
        no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
        swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
        if not (no_swap or swap):
            raise ValueError("For 'valid' mode, One input must be at least as "
                             "large as the other in every dimension.")
        if swap:
            in1, in2 = in2, in1
    if all(s1 == 1 or s2 == 1 for s1, s2 in zip(in1.shape, in2.shape)):
        conv = in1 * in2
    else:
        if jnp.iscomplexobj(in1):
            fft, ifft = jnp.fft.fftn, jnp.fft.ifftn
        else:
            fft, ifft = jnp.fft.rfftn, jnp.fft.irfftn
        conv = ifft(fft(in1, full_shape) * fft(in2, full_shape), full_shape)
    if mode == "full":
        out_shape = full_shape
    elif mode == "same":
        out_shape = in1.shape
    else:
        out_shape = tuple(s1 - s2 + 1 for s1, s2 in zip(in1.shape, in2.shape))
    start_indices = tuple((full - out) // 2 for full, out in zip(full_shape, out_shape))
    return lax.dynamic_slice(conv, start_indices, out_shape)


def _convolve_nd(in1: Any, in2: Any, mode: str, *, precision: Any) -> Any:
    """Direct N-d convolution: one conv_general_dilated of the larger input with the flipped
    smaller one, padded for `mode` (SciPy's centring for 'same')."""
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError("zero-size arrays not supported in convolutions, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    in1, in2 = promote_dtypes_inexact(in1, in2)
    no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    shape_o = in2.shape
    if swap:
        in1, in2 = in2, in1
    shape = in2.shape
    in2 = jnp.flip(in2)
    if mode == "valid":
        padding = [(0, 0) for _ in shape]
    elif mode == "same":
        padding = [(s - 1 - (s_o - 1) // 2, s - s_o + (s_o - 1) // 2)
                   for s, s_o in zip(shape, shape_o)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    strides = tuple(1 for _ in shape)
    result = lax.conv_general_dilated(in1[None, None], in2[None, None], strides, padding,
                                      precision=precision)
    return result[0, 0]


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
             precision: Any = None) -> Any:
    """The N-d convolution of in1 and in2; method 'auto'/'direct' (conv_general_dilated) or
    'fft'."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ["direct", "auto"]:
        return _convolve_nd(in1, in2, mode, precision=precision)
    raise ValueError(f"Got {method=}; expected 'auto', 'fft', or 'direct'.")


def _check_2d(name: str, in1: Any, in2: Any, boundary: str, fillvalue: Any) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
               fillvalue: float = 0, precision: Any = None) -> Any:
    """The 2-d convolution of in1 and in2 (zero fill only)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision=precision)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
              precision: Any = None) -> Any:
    """The N-d cross-correlation: convolution with in2 conjugated and flipped."""
    return convolve(in1, jnp.flip(in2.conj()), mode, precision=precision, method=method)


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
                fillvalue: float = 0, precision: Any = None) -> Any:
    """The 2-d cross-correlation, oriented like SciPy's when in2 is the larger input."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    same_shape = all(s1 == s2 for s1, s2 in zip(in1.shape, in2.shape))
    in2_first = swap and ((mode == "valid" and not same_shape) or mode == "full")
    if not in2_first:
        return jnp.flip(_convolve_nd(jnp.flip(in1), in2.conj(), mode, precision=precision))
    result = _convolve_nd(jnp.flip(in2), in1.conj(), mode, precision=precision)
    return result.conj() if mode == "full" else result


# ---------------------------------------------------------------------------------------------
# detrend
# ---------------------------------------------------------------------------------------------

def detrend(data: Any, axis: int = -1, type: str = "linear",
            bp: int | Sequence[int] | np.ndarray = 0, overwrite_data: None = None) -> Any:
    """data less its mean ('constant') or less a least-squares line fitted between each pair
    of breakpoints `bp` ('linear')."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ["constant", "linear"]:
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    data_arr, = promote_dtypes_inexact(jnp.asarray(data))
    if type == "constant":
        return data_arr - data_arr.mean(axis, keepdims=True)
    N = data_arr.shape[axis]
    bp_arr = np.sort(np.unique(np.r_[0, bp, N]))  # bp is static: NumPy, not staged ops
    if bp_arr[0] < 0 or bp_arr[-1] > N:
        raise ValueError("Breakpoints must be non-negative and less than length of data "
                         "along given axis.")
    data_arr = jnp.moveaxis(data_arr, axis, 0)
    shape = data_arr.shape
    data_arr = data_arr.reshape(N, -1)
    for m in range(len(bp_arr) - 1):
        npts = bp_arr[m + 1] - bp_arr[m]
        A = jnp.vstack([jnp.ones(npts, dtype=data_arr.dtype),
                        jnp.arange(1, npts + 1, dtype=data_arr.dtype)
                        / npts.astype(data_arr.dtype)]).T
        sl = slice(bp_arr[m], bp_arr[m + 1])
        coef, *_ = jnp.linalg.lstsq(A, data_arr[sl])
        data_arr = data_arr.at[sl].add(-jnp.matmul(A, coef, precision=lax.Precision.HIGHEST))
    return jnp.moveaxis(data_arr.reshape(shape), 0, axis)


# ---------------------------------------------------------------------------------------------
# windowed FFTs
# ---------------------------------------------------------------------------------------------

def _hann_or_scipy_window(window: Any, nperseg: int) -> Any:
    """The periodic Hann window (computed here), or SciPy's get_window for other names."""
    if isinstance(window, str) and window == "hann":
        if nperseg == 1:
            return jnp.array([1.0])
        return jnp.sin(jnp.linspace(0, np.pi, nperseg, endpoint=False)) ** 2
    try:
        from scipy.signal import get_window
    except ImportError as err:
        raise ImportError(f"scipy must be available to use {window=}") from err
    return get_window(window, nperseg)


def _triage_segments(window: Any, nperseg: int | None, input_length: int,
                     dtype: Any) -> tuple[Any, int]:
    """The window as an array of `dtype`, and the segment length (256 or the signal's length
    for named windows, the window's length for arrays)."""
    if isinstance(window, (str, tuple)):
        nperseg_int = input_length if nperseg is None else int(nperseg)
        if nperseg_int > input_length:
            note_side_effect()
            warnings.warn(f"nperseg={nperseg_int} is greater than {input_length=},"
                          f" using nperseg={input_length}")
            nperseg_int = input_length
        win = jnp.array(_hann_or_scipy_window(window, nperseg_int), dtype=dtype)
    else:
        win = jnp.asarray(window, dtype=dtype)
        nperseg_int = win.size if nperseg is None else int(nperseg)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if input_length < win.size:
            raise ValueError("window is longer than input signal")
        if nperseg_int != win.size:
            raise ValueError("value specified for nperseg is different from length of window")
    return win, nperseg_int


def _median_bias(n: int) -> Any:
    """The median of n periodograms over their mean (Allen et al., FINDCHIRP, appendix B)."""
    ii_2 = jnp.arange(2., n, 2)
    return 1 + jnp.sum(1. / (ii_2 + 1) - 1. / ii_2)


def _fft_helper(x: Any, win: Any, detrend_func: Callable[[Any], Any], nperseg: int,
                noverlap: int, nfft: int | None, sides: str) -> Any:
    """FFTs of the detrended, windowed segments of x's last axis: (..., segments, freqs)."""
    if x.dtype.kind == "i":
        x = x.astype(win.dtype)
    *batch_shape, signal_length = x.shape
    if nperseg == 1 and noverlap == 0:
        result = x[..., np.newaxis]
    else:
        step = nperseg - noverlap
        starts = jnp.arange(signal_length - nperseg + 1, step=step)
        slice_func = partial(lax.dynamic_slice_in_dim, operand=x, slice_size=nperseg, axis=-1)
        result = vmap(slice_func, out_axes=-2)(start_index=starts)
    result = detrend_func(result)
    if jnp.iscomplexobj(win):
        result, = promote_dtypes_complex(result)
    result = win.reshape((1,) * len(batch_shape) + (1, nperseg)) * result
    if sides == "twosided":
        return jnp.fft.fft(result, n=nfft)
    return jnp.fft.rfft(result.real, n=nfft)


def odd_ext(x: Any, n: int, axis: int = -1) -> Any:
    """x extended by n points at both ends of `axis` with odd symmetry about the end points."""
    if n < 1:
        return x
    if n > x.shape[axis] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {x.shape[axis] - 1}.")
    left_end = lax.slice_in_dim(x, 0, 1, axis=axis)
    left_ext = jnp.flip(lax.slice_in_dim(x, 1, n + 1, axis=axis), axis=axis)
    right_end = lax.slice_in_dim(x, -1, None, axis=axis)
    right_ext = jnp.flip(lax.slice_in_dim(x, -(n + 1), -1, axis=axis), axis=axis)
    return jnp.concatenate((2 * left_end - left_ext, x, 2 * right_end - right_ext), axis=axis)


def _pad_ext(mode: str, **kwargs: Any) -> Callable[..., Any]:
    """A boundary extension by n points at both ends of `axis` with jnp.pad's `mode`."""
    def pad(x: Any, n: int, axis: int = -1) -> Any:
        pad_width = [(0, 0) for _ in range(x.ndim)]
        pad_width[axis] = (n, n)
        return jnp.pad(x, pad_width, mode, **kwargs)
    return pad


_BOUNDARY_FUNCS: dict[Any, Callable[..., Any]] = {
    "even": _pad_ext("reflect"),
    "odd": odd_ext,
    "constant": _pad_ext("edge"),
    "zeros": _pad_ext("constant", constant_values=0.0),
    None: lambda x, *args, **kwargs: x,
}


def _spectral_helper(x: Any, y: Any, fs: Any = 1.0, window: Any = "hann",
                     nperseg: int | None = None, noverlap: int | None = None,
                     nfft: int | None = None, detrend_type: Any = "constant",
                     return_onesided: bool = True, scaling: str = "density", axis: int = -1,
                     mode: str = "psd", boundary: str | None = None,
                     padded: bool = False) -> tuple[Any, Any, Any]:
    """(freqs, times, spectra) of x (or the cross spectra of x and y when y is given) as
    SciPy's _spectral_helper computes them; y None means the auto-spectrum."""
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    if boundary not in _BOUNDARY_FUNCS:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         f"{list(_BOUNDARY_FUNCS.keys())}")
    axis = concrete_or_error(operator.index, axis, "axis of windowed-FFT")
    axis = canonicalize_axis(axis, x.ndim)
    if y is None:
        check_arraylike("spectral_helper", x)
        x, = promote_dtypes_inexact(x)
        y_arr = x
        outershape = x.shape[:axis] + x.shape[axis + 1:]
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        check_arraylike("spectral_helper", x, y)
        x, y_arr = promote_dtypes_inexact(x, y)
        if x.ndim != y_arr.ndim:
            raise ValueError("two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        try:
            outershape = jnp.broadcast_shapes(x.shape[:axis] + x.shape[axis + 1:],
                                              y_arr.shape[:axis] + y_arr.shape[axis + 1:])
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = dtypes.to_complex_dtype(x.dtype)
    freq_dtype = np.finfo(result_dtype).dtype
    nperseg_int = 0
    if nperseg is not None:
        nperseg_int = concrete_or_error(int, nperseg, "nperseg of windowed-FFT")
        if nperseg_int < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg_int = _triage_segments(window, nperseg if nperseg is None else nperseg_int,
                                        input_length=x.shape[axis], dtype=x.dtype)
    if noverlap is None:
        noverlap_int = nperseg_int // 2
    else:
        noverlap_int = concrete_or_error(int, noverlap, "noverlap of windowed-FFT")
    if nfft is None:
        nfft_int = nperseg_int
    else:
        nfft_int = concrete_or_error(int, nfft, "nfft of windowed-FFT")
    if y is None:
        if x.size == 0:
            return (jnp.zeros(x.shape, freq_dtype), jnp.zeros(x.shape, freq_dtype),
                    jnp.zeros(x.shape, result_dtype))
    elif x.size == 0 or y_arr.size == 0:
        shape = tuple(outershape[:axis]) + (min(x.shape[axis], y_arr.shape[axis]),) + tuple(
            outershape[axis:])
        return (jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype),
                jnp.zeros(shape, result_dtype))
    x = jnp.moveaxis(x, axis, -1)
    if y is not None and y_arr.ndim > 1:
        y_arr = jnp.moveaxis(y_arr, axis, -1)
    if y is not None and x.shape[-1] != y_arr.shape[-1]:  # zero-pad the shorter one
        if x.shape[-1] < y_arr.shape[-1]:
            pad_shape = list(x.shape)
            pad_shape[-1] = y_arr.shape[-1] - x.shape[-1]
            x = jnp.concatenate((x, jnp.zeros_like(x, shape=pad_shape)), -1)
        else:
            pad_shape = list(y_arr.shape)
            pad_shape[-1] = x.shape[-1] - y_arr.shape[-1]
            y_arr = jnp.concatenate((y_arr, jnp.zeros_like(x, shape=pad_shape)), -1)
    if nfft_int < nperseg_int:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int
    if boundary is not None:
        ext_func = _BOUNDARY_FUNCS[boundary]
        x = ext_func(x, nperseg_int // 2, axis=-1)
        if y is not None:
            y_arr = ext_func(y_arr, nperseg_int // 2, axis=-1)
    if padded:  # a whole number of segments
        nadd = (-(x.shape[-1] - nperseg_int) % nstep) % nperseg_int
        x = jnp.concatenate((x, jnp.zeros_like(x, shape=(*x.shape[:-1], nadd))), axis=-1)
        if y is not None:
            y_arr = jnp.concatenate(
                (y_arr, jnp.zeros_like(x, shape=(*y_arr.shape[:-1], nadd))), axis=-1)
    detrend_func: Any
    if isinstance(detrend_type, str):
        detrend_func = partial(detrend, type=detrend_type, axis=-1)
    elif callable(detrend_type):
        if axis != -1:
            def detrend_func(d: Any) -> Any:
                # the user's function sees the data axis where it was given
                return jnp.moveaxis(detrend_type(jnp.moveaxis(d, axis, -1)), -1, axis)
        else:
            detrend_func = detrend_type
    elif not detrend_type:
        def detrend_func(d: Any) -> Any:
            return d
    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")
    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = jnp.sqrt(scale)
    scale, = promote_dtypes_complex(scale)
    sides = "onesided"
    if not return_onesided:
        sides = "twosided"
    elif jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        sides = "twosided"
        note_side_effect()
        warnings.warn("Input data is complex, switching to return_onesided=False")
    if sides == "twosided":
        freqs = jnp.fft.fftfreq(nfft_int, 1 / fs, dtype=freq_dtype)
    else:
        freqs = jnp.fft.rfftfreq(nfft_int, 1 / fs, dtype=freq_dtype)
    result = _fft_helper(x, win, detrend_func, nperseg_int, noverlap_int, nfft_int, sides)
    if y is not None:
        result_y = _fft_helper(y_arr, win, detrend_func, nperseg_int, noverlap_int, nfft_int,
                               sides)
        result = jnp.conjugate(result) * result_y
    elif mode == "psd":
        result = jnp.conjugate(result) * result
    result *= scale
    if sides == "onesided" and mode == "psd":  # fold in the negative frequencies
        end = None if nfft_int % 2 else -1
        result = result.at[..., 1:end].mul(2)
    time = jnp.arange(nperseg_int / 2, x.shape[-1] - nperseg_int / 2 + 1,
                      nperseg_int - noverlap_int, dtype=freq_dtype) / fs
    if boundary is not None:
        time -= nperseg_int / 2 / fs
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = result.real
    result = jnp.moveaxis(result, -1, axis)
    return freqs, time, result


def stft(x: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int = 256,
         noverlap: int | None = None, nfft: int | None = None, detrend: Any = False,
         return_onesided: bool = True, boundary: str | None = "zeros", padded: bool = True,
         axis: int = -1) -> tuple[Any, Any, Any]:
    """(f, t, Zxx): the short-time Fourier transform of x along `axis`."""
    return _spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                            return_onesided, scaling="spectrum", axis=axis, mode="stft",
                            boundary=boundary, padded=padded)


def csd(x: Any, y: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant",
        return_onesided: bool = True, scaling: str = "density", axis: int = -1,
        average: str = "mean") -> tuple[Any, Any]:
    """(f, Pxy): the cross power spectral density of x and y by Welch's method (y None: the
    PSD of x, real)."""
    freqs, _, Pxy = _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                                     return_onesided, scaling, axis, mode="psd")
    if y is not None:
        Pxy = Pxy + 0j  # complex even where x is y
    if Pxy.ndim >= 2 and Pxy.size > 0:
        if Pxy.shape[-1] > 1:
            if average == "median":
                bias = _median_bias(Pxy.shape[-1]).astype(Pxy.dtype)
                if jnp.iscomplexobj(Pxy):
                    Pxy = (jnp.median(jnp.real(Pxy), axis=-1)
                           + 1j * jnp.median(jnp.imag(Pxy), axis=-1))
                else:
                    Pxy = jnp.median(Pxy, axis=-1)
                Pxy /= bias
            elif average == "mean":
                Pxy = Pxy.mean(axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            Pxy = jnp.reshape(Pxy, Pxy.shape[:-1])
    return freqs, Pxy


def welch(x: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant",
          return_onesided: bool = True, scaling: str = "density", axis: int = -1,
          average: str = "mean") -> tuple[Any, Any]:
    """(f, Pxx): the power spectral density of x by Welch's method."""
    freqs, Pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, Pxx.real


def _overlap_and_add(x: Any, step_size: int) -> Any:
    """Sum frames (..., frames, frame_length) placed `step_size` apart: (..., output_size).

    The frames are cut into step-sized pieces; padding each piece-column by one frame and
    re-reading it with one row fewer shifts every frame onto its output position, so one sum
    adds them all (TensorFlow's overlap_and_add)."""
    check_arraylike("_overlap_and_add", x)
    step_size = concrete_or_error(int, step_size, "step_size for overlap_and_add")
    if x.ndim < 2:
        raise ValueError("Input must have (..., frames, frame_length) shape.")
    *batch_shape, nframes, segment_len = x.shape
    flat_batchsize = math.prod(batch_shape)
    x = x.reshape((flat_batchsize, nframes, segment_len))
    output_size = step_size * (nframes - 1) + segment_len
    nstep_per_segment = 1 + (segment_len - 1) // step_size
    padded_segment_len = nstep_per_segment * step_size
    x = jnp.pad(x, ((0, 0), (0, 0), (0, padded_segment_len - segment_len)))
    x = x.reshape((flat_batchsize, nframes, nstep_per_segment, step_size))
    x = x.transpose((0, 2, 1, 3))  # (batch, pieces, frames, step)
    x = jnp.pad(x, ((0, 0), (0, 0), (0, nframes), (0, 0)))
    shrunken = x.shape[2] - 1
    x = x.reshape((flat_batchsize, -1))
    x = x[:, :(nstep_per_segment * shrunken * step_size)]
    x = x.reshape((flat_batchsize, nstep_per_segment, shrunken * step_size))
    x = x.sum(axis=1)[:, :output_size]
    return x.reshape(tuple(batch_shape) + (-1,))


def istft(Zxx: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True,
          boundary: bool = True, time_axis: int = -1, freq_axis: int = -2) -> tuple[Any, Any]:
    """(t, x): the signal whose STFT is Zxx, by inverse FFTs and weighted overlap-add."""
    check_arraylike("istft", Zxx)
    Zxx = as_operand(Zxx)
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonicalize_axis(freq_axis, Zxx.ndim)
    time_axis = canonicalize_axis(time_axis, Zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = jnp.asarray(Zxx, dtype=dtypes.to_complex_dtype(Zxx.dtype))
    n_default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
    nperseg_int = concrete_or_error(int, nperseg or n_default,
                                    "nperseg: segment length of STFT")
    if nperseg_int < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft_int = n_default
        if input_onesided and nperseg_int == n_default + 1:
            nfft_int += 1  # odd nperseg, no FFT padding
    else:
        nfft_int = concrete_or_error(int, nfft, "nfft of STFT")
    if nfft_int < nperseg_int:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg "
                         f"({nperseg_int}).")
    noverlap_int = concrete_or_error(int, noverlap or nperseg_int // 2, "noverlap of STFT")
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int
    if time_axis != Zxx.ndim - 1 or freq_axis != Zxx.ndim - 2:
        outer_idxs = tuple(i for i in range(Zxx.ndim) if i not in {time_axis, freq_axis})
        Zxx = jnp.transpose(Zxx, outer_idxs + (freq_axis, time_axis))
    ifunc = jnp.fft.irfft if input_onesided else jnp.fft.ifft
    # (..., frame length, frames); as in JAX the caller's nfft (not nfft_int) sets the inverse
    # length, so an odd nperseg needs an explicit nfft
    xsubs = ifunc(Zxx, axis=-2, n=nfft)[..., :nperseg_int, :]
    if isinstance(window, (str, tuple)):
        win = _hann_or_scipy_window(window, nperseg_int)
        if isinstance(window, str) and window == "hann":
            win = win.astype(xsubs.dtype)
        else:
            win = jnp.array(win, dtype=xsubs.dtype)
    else:
        win = jnp.asarray(window)
        if len(win.shape) != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg_int:
            raise ValueError(f"window must have length of {nperseg_int}")
    xsubs *= win.sum()  # undoes the 'spectrum' scaling
    win = lax.expand_dims(win, (*range(xsubs.ndim - 2), -1))
    x = _overlap_and_add((xsubs * win).swapaxes(-2, -1), nstep)
    win_squared = jnp.repeat(win * win, xsubs.shape[-1], axis=-1)
    norm = _overlap_and_add(win_squared.swapaxes(-2, -1), nstep)
    if boundary:  # drop the extension points
        x = x[..., nperseg_int // 2:-(nperseg_int // 2)]
        norm = norm[..., nperseg_int // 2:-(nperseg_int // 2)]
    x /= jnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != Zxx.ndim - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = jnp.moveaxis(x, -1, time_axis)
    time = jnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
    return time, x
