"""jnp polynomials (coefficients highest power first, as NumPy): poly, polyadd/sub/mul/div,
polyder, polyint, polyval, polyfit, roots, plus vander and trim_zeros.

Built as JAX 0.10.2 builds them (roots from the eigenvalues of the companion matrix, polyval as
a Horner scan, polyfit as a scaled least-squares on the Vandermonde matrix), with the same
functions jitted, so traced programs print JAX's jaxprs.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.numpy import lax_numpy as jnp
from pyjax._src.numpy import reductions, ufuncs, util
from pyjax._src.numpy.lax_numpy import _concrete
from pyjax._src.numpy.signal import convolve
from pyjax._src.numpy.util import canonicalize_axis, check_arraylike, staged_as_jit
from pyjax._src.primitives import elementwise as lax
from pyjax._src.primitives import extra as lax_extra
from pyjax._src.primitives import shape as shp
from pyjax._src.primitives.control_flow import scan


def _ensure(name: str, *args: Any) -> list[Any]:
    check_arraylike(name, *args)
    return [util.as_operand(a) for a in args]


def _linalg() -> Any:
    """jnp.linalg (eigvals, lstsq, inv), imported when first needed."""
    from pyjax._src.numpy import linalg
    return linalg


# ---------------------------------------------------------------------------------------------
# vander / trim_zeros
# ---------------------------------------------------------------------------------------------

@staged_as_jit(static_argnames=("N", "increasing"))
def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """The Vandermonde matrix of x: columns are powers of x (decreasing unless increasing)."""
    x, = _ensure("vander", x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    N = x.shape[0] if N is None else operator.index(_concrete(N, "'N' argument of jnp.vander()"))
    if N < 0:
        raise ValueError("N must be nonnegative")
    iota = shp.iota(x.dtype, N)
    if not increasing:
        iota = lax.sub(util.lax_const(iota, N - 1), iota)
    return ufuncs.power(x[..., None], shp.expand_dims(iota, tuple(range(x.ndim))))


def _canonicalize_axes(axis: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(canonicalize_axis(a, ndim) for a in jnp._index_tuple(axis))


def trim_zeros(filt: Any, trim: str = "fb", axis: int | Sequence[int] | None = None) -> Any:
    """filt without its leading ('f') and/or trailing ('b') all-zero slices (needs values)."""
    filt, = _ensure("trim_zeros", filt)
    _concrete(filt, "Error arose in the `filt` argument of trim_zeros()")
    axes = set(_canonicalize_axes(axis, filt.ndim))
    trim = trim.lower()
    if not axes or ("f" not in trim and "b" not in trim):
        return filt

    def bounds(ax: int) -> slice:
        if ax not in axes:
            return slice(None)
        mask = filt.any(axis=tuple(i for i in range(filt.ndim) if i != ax))
        if not mask.any():
            return slice(0, 0)
        start = int(mask.argmax()) if "f" in trim else None
        stop = filt.shape[ax] - int(mask[::-1].argmax()) if "b" in trim else None
        return slice(start, stop)

    return filt[tuple(bounds(ax) for ax in range(filt.ndim))]


def _trim_zeros_tol(filt: Any, tol: Any, trim: str = "fb") -> Any:
    """filt without leading/trailing entries smaller than tol in magnitude (needs values)."""
    filt = jnp.asarray(_concrete(filt, "Error arose in the `filt` argument of "
                                       "trim_zeros_tol()"))
    small = ufuncs.abs(filt) < tol
    if reductions.all(small):
        return jnp.empty(0, filt.dtype)
    start = reductions.argmin(small) if "f" in trim.lower() else 0
    end = reductions.argmin(small[::-1]) if "b" in trim.lower() else 0
    return filt[start:len(filt) - end]


# ---------------------------------------------------------------------------------------------
# roots / poly
# ---------------------------------------------------------------------------------------------

@staged_as_jit
def _roots_no_zeros(p: Any) -> Any:
    """Eigenvalues of p's companion matrix (p[0] != 0)."""
    if p.size < 2:
        return jnp.array([], dtype=dtypes.to_complex_dtype(p.dtype))
    companion = jnp.diag(jnp.ones((p.size - 2,), p.dtype), -1)
    companion = companion.at[0, :].set(-p[1:] / p[0])
    return _linalg().eigvals(companion)


