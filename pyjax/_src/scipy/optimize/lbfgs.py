"""Limited-memory BFGS (Wright and Nocedal, 'Numerical Optimization', 1999, algorithm 7.5;
complex variables after Sorber, Van Barel and De Lathauwer 2012), as JAX 0.10.2's experimental
'l-bfgs-experimental-do-not-rely-on-this' method runs it."""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, NamedTuple

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.numpy import linalg as jnp_linalg
from pyjax._src.scipy.optimize.line_search import line_search
from pyjax._src.transforms.ad_api import value_and_grad

Array = Any

_dot = partial(jnp.dot, precision=lax.Precision.HIGHEST)


class LBFGSResults(NamedTuple):
    """converged: |g_k| < gtol; failed: stopped with a non-zero status before converging; k:
    iterations; nfev, ngev: evaluations; x_k, f_k, g_k: the last point, value and gradient;
    s/y/rho_history: the last maxcor steps, gradient changes and 1/(y.s); gamma: the initial
    inverse-Hessian scale; status: 0 nominal, 1 maxiter, 2 maxfun, 3 maxgrad, 4 progress below
    ftol, 5 line search failed; ls_status: the last line search's status."""
    converged: Array
    failed: Array
    k: Any
    nfev: Any
    ngev: Any
    x_k: Array
    f_k: Array
    g_k: Array
    s_history: Array
    y_history: Array
    rho_history: Array
    gamma: Any
    status: Any
    ls_status: Any


def _minimize_lbfgs(fun: Callable, x0: Array, maxiter: float | None = None, norm: Any = np.inf,
                    maxcor: int = 10, ftol: float = 2.220446049250313e-09, gtol: float = 1e-05,
                    maxfun: float | None = None, maxgrad: float | None = None, maxls: int = 20
                    ) -> LBFGSResults:
    """Minimize fun from x0 with a history of maxcor corrections, stopping on |g| < gtol, on a
    decrease below ftol, or on the maxiter / maxfun / maxgrad limits (maxiter defaults to 200 n
    when none is given)."""
    d = len(x0)
    dtype = dtypes.dtype_and_weak(x0)[0]
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    maxiter = np.inf if maxiter is None else maxiter
    maxfun = np.inf if maxfun is None else maxfun
    maxgrad = np.inf if maxgrad is None else maxgrad

    f_0, g_0 = value_and_grad(fun)(x0)
    state_initial = LBFGSResults(
        converged=jnp.array(False, dtype=bool), failed=jnp.array(False, dtype=bool), k=0,
        nfev=1, ngev=1, x_k=x0, f_k=f_0, g_k=g_0, s_history=jnp.zeros((maxcor, d), dtype=dtype),
        y_history=jnp.zeros((maxcor, d), dtype=dtype),
        rho_history=jnp.zeros((maxcor,), dtype=dtype), gamma=1., status=0, ls_status=0)

    def cond_fun(state: LBFGSResults) -> Array:
        return (~state.converged) & (~state.failed)

    def body_fun(state: LBFGSResults) -> LBFGSResults:
        p_k = _two_loop_recursion(state)
        ls = line_search(f=fun, xk=state.x_k, pk=p_k, old_fval=state.f_k, gfk=state.g_k,
                         maxiter=maxls)
        s_k = jnp.asarray(ls.a_k).astype(p_k.dtype) * p_k
        x_kp1 = state.x_k + s_k
        f_kp1 = ls.f_k
        g_kp1 = ls.g_k
        y_k = g_kp1 - state.g_k
        rho_k_inv = jnp.real(_dot(y_k, s_k))
        rho_k = jnp.reciprocal(rho_k_inv).astype(y_k.dtype)
        gamma = rho_k_inv / jnp.real(_dot(jnp.conj(y_k), y_k))

        status = jnp.array(0)
        status = jnp.where(state.f_k - f_kp1 < ftol, 4, status)
        status = jnp.where(state.ngev >= maxgrad, 3, status)
        status = jnp.where(state.nfev >= maxfun, 2, status)
        status = jnp.where(state.k >= maxiter, 1, status)
        status = jnp.where(ls.failed, 5, status)
        converged = jnp_linalg.norm(g_kp1, ord=norm) < gtol
        return state._replace(
            converged=converged, failed=(status > 0) & (~converged), k=state.k + 1,
            nfev=state.nfev + ls.nfev, ngev=state.ngev + ls.ngev,
            x_k=x_kp1.astype(state.x_k.dtype), f_k=f_kp1.astype(state.f_k.dtype),
            g_k=g_kp1.astype(state.g_k.dtype),
            s_history=_update_history_vectors(history=state.s_history, new=s_k),
            y_history=_update_history_vectors(history=state.y_history, new=y_k),
            rho_history=_update_history_scalars(history=state.rho_history, new=rho_k),
            gamma=gamma.astype(state.g_k.dtype), status=jnp.where(converged, 0, status),
            ls_status=ls.status)

    return lax.while_loop(cond_fun, body_fun, state_initial)


def _two_loop_recursion(state: LBFGSResults) -> Array:
    """The search direction -H g, H the L-BFGS inverse Hessian of the stored history."""
    dtype = state.rho_history.dtype
    his_size = len(state.rho_history)
    curr_size = jnp.where(state.k < his_size, state.k, his_size)
    q = -jnp.conj(state.g_k)
    a_his = jnp.zeros_like(state.rho_history)

    def body_fun1(j: Array, carry: tuple) -> tuple:
        i = his_size - 1 - j
        _q, _a_his = carry
        a_i = state.rho_history[i] * _dot(jnp.conj(state.s_history[i]), _q).real.astype(dtype)
        _a_his = _a_his.at[i].set(a_i)
        _q = _q - a_i * jnp.conj(state.y_history[i])
        return _q, _a_his

    q, a_his = lax.fori_loop(0, curr_size, body_fun1, (q, a_his))
    q = state.gamma * q

    def body_fun2(j: Array, _q: Array) -> Array:
        i = his_size - curr_size + j
        b_i = state.rho_history[i] * _dot(state.y_history[i], _q).real.astype(dtype)
        return _q + (a_his[i] - b_i) * state.s_history[i]

    return lax.fori_loop(0, curr_size, body_fun2, q)


def _update_history_vectors(history: Array, new: Array) -> Array:
    return jnp.roll(history, -1, axis=0).at[-1, :].set(new)


def _update_history_scalars(history: Array, new: Array) -> Array:
    return jnp.roll(history, -1, axis=0).at[-1].set(new)
