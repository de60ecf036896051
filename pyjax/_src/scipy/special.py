"""`jax.scipy.special`'s core: gamma/beta families, error functions, logistic pieces, entropy
terms, normal-distribution helpers, Bessel I0/I1, zeta/polygamma, combinatorics.

Each function follows JAX 0.10.2's formulation step by step (same lax/jnp operations, same
constants, same custom JVPs), so float32 results and staged jaxprs agree with JAX's.
"""
from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.compat.core import concrete_or_error
from pyjax._src.core import dtypes
from pyjax._src.core.array import Array
from pyjax._src.numpy.util import lax_const
from pyjax._src.numpy.util import promote_args_inexact, staged_as_jit
from pyjax._src.nn import functions as nn_functions
from pyjax._src.ops.special import logsumexp  # noqa: F401 (jax.scipy.special.logsumexp)
from pyjax._src.transforms.ad_api import jvp
from pyjax._src.transforms.custom_derivatives import custom_jvp


def _is_complex(x: Any) -> bool:
    return dtypes.issubdtype(x.dtype, np.complexfloating)


def const(x: Any, value: Any) -> Any:
    """A constant of x's dtype as JAX's lax._const makes it: a weak Python scalar for a weak
    scalar x, else a NumPy array (so constant-only arithmetic folds, as in JAX)."""
    c = lax_const(x, value)
    return np.asarray(c) if isinstance(c, Array) else c


_c = const


# --------------------------------------------------------------------------------------------
# gamma family
# --------------------------------------------------------------------------------------------

def gammaln(x: Any) -> Array:
    """log|Gamma(x)| (lax.lgamma)."""
    x, = promote_args_inexact("gammaln", x)
    return lax.lgamma(x)


@staged_as_jit
def gammasgn(x: Any) -> Array:
    """Sign of Gamma(x): nan at poles and nan inputs, -1 on odd negative stretches and -0."""
    x, = promote_args_inexact("gammasgn", x)
    if _is_complex(x):
        raise ValueError("gammasgn does not support complex-valued inputs.")
    typ = x.dtype.type
    floor_x = lax.floor(x)
    negative = x < 0
    pole_or_nan = (negative & (x == floor_x)) | jnp.isnan(x)
    minus = (negative & (floor_x % 2 != 0)) | ((x == 0) & jnp.signbit(x))
    return jnp.select([pole_or_nan, minus], [typ(np.nan), typ(-1.0)], typ(1.0))


#: Lanczos approximation, g = 7 and nine terms (the coefficients GSL tabulates)
_LANCZOS_G = 7.0
_LANCZOS_COEFFS = np.array([
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
    -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
    1.5056327351493116e-7])


def _complex_loggamma(z: Array) -> Array:
    """Lanczos log-gamma for complex z, reflected (Euler) where Re z < 1/2."""
    reflect = jnp.real(z) < 0.5
    zl = jnp.where(reflect, 1.0 - z, z)
    zz = zl - 1.0
    coeffs = jnp.asarray(_LANCZOS_COEFFS, dtype=z.dtype)
    ks = lax.expand_dims(jnp.arange(1, 9, dtype=z.dtype), tuple(range(zz.ndim)))
    ag = coeffs[0] + jnp.sum(lax.expand_dims(coeffs[1:], tuple(range(zz.ndim))) / (
        lax.expand_dims(zz, (zz.ndim,)) + ks), axis=-1)
    t = zz + _LANCZOS_G + 0.5
    half_log2pi = jnp.asarray(0.5 * np.log(2.0 * np.pi), dtype=z.dtype)
    lanczos = half_log2pi + (zz + 0.5) * jnp.log(t) - t + jnp.log(ag)
    z_safe = jnp.where(reflect, z, jnp.full_like(z, 0.5))
    reflected = (jnp.log(jnp.asarray(np.pi, dtype=z.dtype)) - jnp.log(jnp.sin(np.pi * z_safe))
                 - lanczos)
    return jnp.where(reflect, reflected, lanczos)


def _complex_poles(z: Array) -> tuple[Array, Array, Array]:
    """(nan-or-pole mask, z with those replaced by 1, complex nan of z's dtype)."""
    is_nan = jnp.isnan(z)
    is_pole = (jnp.imag(z) == 0) & (jnp.real(z) == jnp.floor(jnp.real(z))) & (jnp.real(z) <= 0)
    nan_val = jnp.array(complex(np.nan, np.nan), dtype=z.dtype)
    safe = is_pole | is_nan
    return safe, jnp.where(safe, jnp.ones_like(z), z), nan_val


