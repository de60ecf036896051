"""jax.scipy.optimize.minimize: SciPy's interface over the BFGS (and experimental L-BFGS)
minimizers, jit-able; gradients come from autodiff."""
from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

import pyjax.numpy as jnp
from pyjax._src.scipy.optimize.bfgs import minimize_bfgs
from pyjax._src.scipy.optimize.lbfgs import _minimize_lbfgs

Array = Any


class OptimizeResults(NamedTuple):
    """x: the solution; success: converged without a failed line search; status: 0 converged,
    1 max BFGS iterations, 3 zoom failed, 4 saddle point, 5 max line-search iterations, -1
    undefined; fun, jac: the value and gradient at x; hess_inv: the inverse-Hessian estimate
    (None for L-BFGS); nfev, njev: function and gradient evaluations; nit: iterations."""
    x: Array
    success: Any
    status: Any
    fun: Array
    jac: Array
    hess_inv: Array | None
    nfev: Any
    njev: Any
    nit: Any


def minimize(fun: Callable, x0: Array, args: tuple = (), *, method: str,
             tol: float | None = None, options: Mapping[str, Any] | None = None
             ) -> OptimizeResults:
    """Minimize fun(x, *args) over 1-D x from x0 with method 'BFGS' (or
    'l-bfgs-experimental-do-not-rely-on-this'); `options` go to the solver (maxiter, gtol,
    norm, line_search_maxiter, ...); `tol` is accepted and unused, as in JAX."""
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(
            f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")

    def fun_with_args(x: Array) -> Array:
        return fun(x, *args)

    if method.lower() == "bfgs":
        results = minimize_bfgs(fun_with_args, x0, **options)
        success = results.converged & jnp.logical_not(results.failed)
        return OptimizeResults(x=results.x_k, success=success, status=results.status,
                               fun=results.f_k, jac=results.g_k, hess_inv=results.H_k,
                               nfev=results.nfev, njev=results.ngev, nit=results.k)
    if method.lower() == "l-bfgs-experimental-do-not-rely-on-this":
        results = _minimize_lbfgs(fun_with_args, x0, **options)
        success = results.converged & jnp.logical_not(results.failed)
        return OptimizeResults(x=results.x_k, success=success, status=results.status,
                               fun=results.f_k, jac=results.g_k, hess_inv=None,
                               nfev=results.nfev, njev=results.ngev, nit=results.k)
    raise ValueError(f"Method {method} not recognized")
