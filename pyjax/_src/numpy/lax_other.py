"""logaddexp and logaddexp2 as JAX defines them: custom_jvp functions (so jaxprs show a
custom_jvp_call) whose derivative exp(x - out) stays finite where the primal saturates."""
from __future__ import annotations

from typing import Any

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.numpy.util import lax_const
from pyjax._src.primitives import elementwise as lax
from pyjax._src.primitives.extra import full_like
from pyjax._src.transforms.custom_derivatives import custom_jvp


def _wrap_between(x: Any, bound: float) -> Any:
    """x shifted by multiples of 2*bound into [-bound, bound]."""
    a, two_a = lax_const(x, bound), lax_const(x, 2 * bound)
    rem = lax.rem(lax.add(x, a), two_a)
    rem = lax.select(lax.lt(rem, lax_const(x, 0)), lax.add(rem, two_a), rem)
    return lax.sub(rem, a)


def _log_add_exp(x1: Any, x2: Any, exp: Any, scale: float, name: str) -> Any:
    """log_b(b**x1 + b**x2) for exp = b**(.) and scale = 1/ln(b) (None: base e)."""
    dtype = np.dtype(x1.dtype)
    if not dtypes.is_inexact(dtype):
        raise ValueError(f"{name} requires floating-point or complex inputs; got {dtype}")
    amax = lax.max(x1, x2)

    def scaled(v: Any) -> Any:
        return v if scale is None else lax.mul(lax_const(amax, scale), v)

    if dtypes.is_float(dtype):
        delta = lax.sub(x1, x2)
        return lax.select(lax.ne(delta, delta),  # NaNs, or infinities of one sign
                          lax.add(x1, x2),
                          lax.add(amax, scaled(lax.log1p(exp(lax.neg(lax.abs(delta)))))))
    delta = lax.sub(lax.add(x1, x2), lax.mul(amax, lax_const(amax, 2)))
    out = lax.add(amax, scaled(lax.log1p(exp(delta))))
    period = np.pi if scale is None else np.pi / np.log(2)
    return lax.complex(lax.real(out), _wrap_between(lax.imag(out), period))


def _replace_inf(x: Any) -> Any:
    """x with +inf (in the real part) replaced by 0, so inf - inf never makes a NaN."""
    re_x = lax.real(x) if dtypes.is_complex(np.dtype(x.dtype)) else x
    return lax.select(lax.eq(re_x, lax_const(re_x, float("inf"))), full_like(x, 0), x)


@custom_jvp
def logaddexp(x1: Any, x2: Any, /) -> Any:
    return _log_add_exp(x1, x2, lax.exp, None, "logaddexp")


@logaddexp.defjvp
def _logaddexp_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x1, x2), (t1, t2) = primals, tangents
    out = logaddexp(x1, x2)
    return out, lax.add(lax.mul(t1, lax.exp(lax.sub(_replace_inf(x1), _replace_inf(out)))),
                        lax.mul(t2, lax.exp(lax.sub(_replace_inf(x2), _replace_inf(out)))))


@custom_jvp
def logaddexp2(x1: Any, x2: Any, /) -> Any:
    return _log_add_exp(x1, x2, lax.exp2, 1 / np.log(2), "logaddexp2")


@logaddexp2.defjvp
def _logaddexp2_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x1, x2), (t1, t2) = primals, tangents
    out = logaddexp2(x1, x2)
    return out, lax.add(lax.mul(t1, lax.exp2(lax.sub(_replace_inf(x1), _replace_inf(out)))),
                        lax.mul(t2, lax.exp2(lax.sub(_replace_inf(x2), _replace_inf(out)))))