def _complex_gamma(z: Array) -> Array:
    safe, z_safe, nan_val = _complex_poles(z)
    return jnp.where(safe, nan_val, jnp.exp(_complex_loggamma(z_safe)))


@staged_as_jit
def _complex_loggamma_scipy(z: Array) -> Array:
    """SciPy's branch of complex log-gamma: shift Re z up to >= 1/2 by the recurrence, so the
    imaginary part is continuous (no reflection)."""
    safe, z_safe, nan_val = _complex_poles(z)
    n = jnp.maximum(0, jnp.ceil(0.5 - jnp.real(z_safe)).astype(int))

    def cond_fun(state: tuple) -> Array:
        k, _ = state
        return jnp.any(k < n)

    def body_fun(state: tuple) -> tuple:
        k, sum_log = state
        mask = k < n
        zk = jnp.where(mask, z_safe + k, jnp.ones_like(z_safe))
        return k + 1, sum_log + jnp.where(mask, jnp.log(zk), jnp.zeros_like(sum_log))

    _, sum_log = lax.while_loop(cond_fun, body_fun, (0, jnp.zeros_like(z_safe)))
    return jnp.where(safe, nan_val, _complex_loggamma(z_safe + n) - sum_log)


def loggamma(x: Any) -> Array:
    """Principal branch of log Gamma: real inputs give nan for x <= 0."""
    x, = promote_args_inexact("loggamma", x)
    if _is_complex(x):
        return _complex_loggamma_scipy(x)
    res = lax.lgamma(x)
    return jnp.where(x > 0, res, jnp.nan)


def gamma(x: Any) -> Array:
    """Gamma(x) = gammasgn(x) exp(lgamma(x)); complex inputs through Lanczos."""
    x, = promote_args_inexact("gamma", x)
    if _is_complex(x):
        return _complex_gamma(x)
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def _algdiv(a: Array, b: Array) -> Array:
    """log(Gamma(b) / Gamma(a + b)) for b >= 8 (cdflib's algdiv, assuming a <= b)."""
    c0, c1, c2 = 0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03
    c3, c4, c5 = -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02
    h = a / b
    c = h / (1 + h)
    x = h / (1 + h)
    d = b + (a - 0.5)
    # s_n = (1 - x^n) / (1 - x)
    x2 = x * x
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    # w = del(b) - del(a + b), del the remainder of Stirling's series
    t = (1.0 / b) ** 2
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
    w = w * (c / b)
    u = d * lax.log1p(a / b)
    v = a * (lax.log(b) - 1.0)
    return jnp.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a: Any, b: Any) -> Array:
    """log|B(a, b)|, with cdflib's algdiv for b >= 8 (accurate for large arguments)."""
    a, b = promote_args_inexact("betaln", a, b)
    a, b = jnp.minimum(a, b), jnp.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large_b = lax.lgamma(a) + _algdiv(a, b)
    return jnp.where(b < 8, small_b, large_b)


