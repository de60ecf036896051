"""jax.numpy.linalg: NumPy's linear algebra built on lax.linalg, as JAX 0.10.2 builds it.

Decompositions call the lax.linalg primitives; solve goes through LU and custom_linear_solve
(one factorisation, reused by the derivatives); det and slogdet carry JAX's custom JVPs, pinv
its Golub-Pereyra JVP.  Functions JAX jits are jitted here too: they print as `jit[name=...]`
in jaxprs, and eager calls run the cached compiled program (one dispatch, not one per op).
"""
from __future__ import annotations

import itertools
import math
import operator
from functools import partial
from typing import Any, NamedTuple, Sequence

import numpy as np

from pyjax._src import config
from pyjax._src.core import dtypes
from pyjax._src.numpy import lax_numpy as jnp
from pyjax._src.numpy import manipulation, reductions, ufuncs, util
from pyjax._src.numpy.indexing import take_along_axis
from pyjax._src.numpy.util import canonicalize_axis, promote_dtypes_inexact
from pyjax._src.numpy.vectorize import vectorize
from pyjax._src.primitives import elementwise as lax
from pyjax._src.primitives import extra as lax_extra
from pyjax._src.primitives import linalg as lax_linalg
from pyjax._src.primitives import shape as shp
from pyjax._src.primitives.enums import Precision
from pyjax._src.transforms.custom_derivatives import custom_jvp
from pyjax._src.transforms.jit import jit

_HIGHEST = Precision.HIGHEST


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    Q: Any  # noqa: N815 - JAX's field name
    R: Any  # noqa: N815


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


class SVDResult(NamedTuple):
    U: Any  # noqa: N815
    S: Any  # noqa: N815
    Vh: Any  # noqa: N815


def _ensure(name: str, *args: Any) -> Any:
    """JAX's ensure_arraylike: reject non-arrays, then make each an array operand."""
    util.check_arraylike(name, *args)
    out = [util.as_operand(a) for a in args]
    return out[0] if len(args) == 1 else out


def _H(x: Any) -> Any:  # noqa: N802
    return ufuncs.conjugate(jnp.matrix_transpose(x))


def _symmetrize(x: Any) -> Any:
    return (x + _H(x)) / 2


def _is_complex(x: Any) -> bool:
    return dtypes.is_complex(np.dtype(x.dtype))


# ---------------------------------------------------------------------------------------------
# Factorisations: cholesky, svd, eig, eigh, qr
# ---------------------------------------------------------------------------------------------

@partial(jit, static_argnames=("upper", "symmetrize_input"))
def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """Lower Cholesky factor L (a = L L^H) of Hermitian positive-definite a, or its conjugate
    transpose when `upper`; NaNs where the factorisation fails."""
    a = _ensure("jnp.linalg.cholesky", a)
    a, = promote_dtypes_inexact(a)
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return ufuncs.conj(jnp.matrix_transpose(factor)) if upper else factor


@partial(jit, static_argnames=("full_matrices", "compute_uv", "hermitian", "subset_by_index"))
def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: tuple[int, int] | None = None) -> Any:
    """(U, S, Vh) with a = U diag(S) Vh, S descending; only S unless compute_uv.  `hermitian`
    derives it from eigh (|eigenvalues|, sorted)."""
    a = _ensure("jnp.linalg.svd", a)
    a, = promote_dtypes_inexact(a)
    if hermitian:
        vecs, vals = lax_linalg.eigh(a, subset_by_index=subset_by_index)
        s = lax.abs(vals)
        last = np.ndim(s) - 1
        if not compute_uv:
            return shp.rev(lax_extra.sort(s, dimension=-1), (last,))
        sign = lax.sign(vals)
        idxs = shp.broadcasted_iota(np.uint32, np.shape(s), last)
        s, idxs, sign = lax_extra.sort((s, idxs, sign), dimension=-1, num_keys=1)
        s, idxs, sign = (shp.rev(t, (last,)) for t in (s, idxs, sign))
        u = take_along_axis(vecs, idxs[..., None, :], axis=-1)
        vh = _H(u * sign[..., None, :].astype(u.dtype))
        return SVDResult(u, s, vh)
    if compute_uv:
        u, s, vh = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True,
                                  subset_by_index=subset_by_index)
        return SVDResult(u, s, vh)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False,
                          subset_by_index=subset_by_index)


