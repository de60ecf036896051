"""lax.linalg: the matrix decompositions and solves (cholesky, eig, eigh, lu, qr, svd, schur,
hessenberg, tridiagonal, householder products, triangular and tridiagonal solves, ...).

Every primitive works on the trailing matrix (or vector) axes and is batched over the leading
ones.  Values come from LAPACK through SciPy, the routines XLA-CPU calls, so signs and orders
are LAPACK's as in JAX; a failed factorisation gives NaNs for that batch element, as in JAX.
The jvp rules follow JAX's derivations, written in lax, so their jaxprs print as JAX's do.
"""
from __future__ import annotations

import enum
import functools
import math
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.backend.tier1 import small_lapack, small_linalg
from pyjax._src.core.trace_state import note_side_effect
from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.primitives import _blas_threads
from pyjax._src.primitives import dot as dotp
from pyjax._src.primitives import elementwise as ew
from pyjax._src.primitives import shape as shp
from pyjax._src.primitives._rules import make_primitive
from pyjax._src.primitives.enums import Precision
from pyjax._src.transforms import ad, batching


#: the rules' products run at HIGHEST precision, as JAX's do
_HIGHEST = (Precision.HIGHEST, Precision.HIGHEST)


class EigImplementation(enum.Enum):
    """Which eigendecomposition algorithm eig uses (only LAPACK runs on CPU)."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """Which symmetric eigendecomposition eigh uses (only QR runs on CPU)."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Which SVD algorithm svd uses (DEFAULT and DIVIDE_AND_CONQUER: gesdd; QR: gesvd)."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


# ---------------------------------------------------------------------------------------------
# The shared abstract rule (JAX's linalg_primitive) and batched NumPy evaluation
# ---------------------------------------------------------------------------------------------

_FLOATING, _COMPLEX, _INTEGER = "floating", "complexfloating", "integer"
_INEXACT = (_FLOATING, _COMPLEX)


def _accepts(dtype: np.dtype, kinds: Sequence[str]) -> bool:
    for kind in kinds:
        if kind == _FLOATING and dtypes.is_float(dtype):
            return True
        if kind == _COMPLEX and dtypes.is_complex(dtype):
            return True
        if kind == _INTEGER and dtypes.is_integer(dtype) and dtype != dtypes.bool_:
            return True
        if kind == "int32" and dtype == np.int32:
            return True
    return False


def _check_dtypes(name: str, accepted: Sequence[Sequence[str]], avals: Sequence[ShapedArray],
                  require_same: bool) -> None:
    """JAX's naryop_dtype_rule: each operand of an accepted kind, and all of one dtype."""
    for i, (aval, kinds) in enumerate(zip(avals, accepted)):
        if not _accepts(aval.dtype, kinds):
            if aval.dtype == dtypes.float0:
                raise TypeError(
                    f"Called {name} with a float0 at position {i}. float0s do not support any "
                    "operations by design, because they are not compatible with non-trivial "
                    "vector spaces. No implicit dtype conversion is done. You can use "
                    "np.zeros_like(arr, dtype=np.float) to cast a float0 array to a regular "
                    "zeros array. \nIf you didn't expect to get a float0 you might have "
                    "accidentally taken a gradient with respect to an integer argument.")
            raise TypeError(f"{name} does not accept dtype {dtypes.dtype_name(aval.dtype)} at "
                            f"position {i}. Accepted dtypes at position {i} are subtypes of "
                            f"{', '.join(kinds)}.")
    if require_same and any(a.dtype != avals[0].dtype for a in avals[1:]):
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                        f"{', '.join(str(a.dtype) for a in avals)}.")


def _split_batch(name: str, ranks: Sequence[int], avals: Sequence[ShapedArray],
                 batching_ok: bool) -> tuple[tuple, list[tuple]]:
    """(batch shape, trailing core shapes), with JAX's linalg_shape_rule errors."""
    batch, cores = [], []
    for i, (rank, aval) in enumerate(zip(ranks, avals)):
        shape = aval.shape
        if len(shape) < rank:
            raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got "
                            f"shape={shape}")
        if not batching_ok and len(shape) != rank:
            raise TypeError(f"Input {i} to {name} must have a rank of exactly {rank}, but got "
                            f"shape={shape}")
        batch.append(shape[:len(shape) - rank])
        cores.append(shape[len(shape) - rank:])
    if any(len(b) != len(batch[0]) for b in batch):
        raise TypeError(f"All inputs to {name} must have the same number of batch dimensions, "
                        f"but got {[len(b) for b in batch]} batch dimensions for the inputs.")
    return tuple(batch[0]), cores


def _check_same_batch(name: str, ranks: Sequence[int], avals: Sequence[ShapedArray]) -> None:
    """Batch shapes must agree (checked after the core shape rule, whose errors JAX raises
    first; JAX itself only fails at lowering)."""
    batch = [a.shape[:len(a.shape) - r] for r, a in zip(ranks, avals)]
    if any(b != batch[0] for b in batch):
        raise TypeError(f"All inputs to {name} must have the same batch dimensions, but got "
                        f"{[tuple(b) for b in batch]}.")


def linalg_primitive(name: str, accepted: Sequence[Sequence[str]], ranks: Sequence[int],
                     shape_rule: Callable, dtype_rule: Callable | None, core_impl: Callable,
                     *, multiple_results: bool = False, batching_ok: bool = True,
                     require_same: bool = True, batched_impl: Callable | None = None,
                     lapack_layout: bool = False) -> Primitive:
    """A primitive over trailing `ranks`-dimensional cores, batched over the leading axes.

    shape_rule(*core_shapes, **params) and dtype_rule(*dtypes, **params) give the core
    result(s) (dtype_rule None: the first operand's dtype); core_impl(*cores, **params) computes
    one batch element with NumPy/LAPACK.  batched_impl(*xs, **params), when given, computes a
    batch of several at once (NumPy's batched gufuncs call the same LAPACK routines) or returns
    None to fall back to the per-element loop.  Results are weak only when every operand is."""
    def abstract_eval(*avals: ShapedArray, **params: Any) -> Any:
        _check_dtypes(name, accepted, avals, require_same)
        batch, cores = _split_batch(name, ranks, avals, batching_ok)
        shapes = shape_rule(*cores, **params)
        _check_same_batch(name, ranks, avals)
        out_dtypes = (dtype_rule(*(a.dtype for a in avals), **params) if dtype_rule
                      else avals[0].dtype)
        weak = all(a.weak_type for a in avals)
        if multiple_results:
            return [ShapedArray((*batch, *s), np.dtype(d), weak)
                    for s, d in zip(shapes, out_dtypes)]
        return ShapedArray((*batch, *shapes), np.dtype(out_dtypes), weak)

    def impl(*xs: np.ndarray, **params: Any) -> Any:
        avals = abstract_eval(*(ShapedArray(x.shape, x.dtype) for x in xs), **params)
        batch = xs[0].shape[:xs[0].ndim - ranks[0]]
        if not batch and lapack_layout:  # one matrix: LAPACK's results as they are (Fortran
            # order, uncopied: LU's factors go to triangular solves, which read that order)
            res = core_impl(*xs, **params)
            outs = [np.broadcast_to(np.asarray(r, a.dtype), a.shape) if np.shape(r) != a.shape
                    else np.asarray(r, a.dtype)
                    for r, a in zip(res if multiple_results else [res],
                                    avals if multiple_results else [avals])]
            return outs if multiple_results else outs[0]
        if batched_impl is not None and math.prod(batch) > 1:
            res = batched_impl(*xs, **params)
            if res is not None:
                return res
        outs = [np.empty(a.shape, a.dtype) for a in (avals if multiple_results else [avals])]
        for idx in np.ndindex(*batch):
            res = core_impl(*(x[idx] for x in xs), **params)
            for out, r in zip(outs, res if multiple_results else [res]):
                out[idx] = r
        return outs if multiple_results else outs[0]

    prim = make_primitive(name, impl, abstract_eval, multiple_results=multiple_results)
    if batching_ok:
        prim.batch = functools.partial(_expand_dims_batcher, prim)
    return prim


def _expand_dims_batcher(prim: Primitive, vals: Sequence[Any], dims: Sequence[Any],
                         **params: Any) -> tuple:
    """Batch axes to the front (unbatched operands broadcast): the primitive is batched there."""
    size = next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not None)
    vals = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    out = prim.bind(*vals, **params)
    return (out, [0] * len(out)) if prim.multiple_results else (out, 0)


# -- LAPACK through SciPy ---------------------------------------------------------------------

_LAPACK_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                                 np.complex128))


def _lapack(name: str, x: np.ndarray) -> Callable:
    """The LAPACK routine `name` for x's dtype ('geqrf' -> sgeqrf/dgeqrf/cgeqrf/zgeqrf), run
    on as many BLAS threads as one of its steps is worth (`_step_flops`); other dtypes fail
    as JAX's CPU lowering does."""
    import scipy.linalg.lapack as lapack  # noqa: PLC0415 - SciPy loads on first use
    if x.dtype not in _LAPACK_DTYPES:
        raise NotImplementedError(KeyError(x.dtype.type), f"Unsupported dtype {x.dtype}.")
    return _blas_threaded(lapack.get_lapack_funcs(name, (x,)), _step_flops(name, x))


#: the block size of LAPACK's (and OpenBLAS's) blocked algorithms, near enough
_NB = 64
#: each routine's flops on an m x n operand, k = min(m, n) (LAPACK Working Note 41's counts,
#: leading terms; the eigen- and singular-value routines by their reductions and
#: back-transformations, the blocked parts that threads speed up)
_LAPACK_FLOPS: dict[str, Callable[[int, int, int], float]] = {
    "potrf": lambda m, n, k: n ** 3 / 3,
    "getrf": lambda m, n, k: m * n * k - k ** 3 / 3,
    "geqrf": lambda m, n, k: 2 * m * n * k - 2 * k ** 3 / 3,
    "geqp3": lambda m, n, k: 2 * m * n * k - 2 * k ** 3 / 3,
    "orgqr": lambda m, n, k: 2 * m * n * k - 2 * k ** 3 / 3,
    "ungqr": lambda m, n, k: 2 * m * n * k - 2 * k ** 3 / 3,
    "syevd": lambda m, n, k: 4 * n ** 3 / 3,
    "heevd": lambda m, n, k: 4 * n ** 3 / 3,
    "sytrd": lambda m, n, k: 4 * n ** 3 / 3,
    "hetrd": lambda m, n, k: 4 * n ** 3 / 3,
    "gesdd": lambda m, n, k: 4 * m * n * k - 4 * k ** 3 / 3,
    "gesvd": lambda m, n, k: 4 * m * n * k - 4 * k ** 3 / 3,
    "gehrd": lambda m, n, k: 10 * n ** 3 / 3,
    "geev": lambda m, n, k: 10 * n ** 3 / 3,
    "gees": lambda m, n, k: 10 * n ** 3 / 3,
}


