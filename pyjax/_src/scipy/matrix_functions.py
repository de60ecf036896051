"""jax.scipy.linalg's matrix functions as JAX 0.10.2 computes them: expm by scaling and
squaring with Padé approximants (its derivative is autodiff through them; expm_frechet is that
jvp), sqrtm by the complex Schur method, funm by Parlett's recurrence on the complex Schur form,
polar by QDWH or the SVD."""
from __future__ import annotations

from functools import partial
from typing import Any, Callable

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import config
from pyjax._src.core import dtypes
from pyjax._src.numpy import linalg as jnp_linalg
from pyjax._src.numpy.util import promote_dtypes_inexact
from pyjax._src.numpy.vectorize import vectorize
from pyjax._src.primitives import linalg as lax_linalg
from pyjax._src.primitives.qdwh import qdwh
from pyjax._src.scipy.linalg import rsf2csf, schur, solve_triangular
from pyjax._src.transforms.ad_api import jvp
from pyjax._src.transforms.jit import jit

Array = Any

# ---------------------------------------------------------------------------------------------
# expm: Padé approximants of degree 3..13 (Higham 2005), then repeated squaring
# ---------------------------------------------------------------------------------------------

#: numerator coefficients b_0.. of the diagonal Padé approximants of exp
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
#: (largest 1-norm handled without squaring, switch points between the approximants) for
#: double and single precision
_THETA64 = (5.371920351148152, (1.495585217958292e-002, 2.539398330063230e-001,
                                9.504178996162932e-001, 2.097847961257068e+000))
_THETA32 = (3.925724783138660, (4.258730016922831e-001, 1.880152677804762e+000))


def _precise_dot(a: Array, b: Array) -> Array:
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _pade_low(degree: int) -> Callable[[Array], tuple[Array, Array]]:
    """U (odd part) and V (even part) of the degree 3, 5, 7 or 9 approximant."""
    b = _PADE[degree]

    def pade(A: Array) -> tuple[Array, Array]:  # noqa: N803
        M, N = A.shape  # noqa: N806
        ident = jnp.eye(M, N, dtype=A.dtype)
        powers = [_precise_dot(A, A)]  # A^2, A^4, A^6, A^8 as JAX forms them
        if degree >= 5:
            powers.append(_precise_dot(powers[0], powers[0]))
        for _ in range(7, degree + 1, 2):
            powers.append(_precise_dot(powers[-1], powers[0]))

        def series(offset: int) -> Array:  # highest power first, summed left to right
            total = b[2 * len(powers) + offset] * powers[-1]
            for k in range(len(powers) - 1, 0, -1):
                total = total + b[2 * k + offset] * powers[k - 1]
            return total + b[offset] * ident

        U = _precise_dot(A, series(1))  # noqa: N806
        return U, series(0)

    return pade


def _pade13(A: Array) -> tuple[Array, Array]:  # noqa: N803
    b = _PADE[13]
    M, N = A.shape  # noqa: N806
    ident = jnp.eye(M, N, dtype=A.dtype)
    A2 = _precise_dot(A, A)  # noqa: N806
    A4 = _precise_dot(A2, A2)  # noqa: N806
    A6 = _precise_dot(A4, A2)  # noqa: N806
    U = _precise_dot(A, _precise_dot(A6, b[13] * A6 + b[11] * A4 + b[9] * A2)  # noqa: N806
                     + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
    V = (_precise_dot(A6, b[12] * A6 + b[10] * A4 + b[8] * A2)  # noqa: N806
         + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident)
    return U, V


_pade3, _pade5, _pade7, _pade9 = (_pade_low(d) for d in (3, 5, 7, 9))


@jit
def _calc_P_Q(A: Array) -> tuple[Array, Array, Array]:  # noqa: N802,N803
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError("expected A to be a square matrix")
    A_L1 = jnp_linalg.norm(A, 1)  # noqa: N806
    if A.dtype in (np.float64, np.complex128):
        (maxnorm, switch), branches = _THETA64, [_pade3, _pade5, _pade7, _pade9, _pade13]
    elif A.dtype in (np.float32, np.complex64):
        (maxnorm, switch), branches = _THETA32, [_pade3, _pade5, _pade7]
    else:
        raise TypeError(f"A.dtype={A.dtype} is not supported.")
    n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(A_L1 / maxnorm)))
    A = A / 2 ** n_squarings.astype(A.dtype)  # noqa: N806
    idx = jnp.digitize(A_L1, jnp.array(switch, dtype=A_L1.dtype))
    U, V = lax.switch(idx, branches, A)  # noqa: N806
    return U + V, -U + V, n_squarings


def _solve_P_Q(P: Array, Q: Array, upper_triangular: bool = False) -> Array:  # noqa: N802,N803
    if upper_triangular:
        return solve_triangular(Q, P)
    return jnp_linalg.solve(Q, P)