def eig(a: Any) -> EigResult:
    """Eigenvalues and right eigenvectors (columns) of a general square matrix, complex."""
    a = _ensure("jnp.linalg.eig", a)
    a, = promote_dtypes_inexact(a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


@jit
def eigvals(a: Any) -> Any:
    """Eigenvalues of a general square matrix (complex)."""
    a = _ensure("jnp.linalg.eigvals", a)
    a, = promote_dtypes_inexact(a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


def _uplo_lower(uplo: str | None) -> bool:
    if uplo is None or uplo == "L":
        return True
    if uplo == "U":
        return False
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {uplo}")


@partial(jit, static_argnames=("UPLO", "symmetrize_input"))
def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True  # noqa: N803
         ) -> EighResult:
    """Ascending eigenvalues and eigenvectors of a Hermitian matrix (its UPLO triangle read
    when not symmetrize_input)."""
    a = _ensure("jnp.linalg.eigh", a)
    lower = _uplo_lower(UPLO)
    a, = promote_dtypes_inexact(a)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


@partial(jit, static_argnames=("UPLO", "symmetrize_input"))
def eigvalsh(a: Any, UPLO: str | None = "L", *,  # noqa: N803
             symmetrize_input: bool = True) -> Any:
    """Ascending eigenvalues of a Hermitian matrix."""
    a = _ensure("jnp.linalg.eigvalsh", a)
    a, = promote_dtypes_inexact(a)
    w, _ = eigh(a, UPLO, symmetrize_input=symmetrize_input)
    return w


@partial(jit, static_argnames=("mode",))
def qr(a: Any, mode: str = "reduced") -> Any:
    """QR decomposition: mode 'reduced'/'full' (thin), 'complete' (square Q), 'r' (R only) or
    'raw' (Householder reflectors transposed, and their taus)."""
    a = _ensure("jnp.linalg.qr", a)
    a, = promote_dtypes_inexact(a)
    if mode == "raw":
        h, taus = lax_linalg.geqrf(a)
        return QRResult(jnp.matrix_transpose(h), taus)
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(a, pivoting=False, full_matrices=full_matrices)
    return r if mode == "r" else QRResult(q, r)


def svdvals(x: Any, /) -> Any:
    """Singular values, descending."""
    x = _ensure("jnp.linalg.svdvals", x)
    return svd(x, compute_uv=False, hermitian=False)


# ---------------------------------------------------------------------------------------------
# Solves and inverses
# ---------------------------------------------------------------------------------------------

@jit
def solve(a: Any, b: Any) -> Any:
    """x with a x = b; b is [..., m] (a vector) or [..., m, n], batch axes broadcast."""
    a, b = _ensure("jnp.linalg.solve", a, b)
    a, b = promote_dtypes_inexact(a, b)
    if a.ndim < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got "
                         f"a.shape={a.shape}")
    if (b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]
            and a.shape[-1] != b.shape[-2]):
        raise ValueError(
            f"Invalid shapes for solve: {a.shape}, {b.shape}. Prior to JAX v0.5.0, this would "
            "have been treated as a batched 1-dimensional solve. To recover this behavior, use "
            "solve(a, b[..., None]).squeeze(-1).")
    signature = "(m,m),(m)->(m)" if b.ndim == 1 else "(m,m),(m,n)->(m,n)"
    return vectorize(lax_linalg._solve, signature=signature)(a, b)