def _step_flops(name: str, x: np.ndarray) -> int:
    """The work of one block step (total * _NB / k) of LAPACK routine `name` on x: the unit
    a multi-threaded BLAS splits among its threads and then waits for, so the thread count
    is chosen from it as for one product (_blas_threads).  Measured on 2 busy cores, 512x512
    float32 (ms, best of 45 at 1 / 2 threads): potrf 0.74 / 0.99, getrf 1.8 / 2.1 (one thread
    here), trsm with 512 right-hand sides (one product) 1.6 / 0.9; typical runs under load
    take 3-6x longer at 2 threads.  Unlisted routines (gtsv, level-1) count 0."""
    if name not in _LAPACK_FLOPS or x.ndim < 2:
        return 0
    m, n = x.shape[-2:]
    k = min(m, n)
    if k == 0:
        return 0
    flops = _LAPACK_FLOPS[name](m, n, k) * _NB / k
    return int(flops * (4 if _is_complex(x) else 1))


def _blas_threaded(fn: Callable, flops: int) -> Callable:
    """fn run under _blas_threads' count for `flops` (left alone below its floor)."""
    if flops < _blas_threads.FLOOR_FLOPS:
        return fn

    def call(*args: Any, **kwargs: Any) -> Any:
        restore = _blas_threads.enter(flops)
        try:
            return fn(*args, **kwargs)
        finally:
            _blas_threads.leave(restore)
    return call


#: batches of matrices up to this size are factorised/solved all at once: by NumPy loops over
#: the rows vectorised across the batch (LAPACK's unblocked algorithms), or by NumPy's
#: gufuncs, which loop over LAPACK in C
_SMALL = 16


def _nan_like(x: np.ndarray) -> np.ndarray:
    return np.full(x.shape, np.nan, x.dtype)


def _failed_like(x: np.ndarray) -> np.ndarray:
    """What JAX leaves for a failed svd/eigh: NaNs, NaN + NaN j where complex."""
    return np.full(x.shape, complex(np.nan, np.nan) if _is_complex(x) else np.nan, x.dtype)


def _gufunc(name: str, x: np.ndarray, outs: str) -> tuple[list, bool]:
    """NumPy's batched LAPACK gufunc `name` (numpy.linalg._umath_linalg) on x, in x's own
    dtype, and whether any element failed.  numpy.linalg's wrappers compute float32 in
    float64, but the gufuncs have single-precision loops calling the routines SciPy's
    wrappers call (same bits: checked for all shapes up to _SMALL).  `outs` gives each
    result's kind: 'c' x's dtype, 'r' its real dtype.  A failed element comes back as NaNs
    and raises the invalid flag (so does a NaN met on the way): see `_redo_nans`."""
    from numpy.linalg import _umath_linalg  # noqa: PLC0415
    c = x.dtype.char
    sig = c + "->" + "".join(c if o == "c" else _real_dtype(x.dtype).char for o in outs)
    failed: list[bool] = []
    with np.errstate(all="ignore", invalid="call", call=lambda *_: failed.append(True)):
        res = getattr(_umath_linalg, name)(x, signature=sig)
    return (list(res) if isinstance(res, tuple) else [res]), bool(failed)


def _redo_nans(outs: list, x: np.ndarray, core: Callable) -> list:
    """outs with each batch element of x where any holds a NaN redone (in place) by `core`,
    the per-element impl, so that failures read as they do one at a time."""
    nbatch = x.ndim - 2
    bad = np.zeros(x.shape[:nbatch], bool)
    for out in outs:
        bad |= np.isnan(out).any(axis=tuple(range(nbatch, out.ndim)))
    for idx in zip(*np.nonzero(bad)):
        for out, r in zip(outs, core(x[idx])):
            out[idx] = r
    return outs


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.finfo(dtype).dtype) if dtypes.is_complex(dtype) else dtype


def _complex_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.complex64) if dtype == np.float32 else (
        np.dtype(np.complex128) if dtype == np.float64 else dtype)


def _is_complex(x: Any) -> bool:
    return dtypes.is_complex(np.dtype(x.dtype))


# ---------------------------------------------------------------------------------------------
# lax helpers the rules are written with (JAX's _T, _H, _tril, _triu, _eye, ...)
# ---------------------------------------------------------------------------------------------

def _T(x: Any) -> Any:  # noqa: N802
    n = np.ndim(x)
    return shp.transpose(x, (*range(n - 2), n - 1, n - 2))


def _conj(x: Any) -> Any:
    """Array.conj(): the conjugate of complex values, real values unchanged."""
    return ew.conj(x) if _is_complex(x) else x


def _real(x: Any) -> Any:
    """Array.real: the real part of complex values, real values unchanged."""
    return ew.real(x) if _is_complex(x) else x


def _H(x: Any) -> Any:  # noqa: N802
    return _conj(_T(x))


def symmetrize(x: Any) -> Any:
    """(x + x^H) / 2."""
    return (x + _H(x)) / 2


def _tri_mask(shape: tuple[int, int], k: int) -> Any:
    """True where column <= row + k (JAX's lax._tri of bool: its iotas take the Python int
    offset's dtype, int64 under x64)."""
    index = dtypes.default_int_dtype()
    return ew.ge(ew.add(shp.broadcasted_iota(index, shape, 0), index.type(k)),
                 shp.broadcasted_iota(index, shape, 1))


def _eye(dtype: Any, shape: tuple[int, int], offset: int = 0) -> Any:
    """Ones on the `offset` diagonal (JAX's lax._eye)."""
    mask = ew.eq(ew.add(shp.broadcasted_iota(np.int32, shape, 0), np.int32(offset)),
                 shp.broadcasted_iota(np.int32, shape, 1))
    return ew.convert_element_type(mask, dtype)


def _zeros_like(x: Any) -> Any:
    from pyjax._src.primitives.extra import full_like
    return full_like(x, 0)


def _tril(m: Any, k: int = 0) -> Any:
    *batch, rows, cols = np.shape(m)
    mask = shp.broadcast(_tri_mask((rows, cols), k), tuple(batch))
    return ew.select(mask, m, _zeros_like(m))


def _triu(m: Any, k: int = 0) -> Any:
    *batch, rows, cols = np.shape(m)
    mask = shp.broadcast(_tri_mask((rows, cols), k - 1), tuple(batch))
    return ew.select(mask, _zeros_like(m), m)


def _expand(x: Any, dims: Sequence[int]) -> Any:
    return shp.expand_dims(x, tuple(dims))


def _dot_fn(ndim: int) -> Callable:
    """lax.dot for matrices, batch_matmul for batches of them, both at HIGHEST precision."""
    if ndim == 2:
        return lambda a, b: dotp.dot(a, b, precision=_HIGHEST)
    return lambda a, b: dotp.batch_matmul(a, b, precision=_HIGHEST)


def _matmul(a: Any, b: Any, precision: Any = None) -> Any:
    """`a @ b` (jnp.matmul), optionally as under jax.default_matmul_precision."""
    from pyjax._src.numpy.lax_numpy import matmul
    return matmul(a, b, precision=precision)


def _extract_diagonal(s: Any) -> Any:
    """s[..., i, i] for i < min(rows, cols) (a gather, as JAX indexes it)."""
    i = shp.iota(np.int32, min(np.shape(s)[-2:]))
    return s[..., i, i]


def _construct_diagonal(s: Any) -> Any:
    """Diagonal matrices with diagonals s (a scatter into zeros, as JAX builds them)."""
    from pyjax._src.primitives.extra import full
    n = np.shape(s)[-1]
    i = shp.iota(np.int32, n)
    return full((*np.shape(s), n), 0, np.dtype(s.dtype)).at[..., i, i].set(s)


def _astype(x: Any, dtype: Any) -> Any:
    from pyjax._src.numpy.lax_numpy import astype
    return astype(x, dtype)


# ---------------------------------------------------------------------------------------------
# cholesky
# ---------------------------------------------------------------------------------------------

def _square(name: str, what: str = "The input to {} must be a square matrix. Got shape {}."
            ) -> Callable:
    def rule(shape: tuple, **_: Any) -> tuple:
        if shape[0] != shape[1]:
            raise ValueError(what.format(name, shape))
        return shape
    return rule


def _cholesky_impl(a: np.ndarray) -> np.ndarray:
    """potrf on the lower triangle; the upper one is left as it was (JAX takes tril after)."""
    if a.shape[0] == 0:
        return a.copy()
    if not a.flags.f_contiguous:  # a C-ordered a is LAPACK's a.T: factor that as U^H U with
        # U = L^T (for complex a too, its upper triangle being conj(A)'s), sparing the copy
        # into LAPACK's layout
        c, info = _lapack("potrf", a)(a.T, lower=0, clean=0)
        return c.T if info == 0 else _nan_like(a)
    c, info = _lapack("potrf", a)(a, lower=1, clean=0)
    return c if info == 0 else _nan_like(a)


def _cholesky_batched(a: np.ndarray) -> np.ndarray | None:
    """A batch at once with NumPy's potrf gufunc (lower triangle read, upper kept as given)."""
    n = a.shape[-1]
    if a.dtype not in _LAPACK_DTYPES or n == 0:
        return None
    if not _is_complex(a) and n <= _SMALL:  # reference potf2 as one native kernel, once built
        native = small_linalg.cholesky(a)
        if native is not None:
            return native
    (low,), failed = _gufunc("cholesky_lo", a, "c")
    out = np.where(np.tri(n, dtype=bool), low, a)
    return _redo_nans([out], a, lambda x: (_cholesky_impl(x),))[0] if failed else out


cholesky_p = linalg_primitive("cholesky", (_INEXACT,), (2,), _square("cholesky"), None,
                              _cholesky_impl, batched_impl=_cholesky_batched)


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """Lower-triangular L with x = L L^H for Hermitian positive-definite x (NaNs on failure);
    `symmetrize_input` first replaces x by (x + x^H) / 2, else only x's lower triangle is
    read."""
    if symmetrize_input:
        x = symmetrize(x)
    return _tril(cholesky_p.bind(x))


