"""Inexact line search satisfying the strong Wolfe conditions (Wright and Nocedal,
'Numerical Optimization', 1999, algorithms 3.5 and 3.6), written with while_loops and
branch-free updates as JAX 0.10.2 writes it, so that it runs under jit."""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, NamedTuple

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.numpy.util import promote_dtypes_inexact
from pyjax._src.transforms.ad_api import value_and_grad

Array = Any

_dot = partial(jnp.dot, precision=lax.Precision.HIGHEST)

#: zoom's interpolation safeguards: a cubic (quadratic) step must stay this fraction of the
#: interval away from its ends
_DELTA_CUBIC = 0.2
_DELTA_QUAD = 0.1
#: zoom gives up after this many steps (more than SciPy's 10)
_ZOOM_MAXITER = 30


def _cubicmin(a: Array, fa: Array, fpa: Array, b: Array, fb: Array, c: Array, fc: Array
              ) -> Array:
    """The minimizer of the cubic through (a, fa), (b, fb), (c, fc) with slope fpa at a."""
    dtype = dtypes.result_type(a, fa, fpa, b, fb, c, fc)
    C = fpa  # noqa: N806
    db = b - a
    dc = c - a
    denom = (db * dc) ** 2 * (db - dc)
    d1 = jnp.array([[dc ** 2, -db ** 2], [-dc ** 3, db ** 3]], dtype=dtype)
    d2 = jnp.array([fb - fa - C * db, fc - fa - C * dc], dtype=dtype)
    A, B = _dot(d1, d2) / denom  # noqa: N806
    radical = B * B - 3. * A * C
    return a + (-B + jnp.sqrt(radical)) / (3. * A)


def _quadmin(a: Array, fa: Array, fpa: Array, b: Array, fb: Array) -> Array:
    """The minimizer of the parabola through (a, fa), (b, fb) with slope fpa at a."""
    D = fa  # noqa: N806
    C = fpa  # noqa: N806
    db = b - a
    B = (fb - D - C * db) / (db ** 2)  # noqa: N806
    return a - C / (2. * B)


def _binary_replace(replace_bit: Array, original_dict: dict, new_dict: dict,
                    keys: Any = None) -> dict:
    """new_dict's entries where replace_bit holds, original_dict's elsewhere."""
    if keys is None:
        keys = new_dict.keys()
    return {key: jnp.where(replace_bit, new_dict[key], original_dict[key]) for key in keys}