@jit
def inv(a: Any) -> Any:
    """The inverse of a square matrix (a solve against the identity)."""
    arr = _ensure("jnp.linalg.inv", a)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {arr.shape}.")
    eye = jnp.eye(arr.shape[-1], dtype=arr.dtype)
    return solve(arr, shp.broadcast(eye, arr.shape[:-2]))


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Any:
    """Moore-Penrose pseudo-inverse from the SVD; singular values <= rtol * largest are
    dropped (rtol defaults to 10 * max(m, n) * eps)."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    return _pinv(a, rtol, hermitian)


def _pinv_body(a: Any, rtol: Any = None, hermitian: bool = False) -> Any:
    a = _ensure("jnp.linalg.pinv", a)
    arr, = promote_dtypes_inexact(a)
    m, n = arr.shape[-2:]
    if m == 0 or n == 0:
        return jnp.empty(arr.shape[:-2] + (n, m), arr.dtype)
    arr = ufuncs.conj(arr)
    if rtol is None:
        rtol = 10. * max(m, n) * jnp.array(dtypes.finfo(arr.dtype).eps)
    rtol = jnp.asarray(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    rtol = shp.expand_dims(rtol[..., np.newaxis], tuple(range(s.ndim - rtol.ndim - 1)))
    cutoff = rtol * s[..., 0:1]
    s = ufuncs.where(s > cutoff, s, np.inf).astype(u.dtype)
    res = jnp.matmul(jnp.matrix_transpose(vh), ufuncs.divide(jnp.matrix_transpose(u),
                                                             s[..., np.newaxis]),
                     precision=_HIGHEST)
    return lax.convert_element_type(res, arr.dtype)


_pinv_body.__name__ = "_pinv"
_pinv = custom_jvp(jit(_pinv_body, static_argnames=("hermitian",)), nondiff_argnums=(1, 2))


def _pinv_jvp(rtol: Any, hermitian: bool, primals: Sequence[Any], tangents: Sequence[Any]
              ) -> tuple:
    """Golub & Pereyra (1973): the pseudo-inverse's derivative, products at float32."""
    with config.State("jax_default_matmul_precision")("float32"):
        a, = primals
        a_dot, = tangents
        p = pinv(a, rtol=rtol, hermitian=hermitian)
        if hermitian:
            a, a_dot = _symmetrize(a), _symmetrize(a_dot)
        m, n = a.shape[-2:]
        if m >= n:
            s = (p @ _H(p)) @ _H(a_dot)
            t = (_H(a_dot) @ _H(p)) @ p
            p_dot = -(p @ a_dot) @ p + s - (s @ a) @ p + t - (p @ a) @ t
        else:
            s = p @ (_H(p) @ _H(a_dot))
            t = _H(a_dot) @ (_H(p) @ p)
            p_dot = -p @ (a_dot @ p) + s - s @ (a @ p) + t - p @ (a @ t)
        return p, p_dot


_pinv.defjvp(_pinv_jvp)


def _lstsq(a: Any, b: Any, rcond: Any, *, numpy_resid: bool = False) -> tuple:
    """Least squares via the thin SVD: (x, residuals, rank, singular values)."""
    a, b = promote_dtypes_inexact(a, b)
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_orig_ndim = b.ndim
    if b_orig_ndim == 1:
        b = b[:, None]
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim != 2:
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or "
                        "two-dimensional")
    m, n = a.shape
    dtype = a.dtype
    if a.size == 0:
        s = jnp.empty(0, dtype=a.dtype)
        rank = jnp.array(0, dtype=int)
        x = jnp.zeros((n, *b.shape[1:]), dtype=a.dtype)
    else:
        eps = dtypes.finfo(dtype).eps
        if rcond is None:
            rcond = float(eps) * max(n, m)
        else:
            rcond = ufuncs.where(rcond < 0, eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= jnp.array(rcond, dtype=s.dtype) * s[0])
        rank = mask.sum()
        safe_s = ufuncs.where(mask, s, 1).astype(a.dtype)
        s_inv = ufuncs.where(mask, 1 / safe_s, 0)[:, np.newaxis]
        u_t_b = jnp.matmul(u.conj().T, b, precision=_HIGHEST)
        x = jnp.matmul(vt.conj().T, s_inv * u_t_b, precision=_HIGHEST)
    if numpy_resid and (rank < n or m <= n):
        resid = jnp.asarray([])
    else:
        b_estimate = jnp.matmul(a, x, precision=_HIGHEST)
        resid = norm(b - b_estimate, axis=0) ** 2
    if b_orig_ndim == 1:
        x = x.ravel()
    return x, resid, rank, s


def _lstsq_jittable(a: Any, b: Any, rcond: Any) -> tuple:
    return _lstsq(a, b, rcond, numpy_resid=False)


_lstsq_jittable.__name__ = "_lstsq"
_jit_lstsq = jit(_lstsq_jittable)


def lstsq(a: Any, b: Any, rcond: float | None = None, *, numpy_resid: bool = False) -> tuple:
    """(x, residuals, rank, s) minimising |a x - b|; residuals always computed unless
    numpy_resid (then empty where NumPy gives none, which needs concrete inputs)."""
    a, b = _ensure("jnp.linalg.lstsq", a, b)
    if numpy_resid:
        return _lstsq(a, b, rcond, numpy_resid=True)
    return _jit_lstsq(a, b, rcond)