def _cholesky_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    """Forward mode from Murray (arXiv:1602.07527): L_dot = L phi(L^-1 sigma_dot L^-H)."""
    x, = primals
    sigma_dot, = tangents
    L = _tril(cholesky_p.bind(x))  # noqa: N806
    n = np.shape(x)[-1]

    def phi(X: Any) -> Any:  # noqa: N803 - the paper's name
        lower = _tril(X)
        return lower / _expand(ew._const(X, 1) + _eye(X.dtype, (n, n)), range(lower.ndim - 2))

    sigma_dot = ad.instantiate(sigma_dot)
    tmp = triangular_solve(L, sigma_dot, left_side=False, transpose_a=True, conjugate_a=True,
                           lower=True)
    inner = triangular_solve(L, tmp, left_side=True, transpose_a=False, lower=True)
    return L, dotp.batch_matmul(L, phi(inner), precision=_HIGHEST)


cholesky_p.jvp = _cholesky_jvp


# -- cholesky_update: rank-1 update of an upper factor, by Givens rotations ------------------

def _cholesky_update_shape(r: tuple, w: tuple) -> tuple:
    if r[0] != r[1] or w[0] != r[1]:
        raise ValueError("Rank-1 update to Cholesky decomposition takes a square matrix and a "
                         f"vector of the same size as input. Got shapes {r} and {w} instead")
    return r


def _cholesky_update_impl(r: np.ndarray, z: np.ndarray) -> np.ndarray:
    """R' with R'^T R' = R^T R + z z^T: one Givens rotation per row (JAX's algorithm)."""
    r, z = r.copy(), z.copy()
    with np.errstate(all="ignore"):
        for k in range(z.shape[0]):
            x, y = r[k, k], z[k]
            if y == 0:
                c, s = r.dtype.type(1), r.dtype.type(0)
            else:
                scale = max(abs(x), abs(y))
                xs, ys = x / scale, y / scale
                rh = 1 / np.sqrt(xs * xs + ys * ys)
                c, s = xs * rh, -ys * rh
            row = r[k, :].copy()
            r[k, :] = c * row - s * z
            z = c * z + s * row
    return r


cholesky_update_p = linalg_primitive(
    "cholesky_update", ((_FLOATING,), (_FLOATING,)), (2, 1), _cholesky_update_shape, None,
    _cholesky_update_impl, batching_ok=False)
cholesky_update_p.jvp = ad.unimplemented_rule(cholesky_update_p, "Differentiation")
cholesky_update_p.batch = ad.unimplemented_rule(cholesky_update_p, "Batching")


def cholesky_update(r_matrix: Any, w_vector: Any) -> Any:
    """The upper Cholesky factor of R^T R + w w^T, given the upper factor R (O(n^2))."""
    return cholesky_update_p.bind(r_matrix, w_vector)


# ---------------------------------------------------------------------------------------------
# triangular_solve
# ---------------------------------------------------------------------------------------------

def _triangular_solve_shape(a: tuple, b: tuple, *, left_side: bool = False, **_: Any) -> tuple:
    if a[0] != a[1]:
        raise ValueError("The first input to triangular_solve must be a square matrix. Got "
                         f"shape {a}.")
    if a[-1] != b[-2 if left_side else -1]:
        raise ValueError(f"Incompatible shapes for arguments to triangular_solve: {a} and {b}.")
    return b


def _triangular_solve_impl(a: np.ndarray, b: np.ndarray, *, left_side: bool, lower: bool,
                           transpose_a: bool, conjugate_a: bool, unit_diagonal: bool
                           ) -> np.ndarray:
    """trsm: op(a) x = b (left) or x op(a) = b; half precision is solved in float32."""
    import scipy.linalg.blas as blas  # noqa: PLC0415
    dtype = b.dtype
    if dtype not in _LAPACK_DTYPES:
        a, b = a.astype(np.float32), b.astype(np.float32)
    if b.size == 0:
        return np.zeros(b.shape, dtype)
    if conjugate_a and not transpose_a:
        a, conjugate_a = np.conj(a), False
    trans = (2 if conjugate_a else 1) if transpose_a else 0
    # BLAS reads Fortran order: a C-ordered operand is used as the transpose it is in that
    # order (no copy), the problem rewritten to match
    transposed_b = trans != 2 and b.ndim == 2 and not b.flags.f_contiguous
    if transposed_b:  # op(a) x = b  <=>  x^T op(a)^T = b^T (and the right-sided alike)
        b, left_side, trans = b.T, not left_side, 1 - trans
    if trans != 2 and not a.flags.f_contiguous:  # op(a) = op'(a^T), a^T's triangle flipped
        a, trans, lower = a.T, 1 - trans, not lower
    flops = a.shape[-1] * b.size * (4 if _is_complex(b) else 1)  # one product, as gemm's
    trsm = _blas_threaded(blas.get_blas_funcs("trsm", (a, b)), flops)
    with np.errstate(all="ignore"):
        x = trsm(1.0, a, b, side=0 if left_side else 1, lower=int(lower), trans_a=trans,
                 diag=int(unit_diagonal))
    x = np.asarray(x)
    return (x.T if transposed_b else x).astype(dtype, copy=False)


def _triangular_solve_batched(a: np.ndarray, b: np.ndarray, *, left_side: bool, lower: bool,
                              transpose_a: bool, conjugate_a: bool, unit_diagonal: bool
                              ) -> np.ndarray | None:
    """Substitution for a batch of small systems at once (trsm's order: one row of the
    solution at a time, times the diagonal's reciprocal)."""
    m = a.shape[-1]
    if b.dtype not in _LAPACK_DTYPES or m == 0 or m > _SMALL or b.size == 0:
        return None
    op = np.swapaxes(a, -1, -2) if transpose_a else a
    op = np.conj(op) if conjugate_a else op
    low = lower != transpose_a
    if not left_side:  # x op = b  <=>  op^T x^T = b^T
        op, b, low = np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2), not low
    x = np.array(b, copy=True)
    order = range(m) if low else range(m - 1, -1, -1)
    done: list[int] = []
    with np.errstate(all="ignore"):
        for i in order:
            if done:
                x[..., i, :] -= np.einsum("...j,...jk->...k", op[..., i, done], x[..., done, :])
            if not unit_diagonal:
                x[..., i, :] *= (1 / op[..., i, i])[..., None]
            done.append(i)
    return x if left_side else np.swapaxes(x, -1, -2)


triangular_solve_p = linalg_primitive(
    "triangular_solve", (_INEXACT, _INEXACT), (2, 2), _triangular_solve_shape, None,
    _triangular_solve_impl, batched_impl=_triangular_solve_batched)


def triangular_solve(a: Any, b: Any, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Any:
    """Solve op(a) x = b (left_side) or x op(a) = b for triangular a; op transposes and/or
    conjugates a.  A b of one rank less than a is a single vector."""
    conjugate_a = conjugate_a and dtypes.is_complex(dtypes.dtype_and_weak(a)[0])
    singleton = np.ndim(b) == np.ndim(a) - 1
    if singleton:
        b = _expand(b, (-1 if left_side else -2,))
    out = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                  transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                                  unit_diagonal=bool(unit_diagonal))
    if singleton:
        out = out[..., 0] if left_side else out[..., 0, :]
    return out


def _triangular_solve_jvp_a(g_a: Any, ans: Any, a: Any, b: Any, *, left_side: bool,
                            lower: bool, transpose_a: bool, conjugate_a: bool,
                            unit_diagonal: bool) -> Any:
    """d(op(A)^-1 B) = -op(A)^-1 op(dA) X, grouped to do the smaller product first."""
    m, n = np.shape(b)[-2:]
    k = 1 if unit_diagonal else 0
    g_a = _tril(g_a, k=-k) if lower else _triu(g_a, k=k)
    g_a = ew.neg(g_a)
    g_a = _T(g_a) if transpose_a else g_a
    g_a = _conj(g_a) if conjugate_a else g_a
    dot = _dot_fn(np.ndim(g_a))

    def a_inverse(rhs: Any) -> Any:
        return triangular_solve(a, rhs, left_side=left_side, lower=lower,
                                transpose_a=transpose_a, conjugate_a=conjugate_a,
                                unit_diagonal=unit_diagonal)

    if left_side:
        return a_inverse(dot(g_a, ans)) if m > n else dot(a_inverse(g_a), ans)
    return a_inverse(dot(ans, g_a)) if m < n else dot(ans, a_inverse(g_a))


def _triangular_solve_transpose(ct: Any, a: Any, b: Any, *, left_side: bool, lower: bool,
                                transpose_a: bool, conjugate_a: bool, unit_diagonal: bool
                                ) -> list:
    """Linear in b: solve with op(a) transposed."""
    assert not ad.is_undefined(a) and ad.is_undefined(b)
    if type(ct) is ad.Zero:
        return [None, ad.Zero(b.aval)]
    return [None, triangular_solve(a, ct, left_side=left_side, lower=lower,
                                   transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                   unit_diagonal=unit_diagonal)]