def beta(a: Any, b: Any) -> Array:
    """B(a, b) = sign * exp(betaln(a, b))."""
    a, b = promote_args_inexact("beta", a, b)
    if _is_complex(a):
        raise ValueError("beta does not support complex-valued inputs.")
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def factorial(n: Any, exact: bool = False) -> Array:
    """n! = Gamma(n + 1) (0 for n < 0); exact=True is unsupported, as in JAX."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    n, = promote_args_inexact("factorial", n)
    return jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


def comb(N: Any, k: Any, *, repetition: bool = False) -> Array:  # noqa: N803 - SciPy's name
    """Binomial coefficient through log-gamma (0 outside 0 <= k <= N)."""
    N, k = promote_args_inexact("comb", N, k)
    if repetition:
        cond = (k == 0) & (N >= 0)
        return jnp.where(cond, 1.0, comb(N + k - 1, k, repetition=False))
    cond = (k <= N) & (N >= 0) & (k >= 0)
    safe_N = jnp.where(cond, N, 0.0)
    safe_k = jnp.where(cond, k, 0.0)
    result = lax.exp(gammaln(safe_N + 1) - gammaln(safe_k + 1) - gammaln(safe_N + 1 - safe_k))
    return jnp.where(cond, result, 0.0)


def betainc(a: Any, b: Any, x: Any) -> Array:
    """Regularized incomplete beta I_x(a, b) (lax.betainc)."""
    a, b, x = promote_args_inexact("betainc", a, b, x)
    if _is_complex(x):
        raise ValueError("betainc does not support complex-valued inputs.")
    return lax.betainc(a, b, x)


def digamma(x: Any) -> Array:
    """psi(x) = d/dx log Gamma(x) (lax.digamma)."""
    x, = promote_args_inexact("digamma", x)
    return lax.digamma(x)


def gammainc(a: Any, x: Any) -> Array:
    """Regularized lower incomplete gamma P(a, x) (lax.igamma)."""
    a, x = promote_args_inexact("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a: Any, x: Any) -> Array:
    """Regularized upper incomplete gamma Q(a, x) (lax.igammac)."""
    a, x = promote_args_inexact("gammaincc", a, x)
    return lax.igammac(a, x)


def multigammaln(a: Any, d: Any) -> Array:
    """log of the multivariate gamma function of dimension d (d concrete)."""
    d = concrete_or_error(int, d, "d argument of multigammaln")
    a, d_ = promote_args_inexact("multigammaln", a, d)
    constant = lax.mul(lax.mul(lax.mul(_c(a, 0.25), d_), lax.sub(d_, _c(a, 1))),
                       lax.log(_c(a, np.pi)))
    b = lax.div(jnp.arange(d, dtype=d_.dtype), _c(a, 2))
    shifted = jnp.expand_dims(a, axis=-1) - jnp.expand_dims(b, axis=tuple(range(a.ndim)))
    return jnp.sum(gammaln(shifted), axis=-1) + constant


@custom_jvp
def poch(z: Any, m: Any) -> Array:
    """Rising factorial (z)_m = Gamma(z + m) / Gamma(z)."""
    z, m = promote_args_inexact("poch", z, m)
    if _is_complex(z):
        raise ValueError("jnp.poch does not support complex-valued inputs.")
    return jnp.where(m == 0.0, jnp.array(1, dtype=z.dtype), gamma(z + m) / gamma(z))


def _poch_z_derivative(z: Any, m: Any) -> Array:
    return (digamma(z + m) - digamma(z)) * poch(z, m)


def _poch_m_derivative(z: Any, m: Any) -> Array:
    return digamma(z + m) * poch(z, m)


poch.defjvps(lambda z_dot, primal_out, z, m: _poch_z_derivative(z, m) * z_dot,
             lambda m_dot, primal_out, z, m: _poch_m_derivative(z, m) * m_dot)


# --------------------------------------------------------------------------------------------
# error functions
# --------------------------------------------------------------------------------------------

def erf(x: Any) -> Array:
    """Error function (lax.erf)."""
    x, = promote_args_inexact("erf", x)
    return lax.erf(x)


def erfc(x: Any) -> Array:
    """Complementary error function (lax.erfc)."""
    x, = promote_args_inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x: Any) -> Array:
    """Inverse error function (lax.erf_inv)."""
    x, = promote_args_inexact("erfinv", x)
    return lax.erf_inv(x)


# --------------------------------------------------------------------------------------------
# logistic, x log y, entropies, Box-Cox
# --------------------------------------------------------------------------------------------

@custom_jvp
def logit(x: Any) -> Array:
    """log(x / (1 - x)), with derivative 1 / (x (1 - x))."""
    x, = promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(_c(x, 1), x)))


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_c(x, 1), x))))


def expit(x: Any) -> Array:
    """Logistic sigmoid 1 / (1 + exp(-x)) (lax.logistic)."""
    x, = promote_args_inexact("expit", x)
    return lax.logistic(x)


@custom_jvp
def xlogy(x: Any, y: Any) -> Array:
    """x * log(y), 0 where x == 0 (unless y is nan)."""
    x, y = promote_args_inexact("xlogy", x, y)
    x_ok = x != 0.0
    return jnp.where(x_ok | jnp.isnan(y), lax.mul(x, lax.log(y)), jnp.zeros_like(x))


def _xlogy_jvp(primals: tuple, tangents: tuple) -> tuple:
    x, y = primals
    x_dot, y_dot = tangents
    result = xlogy(x, y)
    return result, (x_dot * lax.log(y) + y_dot * x / y).astype(result.dtype)


xlogy.defjvp(_xlogy_jvp)


@custom_jvp
def xlog1py(x: Any, y: Any) -> Array:
    """x * log1p(y), 0 where x == 0 (unless y is nan)."""
    x, y = promote_args_inexact("xlog1py", x, y)
    x_ok = x != 0.0
    return jnp.where(x_ok | jnp.isnan(y), lax.mul(x, lax.log1p(y)), jnp.zeros_like(x))


def _xlog1py_jvp(primals: tuple, tangents: tuple) -> tuple:
    x, y = primals
    x_dot, y_dot = tangents
    result = xlog1py(x, y)
    return result, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(result.dtype)


xlog1py.defjvp(_xlog1py_jvp)


@custom_jvp
def _xlogx(x: Any) -> Array:
    return xlogy(x, x)


def _xlogx_jvp(primals: tuple, tangents: tuple) -> tuple:
    x, = primals
    x_dot, = tangents
    return _xlogx(x), x_dot * (lax.log(x) + 1)


_xlogx.defjvp(_xlogx_jvp)


def entr(x: Any) -> Array:
    """Elementwise entropy -x log x (0 at 0, -inf for x < 0)."""
    x, = promote_args_inexact("entr", x)
    if _is_complex(x):
        raise ValueError("entr does not support complex-valued inputs.")
    return lax.select(lax.lt(x, _c(x, 0)), lax.full_like(x, -np.inf), lax.neg(_xlogx(x)))


def rel_entr(p: Any, q: Any) -> Array:
    """p log(p / q) for p, q > 0; 0 at p == 0 <= q; inf otherwise."""
    p, q = promote_args_inexact("rel_entr", p, q)
    if _is_complex(p):
        raise ValueError("rel_entr does not support complex-valued inputs.")
    zero = _c(p, 0.0)
    both_gt_zero = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
    one_zero = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
    safe_p = jnp.where(both_gt_zero, p, 1)
    safe_q = jnp.where(both_gt_zero, q, 1)
    log_val = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    return jnp.where(both_gt_zero, log_val, jnp.where(one_zero, zero, np.inf))


def kl_div(p: Any, q: Any) -> Array:
    """rel_entr(p, q) - p + q."""
    p, q = promote_args_inexact("kl_div", p, q)
    if _is_complex(p):
        raise ValueError("kl_div does not support complex-valued inputs.")
    return rel_entr(p, q) - p + q


def boxcox(x: Any, lmbda: Any) -> Array:
    """Box-Cox transform: (x^lmbda - 1) / lmbda, log x at lmbda == 0."""
    x, lmbda = promote_args_inexact("boxcox", x, lmbda)
    lmbda_is_zero = lmbda == 0
    safe_lmbda = jnp.where(lmbda_is_zero, jnp.ones_like(lmbda), lmbda)
    log_x = jnp.log(x)
    power = jnp.expm1(safe_lmbda * log_x) / safe_lmbda
    return jnp.where(lmbda_is_zero, log_x, power)


def boxcox1p(x: Any, lmbda: Any) -> Array:
    """Box-Cox transform of 1 + x."""
    x, lmbda = promote_args_inexact("boxcox1p", x, lmbda)
    lmbda_is_zero = lmbda == 0
    safe_lmbda = jnp.where(lmbda_is_zero, jnp.ones_like(lmbda), lmbda)
    log1p_x = jnp.log1p(x)
    power = jnp.expm1(safe_lmbda * log1p_x) / safe_lmbda
    return jnp.where(lmbda_is_zero, log1p_x, power)


# --------------------------------------------------------------------------------------------
# zeta, polygamma, Bernoulli numbers
# --------------------------------------------------------------------------------------------

#: (2k)! / B_2k for k = 1..16: the Euler-Maclaurin tail's denominators
_BERNOULLI_COEFS = np.array([
    12, -720, 30240, -1209600, 47900160, -1307674368000 / 691, 74724249600,
    -10670622842880000 / 3617, 5109094217170944000 / 43867,
    -802857662698291200000 / 174611, 14101100039391805440000 / 77683,
    -1693824136731743669452800000 / 236364091, 186134520519971831808000000 / 657931,
    -37893265687455865519472640000000 / 3392780147,
    759790291646040068357842010112000000 / 1723168255201,
    -134196726836183700385281186201600000000 / 7709321041217])

_NO_RIEMANN = ("Riemann zeta function not implemented; pass q != None to compute the Hurwitz "
               "Zeta function.")


def _zeta_primal(x: Any, q: Any) -> Array:
    x, q = promote_args_inexact("zeta", x, q)
    return lax.zeta(x, q)


_zeta_primal.__name__ = "zeta"


def _zeta_series_expansion(x: Any, q: Any = None) -> Array:
    """Hurwitz zeta by Euler-Maclaurin summation in jnp (N terms, M Bernoulli corrections),
    differentiable in both arguments: JAX's derivative rule for zeta is its JVP."""
    if q is None:
        raise NotImplementedError(_NO_RIEMANN)
    s, a = promote_args_inexact("zeta", x, q)
    dtype = lax.dtype(a).type
    s_, a_ = jnp.expand_dims(s, -1), jnp.expand_dims(a, -1)
    N = M = dtype(8) if lax.dtype(a) == np.float32 else dtype(16)  # noqa: N806
    k = jnp.expand_dims(np.arange(N, dtype=N.dtype), tuple(range(a.ndim)))
    S = jnp.sum((a_ + k) ** (-s_), -1)  # noqa: N806
    I = lax.div((a + N) ** (dtype(1) - s), s - dtype(1))  # noqa: N806,E741
    T0 = (a + N) ** (-s)  # noqa: N806
    m = jnp.expand_dims(np.arange(2 * M, dtype=M.dtype), tuple(range(s.ndim)))
    s_over_a = (s_ + m) / (a_ + N)
    T1 = jnp.cumprod(s_over_a, -1)[..., ::2]  # noqa: N806
    T1 = jnp.clip(T1, max=dtypes.finfo(dtype).max)  # noqa: N806
    coefs = np.expand_dims(np.array(_BERNOULLI_COEFS[:T1.shape[-1]], dtype=dtype),
                           tuple(range(a.ndim)))
    T1 = T1 / coefs  # noqa: N806
    T = T0 * (dtype(0.5) + T1.sum(-1))  # noqa: N806
    return S + I + T


