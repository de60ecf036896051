"""Special functions of lax (igamma family, betainc, Bessel i0e/i1e, zeta, the numerics of
lgamma/digamma/polygamma) and small elementwise ops (mulhi, reduce_precision, reciprocal).

The impls follow XLA's algorithms step by step in the working dtype (float32 for 16-bit
inputs, as XLA upcasts them), so values agree with JAX to a few ulps where SciPy's accurate
answers would differ by hundreds: XLA's series and continued fractions stop at its own
tolerances, and its lgamma is a Lanczos sum.  float32 log/log1p are XLA's own polynomials and
sin/cos glibc's sinf/cosf (`xla_math`); exp and pow are NumPy's (within an ulp of XLA's).
float32 lgamma and digamma are XLA's bit for bit where its loop is vector code.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from pyjax._src.primitives._fp import ignore_fp_errors
from pyjax._src.core import dtypes
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.parallel import propagation
from pyjax._src.core.trace import Tracer
from pyjax._src.primitives import elementwise as ew
from pyjax._src.primitives import xla_math
from pyjax._src.primitives._rules import (
    FLOAT, INT, UINT, check_kinds, dtype_kind, fast_eager, make_primitive)
from pyjax._src.transforms import ad, batching

_F32, _F64 = np.float32, np.float64


# ---------------------------------------------------------------------------------------------
# XLA's elementary functions in the working dtype
# ---------------------------------------------------------------------------------------------

def _working(*xs: np.ndarray) -> tuple[type, list[np.ndarray]]:
    """The dtype XLA computes in (float32 for 16-bit floats) and the operands cast to it."""
    w = _F64 if xs[0].dtype == _F64 else _F32
    return w, [np.asarray(x).astype(w, copy=False) for x in xs]


def _log(x: np.ndarray) -> np.ndarray:
    return xla_math.log_f32(x) if x.dtype == _F32 else np.log(x)


def _log1p(x: np.ndarray) -> np.ndarray:
    """XLA's log1p: a rational function near 0 (tens of ulps from NumPy's in float64)."""
    return xla_math.log1p_f32(x) if x.dtype == _F32 else xla_math._log1p_f64(x)


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once, as XLA's CPU backend contracts a multiply feeding an add
    (float32 exactly via float64; float64 via long double, exact but for rare ties)."""
    if a.dtype == _F32:
        return (a.astype(_F64) * b + c).astype(_F32)
    return (np.multiply(a, b, dtype=np.longdouble) + c).astype(_F64)


def _quiet(fn: Callable) -> Callable:
    """Run a kernel with NumPy's floating-point warnings off (XLA is silent about inf/nan)."""
    def run(*args: Any, **params: Any) -> Any:
        with ignore_fp_errors():
            return fn(*args, **params)
    run.__name__, run.__doc__ = fn.__name__, fn.__doc__
    return run


def _flush(x: np.ndarray) -> np.ndarray:
    """Subnormals to signed zeros (XLA's CPU runs with flush-to-zero and denormals-are-zero)."""
    tiny = np.finfo(x.dtype).tiny
    return np.where(np.abs(x) < tiny, x * x.dtype.type(0), x)


def _upcast(kernel: Callable) -> Callable:
    """An impl that runs `kernel` in the working dtype (subnormal inputs and outputs flushed
    to zero) and rounds back to the input dtype."""
    def impl(*args: np.ndarray) -> np.ndarray:
        out_dtype = args[0].dtype
        shape = np.broadcast_shapes(*(a.shape for a in args))
        _, wide = _working(*(np.broadcast_to(a, shape) for a in args))
        with ignore_fp_errors():
            out = _flush(np.asarray(kernel(*(_flush(x) for x in wide))))
            return out.astype(out_dtype, copy=False)
    impl.__name__, impl.__doc__ = kernel.__name__, kernel.__doc__
    return impl


# ---------------------------------------------------------------------------------------------
# lgamma, digamma (Lanczos, g = 7, n = 9), zeta, polygamma
# ---------------------------------------------------------------------------------------------

_LANCZOS_G = 7.0
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
            771.3234287776530788486528258894, -176.61502916214059906584551354,
            12.507343278686904814458936853, -0.13857109526572011689554707,
            9.984369578019570859563e-6, 1.50563273514931155834e-7)


