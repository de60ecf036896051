"""jnp.float32, jnp.int32, ...: dtype-like objects that, when called, build a strong Array."""
from __future__ import annotations

from typing import Any

import numpy as np

from pyjax._src.backend import eager_plans
from pyjax._src.core import dtypes


class ScalarType:
    """Usable wherever a dtype is (`np.dtype(jnp.float32)`), and callable like NumPy's types."""

    def __init__(self, dtype: np.dtype, name: str):
        self.dtype = np.dtype(dtype)
        self.__name__ = self.__qualname__ = name

    def __call__(self, value: Any = 0) -> Any:
        from pyjax._src.numpy.lax_numpy import asarray
        return asarray(value, dtype=self.dtype)

    def __repr__(self) -> str:
        return f"<class 'jax.numpy.{self.__name__}'>"

    def __eq__(self, other: Any) -> bool:
        # As JAX: equal to itself and to what NumPy's scalar type equals (np.float32, its dtype),
        # never to strings or other objects (`jnp.float32 == {}` is False, not an error).
        return self is other or self.dtype.type == other

    def __ne__(self, other: Any) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.dtype.type)

    def __instancecheck__(self, obj: Any) -> bool:
        return getattr(obj, "dtype", None) == self.dtype


_TYPES = {
    "bool_": dtypes.bool_, "uint8": dtypes.uint8, "uint16": dtypes.uint16,
    "uint32": dtypes.uint32, "uint64": dtypes.uint64, "int8": dtypes.int8,
    "int16": dtypes.int16, "int32": dtypes.int32, "int64": dtypes.int64,
    "float16": dtypes.float16, "float32": dtypes.float32, "float64": dtypes.float64,
    "bfloat16": dtypes.bfloat16, "complex64": dtypes.complex64,
    "complex128": dtypes.complex128, "int4": dtypes.int4, "uint4": dtypes.uint4,
    "int2": dtypes.int2, "uint2": dtypes.uint2, "int1": dtypes.int1, "uint1": dtypes.uint1,
    **{dt.name: dt for dt in dtypes.small_float_dtypes},  # float8_*, float6_*, float4_e2m1fn
}
SCALAR_TYPES = {name: ScalarType(dt, name) for name, dt in _TYPES.items()}
SCALAR_TYPES["float_"] = SCALAR_TYPES["float64"]
SCALAR_TYPES["complex_"] = SCALAR_TYPES["complex128"]
SCALAR_TYPES["int_"] = SCALAR_TYPES["int64"]
SCALAR_TYPES["uint"] = SCALAR_TYPES["uint64"]
SCALAR_TYPES["bool"] = SCALAR_TYPES["bool_"]
SCALAR_TYPES["double"] = SCALAR_TYPES["float64"]
SCALAR_TYPES["single"] = SCALAR_TYPES["float32"]
SCALAR_TYPES["half"] = SCALAR_TYPES["float16"]
SCALAR_TYPES["csingle"] = SCALAR_TYPES["complex64"]
SCALAR_TYPES["cdouble"] = SCALAR_TYPES["complex128"]
SCALAR_TYPES["intc"] = SCALAR_TYPES["int32"]


eager_plans.STATIC_TYPES.add(ScalarType)  # `x.astype(jnp.int32)` has a plan