def tensorinv(a: Any, ind: int = 2) -> Any:
    """The inverse of a tensor seen as a matrix over its first `ind` axes and the rest."""
    arr = _ensure("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    contracting_shape, batch_shape = arr.shape[:ind], arr.shape[ind:]
    flatshape = (math.prod(contracting_shape), math.prod(batch_shape))
    if flatshape[0] != flatshape[1]:
        raise ValueError("tensorinv is only possible when the product of the first `ind` "
                         "dimensions equals that of the remaining dimensions. got "
                         f"arr.shape={arr.shape} with ind={ind}.")
    return inv(arr.reshape(flatshape)).reshape(*batch_shape, *contracting_shape)


def tensorsolve(a: Any, b: Any, axes: tuple[int, ...] | None = None) -> Any:
    """x with tensordot(a, x, x.ndim) = b."""
    a_arr, b_arr = _ensure("tensorsolve", a, b)
    if axes is not None:
        a_arr = jnp.moveaxis(a_arr, axes, len(axes) * (a_arr.ndim - 1,))
    out_shape = a_arr.shape[b_arr.ndim:]
    if a_arr.shape[:b_arr.ndim] != b_arr.shape:
        raise ValueError("After moving axes to end, leading shape of a must match shape of b. "
                         f"got a.shape={a_arr.shape}, b.shape={b_arr.shape}")
    if b_arr.size != math.prod(out_shape):
        raise ValueError("Input arrays must have prod(a.shape[:b.ndim]) == "
                         f"prod(a.shape[b.ndim:]); got a.shape={a_arr.shape}, "
                         f"b.ndim={b_arr.ndim}.")
    a_arr = a_arr.reshape(b_arr.size, math.prod(out_shape))
    return solve(a_arr, b_arr.ravel()).reshape(out_shape)


@partial(jit, static_argnames=("n",))
def matrix_power(a: Any, n: int) -> Any:
    """a raised to the integer power n (by repeated squaring; n < 0 inverts first)."""
    arr = _ensure("jnp.linalg.matrix_power", a)
    if arr.ndim < 2:
        raise TypeError(f"{arr.ndim}-dimensional array given. Array must be at least "
                        "two-dimensional")
    if arr.shape[-2] != arr.shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return jnp.broadcast_to(jnp.eye(arr.shape[-2], dtype=arr.dtype), arr.shape)
    if n < 0:
        arr = inv(arr)
        n = abs(n)
    if n == 1:
        return arr
    if n == 2:
        return arr @ arr
    if n == 3:
        return (arr @ arr) @ arr
    z = result = None
    while n > 0:
        z = arr if z is None else (z @ z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else (result @ z)
    return result


@partial(jit, static_argnames=("hermitian",))
def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False,  # noqa: N803
                tol: Any = None) -> Any:
    """The number of singular values above rtol * largest (default max(m, n) * eps)."""
    M = _ensure("jnp.linalg.matrix_rank", M)  # noqa: N806
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    M, = promote_dtypes_inexact(M)  # noqa: N806
    if M.ndim < 2:
        return (M != 0).any().astype(np.int32)
    S = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)  # noqa: N806
    if rtol is None:
        rtol = (S.max(-1) * np.max(M.shape[-2:]).astype(S.dtype)
                * dtypes.finfo(S.dtype).eps)
    rtol = jnp.expand_dims(rtol, np.ndim(rtol))
    return reductions.sum(S > rtol, axis=-1)


# ---------------------------------------------------------------------------------------------
# Determinants
# ---------------------------------------------------------------------------------------------

def _slogdet_small_impl(a: Any) -> tuple[Any, Any]:
    """1x1 and 2x2 determinants written out, then sign and log|det|."""
    n = a.shape[-1]
    if n == 1:
        det = a[..., 0, 0]
    elif n == 2:  # (the four entries taken first, as JAX does: its jaxpr's order)
        a00, a01, a10, a11 = a[..., 0, 0], a[..., 0, 1], a[..., 1, 0], a[..., 1, 1]
        det = (a00 * a11) - (a01 * a10)
    else:
        raise ValueError(f"_slogdet_small only supports n in {{1, 2}}, got n={n}")
    abs_det = ufuncs.abs(det)
    return ufuncs.sign(det), ufuncs.real(ufuncs.log(abs_det))


_slogdet_small_impl.__name__ = "_slogdet_small"
_slogdet_small = custom_jvp(_slogdet_small_impl)


def _log_det_tangent(x: Any, sign: Any, ans_dot: Any) -> tuple[Any, Any]:
    """(sign_dot, logabsdet_dot) from d log det (complex: its imaginary part turns the
    sign)."""
    if _is_complex(x):
        sign_dot = (ans_dot - ufuncs.real(ans_dot).astype(ans_dot.dtype)) * sign
        return sign_dot, ufuncs.real(ans_dot)
    return jnp.zeros_like(sign), ans_dot