@staged_as_jit
def _roots_with_zeros(p: Any, num_leading_zeros: Any) -> Any:
    """Roots with a traced count of leading zeros: that many trailing roots are NaN."""
    p = ufuncs._where(len(p) == num_leading_zeros, 1.0, p)
    roots_ = _roots_no_zeros(jnp.roll(p, -num_leading_zeros))
    roots_ = lax_extra.sort_key_val(roots_ == 0, roots_)[1]
    return ufuncs._where(jnp.arange(roots_.size) < roots_.size - num_leading_zeros, roots_,
                         complex(np.nan, np.nan))


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """The roots of the polynomial with coefficients p."""
    p, = _ensure("roots", p)
    p, = util.promote_dtypes_inexact(p)
    p_arr = jnp.atleast_1d(p)
    if p_arr.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if p_arr.size < 2:
        return jnp.array([], dtype=dtypes.to_complex_dtype(p_arr.dtype))
    num_leading_zeros = ufuncs._where(reductions.all(p_arr == 0), len(p_arr),
                                      reductions.argmin(p_arr == 0))
    if strip_zeros:
        num_leading_zeros = int(_concrete(
            num_leading_zeros,
            "The error occurred in the jnp.roots() function. To use this within a JIT-compiled "
            "context, pass strip_zeros=False, but be aware that leading zeros will result in "
            "some returned roots being set to NaN."))
        return _roots_no_zeros(p_arr[num_leading_zeros:])
    return _roots_with_zeros(p_arr, num_leading_zeros)


@staged_as_jit
def poly(seq_of_zeros: Any) -> Any:
    """The coefficients of the monic polynomial with the given roots (or a matrix's
    eigenvalues)."""
    seq_of_zeros, = _ensure("poly", seq_of_zeros)
    seq_of_zeros, = util.promote_dtypes_inexact(seq_of_zeros)
    zeros_arr = jnp.atleast_1d(seq_of_zeros)
    sh = zeros_arr.shape
    if len(sh) == 2 and sh[0] == sh[1] and sh[0] != 0:
        zeros_arr = _linalg().eigvals(zeros_arr)
    if zeros_arr.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dt = zeros_arr.dtype
    if len(zeros_arr) == 0:
        return jnp.ones((), dtype=dt)
    a = jnp.ones((1,), dtype=dt)
    for k in range(len(zeros_arr)):
        a = convolve(a, jnp.array([1, -zeros_arr[k]], dtype=dt), mode="full")
    return a


# ---------------------------------------------------------------------------------------------
# evaluation and arithmetic
# ---------------------------------------------------------------------------------------------

@staged_as_jit(static_argnames=("unroll",))
def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """p evaluated at x by Horner's scheme (a scan over the leading axis of p)."""
    p, x = _ensure("polyval", p, x)
    p_arr, x_arr = util.promote_dtypes(p, x)
    shape = lax_extra.broadcast_shapes(p_arr.shape[1:], x_arr.shape)
    y = lax_extra.full_like(x_arr, 0, shape=shape, dtype=x_arr.dtype)
    y, _ = scan(lambda acc, c: (acc * x_arr + c, None), y, p_arr, unroll=unroll)
    return y


