"""Static type annotations (JAX's jax._src.typing): what pyjax.typing exports and more."""
from __future__ import annotations

from collections.abc import Sequence
from types import EllipsisType
from typing import Any, Protocol, Union, runtime_checkable

import numpy as np

from pyjax._src.core.array import Array

DType = np.dtype


@runtime_checkable
class SupportsDType(Protocol):
    """Anything with a `.dtype` (jnp.float32, arrays)."""

    @property
    def dtype(self, /) -> DType: ...


#: what np.dtype accepts and pyjax supports (None excluded: annotate it explicitly)
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]

StaticScalar = Union[np.bool_, np.number, bool, int, float, complex]
#: what converts implicitly to a pyjax array (not arbitrary sequences, not strings)
ArrayLike = Union[Array, np.ndarray, StaticScalar]

DimSize = Union[int, Any]
Shape = Sequence[DimSize]

AnyInt = Union[int, np.integer]
StaticIndex = Union[AnyInt, slice, EllipsisType]
Index = Union[StaticIndex, None, Sequence[AnyInt], Array, np.ndarray]


class DuckTypedArray(Protocol):
    """Anything with a dtype and a shape."""

    @property
    def dtype(self) -> DType: ...

    @property
    def shape(self) -> Shape: ...