_zeta = custom_jvp(_zeta_primal)
_zeta.defjvp(functools.partial(jvp, _zeta_series_expansion))


def zeta(x: Any, q: Any = None) -> Array:
    """Hurwitz zeta function sum_k (k + q)^-x (q is required, as in JAX)."""
    if q is None:
        raise NotImplementedError(_NO_RIEMANN)
    return _zeta(x, q)


def polygamma(n: Any, x: Any) -> Array:
    """n-th derivative of digamma; n must have an integer dtype."""
    if not dtypes.issubdtype(lax.dtype(n), np.integer):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{lax.dtype(n)}.")
    n_arr, x_arr = promote_args_inexact("polygamma", n, x)
    if _is_complex(x_arr):
        raise ValueError("polygamma does not support complex-valued inputs.")
    return lax.polygamma(n_arr, x_arr)


def bernoulli(n: int) -> Array:
    """The first n + 1 Bernoulli numbers B_0..B_n (B_1 = -1/2), from the zeta series of the
    even ones."""
    n = concrete_or_error(operator.index, n, "Argument n of bernoulli")
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    b3 = jnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return b3[:n + 1]
    bn = jnp.zeros(n + 1).at[:3].set(b3)
    m = jnp.arange(4, n + 1, 2, dtype=bn.dtype)
    q1 = (1. / np.pi ** 2) * jnp.cumprod(-(m - 1) * m / 4 / np.pi ** 2)
    k = jnp.arange(2, 50, dtype=bn.dtype)
    q2 = jnp.sum(k[:, None] ** -m[None, :], axis=0)
    return bn.at[4::2].set(q1 * (1 + q2))