def _slogdet_small_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    x, = primals
    g, = tangents
    sign, ans = _slogdet_small(x)
    if x.shape[-1] == 1:
        ans_dot = g[..., 0, 0] / x[..., 0, 0]
    else:
        x00, x01, x10, x11 = x[..., 0, 0], x[..., 0, 1], x[..., 1, 0], x[..., 1, 1]
        det = (x00 * x11) - (x01 * x10)
        ans_dot = (g[..., 0, 0] * x11 - g[..., 0, 1] * x10
                   - g[..., 1, 0] * x01 + g[..., 1, 1] * x00) / det
    sign_dot, ans_dot = _log_det_tangent(x, sign, ans_dot)
    return (sign, ans), (sign_dot, ans_dot)


_slogdet_small.defjvp(_slogdet_small_jvp)


def _slogdet_lu_impl(a: Any) -> tuple[Any, Any]:
    """sign and log|det| from LU: the diagonal's product, the pivots' parity."""
    dtype = a.dtype
    lu, pivot, _ = lax_linalg.lu(a)
    diag = jnp.diagonal(lu, axis1=-2, axis2=-1)
    is_zero = reductions.any(diag == jnp.array(0, dtype=dtype), axis=-1)
    iota = shp.expand_dims(jnp.arange(a.shape[-1], dtype=pivot.dtype),
                           tuple(range(pivot.ndim - 1)))
    parity = reductions.count_nonzero(pivot != iota, axis=-1)
    if _is_complex(a):
        sign = reductions.prod(diag / ufuncs.abs(diag).astype(diag.dtype), axis=-1)
    else:
        sign = jnp.array(1, dtype=dtype)
        parity = parity + reductions.count_nonzero(diag < 0, axis=-1)
    sign = ufuncs.where(is_zero, jnp.array(0, dtype=dtype),
                        sign * jnp.array(-2 * (parity % 2) + 1, dtype=dtype))
    logdet = ufuncs.where(is_zero, jnp.array(-np.inf, dtype=dtype),
                          reductions.sum(ufuncs.log(ufuncs.abs(diag)).astype(dtype), axis=-1))
    return sign, ufuncs.real(logdet)


_slogdet_lu_impl.__name__ = "_slogdet_lu"
_slogdet_lu = custom_jvp(_slogdet_lu_impl)


def _slogdet_qr_impl(a: Any) -> tuple[Any, Any]:
    """sign and log|det| from Householder QR (no pivoting): each reflector has det -1."""
    if _is_complex(a):
        raise NotImplementedError("slogdet method='qr' not implemented for complex inputs")
    n = a.shape[-1]
    a, taus = lax_linalg.geqrf(a)
    a_diag = jnp.diagonal(a, axis1=-2, axis2=-1)
    log_abs_det = reductions.sum(ufuncs.log(ufuncs.abs(a_diag)), axis=-1)
    sign_diag = reductions.prod(ufuncs.sign(a_diag), axis=-1)
    sign_taus = reductions.prod(ufuncs.where(taus[..., :(n - 1)] != 0, -1, 1),
                                axis=-1).astype(sign_diag.dtype)
    return sign_diag * sign_taus, log_abs_det


_slogdet_qr_impl.__name__ = "_slogdet_qr"
_slogdet_qr = custom_jvp(_slogdet_qr_impl)


@partial(jit, static_argnames=("method",))
def slogdet(a: Any, *, method: str | None = None) -> SlogdetResult:
    """(sign, log|det|) of square matrices, by LU (method None/'lu') or QR."""
    a = _ensure("jnp.linalg.slogdet", a)
    a, = promote_dtypes_inexact(a)
    a_shape = np.shape(a)
    if len(a_shape) < 2 or a_shape[-1] != a_shape[-2]:
        raise ValueError(f"Argument to slogdet() must have shape [..., n, n], got {a_shape}")
    if method is None or method == "lu":
        if a_shape[-1] in (1, 2):
            return SlogdetResult(*_slogdet_small(a))
        return SlogdetResult(*_slogdet_lu(a))
    if method == "qr":
        return SlogdetResult(*_slogdet_qr(a))
    raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                     "(`None`), and 'qr'.")


def _slogdet_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    """d log det = trace(a^-1 da)."""
    x, = primals
    g, = tangents
    sign, ans = slogdet(x)
    ans_dot = manipulation.trace(solve(x, g), axis1=-1, axis2=-2)  # (as JAX: offset unpassed)
    sign_dot, ans_dot = _log_det_tangent(x, sign, ans_dot)
    return (sign, ans), (sign_dot, ans_dot)


_slogdet_lu.defjvp(_slogdet_jvp)
_slogdet_qr.defjvp(_slogdet_jvp)


