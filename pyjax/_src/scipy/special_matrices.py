"""jax.scipy.linalg's matrix constructors (block_diag, toeplitz, hankel, circulant, leslie,
companion, fiedler, fiedler_companion, convolution_matrix, hilbert, invhilbert, pascal,
invpascal, helmert, hadamard, dft), built as JAX 0.10.2 builds them: the batched ones through
jnp.vectorize, the sized ones jitted with the size static."""
from __future__ import annotations

import math
import operator
from functools import partial
from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.numpy.util import check_arraylike, promote_args_inexact, promote_dtypes
from pyjax._src.numpy.vectorize import vectorize
from pyjax._src.scipy.special import comb
from pyjax._src.transforms.jit import jit

Array = Any


@jit
def block_diag(*arrs: Array) -> Array:
    """The 2-D block-diagonal matrix of the arguments (each at most 2-D) in order."""
    if len(arrs) == 0:
        arrs = (jnp.zeros((1, 0)),)
    arrs = tuple(promote_dtypes(*arrs))
    bad_shapes = [i for i, a in enumerate(arrs) if np.ndim(a) > 2]
    if bad_shapes:
        raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                         f"dimensions, got {arrs[bad_shapes[0]]} at argument {bad_shapes[0]}.")
    converted = [jnp.atleast_2d(a) for a in arrs]
    dtype = lax.dtype(converted[0])
    total_cols = sum(a.shape[1] for a in converted)
    padded = []
    current_col = 0
    for arr in converted:
        cols = arr.shape[1]
        padded.append(lax.pad(arr, dtype.type(0),
                              ((0, 0, 0), (current_col, total_cols - cols - current_col, 0))))
        current_col += cols
    return jnp.concatenate(padded, axis=0)


def _patches(v: Array, ncols: int) -> Array:
    """The (len(v) - ncols + 1, ncols) sliding windows of v (one conv, as JAX takes them)."""
    return lax.conv_general_dilated_patches(
        v.reshape((1, v.shape[0], 1)), (ncols,), (1,), "VALID",
        dimension_numbers=("NTC", "IOT", "NTC"), precision=lax.Precision.HIGHEST)[0]


def toeplitz(c: Array, r: Array | None = None) -> Array:
    """The (…, N, M) matrix with first column c and first row r (r[0] ignored; r defaults to
    conj(c)), batched over leading axes."""
    if r is None:
        check_arraylike("toeplitz", c)
        r = jnp.conjugate(jnp.asarray(c))
    else:
        check_arraylike("toeplitz", c, r)
    return _toeplitz(jnp.atleast_1d(jnp.asarray(c)), jnp.atleast_1d(jnp.asarray(r)))


@partial(vectorize, signature="(m),(n)->(m,n)")
def _toeplitz(c: Array, r: Array) -> Array:
    nrows, = c.shape
    ncols, = r.shape
    if nrows == 0 or ncols == 0:
        return jnp.empty((nrows, ncols), dtype=jnp.promote_types(c.dtype, r.dtype))
    elems = jnp.concatenate((c[::-1], r[1:]))
    return jnp.flip(_patches(elems, ncols), axis=0)


def hankel(c: Array, r: Array | None = None) -> Array:
    """The (…, N, M) matrix with constant anti-diagonals, first column c and last row r
    (r[0] ignored; r defaults to zeros)."""
    if r is None:
        check_arraylike("hankel", c)
        c = jnp.asarray(c)
        r = jnp.zeros_like(c)
    else:
        check_arraylike("hankel", c, r)
        c = jnp.asarray(c)
        r = jnp.asarray(r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    if c.ndim < r.ndim:  # same batch rank, so vectorize needs no rank promotion
        c = lax.expand_dims(c, range(r.ndim - c.ndim))
    elif r.ndim < c.ndim:
        r = lax.expand_dims(r, range(c.ndim - r.ndim))
    return _hankel(c, r)


@partial(vectorize, signature="(m),(n)->(m,n)")
def _hankel(c: Array, r: Array) -> Array:
    nrows, = c.shape
    ncols, = r.shape
    if nrows == 0 or ncols == 0:
        return jnp.empty((nrows, ncols), dtype=jnp.result_type(c, r))
    return _patches(jnp.concatenate((c, r[1:])), ncols)


def circulant(c: Array) -> Array:
    """The (…, N, N) matrix whose columns are cyclic shifts of c."""
    check_arraylike("circulant", c)
    return _circulant(jnp.atleast_1d(jnp.asarray(c)))


@partial(vectorize, signature="(n)->(n,n)")
def _circulant(c: Array) -> Array:
    n, = c.shape
    return c[(jnp.arange(n)[:, None] - jnp.arange(n)[None, :]) % n]


def leslie(f: Array, s: Array) -> Array:
    """The Leslie matrix: fecundities f (N >= 2) in the first row, survivals s (N - 1) on the
    subdiagonal."""
    check_arraylike("leslie", f, s)
    f_arr = jnp.atleast_1d(f)
    s_arr = jnp.atleast_1d(s)
    if f_arr.shape[-1] < 2:
        raise ValueError("The length of f along the last axis must be at least 2; "
                         f"got shape {f_arr.shape}.")
    if s_arr.shape[-1] != f_arr.shape[-1] - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last axis "
                         f"must be one less than the length of f; got f shape {f_arr.shape} "
                         f"and s shape {s_arr.shape}.")
    return _leslie(f_arr, s_arr)


