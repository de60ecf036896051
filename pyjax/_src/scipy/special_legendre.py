"""`jax.scipy.special`'s Bessel functions of the first kind (bessel_jn, by Miller's backward
recurrence) and spherical harmonics (sph_harm_y, from normalized associated Legendre functions
built by recurrence), as JAX 0.10.2 computes them."""
from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.compat.core import concrete_or_error
from pyjax._src.core import dtypes
from pyjax._src.core.array import Array
from pyjax._src.numpy.util import promote_dtypes_inexact, staged_as_jit
from pyjax._src.scipy.special import const as _c
from pyjax._src.transforms.batching import vmap

# --------------------------------------------------------------------------------------------
# J_v(z), v = 0..v_max
# --------------------------------------------------------------------------------------------


def _bessel_jn_scan_body_fun(carry: tuple, k: Array) -> tuple:
    """One step of J_{k} = 2 (k + 1) / z J_{k+1} - J_{k+2}, accumulating the normalization
    sum J_0 + 2 (J_2 + J_4 + ...)."""
    f0, f1, bs, z = carry
    f = 2.0 * (k + 1.0) * f1 / z - f0

    def true_fn_update_bs(u: tuple) -> Array:
        bs, f = u
        return bs + 2.0 * f

    def false_fn_update_bs(u: tuple) -> Array:
        bs, _ = u
        return bs

    bs = lax.cond(jnp.mod(k, 2) == 0, true_fn_update_bs, false_fn_update_bs, operand=(bs, f))
    return (f1, f, bs, z), f


def _bessel_jn(z: Array, *, v: int, n_iter: int = 50) -> Array:
    f0 = _c(z, 0.0)
    f1 = _c(z, 1E-16)
    bs = _c(z, 0.0)
    (_, _, bs, _), j_vals = lax.scan(
        f=_bessel_jn_scan_body_fun, init=(f0, f1, bs, z),
        xs=lax.iota(lax.dtype(z), n_iter + 1), reverse=True)
    f = j_vals[0]
    j_vals = j_vals[:v + 1]
    return j_vals / (bs - f)


@functools.partial(staged_as_jit, static_argnames=["v", "n_iter"])
def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Array:
    """Bessel functions J_0(z) .. J_v(z), stacked on a new leading axis (Miller's backward
    recurrence from order n_iter, normalized by J_0 + 2 sum J_2k = 1)."""
    z = jnp.asarray(z)
    z, = promote_dtypes_inexact(z)
    if dtypes.issubdtype(lax.dtype(z), complex):
        raise ValueError("complex input not supported.")
    v = concrete_or_error(operator.index, v, "Argument v of bessel_jn.")
    n_iter = concrete_or_error(int, n_iter, "Argument n_iter of bessel_jn.")
    fun = functools.partial(_bessel_jn, v=v, n_iter=n_iter)
    for _ in range(z.ndim):
        fun = vmap(fun)
    return jnp.moveaxis(fun(z), -1, 0)


# --------------------------------------------------------------------------------------------
# associated Legendre functions and spherical harmonics
# --------------------------------------------------------------------------------------------

def _gen_recurrence_mask(l_max: int, is_normalized: bool, dtype: Any) -> tuple[Array, Array]:
    """Coefficients d0, d1 of P_l^m = d0 x P_{l-1}^m - d1 P_{l-2}^m as (step, m, l) arrays:
    step i holds the coefficients of the entries with m + i == l (zero elsewhere)."""
    m_mat, l_mat = jnp.meshgrid(jnp.arange(l_max + 1, dtype=dtype),
                                jnp.arange(l_max + 1, dtype=dtype), indexing="ij")
    if is_normalized:
        c0 = l_mat * l_mat
        c1 = m_mat * m_mat
        c2 = 2.0 * l_mat
        c3 = (l_mat - 1.0) * (l_mat - 1.0)
        d0 = jnp.sqrt((4.0 * c0 - 1.0) / (c0 - c1))
        d1 = jnp.sqrt(((c2 + 1.0) * (c3 - c1)) / ((c2 - 3.0) * (c0 - c1)))
    else:
        d0 = (2.0 * l_mat - 1.0) / (l_mat - m_mat)
        d1 = (l_mat + m_mat - 1.0) / (l_mat - m_mat)
    d0_mask_indices = jnp.triu_indices(l_max + 1, 1)
    d1_mask_indices = jnp.triu_indices(l_max + 1, 2)
    d_zeros = jnp.zeros((l_max + 1, l_max + 1), dtype=dtype)
    d0_mask = d_zeros.at[d0_mask_indices].set(d0[d0_mask_indices])
    d1_mask = d_zeros.at[d1_mask_indices].set(d1[d1_mask_indices])
    i, j, k = jnp.ogrid[:l_max + 1, :l_max + 1, :l_max + 1]
    mask = (i + j - k == 0).astype(dtype)
    d0_mask_3d = jnp.einsum("jk,ijk->ijk", d0_mask, mask)
    d1_mask_3d = jnp.einsum("jk,ijk->ijk", d1_mask, mask)
    return d0_mask_3d, d1_mask_3d


