"""`jax.scipy.special`'s confluent and Gauss hypergeometric functions hyp1f1 and hyp2f1: power
series summed in while loops (at most 250 terms, to float eps), with JAX 0.10.2's special cases,
transformations and per-argument derivative series."""
from __future__ import annotations

from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.core.array import Array
from pyjax._src.numpy.util import promote_args_inexact, staged_as_jit
from pyjax._src.numpy.vectorize import vectorize
from pyjax._src.scipy.special import digamma, gamma
from pyjax._src.transforms.custom_derivatives import custom_jvp


def _named(fun: Any, name: str) -> Any:
    fun.__name__ = name
    return fun


def _series_cond(precision: Any) -> Any:
    """Continue while fewer than 250 terms and the last term is above eps relative to the sum."""
    def cond(state: tuple) -> Array:
        serie, k, term = state
        return (k < 250) & (lax.abs(term) / lax.abs(serie) > precision)
    return cond


# --------------------------------------------------------------------------------------------
# 1F1(a; b; x)
# --------------------------------------------------------------------------------------------

def _hyp1f1_serie(a: Array, b: Array, x: Array) -> Array:
    """sum_k (a)_k / (b)_k x^k / k!."""
    def body(state: tuple) -> tuple:
        serie, k, term = state
        serie += term
        term *= (a + k) / (b + k) * x / (k + 1)
        k += 1
        return serie, k, term

    return lax.while_loop(_series_cond(dtypes.finfo(x.dtype).eps), body, (1, 1, a / b * x))[0]


def _hyp1f1_asymptotic(a: Array, b: Array, x: Array) -> Array:
    """Large |x|: Gamma(b)/Gamma(a) e^x x^(a-b) sum_k (b-a)_k (1-a)_k / k! x^-k."""
    def body(state: tuple) -> tuple:
        serie, k, term = state
        serie += term
        term *= (b - a + k) * (1 - a + k) / (k + 1) / x
        k += 1
        return serie, k, term

    init = (1, 1, (b - a) * (1 - a) / x)
    serie = lax.while_loop(_series_cond(dtypes.finfo(x.dtype).eps), body, init)[0]
    return gamma(b) / gamma(a) * lax.exp(x) * x ** (a - b) * serie


def _hyp1f1_param_derivative(which: str) -> Any:
    """d/da or d/db of the series, term by term (digamma differences of the Pochhammers)."""
    def derivative(a: Array, b: Array, x: Array) -> Array:
        def body(state: tuple) -> tuple:
            serie, k, term = state
            if which == "a":
                serie += term * (digamma(a + k) - digamma(a))
            else:
                serie += term * (digamma(b) - digamma(b + k))
            term *= (a + k) / (b + k) * x / (k + 1)
            k += 1
            return serie, k, term

        cond = _series_cond(dtypes.finfo(x.dtype).eps)
        return lax.while_loop(cond, body, (0, 1, a / b * x))[0]
    return staged_as_jit(vectorize(_named(derivative, f"_hyp1f1_{which}_derivative")))


_hyp1f1_a_derivative = _hyp1f1_param_derivative("a")
_hyp1f1_b_derivative = _hyp1f1_param_derivative("b")


@staged_as_jit
def _hyp1f1_x_derivative(a: Array, b: Array, x: Array) -> Array:
    return a / b * hyp1f1(a + 1, b + 1, x)