def _triangular_solve_batch(vals: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple:
    """Only b batched: fold the batch into b's free axis (one solve); else batch axes first."""
    a, b = vals
    da, db = dims
    if da is None:
        left = params["left_side"]
        b = batching.move_axis(b, db, np.ndim(b) - 1 if left else np.ndim(b) - 2)
        s = np.shape(b)
        flat = (shp.reshape(b, (*s[:-2], s[-2] * s[-1])) if left else
                shp.reshape(b, (*s[:-3], s[-3] * s[-2], s[-1])))
        out = triangular_solve(a, flat, **params)
        return shp.reshape(out, s), (len(s) - 1 if left else len(s) - 2)
    size = np.shape(a)[da]
    a = batching.bdim_at_front(a, da, size)
    b = batching.bdim_at_front(b, db, size)
    return triangular_solve(a, b, **params), 0


ad.defjvp2(triangular_solve_p, _triangular_solve_jvp_a,
           lambda g_b, _, a, b, **kw: triangular_solve(a, g_b, **kw))
triangular_solve_p.transpose = _triangular_solve_transpose
triangular_solve_p.batch = _triangular_solve_batch


# ---------------------------------------------------------------------------------------------
# eigh
# ---------------------------------------------------------------------------------------------

def _eigh_shape(shape: tuple, *, subset_by_index: Any, **_: Any) -> tuple:
    if shape[0] != shape[-1]:
        raise ValueError("Argument to symmetric eigendecomposition must have shape [..., n, n], "
                         f"got shape {shape}")
    n = shape[0]
    d = n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
    return (n, d), (d,)


def _eigh_impl(a: np.ndarray, *, lower: bool, sort_eigenvalues: bool, subset_by_index: Any,
               algorithm: Any) -> tuple:
    """syevd/heevd: eigenvalues ascending, eigenvectors as LAPACK normalises them."""
    n = a.shape[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("subset_by_index not supported on CPU and GPU")
    if algorithm == EighImplementation.QDWH:
        raise NotImplementedError("QDWH implementation is only supported on TPU")
    if algorithm == EighImplementation.JACOBI:
        raise NotImplementedError("Jacobi implementation is not supported on CPU")
    fn = _lapack("heevd" if _is_complex(a) else "syevd", a)
    if n == 0:
        return a.copy(), np.zeros((0,), _real_dtype(a.dtype))
    w, v, info = fn(a, compute_v=1, lower=int(lower))
    return (v, w) if info == 0 else (_failed_like(v), _failed_like(w))


def _eigh_batched(a: np.ndarray, *, lower: bool, sort_eigenvalues: bool,
                  subset_by_index: Any, algorithm: Any) -> list | None:
    """A batch of small matrices at once: syevd/heevd in a native loop over the batch on
    every core (tier1/small_lapack.py) once built, else NumPy's syevd/heevd gufunc."""
    n = a.shape[-1]
    if (a.dtype not in _LAPACK_DTYPES or not 0 < n <= _SMALL or algorithm not in
            (None, EighImplementation.QR)
            or not (subset_by_index is None or tuple(subset_by_index) == (0, n))):
        return None
    native = small_lapack.eigh(a, lower)
    if native is not None:
        return native
    params = dict(lower=lower, sort_eigenvalues=sort_eigenvalues,
                  subset_by_index=subset_by_index, algorithm=algorithm)
    outs, failed = _gufunc("eigh_lo" if lower else "eigh_up", a, "rc")
    if failed:
        _redo_nans(outs, a, lambda x: _eigh_impl(x, **params)[::-1])
    return outs[::-1]


eigh_p = linalg_primitive(
    "eigh", (_INEXACT,), (2,), _eigh_shape, lambda d, **_: (d, _real_dtype(d)), _eigh_impl,
    multiple_results=True, batched_impl=_eigh_batched)


def eigh(x: Any, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None,
         implementation: EighImplementation | None = None) -> tuple[Any, Any]:
    """(v, w): eigenvectors (columns) and ascending eigenvalues of Hermitian x."""
    if symmetrize_input:
        x = symmetrize(x)
    v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                       subset_by_index=None if subset_by_index is None else
                       tuple(subset_by_index), algorithm=implementation)
    return v, w


def _eigh_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, lower: bool,
              sort_eigenvalues: bool, subset_by_index: Any, algorithm: Any) -> tuple:
    """dw = diag(V^H dA V), dV = V (F * V^H dA V), F_ij = 1 / (w_j - w_i) off the diagonal."""
    a, = primals
    n = np.shape(a)[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    a_dot = ad.instantiate(tangents[0])
    v, w_real = eigh_p.bind(symmetrize(a), lower=lower, sort_eigenvalues=sort_eigenvalues,
                            subset_by_index=subset_by_index, algorithm=algorithm)
    w = _astype(w_real, a.dtype)
    eye_n = _eye(a.dtype, (n, n))
    f_mat = ew.integer_pow(eye_n + w[..., np.newaxis, :] - w[..., np.newaxis], -1) - eye_n
    dot = _dot_fn(np.ndim(a))
    vdag_adot_v = dot(dot(_H(v), a_dot), v)
    dv = dot(v, f_mat * vdag_adot_v)
    dw = _extract_diagonal(_real(vdag_adot_v))
    return (v, w_real), (dv, dw)


eigh_p.jvp = _eigh_jvp


# ---------------------------------------------------------------------------------------------
# svd
# ---------------------------------------------------------------------------------------------

def _svd_shape(shape: tuple, *, full_matrices: bool, compute_uv: bool, subset_by_index: Any,
               **_: Any) -> tuple:
    m, n = shape
    rank = min(m, n)
    if subset_by_index is not None:
        if full_matrices and tuple(subset_by_index) != (0, rank):
            raise ValueError("full_matrices and subset_by_index cannot both be set")
        rank = min(rank, subset_by_index[1] - subset_by_index[0])
    if compute_uv:
        return (rank,), (m, m if full_matrices else rank), (n if full_matrices else rank, n)
    return (rank,),


def _svd_dtype(dtype: np.dtype, *, compute_uv: bool, **_: Any) -> tuple:
    return (_real_dtype(dtype), dtype, dtype) if compute_uv else (_real_dtype(dtype),)


def _svd_impl(a: np.ndarray, *, full_matrices: bool, compute_uv: bool, subset_by_index: Any,
              algorithm: Any) -> tuple:
    """gesdd (gesvd for SvdAlgorithm.QR): (s, u, vt); empty matrices as JAX's _empty_svd."""
    m, n = a.shape
    if not (subset_by_index is None or tuple(subset_by_index) == (0, min(m, n))):
        raise NotImplementedError("subset_by_index not implemented for CPU and GPU")
    if algorithm in (SvdAlgorithm.JACOBI, SvdAlgorithm.POLAR):
        raise NotImplementedError(
            "The SVD Jacobi and Polar algorithms are not implemented on CPU.")
    fn = _lapack("gesvd" if algorithm == SvdAlgorithm.QR else "gesdd", a)
    if m == 0 or n == 0:
        s = np.zeros((0,), _real_dtype(a.dtype))
        if not compute_uv:
            return (s,)
        u = np.eye(m, dtype=a.dtype) if full_matrices else np.zeros((m, 0), a.dtype)
        vt = np.eye(n, dtype=a.dtype) if full_matrices else np.zeros((0, n), a.dtype)
        return s, u, vt
    u, s, vt, info = fn(a, compute_uv=int(compute_uv), full_matrices=int(full_matrices))
    if info != 0:
        u, s, vt = _failed_like(u), _failed_like(s), _failed_like(vt)
    return (s, u, vt) if compute_uv else (s,)


def _svd_batched(a: np.ndarray, *, full_matrices: bool, compute_uv: bool,
                 subset_by_index: Any, algorithm: Any) -> list | None:
    """A batch at once: gesdd in a native loop over the batch on every core
    (tier1/small_lapack.py) for small matrices once built, else NumPy's gesdd gufuncs:
    singular values of any size; the vectors only of small matrices (larger ones may differ
    from SciPy's in the last bits)."""
    m, n = a.shape[-2:]
    if (a.dtype not in _LAPACK_DTYPES or m == 0 or n == 0
            or (compute_uv and max(m, n) > _SMALL)
            or algorithm not in (None, SvdAlgorithm.DEFAULT, SvdAlgorithm.DIVIDE_AND_CONQUER)
            or not (subset_by_index is None or tuple(subset_by_index) == (0, min(m, n)))):
        return None
    if max(m, n) <= _SMALL:
        native = small_lapack.svd(a, full_matrices, compute_uv)
        if native is not None:
            return native
    params = dict(full_matrices=full_matrices, compute_uv=compute_uv,
                  subset_by_index=subset_by_index, algorithm=algorithm)
    outs, failed = (_gufunc("svd_f" if full_matrices else "svd_s", a, "crc") if compute_uv
                    else _gufunc("svd", a, "r"))
    outs = [outs[1], outs[0], outs[2]] if compute_uv else outs  # the primitive's (s, u, vt)
    return _redo_nans(outs, a, lambda x: _svd_impl(x, **params)) if failed else outs


svd_p = linalg_primitive("svd", (_INEXACT,), (2,), _svd_shape, _svd_dtype, _svd_impl,
                         multiple_results=True, batched_impl=_svd_batched)


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None, algorithm: SvdAlgorithm | None = None
        ) -> Any:
    """(u, s, vh) with x = u diag(s) vh and s descending; only s when not compute_uv."""
    result = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                        subset_by_index=None if subset_by_index is None else
                        tuple(subset_by_index), algorithm=algorithm)
    if compute_uv:
        s, u, v = result
        return u, s, v
    s, = result
    return s


def _svd_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, full_matrices: bool,
             compute_uv: bool, subset_by_index: Any, algorithm: Any = None) -> tuple:
    """JAX's SVD derivative (products at float32 precision, as JAX sets them)."""
    A, = primals  # noqa: N806
    dA = ad.instantiate(tangents[0])  # noqa: N806
    s, U, Vt = svd_p.bind(A, full_matrices=False, compute_uv=True,  # noqa: N806
                          subset_by_index=subset_by_index, algorithm=algorithm)
    m, n = np.shape(A)[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "Singular value decomposition JVP not implemented for full matrices")
    mm = functools.partial(_matmul, precision=_HIGHEST)
    Ut, V = _H(U), _H(Vt)  # noqa: N806
    s_dim = s[..., None, :]
    dS = mm(mm(Ut, dA), V)  # noqa: N806
    ds = _extract_diagonal(_real(dS))
    if not compute_uv:
        return (s,), (ds,)

    k = np.shape(s)[-1]
    s_diffs = (s_dim + _T(s_dim)) * (s_dim - _T(s_dim))
    s_diffs_zeros = _expand(_eye(s.dtype, (k, k)), range(np.ndim(s_diffs) - 2))
    F = 1 / (s_diffs + s_diffs_zeros) - s_diffs_zeros  # noqa: N806
    dSS = _astype(s_dim, A.dtype) * dS  # noqa: N806
    SdS = _astype(_T(s_dim), A.dtype) * dS  # noqa: N806
    s_zeros = _astype(s == 0, s.dtype)
    s_inv = 1 / (s + s_zeros) - s_zeros
    s_inv_mat = _construct_diagonal(s_inv)
    dUdV_diag = .5 * (dS - _H(dS)) * _astype(s_inv_mat, A.dtype)  # noqa: N806
    dU = mm(U, _astype(F, A.dtype) * (dSS + _H(dSS)) + dUdV_diag)  # noqa: N806
    dV = mm(V, _astype(F, A.dtype) * (SdS + _H(SdS)))  # noqa: N806
    if m > n:
        dAV = mm(dA, V)  # noqa: N806
        dU = dU + (dAV - mm(U, mm(Ut, dAV))) / _astype(s_dim, A.dtype)  # noqa: N806
    if n > m:
        dAHU = mm(_H(dA), U)  # noqa: N806
        dV = dV + (dAHU - mm(V, mm(Vt, dAHU))) / _astype(s_dim, A.dtype)  # noqa: N806
    return (s, U, Vt), (ds, dU, _H(dV))


