"""jax.scipy.sparse.linalg: the Krylov solvers cg, bicgstab and gmres for a linear operator
given as a matrix or a function on pytrees, each a while_loop inside lax.custom_linear_solve
(so they jit, and differentiate implicitly instead of through the iterations)."""
from __future__ import annotations

import operator
from functools import partial
from typing import Any, Callable

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.api import device_put
from pyjax._src.core import dtypes
from pyjax._src.core.array import Array
from pyjax._src.numpy.util import convert, type_of
from pyjax._src.scipy import linalg as jsp_linalg
from pyjax._src.tree_util import Partial, tree_leaves, tree_map, tree_reduce, tree_structure

_HIGHEST = lax.Precision.HIGHEST
_dot = partial(jnp.dot, precision=_HIGHEST)
_vdot = partial(jnp.vdot, precision=_HIGHEST)
_einsum = partial(jnp.einsum, precision=_HIGHEST)


def _lattice_type(tree: Any) -> tuple[np.dtype, bool]:
    """The promoted (dtype, weak type) of a pytree's leaves."""
    return dtypes.promote([type_of(leaf) for leaf in tree_leaves(tree)])


# ---------------------------------------------------------------------------------------------
# vector arithmetic on pytrees
# ---------------------------------------------------------------------------------------------

def _vdot_real_part(x: Any, y: Any) -> Any:
    """Re(x^H y), without forming complex products."""
    result = _vdot(x.real, y.real)
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        result += _vdot(x.imag, y.imag)
    return result


def _vdot_real_tree(x: Any, y: Any) -> Any:
    return sum(tree_leaves(tree_map(_vdot_real_part, x, y)))


def _vdot_tree(x: Any, y: Any) -> Any:
    return sum(tree_leaves(tree_map(_vdot, x, y)))


def _norm(x: Any) -> Any:
    xs = tree_leaves(x)
    return jnp.sqrt(sum(map(_vdot_real_part, xs, xs)))


def _mul(scalar: Any, tree: Any) -> Any:
    return tree_map(partial(operator.mul, scalar), tree)


_add = partial(tree_map, operator.add)
_sub = partial(tree_map, operator.sub)


@Partial
def _identity(x: Any) -> Any:
    return x


def _normalize_matvec(f: Any) -> Callable[[Any], Any]:
    """A function applying the operator f (a function, a square matrix or a matmul-able)."""
    if callable(f):
        return f
    if isinstance(f, (np.ndarray, Array)):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return partial(_dot, f)
    if hasattr(f, "__matmul__"):
        if hasattr(f, "shape") and len(f.shape) != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _shapes(pytree: Any) -> list[tuple[int, ...]]:
    return list(map(np.shape, tree_leaves(pytree)))


def _check_like_b(x0: Any, b: Any, shapes: bool) -> None:
    if tree_structure(x0) != tree_structure(b):
        raise ValueError("x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    if shapes and _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs "
                         f"{_shapes(b)}")


# ---------------------------------------------------------------------------------------------
# conjugate gradient and BiCGSTAB
# ---------------------------------------------------------------------------------------------

def _cg_solve(A: Callable, b: Any, x0: Any = None, *, maxiter: int, tol: float = 1e-5,
              atol: float = 0.0, M: Callable = _identity) -> Any:
    """Preconditioned conjugate gradients until |r|^2 <= max(tol^2 |b|^2, atol^2)."""
    bs = _vdot_real_tree(b, b)
    atol2 = jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))

    def cond_fun(value: tuple) -> Any:
        _, r, gamma, _, k = value
        rs = gamma.real if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body_fun(value: tuple) -> tuple:
        x, r, gamma, p, k = value
        Ap = A(p)
        alpha = gamma / _vdot_real_tree(p, Ap).astype(dtype)
        x_ = _add(x, _mul(alpha, p))
        r_ = _sub(r, _mul(alpha, Ap))
        z_ = M(r_)
        gamma_ = _vdot_real_tree(r_, z_).astype(dtype)
        beta_ = gamma_ / gamma
        p_ = _add(z_, _mul(beta_, p))
        return x_, r_, gamma_, p_, k + 1

    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = dtypes.result_type(*tree_leaves(p0))
    gamma0 = _vdot_real_tree(r0, z0).astype(dtype)
    x_final, *_ = lax.while_loop(cond_fun, body_fun, (x0, r0, gamma0, p0, 0))
    return x_final