# --------------------------------------------------------------------------------------------
# the normal distribution: ndtr, ndtri, log_ndtr
# --------------------------------------------------------------------------------------------

_LOGNDTR_FLOAT64_LOWER = np.array(-20, np.float64)
_LOGNDTR_FLOAT32_LOWER = np.array(-10, np.float32)
_LOGNDTR_FLOAT64_UPPER = np.array(8, np.float64)
_LOGNDTR_FLOAT32_UPPER = np.array(5, np.float32)


def _check_float32_or_64(dtype: Any, name: str = "x") -> None:
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"{name}.dtype={dtype} is not supported, see docstring for supported "
                        "types.")


def ndtr(x: Any) -> Array:
    """Standard normal CDF, through erf near 0 and erfc in the tails."""
    x = jnp.asarray(x)
    _check_float32_or_64(lax.dtype(x))
    return _ndtr(x)


def _ndtr(x: Any) -> Array:
    dtype = lax.dtype(x).type
    half_sqrt_2 = dtype(0.5) * np.sqrt(2., dtype=dtype)
    w = x * half_sqrt_2
    z = lax.abs(w)
    y = lax.select(lax.lt(z, half_sqrt_2), dtype(1.) + lax.erf(w),
                   lax.select(lax.gt(w, dtype(0.)), dtype(2.) - lax.erfc(z), lax.erfc(z)))
    return dtype(0.5) * y