svd_p.jvp = _svd_jvp


# ---------------------------------------------------------------------------------------------
# QR: geqrf / geqp3 (Householder form), householder_product (orgqr), ormqr, qr
# ---------------------------------------------------------------------------------------------

def _geqrf_impl(a: np.ndarray) -> tuple:
    m, n = a.shape
    fn = _lapack("geqrf", a)
    if m == 0 or n == 0:
        return a.copy(), np.zeros((0,), a.dtype)
    qr, tau, _, _ = fn(a)
    return qr, tau


geqrf_p = linalg_primitive("geqrf", (_INEXACT,), (2,),
                           lambda s: (s, (min(s),)), lambda d: (d, d), _geqrf_impl,
                           multiple_results=True)
geqrf_p.jvp = ad.unimplemented_rule(geqrf_p, "Differentiation")


def geqrf(a: Any) -> tuple[Any, Any]:
    """Householder QR: r in the upper triangle of the first result, the reflectors below it
    with their scalar factors (taus) in the second."""
    a_out, taus = geqrf_p.bind(a)
    return a_out, taus


def _geqp3_impl(a: np.ndarray, jpvt: np.ndarray, *, use_magma: Any) -> tuple:
    """Column-pivoted Householder QR; pivots are 1-based, as LAPACK (and SciPy) return them."""
    m, n = a.shape
    fn = _lapack("geqp3", a)
    if m == 0 or n == 0:
        return a.copy(), jpvt.copy(), np.zeros((0,), a.dtype)
    qr, piv, tau, _, _ = fn(a)
    return qr, piv.astype(jpvt.dtype), tau


geqp3_p = linalg_primitive(
    "geqp3", (_INEXACT, (_INTEGER,)), (2, 1), lambda s, p, **_: (s, p, (min(s),)),
    lambda d, pd, **_: (d, pd, d), _geqp3_impl, multiple_results=True, require_same=False)
geqp3_p.jvp = ad.unimplemented_rule(geqp3_p, "Differentiation")


def geqp3(a: Any, jpvt: Any, *, use_magma: bool | None = None) -> tuple[Any, Any, Any]:
    """Column-pivoted Householder QR: (a, jpvt, taus) with a[:, jpvt - 1] = q r."""
    a_out, jpvt_out, taus = geqp3_p.bind(a, jpvt, use_magma=use_magma)
    return a_out, jpvt_out, taus


def _householder_product_shape(a: tuple, taus: tuple) -> tuple:
    m, n = a
    if m < n:
        raise ValueError("The first argument to householder_product must have at least as many "
                         f"rows as columns, got shape {a}")
    if taus[0] > min(m, n):
        raise ValueError("The second argument to householder_product must not have more rows "
                         "than the minimum of the first argument's rows and columns.")
    return a


def _householder_product_impl(a: np.ndarray, taus: np.ndarray) -> np.ndarray:
    fn = _lapack("ungqr" if _is_complex(a) else "orgqr", a)
    if a.size == 0:
        return a.copy()
    q, _, info = fn(a, taus)
    return q


householder_product_p = linalg_primitive(
    "householder_product", (_INEXACT, _INEXACT), (2, 1), _householder_product_shape, None,
    _householder_product_impl)
householder_product_p.jvp = ad.unimplemented_rule(householder_product_p, "Differentiation")


def householder_product(a: Any, taus: Any) -> Any:
    """The unitary product of the Householder reflectors in a's lower triangle and taus."""
    return householder_product_p.bind(a, taus)


def _ormqr_shape(a: tuple, taus: tuple, c: tuple, *, left: bool, transpose: bool) -> tuple:
    m = a[0]
    if left and c[0] != m:
        raise ValueError("ormqr with left=True expects c to have the same number of rows as "
                         f"the Householder matrix a. Got a shape {a} and c shape {c}.")
    if not left and c[1] != m:
        raise ValueError("ormqr with left=False expects c to have the same number of columns "
                         f"as the Householder matrix a has rows. Got a shape {a} and c shape "
                         f"{c}.")
    return c


def _ormqr_impl(a: np.ndarray, taus: np.ndarray, c: np.ndarray, *, left: bool,
                transpose: bool) -> np.ndarray:
    """Q (m x m, from the reflectors) applied to c: ormqr/unmqr's result."""
    fn = _lapack("ungqr" if _is_complex(a) else "orgqr", a)
    m, k = a.shape[0], taus.shape[0]
    if m == 0 or c.size == 0:
        return c.copy()
    v = np.zeros((m, m), a.dtype)
    v[:, :min(k, a.shape[1])] = a[:, :min(k, a.shape[1])]
    q = fn(v, taus)[0] if k else np.eye(m, dtype=a.dtype)
    if transpose:
        q = q.conj().T
    return (q @ c if left else c @ q).astype(c.dtype)


ormqr_p = linalg_primitive("ormqr", (_INEXACT, _INEXACT, _INEXACT), (2, 1, 2), _ormqr_shape,
                           lambda d, *_, **__: d, _ormqr_impl)
ormqr_p.jvp = ad.unimplemented_rule(ormqr_p, "Differentiation")


def ormqr(a: Any, taus: Any, c: Any, *, left: bool = True, transpose: bool = False) -> Any:
    """Q c (left) or c Q, with Q^H for `transpose`, Q given by Householder reflectors (a, taus)
    as geqrf returns them; Q is never formed by the caller."""
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))


def _qr_shape(shape: tuple, *, pivoting: bool, full_matrices: bool, **_: Any) -> tuple:
    m, n = shape
    k = m if full_matrices else min(m, n)
    return ((m, k), (k, n), (n,)) if pivoting else ((m, k), (k, n))


def _qr_dtype(dtype: np.dtype, *, pivoting: bool, **_: Any) -> tuple:
    return (dtype, dtype, np.dtype(np.int32)) if pivoting else (dtype, dtype)


def _qr_impl(a: np.ndarray, *, pivoting: bool, full_matrices: bool, use_magma: Any) -> tuple:
    """geqrf (geqp3 when pivoting) then orgqr, as XLA-CPU computes it."""
    m, n = a.shape
    k = m if full_matrices else min(m, n)
    _lapack("geqrf", a)  # dtype check
    if m == 0 or n == 0:
        q, r = np.eye(m, k, dtype=a.dtype), np.zeros((k, n), a.dtype)
        return (q, r, np.zeros((n,), np.int32)) if pivoting else (q, r)
    if pivoting:
        r, p, taus = _geqp3_impl(a, np.zeros((n,), np.int32), use_magma=use_magma)
        p = p - 1
    else:
        r, taus = _geqrf_impl(a)
    if m < n:
        q = _householder_product_impl(r[:m, :m], taus)
    elif full_matrices:
        q = _householder_product_impl(np.pad(r, ((0, 0), (0, m - n))), taus)
    else:
        q = _householder_product_impl(r, taus)
        r = r[:n, :n]
    r = np.triu(r)
    return (q, r, p) if pivoting else (q, r)


qr_p = linalg_primitive("qr", (_INEXACT,), (2,), _qr_shape, _qr_dtype, _qr_impl,
                        multiple_results=True)


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple:
    """(q, r) with x = q r (q unitary, r upper triangular); (q, r, p) with x[:, p] = q r when
    `pivoting`.  Reduced shapes when not `full_matrices`."""
    q, r, *p = qr_p.bind(x, pivoting=bool(pivoting), full_matrices=bool(full_matrices),
                         use_magma=use_magma)
    return (q, r, p[0]) if pivoting else (q, r)


def _thin_qr_jvp(q: Any, r: Any, dx: Any) -> tuple:
    """JVP of the thin QR of [..., m, n] matrices with m >= n."""
    dx_rinv = triangular_solve(r, dx)
    qt_dx_rinv = _H(q) @ dx_rinv
    qt_dx_rinv_lower = _tril(qt_dx_rinv, -1)
    do = qt_dx_rinv_lower - _H(qt_dx_rinv_lower)  # skew-symmetric
    n = np.shape(r)[-1]
    eye = _expand(_eye(do.dtype, (n, n)), range(np.ndim(qt_dx_rinv) - 2))
    do = do + eye * (qt_dx_rinv - _astype(_real(qt_dx_rinv), qt_dx_rinv.dtype))
    dq = q @ (do - qt_dx_rinv) + dx_rinv
    dr = (qt_dx_rinv - do) @ r
    return dq, dr


def _qr_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, pivoting: bool,
            full_matrices: bool, use_magma: Any) -> tuple:
    x, = primals
    dx = ad.instantiate(tangents[0])
    q, r, *p = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices,
                         use_magma=use_magma)
    *_, m, n = np.shape(x)
    if pivoting:
        dx = dx[..., p[0]]
    if m < n:
        x2, dx1, dx2, r1 = x[..., :, m:], dx[..., :, :m], dx[..., :, m:], r[..., :, :m]
        dq, dr1 = _thin_qr_jvp(q, r1, dx1)
        dr2 = _H(dq) @ x2 + _H(q) @ dx2
        dr = shp.concatenate((dr1, dr2), np.ndim(dr1) - 1)
    else:
        q_mn = q[..., :, :n] if full_matrices else q
        r_nn = r[..., :n, :n] if full_matrices else r
        dq, dr = _thin_qr_jvp(q_mn, r_nn, dx)
        if full_matrices and m != n:
            dq, dr = _qr_jvp_complete(q, q_mn, dq, dr, m, n)
    if pivoting:
        return (q, r, p[0]), (dq, dr, ad.Zero.like(p[0]))
    return (q, r), (dq, dr)


def _qr_jvp_complete(q: Any, q_mn: Any, dq_mn: Any, dr_nn: Any, m: int, n: int) -> tuple:
    """Extend the thin JVP to the m - n extra columns of a complete Q (JAX's construction)."""
    from pyjax._src.primitives.extra import full
    q_nn, q_pn, q_mp = q_mn[..., :n, :], q_mn[..., n:, :], q[..., :, n:]
    dq_nn, dq_pn = dq_mn[..., :n, :], dq_mn[..., n:, :]
    eye = _expand(_eye(q_nn.dtype, (n, n)), range(np.ndim(q_nn) - 2))
    lu_factor, _, perm = lu(q_nn - eye)
    z_pn_H = lu_solve(lu_factor, perm, _H(q_pn), trans=2)  # noqa: N806 - solves A^H X = B
    z_pn = _H(z_pn_H)
    dq_mp = dq_mn @ z_pn_H - (q_mn + q_mp @ z_pn) @ _H(dq_pn - z_pn @ dq_nn)
    dq = shp.concatenate((dq_mn, dq_mp), np.ndim(dq_mn) - 1)
    zeros = full((*np.shape(dr_nn)[:-2], m - n, n), 0, dr_nn.dtype)
    dr = shp.concatenate((dr_nn, zeros), np.ndim(dr_nn) - 2)
    return dq, dr


