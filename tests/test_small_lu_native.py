"""The native batched LU of small real matrices (backend/tier1/small_lu.py) gives the bits of
primitives/linalg.py's NumPy version (`_lu_batched`), pivots and permutations included, on
ordinary, singular, NaN and infinite inputs; skipped, with the reason, where tier 1 cannot
run."""
import numpy as np
import pytest

from pyjax._src.backend import tier1
from pyjax._src.backend.tier1 import engine, small_lu
from pyjax._src.primitives import linalg

pytestmark = pytest.mark.skipif(tier1.reason() is not None,
                                reason=f"tier 1 does not run here: {tier1.reason()}")


def _numpy_lu(a: np.ndarray) -> list:
    native, small_lu.lu = small_lu.lu, lambda a: None
    try:
        return linalg._lu_batched(a)
    finally:
        small_lu.lu = native


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
    small_lu.lu(a)  # starts the compile
    engine.wait()
    got = small_lu.lu(a)
    assert got is not None
    for g, w in zip(got, _numpy_lu(a)):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))