@functools.partial(staged_as_jit, static_argnums=(0, 2))
def _gen_associated_legendre(l_max: int, x: Array, is_normalized: bool) -> Array:
    """P_l^m(x) for 0 <= m, l <= l_max as an (m, l, len(x)) array: the diagonal and
    first off-diagonal in closed form, the rest by the three-term recurrence in l."""
    p = jnp.zeros((l_max + 1, l_max + 1, x.shape[0]), dtype=x.dtype)
    a_idx = jnp.arange(1, l_max + 1, dtype=x.dtype)
    b_idx = jnp.arange(l_max, dtype=x.dtype)
    if is_normalized:
        initial_value: Any = 0.5 / jnp.sqrt(np.pi)  # the l = m = 0 normalization
        f_a = jnp.cumprod(-1 * jnp.sqrt(1.0 + 0.5 / a_idx))
        f_b = jnp.sqrt(2.0 * b_idx + 3.0)
    else:
        initial_value = 1.0
        f_a = jnp.cumprod(1.0 - 2.0 * a_idx)
        f_b = 2.0 * b_idx + 1.0
    p = p.at[(0, 0)].set(initial_value)
    # diagonal P_l^l
    y = jnp.cumprod(jnp.broadcast_to(jnp.sqrt(1.0 - x * x), (l_max, x.shape[0])), axis=0)
    p_diag = initial_value * jnp.einsum("i,ij->ij", f_a, y)
    diag_indices = jnp.diag_indices(l_max + 1)
    p = p.at[(diag_indices[0][1:], diag_indices[1][1:])].set(p_diag)
    # off-diagonal P_{l+1}^l
    p_offdiag = jnp.einsum("ij,ij->ij", jnp.einsum("i,j->ij", f_b, x),
                           p[jnp.diag_indices(l_max)])
    offdiag_indices = (diag_indices[0][:l_max], diag_indices[1][:l_max] + 1)
    p = p.at[offdiag_indices].set(p_offdiag)
    d0_mask_3d, d1_mask_3d = _gen_recurrence_mask(l_max, is_normalized=is_normalized,
                                                  dtype=x.dtype)

    def body_fun(i: Array, p_val: Array) -> Array:
        coeff_0 = d0_mask_3d[i]
        coeff_1 = d1_mask_3d[i]
        h = (jnp.einsum("ij,ijk->ijk", coeff_0,
                        jnp.einsum("ijk,k->ijk", jnp.roll(p_val, shift=1, axis=1), x))
             - jnp.einsum("ij,ijk->ijk", coeff_1, jnp.roll(p_val, shift=2, axis=1)))
        return p_val + h

    p = p.astype(jnp.result_type(p, x, d0_mask_3d))
    if l_max > 1:
        p = lax.fori_loop(lower=2, upper=l_max + 1, body_fun=body_fun, init_val=p)
    return p


@functools.partial(staged_as_jit, static_argnums=(4,))
def _sph_harm(n: Array, m: Array, theta: Array, phi: Array, n_max: int) -> Array:
    cos_colatitude = jnp.cos(theta)
    legendre = _gen_associated_legendre(n_max, cos_colatitude, True)
    legendre_val = legendre.at[abs(m), n, jnp.arange(len(n))].get(mode="clip")
    angle = abs(m) * phi
    vandermonde = lax.complex(jnp.cos(angle), jnp.sin(angle))
    harmonics = lax.complex(legendre_val * jnp.real(vandermonde),
                            legendre_val * jnp.imag(vandermonde))
    # Y_n^{-m} = (-1)^m conj(Y_n^m)
    return jnp.where(m < 0, (-1.0) ** abs(m) * jnp.conjugate(harmonics), harmonics)


def sph_harm_y(n: Array, m: Array, theta: Array, phi: Array, diff_n: int | None = None,
               n_max: int | None = None) -> Array:
    """Spherical harmonics Y_n^m(theta, phi), theta the polar angle (SciPy's sph_harm_y);
    n_max (the largest degree) must be static under transformations."""
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    if jnp.isscalar(theta):
        theta = jnp.array([theta])
    if n_max is None:
        n_max = np.max(n)
    n_max = concrete_or_error(
        int, n_max, "The `n_max` argument of `jnp.scipy.special.sph_harm` must be statically "
        "specified to use `sph_harm` within JAX transformations.")
    return _sph_harm(n, m, theta, phi, n_max)
