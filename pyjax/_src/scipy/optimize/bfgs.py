"""The Broyden-Fletcher-Goldfarb-Shanno minimizer (Wright and Nocedal, 'Numerical
Optimization', 1999, algorithm 6.1) as JAX 0.10.2 runs it: one while_loop whose body takes a
strong-Wolfe line search and a rank-two update of the inverse Hessian."""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, NamedTuple

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.numpy import linalg as jnp_linalg
from pyjax._src.scipy.optimize.line_search import line_search
from pyjax._src.transforms.ad_api import value_and_grad

Array = Any


class _BFGSResults(NamedTuple):
    """converged: |g_k| < gtol; failed: the line search failed; k: iterations; nfev, ngev,
    nhev: function, gradient and Hessian evaluations; x_k, f_k, g_k: the last point, its value
    and gradient; H_k: the inverse-Hessian estimate; old_old_fval: the value one step before;
    status: 0 converged, 1 maxiter reached, 2 + the line search's status when it failed, -1
    otherwise; line_search_status: the last line search's status."""
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Array
    f_k: Array
    g_k: Array
    H_k: Array
    old_old_fval: Array
    status: Any
    line_search_status: Any


_dot = partial(jnp.dot, precision=lax.Precision.HIGHEST)
_einsum = partial(jnp.einsum, precision=lax.Precision.HIGHEST)


def minimize_bfgs(fun: Callable, x0: Array, maxiter: int | None = None, norm: Any = np.inf,
                  gtol: float = 1e-5, line_search_maxiter: int = 10) -> _BFGSResults:
    """Minimize fun (flat x -> real scalar) from x0 until the `norm` of the gradient is below
    gtol or maxiter (default 200 n) iterations have run."""
    if maxiter is None:
        maxiter = np.size(x0) * 200
    d = x0.shape[0]
    initial_H = jnp.eye(d, dtype=x0.dtype)  # noqa: N806
    f_0, g_0 = value_and_grad(fun)(x0)
    state = _BFGSResults(
        converged=jnp_linalg.norm(g_0, ord=norm) < gtol, failed=False, k=0, nfev=1, ngev=1,
        nhev=0, x_k=x0, f_k=f_0, g_k=g_0, H_k=initial_H,
        old_old_fval=f_0 + jnp_linalg.norm(g_0) / 2, status=0, line_search_status=0)

    def cond_fun(state: _BFGSResults) -> Array:
        return (jnp.logical_not(state.converged) & jnp.logical_not(state.failed)
                & (state.k < maxiter))

    def body_fun(state: _BFGSResults) -> _BFGSResults:
        p_k = -_dot(state.H_k, state.g_k)
        ls = line_search(fun, state.x_k, p_k, old_fval=state.f_k,
                         old_old_fval=state.old_old_fval, gfk=state.g_k,
                         maxiter=line_search_maxiter)
        state = state._replace(nfev=state.nfev + ls.nfev, ngev=state.ngev + ls.ngev,
                               failed=ls.failed, line_search_status=ls.status)
        s_k = ls.a_k * p_k
        x_kp1 = state.x_k + s_k
        f_kp1 = ls.f_k
        g_kp1 = ls.g_k
        y_k = g_kp1 - state.g_k
        rho_k = jnp.reciprocal(_dot(y_k, s_k))
        sy_k = s_k[:, np.newaxis] * y_k[np.newaxis, :]
        w = jnp.eye(d, dtype=rho_k.dtype) - rho_k * sy_k
        H_kp1 = (_einsum("ij,jk,lk", w, state.H_k, w)  # noqa: N806
                 + rho_k * s_k[:, np.newaxis] * s_k[np.newaxis, :])
        H_kp1 = jnp.where(jnp.isfinite(rho_k), H_kp1, state.H_k)  # noqa: N806
        converged = jnp_linalg.norm(g_kp1, ord=norm) < gtol
        return state._replace(converged=converged, k=state.k + 1, x_k=x_kp1, f_k=f_kp1,
                              g_k=g_kp1, H_k=H_kp1, old_old_fval=state.f_k)

    state = lax.while_loop(cond_fun, body_fun, state)
    status = jnp.where(state.converged, 0,
                       jnp.where(state.k == maxiter, 1,
                                 jnp.where(state.failed, 2 + state.line_search_status, -1)))
    return state._replace(status=status)