def _cofactor_solve(a: Any, b: Any) -> tuple[Any, Any]:
    """(det a, adj(a) b): equals (det a, det a * a^-1 b) for invertible a, and stays finite
    (the adjugate's product, zeros past a rank deficiency of two) for singular a."""
    a, b = _ensure("jnp.linalg._cofactor_solve", a, b)
    a, = promote_dtypes_inexact(a)
    b, = promote_dtypes_inexact(b)
    a_shape, b_shape = np.shape(a), np.shape(b)
    if not (len(a_shape) >= 2 and a_shape[-1] == a_shape[-2] and b_shape[-2:] == a_shape[-2:]):
        raise ValueError("The arguments to _cofactor_solve must have shapes a=[..., m, m] and "
                         f"b=[..., m, m]; got a={a_shape} and b={b_shape}")
    if a_shape[-1] == 1:
        return a[..., 0, 0], b
    lu, pivots, permutation = lax_linalg.lu(a)
    dtype = a.dtype
    batch_dims = lax_extra.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    x = jnp.broadcast_to(b, batch_dims + b.shape[-2:])
    lu = jnp.broadcast_to(lu, batch_dims + lu.shape[-2:])
    diag = jnp.diagonal(lu, axis1=-2, axis2=-1)
    iota = shp.expand_dims(jnp.arange(a_shape[-1], dtype=pivots.dtype),
                           tuple(range(pivots.ndim - 1)))
    parity = reductions.count_nonzero(pivots != iota, axis=-1)
    sign = jnp.asarray(-2 * (parity % 2) + 1, dtype=dtype)
    # partial_det[..., -1] is det(a), partial_det[..., -2] det(u) / u_nn
    partial_det = reductions.cumprod(diag, axis=-1) * sign[..., None]
    lu = lu.at[..., -1, -1].set(1.0 / partial_det[..., -2])
    permutation = jnp.broadcast_to(permutation, (*batch_dims, a_shape[-1]))
    iotas = _ix(*(shp.iota(np.int32, d) for d in (*batch_dims, 1)))
    # rows of singular matrices are zeroed (before and after the solves)
    d = jnp.ones(x.shape[:-1], x.dtype)
    d = lax_linalg.triangular_solve(lu, d, left_side=True, lower=False)
    d = reductions.any(ufuncs.logical_or(ufuncs.isnan(d), ufuncs.isinf(d)), axis=-1)
    d = jnp.tile(d[..., None, None], d.ndim * (1,) + x.shape[-2:])
    x = ufuncs.where(d, jnp.zeros_like(x), x)
    x = x[iotas[:-1] + (permutation, slice(None))]
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    x = jnp.concatenate((x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :]),
                        axis=-2)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    x = ufuncs.where(d, jnp.zeros_like(x), x)
    return partial_det[..., -1], x


def _ix(*args: Any) -> tuple:
    """NumPy's ix_ for 1-D index arrays: each reshaped to run along its own axis."""
    n = len(args)
    return tuple(shp.reshape(a, tuple(np.shape(a)[0] if k == i else 1 for k in range(n)))
                 for i, a in enumerate(args))


def _det_2x2(a: Any) -> Any:
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a: Any) -> Any:
    return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2]
            + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
            + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1]
            - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
            - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1]
            - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])


def _det_impl(a: Any) -> Any:
    sign, logdet = slogdet(a)
    return sign * ufuncs.exp(logdet).astype(sign.dtype)


_det_impl.__name__ = "_det"
_det = custom_jvp(_det_impl)


@_det.defjvp
def _det_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    """d det = trace(adj(a) da), finite for singular a too."""
    x, = primals
    g, = tangents
    y, z = _cofactor_solve(x, g)
    return y, manipulation.trace(z, axis1=-1, axis2=-2)


@jit
def det(a: Any) -> Any:
    """The determinant (2x2 and 3x3 written out, else from slogdet)."""
    a = _ensure("jnp.linalg.det", a)
    a, = promote_dtypes_inexact(a)
    a_shape = np.shape(a)
    if len(a_shape) >= 2 and a_shape[-1] == 2 and a_shape[-2] == 2:
        return _det_2x2(a)
    if len(a_shape) >= 2 and a_shape[-1] == 3 and a_shape[-2] == 3:
        return _det_3x3(a)
    if len(a_shape) >= 2 and a_shape[-1] == a_shape[-2]:
        return _det(a)
    raise ValueError(f"Argument to _det() must have shape [..., n, n], got {a_shape}")