def _bicgstab_solve(A: Callable, b: Any, x0: Any = None, *, maxiter: int, tol: float = 1e-5,
                    atol: float = 0.0, M: Callable = _identity) -> Any:
    """Preconditioned BiCGSTAB; the counter turns negative (-10, -11) on breakdown."""
    bs = _vdot_real_tree(b, b)
    atol2 = jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))

    def cond_fun(value: tuple) -> Any:
        x, r, *_, k = value
        rs = _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter) & (k >= 0)

    def body_fun(value: tuple) -> tuple:
        x, r, rhat, alpha, omega, rho, p, q, k = value
        rho_ = _vdot_tree(rhat, r)
        beta = rho_ / rho * alpha / omega
        p_ = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p_)
        q_ = A(phat)
        alpha_ = rho_ / _vdot_tree(rhat, q_)
        s = _sub(r, _mul(alpha_, q_))
        exit_early = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega_ = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_ = tree_map(partial(jnp.where, exit_early), _add(x, _mul(alpha_, phat)),
                      _add(x, _add(_mul(alpha_, phat), _mul(omega_, shat))))
        r_ = tree_map(partial(jnp.where, exit_early), s, _sub(s, _mul(omega_, t)))
        k_ = jnp.where((omega_ == 0) | (alpha_ == 0), -11, k + 1)
        k_ = jnp.where(rho_ == 0, -10, k_)
        return x_, r_, rhat, alpha_, omega_, rho_, p_, q_, k_

    r0 = _sub(b, A(x0))
    rho0 = alpha0 = omega0 = convert(1, *_lattice_type(b))
    initial_value = (x0, r0, r0, alpha0, omega0, rho0, r0, r0, 0)
    x_final, *_ = lax.while_loop(cond_fun, body_fun, initial_value)
    return x_final


