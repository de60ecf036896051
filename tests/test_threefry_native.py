"""The native Threefry-2x32 kernel (backend/tier1/threefry.py) gives the NumPy hash's bits for
every pattern of scalar and array operands; skipped, with the reason, where tier 1 cannot run."""
import itertools

import numpy as np
import pytest

from pyjax._src.backend import tier1
from pyjax._src.backend.tier1 import engine, threefry
from pyjax._src.primitives import prng

pytestmark = pytest.mark.skipif(tier1.reason() is not None,
                                reason=f"tier 1 does not run here: {tier1.reason()}")


def _numpy_hash(k1, k2, x1, x2, size):
    out1, out2 = np.empty(size, np.uint32), np.empty(size, np.uint32)
    prng._hash_block(k1, k2, x1, x2, out1, out2, np.empty(size, np.uint32))
    return out1, out2


@pytest.mark.parametrize("scalar", list(itertools.product([True, False], repeat=4)),
                         ids=lambda s: "".join("s" if v else "a" for v in s))
@pytest.mark.parametrize("size", [1, 7, 1000])
def test_native_bits_equal_numpy(scalar, size):
    rng = np.random.default_rng(size)
    ops = [np.asarray(np.uint32(rng.integers(2**32))) if s
           else rng.integers(0, 2**32, size, dtype=np.uint32) for s in scalar]
    threefry.hash2x32(*ops, size)  # starts the compile
    engine.wait()
    got = threefry.hash2x32(*ops, size)
    assert got is not None
    want = _numpy_hash(*ops, size)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_known_answer():
    """Random123's known-answer vector for Threefry-2x32 with 20 rounds."""
    k = np.asarray(np.uint32(0x13198a2e)), np.asarray(np.uint32(0x03707344))
    x = np.array([0x243f6a88], np.uint32), np.array([0x85a308d3], np.uint32)
    threefry.hash2x32(*k, *x, 1)
    engine.wait()
    y1, y2 = threefry.hash2x32(*k, *x, 1)
    assert (int(y1[0]), int(y2[0])) == (0xc4923a9c, 0x483df7a0)
