"""`lax.random_gamma_grad`: the derivative of a Gamma(a, 1) sample x in a at its fixed quantile,
-(dP/da) / (dP/dx) with P the regularized lower incomplete gamma function.

As in JAX this is no primitive: it stages XLA's algorithms in lax operations, the series of P
below max(1, a) and Legendre's continued fraction of Q above, each a while loop carrying the
a-derivatives of its terms (elements stop one by one, frozen once converged), then selects.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pyjax import lax
from pyjax._src.core import dtypes


def _const(x: Any, value: Any) -> np.ndarray:
    return np.array(value, lax.dtype(x))


def _any(predicates: Any) -> Any:
    """Whether any element is True (a reduce_or over every axis)."""
    return lax.reduce(predicates, np.array(False), lax.bitwise_or,
                      tuple(range(np.ndim(predicates))))


def _series(ax: Any, x: Any, a: Any, enabled: Any, dtype: np.dtype) -> Any:
    """The sample derivative from the series x^n / (a+1)...(a+n) of P and its a-derivative,
    summed until the derivative's last term is below eps."""
    eps = dtypes.finfo(dtype).eps

    def cond_fn(vals: tuple) -> Any:
        return _any(vals[0])

    def body_fn(vals: tuple) -> tuple:
        enabled, r, c, ans, x, dc_da, dans_da = vals
        r = r + _const(r, 1.)
        dc_da = dc_da * (x / r) - (c * x) / (r * r)
        dans_da = dans_da + dc_da
        c = c * (x / r)
        ans = ans + c
        conditional = lax.bitwise_and(enabled, abs(dc_da / dans_da) > eps)
        return (conditional, *(lax.select(enabled, new, old)
                               for new, old in zip((r, c, ans, x, dc_da, dans_da), vals[1:])))

    init_vals = (enabled, a, lax.full_like(a, 1), lax.full_like(a, 1), x, lax.full_like(a, 0),
                 lax.full_like(a, 0))
    vals = lax.while_loop(cond_fn, body_fn, init_vals)
    ans, dans_da = vals[3], vals[6]
    dlogax_da = lax.log(x) - lax.digamma(a + _const(a, 1))
    return -(dans_da + ans * dlogax_da) * x / a


def _continued_fraction(ax: Any, x: Any, a: Any, enabled: Any, dtype: np.dtype) -> Any:
    """The sample derivative from Legendre's continued fraction of Q (at most 2000 steps) and
    the a-derivatives of its convergents, which are rescaled by eps when they grow."""
    eps = dtypes.finfo(dtype).eps

    def cond_fn(vals: tuple) -> Any:
        enabled, c = vals[0], vals[5]
        return lax.bitwise_and(c < _const(c, 2000), _any(enabled))

    def body_fn(vals: tuple) -> tuple:
        (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
         dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = vals
        c = c + _const(c, 1)
        y = y + _const(y, 1)
        z = z + _const(z, 2)
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        qk_is_nonzero = lax.ne(qk, _const(qk, 0))
        r = pk / qk
        t = lax.select(qk_is_nonzero, abs(lax.div(lax.sub(ans, r), r)), lax.full_like(r, 1))
        ans = lax.select(qk_is_nonzero, r, ans)
        dpk_da = dpkm1_da * z - pkm1 - dpkm2_da * yc + pkm2 * c
        dqk_da = dqkm1_da * z - qkm1 - dqkm2_da * yc + qkm2 * c
        dans_da_new = lax.select(qk_is_nonzero, lax.div(dpk_da - ans * dqk_da, qk), dans_da)
        grad_conditional = lax.select(qk_is_nonzero, abs(dans_da_new - dans_da),
                                      lax.full_like(dans_da, 1))
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = dpkm1_da, dqkm1_da, dpk_da, dqk_da
        rescale = lax.gt(abs(pk), lax.reciprocal(_const(pk, eps)))
        pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = (
            lax.select(rescale, lax.mul(v, _const(v, eps)), v)
            for v in (pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da))
        conditional = lax.bitwise_and(enabled, grad_conditional > _const(grad_conditional, eps))
        new = (ans, t, y, z, None, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da,
               dqkm1_da, dans_da_new)
        # the step count c goes on for every element: the loop ends after 2000 in all
        return (conditional, *(c if n is None else lax.select(enabled, n, old)
                               for n, old in zip(new, vals[1:])))

    y = _const(a, 1) - a
    z = x + y + _const(x, 1)
    c = _const(x, 0)
    pkm2 = lax.full_like(x, 1)
    qkm2 = x
    pkm1 = x + _const(x, 1)
    qkm1 = z * x
    ans = pkm1 / qkm1
    t = lax.full_like(x, 1)
    dpkm2_da = lax.full_like(x, 0)
    dqkm2_da = lax.full_like(x, 0)
    dpkm1_da = lax.full_like(x, 0)
    dqkm1_da = -x
    dans_da = (dpkm1_da - ans * dqkm1_da) / qkm1
    init_vals = (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
                 dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da)
    vals = lax.while_loop(cond_fn, body_fn, init_vals)
    ans, dans_da = vals[1], vals[14]
    dlogax_da = lax.log(x) - lax.digamma(a)
    return lax.neg(lax.add(dans_da, lax.mul(ans, dlogax_da)) * x)


def _random_gamma_grad(a: Any, x: Any, dtype: np.dtype) -> Any:
    is_nan = lax.bitwise_or(lax.ne(a, a), lax.ne(x, x))
    x_is_zero = lax.eq(x, lax.full_like(x, 0))
    domain_error = lax.bitwise_or(lax.lt(x, lax.full_like(x, 0)), lax.le(a, lax.full_like(a, 0)))
    use_igammac = lax.bitwise_and(lax.gt(x, lax.full_like(x, 1)), lax.gt(x, a))
    ax = a * lax.log(x) - x - lax.lgamma(a)
    underflow = lax.lt(ax, -lax.log(dtypes.finfo(lax.dtype(a)).max))
    ax = lax.exp(ax)
    enabled = lax.bitwise_not(lax.bitwise_or(lax.bitwise_or(lax.bitwise_or(
        x_is_zero, domain_error), underflow), is_nan))
    output = lax.select(
        use_igammac,
        -_continued_fraction(ax, x, a, lax.bitwise_and(enabled, use_igammac), dtype),
        _series(ax, x, a, lax.bitwise_and(enabled, lax.bitwise_not(use_igammac)), dtype))
    output = lax.select(x_is_zero, lax.full_like(output, 0), output)
    return lax.select(lax.bitwise_or(domain_error, is_nan), lax.full_like(a, float("nan")),
                      output)


def random_gamma_grad(a: Any, x: Any) -> Any:
    """d x / d a for a sample x ~ Gamma(a, 1) held at its quantile (16-bit floats computed in
    float32)."""
    shape = lax.broadcast_shapes(np.shape(a), np.shape(x))
    a, x = (lax.broadcast_in_dim(v, shape, tuple(range(np.ndim(v)))) for v in (a, x))
    dtype = lax.dtype(a)
    if dtype in (dtypes.bfloat16, dtypes.float16):
        out = _random_gamma_grad(*(lax.convert_element_type(v, np.float32) for v in (a, x)),
                                 np.dtype(np.float32))
        return lax.convert_element_type(out, dtype)
    return _random_gamma_grad(a, x, dtype)