def _isolve(_isolve_solve: Callable, A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5,
            atol: float = 0.0, maxiter: int | None = None, M: Any = None,
            check_symmetric: bool = False) -> tuple[Any, None]:
    """Run a CG-type solver inside custom_linear_solve (symmetric for cg on real data)."""
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    b, x0 = device_put((b, x0))
    if maxiter is None:
        maxiter = 10 * sum(bi.size for bi in tree_leaves(b))
    A = _normalize_matvec(A)
    M = _normalize_matvec(_identity if M is None else M)
    _check_like_b(x0, b, shapes=True)
    isolve_solve = partial(_isolve_solve, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    symmetric = check_symmetric and all(
        not issubclass(leaf.dtype.type, np.complexfloating) for leaf in tree_leaves(b))
    x = lax.custom_linear_solve(A, b, solve=isolve_solve, transpose_solve=isolve_solve,
                                symmetric=symmetric)
    return x, None


def cg(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
       maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """(x, None): the solution of A x = b by conjugate gradients (A Hermitian positive
    definite), to |b - A x| <= max(tol |b|, atol); M approximates inv(A)."""
    return _isolve(_cg_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                   check_symmetric=True)


def bicgstab(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
             maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """(x, None): the solution of A x = b by BiCGSTAB (any nonsingular A)."""
    return _isolve(_bicgstab_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)


# ---------------------------------------------------------------------------------------------
# GMRES
# ---------------------------------------------------------------------------------------------

def _safe_normalize(x: Any, thresh: Any = None) -> tuple[Any, Any]:
    """(x / |x|, |x|), or zeros and 0 where |x| <= thresh (default: machine epsilon)."""
    norm = _norm(x)
    dtype, weak_type = _lattice_type(x)
    if thresh is None:
        thresh = dtypes.finfo(norm.dtype).eps
    thresh = thresh.astype(dtype).real
    use_norm = norm > thresh
    norm_cast = convert(norm, dtype, weak_type)
    normalized_x = tree_map(lambda y: jnp.where(use_norm, y / norm_cast, 0.0), x)
    return normalized_x, jnp.where(use_norm, norm, 0.0)


def _project_on_columns(A: Any, v: Any) -> Any:
    """A^H v for a pytree of matrices A (one column per Krylov vector) and vectors v."""
    v_proj = tree_map(lambda X, y: _einsum("...n,...->n", X.conj(), y), A, v)
    return tree_reduce(operator.add, v_proj)


def _iterative_classical_gram_schmidt(Q: Any, x: Any, xnorm: Any,
                                      max_iterations: int = 2) -> tuple[Any, Any]:
    """x orthogonalized against Q's columns, and the projection coefficients; classical
    Gram-Schmidt repeated (at most max_iterations) while the result loses too much norm."""
    Q0 = tree_leaves(Q)[0]
    r = jnp.zeros(Q0.shape[-1], dtype=Q0.dtype)
    q = x
    xnorm_scaled = xnorm / jnp.sqrt(2.0)

    def body_function(carry: tuple) -> tuple:
        k, q, r, qnorm_scaled = carry
        h = _project_on_columns(Q, q)
        Qh = tree_map(lambda X: _dot(X, h), Q)
        q = _sub(q, Qh)
        r = _add(r, h)

        def qnorm_cond(carry: tuple) -> Any:
            k, not_done, _, _ = carry
            return jnp.logical_and(not_done, k < max_iterations - 1)

        def qnorm(carry: tuple) -> tuple:
            k, _, q, qnorm_scaled = carry
            _, qnorm = _safe_normalize(q)
            return k, False, q, qnorm / jnp.sqrt(2.0)

        _, _, q, qnorm_scaled = lax.while_loop(qnorm_cond, qnorm, (k, True, q, qnorm_scaled))
        return k + 1, q, r, qnorm_scaled

    def cond_function(carry: tuple) -> Any:
        k, _, r, qnorm_scaled = carry
        _, rnorm = _safe_normalize(r)
        return jnp.logical_and(k < max_iterations - 1, rnorm < qnorm_scaled)

    k, q, r, qnorm_scaled = body_function((0, q, r, xnorm_scaled))
    k, q, r, _ = lax.while_loop(cond_function, body_function, (k, q, r, qnorm_scaled))
    return q, r


def _kth_arnoldi_iteration(k: Any, A: Callable, M: Callable, V: Any,
                           H: Any) -> tuple[Any, Any, Any]:
    """Extend the Krylov basis V by the (k+1)-th vector and fill row k of the Hessenberg H;
    breakdown when the new vector vanishes."""
    dtype, _ = _lattice_type(V)
    eps = dtypes.finfo(dtype).eps
    v = tree_map(lambda x: x[..., k], V)
    v = M(A(v))
    _, v_norm_0 = _safe_normalize(v)
    v, h = _iterative_classical_gram_schmidt(V, v, v_norm_0, max_iterations=2)
    tol = eps * v_norm_0
    unit_v, v_norm_1 = _safe_normalize(v, thresh=tol)
    V = tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit_v)
    h = h.at[k + 1].set(v_norm_1.astype(dtype))
    H = H.at[k, :].set(h)
    return V, H, v_norm_1 == 0.0


def _rotate_vectors(H: Any, i: Any, cs: Any, sn: Any) -> Any:
    x1, y1 = H[i], H[i + 1]
    x2 = cs.conj() * x1 - sn.conj() * y1
    y2 = sn * x1 + cs * y1
    return H.at[i].set(x2).at[i + 1].set(y2)


def _givens_rotation(a: Any, b: Any) -> tuple[Any, Any]:
    """(cos, sin) of the rotation zeroing b against a."""
    b_zero = abs(b) == 0
    a_lt_b = abs(a) < abs(b)
    t = -jnp.where(a_lt_b, a, b) / jnp.where(a_lt_b, b, a)
    r = lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    cs = jnp.where(b_zero, 1, jnp.where(a_lt_b, r * t, r))
    sn = jnp.where(b_zero, 0, jnp.where(a_lt_b, r, r * t))
    return cs, sn


def _apply_givens_rotations(H_row: Any, givens: Any, k: Any) -> tuple[Any, Any]:
    """Row k of H through the previous k rotations, then a new one zeroing its subdiagonal."""
    R_row = lax.fori_loop(0, k, lambda i, row: _rotate_vectors(row, i, *givens[i, :]), H_row)
    givens_factors = _givens_rotation(R_row[k], R_row[k + 1])
    givens = givens.at[k, :].set(givens_factors)
    return _rotate_vectors(R_row, k, *givens_factors), givens


def _gmres_incremental(A: Callable, b: Any, x0: Any, unit_residual: Any, residual_norm: Any,
                       ptol: Any, restart: int, M: Callable) -> tuple[Any, Any, Any]:
    """One GMRES cycle updating a QR factorization of H by Givens rotations each step, so
    the residual is known as it goes and the cycle stops early below ptol."""
    V = tree_map(lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),
                 unit_residual)
    dtype = dtypes.result_type(*tree_leaves(b))
    R = jnp.eye(restart, restart + 1, dtype=dtype)  # the R factor, transposed
    givens = jnp.zeros((restart, 2), dtype=dtype)
    beta_vec = jnp.zeros(restart + 1, dtype=dtype)
    beta_vec = beta_vec.at[0].set(residual_norm.astype(dtype))

    def loop_cond(carry: tuple) -> Any:
        k, err, _, _, _, _ = carry
        return jnp.logical_and(k < restart, err > ptol)

    def arnoldi_qr_step(carry: tuple) -> tuple:
        k, _, V, R, beta_vec, givens = carry
        V, H, _ = _kth_arnoldi_iteration(k, A, M, V, R)
        R_row, givens = _apply_givens_rotations(H[k, :], givens, k)
        R = R.at[k, :].set(R_row)
        beta_vec = _rotate_vectors(beta_vec, k, *givens[k, :])
        return k + 1, abs(beta_vec[k + 1]), V, R, beta_vec, givens

    carry = lax.while_loop(loop_cond, arnoldi_qr_step,
                           (0, residual_norm, V, R, beta_vec, givens))
    _, residual_norm, V, R, beta_vec, _ = carry
    y = jsp_linalg.solve_triangular(R[:, :-1].T, beta_vec[:-1])
    dx = tree_map(lambda X: _dot(X[..., :-1], y), V)
    x = _add(x0, dx)
    residual = M(_sub(b, A(x)))
    unit_residual, residual_norm = _safe_normalize(residual)
    return x, unit_residual, residual_norm


def _lstsq(a: Any, b: Any) -> Any:
    """The least-squares solution through the normal equations (Cholesky)."""
    a2 = _dot(a.T.conj(), a)
    b2 = _dot(a.T.conj(), b)
    return jsp_linalg.solve(a2, b2, assume_a="pos")


def _gmres_batched(A: Callable, b: Any, x0: Any, unit_residual: Any, residual_norm: Any,
                   ptol: Any, restart: int, M: Callable) -> tuple[Any, Any, Any]:
    """One GMRES cycle: the whole Arnoldi process (until breakdown), then one least-squares
    solve of the Hessenberg system."""
    del ptol
    V = tree_map(lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),
                 unit_residual)
    dtype, weak_type = _lattice_type(b)
    H = convert(jnp.eye(restart, restart + 1, dtype=dtype), dtype, weak_type)

    def loop_cond(carry: tuple) -> Any:
        _, _, breakdown, k = carry
        return jnp.logical_and(k < restart, jnp.logical_not(breakdown))

    def arnoldi_process(carry: tuple) -> tuple:
        V, H, _, k = carry
        V, H, breakdown = _kth_arnoldi_iteration(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(loop_cond, arnoldi_process, (V, H, False, 0))
    beta_vec = jnp.zeros_like(H, shape=(restart + 1,)).at[0].set(residual_norm.astype(dtype))
    y = _lstsq(H.T, beta_vec)
    dx = tree_map(lambda X: _dot(X[..., :-1], y), V)
    x = _add(x0, dx)
    residual = M(_sub(b, A(x)))
    unit_residual, residual_norm = _safe_normalize(residual)
    return x, unit_residual, residual_norm


def _gmres_solve(A: Callable, b: Any, x0: Any, atol: Any, ptol: Any, restart: int,
                 maxiter: int, M: Callable, gmres_func: Callable) -> Any:
    """Restarted GMRES: cycles of `gmres_func` until the residual is below atol."""
    residual = M(_sub(b, A(x0)))
    unit_residual, residual_norm = _safe_normalize(residual)

    def cond_fun(value: tuple) -> Any:
        _, k, _, residual_norm = value
        return jnp.logical_and(k < maxiter, residual_norm > atol)

    def body_fun(value: tuple) -> tuple:
        x, k, unit_residual, residual_norm = value
        x, unit_residual, residual_norm = gmres_func(A, b, x, unit_residual, residual_norm,
                                                     ptol, restart, M)
        return x, k + 1, unit_residual, residual_norm

    x_final, *_ = lax.while_loop(cond_fun, body_fun, (x0, 0, unit_residual, residual_norm))
    return x_final


def gmres(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
          restart: int = 20, maxiter: int | None = None, M: Any = None,
          solve_method: str = "batched") -> tuple[Any, Any]:
    """(x, info): the solution of A x = b by restarted GMRES (Krylov spaces of size
    `restart`, at most `maxiter` cycles); info is -1 when x has NaNs, else 0.
    solve_method 'batched' solves the least-squares problem once per cycle, 'incremental'
    updates it by Givens rotations and may stop a cycle early."""
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    if M is None:
        M = _identity
    A = _normalize_matvec(A)
    M = _normalize_matvec(M)
    b, x0 = device_put((b, x0))
    size = sum(bi.size for bi in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size  # the default in SciPy
    restart = min(restart, size)
    _check_like_b(x0, b, shapes=False)
    b_norm = _norm(b)
    atol = jnp.maximum(tol * b_norm, atol)
    Mb_norm = _norm(M(b))
    ptol = Mb_norm * jnp.minimum(1.0, atol / b_norm)
    if solve_method == "incremental":
        gmres_func = _gmres_incremental
    elif solve_method == "batched":
        gmres_func = _gmres_batched
    else:
        raise ValueError(f"invalid solve_method {solve_method}, must be either 'incremental' "
                         "or 'batched'")

    def _solve(A: Callable, b: Any) -> Any:
        return _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, gmres_func)

    x = lax.custom_linear_solve(A, b, solve=_solve, transpose_solve=_solve)
    failed = jnp.isnan(_norm(x))
    return x, jnp.where(failed, -1, 0)
