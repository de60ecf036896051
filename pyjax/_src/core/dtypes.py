"""Dtypes: canonicalisation under x64 on/off, weak types, and JAX's type-promotion lattice.

A value's type is a pair (dtype, weak_type).  Python scalars are weak: they adopt the dtype of
whatever strong value they meet.  Promotion is the least upper bound on JAX's lattice, in which
the three Python scalar kinds (int, float, complex) are nodes of their own.
"""
from __future__ import annotations

import abc
import functools
from typing import Any

import ml_dtypes
import numpy as np

from pyjax._src.core.trace_state import note_side_effect
from pyjax._src.config import config

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
int2, int4 = np.dtype(ml_dtypes.int2), np.dtype(ml_dtypes.int4)
uint2, uint4 = np.dtype(ml_dtypes.uint2), np.dtype(ml_dtypes.uint4)
int1, uint1 = np.dtype(ml_dtypes.int1), np.dtype(ml_dtypes.uint1)
small_float_dtypes = tuple(
    np.dtype(getattr(ml_dtypes, name)) for name in (
        "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
        "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu")
    if hasattr(ml_dtypes, name))

#: Tangent dtype of integer and boolean values (a zero-sized struct, as in JAX).
float0 = np.dtype([("float0", np.void, 0)])

_unsigned = (uint1, uint2, uint4, uint8, uint16, uint32, uint64)
_signed = (int1, int2, int4, int8, int16, int32, int64)
_floats = (*small_float_dtypes, bfloat16, float16, float32, float64)
_complex = (complex64, complex128)
supported_dtypes = frozenset((bool_, *_unsigned, *_signed, *_floats, *_complex))

_to_32bit = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}

# Python scalar types are the weak nodes of the lattice.
python_scalar_dtypes: dict[type, np.dtype] = {
    bool: bool_, int: int64, float: float64, complex: complex128}


def canonicalize_dtype(dtype: Any) -> np.dtype:
    """The dtype JAX would store for `dtype`: 64-bit types narrow to 32 bits unless x64 is on."""
    dtype = np.dtype(dtype)
    if config.x64:
        return dtype
    return _to_32bit.get(dtype, dtype)


def default_int_dtype() -> np.dtype:
    return int64 if config.x64 else int32


def default_uint_dtype() -> np.dtype:
    return uint64 if config.x64 else uint32


def default_float_dtype() -> np.dtype:
    return float64 if config.x64 else float32


def default_complex_dtype() -> np.dtype:
    return complex128 if config.x64 else complex64


def is_python_scalar(x: Any) -> bool:
    return type(x) in python_scalar_dtypes


def check_user_dtype(dtype: Any, context: str | None = None) -> np.dtype:
    """Parse a dtype argument a user passed (`dtype=`); reject non-numeric ones like JAX.
    `context` names the calling function in the error (e.g. "astype")."""
    if dtype in python_scalar_dtypes:
        return canonicalize_dtype(
            {bool: bool_, int: default_int_dtype(), float: default_float_dtype(),
             complex: default_complex_dtype()}[dtype])
    dt = np.dtype(dtype)  # NumPy's own TypeError for names it does not know
    if dt not in supported_dtypes:
        where = f" in {context}" if context else ""
        raise TypeError(f"JAX only supports number, bool, and string dtypes, got dtype "
                        f"{dtype}{where}")
    out = canonicalize_dtype(dt)
    if out != dt:
        _warn_truncated(dt, out, context)
    return out


def _warn_truncated(requested: np.dtype, got: np.dtype, context: str | None) -> None:
    """JAX's UserWarning for an explicit 64-bit dtype without x64, attributed to the first
    caller outside pyjax (so a given call site warns once under the default filter)."""
    import sys
    import warnings
    level, frame = 2, sys._getframe(1)  # 1 is this function, 2 its caller
    while frame is not None and frame.f_code.co_filename.startswith(_PYJAX_DIR):
        level, frame = level + 1, frame.f_back
    where = f" requested in {context}" if context else ""
    note_side_effect()
    warnings.warn(f"Explicitly requested dtype {requested}{where} is not available, and will be "
                  f"truncated to dtype {got.name}. To enable more dtypes, set the jax_enable_x64 "
                  "configuration option or the JAX_ENABLE_X64 shell environment variable. See "
                  "https://github.com/jax-ml/jax#current-gotchas for more.", stacklevel=level)


_PYJAX_DIR = __file__.rsplit("/_src/", 1)[0] + "/"


class extended(np.generic):  # noqa: N801 - JAX's name
    """Scalar type of extended (non-NumPy) dtypes such as key dtypes: exists so that
    `issubdtype(key.dtype, extended)` holds; never instantiated."""

    __module__ = "pyjax.dtypes"


class prng_key(extended):  # noqa: N801 - JAX's name
    """Scalar type of PRNG key dtypes (`issubdtype(key.dtype, prng_key)`); never instantiated."""

    __module__ = "pyjax.dtypes"