# ---------------------------------------------------------------------------------------------
# Norms and condition numbers
# ---------------------------------------------------------------------------------------------

def _abs_sq_sum(x: Any, axis: Any, keepdims: bool) -> Any:
    return ufuncs.sqrt(reductions.sum(ufuncs.real(x * ufuncs.conj(x)), axis=axis,
                                      keepdims=keepdims))


@partial(jit, static_argnames=("ord", "axis", "keepdims"))
def norm(x: Any, ord: int | str | None = None,  # noqa: A002
         axis: None | tuple[int, ...] | int = None, keepdims: bool = False) -> Any:
    """Vector norms (one axis) and matrix norms (two axes: 'fro', 'nuc', +-1, +-2, +-inf)."""
    x = _ensure("jnp.linalg.norm", x)
    x, = promote_dtypes_inexact(x)
    ndim = np.ndim(x)
    if axis is None:
        if ord is None:  # any rank: the flattened 2-norm, as NumPy allows
            return ufuncs.sqrt(reductions.sum(ufuncs.real(x * ufuncs.conj(x)),
                                              keepdims=keepdims))
        axis = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axis = tuple(canonicalize_axis(a, ndim) for a in axis)
    else:
        axis = (canonicalize_axis(axis, ndim),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) != 2:
        raise ValueError(f"Improper number of axes for norm: axis={axis}. Pass one axis to "
                         "compute a vector-norm, or two axes to compute a matrix-norm.")
    return _matrix_norm(x, ord, axis, keepdims)