class _ZoomState(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


def _zoom(restricted_func_and_grad: Callable, wolfe_one: Callable, wolfe_two: Callable,
          a_lo: Array, phi_lo: Array, dphi_lo: Array, a_hi: Array, phi_hi: Array,
          dphi_hi: Array, g_0: Array, pass_through: Array) -> _ZoomState:
    """Shrink [a_lo, a_hi] to a step satisfying both Wolfe conditions, trying cubic, then
    quadratic interpolation, then bisection (skipped entirely when pass_through)."""
    state = _ZoomState(
        done=False, failed=False, j=0, a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo, a_hi=a_hi,
        phi_hi=phi_hi, dphi_hi=dphi_hi, a_rec=(a_lo + a_hi) / 2., phi_rec=(phi_lo + phi_hi) / 2.,
        a_star=1., phi_star=phi_lo, dphi_star=dphi_lo, g_star=g_0, nfev=0, ngev=0)

    def body(state: _ZoomState) -> _ZoomState:
        dalpha = state.a_hi - state.a_lo
        a = jnp.minimum(state.a_hi, state.a_lo)
        b = jnp.maximum(state.a_hi, state.a_lo)
        cchk = _DELTA_CUBIC * dalpha
        qchk = _DELTA_QUAD * dalpha
        # an interval this small stops the search (and the minimization with it)
        threshold = jnp.where((dtypes.finfo(dalpha.dtype).bits < 64), 1e-5, 1e-10)
        state = state._replace(failed=state.failed | (dalpha <= threshold))

        a_j_cubic = _cubicmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi,
                              state.phi_hi, state.a_rec, state.phi_rec)
        use_cubic = (state.j > 0) & (a_j_cubic > a + cchk) & (a_j_cubic < b - cchk)
        a_j_quad = _quadmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi)
        use_quad = (~use_cubic) & (a_j_quad > a + qchk) & (a_j_quad < b - qchk)
        a_j_bisection = (state.a_lo + state.a_hi) / 2.
        use_bisection = (~use_cubic) & (~use_quad)

        a_j = jnp.where(use_cubic, a_j_cubic, state.a_rec)
        a_j = jnp.where(use_quad, a_j_quad, a_j)
        a_j = jnp.where(use_bisection, a_j_bisection, a_j)

        phi_j, dphi_j, g_j = restricted_func_and_grad(a_j)
        phi_j = phi_j.astype(state.phi_lo.dtype)
        dphi_j = dphi_j.astype(state.dphi_lo.dtype)
        g_j = g_j.astype(state.g_star.dtype)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= state.phi_lo)
        star_to_j = wolfe_two(dphi_j) & (~hi_to_j)
        hi_to_lo = (dphi_j * (state.a_hi - state.a_lo) >= 0.) & (~hi_to_j) & (~star_to_j)
        lo_to_j = (~hi_to_j) & (~star_to_j)

        state = state._replace(**_binary_replace(
            hi_to_j, state._asdict(),
            dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=state.a_hi,
                 phi_rec=state.phi_hi)))
        state = state._replace(done=star_to_j | state.done, **_binary_replace(
            star_to_j, state._asdict(),
            dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j)))
        state = state._replace(**_binary_replace(
            hi_to_lo, state._asdict(),
            dict(a_hi=state.a_lo, phi_hi=state.phi_lo, dphi_hi=state.dphi_lo,
                 a_rec=state.a_hi, phi_rec=state.phi_hi)))
        state = state._replace(**_binary_replace(
            lo_to_j & ~hi_to_lo, state._asdict(), dict(a_rec=state.a_lo, phi_rec=state.phi_lo)))
        state = state._replace(**_binary_replace(
            lo_to_j, state._asdict(), dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)))
        state = state._replace(j=state.j + 1)
        return state._replace(failed=state.failed | (state.j >= _ZOOM_MAXITER))

    return lax.while_loop(lambda state: (~state.done) & (~pass_through) & (~state.failed),
                          body, state)


