"""jax.scipy.linalg.eigh_tridiagonal as JAX 0.10.2 computes it: eigenvalues by parallel
bisection on Sturm-sequence counts (as LAPACK's xSTEBZ), eigenvectors by inverse iteration
from random starts (as xSTEIN), with clusters of close eigenvalues re-orthogonalized by QR."""
from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax import random
from pyjax._src.core import dtypes
from pyjax._src.numpy import linalg as jnp_linalg
from pyjax._src.primitives import linalg as lax_linalg
from pyjax._src.transforms.jit import jit

Array = Any

#: Sturm steps per iteration of the partially unrolled loop
_BLOCKSIZE = 16
#: widening of the Gershgorin interval the bisection starts from
_FUDGE = 2.1
#: inverse-iteration limits (LAPACK xSTEIN): steps, and the norm growth that means "converged"
_MAX_INVERSE_ITERATIONS = 5
_MIN_NORM_GROWTH = 0.1


def _sturm(alpha: Array, beta_sq: Array, pivmin: Array, alpha0_perturbation: Array,
           x: Array) -> Array:
    """For each shift x, the number of eigenvalues of T below x (negative pivots of T - x)."""
    n = alpha.shape[0]
    zeros = jnp.zeros(x.shape, dtype=np.int32)
    ones = jnp.ones(x.shape, dtype=np.int32)

    def step0() -> tuple[Array, Array]:  # x == alpha[0] needs a perturbed first pivot
        q = alpha[0] - x
        count = jnp.where(q < 0, ones, zeros)
        q = jnp.where(alpha[0] == x, alpha0_perturbation, q)
        return q, count

    def step(i: Any, q: Array, count: Array) -> tuple[Array, Array]:
        q = alpha[i] - beta_sq[i - 1] / q - x
        count = jnp.where(q <= pivmin, count + 1, count)
        q = jnp.where(q <= pivmin, jnp.minimum(q, -pivmin), q)
        return q, count

    q, count = step0()
    unroll = [(n - 1) % _BLOCKSIZE]  # the first call peels the remainder steps off

    def unrolled_steps(args: tuple) -> tuple:
        start, q, count = args
        for j in range(unroll[0]):
            q, count = step(start + j, q, count)
        return start + unroll[0], q, count

    i, q, count = unrolled_steps((1, q, count))
    unroll[0] = _BLOCKSIZE
    _, _, count = lax.while_loop(lambda iqc: jnp.less(iqc[0], n), unrolled_steps,
                                 (i, q, count))
    return count


def _orthogonalize_clusters(ev: Array, starts: Array, ends: Array, num_clusters: Array
                            ) -> Array:
    """Rows of ev within each cluster [start, end) replaced by an orthonormal basis of
    their span (a QR of the masked block)."""
    k, n = ev.shape
    arange_k = jnp.arange(k)

    def cluster(i: Array, ev: Array) -> Array:
        start = starts[i]
        end = ends[i]
        c = end - start
        ev_padded = jnp.pad(ev, ((0, k), (0, 0)))
        v_block = lax.dynamic_slice(ev_padded, (start, 0), (k, n))
        mask = (arange_k < c).astype(ev.dtype)
        q, _ = jnp_linalg.qr((v_block * mask[:, None]).T)
        qt_masked = q.T * mask[:, None]
        big_zeros = jnp.zeros((2 * k, n), dtype=ev.dtype)
        update_full = lax.dynamic_update_slice(big_zeros, qt_masked, (start, 0))[:k, :]
        in_cluster = (arange_k >= start) & (arange_k < end)
        return jnp.where(in_cluster[:, None], update_full, ev)

    return lax.fori_loop(0, num_clusters, cluster, ev)


def _compute_eigenvectors(alpha: Array, beta: Array, eigvals: Array, key: Array) -> Array:
    """Eigenvectors (rows) for sorted eigvals by inverse iteration on T - lambda I."""
    n = alpha.shape[0]
    k = eigvals.shape[0]
    dl = jnp.pad(jnp.conj(beta), (1, 0))
    du = jnp.pad(beta, (0, 1))
    # runs of eigenvalues closer than sqrt(eps) |T| have no unique eigenvectors
    gap = eigvals[1:] - eigvals[:-1]
    eps = np.finfo(eigvals.dtype).eps
    t_norm = jnp.maximum(jnp.abs(eigvals[0]), jnp.abs(eigvals[-1]))
    gaptol = jnp.sqrt(eps) * t_norm
    close = gap < gaptol
    left_close = jnp.pad(close, (1, 0), constant_values=False)
    right_close = jnp.pad(close, (0, 1), constant_values=False)
    interval_start = jnp.logical_and(jnp.logical_not(left_close), right_close)
    interval_end = jnp.logical_and(left_close, jnp.logical_not(right_close))
    max_clusters = k // 2 + 1
    starts = jnp.nonzero(interval_start, size=max_clusters)[0]
    ends = jnp.nonzero(interval_end, size=max_clusters)[0] + 1
    num_clusters = jnp.sum(interval_start)

    solve_dtype = np.result_type(alpha.dtype, beta.dtype)
    base_dtype = np.finfo(solve_dtype).dtype
    v = random.normal(key, (k, n), dtype=base_dtype).astype(solve_dtype)
    v = v / jnp.linalg.norm(v, axis=-1, keepdims=True).astype(solve_dtype)
    alpha_shifted = alpha[None, :] - eigvals[:, None]
    dl_batched = jnp.broadcast_to(dl[None, :], (k, n))
    du_batched = jnp.broadcast_to(du[None, :], (k, n))

    def step(state: tuple) -> tuple:
        i, v, nrm_v, _ = state
        v_new = lax_linalg.tridiagonal_solve(
            dl_batched.astype(solve_dtype), alpha_shifted.astype(solve_dtype),
            du_batched.astype(solve_dtype), v[:, :, None].astype(solve_dtype),
            perturb_singular=True)
        v_new = jnp.squeeze(v_new, axis=-1)
        nrm_v_new = jnp.linalg.norm(v_new, axis=-1, keepdims=True)
        v_new = v_new / nrm_v_new.astype(v_new.dtype)
        nrm_v_new = jnp.squeeze(nrm_v_new, axis=-1)
        v_new = _orthogonalize_clusters(v_new, starts, ends, num_clusters)
        return i + 1, v_new, nrm_v_new, nrm_v

    def keep_going(state: tuple) -> Array:
        i, _, nrm_v, nrm_v_old = state
        return jnp.logical_and(i < _MAX_INVERSE_ITERATIONS,
                               jnp.any(nrm_v >= (1 + _MIN_NORM_GROWTH) * nrm_v_old))

    _, v_final, _, _ = lax.while_loop(
        keep_going, step,
        (0, v, jnp.ones(k, dtype=eigvals.dtype), jnp.zeros(k, dtype=eigvals.dtype)))
    return v_final


