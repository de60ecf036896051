"""Complex elementwise functions as XLA's CPU backend computes them, special values included.

XLA does not call C99's complex functions.  `log`, `log1p`, `sqrt`, `exp` and the chlo ops
(`asin`, `acos`, `atan`, `asinh`, `acosh`, `atanh`, `sinh`, `cosh`, `square`) are expanded into
real HLO before compilation (read off JAX 0.10.2's optimized HLO); `tan`, `tanh`, `expm1`,
`abs`, `sign`, `multiply`, `divide` and `power` are expanded by the LLVM emitter (read off its
IR); `sin` and `cos` are JAX's own formulas.  Each function below restates that expansion
operation by operation on NumPy arrays, so signed zeros, infinities and NaNs come out as in
JAX.  The real building blocks are XLA's float32 log and log1p (xla_math) and XLA's expm1
formula; the others (atan2, sin, exp, ...) are NumPy's, evaluated in float64 for float32
parts, so ordinary values agree with XLA to within a few ulps, not always bit for bit.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from pyjax._src.primitives._fp import ignore_fp_errors
from pyjax._src.primitives import xla_math

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)

#: XLA's float32 / float64 constants of the expansions (thresholds printed in the HLO)
_CONSTANTS = {
    _F32: dict(split=4097.0, log1p_big=1.84467419e+17, asin_max=2.30584287e+18,
               asin_lo=2.30584274e+12, asin_mid=2.30584283e+20, asin_hi=2.30584285e+30,
               asin_small=4.33680869e-19, atanh_max=2.81475044e+14, atanh_ratio=16777218.0, sqrt_re=1.09868407, sqrt_im=0.455089867),
    _F64: dict(split=134217729.0, log1p_big=1.3407807929942595e+152,
               asin_max=1.6759759912428245e+153, asin_lo=1.6759759912428242e+147,
               asin_mid=1.6759759912428244e+155, asin_hi=1.6759759912428244e+165,
               asin_small=5.9666725849601654e-154, atanh_max=8.1129638414606718e+31,
               atanh_ratio=9007199254740994.0, sqrt_re=1.0986841134678098,
               sqrt_im=0.45508986056222733),
}


def _k(x: np.ndarray, name: str) -> np.generic:
    """Constant `name` in x's (real) dtype."""
    return x.dtype.type(_CONSTANTS[x.dtype][name])


def _real_fn(fn: Callable) -> Callable:
    """A real NumPy function evaluated in float64 and rounded to float32 for float32 parts."""
    def apply(*args: np.ndarray) -> np.ndarray:
        dtype = args[0].dtype
        if dtype == _F32:
            return fn(*(a.astype(_F64) for a in args)).astype(_F32)
        return fn(*args)
    return apply


_ratan2 = _real_fn(np.arctan2)
_rexp, _rtanh, _rsqrt = _real_fn(np.exp), _real_fn(np.tanh), np.sqrt
_rpow = _real_fn(np.power)


def _libm_cis(v: np.ndarray) -> np.ndarray:
    """cos v + i sin v by the C library's cosf/sinf (cos/sin), which XLA's CPU code agrees
    with bit for bit; NumPy's own float32 sin and cos (SIMD) and float64-then-rounded values
    differ from them by an ulp on some inputs.  NumPy's complex exp of i*v calls them."""
    z = np.zeros(v.shape, np.result_type(v.dtype, np.complex64))
    z.imag = v
    with np.errstate(invalid="ignore"):
        return np.exp(z)


def _rsin(v: np.ndarray) -> np.ndarray:
    return _libm_cis(v).imag


def _rcos(v: np.ndarray) -> np.ndarray:
    return _libm_cis(v).real


def _rcosm1(v: np.ndarray) -> np.ndarray:
    """cos v - 1 without cancellation: -2 sin(v/2)^2."""
    return -2 * _rsin(v * np.asarray(0.5, v.dtype)) ** 2


def _rlog(x: np.ndarray) -> np.ndarray:
    """log: XLA's own float32 polynomial (bit for bit); NumPy's in float64."""
    return xla_math.log_f32(x) if x.dtype == _F32 else np.log(x)


def _rlog1p(x: np.ndarray) -> np.ndarray:
    """log1p: XLA's own float32 algorithm (bit for bit); NumPy's in float64."""
    return xla_math.log1p_f32(x) if x.dtype == _F32 else np.log1p(x)


