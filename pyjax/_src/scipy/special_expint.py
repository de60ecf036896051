"""`jax.scipy.special`'s exponential, sine and cosine integrals and Spence's function: expi,
expn, exp1, sici, spence (Cephes' rational approximations, series and continued fractions, as
JAX 0.10.2 evaluates them)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.core.array import Array
from pyjax._src.numpy.util import promote_args_inexact, staged_as_jit
from pyjax._src.numpy.vectorize import vectorize
from pyjax._src.scipy.special import const as _c
from pyjax._src.scipy.special import gammaln
from pyjax._src.transforms.custom_derivatives import custom_jvp

# --------------------------------------------------------------------------------------------
# Ei(x) for x > 0: a rational function times x plus gamma + log x on (0, 2], and
# exp(x)/x (1 + A(1/x)/B(1/x) / x) on (2^k, 2^(k+1)] for k = 1..5 and beyond (Cephes' expi)
# --------------------------------------------------------------------------------------------

_EXPINT_A1 = [
    -5.350447357812543, 218.50491688166133, -4176.572384826693, 55411.76756393557,
    -331338.13311781443, 1592627.1633849454]
_EXPINT_B1 = [
    1.0, -52.505479591128626, 1259.6161867867906, -17565.495819735348, 149306.2117002726,
    -729494.9239640528, 1592627.1633849454]
#: (A, B) for (2, 4], (4, 8], (8, 16], (16, 32], (32, 64], (64, inf)
_EXPINT_AB = [
    ([0.019818085032596897, -1.2716456259849176, -2.0881603356812284, 2.7555445091879367,
      -0.44095070487016, 0.046656238059358916, -0.0015450426796734852, 7.059980605299618e-05],
     [1.0, 1.4764986709149215, 0.5629177174822436, 0.16990178978793072, 0.02291647179034212,
      0.0044501504397287525, 0.00017274396122065214, 3.953167195549672e-05]),
    ([-1.3732153758712087, -0.7084559133740839, 1.580806855547941, -0.2601500427425623,
      0.029946746941137137, -0.001038086040188744, 4.371064420753005e-05,
      2.141783679522603e-06],
     [1.0, 0.8585231423622028, 0.4483285822873995, 0.07687932158124476, 0.024498682410218877,
      0.0008832165941927797, 0.00045909522995113536, -4.729848351866523e-06,
      2.66519553739071e-06]),
    ([-2.1069346016919166, 1.7327338696646881, -0.2423619178935842, 0.02322724180937566,
      0.00023728804404931798, -8.343219561192553e-05, 1.3634087956052505e-05,
      -3.655412321999254e-07, 1.4649417339759612e-08, 6.17640786371036e-10],
     [1.0, -0.2298062239901678, 0.11050770414740378, -0.015665429666307924,
      0.002761106850817353, -0.00020891480122840484, 1.7085289388076754e-05,
      -4.4593117963566865e-07, 1.3946349303538475e-08, 6.150865933977338e-10]),
    ([-0.24581193676740204, -0.14833822533220778, 0.07248291795735552, -0.013483156873809405,
      0.001342775069788637, -7.942465637159712e-05, 2.644179518984236e-06,
      -4.239473659313765e-08],
     [1.0, -0.10442259084438711, -0.26764531281014026, 0.09695000254621984,
      -0.01601745692712991, 0.001496414899205908, -8.462452563778485e-05,
      2.7289384034767266e-06, -4.239462431819542e-08]),
    ([0.12125611181054567, -0.5823133179043894, 0.2348887314557017, -0.030400343181132484,
      0.0015100821468651906, -2.5231370954995714e-05],
     [1.0, -1.002252150365854, 0.2928709694872224, -0.03337004338674008,
      0.0015605448811273888, -2.5231370936032347e-05]),
    ([-0.7657847078286127, 0.6886192415566705, -0.2132598113545206, 0.033461075523841935,
      -0.003076541477344756, 0.00017471193164549074, -6.1037116822741705e-06,
      1.218032765428652e-07, -1.0860761027932903e-09],
     [1.0, -1.8888028686623086, 1.066691687211409, -0.27519159823063805, 0.039308526882338234,
      -0.003414684558602365, 0.00018668443707035555, -6.345146083130515e-06,
      1.239754287483207e-07, -1.0860761027931265e-09]),
]


def _expint1(x: Array) -> Array:
    A = np.array(_EXPINT_A1, dtype=x.dtype)  # noqa: N806
    B = np.array(_EXPINT_B1, dtype=x.dtype)  # noqa: N806
    f = jnp.polyval(A, x) / jnp.polyval(B, x)
    return x * f + np.euler_gamma + jnp.log(x)


def _eval_expint_k(A: Any, B: Any, x: Array) -> Array:  # noqa: N803
    one = _c(x, 1.0)
    w = one / x
    f = jnp.polyval(A, w) / jnp.polyval(B, w)
    f = w * f + one
    return jnp.exp(x) * w * f


def _expint_k(k: int) -> Callable[[Array], Array]:
    """Ei on the k-th interval (k = 0 for (2, 4])."""
    def expint(x: Array) -> Array:
        a, b = _EXPINT_AB[k]
        return _eval_expint_k(np.array(a, dtype=x.dtype), np.array(b, dtype=x.dtype), x)
    expint.__name__ = f"_expint{k + 2}"
    return expint


def _expi_pos(x: Array) -> Array:
    conds = [(x > _c(x, 0)) & (x <= _c(x, 2))] + [
        (x > _c(x, 2 ** i)) & (x <= _c(x, 2 ** (i + 1))) for i in range(1, 6)]
    return jnp.piecewise(x, conds, [_expint1] + [_expint_k(k) for k in range(6)])


def _expi_neg(x: Array) -> Array:
    return -exp1(-x)


def _expi(x: Any) -> Array:
    x_arr, = promote_args_inexact("expi", x)
    if dtypes.issubdtype(x_arr.dtype, np.complexfloating):
        raise ValueError("expi does not support complex-valued inputs.")
    return jnp.piecewise(x_arr, [x_arr < 0], [_expi_neg, _expi_pos])


_expi.__name__ = "expi"
expi = custom_jvp(staged_as_jit(_expi))
expi.__doc__ = "Exponential integral Ei(x) (for x < 0, -E1(-x))."


@expi.defjvp
@staged_as_jit
def expi_jvp(primals: tuple, tangents: tuple) -> tuple:
    x, = primals
    x_dot, = tangents
    return expi(x), jnp.exp(x) / x * x_dot


# --------------------------------------------------------------------------------------------
# sine and cosine integrals
# --------------------------------------------------------------------------------------------

_SI_SN = [-8.391678279103039e-11, 4.625917144270128e-08, -9.757593038436328e-06,
          0.0009769454381704354, -0.04134703162294066, 1.0]
_SI_SD = [2.0326926619595193e-12, 1.279978911799433e-09, 4.418278428012189e-07,
          9.964121220438756e-05, 0.01420852393261499, 1.0]
_CI_CN = [2.0252400238910228e-11, -1.3524950491579076e-08, 3.593250514199931e-06,
          -0.0004740072068734079, 0.028915965260755523, -1.0]
_CI_CD = [4.077460400618806e-12, 3.067809975818878e-09, 1.2321035568588342e-06,
          0.00031744202477503275, 0.051002805623644606, 4.0]
#: auxiliary functions f, g of the asymptotic expansion: 4 < x < 8 and x >= 8
_SICI_FN4 = [4.236128628922166, 5.4593771716181285, 1.6208328770153833, 0.16700661183132304,
             0.006810201324725182, 0.00010893658065032867, 5.489002234213736e-07]
_SICI_FD4 = [1, 8.16496634205391, 7.308288225055645, 1.867922579501842, 0.1787920529631499,
             0.007017106683227897, 0.00011003435715391573, 5.489002527562557e-07]
_SICI_GN4 = [0.08710016989731142, 0.6113791099522193, 0.3971802963923375, 0.07485277376284691,
             0.005388686814621773, 0.00016199979459893403, 1.9796387414096365e-06,
             7.825790407440903e-09]
_SICI_GD4 = [1, 1.6440220241335535, 0.666296701268988, 0.09887717612776888,
             0.006223963454417684, 0.0001732210814741771, 2.0265918208634397e-06,
             7.825792189335346e-09]
_SICI_FN8 = [0.4558808734704653, 0.7137152741001467, 0.16030015822231947, 0.01160642294081244,
             0.00034955644244785906, 4.8621543082645475e-06, 3.200927900910049e-08,
             9.41779576128513e-11, 9.70507110881952e-14]
_SICI_FD8 = [1.0, 0.9174636118736841, 0.17868554533207454, 0.012225359477197129,
             0.00035869648188185157, 4.924350643178815e-06, 3.21956939101046e-08,
             9.437205903502767e-11, 9.70507110881952e-14]
_SICI_GN8 = [0.6973599534432762, 0.33041097930563207, 0.03848787676499743, 0.001717182390523479,
             3.4894116550227946e-05, 3.471311670841167e-07, 1.7040445278204452e-09,
             3.859459254302766e-12, 3.1404009894636335e-15]
_SICI_GD8 = [1.0, 1.6854889881101165, 0.48785225869530496, 0.04679131942596258,
             0.0019028442667439953, 3.684755044425611e-05, 3.5704322344374083e-07,
             1.7269374896631615e-09, 3.878301660239547e-12, 3.1404009894636335e-15]


def _sici(x: Any) -> tuple[Array, Array]:
    x, = promote_args_inexact("sici", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
    x_abs = jnp.abs(x)
    si_series, ci_series = _sici_series(x_abs)
    si_asymp, ci_asymp = _sici_asympt(x_abs)
    si_approx, ci_approx = _sici_approx(x_abs)
    cond1 = x_abs <= 4
    cond2 = (x_abs > 4) & (x_abs <= 1e9)
    si = jnp.select([cond1, cond2], [si_series, si_asymp], si_approx)
    ci = jnp.select([cond1, cond2], [ci_series, ci_asymp], ci_approx)
    si = jnp.sign(x) * si
    ci = jnp.where(jnp.isneginf(x), np.nan, ci)
    return si, ci


def _sici_approx(x: Array) -> tuple[Array, Array]:
    """Leading terms for x > 1e9."""
    si = np.pi / 2 - jnp.cos(x) / x
    ci = jnp.sin(x) / x
    si = jnp.where(jnp.isposinf(x), np.pi / 2, si)
    ci = jnp.where(jnp.isposinf(x), 0.0, ci)
    return si, ci


def _sici_series(x: Array) -> tuple[Array, Array]:
    """Rational approximations in x^2 for x <= 4."""
    def si_series(x: Array) -> Array:
        t = x * x
        return x * jnp.polyval(np.array(_SI_SN, dtype=x.dtype), t) / jnp.polyval(
            np.array(_SI_SD, dtype=x.dtype), t)

    def ci_series(x: Array) -> Array:
        t = x * x
        return np.euler_gamma + jnp.log(x) + t * jnp.polyval(
            np.array(_CI_CN, dtype=x.dtype), t) / jnp.polyval(np.array(_CI_CD, dtype=x.dtype), t)

    si = jnp.where(x == 0, 0.0, si_series(x))
    ci = jnp.where(x == 0, -np.inf, ci_series(x))
    return si, ci


def _sici_asympt(x: Array) -> tuple[Array, Array]:
    """si = pi/2 - f cos x - g sin x, ci = f sin x - g cos x with f, g rational in 1/x^2."""
    s = jnp.sin(x)
    c = jnp.cos(x)
    z = 1.0 / (x * x)
    fn4, fd4, gn4, gd4, fn8, fd8, gn8, gd8 = (np.array(a, dtype=x.dtype) for a in (
        _SICI_FN4, _SICI_FD4, _SICI_GN4, _SICI_GD4, _SICI_FN8, _SICI_FD8, _SICI_GN8, _SICI_GD8))
    f4 = jnp.polyval(fn4, z) / (x * jnp.polyval(fd4, z))
    g4 = z * jnp.polyval(gn4, z) / jnp.polyval(gd4, z)
    f8 = jnp.polyval(fn8, z) / (x * jnp.polyval(fd8, z))
    g8 = z * jnp.polyval(gn8, z) / jnp.polyval(gd8, z)
    mask = x < 8.0
    f = jnp.where(mask, f4, f8)
    g = jnp.where(mask, g4, g8)
    return np.pi / 2 - f * c - g * s, f * s - g * c


_sici.__name__ = "sici"
sici = custom_jvp(staged_as_jit(_sici))
sici.__doc__ = "Sine and cosine integrals (Si(x), Ci(x)); Ci is nan for x < 0, as in JAX."


@sici.defjvp
@staged_as_jit
def sici_jvp(primals: tuple, tangents: tuple) -> tuple:
    (p,), (t,) = primals, tangents
    primal_out = sici(p)
    sin_term = jnp.sinc(p / np.pi)
    cos_term = jnp.cos(p) / p
    return primal_out, (sin_term * t, cos_term * t)


# --------------------------------------------------------------------------------------------
# generalized exponential integral E_n(x)
# --------------------------------------------------------------------------------------------

def _expn1(x: Array, n: Array) -> Array:
    """Power series for x <= 1 (Cephes' expn)."""
    machep = dtypes.finfo(x.dtype).eps
    zero = _c(x, 0.0)
    one = _c(x, 1.0)
    psi = -np.euler_gamma - jnp.log(x)
    psi = lax.fori_loop(_c(n, 1), n, lambda i, psi: psi + one / i, psi)
    n1 = jnp.where(n == _c(n, 1), one + one, n)
    init = dict(x=x, z=-x, xk=zero, yk=one, pk=one - n,
                ans=jnp.where(n == _c(n, 1), zero, one / (one - n1)), t=np.inf)

    def body(d: dict) -> dict:
        d["xk"] += one
        d["yk"] *= d["z"] / d["xk"]
        d["pk"] += one
        d["ans"] += jnp.where(d["pk"] != zero, d["yk"] / d["pk"], zero)
        d["t"] = jnp.where(d["ans"] != zero, abs(d["yk"] / d["ans"]), one)
        return d

    def cond(d: dict) -> Array:
        return (d["x"] > _c(d["x"], 0.0)) & (d["t"] > machep)

    d = lax.while_loop(cond, body, init)
    t = n
    r = n - _c(n, 1)
    return d["z"] ** r * psi / jnp.exp(gammaln(t)) - d["ans"]


_EXPN_BIG = 1.44115188075855872e17


def _expn2(x: Array, n: Array) -> Array:
    """Continued fraction for x > 1."""
    big = _c(x, _EXPN_BIG)
    machep = dtypes.finfo(x.dtype).eps
    zero = _c(x, 0.0)
    one = _c(x, 1.0)
    init = dict(k=_c(n, 1), pkm2=one, qkm2=x, pkm1=one, qkm1=x + n, ans=one / (x + n),
                t=_c(x, np.inf), r=zero, x=x)

    def body(d: dict) -> dict:
        x = d["x"]
        d["k"] += _c(d["k"], 1)
        k = d["k"]
        odd = k % _c(k, 2) == _c(k, 1)
        yk = jnp.where(odd, one, x)
        xk = jnp.where(odd, n + (k - _c(k, 1)) / _c(k, 2), k / _c(k, 2))
        pk = d["pkm1"] * yk + d["pkm2"] * xk
        qk = d["qkm1"] * yk + d["qkm2"] * xk
        nz = qk != zero
        d["r"] = r = jnp.where(nz, pk / qk, d["r"])
        d["t"] = jnp.where(nz, abs((d["ans"] - r) / r), one)
        d["ans"] = jnp.where(nz, r, d["ans"])
        d["pkm2"] = d["pkm1"]
        d["pkm1"] = pk
        d["qkm2"] = d["qkm1"]
        d["qkm1"] = qk
        is_big = abs(pk) > big
        for key in ("pkm1", "pkm2", "qkm1", "qkm2"):
            d[key] = jnp.where(is_big, d[key] / big, d[key])
        return d

    def cond(d: dict) -> Array:
        return (d["x"] > _c(d["k"], 0)) & (d["t"] > machep)

    d = lax.while_loop(cond, body, init)
    return d["ans"] * jnp.exp(-x)


def _expn3(x: Array, n: Array) -> Array:
    """Asymptotic expansion in 1 / (x + n) for n >= 5000."""
    one = _c(x, 1.0)
    xk = x + n
    yk = one / (xk * xk)
    t = n
    ans = yk * t * (_c(x, 6) * x * x - _c(x, 8) * t * x + t * t)
    ans = yk * (ans + t * (t - _c(x, 2) * x))
    ans = yk * (ans + t)
    return (ans + one) * jnp.exp(-x) / xk


def _expn(n: Any, x: Any) -> Array:
    n, x = promote_args_inexact("expn", n, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("expn does not support complex-valued inputs.")
    zero = _c(x, 0)
    one = _c(x, 1)
    conds = [
        (n < _c(n, 0)) | (x < zero),
        (x == zero) & (n < _c(n, 2)),
        (x == zero) & (n >= _c(n, 2)),
        (n == _c(n, 0)) & (x >= zero),
        n >= _c(n, 5000),
        x > one,
    ]
    n1 = jnp.where(n == _c(n, 1), n + n, n)
    vals = [np.nan, np.inf, one / n1, jnp.exp(-x) / x, _expn3, _expn2, _expn1]
    return jnp.piecewise(x, conds, vals, n=n)


_expn.__name__ = "expn"
expn = custom_jvp(vectorize(staged_as_jit(_expn)), nondiff_argnums=(0,))
expn.__doc__ = "Generalized exponential integral E_n(x) = int_1^inf exp(-x t) / t^n dt."


@expn.defjvp
def expn_jvp(n: Any, primals: tuple, tangents: tuple) -> tuple:
    """d/dx E_n(x) = -E_{n-1}(x).  (JAX stages this rule under jit; here it runs directly, so
    the nondiff n of the inner expn calls stays concrete: pyjax's custom_jvp would otherwise
    capture the jit's tracer of n in their rules, and second derivatives would leak it.)"""
    (x,), (x_dot,) = primals, tangents
    n = jnp.asarray(n)
    return expn(n, x), lax.mul(lax.neg(x_dot), expn(lax.sub(n, _c(n, 1)), x))


def exp1(x: Any) -> Array:
    """Exponential integral E1(x) = expn(1, x)."""
    x, = promote_args_inexact("exp1", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("exp1 does not support complex-valued inputs.")
    return expn(1, x)


# --------------------------------------------------------------------------------------------
# Spence's function (dilogarithm of 1 - x), Cephes' spence
# --------------------------------------------------------------------------------------------

_SPENCE_A = [4.6512858607399003e-05, 0.007315890452380947, 0.13384763957830903,
             0.8796913117545303, 2.7114985119655346, 4.256971560081218, 3.297713409852251, 1.0]
_SPENCE_B = [0.0006909904889125533, 0.02540437639325444, 0.2829748606025681,
             1.4117259775183106, 3.6380053334513707, 5.03278880143317, 3.547713409852251, 1.0]


def _spence_poly(w: Array) -> Array:
    A = jnp.array(_SPENCE_A, dtype=w.dtype)  # noqa: N806
    B = jnp.array(_SPENCE_B, dtype=w.dtype)  # noqa: N806
    return -w * jnp.polyval(A, w) / jnp.polyval(B, w)


def _spence_calc(x: Array) -> Array:
    """x > 2 through 1/x, then the rational approximation in w around 1 with the reflection
    formulas for x < 1/2 and x > 3/2."""
    x2_bool = x > 2.0
    x = jnp.piecewise(x, [x2_bool], [lambda x: 1.0 / x, lambda x: x])
    x1_5_bool = x > 1.5
    x_5_bool = x < 0.5
    x2_bool = x2_bool | x1_5_bool
    w = jnp.piecewise(x, [x1_5_bool, x_5_bool],
                      [lambda x: 1.0 / x - 1.0, lambda x: -x, lambda x: x - 1.0])
    y = _spence_poly(w)
    y_flag_one = np.pi ** 2 / 6.0 - jnp.log(x) * jnp.log(1.0 - x) - y
    y = jnp.where(x_5_bool, y_flag_one, y)
    y_flag_two = -0.5 * jnp.log(x) ** 2 - y
    return jnp.where(x2_bool, y_flag_two, y)


def _spence(x: Array) -> Array:
    return jnp.piecewise(x, [x < 0.0, x == 1.0, x == 0.0], [np.nan, 0, np.pi ** 2 / 6,
                                                            _spence_calc])


def spence(x: Any) -> Array:
    """Spence's function int_1^x log(t) / (1 - t) dt (x >= 0; nan below)."""
    x = jnp.asarray(x)
    dtype = lax.dtype(x)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={dtype} is not supported, see docstring for supported types.")
    return _spence(x)