@partial(jit, static_argnums=2)
def _squaring(R: Array, n_squarings: Array, max_squarings: int) -> Array:  # noqa: N803
    """R squared n_squarings times (a scan of max_squarings conditional squarings)."""
    def body(c: Array, i: Array) -> tuple[Array, None]:
        return lax.cond(i < n_squarings, lambda x: _precise_dot(x, x), lambda x: x, c), None

    res, _ = lax.scan(body, R, jnp.arange(max_squarings, dtype=n_squarings.dtype))
    return res


@partial(jit, static_argnames=("upper_triangular", "max_squarings"))
def expm(A: Array, *, upper_triangular: bool = False, max_squarings: int = 16  # noqa: N803
         ) -> Array:
    """Matrix exponential of (…, n, n) A; NaNs when more than `max_squarings` squarings would
    be needed."""
    A, = promote_dtypes_inexact(A)  # noqa: N806
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got {A.shape=}.")
    if A.ndim > 2:
        return vectorize(partial(expm, upper_triangular=upper_triangular,
                                 max_squarings=max_squarings),
                         signature="(n,n)->(n,n)")(A)
    P, Q, n_squarings = _calc_P_Q(jnp.asarray(A))  # noqa: N806

    def nan(args: tuple) -> Array:
        return jnp.full_like(args[0], np.nan)

    def compute(args: tuple) -> Array:
        _, P, Q = args  # noqa: N806
        return _squaring(_solve_P_Q(P, Q, upper_triangular), n_squarings, max_squarings)

    return lax.cond(n_squarings > max_squarings, nan, compute, (A, P, Q))


