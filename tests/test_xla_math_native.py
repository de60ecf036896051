"""The native kernels of XLA's float32 log, log1p, erf_inv and tanh (backend/tier1/xla_math.py)
give the bits of primitives/xla_math.py's NumPy code, which tests/test_lax_special.py and the
random tests check against JAX; skipped, with the reason, where tier 1 cannot run."""
import numpy as np
import pytest

from pyjax._src.backend import tier1
from pyjax._src.backend.tier1 import engine
from pyjax._src.backend.tier1 import xla_math as native
from pyjax._src.primitives import xla_math

pytestmark = pytest.mark.skipif(tier1.reason() is not None,
                                reason=f"tier 1 does not run here: {tier1.reason()}")

_SPECIAL = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 2.0 ** -126,
            0.41421356, -0.41421356, 0.99999994, -0.99999994, 3.4e38]


def _inputs(name: str) -> np.ndarray:
    rng = np.random.default_rng(0)
    spread = {"erf_inv": rng.uniform(-1, 1, 200_000),
              "log": 10.0 ** rng.uniform(-38, 38, 200_000),
              "log1p": np.concatenate([rng.uniform(-1, 3, 100_000),
                                       10.0 ** rng.uniform(-30, 30, 100_000)])}[name]
    return np.concatenate([spread, _SPECIAL]).astype(np.float32)


@pytest.mark.parametrize("name", ["erf_inv", "log", "log1p"])
def test_native_bits_equal_numpy(name: str) -> None:
    x = _inputs(name)
    native.evaluate(name, x)  # starts the compile
    engine.wait()
    got = native.evaluate(name, x)
    assert got is not None
    want = getattr(xla_math, f"_{name}_f32")(x)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("shape", [(), (1,), (3, 4)])
def test_shapes_kept(shape: tuple) -> None:
    x = np.full(shape, 0.5, np.float32)
    native.evaluate("erf_inv", x)
    engine.wait()
    assert native.evaluate("erf_inv", x).shape == shape
    assert xla_math.erf_inv(x).shape == shape


def test_tanh_is_one_from_its_clamp():
    """The native tanh leaves out XLA's select of +-1 from |x| >= 20: its rational function
    of x clamped to +-7.9988 rounds to exactly +-1 there (true fused multiply-adds)."""
    clamp = np.float32(xla_math._TANH_CLAMP)
    up = np.nextafter(clamp, np.float32(np.inf), dtype=np.float32)
    x = np.concatenate([np.linspace(clamp, 25, 2000, dtype=np.float32), [clamp, up, 20.0,
                        np.nextafter(np.float32(20), np.float32(0)), 3.4e38, np.inf]])
    x = np.concatenate([x, -x]).astype(np.float32)
    native.evaluate("tanh", x)
    engine.wait()
    got = native.evaluate("tanh", x)
    np.testing.assert_array_equal(got, np.sign(x))
    np.testing.assert_array_equal(got.view(np.uint32), xla_math._tanh_f32(x).view(np.uint32))
