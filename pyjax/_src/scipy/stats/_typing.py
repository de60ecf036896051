"""Type aliases for the stats signatures (JAX's jax.typing.Array / ArrayLike)."""
from __future__ import annotations

from typing import Union

import numpy as np

from pyjax._src.core.array import Array

#: what the stats functions accept: arrays, NumPy arrays and scalars, Python numbers
ArrayLike = Union[Array, np.ndarray, np.generic, bool, int, float, complex]

__all__ = ["Array", "ArrayLike"]