def _rexpm1(x: np.ndarray) -> np.ndarray:
    """XLA's expm1: e^x - 1 for |x| > 1/2, else tanh(x/2) (e^x + 1); x itself where x/2 is 0."""
    ex = _rexp(x)
    half = x * 0.5
    out = np.where(np.abs(x) > 0.5, ex - 1, _rtanh(half) * (ex + 1))
    return np.where(half == 0, x, out)


def _pack(re: np.ndarray, im: np.ndarray, dtype: np.dtype) -> np.ndarray:
    re, im = np.broadcast_arrays(re, im)
    out = np.empty(re.shape, dtype)
    out.real, out.imag = re, im
    return out


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once, as LLVM's contraction of a multiply-add computes it."""
    if a.dtype == _F32:
        return (a.astype(_F64) * b + c).astype(_F32)
    fused = xla_math.fma_f64(a, b, c)
    # an exact zero takes IEEE's sign of a*b + c; a finite product never cancels an infinite
    # addend (fma_f64 rounds the product first)
    plain = a * b + c
    return np.where((fused == 0) | (np.isinf(c) & np.isfinite(a) & np.isfinite(b)), plain, fused)


def _hypot(mx: np.ndarray, mn: np.ndarray) -> np.ndarray:
    """chlo's hypot of sorted magnitudes: mx sqrt(1 + (mn/mx)^2), mx + mx r^2 / 2 when the
    square root rounds to 1, mx sqrt(2) when mx == mn."""
    r = mn / mx
    r2 = r * r
    s = _rsqrt(r2 + 1)
    out = np.where((s == 1) & (r2 > 0), mx + mx * r2 * 0.5, mx * s)
    return np.where(mx == mn, mx * mx.dtype.type(np.sqrt(2)), out)


def _square_error(v: np.ndarray, split: np.generic) -> np.ndarray:
    """(hi + lo)^2 - fl(v*v) by Dekker's splitting, summed in XLA's order."""
    big = v * split
    hi = big + (v - big)
    lo = v - hi
    hl = hi * lo
    return ((-(v * v) + hi * hi) + hl + hl) + lo * lo