qr_p.jvp = _qr_jvp


# ---------------------------------------------------------------------------------------------
# LU
# ---------------------------------------------------------------------------------------------

def _pivots_to_permutation(pivots: np.ndarray, size: int) -> np.ndarray:
    perm = np.arange(size, dtype=np.int32)
    for i, j in enumerate(pivots):
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def _lu_impl(a: np.ndarray) -> tuple:
    """getrf: (lu, 0-based pivots, permutation); a singular matrix is not an error."""
    m, n = a.shape
    fn = _lapack("getrf", a)
    if m == 0 or n == 0:
        return a.copy(), np.zeros((0,), np.int32), np.arange(m, dtype=np.int32)
    lu_, piv, info = fn(a)
    if info < 0:
        lu_ = _nan_like(lu_)
    piv = piv.astype(np.int32)
    return lu_, piv, _pivots_to_permutation(piv, m)


def _lu_batched(a: np.ndarray) -> list | None:
    """getf2 for a batch of small matrices at once: partial pivoting on the first largest
    |x| (|re| + |im| for complex, as i?amax), columns scaled by the pivot's reciprocal.  The
    batch axis is moved innermost, so every step works on contiguous rows of the batch."""
    *batch, m, n = a.shape
    if a.dtype not in _LAPACK_DTYPES or m == 0 or n == 0 or max(m, n) > _SMALL:
        return None
    if not _is_complex(a):  # the same steps as one native kernel, once it is compiled
        native = small_linalg.lu(a)
        if native is not None:
            return native
    x = np.moveaxis(a.reshape(-1, m, n), 0, -1).copy()  # (m, n, batch)
    size = x.shape[-1]
    lanes = np.arange(size)
    row_at = (np.arange(n) * size)[:, None] + lanes  # a row's flat positions, less its offset
    k = min(m, n)
    pivots = np.empty((k, size), np.int32)
    perm = np.repeat(np.arange(m, dtype=np.int32)[:, None], size, axis=1)
    flat, flat_perm = x.reshape(-1), perm.reshape(-1)
    with np.errstate(all="ignore"):
        for j in range(k):
            col = x[j:, j]
            mag = np.abs(col.real) + np.abs(col.imag) if _is_complex(x) else np.abs(col)
            p = j + np.argmax(mag, axis=0)
            pivots[j] = p
            _swap_rows(x, flat, j, p * (n * size) + row_at)
            _swap_rows(perm, flat_perm, j, p * size + lanes)
            d = x[j, j]
            scale = 1 / d
            scale[d == 0] = 1
            x[j + 1:, j] *= scale
            x[j + 1:, j + 1:] -= x[j + 1:, j, None] * x[j, None, j + 1:]
    return [np.ascontiguousarray(np.moveaxis(x, -1, 0)).reshape(a.shape),
            np.ascontiguousarray(pivots.T).reshape((*batch, k)),
            np.ascontiguousarray(perm.T).reshape((*batch, m))]


def _swap_rows(x: np.ndarray, flat: np.ndarray, j: int, at_p: np.ndarray) -> None:
    """Swap, in each batch lane, row j of x (batch innermost) with the row whose flat
    positions are at_p (flat: x's flat view)."""
    row_j = x[j].copy()
    x[j] = flat[at_p]
    flat[at_p] = row_j


lu_p = linalg_primitive(
    "lu", (_INEXACT,), (2,), lambda s: (s, (min(s),), (s[0],)),
    lambda d: (d, np.dtype(np.int32), np.dtype(np.int32)), _lu_impl, multiple_results=True,
    batched_impl=_lu_batched, lapack_layout=True)


def lu(x: Any) -> tuple[Any, Any, Any]:
    """(lu, pivots, permutation) with P x = L U: L (unit diagonal, implicit) below lu's
    diagonal, U on and above it; pivots are LAPACK's row swaps, permutation their product."""
    return tuple(lu_p.bind(x))


def _lu_jvp_inner(lu_: Any, a_dot: Any, permutation: Any) -> Any:
    """d(LU) for one matrix: L^-1 P dA U^-1 split into its strict lower and upper parts."""
    m, n = np.shape(a_dot)
    dtype = a_dot.dtype
    k = min(m, n)
    zero = ew._const(lu_, 0)
    l = shp.pad(_tril(lu_[:, :k], -1), zero, ((0, 0, 0), (0, m - k, 0)))  # noqa: E741
    l = l + _eye(dtype, (m, m))  # noqa: E741
    u_eye = shp.pad(_eye(dtype, (n - k, n - k)), zero, ((k, 0, 0), (k, 0, 0)))
    u = shp.pad(_triu(lu_[:k, :]), zero, ((0, n - k, 0), (0, 0, 0))) + u_eye
    la = triangular_solve(l, a_dot[permutation], left_side=True, transpose_a=False, lower=True,
                          unit_diagonal=True)
    lau = triangular_solve(u, la, left_side=False, transpose_a=False, lower=False)
    l_dot = _matmul(l, _tril(lau, -1), precision=_HIGHEST)
    u_dot = _matmul(_triu(lau), u, precision=_HIGHEST)
    return l_dot + u_dot


def _lu_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    from pyjax._src.transforms.batching import vmap
    a, = primals
    a_dot = ad.instantiate(tangents[0])
    lu_, pivots, permutation = lu_p.bind(a)
    fn = _lu_jvp_inner
    for _ in np.shape(a)[:-2]:
        fn = vmap(fn)
    lu_dot = fn(lu_, a_dot, permutation)
    return (lu_, pivots, permutation), (lu_dot, ad.Zero.like(pivots), ad.Zero.like(permutation))


lu_p.jvp = _lu_jvp


def _pivots_shape(shape: tuple, *, permutation_size: int) -> tuple:
    if not permutation_size >= shape[0]:
        raise ValueError(f"Output permutation size {permutation_size} has to exceed the "
                         f"trailing dimension of the pivots. Got pivots size {shape[0]}")
    return (permutation_size,)


lu_pivots_to_permutation_p = linalg_primitive(
    "lu_pivots_to_permutation", (("int32",),), (1,), _pivots_shape, None,
    lambda p, *, permutation_size: _pivots_to_permutation(p, permutation_size))
ad.defjvp_zero(lu_pivots_to_permutation_p)


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation (int32, [..., permutation_size]) made by LU's row swaps `pivots`."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


def _lu_solve_core(lu_: Any, permutation: Any, b: Any, trans: int) -> Any:
    """One system: b ([m, ...]) flattened to [m, k], solved with the LU factors."""
    from pyjax._src.primitives.extra import sort_key_val
    m = np.shape(lu_)[0]
    x = shp.reshape(b, (m, int(np.prod(np.shape(b)[1:], dtype=int))))
    if trans == 0:
        x = triangular_solve(lu_, x[permutation, :], left_side=True, lower=True,
                             unit_diagonal=True)
        x = triangular_solve(lu_, x, left_side=True, lower=False)
    elif trans in (1, 2):
        conj = trans == 2
        x = triangular_solve(lu_, x, left_side=True, lower=False, transpose_a=True,
                             conjugate_a=conj)
        x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True,
                             transpose_a=True, conjugate_a=conj)
        _, ind = sort_key_val(permutation, shp.iota(np.int32, np.shape(permutation)[0]))
        x = x[ind, :]
    else:
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    return shp.reshape(x, np.shape(b))


def _lu_solve(lu_: Any, permutation: Any, b: Any, trans: int) -> Any:
    """lu_solve's body (staged as `jit[name=_lu_solve]`, as JAX jits it)."""
    from pyjax._src.primitives.extra import broadcast_shapes
    from pyjax._src.transforms.batching import vmap
    lu_shape, b_shape = np.shape(lu_), np.shape(b)
    if len(lu_shape) < 2 or lu_shape[-1] != lu_shape[-2]:
        raise ValueError("last two dimensions of LU decomposition must be equal, got shape "
                         f"{lu_shape}")
    if len(b_shape) < 1:
        raise ValueError(f"b matrix must have rank >= 1, got shape {b_shape}")
    vector = len(lu_shape) == len(b_shape) + 1
    if vector:
        if b_shape[-1] != lu_shape[-1]:
            raise ValueError("When LU decomposition matrix and b have the same number of "
                             f"dimensions, last axis of LU decomposition matrix (shape "
                             f"{lu_shape}) and b array (shape {b_shape}) must match")
        b = b[..., np.newaxis]
    elif b_shape[-2] != lu_shape[-1]:
        raise ValueError("When LU decomposition matrix and b different numbers of dimensions, "
                         f"last axis of LU decomposition matrix (shape {lu_shape}) and second "
                         f"to last axis of b array (shape {b_shape}) must match")
    batch = broadcast_shapes(lu_shape[:-2], np.shape(permutation)[:-1], np.shape(b)[:-2])

    def to(x: Any, core: tuple) -> Any:
        shape = (*batch, *core)
        return shp.broadcast_in_dim(x, shape, tuple(range(len(shape) - np.ndim(x),
                                                          len(shape))))

    lu_ = to(lu_, lu_shape[-2:])
    permutation = to(permutation, np.shape(permutation)[-1:])
    b = to(b, np.shape(b)[-2:])
    fn = _lu_solve_core
    for _ in batch:
        fn = vmap(fn, in_axes=(0, 0, 0, None))
    x = fn(lu_, permutation, b, trans)
    return x[..., 0] if vector else x


@functools.lru_cache(maxsize=None)
def _lu_solve_jit() -> Callable:
    from pyjax._src.transforms.jit import jit
    return jit(_lu_solve, static_argnums=(3,))


def lu_solve(lu_: Any, permutation: Any, b: Any, trans: int = 0) -> Any:
    """Solve A x = b (trans 0), A^T x = b (1) or A^H x = b (2) from A's LU factors; b is
    [..., m] or [..., m, k] and broadcasts against the factors' batch axes."""
    return _lu_solve_jit()(lu_, permutation, b, trans)