@partial(vectorize, signature="(n),(m)->(n,n)")
def _leslie(f: Array, s: Array) -> Array:
    f, s = promote_dtypes(f, s)
    return jnp.diag(s, k=-1).at[0].set(f)


def companion(a: Array) -> Array:
    """The (N-1, N-1) companion matrix of polynomial coefficients a (highest first)."""
    a, = promote_args_inexact("companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError("The length of `a` along the last axis must be at least 2; "
                         f"got shape {a.shape}.")
    return _companion(a)


@partial(vectorize, signature="(n)->(m,m)")
def _companion(a: Array) -> Array:
    first_row = -a[1:] / a[0]
    m = a.shape[0] - 1
    return jnp.eye(m, m, k=-1, dtype=first_row.dtype).at[0].set(first_row)


def fiedler(a: Array) -> Array:
    """The symmetric matrix |a_i - a_j|."""
    check_arraylike("fiedler", a)
    arr = jnp.atleast_1d(a)
    return jnp.abs(arr[..., None] - arr[..., None, :])


def fiedler_companion(a: Array) -> Array:
    """The pentadiagonal Fiedler companion matrix of polynomial coefficients a."""
    a, = promote_args_inexact("fiedler_companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero "
                         f"length, but got an array of shape {a.shape}.")
    return _fiedler_companion(a)


@partial(vectorize, signature="(n)->(m,m)")
def _fiedler_companion(a: Array) -> Array:
    n = a.shape[0] - 1
    if n == 0:
        return jnp.empty_like(a, shape=(0, 0))
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    i = jnp.arange(n)[:, None]
    j = jnp.arange(n)[None, :]
    super_val = -a[jnp.minimum(i + 2, n)]  # indices clipped; the masks pick valid cells
    sub_val = -a[jnp.minimum(i + 1, n)]
    i_even = i % 2 == 0
    i_odd = i % 2 == 1
    one = jnp.array(1, dtype=a.dtype)
    zero = jnp.array(0, dtype=a.dtype)
    conditions = [(i == 0) & (j == 0), (i == 1) & (j == 0), (j == i + 1) & i_even,
                  (j == i + 2) & i_even, (j == i - 1) & i_even & (i >= 2),
                  (j == i - 2) & i_odd & (i >= 3)]
    choices = [-a[1], one, super_val, one, sub_val, one]
    return jnp.select(conditions, choices, default=zero)


