"""Elementary functions computed the way XLA's CPU backend computes them, bit for bit.

float32 exp, logistic, expm1, tanh, log and log1p are XLA's own code (Cephes' polynomials as in
Eigen, tanh's rational function, expm1's and log1p's expansions), erf_inv is Giles' single
precision approximation (a different polynomial for float64); sinh, cosh, asin, acos, asinh,
acosh and atanh are JAX's decompositions of them (CHLO) into these and elementwise arithmetic;
sin and cos are glibc's sinf/cosf, which XLA calls (double precision reduction and
polynomials).  LLVM contracts each multiply-add of XLA's code into a fused multiply-add (glibc's
FMA build likewise), emulated here in float64 (exact products; the sum is rounded twice, which
differs from a true FMA only in rare ties; fma_f64 for float64).  Large arrays are processed in
cache-sized chunks, or by the native kernel of the same steps (backend/tier1/xla_math.py) once
it is compiled.
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


evaluate = tier1_xla_math.evaluate


def _chunked(fn: Callable[[np.ndarray], np.ndarray], native_name: str
             ) -> Callable[[np.ndarray], np.ndarray]:
    """Apply an elementwise float32 function chunk by chunk (keeps temporaries in cache), or
    its native kernel `native_name` (backend/tier1/xla_math.py) once that is compiled."""
    def apply(x: np.ndarray) -> np.ndarray:
        native = evaluate(native_name, x)
        if native is not None:
            return native
        x = np.asarray(x, _F32)
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
#: what XLA's log gives below 0 and for NaN: all bits set (it ORs a compare mask into them)
_LOG_NAN = np.array(0xFFFFFFFF, np.uint32).view(_F32)


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
    if special.any():  # log(0) = -inf, log(inf) = inf, NaN (all bits set) below 0 and for NaN
        fix = np.where(v == 0, _F32(-np.inf), np.where(v == np.inf, v, _LOG_NAN))
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


def _log1p_small(x: np.ndarray, shared_half: bool = False) -> np.ndarray:
    x2 = x * x
    ratio = _horner(x, _LOG1P_NUM) / _horner(x, _LOG1P_DEN)
    if shared_half:  # -x^2/2 also used elsewhere: the other product is the one fused
        return x + _fma(x * x2, ratio, x2 * _F32(-0.5))
    return x + _fma(x2, _F32(-0.5), (x * x2) * ratio)


def _log1p_f32(x: np.ndarray, shared_half: bool = False) -> np.ndarray:
    """log(1 + x): log of the sum for |x| >= sqrt(2) - 1, else x - x^2/2 + x^3 P(x)/Q(x) (the
    multiply-add fusing x^3 P/Q instead where -x^2/2 is shared: atanh's log1p(x), log1p(-x))."""
    large = ~(np.abs(x) < _F32(0.41421356237309504880))
    return _patch(_log1p_small(x, shared_half), large, x, lambda v: _log_f32(v + _F32(1)))


def _from_bits(*bits: int) -> np.ndarray:
    """float32 constants written as their bits (as XLA's LLVM IR has them)."""
    return np.array(bits, np.uint32).view(_F32)


# ---------------------------------------------------------------------------------------------
# exp, logistic (XLA's exp intrinsic: Cephes' expf, as in Eigen), expm1, tanh
# ---------------------------------------------------------------------------------------------

_EXP_LO, _EXP_HI = _F32(-87.8), _F32(88.8)
_LOG2E, = _from_bits(0x3FB8AA3B)
#: ln 2 in two parts (the first has few bits, so n * it is exact)
_EXP_LN2_HI, _EXP_LN2_LO = _from_bits(0x3F318000, 0xB95E8083)
_EXP_P = np.concatenate([_from_bits(0x39506967, 0x3AB743CE, 0x3C088908, 0x3D2AA9C1,
                                    0x3E2AAAAA), [_F32(0.5)]])


def _exp_parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """exp(x) as y * 2^n, both float32: x clamped to [-87.8, 88.8]; n = floor(x log2(e) + 1/2)
    clamped to [-127, 127] (2^-127 is built as exponent bits 0, so it is 0); r = x - n ln 2 in
    two fused steps; y = 1 + (r + r^2 P(r)).  XLA's code multiplies y * 2^n last, and LLVM
    contracts that product into an add that follows it (logistic's 1 + exp(-x))."""
    x = np.clip(x, _EXP_LO, _EXP_HI)  # NaN stays NaN
    n = np.floor(_fma(x, _LOG2E, _F32(0.5)))
    np.clip(n, _F32(-127), _F32(127), out=n)
    r = _fma(n, -_EXP_LN2_HI, x)
    r = _fma(n, -_EXP_LN2_LO, r)
    y = _fma(_horner(r, _EXP_P), r * r, r)
    y += _F32(1)
    with np.errstate(invalid="ignore"):  # NaN n: x86's integer indefinite, as cvttps2dq
        k = n.astype(np.int32)
    k += 127
    k <<= 23
    return y, k.view(_F32)


def _exp_f32(x: np.ndarray) -> np.ndarray:
    """XLA's exp: y * 2^n (_exp_parts); overflows to inf past ~88.72, 0 below ~-87.34."""
    with ignore_fp_errors():
        y, scale = _exp_parts(x)
        y *= scale
        return y


def _logistic_f32(x: np.ndarray) -> np.ndarray:
    """XLA's logistic, 1 / (1 + exp(-x)), with exp's last product fused into the sum."""
    with ignore_fp_errors():
        y, scale = _exp_parts(-x)
        return np.divide(_F32(1), _fma(y, scale, _F32(1)))


_TANH_CLAMP, = _from_bits(0x40FFF644)  # ~7.9988: tanh is 1 in float32 beyond
_TANH_NUM = _from_bits(0xA59F25C0, 0x2A61337E, 0xAEBD37FF, 0x335C0041, 0x3779434A,
                       0x3A270DED, 0x3BA059DC)
_TANH_DEN = _from_bits(0x35A0D3D8, 0x38F895D6, 0x3B14AA05, 0x3BA059DD)


def _tanh_f32(x: np.ndarray) -> np.ndarray:
    """XLA's tanh (Eigen's rational approximation): x clamped to +-7.9988, x P(x^2) / Q(x^2)
    by fused multiply-adds; x itself where |x| < 0.0004, +-1 where |x| >= 20."""
    with ignore_fp_errors():
        clamped = np.clip(x, -_TANH_CLAMP, _TANH_CLAMP)
        square = clamped * clamped
        out = _horner(square, _TANH_NUM)
        out *= clamped
        out /= _horner(square, _TANH_DEN)
        magnitude = np.abs(x)
        out = np.where(magnitude < _F32(0.0004), x, out)
        return np.where(magnitude >= _F32(20), np.copysign(_F32(1), x), out)


def _expm1_f32(x: np.ndarray) -> np.ndarray:
    """XLA's expm1: exp(x) - 1 for |x| > 1/2, else tanh(x/2) (exp(x) + 1); x where x/2 is 0
    (so a subnormal x stays, its half read as 0 under flushing)."""
    with ignore_fp_errors():
        y, scale = _exp_parts(x)
        y *= scale
        half = x * _F32(0.5)
        small = _tanh_f32(half) * (y + _F32(1))
        y -= _F32(1)
        out = np.where(np.abs(x) > _F32(0.5), y, small)
        return np.where(half == 0, x, out)


# ---------------------------------------------------------------------------------------------
# sinh, cosh, asin, acos, asinh, acosh, atanh: JAX's decompositions (CHLO) into XLA's ops, in one
# fused loop (where a product feeds an add, LLVM contracts them: exp's last product included)
# ---------------------------------------------------------------------------------------------

_NEG_LN2 = _F32(-0.693147182)
_LN2 = _F32(0.693147182)


def _sinh_f32(x: np.ndarray) -> np.ndarray:
    """|x| < 1: (e + e / (e + 1)) / 2 with e = expm1(x); else exp(x - ln 2) - exp(-ln 2 - x),
    the first exp's last product fused into the difference."""
    with ignore_fp_errors():
        e = _expm1_f32(x)
        small = (e + e / (e + _F32(1))) * _F32(0.5)
        y1, s1 = _exp_parts(x + _NEG_LN2)
        y2, s2 = _exp_parts(_NEG_LN2 - x)
        big = _fma(y1, s1, -(y2 * s2))
        out = np.where(np.abs(x) < _F32(1), small, big)
        # NaN: x's (quieted), not its negation (NumPy's loops pick either NaN operand)
        return _patch(out, np.isnan(x), x, lambda v: v * _F32(1))


def _cosh_f32(x: np.ndarray) -> np.ndarray:
    """exp(x - ln 2) + exp(-ln 2 - x), the first exp's last product fused into the sum."""
    with ignore_fp_errors():
        y1, s1 = _exp_parts(x + _NEG_LN2)
        y2, s2 = _exp_parts(_NEG_LN2 - x)
        return _fma(y1, s1, y2 * s2)


def _asin_f32(x: np.ndarray) -> np.ndarray:
    """2 atan2(x, 1 + sqrt((1 - x)(1 + x))), atan2 the C library's (as NumPy's float32)."""
    with ignore_fp_errors():
        one = _F32(1)
        a = np.arctan2(x, np.sqrt((one - x) * (x + one)) + one)
        return a + a


def _acos_f32(x: np.ndarray) -> np.ndarray:
    """atan2(sqrt((1 - x)(1 + x)), x)."""
    with ignore_fp_errors():
        one = _F32(1)
        return np.arctan2(np.sqrt((one - x) * (x + one)), x)


def _asinh_f32(x: np.ndarray) -> np.ndarray:
    """sign(x) * (|x| >= 2^64: log|x| + ln 2; else log1p(|x| + x^2 / (sqrt(x^2 + 1) + 1)))."""
    with ignore_fp_errors():
        one = _F32(1)
        magnitude = np.abs(x)
        square = x * x
        near = _log1p_f32(magnitude + square / (np.sqrt(square + one) + one))
        far = _log_f32(magnitude) + _LN2
        sign = np.copysign((x != 0).astype(_F32), x)
        out = sign * np.where(magnitude >= _F32(1.8446743e19), far, near)
        return _patch(out, np.isnan(x), x, lambda v: v * _F32(1))  # sign(NaN) = the NaN


def _acosh_f32(x: np.ndarray) -> np.ndarray:
    """x >= 2^127: log x + ln 2; else log1p(sqrt(x - 1) (sqrt(x + 1) + sqrt(x - 1)))."""
    with ignore_fp_errors():
        one = _F32(1)
        below = np.sqrt(x + _F32(-1))
        near = _log1p_f32(below * (np.sqrt(x + one) + below))
        return np.where(x >= _F32(1.70141173e38), _log_f32(x) + _LN2, near)


def _atanh_f32(x: np.ndarray) -> np.ndarray:
    """(log1p(x) - log1p(-x)) / 2; NaN beyond 1 in magnitude.  The two share x^2 and -x^2/2
    (LLVM merges them), so each fuses its other product instead."""
    with ignore_fp_errors():
        out = (_log1p_f32(x, True) - _log1p_f32(-x, True)) * _F32(0.5)
        return np.where(np.abs(x) > _F32(1), _F32(np.nan), out)


# The same decompositions of float16/bfloat16 x run in x's type (each step rounded to it), the
# functions they call computed in float32 (sinh and cosh: in float32 throughout).

def _in_float32(fn: Callable, *args: np.ndarray) -> np.ndarray:
    return fn(*(a.astype(_F32) for a in args)).astype(args[0].dtype)


def _asin_half(x: np.ndarray) -> np.ndarray:
    one = np.ones((), x.dtype)
    a = _in_float32(np.arctan2, x, np.sqrt((one - x) * (x + one)) + one)
    return a + a


def _acos_half(x: np.ndarray) -> np.ndarray:
    one = np.ones((), x.dtype)
    return _in_float32(np.arctan2, np.sqrt((one - x) * (x + one)), x)


def _asinh_half(x: np.ndarray) -> np.ndarray:
    dtype, one = x.dtype, np.ones((), x.dtype)
    magnitude = np.abs(x)
    square = magnitude * magnitude
    near = _in_float32(_log1p_f32, magnitude + square / (np.sqrt(square + one) + one))
    far = _in_float32(_log_f32, magnitude) + np.asarray(np.log(2), dtype)
    limit = np.asarray(np.sqrt(float(dtypes.finfo(dtype).max)), dtype)  # ~sqrt of the largest
    out = np.copysign((x != 0).astype(dtype), x) * np.where(magnitude >= limit, far, near)
    nan = np.isnan(x)
    if nan.any():  # sign(NaN) is the NaN: float16 keeps its payload, bfloat16's is canonical
        bits = x.view(np.uint16)[nan]
        out.view(np.uint16)[nan] = (bits | 0x200) if dtype == dtypes.float16 else \
            (bits & 0x8000) | 0x7FC0
    return out


def _acosh_half(x: np.ndarray) -> np.ndarray:
    dtype, one = x.dtype, np.ones((), x.dtype)
    below = np.sqrt(x - one)
    near = _in_float32(_log1p_f32, below * (np.sqrt(x + one) + below))
    far = _in_float32(_log_f32, x) + np.asarray(np.log(2), dtype)
    return np.where(x >= np.asarray(float(dtypes.finfo(dtype).max) / 2, dtype), far, near)


def _atanh_half(x: np.ndarray) -> np.ndarray:
    out = (_in_float32(_log1p_f32, x) - _in_float32(_log1p_f32, -x)) * np.asarray(0.5, x.dtype)
    return np.where(np.abs(x) > np.ones((), x.dtype), np.asarray(np.nan, x.dtype), out)


def half_precision(name: str) -> Callable[[np.ndarray], np.ndarray]:
    """XLA's float16/bfloat16 asin, acos, asinh, acosh or atanh (errors ignored)."""
    fn = {"asin": _asin_half, "acos": _acos_half, "asinh": _asinh_half, "acosh": _acosh_half,
          "atanh": _atanh_half}[name]

    def impl(x: np.ndarray) -> np.ndarray:
        with ignore_fp_errors():
            return fn(x.reshape(-1)).reshape(x.shape)
    return impl


# ---------------------------------------------------------------------------------------------
# sin, cos: XLA calls glibc's sinf/cosf (the variant built for FMA): double precision range
# reduction and polynomials, rounded to float32 once
# ---------------------------------------------------------------------------------------------

_hex = float.fromhex
_SIN_POLY = (-_hex("0x1.555545995a603p-3"), _hex("0x1.1107605230bc4p-7"),
             -_hex("0x1.994eb3774cf24p-13"))  # s1, s2, s3
_COS_POLY = (1.0, -_hex("0x1.ffffffd0c621cp-2"), _hex("0x1.55553e1068f19p-5"),
             -_hex("0x1.6c087e89a359dp-10"), _hex("0x1.99343027bf8c3p-16"))  # c0 ... c4
_HALF_PI = _hex("0x1.921fb54442d18p0")
#: 2/pi * 2^24: the quadrant lands in bits 24..31
_TWO_OVER_PI_2_24 = _hex("0x1.45f306dc9c883p+23")
#: 4/pi to 192 bits, 8 new bits per entry (glibc's __inv_pio4)
_INV_PIO4 = np.array([
    0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
    0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534, 0xd1f534dd,
    0xf534ddc0, 0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43,
    0x993c4390, 0x3c439041], np.uint64)
_PI_2_64 = _hex("0x1.921fb54442d18p-62")  # 2 pi / 2^64
_SIGN_NEGATIVE = np.array([False, True, True, False])  # sin's sign by quadrant


def _mul_add(a: np.ndarray, b: Any, c: Any) -> np.ndarray:
    """a * b + c, rounded twice (the fast path of _sincos_values)."""
    return a * b + c


def _sin_poly(x: np.ndarray, fma: Callable) -> np.ndarray:
    """x + x^3 s1 + x^5 (s2 + x^2 s3), in glibc's order of fused steps (float64)."""
    x2 = x * x
    x3 = x * x2
    s1, s2, s3 = _SIN_POLY
    return fma(fma(x2, s3, s2), x3 * x2, fma(x3, s1, x))


def _cos_poly(x: np.ndarray, fma: Callable) -> np.ndarray:
    """c0 + x^2 c1 + x^4 c2 + x^6 (c3 + x^2 c4), in glibc's order of fused steps (float64)."""
    x2 = x * x
    x4 = x2 * x2
    c0, c1, c2, c3, c4 = _COS_POLY
    inner = fma(x4, c2, fma(x2, c1, c0))
    return fma(fma(x2, c4, c3), x2 * x4, inner)


def _sin_or_cos_poly(x: np.ndarray, use_sin: np.ndarray, fma: Callable) -> np.ndarray:
    """_sin_poly(x) where use_sin holds, _cos_poly(x) elsewhere, as one polynomial of
    per-element operands: both are fma(fma(x^2, a, b), u x^2, fma(u, v, w)) with u = x^3 or
    x^4 (each product and multiply-add the one glibc's code rounds)."""
    s1, s2, s3 = _SIN_POLY
    c0, c1, c2, c3, c4 = _COS_POLY
    x2 = x * x
    u = np.where(use_sin, x, x2) * x2
    w = np.where(use_sin, x, fma(x2, c1, c0))
    low = fma(u, np.where(use_sin, s1, c2), w)
    high = fma(x2, np.where(use_sin, s3, c4), np.where(use_sin, s2, c3))
    return fma(high, u * x2, low)


def _reduce_large(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """glibc's reduction of |y| >= 120 (bits: the float32 bits): a 32 x 96-bit product with
    4/pi in integers; returns (r in [-pi/4, pi/4] as float64, the quadrant n in 0..3)."""
    index = ((bits >> 26) & 15).astype(np.intp)
    shift = ((bits >> 23) & 7).astype(np.uint64)
    m = (((bits & 0xFFFFFF) | 0x800000).astype(np.uint64)) << shift
    low = (m * _INV_PIO4[index]) & np.uint64(0xFFFFFFFF)  # a 32-bit product
    middle = m * _INV_PIO4[index + 4]
    high = m * _INV_PIO4[index + 8]
    total = (high >> np.uint64(32)) | (low << np.uint64(32))
    total += middle
    n = (total + np.uint64(1 << 61)) >> np.uint64(62)
    total -= n << np.uint64(62)
    return total.view(np.int64).astype(_F64) * _PI_2_64, n.astype(np.int64)


#: pi/2 as a head of 45 bits (n * head is exact for the |n| < 128 of |y| < 120) and the rest
_HALF_PI_HEAD = _hex("0x1.921fb54442d00p0")
_HALF_PI_TAIL = _HALF_PI - _HALF_PI_HEAD  # 0x1.8p-48, exact


def _sincos_values(y: np.ndarray, bits: np.ndarray, cosine: bool, kind: str,
                   exact: bool) -> np.ndarray:
    """The float64 sin/cos of float32 y before its rounding: kind "small" (|y| < 0.75: the
    polynomial of y), "middle" (|y| < 120: r = y - n pi/2 with n = round(y 2/pi)) or "large"
    (_reduce_large); then the quadrant's polynomial, signed.  exact: every multiply-add
    fused as glibc's (fma_f64); else rounded twice and the reduction in two exact-then-rounded
    steps (a few float64 ulps off, which _sincos_f32 re-does where that could matter)."""
    fma = fma_f64 if exact else _mul_add
    if kind == "small":
        x = y.astype(_F64)
        return _cos_poly(x, fma) if cosine else _sin_poly(x, fma)
    if kind == "large":
        r, n = _reduce_large(bits)
        quadrant = n + (bits >> 31).astype(np.int64)  # the sign folded into the quadrant
    else:
        x = y.astype(_F64)
        n = (((x * _TWO_OVER_PI_2_24).astype(np.int32) + 0x800000) >> 24).astype(np.int64)
        nf = n.astype(_F64)
        r = fma_f64(nf, -_HALF_PI, x) if exact else (x - nf * _HALF_PI_HEAD) - nf * _HALF_PI_TAIL
        quadrant = n
    use_sin = (n & 1) == (1 if cosine else 0)
    value = _sin_or_cos_poly(r, use_sin, fma)
    negative = np.where(use_sin, _SIGN_NEGATIVE[quadrant & 3], (quadrant & 2) != 0)
    return np.where(negative, -value, value)


def _sincos_f32(y: np.ndarray, cosine: bool) -> np.ndarray:
    """glibc's sinf or cosf: |y| < 2^-12: y (sin) or 1 (cos); |y| < pi/4: the polynomial;
    |y| < 120: n = round(y 2/pi), r = y - n pi/2 (one fused step); larger: _reduce_large;
    then the sine or cosine polynomial of r by the quadrant, signed by it.  inf and NaN give
    (y - y) / (y - y).  Computed with plain float64 steps first; values that land within 64
    float64 ulps of a float32 rounding midpoint are computed again fused, as glibc does."""
    bits = y.view(np.uint32)
    magnitude = bits & np.uint32(0x7FFFFFFF)
    out = np.empty(y.shape, _F32)
    tiny = magnitude < 0x39800000
    if tiny.any():
        out[tiny] = _F32(1) if cosine else y[tiny]
    small = ~tiny & (magnitude < 0x3F400000)  # pi/4 as glibc compares it: by the top 12 bits
    middle = (magnitude >= 0x3F400000) & (magnitude < 0x42F00000)
    large = (magnitude >= 0x42F00000) & (magnitude < 0x7F800000)
    for where, kind in ((small, "small"), (middle, "middle"), (large, "large")):
        if not where.any():
            continue
        ys, bs = y[where], bits[where]
        value = _sincos_values(ys, bs, cosine, kind, False)
        low = value.view(np.uint64) & np.uint64(0x1FFFFFFF)  # the bits float32 rounds away
        close = np.abs(low.astype(np.int64) - 0x10000000) < 64
        if close.any():
            value[close] = _sincos_values(ys[close], bs[close], cosine, kind, True)
        out[where] = value.astype(_F32)
    rest = magnitude >= 0x7F800000
    if rest.any():
        v = y[rest]
        out[rest] = (v - v) / (v - v)
    return out


def _sin_f32(x: np.ndarray) -> np.ndarray:
    """XLA's sin: glibc's sinf (_sincos_f32)."""
    with ignore_fp_errors():
        return _sincos_f32(x, False)


def _cos_f32(x: np.ndarray) -> np.ndarray:
    """XLA's cos: glibc's cosf (_sincos_f32)."""
    with ignore_fp_errors():
        return _sincos_f32(x, True)


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
        # +-inf at +-1; a NaN x is the NaN returned (quieted), as XLA's code returns it (which
        # NaN operand NumPy's product returns depends on its loop)
        edge = (np.abs(x) == _F32(1)) | np.isnan(x)
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


# ---------------------------------------------------------------------------------------------
# exp and log alone: the C library's for short vectors
# ---------------------------------------------------------------------------------------------

#: An XLA computation that is one float32 exp or log of a rank-1 array of n < 16 elements (what
#: an eager `jnp.exp` compiles) runs it on one vector of 8 lanes when n >= 8, then on one of the
#: n % 8 left (n itself below 8); LLVM gives vectors of 3, 5, 6 or 7 lanes, which XLA's own
#: code does not cover, to the C library's expf/logf lane by lane.  Other shapes, and the same
#: function fused with anything else, are XLA's code throughout.
_LIBM_TAIL = {n: n - n % 8 for n in (3, 5, 6, 7, 11, 13, 14, 15)}
LIBM_SIZES = frozenset(_LIBM_TAIL)
_libm_functions: dict[str, Any] = {}


def _libm(name: str) -> Callable | None:
    """The C library's float function `name` (ctypes), or None where there is none."""
    fn = _libm_functions.get(name, False)
    if fn is False:
        import ctypes
        import ctypes.util
        fn = None
        try:
            fn = getattr(ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6"), name)
            fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
        except (OSError, AttributeError, TypeError):
            fn = None
        _libm_functions[name] = fn
    return fn


def lone_exp_or_log(name: str, x: np.ndarray) -> np.ndarray | None:
    """XLA's float32 `name` ("exp" or "log") of x when it is the whole computation, or None
    where that is XLA's code throughout (exp_f32/log_f32 then apply)."""
    start = _LIBM_TAIL.get(x.size) if x.ndim == 1 else None
    libm = _libm(name + "f") if start is not None else None
    if libm is None:
        return None
    out = np.empty(x.shape, _F32)
    if start:
        out[:start] = (exp_f32 if name == "exp" else log_f32)(x[:start])
    out[start:] = [libm(v) for v in x[start:].tolist()]
    return out


_erf_inv_f32_chunked = _chunked(_erf_inv_f32, "erf_inv")
log_f32 = _chunked(_log_f32, "log")
log1p_f32 = _chunked(_log1p_f32, "log1p")
exp_f32 = _chunked(_exp_f32, "exp")
logistic_f32 = _chunked(_logistic_f32, "logistic")
tanh_f32 = _chunked(_tanh_f32, "tanh")
expm1_f32 = _chunked(_expm1_f32, "expm1")
sin_f32 = _chunked(_sin_f32, "sin")
cos_f32 = _chunked(_cos_f32, "cos")
sinh_f32 = _chunked(_sinh_f32, "sinh")
cosh_f32 = _chunked(_cosh_f32, "cosh")
asin_f32 = _chunked(_asin_f32, "asin")
acos_f32 = _chunked(_acos_f32, "acos")
asinh_f32 = _chunked(_asinh_f32, "asinh")
acosh_f32 = _chunked(_acosh_f32, "acosh")
atanh_f32 = _chunked(_atanh_f32, "atanh")


def erf_inv(x: np.ndarray) -> np.ndarray:
    """XLA's erf_inv for any float dtype (16-bit floats are computed in float32)."""
    if x.dtype == dtypes.float64:
        return _erf_inv_f64(x)
    return _erf_inv_f32_chunked(x).astype(x.dtype, copy=False)


# ---------------------------------------------------------------------------------------------
# erf (XLA's intrinsic: Eigen's rational function) and erfc (JAX's CHLO decomposition)
# ---------------------------------------------------------------------------------------------

#: erf(x) = x P(x^2) / Q(x^2) below 3.832 in magnitude (highest power first), +-1 from there
_ERF_P = _from_bits(0x39702D51, 0x3B5F5DA2, 0x3D50B6EB, 0x3E3DA740, 0x3F906EBA)
_ERF_Q = _from_bits(0xB3FD3906, 0x37C588DF, 0x3A856D28, 0x3C6687D4, 0x3DE34C21, 0x3EFEB44A,
                    0x3F800000)
_ERF_ONE, = _from_bits(0x407547CB)  # ~3.832: erf is +-1 in float32 beyond
#: erfc: 1 - x P(x^2) below 1 in magnitude; exp(-x^2) / |x| Q(1 / x^2) beyond, one Q below 2
#: and one from there (highest power first; as JAX writes them)
_ERFC_P = np.array([7.85386146e-05, -0.000801019371, 0.00518832775, -0.0268538129,
                    0.112835854, -0.37612626, 1.12837911], _F32)
_ERFC_Q_NEAR = np.array([0.0232682, -0.138703942, 0.368742466, -0.582473278, 0.621000469,
                         -0.494451523, 0.340488, -0.274112701, 0.563825965], _F32)
_ERFC_Q_FAR = np.array([-10.477664, 12.9772, -7.49551868, 2.92101908, -1.01526523, 0.42184633,
                        -0.282076746, 0.564189494], _F32)
_ERFC_ZERO = _F32(88.7228394)  # exp(-x^2) underflows (JAX selects 0 where -x^2 < -this)


def _erf_f32(x: np.ndarray) -> np.ndarray:
    """XLA's erf: x P(x^2) / Q(x^2) by fused multiply-adds; +-1 from |x| >= 3.832."""
    with ignore_fp_errors():
        square = x * x
        out = x * _horner(square, _ERF_P)
        out /= _horner(square, _ERF_Q)
        return np.where(np.abs(x) >= _ERF_ONE, np.copysign(_F32(1), x), out)


def _erfc_f32(x: np.ndarray) -> np.ndarray:
    """JAX's erfc: |x| < 1: 1 - x P(x^2) (the product fused into the difference); else
    q = exp(-x^2) (1 / |x|) Q(1 / x^2) (Q by |x| < 2), 0 where x^2 > 88.72, and 2 - q for
    negative x.  Every multiply-add of the polynomials fused; NaN: |x| (quieted)."""
    with ignore_fp_errors():
        square = x * x
        z = _F32(1) / square
        magnitude = np.abs(x)
        far = _exp_f32(-square)
        far *= _F32(1) / magnitude
        q = np.where(magnitude < _F32(2), _horner(z, _ERFC_Q_NEAR), _horner(z, _ERFC_Q_FAR))
        far *= q
        far[square > _ERFC_ZERO] = 0
        far = np.where(x < 0, _F32(2) - far, far)
        near = _fma(-x, _horner(square, _ERFC_P), _F32(1))
        out = np.where(magnitude < _F32(1), near, far)
        return _patch(out, np.isnan(x), magnitude, lambda v: v * _F32(1))  # |x|'s NaN, quiet


erf_f32 = _chunked(_erf_f32, "erf")
erfc_f32 = _chunked(_erfc_f32, "erfc")


# ---------------------------------------------------------------------------------------------
# rsqrt: the processor's estimate (rsqrtss) and one Newton step, as XLA's CPU code
# ---------------------------------------------------------------------------------------------

#: out[i] = rsqrtss(x[i]) for i < n: `void (const float *x, float *out, int64_t n)`
#:     test %rdx, %rdx; je 1f; 0: movss (%rdi), %xmm0; rsqrtss %xmm0, %xmm0;
#:     movss %xmm0, (%rsi); add $4, %rdi; add $4, %rsi; dec %rdx; jne 0b; 1: ret
_RSQRTSS_LOOP = bytes.fromhex("4885d27419f30f1007f30f52c0f30f11064883c7044883c60448ffca75e7c3")
_rsqrt_estimate_kernel: list = []


def _rsqrt_estimate(x: np.ndarray) -> np.ndarray | None:
    """This processor's rsqrtss of each element of x (a ~12-bit estimate whose bits differ
    between processor makers: XLA's rsqrt starts from it), or None where no machine code runs
    (not x86-64 Linux)."""
    if not _rsqrt_estimate_kernel:
        from pyjax._src.backend import machine_code
        try:
            kernel = machine_code.array_kernel(
                "rsqrtss", machine_code.code_address(_RSQRTSS_LOOP))
        except (OSError, ValueError, AttributeError):
            kernel = None
        _rsqrt_estimate_kernel.append(kernel)
    kernel = _rsqrt_estimate_kernel[0]
    if kernel is None:
        return None
    return kernel(np.ascontiguousarray(x, _F32), np.empty(x.shape, _F32))


def _rsqrt_f32(x: np.ndarray) -> np.ndarray:
    """XLA's rsqrt: y = rsqrtss(x), refined once where x is a positive normal number, as
    y + (-y/2)(x y y - 1) (two fused multiply-adds); y itself elsewhere (0, negative,
    subnormal, inf, NaN).  1 / sqrt(x) where the estimate is not to be had."""
    with ignore_fp_errors():
        y = _rsqrt_estimate(x)
        if y is None:
            return _F32(1) / np.sqrt(x)
        residual = _fma(x * y, y, _F32(-1))
        out = _fma(y * _F32(-0.5), residual, y)
        normal = (x.view(np.uint32) - np.uint32(0x00800000)) < np.uint32(0x7F000000)
        return np.where(normal, out, y)


rsqrt_f32 = _chunked(_rsqrt_f32, "rsqrt")


# ---------------------------------------------------------------------------------------------
# atan: glibc's atanf where XLA's loop is vectorised, XLA's own rational function where it is not
# ---------------------------------------------------------------------------------------------

#: x P(x^2) / Q(x^2) on [0, 1] (1/x beyond, subtracted from pi/2), highest power first
_ATAN_P = _from_bits(0x3DE56E67, 0x3F3ACBA0, 0x3F4F9D60)
_ATAN_Q = _from_bits(0x3C2557B4, 0x3E90FDB4, 0x3F800000, 0x3F4F9D60)
_ATAN_HALF_PI, = _from_bits(0x3FC90FDB)
#: XLA splits a loop of more than this many elements over its threads (each one a part)
_PART_MIN = 1 << 15
#: rows shorter than this are not vectorised
_ATAN_VECTOR_MIN = 50


def _atan_scalar_f32(x: np.ndarray) -> np.ndarray:
    """XLA's scalar atan (xla.atan.f32): |x| < 1e-3: x; else r = min(|x|, 1/|x|),
    r P(r^2) / Q(r^2) by fused multiply-adds, pi/2 minus it for |x| > 1, x's sign."""
    with ignore_fp_errors():
        magnitude = np.abs(x)
        big = magnitude > _F32(1)
        r = np.where(big, _F32(1) / magnitude, magnitude)
        square = r * r
        out = r * (_horner(square, _ATAN_P) / _horner(square, _ATAN_Q))
        out = np.where(big, _ATAN_HALF_PI - out, out)
        out = np.copysign(out, x)
        return np.where(magnitude < _F32(1e-3), x, out)


def _atan_libm(x: np.ndarray) -> np.ndarray:
    """glibc's atanf (its atan2f(x, 1) is atanf(x), bit for bit; NumPy's float32 arctan is a
    SIMD function of its own)."""
    return np.arctan2(x, _F32(1))


def _threads() -> int:
    import os
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _atan_parts(x: np.ndarray) -> tuple[np.ndarray | None, bool]:
    """How XLA's loop over x (size-1 axes dropped, as XLA drops them) runs atan: (rows, True)
    for rows whose loop LLVM vectorises, (None, True) for an array vectorised throughout,
    (None, False) for scalar code.  A rank-1 array of more than 2^16 elements is split in
    as many equal parts as threads allow, each of at least 2^15, whose loops are scalar where
    the parts are unequal (a loop then tests its bound); rows of at least 50 elements (49 in
    higher ranks) are vectorised; shorter ones, across rows, when their count is a multiple of
    4 (f32[8, 7]), else not (f32[7, 8]; LLVM also vectorises a few such shapes whole, e.g.
    f32[50, 5], which this does not follow)."""
    shape = [n for n in x.shape if n != 1]
    if len(shape) <= 1:
        parts = max(1, min(_threads(), x.size // _PART_MIN))
        if x.size % parts:
            return None, False
        rows = x.reshape(parts, -1)
        return (rows, True) if rows.shape[1] >= _ATAN_VECTOR_MIN else (None, False)
    rows = x.reshape(-1, shape[-1])
    if rows.shape[1] >= _ATAN_VECTOR_MIN - 1:
        return rows, True
    return None, rows.shape[0] % 4 == 0


def atan_f32(x: np.ndarray) -> np.ndarray:
    """XLA's float32 atan of x (its shape decides): LLVM vectorises XLA's loop over each row
    by 8 lanes and then 4, calling glibc's atanf on vector lanes, and runs the last n % 4
    elements (and loops it does not vectorise) through XLA's scalar code (_atan_scalar_f32); a
    single element is atanf's."""
    x = np.asarray(x, _F32)
    if x.size <= 1:
        return _atan_libm(x)
    rows, vectorised = _atan_parts(x)
    if rows is None:
        return _atan_libm(x) if vectorised else atan_scalar_f32(x)
    width = rows.shape[1]
    vector = width - width % 4
    out = np.empty(rows.shape, _F32)
    out[:, :vector] = _atan_libm(rows[:, :vector])
    if vector < width:
        out[:, vector:] = atan_scalar_f32(rows[:, vector:])
    return out.reshape(x.shape)


atan_scalar_f32 = _chunked(_atan_scalar_f32, "atan_scalar")