def _abs_parts(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    """|re + i im| = mx sqrt(1 + (mn/mx)^2) (the multiply-add fused), or mn where that is NaN
    (0/0 and inf/inf)."""
    ar, ai = np.abs(re), np.abs(im)
    mx, mn = np.maximum(ar, ai), np.minimum(ar, ai)
    r = mn / mx
    h = mx * _rsqrt(_fma(r, r, re.dtype.type(1)))
    return np.where(np.isnan(h), mn, h)


def abs(x: np.ndarray) -> np.ndarray:  # noqa: A001 - lax's name
    """XLA's complex abs (a real array)."""
    with ignore_fp_errors():
        return _abs_parts(x.real, x.imag)


def sign(x: np.ndarray) -> np.ndarray:
    """x / |x| by parts; x itself where both parts are zero."""
    with ignore_fp_errors():
        re, im = x.real, x.imag
        mag = _abs_parts(re, im)
        zero = (re == 0) & (im == 0)
        return np.where(zero, x, _pack(re / mag, im / mag, x.dtype))


def mul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(ac - bd) + i (bc + ad), each multiply-add fused on the first product."""
    with ignore_fp_errors():
        a, b, c, d = x.real, x.imag, y.real, y.imag
        return _pack(_fma(a, c, -(b * d)), _fma(b, c, a * d), x.dtype)


def div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Smith's division; where both parts come out NaN, C99's recovery for a zero divisor or
    infinite operands."""
    with ignore_fp_errors():
        a, b, c, d = np.broadcast_arrays(x.real, x.imag, y.real, y.imag)
        zero = a.dtype.type(0)
        r = c / d  # for |c| < |d|
        den = _fma(r, c, d)
        re1, im1 = _fma(a, r, b) / den, _fma(b, r, -a) / den
        r = d / c
        den = _fma(r, d, c)
        re2, im2 = _fma(b, r, a) / den, _fma(-a, r, b) / den
        small_c = np.abs(c) < np.abs(d)
        re, im = np.where(small_c, re1, re2), np.where(small_c, im1, im2)
        inf = np.copysign(np.inf, c).astype(a.dtype)
        zero_div = (np.abs(c) == 0) & (np.abs(d) == 0) & (~np.isnan(a) | ~np.isnan(b))
        finite_y = (np.abs(c) != np.inf) & (np.abs(d) != np.inf) & ~np.isnan(c) & ~np.isnan(d)
        inf_x = (np.abs(a) == np.inf) | (np.abs(b) == np.inf)
        ua = np.copysign(np.where(np.abs(a) == np.inf, 1, zero), a).astype(a.dtype)
        ub = np.copysign(np.where(np.abs(b) == np.inf, 1, zero), b).astype(a.dtype)
        finite_x = (np.abs(a) != np.inf) & (np.abs(b) != np.inf) & ~np.isnan(a) & ~np.isnan(b)
        inf_y = (np.abs(c) == np.inf) | (np.abs(d) == np.inf)
        uc = np.copysign(np.where(np.abs(c) == np.inf, 1, zero), c).astype(a.dtype)
        ud = np.copysign(np.where(np.abs(d) == np.inf, 1, zero), d).astype(a.dtype)
        rec_re = np.where(zero_div, inf * a, np.where(
            inf_x & finite_y, (ua * c + ub * d) * np.inf,
            np.where(finite_x & inf_y, (a * uc + b * ud) * zero, re)))
        rec_im = np.where(zero_div, inf * b, np.where(
            inf_x & finite_y, (ub * c - ua * d) * np.inf,
            np.where(finite_x & inf_y, (b * uc - a * ud) * zero, im)))
        both_nan = np.isnan(re) & np.isnan(im)
        return _pack(np.where(both_nan, rec_re, re), np.where(both_nan, rec_im, im),
                     x.dtype)


def _parts(fn: Callable) -> Callable:
    """Lift fn(re, im) -> (re, im) on real arrays to complex arrays (warnings silenced)."""
    def apply(x: np.ndarray) -> np.ndarray:
        with ignore_fp_errors():
            re, im = fn(x.real, x.imag)
        return _pack(re, im, x.dtype)
    apply.__name__, apply.__doc__ = fn.__name__.lstrip("_"), fn.__doc__
    return apply


def _exp(a: np.ndarray, b: np.ndarray) -> tuple:
    """e^a (cos b, sin b); where e^a overflows, (e^(a/2) cos b) e^(a/2); the imaginary part
    is +0 where b == 0."""
    ea = _rexp(a)
    big = ea == np.inf
    half = _rexp(a * 0.5)
    cb, sb = _rcos(b), _rsin(b)
    re = np.where(big, half * cb * half, ea * cb)
    im = np.where(b == 0, 0, np.where(big, half * sb * half, ea * sb))
    return re, im



def _expm1(a: np.ndarray, b: np.ndarray) -> tuple:
    """expm1(a) cos b + (cos b - 1), cos b - 1 by a polynomial (accurate) for b^2 < 0.61685;
    (expm1(a) + 1) sin b, +0 where b == 0."""
    em = _rexpm1(a)
    cm = np.where(b * b < 0.61685, _rcosm1(b) + 0, _rcos(b) - 1)  # + 0: cos(0) - 1 is +0
    re = _fma(em, cm + 1, cm)
    im = np.where(b == 0, 0, (em + 1) * _rsin(b))
    return re, im



def _log(re: np.ndarray, im: np.ndarray) -> tuple:
    """log|z| + i atan2(im, re).  log|z| = log1p(q)/2 where q = re^2 + im^2 - 1 (summed with
    Dekker's exact squares) is below 1/2 in magnitude, else log(mx) + log1p((mn/mx)^2)/2."""
    split = _k(re, "split")
    xx, yy = re * re, im * im
    gt = yy > xx
    mxsq, mnsq = np.where(gt, yy, xx), np.where(gt, xx, yy)
    t1 = mxsq + -1
    t2 = t1 + mnsq
    ey, ex = _square_error(im, split), _square_error(re, split)
    t3 = t2 + ey
    t4 = t3 + ex
    err = (mxsq - mxsq) + (mnsq - (t2 - t1))  # XLA folds (mxsq - 1) + 1 into mxsq
    err = err + (ey - (t3 - t2))
    err = err + (ex - (t4 - t3))
    q = t4 + err
    return np.where(np.abs(q) < 0.5, _rlog1p(q) * 0.5, _log_hypot(re, im)), _ratan2(im, re)


def _log_hypot(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    """log(mx) + log1p((mn/mx)^2)/2, with ratio 1 where mn == mx."""
    ar, ai = np.abs(re), np.abs(im)
    mx, mn = np.maximum(ar, ai), np.minimum(ar, ai)
    r = np.where(mn == mx, 1, mn / mx)
    return _rlog(mx) + _rlog1p(r * r) * 0.5


def _two_sum_error(s: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The rounding error of s = a + b (Knuth's two-sum)."""
    z = s - a
    return (a - (s - z)) + (b - z)


def _log1p(a: np.ndarray, b: np.ndarray) -> tuple:
    """Real part: log(mx) + log1p((mn/mx)^2)/2 beyond 1e-2 sqrt(max); log((a+1)^2 + b^2)/2
    where |a + 1| + |b| < 0.2; else log1p(2a + b^2 + a^2)/2 with that sum compensated.
    Imaginary part atan2(b, a + 1)."""
    split = _k(a, "split")
    ab, bb = np.abs(a), np.abs(b)
    huge = np.maximum(ab, bb) > _k(a, "log1p_big")
    xp1 = a + 1
    yy = b * b
    near = np.abs(xp1) + bb < a.dtype.type(0.2)
    a2 = a + a
    s1 = a2 + yy
    aa = a * a
    s2 = s1 + aa
    eb = _square_error(b, split)
    s3 = s2 + eb
    ea = _square_error(a, split)
    s4 = s3 + ea
    err = _two_sum_error(s1, a2, yy) + _two_sum_error(s2, s1, aa)
    err = err + _two_sum_error(s3, s2, eb)
    err = err + _two_sum_error(s4, s3, ea)
    mid = _rlog1p(s4 + err) * 0.5
    re = np.where(huge, _log_hypot(a, b),
                  np.where(near, _rlog(xp1 * xp1 + yy) * 0.5, mid))
    return re, _ratan2(b, xp1)



def _sqrt(re: np.ndarray, im: np.ndarray) -> tuple:
    """sqrt((|z| + |re|)/2) for the larger part and |im| / (2 that) for the other, with
    rescaled forms where that square root is 0 or inf and sqrt(|re|) constants where
    |re| == |im|; signs from re and im."""
    one = re.dtype.type(1)
    a, b = np.abs(re), np.abs(im)
    eq = a == b
    sa, sb = _rsqrt(a), _rsqrt(b)
    mx, mn = np.maximum(a, b), np.minimum(a, b)
    u = _rsqrt(_hypot(mx, mn) * 0.5 + a * 0.5)
    special = (u == 0) | (u == np.inf)
    a_gt = a > b
    ratio = np.where(eq, one, np.where(a < b, a / b, b / a))
    ar = np.abs(ratio)
    h2 = _hypot(np.maximum(ar, one), np.minimum(ar, one))
    v1, v2 = _rsqrt(h2 + one), _rsqrt(ratio + h2)
    inv_sqrt2 = re.dtype.type(1 / np.sqrt(2))
    c_re, c_im = _k(re, "sqrt_re"), _k(re, "sqrt_im")  # XLA's folded sqrt((1 + sqrt 2)/2) ...
    big = np.where(eq, sa * c_re, np.where(
        special, np.where(a_gt, sa * (v1 * inv_sqrt2), sb * (v2 * inv_sqrt2)), u))
    sqrt2 = re.dtype.type(np.sqrt(2))
    scaled = np.where(a_gt, sb * np.where(eq, one, np.where(a < b, sa / sb, sb / sa))
                      / (v1 * sqrt2), sb / (v2 * sqrt2))
    other = np.where(eq, sb * c_im, np.where(special, scaled, b / (u * 2)))
    im_neg = im < 0
    out_re = np.where(re >= 0, big, other)
    out_im = np.where(re < 0, np.where(im_neg, -big, big), np.where(im_neg, -other, other))
    return out_re, out_im



def _sin(a: np.ndarray, b: np.ndarray) -> tuple:
    """JAX's formula: sin a (cosh b) + i cos a (sinh b), cosh and sinh from expm1(+-b);
    the real part +0 where a == 0."""
    e1, e2 = _rexpm1(b), _rexpm1(-b)
    snh, csh = (e1 - e2) * 0.5, ((e1 + e2) + 2) * 0.5
    return np.where(a == 0, 0, _rsin(a) * csh), _rcos(a) * snh


def _cos(a: np.ndarray, b: np.ndarray) -> tuple:
    """JAX's formula: cos a (cosh b) - i sin a (sinh b); the imaginary part +0 where a == 0."""
    e1, e2 = _rexpm1(b), _rexpm1(-b)
    snh, csh = (e1 - e2) * 0.5, ((e1 + e2) + 2) * 0.5
    return _rcos(a) * csh, np.where(a == 0, 0, -_rsin(a) * snh)


def _tanh(x: np.ndarray, y: np.ndarray) -> tuple:
    """(expm1(2x) - expm1(-2x)) / D + i 4 cos y sin y / D, D = expm1(2x) + expm1(-2x) +
    4 cos^2 y; the real part sign(x) where the sum overflows, NaN where the imaginary part is
    NaN for finite x; the imaginary part +0 where y == 0 or where x is infinite and it is NaN."""
    ep, em = _rexpm1(x + x), _rexpm1(-(x + x))
    c, s = _rcos(y), _rsin(y)
    cs4 = c * s * 4
    total = ep + em
    den = total + c * c * 4
    re = np.where(total == np.inf, np.copysign(x.dtype.type(1), x), (ep - em) / den)
    x_inf = np.abs(x) == np.inf
    nan_im = np.isnan(cs4)
    re = np.where(nan_im & ~x_inf, np.nan, re)
    im = np.where((y == 0) | (x_inf & nan_im), 0, cs4 / den)
    return re, im


def _tan(a: np.ndarray, b: np.ndarray) -> tuple:
    """tan z = -i tanh(i z)."""
    re, im = _tanh(-b, a)
    return im, -re


def _asin_kernel(x: np.ndarray, y: np.ndarray) -> tuple:
    """Hull, Fairgrieve and Tang's asin/acos core for x = |Re|, y = |Im| (chlo's expansion):
    the atan2 argument paired with Re, and the magnitude of the imaginary part."""
    one = x.dtype.type(1)
    safe_max = _k(x, "asin_max")
    xp1, xm1 = x + one, x + -one
    r = _hypot(np.maximum(np.abs(xp1), y), np.minimum(np.abs(xp1), y))
    s = _hypot(np.maximum(np.abs(xm1), y), np.minimum(np.abs(xm1), y))
    a = (r + s) * 0.5
    half_apx = (a + x) * 0.5
    yy = y * y
    rpxp1, smxm1, spxm1 = r + xp1, s - xm1, s + xm1
    arg = np.where(np.maximum(x, y) >= safe_max, y, np.where(
        x <= one, _rsqrt(half_apx * (yy / rpxp1 + smxm1)),
        y * _rsqrt(half_apx / rpxp1 + half_apx / spxm1)))
    safe_opt = np.where(x < _k(x, "asin_hi"), _k(x, "asin_lo"), _k(x, "asin_mid"))
    y_big = y >= safe_opt
    mx = np.where(y_big, y, x)
    xoy = np.where(y_big & (y != np.inf), x / y, 0)
    log_big = (_rlog(mx) + x.dtype.type(np.log(2))) + _rlog1p(xoy * xoy) * 0.5
    small_y = (y < _k(x, "asin_small")) & (x < one)
    ap1 = a + one
    half_yy = yy * 0.5
    t = half_yy / rpxp1
    am1 = np.where(small_y, -((xp1 * xm1) / ap1), np.where(
        x >= one, t + spxm1 * 0.5, np.where(a <= 1.5, t + half_yy / smxm1, a + -one)))
    sq = _rsqrt(am1 * ap1)
    big = mx >= np.where(y_big, safe_opt, safe_max)
    imag = np.where(big, log_big, np.where(small_y, y / sq, _rlog1p(am1 + sq)))
    return arg, imag


def _asin(re: np.ndarray, im: np.ndarray) -> tuple:
    """atan2(re, arg) + i (+-imag), the sign of im (negative only below zero)."""
    arg, imag = _asin_kernel(np.abs(re), np.abs(im))
    return _ratan2(re, arg), np.where(im < 0, -imag, imag)


def _acos(re: np.ndarray, im: np.ndarray) -> tuple:
    """atan2(arg, re) - i (+-imag)."""
    arg, imag = _asin_kernel(np.abs(re), np.abs(im))
    return _ratan2(arg, re), np.where(im < 0, imag, -imag)


def _asinh(re: np.ndarray, im: np.ndarray) -> tuple:
    """asinh z = i asin(-i z): the kernel with the parts swapped."""
    arg, imag = _asin_kernel(np.abs(-im), np.abs(re))
    return np.where(re < 0, -imag, imag), _ratan2(im, arg)


def _acosh(re: np.ndarray, im: np.ndarray) -> tuple:
    """imag + i (+-atan2(arg, re)), the sign of im."""
    arg, imag = _asin_kernel(np.abs(re), np.abs(im))
    angle = _ratan2(arg, re)
    return imag, np.where(im < 0, -angle, angle)


def _atanh(a: np.ndarray, b: np.ndarray) -> tuple:
    """sign(a) log1p(4 v)/4 + i atan2(2b, (1 - |a|)(1 + |a|) - b^2)/2, v = |a| / ((1 - |a|)^2
    + b^2) inside 2^48 (2^106 in float64); beyond it v is 1/|a| (b negligible), 0 (an
    infinite part) or 1/((|a|/b + b/|a|) b), and the angle is +-pi/2."""
    one = a.dtype.type(1)
    ax, ay = np.abs(a), np.abs(b)
    limit = _k(a, "atanh_max")
    inside = (ax < limit) & (ay < limit)
    omx = one - ax
    bb = b * b
    inf_part = (np.abs(a) == np.inf) | (np.abs(b) == np.inf)
    v = np.where(inside, ax / (omx * omx + bb), np.where(
        ay * _k(a, "atanh_ratio") < ax, one / ax,
        np.where(inf_part, 0, one / ((ax / b + b / ax) * b))))
    re = (np.where(a >= 0, one, -one) * _rlog1p(v * 4)) * 0.25
    angle = np.where(inside, _ratan2(b + b, omx * (ax + one) - bb),
                     np.where(b >= 0, one, -one) * a.dtype.type(np.pi))
    return re, angle * 0.5


def _atan(re: np.ndarray, im: np.ndarray) -> tuple:
    """atan z = -i atanh(i z)."""
    r, i = _atanh(-im, re)
    return i, -r


def _square(a: np.ndarray, b: np.ndarray) -> tuple:
    """(a - b)(a + b) + 2ab i; the real part 0 where |a| == |b| and a is finite."""
    return (np.where(np.isfinite(a) & (np.abs(a) == np.abs(b)), 0, (a - b) * (a + b)),
            a * b * 2)


exp, expm1, log, log1p, sqrt = map(_parts, (_exp, _expm1, _log, _log1p, _sqrt))
sin, cos, tan, tanh = map(_parts, (_sin, _cos, _tan, _tanh))
asin, acos, atan, asinh, acosh, atanh, square = map(
    _parts, (_asin, _acos, _atan, _asinh, _acosh, _atanh, _square))


def _halves(x: np.ndarray, sign: int) -> np.ndarray:
    """chlo's cosh (sign 1) / sinh (sign -1): e^(x + log 1/2) +- e^(log 1/2 - x)."""
    half = x.real.dtype.type(np.log(0.5))
    with ignore_fp_errors():
        up = exp(x + half)
        down = exp(_pack(half - x.real, 0 - x.imag, x.dtype))
        return up + down if sign == 1 else up - down


def cosh(x: np.ndarray) -> np.ndarray:
    return _halves(x, 1)


def sinh(x: np.ndarray) -> np.ndarray:
    return _halves(x, -1)


def power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """|x|^c e^(-d t) (cos w + i sin w), t = arg x, w = c t + d log|x|, for y = c + i d; 1 for
    y == 0 and for x == 1; 0 or 1 for x == 0 with real y >= 0; inf or 0 for x == +inf with real
    y (by the sign of y)."""
    with ignore_fp_errors():
        a, b, c, d = np.broadcast_arrays(x.real, x.imag, y.real, y.imag)
        mag = _abs_parts(a, b)
        t = _ratan2(b, a)
        q = _rpow(mag, c) * _rexp(-d * t)
        w = _fma(c, t, d * _rlog(mag))
        re, im = q * _rcos(w), q * _rsin(w)
        one, zero = a.dtype.type(1), a.dtype.type(0)
        d0, c0, b0 = d == 0, c == 0, b == 0
        at_zero = (mag == 0) & d0 & (c >= 0)
        re = np.where(at_zero, np.where(c0, one, zero), re)
        im = np.where(at_zero, zero, im)
        unit = (c0 & d0) | ((a == 1) & b0)
        re, im = np.where(unit, one, re), np.where(unit, zero, im)
        at_inf = (a == np.inf) & b0 & d0
        re = np.where(at_inf & (c > 0), np.inf, np.where(at_inf & (c < 0), zero, re))
        im = np.where(at_inf & ((c > 0) | (c < 0)), zero, im)
        return _pack(re, im, x.dtype)
