"""jax.scipy.linalg's decompositions and solves: SciPy's keywords over lax.linalg, as JAX 0.10.2
builds them (the same jitted helpers, so jaxprs show the same `jit[name=...]` calls).

SciPy's `overwrite_*`, `check_finite`, `lwork`, `debug`, `turbo` and `lapack_driver` are
accepted and ignored, as in JAX.  The matrix functions (expm, sqrtm, funm, polar) are in
`matrix_functions.py`, the matrix constructors in `special_matrices.py`.
"""
from __future__ import annotations

import warnings
from functools import partial
from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core.trace_state import note_side_effect
from pyjax._src.core import dtypes
from pyjax._src.numpy import linalg as jnp_linalg
from pyjax._src.numpy.util import (
    promote_args_inexact, promote_dtypes_complex, promote_dtypes_inexact)
from pyjax._src.numpy.vectorize import vectorize
from pyjax._src.primitives import linalg as lax_linalg
from pyjax._src.transforms.batching import vmap
from pyjax._src.transforms.jit import jit

Array = Any


def _batched_1d_warning(name: str, fix: str) -> None:
    """JAX's FutureWarning for b of shape (..., n) against a batched matrix."""
    note_side_effect()
    warnings.warn(
        f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are deprecated, and in "
        f"the future will be treated as a batched 2D solve. Use {fix} to avoid this warning.",
        category=FutureWarning)


def _rhs_signature(name: str, fix: str, a: Array, b: Array, extra: str = "") -> str:
    """The vectorize signature for a (…, n, n) factor and b (n,), (…, n) or (…, n, k)."""
    if b.ndim == 1:
        return f"(n,n),{extra}(n)->(n)"
    if a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
        _batched_1d_warning(name, fix)
        return f"(n,n),{extra}(n)->(n)"
    return f"(n,n),{extra}(n,k)->(n,k)"


# ---------------------------------------------------------------------------------------------
# Cholesky
# ---------------------------------------------------------------------------------------------

@partial(jit, static_argnames=("lower",))
def _cholesky(a: Array, lower: bool) -> Array:
    a, = promote_dtypes_inexact(jnp.asarray(a))
    factor = lax_linalg.cholesky(a if lower else jnp.conj(a.mT), symmetrize_input=False)
    return factor if lower else jnp.conj(factor.mT)


