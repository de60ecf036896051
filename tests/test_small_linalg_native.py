"""The native batched factorisations of small real matrices (backend/tier1/small_linalg.py):
LU gives the bits of primitives/linalg.py's NumPy version (`_lu_batched`), pivots and
permutations included, on ordinary, singular, NaN and infinite inputs; Cholesky agrees with
NumPy's LAPACK gufunc to rounding, NaN for NaN, upper triangles kept.  Skipped, with the
reason, where tier 1 cannot run."""
import numpy as np
import pytest

from pyjax._src.backend import tier1
from pyjax._src.backend.tier1 import engine, small_linalg
from pyjax._src.primitives import linalg

pytestmark = pytest.mark.skipif(tier1.reason() is not None,
                                reason=f"tier 1 does not run here: {tier1.reason()}")


def _without_native(name: str, impl, a: np.ndarray):
    """impl(a) with small_linalg's kernel `name` unavailable: the NumPy version."""
    native = getattr(small_linalg, name)
    setattr(small_linalg, name, lambda a: None)
    try:
        return impl(a)
    finally:
        setattr(small_linalg, name, native)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 4), (1, 1), (3, 5), (5, 3), (16, 16), (7, 2)])
def test_native_lu_equals_numpy(dtype, shape) -> None:
    m, n = shape
    a = np.random.default_rng(m * n).standard_normal((2, 25, m, n)).astype(dtype)
    a[0, 3] = 0
    a[0, 4, :, 0] = 0
    a[0, 5, (m - 1) // 2, 0] = np.nan
    a[0, 6, m - 1, 0] = np.inf
    a[1, 7] = np.round(a[1, 7])  # ties between pivot candidates
    small_linalg.lu(a)  # starts the compile
    engine.wait()
    got = small_linalg.lu(a)
    assert got is not None
    for g, w in zip(got, _without_native("lu", linalg._lu_batched, a)):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 4, 7, 16])
def test_native_cholesky_matches_lapack(dtype, n) -> None:
    x = np.random.default_rng(n).standard_normal((30, n, n)).astype(dtype)
    a = (x @ np.swapaxes(x, -1, -2) + n * np.eye(n, dtype=dtype)).astype(dtype)
    upper = np.triu_indices(n, 1)
    a[:, upper[0], upper[1]] = 5  # never read, kept as given
    a[3] = -np.eye(n, dtype=dtype)  # not positive definite: NaNs
    a[4, 0, 0] = np.nan  # a NaN pivot goes on, as in OpenBLAS
    a[5, n - 1, n - 1] = 0
    small_linalg.cholesky(a)  # starts the compile
    engine.wait()
    got = small_linalg.cholesky(a)
    assert got is not None
    want = _without_native("cholesky", linalg._cholesky_batched, a)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=2e-4 if dtype == np.float32 else 1e-12)