@partial(jit, static_argnames=("n", "mode"))
def convolution_matrix(a: Array, n: int, mode: str = "full") -> Array:
    """The Toeplitz matrix A with A @ v == jnp.convolve(a, v, mode) for v of length n."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    check_arraylike("convolution_matrix", a)
    a_arr = jnp.asarray(a)
    if a_arr.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = a_arr.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a_arr.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    pad_widths = [(0, 0)] * (a_arr.ndim - 1) + [(0, n - 1)]
    az = jnp.pad(a_arr, pad_widths)
    raz = jnp.pad(jnp.flip(a_arr, axis=-1), pad_widths)
    total = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb = trim // 2
        te = trim - tb
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    col0 = lax.slice_in_dim(az, tb, total - te, axis=-1)
    row0 = lax.slice_in_dim(raz, total - n - tb, total - tb, axis=-1)
    return toeplitz(col0, row0)


@partial(jit, static_argnames=("n",))
def hilbert(n: int) -> Array:
    """The (n, n) Hilbert matrix 1 / (i + j + 1)."""
    a = lax.broadcasted_iota(float, (n, 1), 0)
    return 1 / (a + a.T + 1)


@partial(jit, static_argnames=("n",))
def invhilbert(n: int) -> Array:
    """The inverse of the (n, n) Hilbert matrix, from its closed form in binomials."""
    a = jnp.arange(n, dtype=dtypes.default_float_dtype())
    i = a[:, None]
    j = a[None, :]
    s = i + j
    return ((-1.0) ** s * (s + 1.0) * comb(n + i, n - j - 1) * comb(n + j, n - i - 1)
            * comb(s, i) ** 2)


def _check_kind(kind: str | None, word: str) -> str:
    if kind is None:
        kind = "symmetric"
    valid_kind = ["symmetric", "lower", "upper"]
    if kind not in valid_kind:
        raise ValueError(f"Expected kind to be {word}: {valid_kind}; got {kind}")
    return kind


@jit
def _binom(n: Array, k: Array) -> Array:
    a = lax.lgamma(n + 1.0)
    b = lax.lgamma(n - k + 1.0)
    c = lax.lgamma(k + 1.0)
    return lax.exp(a - b - c)


@partial(jit, static_argnames=("n", "kind"))
def pascal(n: int, kind: str | None = None) -> Array:
    """The (n, n) Pascal matrix ('symmetric', 'lower' or 'upper'), from lgamma binomials."""
    kind = _check_kind(kind, "on of")  # sic: JAX's message
    a = jnp.arange(n, dtype=np.float32)
    lower = _binom(a[:, None], a[None, :])
    if kind == "lower":
        return lower
    if kind == "upper":
        return lower.T
    return jnp.dot(lower, lower.T)


@partial(jit, static_argnames=("n", "kind"))
def invpascal(n: int, kind: str | None = None) -> Array:
    """The inverse of pascal(n, kind): (-1)^(i-j) binom(i, j) and its products."""
    kind = _check_kind(kind, "one of")
    a = jnp.arange(n, dtype=dtypes.default_float_dtype())
    i = a[:, None]
    j = a[None, :]
    lower_inv = ((-1.0) ** (i - j)) * _binom(i, j)
    if kind == "lower":
        return lower_inv
    if kind == "upper":
        return lower_inv.T
    return jnp.dot(lower_inv.T, lower_inv)


@partial(jit, static_argnames=("n", "full"))
def helmert(n: int, full: bool = False) -> Array:
    """The (n - 1, n) Helmert contrasts, with the 1/sqrt(n) row first when `full`."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i = jnp.arange(n - 1)[:, None]
    j = jnp.arange(n)[None, :]
    k = i + 1
    k_f = k.astype(dtypes.default_float_dtype())
    denom = jnp.sqrt(k_f * (k_f + 1))
    H = jnp.where(j <= i, 1.0 / denom,  # noqa: N806
                  jnp.where(j == k, -k_f / denom, jnp.zeros_like(denom)))
    if full:
        first_row = jnp.full((1, n), 1.0 / jnp.sqrt(n), dtype=H.dtype)
        H = jnp.concatenate([first_row, H], axis=0)  # noqa: N806
    return H


@partial(jit, static_argnames=("n", "dtype"))
def hadamard(n: int, dtype: Any = int) -> Array:
    """The (n, n) Sylvester-Hadamard matrix, n a power of 2."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    H = jnp.ones((1, 1), dtype=dtype)  # noqa: N806
    for _ in range(int(math.log2(n))):
        H = jnp.block([[H, H], [H, -H]])  # noqa: N806
    return H


@partial(jit, static_argnames=("n", "scale", "dtype"))
def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Array:
    """The (n, n) DFT matrix exp(-2 pi i jk / n), unscaled or divided by sqrt(n) or n."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = dtypes.default_complex_dtype()
    else:
        dtype = dtypes.check_user_dtype(dtype, "dft")
        if not dtypes.issubdtype(dtype, np.complexfloating):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    a = jnp.arange(n, dtype=dtype)
    omegas = jnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        omegas = omegas / jnp.sqrt(n)
    elif scale == "n":
        omegas = omegas / n
    return omegas