def _broadcasted_matvec(a: Any, b: Any) -> Any:
    """(..., n, m) @ (..., m) -> (..., n), batch axes broadcast (HIGHEST precision)."""
    from pyjax._src.primitives.extra import broadcast_shapes
    batch = broadcast_shapes(np.shape(a)[:-2], np.shape(b)[:-1])
    nb = len(batch)

    def to(x: Any, shape: tuple) -> Any:
        return shp.broadcast_in_dim(x, shape, tuple(range(len(shape) - np.ndim(x),
                                                          len(shape))))

    a = to(a, (*batch, *np.shape(a)[-2:]))
    b = to(b, (*batch, np.shape(b)[-1]))
    dims = (((np.ndim(a) - 1,), (np.ndim(b) - 1,)), (tuple(range(nb)), tuple(range(nb))))
    return dotp.dot_general(a, b, dims, precision=_HIGHEST)


def _check_solve_shapes(a: Any, b: Any) -> None:
    """a is [..., m, m] and b is [..., m, k] or [..., m] (JAX's message otherwise)."""
    a_shape, b_shape = np.shape(a), np.shape(b)
    if not (len(a_shape) >= 2 and len(b_shape) in (len(a_shape), len(a_shape) - 1)
            and a_shape[-1] == a_shape[-2] == b_shape[len(a_shape) - 2]):
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and "
                         f"b=[..., m, k] or b=[..., m]; got a={a_shape} and b={b_shape}")


def _solve(a: Any, b: Any) -> Any:
    """a^-1 b for a [..., m, m] and b [..., m] or [..., m, k] (JAX's lax_linalg._solve): one
    LU of stop_gradient(a), reused by custom_linear_solve for the derivatives."""
    from pyjax._src.primitives.control_flow import custom_linear_solve
    from pyjax._src.primitives.extra import stop_gradient
    from pyjax._src.transforms.batching import vmap
    a_shape, b_shape = np.shape(a), np.shape(b)
    _check_solve_shapes(a, b)
    out_shape = tuple(da if db == 1 else db for da, db in zip((*a_shape[:-1], 1), b_shape))
    b = shp.broadcast_in_dim(b, out_shape, tuple(range(len(b_shape))))
    lu_, _, permutation = lu(stop_gradient(a))

    def custom_solve(rhs: Any) -> Any:
        return custom_linear_solve(
            lambda x: _broadcasted_matvec(a, x), rhs,
            solve=lambda _, x: lu_solve(lu_, permutation, x, trans=0),
            transpose_solve=lambda _, x: lu_solve(lu_, permutation, x, trans=1))

    if len(a_shape) == len(b_shape) + 1:
        return custom_solve(b)
    return vmap(custom_solve, len(b_shape) - 1, max(len(a_shape), len(b_shape)) - 1)(b)


# ---------------------------------------------------------------------------------------------
# eig (general matrices), schur, hessenberg, tridiagonal
# ---------------------------------------------------------------------------------------------

def _eig_shape(shape: tuple, *, compute_left_eigenvectors: bool,
               compute_right_eigenvectors: bool, **_: Any) -> tuple:
    if shape[0] != shape[1]:
        raise ValueError(f"The input to eig must be a square matrix. Got shape {shape}.")
    return (shape[:-1],) + (shape,) * (compute_left_eigenvectors + compute_right_eigenvectors)


def _eig_dtype(dtype: np.dtype, *, compute_left_eigenvectors: bool,
               compute_right_eigenvectors: bool, **_: Any) -> tuple:
    return (_complex_dtype(dtype),) * (
        1 + compute_left_eigenvectors + compute_right_eigenvectors)


def _unpack_real_eigenvectors(wi: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Real geev stores a conjugate pair's vectors as (re, im) in consecutive columns."""
    out = v.astype(_complex_dtype(v.dtype))
    j = 0
    while j < len(wi):
        if wi[j] != 0 and j + 1 < len(wi):
            out[:, j] = v[:, j] + 1j * v[:, j + 1]
            out[:, j + 1] = v[:, j] - 1j * v[:, j + 1]
            j += 2
        else:
            j += 1
    return out


def _eig_impl(a: np.ndarray, *, compute_left_eigenvectors: bool,
              compute_right_eigenvectors: bool, enable_eigvec_derivs: bool,
              implementation: Any) -> tuple:
    """geev: eigenvalues (complex) and unit-norm eigenvectors, largest component real."""
    if implementation and implementation != EigImplementation.LAPACK:
        raise ValueError("Only the lapack implementation is supported on CPU.")
    fn = _lapack("geev", a)
    n = a.shape[0]
    cdt = _complex_dtype(a.dtype)
    if n == 0:
        w, vl, vr = np.zeros((0,), cdt), np.zeros((0, 0), cdt), np.zeros((0, 0), cdt)
    elif _is_complex(a):
        w, vl, vr, info = fn(a, compute_vl=1, compute_vr=1)
    else:
        wr, wi, vl, vr, info = fn(a, compute_vl=1, compute_vr=1)
        w = (wr + 1j * wi).astype(cdt)
        vl, vr = _unpack_real_eigenvectors(wi, vl), _unpack_real_eigenvectors(wi, vr)
    if n and info != 0:
        w, vl, vr = _nan_like(w), _nan_like(vl), _nan_like(vr)
    out = [w]
    if compute_left_eigenvectors:
        out.append(vl)
    if compute_right_eigenvectors:
        out.append(vr)
    return tuple(out)


eig_p = linalg_primitive("eig", (_INEXACT,), (2,), _eig_shape, _eig_dtype, _eig_impl,
                         multiple_results=True)


def eig(x: Any, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation: EigImplementation | None = None, use_magma: bool | None = None
        ) -> list:
    """[w, vl, vr]: eigenvalues and left/right eigenvectors (those asked for) of a general
    square matrix, all complex."""
    if use_magma is not None:
        import warnings
        note_side_effect()
        warnings.warn("use_magma is deprecated, please use "
                      "implementation=EigImplementation.MAGMA instead.", DeprecationWarning,
                      stacklevel=2)
        implementation = EigImplementation.MAGMA if use_magma else EigImplementation.LAPACK
    return eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                      compute_right_eigenvectors=bool(compute_right_eigenvectors),
                      enable_eigvec_derivs=bool(enable_eigvec_derivs),
                      implementation=implementation)


def _eig_vec_jvp(dot: Callable, w: Any, v: Any, da: Any) -> tuple:
    """Eigenvalue and eigenvector tangents under geev's normalisation (unit norm, largest
    component real)."""
    n = np.shape(w)[-1]
    eye_n = _eye(w.dtype, (n, n))
    Fmat = ew.div(ew._const(eye_n, 1), eye_n + w[..., None, :] - w[..., None]) - eye_n  # noqa: N806
    P = dot(_solve(v, da), v)  # noqa: N806
    dw = _extract_diagonal(P)
    U = dot(v, Fmat * P)  # noqa: N806
    axis = np.ndim(v) - 2
    from pyjax._src.primitives.reductions import argmax
    k = argmax(ew.abs(v), axis, np.int32)
    mask = _astype(shp.broadcasted_iota(np.int32, np.shape(v), axis) == _expand(k, (axis,)),
                   v.dtype)
    c = ew.complex(-_real(_conj(v) * U).sum(-2),
                   -ew.imag(mask * U).sum(-2) / _real(mask * v).sum(-2))
    return dw, U + v * _expand(c, (axis,))


def _eig_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
             compute_left_eigenvectors: bool, compute_right_eigenvectors: bool,
             enable_eigvec_derivs: bool, implementation: Any) -> tuple:
    a, = primals
    da = ad.instantiate(tangents[0])
    if (compute_left_eigenvectors or compute_right_eigenvectors) and not enable_eigvec_derivs:
        raise NotImplementedError(
            'Derivatives of non-symmetric eigenvectors are only valid under assumptions on '
            'the input that JAX cannot check (see the enable_eigvec_derivs argument to '
            'jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to jax.lax.linalg.eig to opt '
            'in. See https://github.com/jax-ml/jax/issues/2748 for discussion.')
    outs = eig(a, compute_left_eigenvectors=compute_left_eigenvectors,
               compute_right_eigenvectors=True, enable_eigvec_derivs=enable_eigvec_derivs,
               implementation=implementation)
    w, vr = outs[0], outs[-1]
    dot = _dot_fn(np.ndim(a))
    da = _astype(da, vr.dtype)
    if not (compute_left_eigenvectors or compute_right_eigenvectors):
        return [w], [(_solve(vr, da) * _T(vr)).sum(-1)]
    dw, dvr = _eig_vec_jvp(dot, w, vr, da)
    primal_out, tangent_out = [w], [dw]
    if compute_left_eigenvectors:
        _, dvl = _eig_vec_jvp(dot, _conj(w), outs[1], _H(da))
        primal_out.append(outs[1])
        tangent_out.append(dvl)
    if compute_right_eigenvectors:
        primal_out.append(vr)
        tangent_out.append(dvr)
    return primal_out, tangent_out


eig_p.jvp = _eig_jvp


def _schur_impl(a: np.ndarray, *, compute_schur_vectors: bool, sort_eig_vals: bool,
                select_callable: Any) -> tuple:
    """gees without sorting: (T, Q) with a = Q T Q^H (T quasi-triangular for real a)."""
    if sort_eig_vals:
        raise NotImplementedError(
            "The sort feature of LAPACK's gees routine is not implemented.")
    fn = _lapack("gees", a)
    if a.shape[0] == 0:
        t, vs = a.copy(), a.copy()
    else:
        res = fn(lambda *_: None, a, compute_v=int(compute_schur_vectors), sort_t=0)
        t, vs, info = res[0], res[-3], res[-1]
        if info != 0:
            t, vs = _nan_like(t), _nan_like(vs)
    return (t, vs) if compute_schur_vectors else (t,)


schur_p = linalg_primitive(
    "schur", (_INEXACT,), (2,),
    lambda s, *, compute_schur_vectors, **_: (
        _square("schur")(s),) * (2 if compute_schur_vectors else 1),
    lambda d, *, compute_schur_vectors, **_: (d,) * (2 if compute_schur_vectors else 1),
    _schur_impl, multiple_results=True)
schur_p.jvp = ad.unimplemented_rule(schur_p, "Differentiation")


def schur(x: Any, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: Callable[..., Any] | None = None) -> Any:
    """(T, Q) with x = Q T Q^H, T (quasi-)upper triangular; only T unless
    compute_schur_vectors.  Sorting is not supported (as on JAX's CPU)."""
    return schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors),
                        sort_eig_vals=bool(sort_eig_vals), select_callable=select_callable)


def _hessenberg_shape(shape: tuple) -> tuple:
    if shape[0] != shape[-1]:
        raise ValueError("Argument to Hessenberg reduction must have shape [..., n, n], got "
                         f"shape {shape}")
    return shape, (shape[-1] - 1,)


