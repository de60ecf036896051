"""The native batched svd and eigh of small matrices (backend/tier1/small_lapack.py): the
bits of primitives/linalg.py's NumPy path (LAPACK's gufuncs) and of SciPy's LAPACK one
matrix at a time, for every dtype, jobz and triangle, on ordinary, zero, NaN, rank-deficient
and repeated-value inputs; the same bits when threads share the batch, flushing subnormals as
the caller does.  Skipped, with the reason, where tier 1 cannot run."""
import numpy as np
import pytest

import pyjax.numpy as jnp
from pyjax._src.backend import fp_mode, tier1
from pyjax._src.backend.tier1 import engine, small_lapack
from pyjax._src.primitives import linalg

pytestmark = pytest.mark.skipif(tier1.reason() is not None,
                                reason=f"tier 1 does not run here: {tier1.reason()}")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
JOBS = [(True, True), (False, True), (True, False)]  # (full_matrices, compute_uv): A, S, N


def _batch(dtype, m: int, n: int, hermitian: bool = False) -> np.ndarray:
    rng = np.random.default_rng(m * 17 + n)
    a = rng.standard_normal((30, m, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal((30, m, n))
    a[0] = 0
    a[1, m // 2, n - 1] = np.nan  # LAPACK fails (or meets the NaN): NaNs
    k = min(m, n)
    a[2, :k, :k] = np.eye(k)  # every singular value / eigenvalue repeated
    a[3] = np.outer(rng.standard_normal(m), rng.standard_normal(n))  # rank one
    if hermitian:
        a[4] = np.diag(np.repeat([1.0, -2.0], (n + 1) // 2)[:n])  # repeated eigenvalues
        a[5:] = (a[5:] + np.conj(np.swapaxes(a[5:], -1, -2))) / 2
        a[6][np.triu_indices(n, 1)] = 9  # one triangle is read, the other ignored
    return a.astype(dtype)


def _ready(fn, *args):
    """fn(*args) once its kernel is built (the first call starts the compile)."""
    fn(*args)
    engine.wait()
    got = fn(*args)
    assert got is not None
    return got


def _without_native(name: str, impl, a: np.ndarray, **params):
    """impl(a) with small_lapack's `name` unavailable: the NumPy version."""
    native = getattr(small_lapack, name)
    setattr(small_lapack, name, lambda *args: None)
    try:
        return impl(a, **params)
    finally:
        setattr(small_lapack, name, native)


def _assert_same_bits(got, want) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(np.ascontiguousarray(g).view(np.uint8),
                                      np.ascontiguousarray(w).view(np.uint8))


def _one_at_a_time(core, a: np.ndarray, **params) -> list[np.ndarray]:
    """core (SciPy's LAPACK wrapper) on each matrix, stacked."""
    results = [core(x, **params) for x in a]
    return [np.stack(parts) for parts in zip(*results)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (1, 1), (3, 5), (5, 3), (16, 16), (7, 2)])
@pytest.mark.parametrize("job", JOBS)
def test_native_svd_equals_lapack(dtype, shape, job) -> None:
    full_matrices, compute_uv = job
    a = _batch(dtype, *shape)
    got = _ready(small_lapack.svd, a, full_matrices, compute_uv)
    params = dict(full_matrices=full_matrices, compute_uv=compute_uv, subset_by_index=None,
                  algorithm=None)
    _assert_same_bits(got, _without_native("svd", linalg._svd_batched, a, **params))
    _assert_same_bits(got, _one_at_a_time(linalg._svd_impl, a, **params))
    assert np.isnan(got[0][1]).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 4, 7, 16])
@pytest.mark.parametrize("lower", [True, False])
def test_native_eigh_equals_lapack(dtype, n, lower) -> None:
    a = _batch(dtype, n, n, hermitian=True)
    got = _ready(small_lapack.eigh, a, lower)
    params = dict(lower=lower, sort_eigenvalues=True, subset_by_index=None, algorithm=None)
    _assert_same_bits(got, _without_native("eigh", linalg._eigh_batched, a, **params))
    _assert_same_bits(got, _one_at_a_time(linalg._eigh_impl, a, **params))


def test_failed_matrices_are_nan_as_in_jax() -> None:
    a = _batch(np.complex64, 4, 4)
    s, u, vt = _ready(small_lapack.svd, a, True, True)
    for x in (s[1], u[1].real, u[1].imag, vt[1].real, vt[1].imag):
        assert np.isnan(x).all()
    assert not np.isnan(u[2]).any()


@pytest.mark.parametrize("flushing", [False, True])
def test_threads_sharing_a_batch_give_the_same_bits(flushing, monkeypatch) -> None:
    if flushing and not fp_mode.AVAILABLE:
        pytest.skip(f"subnormals cannot be flushed here: {fp_mode.UNAVAILABLE}")
    # subnormal matrices: a thread not flushing as its caller gives other values; enough of
    # them (~10 ms) for every thread to take some, one at a time
    a = (np.random.default_rng(3).standard_normal((3000, 4, 4)) * 1e-39).astype(np.float32)
    a[2937, 0, 0] = np.nan  # a failure late in the batch
    b = np.concatenate([_batch(np.float64, 4, 4, hermitian=True)] * 100)

    def run():
        return (small_lapack.svd(a, True, True), small_lapack.eigh(b, True))

    def results(threads: int):
        saved = engine.threads()
        engine.set_threads(threads)
        try:
            return fp_mode.run_flushing(run) if flushing else run()
        finally:
            engine.set_threads(*saved)

    _ready(run)
    whole = results(1)
    monkeypatch.setattr(small_lapack, "_GRAIN_NS", 1)
    monkeypatch.setattr(small_lapack, "_TAKE_NS", 1)
    shared = results(3)
    for g, w in zip(shared, whole):
        _assert_same_bits(g, w)
    assert np.isnan(shared[0][0][2937]).all()
    if fp_mode.AVAILABLE:  # the test can tell the modes apart
        other_mode = run() if flushing else fp_mode.run_flushing(run)
        assert not np.array_equal(other_mode[0][0], shared[0][0])


def test_jnp_linalg_runs_the_native_kernels(monkeypatch) -> None:
    a = _batch(np.float32, 4, 4)
    h = _batch(np.float32, 4, 4, hermitian=True)
    _ready(small_lapack.svd, a, True, True)
    _ready(small_lapack.eigh, h, True)
    calls = []
    for name in ("svd", "eigh"):
        native = getattr(small_lapack, name)
        monkeypatch.setattr(small_lapack, name,
                            lambda *args, native=native: calls.append(1) or native(*args))
    u, s, vt = jnp.linalg.svd(a)
    v, w = jnp.linalg.eigh(h, symmetrize_input=False)
    assert len(calls) == 2
    for x, got in zip(a, zip(u, s, vt)):
        _assert_same_bits([np.asarray(g) for g in got],
                          [np.asarray(r) for r in jnp.linalg.svd(x)])
    for x, got in zip(h, zip(v, w)):
        _assert_same_bits([np.asarray(g) for g in got],
                          [np.asarray(r) for r in jnp.linalg.eigh(x, symmetrize_input=False)])