def _matrix_norm(x: Any, ord: Any, axis: tuple[int, int], keepdims: bool) -> Any:  # noqa: A002
    row_axis, col_axis = axis
    if ord is None or ord in ("f", "fro"):
        return _abs_sq_sum(x, axis, keepdims)
    if ord in (1, -1):
        if not keepdims and col_axis > row_axis:
            col_axis -= 1
        sums = reductions.sum(ufuncs.abs(x), axis=row_axis, keepdims=keepdims)
        if ord == 1:
            return reductions.amax(sums, axis=col_axis, keepdims=keepdims, initial=0)
        return reductions.amin(sums, axis=col_axis, keepdims=keepdims)
    if ord in (np.inf, -np.inf):
        if not keepdims and row_axis > col_axis:
            row_axis -= 1
        sums = reductions.sum(ufuncs.abs(x), axis=col_axis, keepdims=keepdims)
        if ord == np.inf:
            return reductions.amax(sums, axis=row_axis, keepdims=keepdims, initial=0)
        return reductions.amin(sums, axis=row_axis, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        x = jnp.moveaxis(x, axis, (-2, -1))
        s = svd(x, compute_uv=False)
        if ord == 2:
            y = reductions.amax(s, axis=-1, initial=0)
        elif ord == -2:
            y = reductions.amin(s, axis=-1)
        else:
            y = reductions.sum(s, axis=-1)
        return jnp.expand_dims(y, axis) if keepdims else y
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: str | int = "fro") -> Any:  # noqa: A002
    """The matrix norm over the last two axes."""
    x = _ensure("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


def vector_norm(x: Any, /, *, axis: int | tuple[int, ...] | None = None,
                keepdims: bool = False, ord: int | str = 2) -> Any:  # noqa: A002
    """The vector p-norm over `axis` (all axes when None; 0 counts non-zeros)."""
    x = _ensure("jnp.linalg.vector_norm", x)
    if ord is None or ord == 2:
        return _abs_sq_sum(x, axis, keepdims)
    if ord == np.inf:
        return reductions.amax(ufuncs.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return reductions.amin(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return reductions.sum(x != 0, dtype=dtypes.finfo(x.dtype).dtype, axis=axis,
                              keepdims=keepdims)
    if ord == 1:
        return reductions.sum(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        msg = f"Invalid order '{ord}' for vector norm."
        if ord == "inf":
            msg += "Use 'jax.numpy.inf' instead."
        if ord == "-inf":
            msg += "Use '-jax.numpy.inf' instead."
        raise ValueError(msg)
    abs_x = ufuncs.abs(x)
    ord_arr = np.array(ord, abs_x.dtype)
    ord_inv = np.array(1. / ord_arr, abs_x.dtype)
    out = reductions.sum(abs_x ** ord_arr, axis=axis, keepdims=keepdims)
    return ufuncs.power(out, ord_inv)


@partial(jit, static_argnames=("p",))
def cond(x: Any, p: Any = None) -> Any:
    """The condition number in norm p (2 and -2 from the singular values; inf where a
    NaN-free matrix is singular)."""
    arr = _ensure("cond", x)
    if arr.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got "
                         f"arr.shape={arr.shape}")
    if arr.shape[-1] == 0 or arr.shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got "
                         f"arr.shape={arr.shape}")
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if arr.shape[-2] != arr.shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for p={p!r}, array must be square; got "
                             f"arr.shape={arr.shape}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    return ufuncs.where(ufuncs.isnan(r) & ~ufuncs.isnan(x).any(axis=(-2, -1)), np.inf, r)


# ---------------------------------------------------------------------------------------------
# Array API products and views
# ---------------------------------------------------------------------------------------------

def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """Cross product of (arrays of) 3-vectors along `axis`."""
    x1, x2 = _ensure("jnp.linalg.outer", x1, x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                         f"have x1.shape[axis]={x1.shape[axis]} and "
                         f"x2.shape[axis]={x2.shape[axis]}")
    return manipulation.cross(x1, x2, axis=axis)


def outer(x1: Any, x2: Any, /) -> Any:
    """Outer product of two 1-D arrays."""
    x1, x2 = _ensure("jnp.linalg.outer", x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim} x2.ndim={x2.ndim}")
    return x1[:, None] * x2[None, :]


def matrix_transpose(x: Any, /) -> Any:
    """Swap the last two axes."""
    x_arr = _ensure("jnp.linalg.matrix_transpose", x)
    ndim = x_arr.ndim
    if ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={ndim}")
    return shp.transpose(x_arr, (*range(ndim - 2), ndim - 1, ndim - 2))


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Conjugated dot product of vectors along `axis`, other axes broadcast."""
    x1, x2 = _ensure("jnp.linalg.vecdot", x1, x2)
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"axes must match; got shapes {x1.shape} and {x2.shape} with "
                         f"axis={axis}")
    x1 = jnp.moveaxis(x1, axis, -1)
    x2 = jnp.moveaxis(x2, axis, -1)

    def vdot(a: Any, b: Any) -> Any:
        return jnp.vdot(a, b, precision=precision,
                        preferred_element_type=preferred_element_type)

    return vectorize(vdot, signature="(n),(n)->()")(x1, x2)


def matmul(x1: Any, x2: Any, /, *, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Matrix product with batch broadcasting (jnp.matmul)."""
    x1, x2 = _ensure("jnp.linalg.matmul", x1, x2)
    return jnp.matmul(x1, x2, precision=precision,
                      preferred_element_type=preferred_element_type)


def tensordot(x1: Any, x2: Any, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2,
              precision: Any = None, preferred_element_type: Any = None,
              out_sharding: Any = None) -> Any:
    """Tensor contraction over `axes` (jnp.tensordot)."""
    x1, x2 = _ensure("jnp.linalg.tensordot", x1, x2)
    return jnp.tensordot(x1, x2, axes=axes, precision=precision,
                         preferred_element_type=preferred_element_type)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The `offset` diagonal of the last two axes."""
    x = _ensure("jnp.linalg.diagonal", x)
    return jnp.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """Sum of the `offset` diagonal of the last two axes."""
    x = _ensure("jnp.linalg.trace", x)
    return manipulation.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Any:
    """The product of a chain of matrices, in the cheapest order (opt_einsum's path); the
    first and last may be vectors."""
    util.check_arraylike("jnp.linalg.multi_dot", *arrays)
    arrs = [util.as_operand(a) for a in arrays]
    if len(arrs) == 1:  # as JAX: a single array is split along its first axis
        arrs = list(arrs[0])
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got "
                         f"len(arrays)={len(arrs)}")
    if not (arrs[0].ndim in (1, 2) and arrs[-1].ndim in (1, 2)
            and all(a.ndim == 2 for a in arrs[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the "
                         "first and last array which may be 1 or 2 dimensional. Got array "
                         f"shapes {[a.shape for a in arrs]}")
    if any(a.shape[-1] != b.shape[0] for a, b in zip(arrs[:-1], arrs[1:])):
        raise ValueError("multi_dot: last dimension of each array must match first dimension "
                         f"of following array. Got array shapes {[a.shape for a in arrs]}")
    einsum_axes: list[tuple[int, ...]] = [(i, i + 1) for i in range(len(arrs))]
    if arrs[0].ndim == 1:
        einsum_axes[0] = einsum_axes[0][1:]
    if arrs[-1].ndim == 1:
        einsum_axes[-1] = einsum_axes[-1][:1]
    return jnp.einsum(*itertools.chain(*zip(arrs, einsum_axes)), optimize="auto",
                      precision=precision)