class ExtendedDType(abc.ABC):
    """Base of dtypes NumPy does not know (key dtypes); `type` is their scalar type, a
    subclass of `extended`."""

    __slots__ = ()

    @property
    @abc.abstractmethod
    def type(self) -> type: ...


def _is_generic_type(x: Any) -> bool:
    return isinstance(x, type) and issubclass(x, np.generic)


def issubdtype(a: Any, b: Any) -> bool:
    """np.issubdtype that also knows the ml_dtypes (bfloat16 is floating, int4 is integer) and
    extended dtypes (a key dtype is a subdtype of `prng_key` and `extended`, and of itself)."""
    if _is_generic_type(b) and issubclass(b, extended):
        if isinstance(a, ExtendedDType):
            return issubclass(a.type, b)
        return issubclass(a if _is_generic_type(a) else np.dtype(a).type, b)
    if isinstance(b, ExtendedDType):
        return isinstance(a, ExtendedDType) and a == b
    if isinstance(a, ExtendedDType):
        a = a.type
    if _is_generic_type(a) and issubclass(a, extended):
        return _is_generic_type(b) and issubclass(a, b)
    a = np.dtype(a)
    if b in (np.floating, np.inexact, np.number) and a in _floats:
        return True
    if b in (np.integer, np.signedinteger, np.number) and a in (int1, int2, int4):
        return True
    if b in (np.integer, np.unsignedinteger, np.number) and a in (uint1, uint2, uint4):
        return True
    return np.issubdtype(a, b)


def is_float(dtype: np.dtype) -> bool:
    return dtype in _floats


def is_inexact(dtype: np.dtype) -> bool:
    return dtype in _floats or dtype in _complex


def is_complex(dtype: np.dtype) -> bool:
    return dtype in _complex


def is_integer(dtype: np.dtype) -> bool:
    return dtype in _signed or dtype in _unsigned


def is_unsigned(dtype: np.dtype) -> bool:
    return dtype in _unsigned


def short_dtype_name(dtype: np.dtype) -> str:
    """`f32`, `i32`, `u8`, `bool`, `bf16`, `c64` — the jaxpr printer's spelling."""
    if dtype == float0:
        return "float0"
    return (dtype.name.replace("float", "f").replace("uint", "u")
            .replace("int", "i").replace("complex", "c"))


def dtype_name(dtype: np.dtype) -> str:
    return "float0" if dtype == float0 else dtype.name


# ---------------------------------------------------------------------------------------------
# The promotion lattice
# ---------------------------------------------------------------------------------------------

def _lattice(x64: bool) -> dict[Any, list[Any]]:
    """Each node's immediate successors; Python types int/float/complex are the weak nodes."""
    lattice: dict[Any, list[Any]] = {
        bool_: [int],
        int: [uint8, uint2, uint4, int8, int2, int4, int1, uint1],
        uint1: [], uint2: [], uint4: [], int1: [], int2: [], int4: [],
        uint8: [int16, uint16], uint16: [int32, uint32],
        uint32: [int64, uint64] if x64 else [int32, uint64], uint64: [float],
        int8: [int16], int16: [int32], int32: [int64], int64: [float],
        float: [*small_float_dtypes, bfloat16, float16, complex],
        **{t: [] for t in small_float_dtypes},
        bfloat16: [float32], float16: [float32], float32: [float64, complex64],
        float64: [complex128], complex: [complex64], complex64: [complex128], complex128: [],
    }
    return lattice


@functools.cache
def _upper_bounds(x64: bool) -> dict[Any, frozenset]:
    """Map each node to the set of nodes at or above it."""
    lattice = _lattice(x64)
    bounds: dict[Any, frozenset] = {}

    def visit(node: Any) -> frozenset:
        if node not in bounds:
            above = {node}
            for succ in lattice[node]:
                above |= visit(succ)
            bounds[node] = frozenset(above)
        return bounds[node]

    for node in lattice:
        visit(node)
    return bounds


class TypePromotionError(ValueError):
    """No implicit promotion path exists between the given dtypes."""


_float8_dtypes = frozenset(d for d in small_float_dtypes if d.name.startswith("float8"))
_float6_dtypes = frozenset(d for d in small_float_dtypes if d.name.startswith("float6"))
_float4_dtypes = frozenset(d for d in small_float_dtypes if d.name.startswith("float4"))
_intn_dtypes = frozenset((int1, int2, int4, uint1, uint2, uint4))


@functools.lru_cache(maxsize=1024)
def _least_upper_bound(x64: bool, nodes: tuple) -> Any:
    """The least upper bound of `nodes` (in the order JAX's error message lists them)."""
    bounds = _upper_bounds(x64)
    common = frozenset.intersection(*(bounds[n] for n in nodes))
    least = [c for c in common if common <= bounds[c]]
    if len(least) != 1:
        raise TypePromotionError(_no_promotion_message(nodes))
    return least[0]