#: Cephes ndtri's rational approximations: p0/q0 for |p - 1/2| <= 1/2 - exp(-2), p1/q1 for
#: z = sqrt(-2 log p) in [2, 8), p2/q2 for z >= 8
_NDTRI_P0 = [-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0]
_NDTRI_Q0 = [1.0, 1.95448858338141759834E0, 4.67627912898881538453E0,
             8.63602421390890590575E1, -2.25462687854119370527E2, 2.00260212380060660359E2,
             -8.20372256168333339912E1, 1.59056225126211695515E1, -1.18331621121330003142E0]
_NDTRI_P1 = [4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2,
             -8.57456785154685413611E-4]
_NDTRI_Q1 = [1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4]
_NDTRI_P2 = [3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6,
             6.23974539184983293730E-9]
_NDTRI_Q2 = [1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9]


def ndtri(p: Any) -> Array:
    """Inverse of the standard normal CDF (Cephes' rational approximations)."""
    _check_float32_or_64(lax.dtype(p))
    return _ndtri(p)


def _ndtri(p: Any) -> Array:
    dtype = lax.dtype(p).type
    shape = np.shape(p)
    p0, q0, p1, q1, p2, q2 = (np.array(c, dtype=dtype) for c in (
        _NDTRI_P0, _NDTRI_Q0, _NDTRI_P1, _NDTRI_Q1, _NDTRI_P2, _NDTRI_Q2))
    # work on min(p, 1 - p) when p is large, and keep p == 0 away from log(0)
    maybe_complement_p = jnp.where(p > dtype(-np.expm1(-2.)), dtype(1.) - p, p)
    sanitized_mcp = jnp.where(maybe_complement_p == dtype(0.), jnp.full(shape, dtype(0.5)),
                              maybe_complement_p)
    w = sanitized_mcp - dtype(0.5)
    ww = lax.square(w)
    x_for_big_p = w + w * ww * (jnp.polyval(p0, ww) / jnp.polyval(q0, ww))
    x_for_big_p *= -dtype(np.sqrt(2. * np.pi))
    z = lax.sqrt(dtype(-2.) * lax.log(sanitized_mcp))
    first_term = z - lax.log(z) / z
    second_term_small_p = jnp.polyval(p2, 1 / z) / jnp.polyval(q2, 1 / z) / z
    second_term_otherwise = jnp.polyval(p1, 1 / z) / jnp.polyval(q1, 1 / z) / z
    x_for_small_p = first_term - second_term_small_p
    x_otherwise = first_term - second_term_otherwise
    x = jnp.where(sanitized_mcp > dtype(np.exp(-2.)), x_for_big_p,
                  jnp.where(z >= dtype(8.0), x_for_small_p, x_otherwise))
    x = jnp.where(p > dtype(1. - np.exp(-2.)), x, -x)
    infinity = jnp.full(shape, dtype(np.inf))
    return jnp.where(p == dtype(0.0), -infinity, jnp.where(p == dtype(1.0), infinity, x))


