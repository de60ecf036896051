"""Top-level helpers that move values between host and device: device_put, device_get,
block_until_ready (all on pytrees)."""
from __future__ import annotations

from typing import Any

import numpy as np

from pyjax._src.core.array import Array, ArrayImpl
from pyjax._src.numpy.lax_numpy import asarray
from pyjax._src.tree_util import tree_map


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: Any = None) -> Any:
    """Put every leaf of `x` on the (host) device as an Array, copying NumPy inputs."""
    def put(leaf: Any) -> Any:
        if isinstance(leaf, Array):
            return leaf
        return asarray(leaf)
    return tree_map(put, x)


def device_get(x: Any) -> Any:
    """Bring every Array leaf of `x` back as a NumPy array."""
    return tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, ArrayImpl) else leaf, x)


def block_until_ready(x: Any) -> Any:
    """Wait for every array in the pytree `x` (execution here is synchronous) and return x."""
    tree_map(lambda leaf: leaf.block_until_ready() if hasattr(leaf, "block_until_ready")
             else leaf, x)
    return x