def _hessenberg_impl(a: np.ndarray) -> tuple:
    fn = _lapack("gehrd", a)
    n = a.shape[0]
    if n <= 1:
        return a.copy(), np.zeros((max(n - 1, 0),), a.dtype)
    h, tau, info = fn(a, lo=0, hi=n - 1)
    if info != 0:
        h, tau = _nan_like(h), _nan_like(tau)
    return h, tau[:n - 1]


hessenberg_p = linalg_primitive("hessenberg", (_INEXACT,), (2,), _hessenberg_shape,
                                lambda d: (d, d), _hessenberg_impl, multiple_results=True)
hessenberg_p.jvp = ad.unimplemented_rule(hessenberg_p, "Differentiation")


def hessenberg(a: Any) -> tuple[Any, Any]:
    """(a, taus): upper Hessenberg form in a's upper triangle and first subdiagonal, the
    Householder reflectors below it with their scalar factors taus."""
    h, taus = hessenberg_p.bind(a)
    return h, taus


def _tridiagonal_shape(shape: tuple, **_: Any) -> tuple:
    if shape[0] != shape[1] or shape[1] == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape {shape}.")
    n = shape[0]
    return shape, (n,), (n - 1,), (n - 1,)


def _tridiagonal_impl(a: np.ndarray, *, lower: bool) -> tuple:
    fn = _lapack("hetrd" if _is_complex(a) else "sytrd", a)
    c, d, e, tau, info = fn(a, lower=int(lower))
    if info != 0:
        c, d, e, tau = map(_nan_like, (c, d, e, tau))
    return c, d, e, tau


tridiagonal_p = linalg_primitive(
    "tridiagonal", (_INEXACT,), (2,), _tridiagonal_shape,
    lambda d, **_: (d, _real_dtype(d), _real_dtype(d), d), _tridiagonal_impl,
    multiple_results=True)
tridiagonal_p.jvp = ad.unimplemented_rule(tridiagonal_p, "Differentiation")


def tridiagonal(a: Any, *, lower: bool = True) -> tuple[Any, Any, Any, Any]:
    """(a, d, e, taus): the tridiagonal reduction of Hermitian a (its `lower` triangle read);
    d the diagonal, e the sub(super)diagonal, reflectors in a and taus."""
    from pyjax._src.primitives.extra import asarray
    return tuple(tridiagonal_p.bind(asarray(a), lower=bool(lower)))


# ---------------------------------------------------------------------------------------------
# symmetric_product, tridiagonal_solve
# ---------------------------------------------------------------------------------------------

def _symmetric_product_shape(a: tuple, c: tuple, **_: Any) -> tuple:
    if a[0] != c[1] or c[0] != c[1]:
        raise ValueError("symmetric_update expects a rectangular matrix of shape (m, n) and a "
                         f"square matrix of shape (n, n). Got shapes {a} and {c}.")
    return c


def _symmetric_product_impl(a: np.ndarray, c: np.ndarray, *, alpha: float, beta: float
                            ) -> np.ndarray:
    wide = np.float32 if a.dtype.itemsize < 4 else a.dtype
    aw = a.astype(wide)
    return (alpha * (aw @ aw.T) + beta * c.astype(wide)).astype(c.dtype)


symmetric_product_p = linalg_primitive(
    "symmetric_product", ((_FLOATING,), (_FLOATING,)), (2, 2), _symmetric_product_shape, None,
    _symmetric_product_impl)
symmetric_product_p.jvp = ad.unimplemented_rule(symmetric_product_p, "Differentiation")


def symmetric_product(a_matrix: Any, c_matrix: Any, *, alpha: float = 1., beta: float = 0.,
                      symmetrize_output: bool = False) -> Any:
    """alpha A A^T + beta C (only the lower triangle is guaranteed unless
    `symmetrize_output`, which mirrors it into the upper one)."""
    result = symmetric_product_p.bind(a_matrix, c_matrix, alpha=alpha, beta=beta)
    if symmetrize_output:
        result = _tril(result, k=0) + _T(_tril(result, k=-1))
    return result


def _tridiagonal_solve_shape(dl: tuple, d: tuple, du: tuple, b: tuple, **_: Any) -> tuple:
    if dl != d or dl != du:
        raise TypeError("tridiagonal_solve requires that all diagonal arguments have the same "
                        "shape.")
    if dl != b[:-1]:
        raise TypeError("tridiagonal_solve requires that the leading ndim-1 dimensions of b "
                        "equal the dimensions of the diagonal arguments.")
    return b


def _tridiagonal_solve_impl(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray, *,
                            perturb_singular: bool) -> np.ndarray:
    """gtsv (LU with partial pivoting); NaNs for a singular system unless perturb_singular,
    which nudges tiny pivots by eps * max|U| (as JAX documents its kernel; the values agree
    with JAX's on the systems tested)."""
    if perturb_singular:
        return _tridiagonal_solve_perturbed(dl, d, du, b)
    fn = _lapack("gtsv", b)
    if b.size == 0:
        return b.copy()
    *_, x, info = fn(dl[1:], d, du[:-1], b)
    return x if info == 0 else _nan_like(b)


def _tridiagonal_solve_perturbed(dl: np.ndarray, d: np.ndarray, du: np.ndarray,
                                 b: np.ndarray) -> np.ndarray:
    """gttrf-style elimination with row interchanges, zero or tiny pivots perturbed."""
    m = d.shape[0]
    if m == 0 or b.size == 0:
        return b.copy()
    # U has three diagonals after pivoting: u0 (diagonal), u1, u2 above it
    u0, u1, u2 = d.astype(b.dtype).copy(), np.zeros(m, b.dtype), np.zeros(m, b.dtype)
    u1[:m - 1] = du[:m - 1]
    low = dl.astype(b.dtype).copy()
    x = b.copy()
    for i in range(m - 1):
        if abs(low[i + 1]) > abs(u0[i]):  # swap rows i and i+1
            u0[i], low[i + 1] = low[i + 1], u0[i]
            u1[i], u0[i + 1] = u0[i + 1], u1[i]
            if i + 2 <= m - 1:
                u2[i], u1[i + 1] = u1[i + 1], u2[i]
            x[[i, i + 1]] = x[[i + 1, i]]
        f = low[i + 1] / u0[i] if u0[i] != 0 else 0
        u0[i + 1] -= f * u1[i]
        if i + 2 <= m - 1:
            u1[i + 1] -= f * u2[i]
        x[i + 1] -= f * x[i]
    tiny = np.finfo(u0.dtype).eps * max(np.abs(u0).max(), np.abs(u1).max(), np.abs(u2).max(),
                                        np.finfo(u0.dtype).tiny)
    u0 = np.where(np.abs(u0) < tiny, np.where(u0.real < 0, -tiny, tiny), u0)
    for i in range(m - 1, -1, -1):
        acc = x[i]
        if i + 1 < m:
            acc = acc - u1[i] * x[i + 1]
        if i + 2 < m:
            acc = acc - u2[i] * x[i + 2]
        x[i] = acc / u0[i]
    return x


tridiagonal_solve_p = linalg_primitive(
    "tridiagonal_solve", (_INEXACT,) * 4, (1, 1, 1, 2), _tridiagonal_solve_shape, None,
    _tridiagonal_solve_impl)


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *, perturb_singular: bool = False
                      ) -> Any:
    """X with A X = B for tridiagonal A given by its diagonals (dl[0] and du[-1] unused)."""
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))


def _tridiagonal_product(dl: Any, d: Any, du: Any, b: Any) -> Any:
    y = shp.reshape(d, (*np.shape(d), 1)) * b
    y = y.at[..., 1:, :].add(dl[..., 1:, None] * b[..., :-1, :])
    return y.at[..., :-1, :].add(du[..., :-1, None] * b[..., 1:, :])


def _tridiagonal_solve_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                           perturb_singular: bool) -> tuple:
    """d(A^-1 B) = A^-1 (dB - dA X)."""
    *diags, _ = primals
    *diags_dot, b_dot = tangents
    ans = tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
    if all(type(t) is ad.Zero for t in diags_dot):
        rhs = b_dot
    else:
        matvec_dot = _tridiagonal_product(*map(ad.instantiate, diags_dot), ans)
        rhs = ad.add_tangents(b_dot, -matvec_dot)
    return ans, tridiagonal_solve_p.bind(*diags, ad.instantiate(rhs),
                                         perturb_singular=perturb_singular)


def _tridiagonal_solve_transpose(ct: Any, dl: Any, d: Any, du: Any, b: Any, *,
                                 perturb_singular: bool) -> list:
    """Linear in b: solve with the transposed matrix (dl and du swapped and shifted)."""
    from pyjax._src.primitives.extra import full_like
    assert not any(ad.is_undefined(x) for x in (dl, d, du)) and ad.is_undefined(b)
    if type(ct) is ad.Zero:
        return [None, None, None, ad.Zero(b.aval)]
    dl_t = shp.concatenate((full_like(du[..., -1:], 0), du[..., :-1]), np.ndim(du) - 1)
    du_t = shp.concatenate((dl[..., 1:], full_like(dl[..., :1], 0)), np.ndim(dl) - 1)
    return [None, None, None, tridiagonal_solve(dl_t, d, du_t, ct,
                                                perturb_singular=perturb_singular)]


def _tridiagonal_solve_batch(vals: Sequence[Any], dims: Sequence[Any], *,
                             perturb_singular: bool) -> tuple:
    """Only b batched: fold the batch into b's columns; else every batch axis to the front."""
    dl, d, du, b = vals
    if dims[0] is None and dims[1] is None and dims[2] is None:
        b = batching.move_axis(b, dims[3], np.ndim(b) - 2)
        s = np.shape(b)
        flat = shp.reshape(b, (*s[:-3], s[-3], s[-2] * s[-1]))
        out = tridiagonal_solve(dl, d, du, flat, perturb_singular=perturb_singular)
        return shp.reshape(out, s), len(s) - 2
    size = next(np.shape(v)[i] for v, i in zip(vals, dims) if i is not None)
    dl, d, du, b = (batching.bdim_at_front(v, i, size) for v, i in zip(vals, dims))
    return tridiagonal_solve(dl, d, du, b, perturb_singular=perturb_singular), 0


tridiagonal_solve_p.jvp = _tridiagonal_solve_jvp
tridiagonal_solve_p.transpose = _tridiagonal_solve_transpose
tridiagonal_solve_p.batch = _tridiagonal_solve_batch