def _log_ndtr_body(x: Any, series_order: int) -> Array:
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x_arr = jnp.asarray(x)
    dtype = lax.dtype(x_arr)
    if dtype == np.float64:
        lower, upper = _LOGNDTR_FLOAT64_LOWER, _LOGNDTR_FLOAT64_UPPER
    elif dtype == np.float32:
        lower, upper = _LOGNDTR_FLOAT32_LOWER, _LOGNDTR_FLOAT32_UPPER
    else:
        raise TypeError(f"x.dtype={np.dtype(dtype)} is not supported.")
    # upper tail: log(1 - q) ~ -q with q = ndtr(-x); middle: log(ndtr(x)); lower tail: the
    # asymptotic series
    above = lax.gt(x_arr, upper)
    ndtr_arg = jnp.where(above, -x_arr, lax.max(x_arr, lower))
    ndtr_res = _ndtr(ndtr_arg)
    return jnp.where(above, -ndtr_res,
                     jnp.where(lax.gt(x_arr, lower), lax.log(ndtr_res),
                               _log_ndtr_lower(lax.min(x_arr, lower), series_order)))


_log_ndtr_body.__name__ = "log_ndtr"
_log_ndtr = custom_jvp(_log_ndtr_body, nondiff_argnums=(1,))


def _log_ndtr_jvp(series_order: int, primals: tuple, tangents: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x, series_order)
    return ans, lax.mul(t, lax.exp(lax.sub(_norm_logpdf(x), ans)))


_log_ndtr.defjvp(_log_ndtr_jvp)


def log_ndtr(x: Any, series_order: int = 3) -> Array:
    """log of the standard normal CDF, accurate in both tails (asymptotic series of
    `series_order` terms below -20 (float64) / -10 (float32))."""
    return _log_ndtr(x, series_order)


def _log_ndtr_lower(x: Array, series_order: int) -> Array:
    dtype = lax.dtype(x).type
    x_2 = lax.square(x)
    log_scale = -dtype(0.5) * x_2 - lax.log(-x) - dtype(0.5 * np.log(2. * np.pi))
    return log_scale + lax.log(_log_ndtr_asymptotic_series(x, series_order))


def _log_ndtr_asymptotic_series(x: Array, series_order: int) -> Any:
    """1 + sum_n (-1)^n (2n - 1)!! / x^(2n), summed as even and odd parts."""
    dtype = lax.dtype(x).type
    if series_order <= 0:
        return np.array(1, dtype)
    x_2 = lax.square(x)
    even_sum = jnp.zeros_like(x)
    odd_sum = jnp.zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = np.array(_double_factorial(2 * n - 1), dtype) / x_2n
        if n % 2:
            odd_sum += y
        else:
            even_sum += y
        x_2n *= x_2
    return dtype(1.) + even_sum - odd_sum


def _double_factorial(n: int) -> np.integer:
    return np.prod(np.arange(n, 1, -2))


_NORM_LOGPDF_CONSTANT = np.log(np.sqrt(2 * np.pi))


def _norm_logpdf(x: Any) -> Array:
    return lax.sub(lax.mul(_c(x, -0.5), lax.square(x)), _c(x, _NORM_LOGPDF_CONSTANT))


# --------------------------------------------------------------------------------------------
# modified Bessel functions of orders 0 and 1
# --------------------------------------------------------------------------------------------

def i0e(x: Any) -> Array:
    """Exponentially scaled I0: exp(-|x|) I0(x)."""
    x, = promote_args_inexact("i0e", x)
    return lax.bessel_i0e(x)


def i0(x: Any) -> Array:
    """Modified Bessel function I0 = exp(|x|) i0e(x)."""
    x, = promote_args_inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i0e(x))


def i1e(x: Any) -> Array:
    """Exponentially scaled I1: exp(-|x|) I1(x)."""
    x, = promote_args_inexact("i1e", x)
    return lax.bessel_i1e(x)


def i1(x: Any) -> Array:
    """Modified Bessel function I1 = exp(|x|) i1e(x)."""
    x, = promote_args_inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))


# --------------------------------------------------------------------------------------------
# softmax (SciPy's signature: axis=None normalizes over the whole array)
# --------------------------------------------------------------------------------------------

def softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """exp(x) / sum(exp(x)) over `axis` (all axes by default)."""
    return nn_functions.softmax(x, axis=axis)


def log_softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """x - logsumexp(x) over `axis` (all axes by default)."""
    return nn_functions.log_softmax(x, axis=axis)