@partial(jit, static_argnames=("eigvals_only", "select", "select_range"))
def eigh_tridiagonal(d: Array, e: Array, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None, tol: float | None = None,
                     key: Array | None = None) -> Any:
    """Eigenvalues (ascending) of the symmetric tridiagonal matrix with diagonal d and
    off-diagonal e (all, or indices select_range with select='i'), and unless
    `eigvals_only` the eigenvectors (columns; random starts from `key`, default key(42))."""
    if not eigvals_only and key is None:
        key = random.key(42)
    alpha = jnp.asarray(d)
    beta = jnp.asarray(e)
    supported_dtypes = (np.float32, np.float64, np.complex64, np.complex128)
    if alpha.dtype != beta.dtype:
        raise TypeError("diagonal and off-diagonal values must have same dtype, "
                        f"got {alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in supported_dtypes or beta.dtype not in supported_dtypes:
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        "jax.scipy.linalg.eigh_tridiagonal, got "
                        f"{alpha.dtype} and {beta.dtype}")
    n = alpha.shape[0]
    if n <= 1:
        if eigvals_only:
            return jnp.real(alpha)
        return jnp.real(alpha), jnp.eye(n, dtype=alpha.dtype)

    if dtypes.issubdtype(alpha.dtype, np.complexfloating):
        alpha = jnp.real(alpha)
        beta_sq = jnp.real(beta * jnp.conj(beta))
        beta_abs = jnp.sqrt(beta_sq)
    else:
        beta_abs = jnp.abs(beta)
        beta_sq = jnp.square(beta)

    # Gershgorin bounds on the spectrum
    off_diag_abs_row_sum = jnp.concatenate(
        [beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]], axis=0)
    lambda_est_max = jnp.amax(alpha + off_diag_abs_row_sum)
    lambda_est_min = jnp.amin(alpha - off_diag_abs_row_sum)
    t_norm = jnp.maximum(jnp.abs(lambda_est_min), jnp.abs(lambda_est_max))

    # the smallest pivot allowed in the Sturm recurrence (no overflow)
    finfo = np.finfo(alpha.dtype)
    one = np.ones([], dtype=alpha.dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * jnp.maximum(1, jnp.amax(beta_sq))
    alpha0_perturbation = jnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = jnp.maximum(tol, abs_tol)
    max_it = finfo.nmant + 1  # one bisection step per mantissa bit, plus one

    if select == "a":
        target_counts = jnp.arange(n, dtype=np.int32)
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        target_counts = jnp.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")

    norm_slack = jnp.array(n, alpha.dtype) * _FUDGE * finfo.eps * t_norm
    lower = lambda_est_min - norm_slack - 2 * _FUDGE * pivmin
    upper = lambda_est_max + norm_slack + _FUDGE * pivmin
    target_shape = np.shape(target_counts)
    lower = jnp.broadcast_to(lower, shape=target_shape)
    upper = jnp.broadcast_to(upper, shape=target_shape)
    mid = 0.5 * (upper + lower)
    pivmin = jnp.broadcast_to(pivmin, target_shape)
    alpha0_perturbation = jnp.broadcast_to(alpha0_perturbation, target_shape)

    def cond(args: tuple) -> Array:
        i, lower, _, upper = args
        return jnp.logical_and(jnp.less(i, max_it), jnp.less(abs_tol, jnp.amax(upper - lower)))

    def body(args: tuple) -> tuple:
        i, lower, mid, upper = args
        counts = _sturm(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        lower = jnp.where(counts <= target_counts, mid, lower)
        upper = jnp.where(counts > target_counts, mid, upper)
        mid = 0.5 * (lower + upper)
        return i + 1, lower, mid, upper

    _, _, mid, _ = lax.while_loop(cond, body, (0, lower, mid, upper))
    if eigvals_only:
        return mid
    return mid, _compute_eigenvectors(alpha, beta, mid, key).T
