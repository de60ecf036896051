"""NumPy mirrors of the basic samplers, for impls that loop until acceptance (gamma, poisson).

They draw from key data exactly as the jitted samplers do (same bits, same float tricks, XLA's
float32 log/log1p/erf_inv), so a rejection loop run here consumes the same random numbers as
JAX's while loops.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.primitives import xla_math
from pyjax._src.random.keys import PRNGImpl

_UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}


def log(x: np.ndarray) -> np.ndarray:
    """XLA's log (float32) or NumPy's."""
    return xla_math.log_f32(x) if x.dtype == dtypes.float32 else np.log(x)


def log1p(x: np.ndarray) -> np.ndarray:
    """XLA's log1p (float32) or NumPy's."""
    return xla_math.log1p_f32(x) if x.dtype == dtypes.float32 else np.log1p(x)


def fma(a: np.ndarray, b: np.ndarray | float, c: np.ndarray | float) -> np.ndarray:
    """a * b + c with one rounding, as XLA contracts a multiply feeding an add."""
    wide = np.float64 if a.dtype == dtypes.float32 else np.longdouble
    out = np.multiply(a, b, dtype=wide)
    out += c
    return out.astype(a.dtype)


def uniform01(impl: PRNGImpl, keys: np.ndarray, shape: tuple[int, ...], dtype: np.dtype
              ) -> np.ndarray:
    """uniform(key, shape, dtype) in [0, 1) for each key: shape keys.shape[:-1] + shape."""
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    uint = _UINT[nbits]
    bits = impl.random_bits(keys, nbits, shape)
    one = np.array(1.0, dtype).view(uint)
    return ((bits >> uint(nbits - nmant)) | one).view(dtype) - np.array(1.0, dtype)


def normal(impl: PRNGImpl, keys: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """normal(key, (), dtype) for each key."""
    lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype))
    u = uniform01(impl, keys, (), dtype)
    u = np.maximum(lo, fma(u, np.array(1., dtype) - lo, lo))
    return np.array(np.sqrt(2), dtype) * xla_math.erf_inv(u)


def split(impl: PRNGImpl, keys: np.ndarray, n: int) -> list[np.ndarray]:
    """split(key, n) for each key, as n arrays of keys."""
    parts = impl.split(keys, (n,))
    return [parts[..., i, :] for i in range(n)]


def masked_loop(active: Callable[[], np.ndarray], step: Callable[[np.ndarray], None]) -> None:
    """Run `step(indices)` on the still-active positions until none is active (a vectorised
    per-element while loop)."""
    mask = active()
    while mask.any():
        step(np.flatnonzero(mask))
        mask = active()