def cholesky(a: Array, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Array:
    """Cholesky factor of a Hermitian positive-definite matrix: upper U (a = U^H U) unless
    `lower` (a = L L^H); only the named triangle of a is read."""
    del overwrite_a, check_finite
    return _cholesky(a, lower)


def cho_factor(a: Array, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Array, bool]:
    """(c, lower) for cho_solve: the Cholesky factor and which triangle it is."""
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


@partial(jit, static_argnames=("lower",))
def _cho_solve(c: Array, b: Array, lower: bool) -> Array:
    c, b = promote_dtypes_inexact(jnp.asarray(c), jnp.asarray(b))
    signature = _rhs_signature("cho_solve", "cho_solve(c_and_lower, b[..., None]).squeeze(-1)",
                               c, b)
    b = vectorize(partial(lax_linalg.triangular_solve, left_side=True, lower=lower,
                          transpose_a=not lower, conjugate_a=not lower),
                  signature=signature)(c, b)
    return vectorize(partial(lax_linalg.triangular_solve, left_side=True, lower=lower,
                             transpose_a=lower, conjugate_a=lower),
                     signature=signature)(c, b)


def cho_solve(c_and_lower: tuple[Array, bool], b: Array, overwrite_b: bool = False,
              check_finite: bool = True) -> Array:
    """Solve a x = b from cho_factor's (c, lower): two triangular solves."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    return _cho_solve(c, b, lower)


# ---------------------------------------------------------------------------------------------
# SVD, det, eigh, schur, inv
# ---------------------------------------------------------------------------------------------

@partial(jit, static_argnames=("full_matrices", "compute_uv"))
def _svd(a: Array, *, full_matrices: bool, compute_uv: bool) -> Any:
    a, = promote_dtypes_inexact(jnp.asarray(a))
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def svd(a: Array, full_matrices: bool = True, compute_uv: bool = True,
        overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Any:
    """(u, s, vh) with a = u diag(s) vh, or s alone when not `compute_uv`."""
    del overwrite_a, check_finite, lapack_driver
    return _svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def det(a: Array, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """Determinant over the last two axes (jnp.linalg.det)."""
    del overwrite_a, check_finite
    return jnp_linalg.det(a)


@partial(jit, static_argnames=("lower", "eigvals_only", "eigvals", "type"))
def _eigh(a: Array, b: Array | None, lower: bool, eigvals_only: bool, eigvals: None,
          type: int) -> Any:  # noqa: A002 - SciPy's keyword
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    a, = promote_dtypes_inexact(jnp.asarray(a))
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def eigh(a: Array, b: Array | None = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: None = None, type: int = 1,  # noqa: A002 - SciPy's keyword
         check_finite: bool = True) -> Any:
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix, reading the `lower`
    (or upper) triangle; only the standard problem (b=None, type=1, eigvals=None)."""
    del overwrite_a, overwrite_b, turbo, check_finite
    return _eigh(a, b, lower, eigvals_only, eigvals, type)


@partial(jit, static_argnames=("output",))
def _schur(a: Array, output: str) -> tuple[Array, Array]:
    if output == "complex":
        a = a.astype(dtypes.to_complex_dtype(a.dtype))
    return lax_linalg.schur(a)


def schur(a: Array, output: str = "real") -> tuple[Array, Array]:
    """(T, Z) with a = Z T Z^H: T quasi-upper-triangular ('real') or triangular ('complex')."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got {output=}.")
    return _schur(a, output)


def inv(a: Array, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """Inverse of a square matrix (jnp.linalg.inv)."""
    del overwrite_a, check_finite
    return jnp_linalg.inv(a)


# ---------------------------------------------------------------------------------------------
# LU
# ---------------------------------------------------------------------------------------------

@partial(jit, static_argnames=("overwrite_a", "check_finite"))
def lu_factor(a: Array, overwrite_a: bool = False, check_finite: bool = True
              ) -> tuple[Array, Array]:
    """(lu, piv) for lu_solve: L below the diagonal, U on and above it, LAPACK's pivots."""
    del overwrite_a, check_finite
    a, = promote_dtypes_inexact(jnp.asarray(a))
    lu_, pivots, _ = lax_linalg.lu(a)
    return lu_, pivots


@partial(jit, static_argnames=("trans", "overwrite_b", "check_finite"))
def lu_solve(lu_and_piv: tuple[Array, Array], b: Array, trans: int = 0,
             overwrite_b: bool = False, check_finite: bool = True) -> Array:
    """Solve a x = b (trans 0), a^T x = b (1) or a^H x = b (2) from lu_factor's output."""
    del overwrite_b, check_finite
    lu_, pivots = lu_and_piv
    lu_, b = promote_dtypes_inexact(jnp.asarray(lu_), jnp.asarray(b))
    m = lu_.shape[-2]
    perm = lax_linalg.lu_pivots_to_permutation(pivots, m)
    signature = _rhs_signature("lu_solve", "lu_solve(lu_and_piv, b[..., None]).squeeze(-1)",
                               lu_, b, extra="(n),")
    return vectorize(partial(lax_linalg.lu_solve, trans=trans),
                     signature=signature)(lu_, perm, b)


@partial(jit, static_argnums=(1,))
def _lu(a: Array, permute_l: bool) -> tuple[Array, ...]:
    a, = promote_dtypes_inexact(jnp.asarray(a))
    lu_, _, permutation = lax_linalg.lu(a)
    dtype = lax.dtype(a)
    m, n = np.shape(a)
    p = jnp.real(jnp.array(permutation[None, :]
                           == jnp.arange(m, dtype=permutation.dtype)[:, None], dtype=dtype))
    k = min(m, n)
    lower = jnp.tril(lu_, -1)[:, :k] + jnp.eye(m, k, dtype=dtype)
    upper = jnp.triu(lu_)[:k, :]
    if permute_l:
        return jnp.matmul(p, lower, precision=lax.Precision.HIGHEST), upper
    return p, lower, upper


@partial(jit, static_argnames=("permute_l", "overwrite_a", "check_finite"))
def lu(a: Array, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> tuple[Array, ...]:
    """(P, L, U) with a = P L U (L unit lower, U upper), or (P L, U) when `permute_l`."""
    del overwrite_a, check_finite
    return _lu(a, permute_l)


# ---------------------------------------------------------------------------------------------
# QR
# ---------------------------------------------------------------------------------------------

@partial(jit, static_argnames=("mode", "pivoting"))
def _qr(a: Array, mode: str, pivoting: bool) -> tuple[Array, ...]:
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    a, = promote_dtypes_inexact(jnp.asarray(a))
    q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=full_matrices)
    if mode == "r":
        return (r, p[0]) if pivoting else (r,)
    return (q, r, p[0]) if pivoting else (q, r)


def qr(a: Array, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> tuple[Array, ...]:
    """(Q, R[, P]) for mode 'full' or 'economic', (R,) or (R, P) for mode 'r'; with
    `pivoting`, a[:, P] = Q R."""
    del overwrite_a, lwork, check_finite
    return _qr(a, mode, pivoting)


def qr_multiply(a: Array, c: Array, mode: str = "right", pivoting: bool = False,
                conjugate: bool = False, overwrite_a: bool = False, overwrite_c: bool = False
                ) -> tuple[Array, ...]:
    """(Q c, R) for mode 'left' or (c Q, R) for 'right' (conj(Q) when `conjugate`), applying
    the Householder reflectors with ormqr instead of forming Q; (…, P) with `pivoting`."""
    del overwrite_a, overwrite_c
    a, c = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(c))
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left":
        if c.shape[-2] != k:
            raise ValueError(
                f"Array shapes are not compatible for Q @ c operation: a has shape "
                f"{tuple(a.shape)} so Q has {k} columns, but c has {c.shape[-2]} rows "
                f"(expected {k}).")
    elif c.shape[-1] != m:
        raise ValueError(
            f"Array shapes are not compatible for c @ Q operation: a has shape "
            f"{tuple(a.shape)} so Q has {m} rows, but c has {c.shape[-1]} columns "
            f"(expected {m}).")
    batch = jnp.broadcast_shapes(a.shape[:-2], c.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    c = jnp.broadcast_to(c, batch + c.shape[-2:])
    p = None
    if pivoting:
        jpvt = jnp.zeros(a.shape[:-2] + (n,), dtype=jnp.int32)
        r, p, taus = lax_linalg.geqp3(a, jpvt)
        p -= 1  # geqp3's pivots count from 1
    else:
        r, taus = lax_linalg.geqrf(a)
    if m > n and mode == "left":
        zeros = jnp.zeros(c.shape[:-2] + (m - k,) + c.shape[-1:], dtype=c.dtype)
        c = jnp.concatenate([c, zeros], axis=-2)
    if conjugate:  # conj(Q) on one side is Q^H on the other side of c^T
        c = c.swapaxes(-1, -2)
    left = (mode == "left") != conjugate
    cq = lax_linalg.ormqr(r, taus, c, left=left, transpose=conjugate)
    if conjugate:
        cq = cq.swapaxes(-1, -2)
    if mode == "right":
        cq = cq[..., :k]
    if onedim:
        cq = cq.ravel()
    r = jnp.triu(r[..., :k, :])
    return (cq, r, p) if pivoting else (cq, r)


# ---------------------------------------------------------------------------------------------
# solve, solve_triangular
# ---------------------------------------------------------------------------------------------

@partial(jit, static_argnames=("assume_a", "lower"))
def _solve(a: Array, b: Array, assume_a: str, lower: bool) -> Array:
    if assume_a != "pos":
        return jnp_linalg.solve(a, b)
    a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    lax_linalg._check_solve_shapes(a, b)
    # one Cholesky factorisation, reused by custom_linear_solve for the derivatives
    factors = cho_factor(lax.stop_gradient(a), lower=lower)
    custom_solve = partial(lax.custom_linear_solve,
                           lambda x: lax_linalg._broadcasted_matvec(a, x),
                           solve=lambda _, x: cho_solve(factors, x), symmetric=True)
    if a.ndim == b.ndim + 1:
        return custom_solve(b)
    return vmap(custom_solve, b.ndim - 1, max(a.ndim, b.ndim) - 1)(b)


def solve(a: Array, b: Array, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, debug: bool = False, check_finite: bool = True,
          assume_a: str = "gen") -> Array:
    """x with a x = b; assume_a='pos' solves through a Cholesky factorisation of the `lower`
    (or upper) triangle, 'gen', 'sym' and 'her' through LU."""
    del overwrite_a, overwrite_b, debug, check_finite
    valid_assume_a = ["gen", "sym", "her", "pos"]
    if assume_a not in valid_assume_a:
        raise ValueError(f"Expected assume_a to be one of {valid_assume_a}; got {assume_a!r}")
    return _solve(a, b, assume_a, lower)


_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


@partial(jit, static_argnames=("trans", "lower", "unit_diagonal"))
def _solve_triangular(a: Array, b: Array, trans: int | str, lower: bool,
                      unit_diagonal: bool) -> Array:
    if trans not in _TRANS:
        raise ValueError(f"Invalid 'trans' value {trans}")
    transpose_a, conjugate_a = _TRANS[trans]
    a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    signature = _rhs_signature("solve_triangular",
                               "solve_triangular(a, b[..., None]).squeeze(-1)", a, b)
    return vectorize(partial(lax_linalg.triangular_solve, left_side=True, lower=lower,
                             transpose_a=transpose_a, conjugate_a=conjugate_a,
                             unit_diagonal=unit_diagonal),
                     signature=signature)(a, b)


def solve_triangular(a: Array, b: Array, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False, debug: Any = None,
                     check_finite: bool = True) -> Array:
    """x with op(a) x = b for triangular a (only the `lower` or upper triangle is read);
    trans 0/'N': op(a) = a, 1/'T': a^T, 2/'C': a^H."""
    del overwrite_b, debug, check_finite
    return _solve_triangular(a, b, trans, lower, unit_diagonal)


# ---------------------------------------------------------------------------------------------
# Hessenberg form, real-to-complex Schur form
# ---------------------------------------------------------------------------------------------

@partial(jit, static_argnames=("calc_q", "check_finite", "overwrite_a"))
def hessenberg(a: Array, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Any:
    """H (zero below the first subdiagonal) with a = Q H Q^H, and Q when `calc_q`."""
    del overwrite_a, check_finite
    n = np.shape(a)[-1]
    if n == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    a_out, taus = lax_linalg.hessenberg(a)
    h = jnp.triu(a_out, -1)
    if not calc_q:
        return h
    q = lax_linalg.householder_product(a_out[..., 1:, :-1], taus)
    batch = a_out.shape[:-2]
    q = jnp.block([[jnp.ones(batch + (1, 1), dtype=a_out.dtype),
                    jnp.zeros(batch + (1, n - 1), dtype=a_out.dtype)],
                   [jnp.zeros(batch + (n - 1, 1), dtype=a_out.dtype), q]])
    return h, q


@jit
def _rsf2csf_2d(T: Array, Z: Array) -> tuple[Array, Array]:  # noqa: N803
    T, Z = promote_dtypes_complex(T, Z)
    eps = dtypes.finfo(T.dtype).eps
    N = T.shape[0]  # noqa: N806
    if N == 1:
        return T, Z

    def update(m: Array, T: Array, Z: Array) -> tuple[Array, Array]:  # noqa: N803
        # a Givens rotation zeroing T[m, m-1], applied to rows and columns m-1, m
        mu = jnp_linalg.eigvals(lax.dynamic_slice(T, (m - 1, m - 1), (2, 2))) - T[m, m]
        r = jnp_linalg.norm(jnp.array([mu[0], T[m, m - 1]])).astype(T.dtype)
        c = mu[0] / r
        s = T[m, m - 1] / r
        G = jnp.array([[c.conj(), s], [-s, c]], dtype=T.dtype)  # noqa: N806
        rows = lax.dynamic_slice_in_dim(T, m - 1, 2, axis=0)
        col_mask = jnp.arange(N) >= m - 1
        rotated = G @ jnp.where(col_mask, rows, 0)
        T = lax.dynamic_update_slice_in_dim(T, jnp.where(~col_mask, rows, rotated), m - 1,
                                            axis=0)
        cols = lax.dynamic_slice_in_dim(T, m - 1, 2, axis=1)
        row_mask = jnp.arange(N)[:, np.newaxis] < m + 1
        rotated = jnp.where(row_mask, cols, 0) @ G.conj().T
        T = lax.dynamic_update_slice_in_dim(T, jnp.where(~row_mask, cols, rotated), m - 1,
                                            axis=1)
        z_cols = lax.dynamic_slice_in_dim(Z, m - 1, 2, axis=1)
        Z = lax.dynamic_update_slice_in_dim(Z, z_cols @ G.conj().T, m - 1, axis=1)
        return T, Z

    def step(i: Array, TZ: tuple[Array, Array]) -> tuple[Array, Array]:  # noqa: N803
        m = N - i
        T, Z = TZ
        T, Z = lax.cond(
            jnp.abs(T[m, m - 1]) > eps * (jnp.abs(T[m - 1, m - 1]) + jnp.abs(T[m, m])),
            update, lambda m, T, Z: (T, Z), m, T, Z)
        T = T.at[m, m - 1].set(0.0)
        return T, Z

    return lax.fori_loop(1, N, step, (T, Z))


@partial(jit, static_argnames=("check_finite",))
def rsf2csf(T: Array, Z: Array, check_finite: bool = True) -> tuple[Array, Array]:  # noqa: N803
    """The complex Schur form (triangular T, unitary Z) from the real one, by Givens rotations
    that split each 2x2 diagonal block."""
    del check_finite
    T_arr = jnp.asarray(T)  # noqa: N806
    Z_arr = jnp.asarray(Z)  # noqa: N806
    if T_arr.ndim < 2 or T_arr.shape[-1] != T_arr.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if Z_arr.ndim < 2 or Z_arr.shape[-1] != Z_arr.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if T_arr.shape[-1] != Z_arr.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {Z_arr.shape} vs. T: {T_arr.shape}")
    return vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(T_arr, Z_arr)


# ---------------------------------------------------------------------------------------------
# Sylvester equations
# ---------------------------------------------------------------------------------------------

def _solve_sylvester_triangular_scan(R: Array, S: Array, F: Array) -> Array:  # noqa: N803
    """Y with R Y + Y S^T = F for upper-triangular R, S (Bartels-Stewart back substitution,
    one entry per scan step from the bottom-right corner)."""
    R, S, F = promote_args_inexact("_solve_sylvester_triangular_scan", R, S, F)  # noqa: N806
    m, n = F.shape
    total = m * n
    flat_indices = jnp.arange(total - 1, -1, -1)
    Y0 = jnp.zeros((m * n,), dtype=F.dtype)  # noqa: N806

    def scan_fn(y_flat: Array, idx: Array) -> tuple[Array, None]:
        i = idx // n
        j = idx % n
        Y = y_flat.reshape((m, n))  # noqa: N806
        rhs = F[i, j]
        row_term = jnp.sum(jnp.where(jnp.arange(m) > i, R[i, :] * Y[:, j], 0.0))
        col_term = jnp.sum(jnp.where(jnp.arange(n) > j, Y[i, :] * S[:, j], 0.0))
        rhs -= row_term + col_term
        val = rhs / (R[i, i] + S[j, j])
        return y_flat.at[i * n + j].set(val), None

    y_final, _ = lax.scan(scan_fn, Y0, flat_indices)
    return y_final.reshape((m, n))


@partial(jit, static_argnames=["method"])
def _solve_sylvester_2d(A: Array, B: Array, C: Array, *, method: str,  # noqa: N803
                        tol: float) -> Array:
    m, n = C.shape[-2:]
    if method == "schur":
        R, U = schur(A, output="complex")  # noqa: N806
        S, V = schur(B.conj().T, output="complex")  # noqa: N806
        F = U.conj().T @ C.astype(R.dtype) @ V  # noqa: N806
        Y = _solve_sylvester_triangular_scan(R, S.conj().T, F)  # noqa: N806
        X = U @ Y @ V.conj().T  # noqa: N806
    elif method == "eigen":
        RA, UA = jnp_linalg.eig(A)  # noqa: N806
        RB, UB = jnp_linalg.eig(B)  # noqa: N806
        F = solve(UA, C.astype(RA.dtype) @ UB)  # noqa: N806
        W = RA[:, None] + RB[None, :]  # noqa: N806
        Y = F / W  # noqa: N806
        X = UA[:m, :m] @ Y[:m, :n] @ inv(UB)[:n, :n]  # noqa: N806
    else:
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either '
                         f'"schur" or "eigen".')
    if not dtypes.issubdtype(C.dtype, np.complexfloating):
        X = X.real  # noqa: N806
    singular = jnp.any(jnp.abs(jnp_linalg.eigvals(A)[:, None] + jnp_linalg.eigvals(B)[None, :])
                       < tol)
    return lax.cond(singular, lambda: jnp.zeros_like(X) * np.nan, lambda: X)


@partial(jit, static_argnames=["method"])
def solve_sylvester(A: Array, B: Array, C: Array, *, method: str = "schur",  # noqa: N803
                    tol: float = 1e-8) -> Array:
    """X with A X + X B = C, by Bartels-Stewart on Schur forms ('schur') or by
    eigendecompositions ('eigen'); NaNs when some eigenvalue sum of A and B is within `tol`
    of zero."""
    A, B, C = promote_dtypes_inexact(jnp.asarray(A), jnp.asarray(B), jnp.asarray(C))  # noqa
    m, n = C.shape[-2:]
    if A.shape[-2:] != (m, m) or B.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {A.shape}\n"
                         f"B: {B.shape}\nC: {C.shape}")
    return vectorize(partial(_solve_sylvester_2d, method=method, tol=tol),
                     signature="(m,m),(n,n),(m,n)->(m,n)")(A, B, C)