def _lanczos_z(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(reflect, z, log t): z = -x where x < 1/2 (reflected), else x - 1; t = z + g + 1/2."""
    w = x.dtype.type
    reflect = x < w(0.5)
    z = np.where(reflect, -x, x - w(1))
    # XLA's simplifier makes z / (g + 1/2) a product with the reciprocal (in x's dtype)
    log_t = w(np.log(_LANCZOS_G + 0.5)) + _log1p(z * (w(1) / w(_LANCZOS_G + 0.5)))
    return reflect, z, log_t


def _sin(x: np.ndarray) -> np.ndarray:
    """XLA's sin: glibc's sinf for float32 (xla_math), NumPy's for float64."""
    return xla_math.sin_f32(x) if x.dtype == _F32 else np.sin(x)


def _cos(x: np.ndarray) -> np.ndarray:
    return xla_math.cos_f32(x) if x.dtype == _F32 else np.cos(x)


def lgamma_kernel(x: np.ndarray) -> np.ndarray:
    """log|Gamma(x)|: Lanczos' sum for x >= 1/2, Euler's reflection below (XLA's chlo.lgamma)."""
    w = x.dtype.type
    reflect, z, log_t = _lanczos_z(x)
    a = np.full(x.shape, _LANCZOS_BASE, x.dtype)
    for i, c in enumerate(_LANCZOS):
        a = a + w(c) / (z + w(i + 1))
    t = w(_LANCZOS_G + 0.5) + z
    # XLA contracts the product into the next sum (one fused multiply-add)
    out = _fma((z + w(0.5)) - t / log_t, log_t, w((np.log(2) + np.log(np.pi)) / 2)) + _log(a)
    frac = np.abs(x) - np.floor(np.abs(x))
    frac = np.where(w(0.5) < frac, w(1) - frac, frac)
    denom = _log(_sin(w(np.pi) * frac))
    reflected = np.where(np.isfinite(denom), (w(np.log(np.pi)) - denom) - out, -denom)
    out = np.where(reflect, reflected, out)
    return _log_nan(x, np.where(np.isinf(x), w(np.inf), out))


def _log_nan(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """out, with float32 XLA's NaN for a NaN x: its log's (all bits set), which the sums carry
    to the result."""
    if x.dtype != _F32:
        return out
    return np.where(np.isnan(x), xla_math._LOG_NAN, out)


def digamma_kernel(x: np.ndarray) -> np.ndarray:
    """psi(x): log t + a'(z)/a(z) - g/t, reflected through pi cot(pi x) below 1/2; nan at
    the poles 0, -1, -2, ... (XLA's chlo.digamma)."""
    w = x.dtype.type
    reflect, z, log_t = _lanczos_z(x)
    a = np.full(x.shape, _LANCZOS_BASE, x.dtype)
    a_prime = np.zeros(x.shape, x.dtype)
    for i, c in enumerate(_LANCZOS):
        zk = z + w(i + 1)
        a_prime = a_prime - w(c) / (zk * zk)
        a = a + w(c) / zk
    t = w(_LANCZOS_G + 0.5) + z
    out = (log_t + a_prime / a) - w(_LANCZOS_G) / t
    reduced = x + np.abs(np.floor(x + w(0.5)))
    angle = w(np.pi) * reduced
    reflected = out - (_cos(angle) * w(np.pi)) / _sin(angle)
    out = np.where(reflect, reflected, out)
    pole = (x <= w(0)) & (x == np.floor(x))
    return _log_nan(x, np.where(pole, w(np.nan), out))


#: 1 / (2k)! times Bernoulli-number factors of the Euler-Maclaurin tail (XLA's table, as
#: reciprocals; the last one stands apart)
_ZETA = (-7.1661652561756670113e18, 1.8152105401943546773e17, -4.5979787224074726105e15,
         1.1646782814350067249e14, -2.950130727918164224e12, 7.47242496e10,
         -1.8924375803183791606e9, 47900160.0, -1209600.0, 30240.0, -720.0, 12.0)


def zeta_kernel(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hurwitz zeta(x, q): ten terms of the series, then a 12-term Euler-Maclaurin tail
    (XLA's chlo.zeta), with its poles and domain errors."""
    w = x.dtype.type
    one, zero = w(1), w(0)
    a = q
    neg_x = -x
    initial = np.power(q, neg_x)
    for _ in range(9):
        a = a + one
        initial = initial + np.power(a, neg_x)
    a = a + one
    neg_power = np.power(a, neg_x)
    correction = (neg_power * a) / (x - one)
    a_inv_sq = one / (a * a)
    horner = np.zeros(x.shape, x.dtype)
    for i in range(11):
        factor = (x + w(22 - 2 * i)) * (x + w(21 - 2 * i))
        horner = factor * (a_inv_sq * (horner + w(1.0 / _ZETA[i])))
    # XLA keeps the plain sum where |tail| < |sum| * (smallest subnormal), a constant the CPU
    # flushes to zero: the tail is always added
    out = _fma(neg_power, _fma(x / a, w(1.0 / _ZETA[11]) + horner, w(0.5)),
               initial + correction)
    nan, inf = w(np.nan), w(np.inf)
    out = np.where(x < one, nan, out)
    q_le_zero = q <= zero
    out = np.where(q_le_zero & (x != np.floor(x)), nan, out)
    at_pole = q_le_zero & (q == np.floor(q))
    even_int = (x == np.floor(x)) & (np.fmod(x, w(2)) == zero)
    out = np.where(at_pole, np.where(even_int, inf, nan), out)
    return np.where(x == one, inf, out)


def polygamma_kernel(m: np.ndarray, x: np.ndarray) -> np.ndarray:
    """psi^(m)(x) = (-1)^(m+1) m! zeta(m + 1, x), digamma for m = 0, nan unless m is a
    natural number (XLA's chlo.polygamma)."""
    w = x.dtype.type
    one, two = w(1), w(2)
    sign = two * np.fmod(m, two) - one
    out = (sign * np.exp(lgamma_kernel(m + one))) * zeta_kernel(m + one, x)
    out = np.where(m == w(0), digamma_kernel(x), out)
    return np.where((m != np.floor(m)) | (m < w(0)), w(np.nan), out)


# ---------------------------------------------------------------------------------------------
# The incomplete gamma function (XLA's series and continued fraction, with a-derivatives)
# ---------------------------------------------------------------------------------------------

_VALUE, _DERIVATIVE = "value", "derivative"


def _igamma_series(ax: np.ndarray, x: np.ndarray, a: np.ndarray, enabled: np.ndarray,
                   mode: str) -> np.ndarray:
    """Sum of x^n / (a+1)...(a+n) until the last term (or its a-derivative) is below eps;
    elements stop one by one, frozen once converged."""
    w = a.dtype.type
    eps = w(np.finfo(a.dtype).eps)
    r, c, ans = a.copy(), np.ones_like(a), np.ones_like(a)
    dc_da, dans_da = np.zeros_like(a), np.zeros_like(a)
    active = enabled.copy()
    while active.any():
        r_new = r + w(1)
        dc_new = dc_da * (x / r_new) - (c * x) / (r_new * r_new)
        dans_new = dans_da + dc_new
        c_new = c * (x / r_new)
        ans_new = ans + c_new
        if mode == _VALUE:
            going = active & (c_new / ans_new > eps)
        else:
            going = active & (np.abs(dc_new / dans_new) > eps)
        r = np.where(active, r_new, r)
        c = np.where(active, c_new, c)
        ans = np.where(active, ans_new, ans)
        dc_da = np.where(active, dc_new, dc_da)
        dans_da = np.where(active, dans_new, dans_da)
        active = going
    if mode == _VALUE:
        return (ans * ax) / a
    dlogax_da = _log(x) - digamma_kernel(a + w(1))
    return ax * (ans * dlogax_da + dans_da) / a


def _igammac_fraction(ax: np.ndarray, x: np.ndarray, a: np.ndarray, enabled: np.ndarray,
                      mode: str) -> np.ndarray:
    """Legendre's continued fraction for the upper function (at most 2000 steps), with the
    derivatives of its convergents in a; convergents are rescaled by eps when they grow."""
    w = a.dtype.type
    eps = w(np.finfo(a.dtype).eps)
    big = w(1) / eps
    y = w(1) - a
    z = x + y + w(1)
    pkm2, qkm2 = np.ones_like(x), x.copy()
    pkm1, qkm1 = x + w(1), z * x
    ans = pkm1 / qkm1
    dpkm2, dqkm2, dpkm1, dqkm1 = (np.zeros_like(x) for _ in range(4))
    dqkm1 = -x
    dans = (dpkm1 - ans * dqkm1) / qkm1
    active = enabled.copy()
    count = 0
    while count < 2000 and active.any():
        count += 1
        c = w(count)
        y_new, z_new = y + w(1), z + w(2)
        yc = y_new * c
        pk = pkm1 * z_new - pkm2 * yc
        qk = qkm1 * z_new - qkm2 * yc
        nonzero = qk != w(0)
        r = pk / qk
        t = np.where(nonzero, np.abs((ans - r) / r), w(1))
        ans_new = np.where(nonzero, r, ans)
        dpk = dpkm1 * z_new - pkm1 - dpkm2 * yc + pkm2 * c
        dqk = dqkm1 * z_new - qkm1 - dqkm2 * yc + qkm2 * c
        dans_new = np.where(nonzero, (dpk - ans_new * dqk) / qk, dans)
        grad_change = np.where(nonzero, np.abs(dans_new - dans), w(1))
        rescale = np.abs(pk) > big
        n_pkm2, n_pkm1, n_qkm2, n_qkm1 = pkm1, pk, qkm1, qk
        n_dpkm2, n_dqkm2, n_dpkm1, n_dqkm1 = dpkm1, dqkm1, dpk, dqk
        n_pkm2, n_pkm1, n_qkm2, n_qkm1, n_dpkm2, n_dqkm2, n_dpkm1, n_dqkm1 = (
            np.where(rescale, v * eps, v) for v in (n_pkm2, n_pkm1, n_qkm2, n_qkm1, n_dpkm2,
                                                     n_dqkm2, n_dpkm1, n_dqkm1))
        going = active & ((t > eps) if mode == _VALUE else (grad_change > eps))
        ans = np.where(active, ans_new, ans)
        y = np.where(active, y_new, y)
        z = np.where(active, z_new, z)
        pkm1 = np.where(active, n_pkm1, pkm1)
        qkm1 = np.where(active, n_qkm1, qkm1)
        pkm2 = np.where(active, n_pkm2, pkm2)
        qkm2 = np.where(active, n_qkm2, qkm2)
        dpkm2 = np.where(active, n_dpkm2, dpkm2)
        dqkm2 = np.where(active, n_dqkm2, dqkm2)
        dpkm1 = np.where(active, n_dpkm1, dpkm1)
        dqkm1 = np.where(active, n_dqkm1, dqkm1)
        dans = np.where(active, dans_new, dans)
        active = going
    if mode == _VALUE:
        return ans * ax
    dlogax_da = _log(x) - digamma_kernel(a)
    return ax * (ans * dlogax_da + dans)


def _prefactor(a: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x^a e^-x / Gamma(a), whether its log underflows)."""
    w = a.dtype.type
    log_ax = _fma(a, _log(x), -x) - lgamma_kernel(a)
    underflow = log_ax < -w(np.log(np.finfo(a.dtype).max))
    return np.exp(log_ax), underflow


def igamma_kernel(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(a, x): the series below max(1, a), 1 - the continued fraction above."""
    w = a.dtype.type
    x_zero, x_inf = x == w(0), x == w(np.inf)
    domain = (x < w(0)) | (a < w(0)) | ((a == w(0)) & x_zero) | np.isnan(a) | np.isnan(x)
    use_fraction = (x >= w(1)) & (x > a)
    ax, underflow = _prefactor(a, x)
    enabled = ~(x_zero | domain | underflow | x_inf)
    out = np.where(use_fraction,
                   w(1) - _igammac_fraction(ax, x, a, enabled & use_fraction, _VALUE),
                   _igamma_series(ax, x, a, enabled & ~use_fraction, _VALUE))
    out = np.where(x_zero, w(0), out)
    out = np.where(x_inf, w(1), out)
    return np.where(domain, w(np.nan), out)


def igammac_kernel(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) = 1 - P(a, x): 1 - the series below max(1, a), the continued fraction above."""
    w = a.dtype.type
    a_zero, x_inf = a == w(0), x == w(np.inf)
    domain = (x < w(0)) | (a < w(0)) | (a_zero & (x == w(0))) | np.isnan(a) | np.isnan(x)
    use_series = (x < w(1)) | (x < a)
    ax, underflow = _prefactor(a, x)
    enabled = ~(domain | underflow | x_inf | a_zero)
    out = np.where(use_series,
                   w(1) - _igamma_series(ax, x, a, enabled & use_series, _VALUE),
                   _igammac_fraction(ax, x, a, enabled & ~use_series, _VALUE))
    out = np.where(x_inf | a_zero, w(0), out)
    return np.where(domain, w(np.nan), out)


def igamma_grad_a_kernel(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dP/da: the series' and the continued fraction's a-derivatives.  (The sample derivative
    -(dP/da) / (dP/dx), lax.random_gamma_grad, is staged in lax operations as JAX stages it:
    random/gamma_grad.py.)"""
    w = a.dtype.type
    nan = np.isnan(a) | np.isnan(x)
    x_zero = x == w(0)
    domain = (x < w(0)) | (a <= w(0))
    use_fraction = (x > w(1)) & (x > a)
    ax, underflow = _prefactor(a, x)
    enabled = ~(x_zero | domain | underflow | nan)
    out = np.where(use_fraction,
                   -_igammac_fraction(ax, x, a, enabled & use_fraction, _DERIVATIVE),
                   _igamma_series(ax, x, a, enabled & ~use_fraction, _DERIVATIVE))
    out = np.where(x_zero, w(0), out)
    return np.where(domain | nan, w(np.nan), out)


# ---------------------------------------------------------------------------------------------
# The regularized incomplete beta function (Lentz-Thompson-Barnett continued fraction)
# ---------------------------------------------------------------------------------------------

def _lentz_betainc(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The continued fraction of DLMF 8.17.22, evaluated by modified Lentz.  As in XLA every
    element takes another step until all have converged (or 200 / 600 steps)."""
    w = a.dtype.type
    eps = w(np.finfo(a.dtype).eps / 2)
    small = threshold = eps
    steps = 200 if a.dtype == _F32 else 600
    one, two = w(1), w(2)
    h = np.full(a.shape, small, a.dtype)  # the 0th partial denominator is 0 (< small)
    c, d = h.copy(), np.zeros_like(h)
    zero_numerator = (-(a + b) * x) / (a + one)
    iteration = 1
    while True:
        if iteration == 1:
            numerator = np.ones_like(a)
        else:
            m = w((iteration - 1) // 2)
            if iteration % 2 == 0:
                numerator = zero_numerator if m == 0 else (
                    (-(a + m) * ((a + b) + m)) * x / ((a + two * m) * ((a + two * m) + one)))
            else:
                numerator = ((m * (b - m)) * x) / (((a + two * m) - one) * (a + two * m))
        c = one + numerator / c
        c = np.where(np.abs(c) < small, small, c)
        d = _fma(numerator, d, np.ones_like(d))  # XLA fuses the product into the sum
        d = np.where(np.abs(d) < small, small, d)
        d = one / d
        delta = c * d
        h = h * delta
        iteration += 1
        if not (np.abs(delta - one) >= threshold).any() or iteration >= steps:
            return h


def betainc_kernel(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """I_x(a, b): the continued fraction where x < (a+1)/(a+b+2), else through the symmetry
    I_x(a, b) = 1 - I_(1-x)(b, a); XLA's edge cases for a or b zero or infinite."""
    w = a.dtype.type
    zero, one, inf = w(0), w(1), w(np.inf)
    a_zero = (a == zero) | (b == inf)
    b_zero = (b == zero) | (a == inf)
    x_zero, x_one = x == zero, x == one
    is_nan = np.isnan(a) | np.isnan(b) | np.isnan(x)
    result_zero = (b_zero & ~x_one) | (a_zero & x_zero)
    result_one = (a_zero & ~x_zero) | (b_zero & x_one)
    result_nan = (a < zero) | (b < zero) | (x < zero) | (x > one) | (a_zero & b_zero) | is_nan
    fast = x < (a + one) / ((a + b) + w(2))
    a, b = np.where(fast, a, b), np.where(fast, b, a)
    x = np.where(fast, x, one - x)
    fraction = _lentz_betainc(a, b, x)
    very_small = w(np.finfo(a.dtype).tiny * 2)
    lbeta_small_a = lgamma_kernel(b) - lgamma_kernel(a + b)
    lbeta = lgamma_kernel(a) + lbeta_small_a
    log_1mx_b = _log1p(-x) * b  # shared by both branches, so XLA fuses only log(x) * a
    factor = np.where(a < very_small, np.exp(log_1mx_b - lbeta_small_a),
                      np.exp(_fma(_log(x), a, log_1mx_b) - lbeta) / a)
    out = fraction * factor
    out = np.where(fast, out, one - out)
    out = np.where(result_zero, zero, out)
    out = np.where(result_one, one, out)
    return np.where(result_nan, w(np.nan), out)


# ---------------------------------------------------------------------------------------------
# Exponentially scaled Bessel functions I0, I1 (Cephes' Chebyshev series)
# ---------------------------------------------------------------------------------------------

_I0E_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
          1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
          -4.85644678311192946090E-13, 2.95505266312963983461E-12,
          -1.72682629144155570723E-11, 9.67580903537323691224E-11,
          -5.18979560163526290666E-10, 2.65982372468238665035E-9, -1.30002500998624804212E-8,
          6.04699502254191894932E-8, -2.67079385394061173391E-7, 1.11738753912010371815E-6,
          -4.41673835845875056359E-6, 1.64484480707288970893E-5, -5.75419501008210370398E-5,
          1.88502885095841655729E-4, -5.76375574538582365885E-4, 1.63947561694133579842E-3,
          -4.32430999505057594430E-3, 1.05464603945949983183E-2, -2.37374148058994688156E-2,
          4.93052842396707084878E-2, -9.49010970480476444210E-2, 1.71620901522208775349E-1,
          -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
          3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
          1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
          -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
          7.18012445138366623367E-13, -1.79417853150680611778E-12,
          -1.32158118404477131188E-11, -3.14991652796324136454E-11,
          1.18891471078464383424E-11, 4.94060238822496958910E-10, 3.39623202570838634515E-9,
          2.26666899049817806459E-8, 2.04891858946906374183E-7, 2.89137052083475648297E-6,
          6.88975834691682398426E-5, 3.36911647825569408990E-3, 8.04490411014108831608E-1)
_I1E_A = (2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
          -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
          3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
          -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
          9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
          -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
          4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
          -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
          2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
          -1.76416518357834055153E-1, 2.52587186443633654823E-1)
_I1E_B = (7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
          -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
          -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
          4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
          -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
          3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
          -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
          -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
          7.78576235018280120474E-1)


def _chebyshev(x: np.ndarray, coefficients: tuple, f32_terms: int) -> np.ndarray:
    """Clenshaw's recurrence b_k = x b_(k+1) - b_(k+2) + c_k, result (b_0 - b_2) / 2; float32
    uses only the last `f32_terms` coefficients (Cephes' single-precision series)."""
    w = x.dtype.type
    if x.dtype == _F32:
        coefficients = coefficients[-f32_terms:]
    b0, b1, b2 = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = (x * b1 - b2) + w(c)
    return w(0.5) * (b0 - b2)


def bessel_i0e_kernel(x: np.ndarray) -> np.ndarray:
    """exp(-|x|) I0(x): a Chebyshev series in x/2 - 2 up to |x| = 8, in 32/|x| - 2 beyond."""
    w = x.dtype.type
    z = np.abs(x)
    near = _chebyshev(w(0.5) * z - w(2), _I0E_A, 18)
    far = _chebyshev(w(32) / z - w(2), _I0E_B, 7) / np.sqrt(z)
    return np.where(z <= w(8), near, far)


def bessel_i1e_kernel(x: np.ndarray) -> np.ndarray:
    """exp(-|x|) I1(x), odd in x: |x| times a Chebyshev series up to 8, a series in 32/|x|
    over sqrt(|x|) beyond."""
    w = x.dtype.type
    z = np.abs(x)
    near = z * _chebyshev(w(0.5) * z - w(2), _I1E_A, 17)
    far = _chebyshev(w(32) / z - w(2), _I1E_B, 7) / np.sqrt(z)
    return np.sign(x) * np.where(z <= w(8), near, far)


# ---------------------------------------------------------------------------------------------
# mulhi, reduce_precision (exact integer and bit manipulations)
# ---------------------------------------------------------------------------------------------

def _mulhi_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The high half of the double-width product: a widened product for up to 32 bits, four
    32-bit partial products (and a sign correction) for 64 bits."""
    dtype = x.dtype
    bits = dtype.itemsize * 8
    signed = dtype.kind == "i"
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    if bits < 64:
        wide = np.int64 if signed else np.uint64
        product = x.astype(wide) * y.astype(wide)
        return (product >> wide(bits)).astype(dtype)
    u = np.uint64
    xu, yu = x.view(u), y.view(u)
    low, half = u(0xFFFFFFFF), u(32)
    x_lo, x_hi, y_lo, y_hi = xu & low, xu >> half, yu & low, yu >> half
    lo_lo, lo_hi, hi_lo, hi_hi = x_lo * y_lo, x_lo * y_hi, x_hi * y_lo, x_hi * y_hi
    cross = (lo_hi & low) + (hi_lo & low) + (lo_lo >> half)
    high = hi_hi + (lo_hi >> half) + (hi_lo >> half) + (cross >> half)
    if signed:  # (x mod 2^64)(y mod 2^64) over-counts y 2^64 where x < 0, and x 2^64 where y < 0
        high = high - np.where(x < 0, yu, u(0)) - np.where(y < 0, xu, u(0))
    return high.view(dtype)


def _reduce_precision_impl(x: np.ndarray, *, exponent_bits: int, mantissa_bits: int
                           ) -> np.ndarray:
    """Round to `mantissa_bits` bits (to nearest, ties to even) and clamp the exponent to
    `exponent_bits` bits (overflow to +-inf, underflow to +-0) on the bit pattern, as XLA's
    ReducePrecision; nan stays nan."""
    info = dtypes.finfo(x.dtype)
    width = x.dtype.itemsize * 8
    src_mantissa, src_exponent = int(info.nmant), width - 1 - int(info.nmant)
    u = np.dtype(f"u{x.dtype.itemsize}").type
    value = np.asarray(x).view(u).copy()
    if mantissa_bits < src_mantissa:
        shift = src_mantissa - mantissa_bits
        last_bit = u(1 << shift)
        bias = ((value & last_bit) >> u(shift)) + u((1 << (shift - 1)) - 1)
        value = (value + bias) & ~u((1 << shift) - 1)
    if exponent_bits < src_exponent:
        sign = value & u(1 << (width - 1))
        exponent_mask = u(((1 << src_exponent) - 1) << src_mantissa)
        bias = (1 << (src_exponent - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = value & exponent_mask
        overflow = exponent > u((bias + reduced_bias) << src_mantissa)
        underflow = exponent <= u((bias - reduced_bias) << src_mantissa)
        value = np.where(overflow, sign | exponent_mask, value)
        value = np.where(underflow, sign, value)
    out = value.view(x.dtype)
    nan = np.isnan(x)
    if nan.any():
        out = np.where(nan, x, out)
    return np.asarray(out, x.dtype)


# ---------------------------------------------------------------------------------------------
# Primitives
# ---------------------------------------------------------------------------------------------

def _naryop(name: str, impl: Callable, kinds: tuple, text: str) -> Primitive:
    """An elementwise primitive of operands of one dtype among `kinds`, with lax's
    implicit broadcasting and JAX's naryop error texts (checked per position)."""
    def abstract_eval(*avals: ShapedArray) -> ShapedArray:
        shape = ew._broadcast_shapes(name, avals)
        for i, aval in enumerate(avals):
            if dtype_kind(aval.dtype) not in kinds:
                raise TypeError(f"{name} does not accept dtype {dtypes.dtype_name(aval.dtype)} "
                                f"at position {i}. Accepted dtypes at position {i} are "
                                f"subtypes of {text}.")
        if len({a.dtype for a in avals}) > 1:
            raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                            f"{', '.join(dtypes.dtype_name(a.dtype) for a in avals)}.")
        return ShapedArray(shape, avals[0].dtype, all(a.weak_type for a in avals))

    prim = make_primitive(name, impl, abstract_eval)
    prim.eager = fast_eager(kinds)
    batching.defbroadcasting(prim)
    return prim


def _unop(name: str, impl: Callable) -> Primitive:
    """A unary elementwise primitive on floats (JAX's standard_unop texts)."""
    def abstract_eval(x: ShapedArray, **params: Any) -> ShapedArray:
        check_kinds(name, (FLOAT,), x)
        return x

    prim = make_primitive(name, impl, abstract_eval)
    prim.eager = fast_eager((FLOAT,))
    batching.defvectorized(prim)
    return prim


def _raise(message: str) -> Callable:
    def rule(g: Any, *primals: Any) -> Any:
        raise ValueError(message)
    return rule


_FLOAT2 = ((FLOAT,), "floating")
igamma_p = _naryop("igamma", _upcast(igamma_kernel), *_FLOAT2)
igammac_p = _naryop("igammac", _upcast(igammac_kernel), *_FLOAT2)
igamma_grad_a_p = _naryop("igamma_grad_a", _upcast(igamma_grad_a_kernel), *_FLOAT2)
zeta_p = _naryop("zeta", _upcast(zeta_kernel), *_FLOAT2)
regularized_incomplete_beta_p = _naryop("regularized_incomplete_beta",
                                        _upcast(betainc_kernel), *_FLOAT2)
bessel_i0e_p = _unop("bessel_i0e", _upcast(bessel_i0e_kernel))
bessel_i1e_p = _unop("bessel_i1e", _upcast(bessel_i1e_kernel))
mulhi_p = _naryop("mulhi", _mulhi_impl, (INT, UINT), "integer")
reduce_precision_p = _unop("reduce_precision", _reduce_precision_impl)


def _igamma_grad_x(g: Any, a: Any, x: Any) -> Any:
    """g x^(a-1) e^-x / Gamma(a)."""
    return ew.mul(g, ew.exp(ew.sub(ew.add(ew.neg(x), ew.mul(ew.sub(a, ew._ones(a)), ew.log(x))),
                                   ew.lgamma(a))))


ad.defjvp(igamma_p, lambda g, a, x: ew.mul(g, igamma_grad_a(a, x)), _igamma_grad_x)
ad.defjvp(igammac_p, lambda g, a, x: ew.neg(ew.mul(g, igamma_grad_a(a, x))),
          lambda g, a, x: ew.neg(_igamma_grad_x(g, a, x)))
for _prim in (igamma_grad_a_p, zeta_p):
    _prim.jvp = ad.unimplemented_rule(_prim)


def _betainc_grad_x(g: Any, a: Any, b: Any, x: Any) -> Any:
    """g x^(a-1) (1-x)^(b-1) / B(a, b)."""
    lbeta = ew.sub(ew.add(ew.lgamma(a), ew.lgamma(b)), ew.lgamma(ew.add(a, b)))
    log_density = ew.add(ew.mul(ew.sub(b, ew._const(b, 1)), ew.log1p(ew.neg(x))),
                         ew.mul(ew.sub(a, ew._const(a, 1)), ew.log(x)))
    return ew.mul(ew.exp(ew.sub(log_density, lbeta)), g)


_NO_AB = "Betainc gradient with respect to a and b not supported."
ad.defjvp(regularized_incomplete_beta_p, _raise(_NO_AB), _raise(_NO_AB), _betainc_grad_x)
ad.defjvp2(bessel_i0e_p, lambda g, y, x: ew.mul(g, ew.sub(bessel_i1e(x), ew.mul(ew.sign(x), y))))


def _bessel_i1e_jvp(g: Any, y: Any, x: Any) -> Any:
    """g (i0e(x) - y (sign(x) + 1/x)), and g/2 where |x| <= eps (the limit at 0)."""
    dtype, weak = dtypes.dtype_and_weak(x)
    eps = dtypes.finfo(dtype).eps
    magnitude = ew.abs(x)
    if weak:  # JAX compares with a strongly typed eps: the weak |x| is converted first
        magnitude = ew._convert(magnitude, dtype, False)
    not_tiny = ew.gt(magnitude, ArrayImpl(np.asarray(eps, dtype), False))
    safe_x = ew.select(not_tiny, x, ew._full_like(x, eps))
    slope = ew.sub(bessel_i0e(safe_x), ew.mul(y, ew.add(ew.sign(safe_x), reciprocal(safe_x))))
    return ew.mul(g, ew.select(not_tiny, slope, ew._full_like(x, 0.5)))


ad.defjvp2(bessel_i1e_p, _bessel_i1e_jvp)
ad.defjvp_zero(mulhi_p)
ad.deflinear(reduce_precision_p, ew._linear_transpose(
    lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)]))


# ---------------------------------------------------------------------------------------------
# lax-level functions
# ---------------------------------------------------------------------------------------------

def igamma(a: Any, x: Any) -> Any:
    """Regularized lower incomplete gamma function P(a, x)."""
    return igamma_p.bind(a, x)


def igammac(a: Any, x: Any) -> Any:
    """Regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return igammac_p.bind(a, x)


def igamma_grad_a(a: Any, x: Any) -> Any:
    """dP(a, x)/da."""
    return igamma_grad_a_p.bind(a, x)


def zeta(x: Any, q: Any) -> Any:
    """Hurwitz zeta function sum_n (n + q)^-x."""
    return zeta_p.bind(x, q)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """Regularized incomplete beta function I_x(a, b)."""
    return regularized_incomplete_beta_p.bind(a, b, x)


def bessel_i0e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 0, exp(-|x|) I0(x)."""
    return bessel_i0e_p.bind(x)


def bessel_i1e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 1, exp(-|x|) I1(x)."""
    return bessel_i1e_p.bind(x)


def mulhi(x: Any, y: Any) -> Any:
    """The upper N bits of the 2N-bit product of N-bit integers."""
    return mulhi_p.bind(x, y)


def reciprocal(x: Any) -> Any:
    """1 / x, as JAX writes it: integer_pow(x, -1)."""
    return ew.integer_pow(x, -1)


def _static_int(value: Any, what: str) -> int:
    if isinstance(value, Tracer):
        from pyjax._src import errors
        raise errors.ConcretizationTypeError(value, what)
    return operator.index(value)


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """Round `operand` to a float format of the given exponent and mantissa widths (XLA's
    ReducePrecision), keeping its dtype."""
    exponent_bits = _static_int(exponent_bits, "exponent_bits argument of lax.reduce_precision")
    mantissa_bits = _static_int(mantissa_bits, "mantissa_bits argument of lax.reduce_precision")
    return reduce_precision_p.bind(operand, exponent_bits=exponent_bits,
                                   mantissa_bits=mantissa_bits)


def _reduce_precision_abstract(x: ShapedArray, *, exponent_bits: int, mantissa_bits: int
                               ) -> ShapedArray:
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError("reduce_precision: mantissa_bits must be non-negative; got "
                         f"{mantissa_bits}")
    check_kinds("reduce_precision", (FLOAT,), x)
    return x


reduce_precision_p.abstract_eval = _reduce_precision_abstract
reduce_precision_p.sharding_rule = propagation.elementwise


# lgamma, digamma and polygamma are elementwise.py's primitives; their impls are these
# kernels (XLA's algorithms).
lgamma_impl = _upcast(lgamma_kernel)
digamma_impl = _upcast(digamma_kernel)
polygamma_impl = _upcast(polygamma_kernel)