@staged_as_jit
def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials (the shorter is aligned with the longer's low powers)."""
    a1, a2 = _ensure("polyadd", a1, a2)
    a1_arr, a2_arr = util.promote_dtypes(a1, a2)
    if a2_arr.shape[0] <= a1_arr.shape[0]:
        return a1_arr.at[-a2_arr.shape[0]:].add(a2_arr)
    return a2_arr.at[-a1_arr.shape[0]:].add(a1_arr)


@staged_as_jit
def polysub(a1: Any, a2: Any) -> Any:
    """The difference of two polynomials."""
    a1, a2 = _ensure("polysub", a1, a2)
    a1, a2 = util.promote_dtypes(a1, a2)
    return polyadd(a1, -a2)


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    """The product of two polynomials (a full convolution)."""
    a1, a2 = _ensure("polymul", a1, a2)
    a1_arr, a2_arr = util.promote_dtypes_inexact(a1, a2)
    if trim_leading_zeros and (len(a1_arr) > 1 or len(a2_arr) > 1):
        a1_arr, a2_arr = trim_zeros(a1_arr, trim="f"), trim_zeros(a2_arr, trim="f")
    if len(a1_arr) == 0:
        a1_arr = jnp.zeros(1, dtype=a2_arr.dtype)
    if len(a2_arr) == 0:
        a2_arr = jnp.zeros(1, dtype=a1_arr.dtype)
    return convolve(a1_arr, a2_arr, mode="full")


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """Quotient and remainder of polynomial long division u / v."""
    u, v = _ensure("polydiv", u, v)
    u_arr, v_arr = util.promote_dtypes_inexact(u, v)
    m = len(u_arr) - 1
    n = len(v_arr) - 1
    scale = 1. / v_arr[0]
    q = jnp.zeros(max(m - n + 1, 1), dtype=u_arr.dtype)
    for k in range(0, m - n + 1):
        d = scale * u_arr[k]
        q = q.at[k].set(d)
        u_arr = u_arr.at[k:k + n + 1].add(-d * v_arr)
    if trim_leading_zeros:
        u_arr = _trim_zeros_tol(u_arr, tol=ufuncs.sqrt(np.finfo(u_arr.dtype).eps), trim="f")
    return q, u_arr


@staged_as_jit(static_argnames=("m",))
def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The m-th antiderivative of p, with integration constants k."""
    m = operator.index(_concrete(m, "'m' argument of jnp.polyint"))
    k = 0 if k is None else k
    p, k = _ensure("polyint", p, k)
    p_arr, k_arr = util.promote_dtypes_inexact(p, k)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k_arr = jnp.atleast_1d(k_arr)
    if len(k_arr) == 1:
        k_arr = jnp.full((m,), k_arr[0])
    if k_arr.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p_arr
    grid = (jnp.arange(len(p_arr) + m, dtype=p_arr.dtype)[np.newaxis]
            - jnp.arange(m, dtype=p_arr.dtype)[:, np.newaxis])
    coeff = ufuncs.maximum(1, grid).prod(0)[::-1]
    return ufuncs.true_divide(jnp.concatenate((p_arr, k_arr)), coeff)


@staged_as_jit(static_argnames=("m",))
def polyder(p: Any, m: int = 1) -> Any:
    """The m-th derivative of p."""
    p, = _ensure("polyder", p)
    m = operator.index(_concrete(m, "'m' argument of jnp.polyder"))
    p_arr, = util.promote_dtypes_inexact(p)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p_arr
    coeff = (jnp.arange(m, len(p_arr), dtype=p_arr.dtype)[np.newaxis]
             - jnp.arange(m, dtype=p_arr.dtype)[:, np.newaxis]).prod(0)
    return p_arr[:-m] * coeff[::-1]


# ---------------------------------------------------------------------------------------------
# polyfit
# ---------------------------------------------------------------------------------------------

@staged_as_jit(static_argnames=("deg", "rcond", "full", "cov"))
def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False,
            w: Any = None, cov: bool = False) -> Any:
    """Least-squares fit of a degree-`deg` polynomial to (x, y), optionally weighted."""
    if w is None:
        x_arr, y_arr = _ensure("polyfit", x, y)
    else:
        x_arr, y_arr, w = _ensure("polyfit", x, y, w)
    deg = int(_concrete(deg, "deg must be int"))
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x_arr.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x_arr.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y_arr.ndim < 1 or y_arr.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x_arr.shape[0] != y_arr.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = len(x_arr) * float(np.finfo(x_arr.dtype).eps)
    rcond = float(_concrete(rcond, "rcond must be float"))
    lhs = vander(x_arr, order)
    rhs = y_arr
    if w is not None:
        w_arr, = util.promote_dtypes_inexact(w)
        if w_arr.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w_arr.shape[0] != y_arr.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w_arr[:, np.newaxis]
        rhs = rhs * (w_arr[:, np.newaxis] if rhs.ndim == 2 else w_arr)
    scale = ufuncs.sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale[np.newaxis, :]
    linalg = _linalg()
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[np.newaxis, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, lax_extra.asarray(rcond)
    if not cov:
        return c
    vbase = linalg.inv(jnp.dot(lhs.T, lhs))
    vbase = vbase / jnp.outer(scale, scale)
    if cov == "unscaled":
        fac = jnp.array(1.0)
    else:
        if len(x_arr) <= order:
            raise ValueError("the number of data points must exceed order to scale the "
                             "covariance matrix")
        fac = resids / (len(x_arr) - order)
    if y_arr.ndim == 1:
        return c, vbase * jnp.atleast_1d(fac)[np.newaxis]
    return c, vbase[:, :, np.newaxis] * jnp.atleast_1d(fac)[np.newaxis, np.newaxis, :]