class _LineSearchState(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_i1: Any
    phi_i1: Any
    dphi_i1: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


class _LineSearchResults(NamedTuple):
    """failed: the strong Wolfe conditions were not met; nit: iterations; nfev, ngev: function
    and gradient evaluations; k: the final iteration counter; a_k: the step; f_k, g_k: the
    value and gradient there; status: 0 passed, 1 zoom failed, 3 maxiter reached."""
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def line_search(f: Callable, xk: Array, pk: Array, old_fval: Array | None = None,
                old_old_fval: Array | None = None, gfk: Array | None = None, c1: float = 1e-4,
                c2: float = 0.9, maxiter: int = 20) -> _LineSearchResults:
    """A step along descent direction pk from xk meeting the strong Wolfe conditions (c1, c2),
    doubling the trial step until the minimum is bracketed, then zooming; old_fval and gfk
    (f and its gradient at xk) save an evaluation, old_old_fval sets the first trial step."""
    xk, pk = promote_dtypes_inexact(xk, pk)

    def restricted_func_and_grad(t: Any) -> tuple[Array, Array, Array]:
        t = jnp.array(t, dtype=pk.dtype)
        phi, g = value_and_grad(f)(xk + t * pk)
        dphi = jnp.real(_dot(g, pk))
        return phi, dphi, g

    if old_fval is None or gfk is None:
        phi_0, dphi_0, gfk = restricted_func_and_grad(0)
    else:
        phi_0 = old_fval
        dphi_0 = jnp.real(_dot(gfk, pk))
    if old_old_fval is not None:
        candidate_start_value = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start_value = jnp.where(candidate_start_value > 1, 1.0, candidate_start_value)
    else:
        start_value = 1

    def wolfe_one(a_i: Array, phi_i: Array) -> Array:  # sufficient decrease fails
        return phi_i > phi_0 + c1 * a_i * dphi_0

    def wolfe_two(dphi_i: Array) -> Array:  # curvature condition holds
        return jnp.abs(dphi_i) <= -c2 * dphi_0

    evaluated = 1 if (old_fval is None or gfk is None) else 0
    # Wright and Nocedal count from 1 (SciPy from 0: scipy/scipy#12157)
    state = _LineSearchState(
        done=jnp.array(False, dtype=bool), failed=jnp.array(False, dtype=bool), i=1, a_i1=0.,
        phi_i1=phi_0, dphi_i1=dphi_0, nfev=evaluated, ngev=evaluated, a_star=0.,
        phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)

    def body(state: _LineSearchState) -> _LineSearchState:
        a_i = jnp.where(state.i == 1, start_value, state.a_i1 * 2.)
        phi_i, dphi_i, g_i = restricted_func_and_grad(a_i)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

        star_to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= state.phi_i1) & (state.i > 1))
        star_to_i = wolfe_two(dphi_i) & (~star_to_zoom1)
        star_to_zoom2 = (dphi_i >= 0.) & (~star_to_zoom1) & (~star_to_i)

        zoom1 = _zoom(restricted_func_and_grad, wolfe_one, wolfe_two, state.a_i1, state.phi_i1,
                      state.dphi_i1, a_i, phi_i, dphi_i, gfk, ~star_to_zoom1)
        state = state._replace(nfev=state.nfev + zoom1.nfev, ngev=state.ngev + zoom1.ngev)
        zoom2 = _zoom(restricted_func_and_grad, wolfe_one, wolfe_two, a_i, phi_i, dphi_i,
                      state.a_i1, state.phi_i1, state.dphi_i1, gfk, ~star_to_zoom2)
        state = state._replace(nfev=state.nfev + zoom2.nfev, ngev=state.ngev + zoom2.ngev)

        star_keys = ["a_star", "phi_star", "dphi_star", "g_star"]
        state = state._replace(
            done=star_to_zoom1 | state.done,
            failed=(star_to_zoom1 & zoom1.failed) | state.failed,
            **_binary_replace(star_to_zoom1, state._asdict(), zoom1._asdict(), keys=star_keys))
        state = state._replace(
            done=star_to_i | state.done,
            **_binary_replace(star_to_i, state._asdict(),
                              dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i)))
        state = state._replace(
            done=star_to_zoom2 | state.done,
            failed=(star_to_zoom2 & zoom2.failed) | state.failed,
            **_binary_replace(star_to_zoom2, state._asdict(), zoom2._asdict(), keys=star_keys))
        return state._replace(i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

    state = lax.while_loop(lambda state: (~state.done) & (state.i <= maxiter) & (~state.failed),
                           body, state)
    status = jnp.where(state.failed, jnp.array(1),
                       jnp.where(state.i > maxiter, jnp.array(3), jnp.array(0)))
    # below 64 bits a tiny step would stall the minimizer: floor its size at 1e-8
    alpha_k = jnp.asarray(state.a_star)
    alpha_k = jnp.where((dtypes.finfo(alpha_k.dtype).bits != 64) & (jnp.abs(alpha_k) < 1e-8),
                        jnp.sign(alpha_k) * 1e-8, alpha_k)
    return _LineSearchResults(failed=state.failed | (~state.done), nit=state.i - 1,
                              nfev=state.nfev, ngev=state.ngev, k=state.i, a_k=alpha_k,
                              f_k=state.phi_star, g_k=state.g_star, status=status)