def _hyp1f1(a: Any, b: Any, x: Any) -> Array:
    a, b, x = promote_args_inexact("hyp1f1", a, b, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    result = lax.cond(lax.abs(x) < 100, _hyp1f1_serie, _hyp1f1_asymptotic, a, b, x)
    # a == 0: 1; a == b: e^x; b == 0: inf
    index = (a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3
    return lax.select_n(index, result, jnp.array(1, dtype=x.dtype), jnp.exp(x),
                        jnp.array(np.inf, dtype=x.dtype))


hyp1f1 = custom_jvp(staged_as_jit(vectorize(_named(_hyp1f1, "hyp1f1"))))
hyp1f1.__doc__ = "Confluent hypergeometric function 1F1(a; b; x) (real arguments)."
hyp1f1.defjvps(
    lambda a_dot, primal_out, a, b, x: _hyp1f1_a_derivative(a, b, x) * a_dot,
    lambda b_dot, primal_out, a, b, x: _hyp1f1_b_derivative(a, b, x) * b_dot,
    lambda x_dot, primal_out, a, b, x: _hyp1f1_x_derivative(a, b, x) * x_dot)


# --------------------------------------------------------------------------------------------
# 2F1(a, b; c; x)
# --------------------------------------------------------------------------------------------

def _hyp2f1_terminal(a: Array, b: Array, c: Array, x: Array) -> Array:
    """The finite sum when a (or b, swapped in) is a non-positive integer."""
    eps = dtypes.finfo(x.dtype).eps * 50
    ib = jnp.round(b)
    mask = jnp.logical_and(
        b < a, jnp.logical_and(jnp.abs(b - ib) < eps, jnp.logical_not(
            jnp.logical_and(c % 1 == 0, jnp.logical_and(c <= 0, c > b)))))
    orig_a = a
    a = jnp.where(mask, b, a)
    b = jnp.where(mask, orig_a, b)
    a = jnp.abs(a)

    def body(i: Any, state: tuple) -> tuple:
        serie, term = state
        term *= -(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x
        serie += term
        return serie, term

    init = (jnp.array(1, dtype=x.dtype), jnp.array(1, dtype=x.dtype))
    return lax.fori_loop(jnp.array(1, dtype=a.dtype), a + 1, body, init)[0]


def _hyp2f1_serie(a: Array, b: Array, c: Array, x: Array) -> Array:
    """sum_k (a)_k (b)_k / (c)_k x^k / k! until a term is below eps relative to the sum."""
    rtol = dtypes.finfo(x.dtype).eps

    def body(state: tuple) -> tuple:
        serie, k, term = state
        serie += term
        term *= (a + k - 1) * (b + k - 1) / (c + k - 1) / k * x
        k += 1
        return serie, k, term

    def cond(state: tuple) -> Array:
        serie, k, term = state
        return (k < 250) & (lax.abs(term) > rtol * lax.abs(serie))

    init = (jnp.array(0, dtype=x.dtype), jnp.array(1, dtype=x.dtype),
            jnp.array(1, dtype=x.dtype))
    return lax.while_loop(cond, body, init)[0]


def _hyp2f1_terminal_or_serie(a: Array, b: Array, c: Array, x: Array) -> Array:
    """The series; near x = 1 (x > 0.9) with integer c - a - b the digamma transformation;
    the finite sum for non-positive integer a or b."""
    eps = dtypes.finfo(x.dtype).eps * 50
    d = c - a - b
    ia = jnp.round(a)
    ib = jnp.round(b)
    id_ = jnp.round(d)
    neg_int_a = jnp.logical_and(a <= 0, jnp.abs(a - ia) < eps)
    neg_int_b = jnp.logical_and(b <= 0, jnp.abs(b - ib) < eps)
    neg_int_a_or_b = jnp.logical_or(neg_int_a, neg_int_b)
    not_neg_int_a_or_b = jnp.logical_not(neg_int_a_or_b)
    index = jnp.where(jnp.logical_and(x > 0.9, not_neg_int_a_or_b),
                      jnp.where(jnp.abs(d - id_) >= eps, 0, 1),
                      jnp.where(neg_int_a_or_b, 2, 0))
    return lax.select_n(index, _hyp2f1_serie(a, b, c, x), _hyp2f1_digamma_transform(a, b, c, x),
                        _hyp2f1_terminal(a, b, c, x))


def _hyp2f1_digamma_transform(a: Array, b: Array, c: Array, x: Array) -> Array:
    """Abramowitz & Stegun 15.3.10-12 (Cephes' hys2f1 for integer c - a - b): the series in
    s = 1 - x with digamma terms, plus the finite sum when |c - a - b| >= 1."""
    rtol = dtypes.finfo(x.dtype).eps
    d = c - a - b
    s = 1 - x
    rd = jnp.round(d)
    e = jnp.where(rd >= 0, d, -d)
    d1 = jnp.where(rd >= 0, d, jnp.array(0, dtype=d.dtype))
    d2 = jnp.where(rd >= 0, jnp.array(0, dtype=d.dtype), d)
    ard = jnp.where(rd >= 0, rd, -rd).astype("int32")
    ax = jnp.log(s)
    y = digamma(1.0) + digamma(1.0 + e) - digamma(a + d1) - digamma(b + d1) - ax
    y /= gamma(e + 1.0)
    p = (a + d1) * (b + d1) * s / gamma(e + 2.0)

    def cond(state: tuple) -> Array:
        _, _, _, _, _, _, q, _, _, t, y = state
        return jnp.logical_and(t < 250, jnp.abs(q) >= rtol * jnp.abs(y))

    def body(state: tuple) -> tuple:
        a, ax, b, d1, e, p, q, r, s, t, y = state
        r = digamma(1.0 + t) + digamma(1.0 + t + e) - digamma(a + t + d1) - digamma(
            b + t + d1) - ax
        q = p * r
        y += q
        p *= s * (a + t + d1) / (t + 1.0)
        p *= (b + t + d1) / (t + 1.0 + e)
        t += 1.0
        return a, ax, b, d1, e, p, q, r, s, t, y

    init = (a, ax, b, d1, e, p, y, jnp.array(0, dtype=x.dtype), s,
            jnp.array(1, dtype=x.dtype), y)
    _, _, _, _, _, _, q, r, _, _, y = lax.while_loop(cond, body, init)

    def compute_sum(y: Array) -> Array:
        y1 = jnp.array(1, dtype=x.dtype)
        t = jnp.array(0, dtype=x.dtype)
        p = jnp.array(1, dtype=x.dtype)

        def for_body(i: Any, state: tuple) -> tuple:
            a, b, d2, e, p, s, t, y1 = state
            r = 1.0 - e + t
            p *= s * (a + t + d2) * (b + t + d2) / r
            t += 1.0
            p /= t
            y1 += p
            return a, b, d2, e, p, s, t, y1

        y1 = lax.fori_loop(1, ard, for_body, (a, b, d2, e, p, s, t, y1))[-1]
        p = gamma(c)
        y1 *= gamma(e) * p / (gamma(a + d1) * gamma(b + d1))
        y *= p / (gamma(a + d2) * gamma(b + d2))
        y = jnp.where(ard & 1 != 0, -y, y)
        q = s ** rd
        return jnp.where(rd > 0, y * q + y1, y + y1 * q)

    return jnp.where(rd == 0, y * gamma(c) / (gamma(a) * gamma(b)), compute_sum(y))


def _hyp2f1_param_derivative(which: str) -> Any:
    """d/da, d/db or d/dc of the series, term by term."""
    def derivative(a: Array, b: Array, c: Array, x: Array) -> Array:
        def body(state: tuple) -> tuple:
            serie, k, term = state
            if which == "a":
                serie += term * (digamma(a + k) - digamma(a))
            elif which == "b":
                serie += term * (digamma(b + k) - digamma(b))
            else:
                serie += term * (digamma(c) - digamma(c + k))
            term *= (a + k) * (b + k) / (c + k) / (k + 1) * x
            k += 1
            return serie, k, term

        cond = _series_cond(dtypes.finfo(x.dtype).eps)
        return lax.while_loop(cond, body, (0, 1, a * b / c * x))[0]
    return staged_as_jit(vectorize(_named(derivative, f"_hyp2f1_{which}_derivative")))


_hyp2f1_a_derivative = _hyp2f1_param_derivative("a")
_hyp2f1_b_derivative = _hyp2f1_param_derivative("b")
_hyp2f1_c_derivative = _hyp2f1_param_derivative("c")


@staged_as_jit
def _hyp2f1_x_derivative(a: Array, b: Array, c: Array, x: Array) -> Array:
    return a * b / c * hyp2f1(a + 1, b + 1, c + 1, x)


def _hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Array:
    a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x)
    eps = dtypes.finfo(x.dtype).eps * 50
    d = c - a - b
    s = 1 - x
    ca = c - a
    cb = c - b
    id_ = jnp.round(d)
    # 0: 1; 1: inf; 2: Euler's transformation s^d 2F1(c-a, c-b; c; x); 3: s^-a; 4: s^-b;
    # 5: Gauss's sum at x = 1; 6: the series (or its transformations)
    index = jnp.where(
        jnp.logical_or(x == 0, jnp.logical_and(jnp.logical_or(a == 0, b == 0), c != 0)), 0,
        jnp.where(
            jnp.logical_or(c == 0, jnp.logical_and(c < 0, c % 1 == 0)), 1,
            jnp.where(
                jnp.logical_and(d <= -1, jnp.logical_not(
                    jnp.logical_and(jnp.abs(d - id_) >= eps, s < 0))), 2,
                jnp.where(
                    jnp.logical_and(d <= 0, x == 1), 1,
                    jnp.where(
                        jnp.logical_and(x < 1, b == c), 3,
                        jnp.where(
                            jnp.logical_and(x < 1, a == c), 4,
                            jnp.where(x > 1, 1, jnp.where(x == 1, 5, 6))))))))
    return lax.select_n(index,
                        jnp.array(1, dtype=x.dtype),
                        jnp.array(np.inf, dtype=x.dtype),
                        s ** d * _hyp2f1_terminal_or_serie(ca, cb, c, x),
                        s ** (-a),
                        s ** (-b),
                        gamma(c) * gamma(d) / (gamma(ca) * gamma(cb)),
                        _hyp2f1_terminal_or_serie(a, b, c, x))


hyp2f1 = custom_jvp(staged_as_jit(vectorize(_named(_hyp2f1, "hyp2f1"))))
hyp2f1.__doc__ = "Gauss hypergeometric function 2F1(a, b; c; x) (real arguments, x <= 1)."
hyp2f1.defjvps(
    lambda a_dot, primal_out, a, b, c, x: _hyp2f1_a_derivative(a, b, c, x) * a_dot,
    lambda b_dot, primal_out, a, b, c, x: _hyp2f1_b_derivative(a, b, c, x) * b_dot,
    lambda c_dot, primal_out, a, b, c, x: _hyp2f1_c_derivative(a, b, c, x) * c_dot,
    lambda x_dot, primal_out, a, b, c, x: _hyp2f1_x_derivative(a, b, c, x) * x_dot)