@partial(jit, static_argnames=("method", "compute_expm"))
def expm_frechet(A: Array, E: Array, *, method: str | None = None,  # noqa: N803
                 compute_expm: bool = True) -> Any:
    """The Fréchet derivative of expm at A in direction E (with expm(A) first unless
    `compute_expm` is False): the jvp of expm."""
    del method
    A_arr = jnp.asarray(A)  # noqa: N806
    E_arr = jnp.asarray(E)  # noqa: N806
    # JAX compares shape[-2] with shape[1] (not shape[-1]) here; kept for the same errors
    if A_arr.ndim < 2 or A_arr.shape[-2] != A_arr.shape[1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={A_arr.shape}")
    if E_arr.ndim < 2 or E_arr.shape[-2] != E_arr.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={E_arr.shape}")
    if A_arr.shape != E_arr.shape:
        raise ValueError("expected A and E to be the same shape, got "
                         f"A.shape={A_arr.shape} E.shape={E_arr.shape}")
    bound = partial(expm, upper_triangular=False, max_squarings=16)
    expm_A, expm_frechet_AE = jvp(bound, (A_arr,), (E_arr,))  # noqa: N806
    return (expm_A, expm_frechet_AE) if compute_expm else expm_frechet_AE


# ---------------------------------------------------------------------------------------------
# sqrtm (Björck and Hammarling 1983) and funm (Golub and Van Loan, algorithm 11.1.1)
# ---------------------------------------------------------------------------------------------

@jit
def _sqrtm_triu(T: Array) -> Array:  # noqa: N803
    """The upper-triangular square root of upper-triangular T, column by column."""
    diag = jnp.sqrt(jnp.diag(T))
    n = diag.size
    U = jnp.diag(diag)  # noqa: N806

    def i_loop(l: Array, data: tuple) -> tuple:  # noqa: E741
        j, U = data  # noqa: N806
        i = j - 1 - l
        s = lax.fori_loop(i + 1, j, lambda k, val: val + U[i, k] * U[k, j], 0.0)
        value = jnp.where(T[i, j] == s, 0.0, (T[i, j] - s) / (diag[i] + diag[j]))
        return j, U.at[i, j].set(value)

    def j_loop(j: Array, U: Array) -> Array:  # noqa: N803
        _, U = lax.fori_loop(0, j, i_loop, (j, U))  # noqa: N806
        return U

    return lax.fori_loop(0, n, j_loop, U)


@jit
def _sqrtm(A: Array) -> Array:  # noqa: N803
    T, Z = schur(A, output="complex")  # noqa: N806
    root = _sqrtm_triu(T)
    return jnp.matmul(jnp.matmul(Z, root, precision=lax.Precision.HIGHEST), jnp.conj(Z.T),
                      precision=lax.Precision.HIGHEST)


def sqrtm(A: Array, blocksize: int = 1) -> Array:  # noqa: N803
    """A square root of (n, n) A (complex), from its complex Schur form."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    return _sqrtm(A)


@jit
def _algorithm_11_1_1(F: Array, T: Array) -> tuple[Array, Array]:  # noqa: N803
    """Parlett's recurrence: fill F = f(T) above its diagonal, superdiagonal by superdiagonal;
    also the smallest |T[j,j] - T[i,i]| met (for the error estimate)."""
    N = T.shape[0]  # noqa: N806
    minden = jnp.abs(T[0, 0])

    def outer(p: Array, F_minden: tuple) -> tuple:  # noqa: N803
        _, F, minden = lax.fori_loop(1, N - p + 1, inner, (p, *F_minden))  # noqa: N806
        return F, minden

    def inner(i: Array, p_F_minden: tuple) -> tuple:  # noqa: N803
        p, F, minden = p_F_minden  # noqa: N806
        j = i + p
        s = T[i - 1, j - 1] * (F[j - 1, j - 1] - F[i - 1, i - 1])
        ind = (jnp.arange(N) >= i) & (jnp.arange(N) < j - 1)
        val = (jnp.where(ind, T[i - 1], 0) @ jnp.where(ind, F[:, j - 1], 0)
               - jnp.where(ind, F[i - 1], 0) @ jnp.where(ind, T[:, j - 1], 0))
        s = s + val
        den = T[j - 1, j - 1] - T[i - 1, i - 1]
        s = jnp.where(den != 0, s / den, s)
        F = F.at[i - 1, j - 1].set(s)  # noqa: N806
        minden = jnp.minimum(minden, jnp.abs(den))
        return p, F, minden

    return lax.fori_loop(1, N, outer, (F, minden))


def funm(A: Array, func: Callable[[Array], Array], disp: bool = True) -> Any:  # noqa: N803
    """func applied to (n, n) A as a matrix function (complex result); with disp=False also
    SciPy's error estimate."""
    A_arr = jnp.asarray(A)  # noqa: N806
    if A_arr.ndim != 2 or A_arr.shape[0] != A_arr.shape[1]:
        raise ValueError("expected square array_like input")
    T, Z = schur(A_arr)  # noqa: N806
    T, Z = rsf2csf(T, Z)  # noqa: N806
    F = jnp.diag(func(jnp.diag(T)))  # noqa: N806
    F = F.astype(T.dtype.char)  # noqa: N806
    F, minden = _algorithm_11_1_1(F, T)  # noqa: N806
    F = Z @ F @ Z.conj().T  # noqa: N806
    if disp:
        return F
    # as in JAX: the float32 branch is overridden by the float64 one unless the type is 'f'
    tol = dtypes.finfo(np.float32 if F.dtype.char.lower() == "f" else np.float64).eps
    minden = jnp.where(minden == 0.0, tol, minden)
    err = jnp.where(jnp.any(jnp.isinf(F)), np.inf,
                    jnp.minimum(1, jnp.maximum(tol, (tol / minden)
                                               * jnp_linalg.norm(jnp.triu(T, 1), 1))))
    return F, err


# ---------------------------------------------------------------------------------------------
# polar
# ---------------------------------------------------------------------------------------------

def _polar_2d_body(a: Array, side: str, method: str, eps: float | None,
                   max_iterations: int | None) -> tuple[Array, Array]:
    m, n = a.shape
    if method == "qdwh":
        if m >= n and side == "right":
            unitary, posdef, _, _ = qdwh(a, is_hermitian=False, eps=eps)
        elif m < n and side == "left":
            a = a.T.conj()
            unitary, posdef, _, _ = qdwh(a, is_hermitian=False, eps=eps)
            posdef = posdef.T.conj()
            unitary = unitary.T.conj()
        else:
            raise NotImplementedError("method='qdwh' only supports mxn matrices where m < n "
                                      "where side='right' and m >= n "
                                      f"side='left', got {a.shape} with {side=}")
    elif method == "svd":
        u_svd, s_svd, vh_svd = lax_linalg.svd(a, full_matrices=False)
        s_svd = s_svd.astype(u_svd.dtype)
        unitary = u_svd @ vh_svd
        if side == "right":
            posdef = (vh_svd.T.conj() * s_svd[None, :]) @ vh_svd
        else:
            posdef = (u_svd * s_svd[None, :]) @ (u_svd.T.conj())
    else:
        raise ValueError(f"Unknown polar decomposition method {method}.")
    return unitary, posdef


@partial(jit, static_argnames=("side", "method"))
def _polar_2d(a: Array, side: str, method: str, eps: float | None,
              max_iterations: int | None) -> tuple[Array, Array]:
    """One matrix, its matmuls at float32 precision as under JAX's decorator."""
    with config.State("jax_default_matmul_precision")("float32"):
        return _polar_2d_body(a, side, method, eps, max_iterations)


@partial(jit, static_argnames=("side", "method"))
def polar(a: Array, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None) -> tuple[Array, Array]:
    """(u, p) with a = u p (side 'right') or a = p u ('left'): u with orthonormal columns (or
    rows), p Hermitian positive semidefinite; by QDWH iterations or from the SVD."""
    arr = jnp.asarray(a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ["right", "left"]:
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    sig = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    return vectorize(partial(_polar_2d, side=side, method=method, eps=eps,
                             max_iterations=max_iterations), signature=sig)(arr)