def _no_promotion_message(nodes: tuple) -> str:
    """JAX's text: small floats and n-bit integers say they never promote implicitly."""
    head = (f"Input dtypes {tuple(str(n) for n in nodes)} have no available implicit dtype "
            "promotion path.")
    for family, bits in ((_float8_dtypes, "8-bit floats"), (_float6_dtypes, "6-bit floats"),
                         (_float4_dtypes, "4-bit floats"),
                         (_intn_dtypes, "1-bit, 2-bit and 4-bit integers")):
        if any(n in family for n in nodes):
            example = "int32" if family is _intn_dtypes else "float32"
            return (f"{head} To avoid unintended promotion, {bits} do not support implicit "
                    "promotion. If you'd like your inputs to be promoted to another type, you "
                    f"can do so explicitly using e.g. x.astype('{example}')")
    return f"{head} Try explicitly casting inputs to the desired output type."


def _lattice_node(dtype: np.dtype, weak: bool) -> Any:
    if weak and dtype != bool_:
        if is_complex(dtype):
            return complex
        if is_inexact(dtype):
            return float
        return int
    return dtype


def _node_dtype(node: Any) -> np.dtype:
    if node is int:
        return default_int_dtype()
    if node is float:
        return default_float_dtype()
    if node is complex:
        return default_complex_dtype()
    return node


def dtype_and_weak(x: Any) -> tuple[np.dtype, bool]:
    """(dtype, weak_type) of a value or dtype-like, before promotion."""
    t = type(x)
    if t in python_scalar_dtypes:
        return canonicalize_dtype(python_scalar_dtypes[t]), t is not bool
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, aval.weak_type
    if hasattr(x, "dtype") and not isinstance(x, type):
        return canonicalize_dtype(x.dtype), False
    if x in python_scalar_dtypes:  # the type object itself, e.g. result_type(float)
        return canonicalize_dtype(python_scalar_dtypes[x]), x is not bool
    return check_user_dtype(x), False


def promote(pairs: list[tuple[np.dtype, bool]]) -> tuple[np.dtype, bool]:
    """Result (dtype, weak_type) of combining values of the given (dtype, weak) types."""
    if len(pairs) == 1:
        return pairs[0]
    dtypes = {d for d, _ in pairs}
    all_weak = all(w for _, w in pairs)
    if len(dtypes) == 1 and not all_weak:
        return pairs[0][0], False
    x64 = config.x64
    if all_weak:
        node = _least_upper_bound(x64, tuple({d for d, _ in pairs}))
        out, weak = _node_dtype(node), True
    else:
        # a set, as JAX builds it: its order is the order the error message lists
        node = _least_upper_bound(x64, tuple({_lattice_node(d, w) for d, w in pairs}))
        # `is`, not `in`: np.dtype("float64") == float, so `in` would call float64 weak
        out, weak = _node_dtype(node), any(node is t for t in (int, float, complex))
    return canonicalize_dtype(out), weak and out != bool_


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """jnp.result_type: promote values and dtypes; None means the default float."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    pairs = [(default_float_dtype(), True) if a is None else dtype_and_weak(a) for a in args]
    dtype, weak = promote(pairs)
    return (dtype, weak) if return_weak_type_flag else dtype


_PYTHON_NODE_DTYPES = {int: int64, float: float64, complex: complex128}


def promote_types(a: Any, b: Any) -> np.dtype:
    """jnp.promote_types: promotion of two dtypes taken as strong, on the lattice of the current
    x64 mode, without canonicalising the result (so float64 survives with x64 off)."""
    nodes = tuple(x if any(x is t for t in (int, float, complex)) else np.dtype(
        python_scalar_dtypes.get(x, x)) for x in (a, b))
    node = _least_upper_bound(config.x64, nodes)
    return _PYTHON_NODE_DTYPES.get(node, node)


def to_complex_dtype(dtype: Any) -> np.dtype:
    """The complex dtype of dtype's precision once made inexact (complex128 only from 64-bit
    types), as JAX's dtypes.to_complex_dtype."""
    inexact = to_inexact_dtype(np.dtype(dtype))
    return np.dtype(np.complex128) if inexact in (float64, complex128) else np.dtype(np.complex64)


def to_inexact_dtype(dtype: np.dtype) -> np.dtype:
    """Integers and bools promote to floats like JAX (int64/uint64 -> float64, others float32)."""
    if is_inexact(dtype):
        return dtype
    if dtype in (int64, uint64):
        return canonicalize_dtype(float64)
    return float32


def itemsize_bits(dtype: Any) -> int:
    """Bits per element (bool counts as 8; int4 as 4)."""
    dtype = np.dtype(dtype)
    if dtype == bool_:
        return 8
    if is_integer(dtype):
        return iinfo(dtype).bits
    return finfo(dtype).bits * (2 if is_complex(dtype) else 1)


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (bool, int, float, complex) matching x's dtype."""
    dtype = dtype_and_weak(x)[0]
    if dtype == bool_:
        return bool
    if is_integer(dtype):
        return int
    if is_complex(dtype):
        return complex
    return float


def finfo(dtype: Any) -> Any:
    return ml_dtypes.finfo(np.dtype(dtype))


def iinfo(dtype: Any) -> Any:
    return ml_dtypes.iinfo(np.dtype(dtype))
