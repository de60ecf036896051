"""jnp.linalg: values against NumPy and against JAX 0.10.2's recorded results (dtypes, shapes,
weak types), the jaxprs JAX printed for the same programs byte for byte, its error texts,
derivatives (numerical, order 2) and batching.  Recordings: tests/data/numpy_linalg.json,
made by tests/oracle/record_numpy_linalg.py."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.test_util import check_grads

from op_table import x64_mode
from recorded import by_name, cases_under, check_jaxpr, check_raises, load

from record_numpy_linalg import jaxpr_cases, value_cases

LA = jnp.linalg
DATA = load("numpy_linalg.json")
JAXPRS = by_name(r for r in DATA["records"] if r["kind"] == "jaxpr")
VALUES = by_name(r for r in DATA["records"] if r["kind"] == "value")

_GRAD_OF_JIT = "grad of a jit call is inlined, where JAX keeps two jit[name=...] calls"
#: recorded jaxprs pyjax does not print yet, with the part of pyjax (not jnp.linalg) at fault;
#: strict: a case that starts matching must leave this table
KNOWN_DIFFERENCES = {
    "grad_eigvalsh": _GRAD_OF_JIT,
}


def _cases(fn_cases, x64: bool) -> dict:
    return cases_under(lambda jax, jnp, lax, np: fn_cases(jax, jnp, np), x64)


# ---------------------------------------------------------------------------------------------
# jaxprs and errors, byte for byte
# ---------------------------------------------------------------------------------------------

def _jaxpr_params():
    for name, x64 in sorted(JAXPRS):
        marks = ([pytest.mark.xfail(reason=KNOWN_DIFFERENCES[name], strict=True)]
                 if name in KNOWN_DIFFERENCES else [])
        yield pytest.param(name, x64, marks=marks, id=f"{name}-{'x64' if x64 else 'x32'}")


@pytest.mark.parametrize("name,x64", list(_jaxpr_params()))
def test_jaxpr_matches_jax(name: str, x64: bool) -> None:
    record = JAXPRS[(name, x64)]
    fn, args = _cases(jaxpr_cases, x64)[name]
    with x64_mode(x64):
        check_jaxpr(fn, args, record)


def test_enough_jaxprs_match() -> None:
    """At least 15 distinct programs print exactly as JAX prints them."""
    assert len({n for n, _ in JAXPRS} - set(KNOWN_DIFFERENCES)) >= 15


# ---------------------------------------------------------------------------------------------
# eager values against JAX's
# ---------------------------------------------------------------------------------------------

def _decode(rec: dict) -> np.ndarray:
    if "real" in rec:
        flat = np.array(rec["real"]) + 1j * np.array(rec["imag"])
    else:
        flat = np.array([float(v) for v in rec["value"]])
    return flat.reshape(rec["shape"])


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("name", sorted({n for n, _ in VALUES}))
def test_values_match_jax(name: str, x64: bool) -> None:
    record = VALUES[(name, x64)]
    fn, args = _cases(value_cases, x64)[name]
    with x64_mode(x64):
        if "error" in record:
            check_raises(fn, args, record["error"])
            return
        leaves = pyjax.tree_util.tree_leaves(fn(*args))
    assert len(leaves) == len(record["outputs"])
    for leaf, want, weak in zip(leaves, record["outputs"], record["weak"]):
        got = np.asarray(leaf)
        assert str(got.dtype) == want["dtype"]
        assert list(got.shape) == want["shape"]
        assert bool(getattr(leaf, "weak_type", False)) == weak
        tol = 1e-4 if got.dtype in (np.float32, np.complex64) else 1e-9
        np.testing.assert_allclose(got, _decode(want).astype(got.dtype), rtol=tol, atol=tol)


# ---------------------------------------------------------------------------------------------
# values against NumPy (float64 reference), batched and several dtypes
# ---------------------------------------------------------------------------------------------

def _rand(shape, dtype, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(*shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.randn(*shape)
    return x.astype(dtype)


def _square(shape, dtype, seed=0):
    n = shape[-1]
    return (_rand(shape, dtype, seed) + 3 * np.eye(n)).astype(dtype)


def _spd(shape, dtype, seed=0):
    a = _rand(shape, dtype, seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
SHAPES = [(3, 3), (2, 4, 4), (2, 1, 3, 3)]


def _tol(dtype):
    return 2e-4 if np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64)) else 1e-10


@pytest.fixture(params=DTYPES, ids=lambda d: np.dtype(d).name)
def dtype(request):
    with x64_mode(True):
        yield request.param


@pytest.mark.parametrize("shape", SHAPES)
def test_solve_inv_det_against_numpy(dtype, shape) -> None:
    a = _square(shape, dtype)
    b = _rand(shape[-1:], dtype, 1)
    bm = _rand((*shape[:-1], 2), dtype, 2)
    tol = _tol(dtype)
    np.testing.assert_allclose(LA.solve(a, b), np.linalg.solve(a, b), rtol=tol, atol=tol)
    np.testing.assert_allclose(LA.solve(a, bm), np.linalg.solve(a, bm), rtol=tol, atol=tol)
    np.testing.assert_allclose(LA.inv(a), np.linalg.inv(a), rtol=tol, atol=tol)
    np.testing.assert_allclose(LA.det(a), np.linalg.det(a), rtol=tol, atol=tol)
    sign, logdet = LA.slogdet(a)
    nsign, nlogdet = np.linalg.slogdet(a)
    np.testing.assert_allclose(sign, nsign, rtol=tol, atol=tol)
    np.testing.assert_allclose(logdet, nlogdet, rtol=tol, atol=tol)
    assert LA.det(a).dtype == dtype and logdet.dtype == np.finfo(dtype).dtype
    if not np.issubdtype(dtype, np.complexfloating):
        qsign, qlogdet = LA.slogdet(a, method="qr")
        np.testing.assert_allclose(qsign, nsign, rtol=tol, atol=tol)
        np.testing.assert_allclose(qlogdet, nlogdet, rtol=tol, atol=tol)


def test_det_of_sizes_and_singular() -> None:
    with x64_mode(True):
        for n in range(1, 6):
            a = _square((2, n, n), np.float64, n)
            np.testing.assert_allclose(LA.det(a), np.linalg.det(a), rtol=1e-10)
        sing = np.array([[1.0, 2.0], [2.0, 4.0]])
        assert LA.det(sing) == 0
        assert tuple(LA.slogdet(np.zeros((3, 3)))) == (0.0, -np.inf)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_factorisations_against_numpy(dtype, shape) -> None:
    tol = _tol(dtype)
    s = _spd(shape, dtype)
    low = LA.cholesky(s)
    np.testing.assert_allclose(low, np.linalg.cholesky(s), rtol=tol, atol=tol)
    np.testing.assert_allclose(LA.cholesky(s, upper=True), np.conj(np.swapaxes(low, -1, -2)),
                               rtol=tol, atol=tol)
    w, v = LA.eigh(s)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(s), rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(v) @ (np.asarray(w)[..., None] *
                                                np.conj(np.swapaxes(v, -1, -2))),
                               s, rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(LA.eigvalsh(s, UPLO="U"), np.linalg.eigvalsh(s, UPLO="U"),
                               rtol=tol, atol=tol)
    a = _rand((*shape[:-1], shape[-1] + 1), dtype)
    u, sv, vh = LA.svd(a, full_matrices=False)
    np.testing.assert_allclose(sv, np.linalg.svd(a, compute_uv=False), rtol=tol, atol=tol)
    np.testing.assert_allclose((np.asarray(u) * np.asarray(sv)[..., None, :]) @ vh, a,
                               rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(LA.svdvals(a), np.linalg.svd(a, compute_uv=False),
                               rtol=tol, atol=tol)
    u, sv, vh = LA.svd(s, hermitian=True)
    np.testing.assert_allclose(sv, np.linalg.svd(s, compute_uv=False), rtol=tol, atol=tol)
    np.testing.assert_allclose((np.asarray(u) * np.asarray(sv)[..., None, :]) @ vh, s,
                               rtol=tol * 10, atol=tol * 10)
    for mode in ("reduced", "complete"):
        q, r = LA.qr(a, mode=mode)
        nq, nr = np.linalg.qr(a, mode=mode)
        assert q.shape == nq.shape and r.shape == nr.shape
        np.testing.assert_allclose(np.asarray(q) @ r, a, rtol=tol * 10, atol=tol * 10)
    h, taus = LA.qr(a[..., :2], mode="raw") if a.ndim == 2 else (None, None)
    if h is not None:
        nh, ntaus = np.linalg.qr(a[..., :2], mode="raw")
        np.testing.assert_allclose(abs(np.asarray(h)), abs(nh), rtol=tol, atol=tol)
    w = LA.eigvals(a[..., :, :shape[-1]])
    np.testing.assert_allclose(np.sort_complex(np.asarray(w)),
                               np.sort_complex(np.linalg.eigvals(a[..., :, :shape[-1]])),
                               rtol=tol * 10, atol=tol * 10)
    w, v = LA.eig(s)
    np.testing.assert_allclose(np.asarray(s) @ v, np.asarray(v) * np.asarray(w)[..., None, :],
                               rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("ord_", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
@pytest.mark.parametrize("axis", [(0, 1), (1, 0), (-1, -3)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norms(ord_, axis, keepdims) -> None:
    x = _rand((3, 4, 5), np.float32)
    want = np.linalg.norm(x.astype(np.float64), ord=ord_, axis=axis, keepdims=keepdims)
    got = LA.norm(x, ord=ord_, axis=axis, keepdims=keepdims)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ord_", [None, 0, 1, 2, 3, 0.5, -1, -2.5, np.inf, -np.inf])
def test_vector_norms(ord_) -> None:
    x = _rand((3, 4), np.float32)
    for axis in (0, 1, -1):
        want = np.linalg.norm(x.astype(np.float64), ord=ord_, axis=axis)
        np.testing.assert_allclose(LA.norm(x, ord=ord_, axis=axis), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(LA.vector_norm(x, ord=2 if ord_ is None else ord_),
                               np.linalg.vector_norm(x.astype(np.float64),
                                                     ord=2 if ord_ is None else ord_),
                               rtol=1e-5, atol=1e-6)
    xc = _rand((5,), np.complex64)
    np.testing.assert_allclose(LA.norm(xc, ord=ord_), np.linalg.norm(xc.astype(complex),
                                                                      ord=ord_), rtol=1e-5)


def test_other_functions_against_numpy() -> None:
    with x64_mode(True):
        a = _square((4, 4), np.float64)
        tall = _rand((5, 3), np.float64)
        b5 = _rand((5,), np.float64, 3)
        np.testing.assert_allclose(LA.pinv(tall), np.linalg.pinv(tall), rtol=1e-10)
        np.testing.assert_allclose(LA.pinv(tall, rtol=0.5), np.linalg.pinv(tall, rcond=0.5),
                                   rtol=1e-10)
        x, resid, rank, sv = LA.lstsq(tall, b5)
        nx, nresid, nrank, nsv = np.linalg.lstsq(tall, b5, rcond=None)
        np.testing.assert_allclose(x, nx, rtol=1e-10)
        np.testing.assert_allclose(resid, nresid, rtol=1e-10)
        assert int(rank) == nrank
        np.testing.assert_allclose(sv, nsv, rtol=1e-10)
        x, resid, *_ = LA.lstsq(tall[:2], b5[:2], numpy_resid=True)
        assert resid.shape == (0,)
        sing = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
        assert int(LA.matrix_rank(sing)) == 2 == np.linalg.matrix_rank(sing)
        assert int(LA.matrix_rank(sing, rtol=0.9)) == 2  # an absolute bound, as in JAX
        assert int(LA.matrix_rank(sing, tol=2.0)) == 1
        for n in (-3, -1, 0, 1, 2, 3, 4, 7):
            np.testing.assert_allclose(LA.matrix_power(a, n), np.linalg.matrix_power(a, n),
                                       rtol=1e-9, atol=1e-12)
        for p in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
            np.testing.assert_allclose(LA.cond(a, p), np.linalg.cond(a, p), rtol=1e-9)
        assert float(LA.cond(sing, np.inf)) == np.inf
        t = _rand((2, 3, 6), np.float64)
        np.testing.assert_allclose(LA.tensorinv(t, ind=2), np.linalg.tensorinv(t, ind=2),
                                   rtol=1e-9)
        t4 = _rand((6, 2, 3), np.float64)
        b = _rand((6,), np.float64, 1)
        np.testing.assert_allclose(LA.tensorsolve(t4, b), np.linalg.tensorsolve(t4, b),
                                   rtol=1e-9)
        t5 = _rand((2, 3, 6), np.float64)
        np.testing.assert_allclose(LA.tensorsolve(t5, b, axes=(0, 1)),
                                   np.linalg.tensorsolve(t5, b, axes=(0, 1)), rtol=1e-9)
        chain = [_rand((3,), np.float64), _rand((3, 10), np.float64),
                 _rand((10, 2), np.float64), _rand((2, 4), np.float64)]
        np.testing.assert_allclose(LA.multi_dot(chain), np.linalg.multi_dot(chain), rtol=1e-10)
        v = _rand((4, 3), np.float64)
        w = _rand((4, 3), np.float64, 1)
        np.testing.assert_allclose(LA.cross(v, w), np.linalg.cross(v, w), rtol=1e-12)
        np.testing.assert_allclose(LA.outer(v[0], w[1]), np.linalg.outer(v[0], w[1]))
        vc, wc = _rand((4, 3), np.complex128), _rand((4, 3), np.complex128, 1)
        np.testing.assert_allclose(LA.vecdot(vc, wc), np.linalg.vecdot(vc, wc), rtol=1e-12)
        np.testing.assert_allclose(LA.vecdot(v, w, axis=0), np.linalg.vecdot(v, w, axis=0))
        bt = _rand((2, 3, 4), np.float64)
        np.testing.assert_allclose(LA.matrix_transpose(bt), np.linalg.matrix_transpose(bt))
        np.testing.assert_allclose(LA.trace(bt, offset=1), np.linalg.trace(bt, offset=1))
        np.testing.assert_allclose(LA.diagonal(bt, offset=-1), np.linalg.diagonal(bt, offset=-1))
        np.testing.assert_allclose(LA.matmul(bt, bt.swapaxes(1, 2)),
                                   np.linalg.matmul(bt, bt.swapaxes(1, 2)), rtol=1e-12)
        bt2 = np.moveaxis(bt, 0, -1)
        np.testing.assert_allclose(LA.tensordot(bt, bt2, axes=2),
                                   np.linalg.tensordot(bt, bt2, axes=2), rtol=1e-12)
        np.testing.assert_allclose(LA.matrix_norm(bt, ord=2), np.linalg.matrix_norm(bt, ord=2),
                                   rtol=1e-12)


def test_dtype_promotion_and_weak_types() -> None:
    i3 = np.array([[2, 1, 0], [1, 3, 1], [0, 1, 4]], np.int32)
    assert LA.det(i3).dtype == np.float32
    assert LA.solve(i3, i3[0]).dtype == np.float32
    assert LA.inv(i3).dtype == np.float32
    assert LA.matrix_power(i3, 3).dtype == np.int32
    np.testing.assert_array_equal(LA.matrix_power(i3, 3), np.linalg.matrix_power(i3, 3))
    assert LA.matrix_rank(i3).dtype == np.int32
    assert LA.norm(i3).dtype == np.float32
    w = LA.eigvals(i3)
    assert w.dtype == np.complex64
    with x64_mode(True):
        assert LA.det(i3.astype(np.int64)).dtype == np.float64
        assert LA.matrix_rank(i3).dtype == np.int64
    assert not LA.norm(2.0).weak_type  # the Python scalar enters jit as a strong array
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        LA.det([[1.0, 2.0], [3.0, 4.0]])


# ---------------------------------------------------------------------------------------------
# derivatives: numerical, order 2 where JAX's rules allow
# ---------------------------------------------------------------------------------------------

GRAD_CASES = [
    ("det", lambda a: LA.det(a), "sq"),
    ("det_2x2", lambda a: LA.det(a[:2, :2]), "sq"),
    ("det_3x3", lambda a: LA.det(a[:3, :3]), "sq"),
    ("slogdet", lambda a: LA.slogdet(a)[1], "sq"),
    ("slogdet_2x2", lambda a: LA.slogdet(a[:2, :2])[1], "sq"),
    ("slogdet_qr", lambda a: LA.slogdet(a, method="qr")[1], "sq"),
    ("solve", lambda a: LA.solve(a, a[0]), "sq"),
    ("solve_matrix", lambda a: LA.solve(a, a[:, :2] * 2.0), "sq"),
    ("inv", lambda a: LA.inv(a), "sq"),
    ("matrix_power", lambda a: LA.matrix_power(a, 5), "sq"),
    ("matrix_power_neg", lambda a: LA.matrix_power(a, -2), "sq"),
    ("cholesky", lambda a: LA.cholesky(a), "spd"),
    ("eigvalsh", lambda a: LA.eigvalsh(a), "spd"),
    ("eigh_vectors_gauge", lambda a: jnp.abs(LA.eigh(a)[1]), "spd"),
    ("svdvals", lambda a: LA.svdvals(a), "tall"),
    ("qr", lambda a: LA.qr(a)[1], "tall"),
    ("pinv", lambda a: LA.pinv(a), "tall"),
    ("pinv_wide", lambda a: LA.pinv(a.T), "tall"),
    ("lstsq", lambda a: LA.lstsq(a, a[:, 0] + 1.0)[0], "tall"),
    ("norm_fro", lambda a: LA.norm(a), "tall"),
    ("norm_nuc", lambda a: LA.norm(a, "nuc"), "tall"),
    ("norm_2", lambda a: LA.norm(a, 2), "tall"),
    ("norm_vector_3", lambda a: LA.norm(a, 3, axis=0), "tall"),
    ("cond", lambda a: LA.cond(a), "sq"),
    ("tensorsolve", lambda a: LA.tensorsolve(a.reshape(2, 2, 2, 2), a[0].reshape(2, 2)),
     "sq4"),
    ("multi_dot", lambda a: LA.multi_dot([a, a.T, a]), "tall"),
]


def _grad_input(kind: str) -> np.ndarray:
    if kind == "spd":
        return _spd((3, 3), np.float64, 5)
    if kind == "tall":
        return _rand((4, 3), np.float64, 6)
    if kind == "sq4":
        return _square((4, 4), np.float64, 8)
    return _square((4, 4), np.float64, 7)


@pytest.mark.parametrize("name,fn,kind", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grads(name, fn, kind) -> None:
    with x64_mode(True):
        check_grads(fn, (_grad_input(kind),), order=2, modes=("fwd", "rev"), atol=1e-5,
                    rtol=1e-5)


def test_complex_grads() -> None:
    with x64_mode(True):
        a = _square((3, 3), np.complex128, 9)
        check_grads(lambda x: LA.det(x), (a,), order=1, modes=("fwd", "rev"), atol=1e-6)
        check_grads(lambda x: LA.slogdet(x)[1], (a,), order=1, modes=("fwd", "rev"), atol=1e-6)
        check_grads(lambda x: LA.inv(x), (a,), order=1, modes=("fwd", "rev"), atol=1e-6)


def test_det_grad_of_singular_matrix_is_the_adjugate() -> None:
    with x64_mode(True):
        sing = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
        adjugate_t = np.array([[4.0, 4.0, -4.0], [-2.0, -2.0, 2.0], [0.0, 0.0, 0.0]])
        np.testing.assert_allclose(pyjax.grad(LA.det)(sing), adjugate_t, atol=1e-12)


def test_eigenvector_derivatives_raise_as_in_jax() -> None:
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        pyjax.grad(lambda a: LA.eig(a)[1].real.sum())(_square((3, 3), np.float32))


# ---------------------------------------------------------------------------------------------
# batching: vmap equals a loop (and the functions' own leading batch axes)
# ---------------------------------------------------------------------------------------------

VMAP_CASES = [
    ("solve", lambda a, b: LA.solve(a, b)),
    ("solve_matrix", lambda a, b: LA.solve(a, jnp.stack([b, 2 * b], -1))),
    ("inv", lambda a, b: LA.inv(a)),
    ("det", lambda a, b: LA.det(a)),
    ("slogdet", lambda a, b: LA.slogdet(a)),
    ("cholesky", lambda a, b: LA.cholesky(a @ a.T)),
    ("eigh", lambda a, b: LA.eigh(a + a.T)),
    ("svd", lambda a, b: LA.svd(a)),
    ("qr", lambda a, b: LA.qr(a)),
    ("pinv", lambda a, b: LA.pinv(a)),
    ("lstsq", lambda a, b: LA.lstsq(a, b)),
    ("norm", lambda a, b: LA.norm(a, "nuc")),
    ("matrix_rank", lambda a, b: LA.matrix_rank(a)),
    ("cond", lambda a, b: LA.cond(a, 1)),
    ("grad_slogdet", lambda a, b: pyjax.grad(lambda x: LA.slogdet(x)[1])(a)),
    ("grad_solve", lambda a, b: pyjax.grad(lambda x: LA.solve(x, b).sum())(a)),
]


@pytest.mark.parametrize("name,fn", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_matches_loop(name, fn) -> None:
    a = np.stack([_square((3, 3), np.float32, i) for i in range(4)])
    b = _rand((4, 3), np.float32, 9)
    got = pyjax.tree_util.tree_leaves(pyjax.vmap(fn)(a, b))
    loop = [pyjax.tree_util.tree_leaves(fn(a[i], b[i])) for i in range(4)]
    for k, leaf in enumerate(got):
        np.testing.assert_allclose(leaf, np.stack([np.asarray(out[k]) for out in loop]),
                                   rtol=1e-4, atol=1e-5)
    got_axis1 = pyjax.tree_util.tree_leaves(
        pyjax.vmap(fn, in_axes=(2, None))(np.moveaxis(a, 0, 2), b[0]))
    loop1 = [pyjax.tree_util.tree_leaves(fn(a[i], b[0])) for i in range(4)]
    for k, leaf in enumerate(got_axis1):
        np.testing.assert_allclose(leaf, np.stack([np.asarray(out[k]) for out in loop1]),
                                   rtol=1e-4, atol=1e-5)


def test_batched_4x4_matches_numpy_gufuncs() -> None:
    """The batched paths (1000 small matrices) agree with NumPy's batched routines."""
    a = _rand((1000, 4, 4), np.float32)
    s = (a @ a.transpose(0, 2, 1) + 4 * np.eye(4)).astype(np.float32)
    b = _rand((1000, 4, 1), np.float32, 1)
    np.testing.assert_allclose(LA.solve(s, b), np.linalg.solve(s, b), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(LA.cholesky(s), np.linalg.cholesky(s), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(LA.eigh(s)[0], np.linalg.eigvalsh(s), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(LA.svd(a)[1], np.linalg.svd(a, compute_uv=False), rtol=1e-4,
                               atol=1e-5)
