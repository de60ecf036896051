"""Elementary functions computed the way XLA's CPU backend computes them, bit for bit.

XLA does not call libm for these: `log` is the Cephes polynomial of its LLVM runtime, `log1p`
switches to a Cephes rational function for |x| < sqrt(2) - 1, and `erf_inv` is Giles' single
precision approximation (a different polynomial for float64).  LLVM contracts each
multiply-add of these polynomials into a fused multiply-add, emulated here in float64 (exact
products; the sum is rounded twice, which differs from a true FMA only in rare ties).
Large arrays are processed in cache-sized chunks.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pyjax._src.backend.tier1 import xla_math as tier1_xla_math
from pyjax._src.primitives._fp import ignore_fp_errors
from pyjax._src.core import dtypes

_F32 = np.float32
_F64 = np.float64
_CHUNK = 1 << 15


def _fma(a: np.ndarray, b: np.ndarray | float, c: np.ndarray | float) -> np.ndarray:
    """a * b + c rounded once to float32 (a, b, c float32 values)."""
    out = a.astype(_F64)
    out *= b
    out += c
    return out.astype(_F32)


def _horner(x: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """sum c_i x^(n-i) by fused multiply-adds with scalar coefficients (highest power first)."""
    x64 = x.astype(_F64)
    acc = np.full(x.shape, coefficients[0], _F32)
    product = np.empty(x.shape, _F64)
    for c in coefficients[1:]:
        np.multiply(acc, x64, out=product)  # exact: a float32 product fits a float64
        np.add(product, c, out=acc, casting="same_kind")  # the sum rounded to float32
    return acc


def _patch(out: np.ndarray, mask: np.ndarray, x: np.ndarray, fn: Callable) -> np.ndarray:
    """out with fn(x) written where mask holds (fn computed on those elements only)."""
    where = np.flatnonzero(mask)
    if where.size:
        out[where] = fn(x[where])
    return out


def _chunked(fn: Callable[[np.ndarray], np.ndarray], native_name: str
             ) -> Callable[[np.ndarray], np.ndarray]:
    """Apply an elementwise float32 function chunk by chunk (keeps temporaries in cache), or
    its native kernel `native_name` (backend/tier1/xla_math.py) once that is compiled."""
    def apply(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, _F32)
        native = tier1_xla_math.evaluate(native_name, x)
        if native is not None:
            return native
        flat = x.reshape(-1)
        if flat.size <= _CHUNK:
            return fn(flat).reshape(x.shape)
        out = np.empty(flat.shape, _F32)
        for start in range(0, flat.size, _CHUNK):
            out[start:start + _CHUNK] = fn(flat[start:start + _CHUNK])
        return out.reshape(x.shape)
    apply.__name__ = fn.__name__
    apply.__doc__ = fn.__doc__
    return apply


# ---------------------------------------------------------------------------------------------
# log (XLA CPU runtime: Cephes, as in Eigen)
# ---------------------------------------------------------------------------------------------

_LOG_P = np.array([7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                   1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                   3.3333331174E-1], _F32)
_LOG_Q1, _LOG_Q2 = _F32(-2.12194440e-4), _F32(0.693359375)
_MIN_NORMAL = np.array(0x00800000, np.uint32).view(_F32)
_SQRT_HALF = _F32(0.707106781186547524)


def _log_f32(v: np.ndarray) -> np.ndarray:
    """Natural log: exponent and mantissa in [sqrt(1/2), sqrt(2)), then a degree-8 polynomial
    evaluated in three interleaved parts (the order decides the roundings)."""
    bits = np.maximum(v, _MIN_NORMAL).view(np.uint32)
    e = (bits >> np.uint32(23)).astype(np.int32)
    x = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(_F32)
    e -= 127
    e = e.astype(_F32)
    e += _F32(1)
    small = x < _SQRT_HALF
    e -= small
    x = (x - _F32(1)) + x * small  # x + x - 1 below sqrt(1/2), else x - 1
    x2 = x * x
    x3 = x2 * x
    y = _horner(x, _LOG_P[0:3])
    y1 = _horner(x, _LOG_P[3:6])
    y2 = _horner(x, _LOG_P[6:9])
    y = _fma(_fma(_fma(y, x3, y1), x3, y2), x3, _LOG_Q1 * e)
    out = _fma(x2, _F32(-0.5), x) + y
    out = _fma(e, _LOG_Q2, out)
    special = ~(v > 0) | (v == np.inf)
    if special.any():  # log(0) = -inf, log(inf) = inf, nan below 0
        with np.errstate(invalid="ignore"):
            fix = np.where(v == 0, _F32(-np.inf), np.where(v == np.inf, v, _F32(np.nan)))
        out = np.where(special, fix, out)
    return out


# ---------------------------------------------------------------------------------------------
# log1p
# ---------------------------------------------------------------------------------------------

#: Cephes' rational approximation of log1p (numerator, denominator), highest power first.
_LOG1P_NUM64 = (4.5270000862445199635215E-5, 4.9854102823193375972212E-1,
                6.5787325942061044846969E0, 2.9911919328553073277375E1,
                6.0949667980987787057556E1, 5.7112963590585538103336E1,
                2.0039553499201281259648E1)
_LOG1P_DEN64 = (1., 1.5062909083469192043167E1, 8.3047565967967209469434E1,
                2.2176239823732856465394E2, 3.0909872225312059774938E2,
                2.1642788614495947685003E2, 6.0118660497603843919306E1)
_LOG1P_NUM = np.array((0.0,) + _LOG1P_NUM64, _F32)  # Horner from 0: the first step is 0*x + c
_LOG1P_DEN = np.array((0.0,) + _LOG1P_DEN64, _F32)


def _log1p_small(x: np.ndarray) -> np.ndarray:
    x2 = x * x
    ratio = _horner(x, _LOG1P_NUM) / _horner(x, _LOG1P_DEN)
    return x + _fma(x2, _F32(-0.5), (x * x2) * ratio)


def _log1p_f32(x: np.ndarray) -> np.ndarray:
    """log(1 + x): log of the sum for |x| >= sqrt(2) - 1, else x - x^2/2 + x^3 P(x)/Q(x)."""
    large = ~(np.abs(x) < _F32(0.41421356237309504880))
    return _patch(_log1p_small(x), large, x, lambda v: _log_f32(v + _F32(1)))


# ---------------------------------------------------------------------------------------------
# erf_inv
# ---------------------------------------------------------------------------------------------

_ERFINV_LT5 = np.array([2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                        0.00021858087, -0.00125372503, -0.00417768164, 0.246640727,
                        1.50140941], _F32)
_ERFINV_GE5 = np.array([-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                        0.00573950773, -0.0076224613, 0.00943887047, 1.00167406,
                        2.83297682], _F32)


def _erf_inv_f32(x: np.ndarray) -> np.ndarray:
    """Giles' approximation: w = -log1p(-x^2); a degree-8 polynomial in w - 2.5 (w < 5) or in
    sqrt(w) - 3; times x.  erf_inv(+-1) = +-inf."""
    with ignore_fp_errors():
        w = -_log1p_f32(-x * x)
        p = _horner(w - _F32(2.5), _ERFINV_LT5)
        p = _patch(p, ~(w < _F32(5)), w, lambda v: _horner(np.sqrt(v) - _F32(3), _ERFINV_GE5))
        out = p * x
        edge = np.abs(x) == _F32(1)
        return _patch(out, edge, x, lambda v: v * _F32(np.inf))


_ERFINV64_LT625 = (-3.6444120640178196996e-21, -1.685059138182016589e-19,
                   1.2858480715256400167e-18, 1.115787767802518096e-17,
                   -1.333171662854620906e-16, 2.0972767875968561637e-17,
                   6.6376381343583238325e-15, -4.0545662729752068639e-14,
                   -8.1519341976054721522e-14, 2.6335093153082322977e-12,
                   -1.2975133253453532498e-11, -5.4154120542946279317e-11,
                   1.051212273321532285e-09, -4.1126339803469836976e-09,
                   -2.9070369957882005086e-08, 4.2347877827932403518e-07,
                   -1.3654692000834678645e-06, -1.3882523362786468719e-05,
                   0.0001867342080340571352, -0.00074070253416626697512,
                   -0.0060336708714301490533, 0.24015818242558961693, 1.6536545626831027356)
_ERFINV64_LT16 = (2.2137376921775787049e-09, 9.0756561938885390979e-08,
                  -2.7517406297064545428e-07, 1.8239629214389227755e-08,
                  1.5027403968909827627e-06, -4.013867526981545969e-06,
                  2.9234449089955446044e-06, 1.2475304481671778723e-05,
                  -4.7318229009055733981e-05, 6.8284851459573175448e-05,
                  2.4031110387097893999e-05, -0.0003550375203628474796,
                  0.00095328937973738049703, -0.0016882755560235047313,
                  0.0024914420961078508066, -0.0037512085075692412107,
                  0.005370914553590063617, 1.0052589676941592334, 3.0838856104922207635)
_ERFINV64_GE16 = (-2.7109920616438573243e-11, -2.5556418169965252055e-10,
                  1.5076572693500548083e-09, -3.7894654401267369937e-09,
                  7.6157012080783393804e-09, -1.4960026627149240478e-08,
                  2.9147953450901080826e-08, -6.7711997758452339498e-08,
                  2.2900482228026654717e-07, -9.9298272942317002539e-07,
                  4.5260625972231537039e-06, -1.9681778105531670567e-05,
                  7.5995277030017761139e-05, -0.00021503011930044477347,
                  -0.00013871931833623122026, 1.0103004648645343977, 4.8499064014085844221)
#: One row per branch; the shorter polynomials padded with leading zeros (Horner-neutral).
_ERFINV64_TABLE = np.array([_ERFINV64_LT625, (0.0,) * 4 + _ERFINV64_LT16,
                            (0.0,) * 6 + _ERFINV64_GE16])


_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's splitting constant for float64


def fma_f64(a: np.ndarray, b: Any, c: Any) -> np.ndarray:
    """a * b + c for float64 in double-double arithmetic (the product's exact error term by
    Dekker's splitting, the sum's by Knuth's two-sum), rounded once at the end."""
    p = a * b
    a_big, b_big = a * _SPLIT, b * _SPLIT
    a_hi = a_big - (a_big - a)
    b_hi = b_big - (b_big - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    product_error = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    total = p + c
    c_part = total - p
    sum_error = (p - (total - c_part)) + (c - c_part)
    fused = total + (sum_error + product_error)
    # infinities, NaNs and products near overflow (where splitting overflows) round twice
    return np.where(np.isfinite(fused) & np.isfinite(a_big) & np.isfinite(b_big), fused, total)


_fma64 = fma_f64


def _log1p_f64(x: np.ndarray) -> np.ndarray:
    """log1p in float64 with XLA's split: the Cephes rational function for small |x|."""
    x2 = x * x
    num, den = np.zeros_like(x), np.zeros_like(x)
    for cn, cd in zip(_LOG1P_NUM64, _LOG1P_DEN64):
        num, den = _fma64(num, x, cn), _fma64(den, x, cd)
    small = x + _fma64(x2, -0.5, (x * x2) * (num / den))
    return np.where(np.abs(x) < 0.41421356237309504880, small, np.log(x + 1))


def _erf_inv_f64(x: np.ndarray) -> np.ndarray:
    """Giles' double precision approximation: three polynomials split at w = 6.25 and 16."""
    with ignore_fp_errors():
        w = -_log1p_f64(-x * x)
        lt_625, lt_16 = w < 6.25, w < 16
        w = np.where(lt_625, w - 3.125, np.sqrt(w) - np.where(lt_16, 3.25, 5.0))
        branch = np.where(lt_625, 0, np.where(lt_16, 1, 2))
        p = _ERFINV64_TABLE[branch, 0]
        for i in range(1, 23):
            p = _fma64(p, w, _ERFINV64_TABLE[branch, i])
        return np.where(np.abs(x) == 1, x * np.inf, p * x)


_erf_inv_f32_chunked = _chunked(_erf_inv_f32, "erf_inv")
log_f32 = _chunked(_log_f32, "log")
log1p_f32 = _chunked(_log1p_f32, "log1p")


def erf_inv(x: np.ndarray) -> np.ndarray:
    """XLA's erf_inv for any float dtype (16-bit floats are computed in float32)."""
    if x.dtype == dtypes.float64:
        return _erf_inv_f64(x)
    return _erf_inv_f32_chunked(x).astype(x.dtype, copy=False)
