"""`empty2`: an array of a given type whose contents do not matter (JAX's ad_util.empty).

Partial evaluation of `cond` fills the residual slots a branch does not use with it."""
from __future__ import annotations

from typing import Any

import numpy as np

from pyjax._src.core.avals import MemorySpace, ShapedArray
from pyjax._src.primitives._rules import make_primitive
from pyjax._src.transforms import ad


DEVICE = MemorySpace.Device


def _empty_impl(*, dtype: np.dtype, memory_space: Any) -> np.ndarray:
    return np.zeros((), dtype)


def _empty_abstract(*, dtype: np.dtype, memory_space: Any) -> ShapedArray:
    return ShapedArray((), dtype, False)


empty2_p = make_primitive("empty2", _empty_impl, _empty_abstract)
ad.defjvp_zero(empty2_p)


def empty_like_aval(aval: ShapedArray) -> Any:
    """An array of `aval`'s type (zeros), staged as JAX stages it: empty2, then broadcast."""
    from pyjax._src.primitives.shape import broadcast_in_dim
    out = empty2_p.bind(dtype=aval.dtype, memory_space=DEVICE)
    return broadcast_in_dim(out, aval.shape, ()) if aval.shape else out
