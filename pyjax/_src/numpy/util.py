"""NumPy semantics on top of lax: argument checks, dtype promotion and rank broadcasting.

Every jnp function goes through these helpers, so promotion follows JAX's lattice and the
staged jaxpr shows the same convert_element_type / broadcast_in_dim equations as JAX's.
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.core.trace_state import note_side_effect
from pyjax._src.backend.dispatch import as_operand, scalar_buffer  # noqa: F401 (as_operand: re-exported)
from pyjax._src.backend import eager_plans
from pyjax._src import caches
from pyjax._src.config import config
from pyjax._src.core import dtypes
from pyjax._src.core.array import Array, ArrayImpl
from pyjax._src.core.trace import Tracer, trace_state
from pyjax._src.primitives import elementwise as ew
from pyjax._src.primitives import shape as shp


def is_arraylike(x: Any) -> bool:
    return (isinstance(x, (Array, np.ndarray, np.generic))
            or type(x) in dtypes.python_scalar_dtypes or hasattr(x, "__jax_array__"))


def check_arraylike(fun_name: str, *args: Any) -> None:
    """Reject lists and other non-arrays like JAX does (jnp functions don't accept lists)."""
    for pos, arg in enumerate(args):
        if type(arg) is not ArrayImpl and not is_arraylike(arg):  # (Arrays: no call)
            raise TypeError(f"{fun_name} requires ndarray or scalar arguments, got "
                            f"{type(arg)} at position {pos}.")


def type_of(x: Any) -> tuple[np.dtype, bool]:
    """(dtype, weak) of an operand without converting it."""
    if type(x) is ArrayImpl:
        return x._buf.dtype, x._weak
    if isinstance(x, Tracer):
        aval = x.aval
        return aval.dtype, aval.weak_type
    return dtypes.dtype_and_weak(x)


def convert(x: Any, dtype: np.dtype, weak: bool) -> Any:
    """x as `dtype` with weak flag `weak` (no equation when nothing changes)."""
    if type(x) is ArrayImpl:
        if x._buf.dtype == dtype and x._weak == weak:
            return x
    elif isinstance(x, Tracer):
        aval = x.aval
        if aval.dtype == dtype and aval.weak_type == weak:
            return x
    elif isinstance(x, ArrayImpl):  # one still computing (async_dispatch.py): not waited for
        if x.dtype == dtype and x._weak == weak:
            return x
    elif isinstance(x, Array) and x.dtype == dtype and not weak:
        return x  # a concrete array of an extended dtype (PRNG keys), already of that dtype
    return ew.convert_element_type(x, dtype, weak)


def _operand(x: Any, dtype: np.dtype, weak: bool) -> Any:
    """`convert` for an operation's operand: under a trace, a NumPy constant already of the
    type is passed on as it is, so that it is one constvar however often it is used (JAX)."""
    if type(x) is np.ndarray and x.dtype == dtype and not weak and trace_state.trace is not None:
        return x
    return convert(x, dtype, weak)


#: Python scalar types a strong array of a dtype kind absorbs: the weak scalar takes the
#: array's dtype (int into ints, int or float into floats, anything numeric into complex)
_ABSORBED = {"i": (int,), "u": (int,), "f": (int, float), "c": (int, float, complex)}
_X64_ONLY = frozenset(map(np.dtype, ("int64", "uint64", "float64", "complex128")))


def _array_and_scalar(x: Any, y: Any) -> list[Any] | None:
    """The common case `strong_array op python_scalar` (either order) promoted without the
    lattice: the scalar takes the array's dtype, converted as the general path converts it
    (through its kind's default dtype).  None when it is not that case."""
    if type(x) is ArrayImpl:
        arr, scalar, first = x, y, True
    elif type(y) is ArrayImpl:
        arr, scalar, first = y, x, False
    else:
        return None
    kind = type(scalar)
    if arr._weak or kind not in _PY_NUMBERS:
        return None  # weak arrays promote through the lattice
    dtype = arr._buf.dtype
    x64 = config.x64
    eager = trace_state.trace is None
    if eager:  # `x > 0` converts the same scalar over and over: its checks passed before
        key = (kind, scalar, math.copysign(1.0, scalar.real), dtype, x64)
        converted = _SCALAR_OPERANDS.get(key)
        if converted is not None:
            return [arr, converted] if first else [converted, arr]
    if kind not in _ABSORBED.get(dtype.kind, ()):
        return None  # (a float into an int array: the lattice)
    if not x64 and dtype in _X64_ONLY:
        return None  # an array made under x64: canonicalised on the general path
    if kind is int and not -2 ** 31 <= scalar < 2 ** 31:
        return None  # range checks (OverflowError) live on the general path
    # (made while tracing: a literal, see ArrayImpl.made_in_trace)
    converted = ArrayImpl(scalar_buffer(scalar)[0].astype(dtype), False)
    if eager:
        if len(_SCALAR_OPERANDS) >= 256:
            _SCALAR_OPERANDS.clear()
        _SCALAR_OPERANDS[key] = converted
    return [arr, converted] if first else [converted, arr]


_PY_NUMBERS = frozenset((int, float, complex))


#: (scalar's type, value, sign, array dtype, x64) -> the scalar as a strong Array of that
#: dtype, for eager array-scalar operations (NaN keys never match, so they miss: harmless)
_SCALAR_OPERANDS: dict = {}
caches.register(_SCALAR_OPERANDS.clear)


def promote_dtypes(*args: Any) -> list[Any]:
    """Convert operands to their common (dtype, weak) on JAX's lattice."""
    if len(args) < 2:
        return [as_operand(a) for a in args]
    if len(args) == 2:
        fast = _array_and_scalar(*args)
        if fast is not None:
            return fast
    dtype, weak = dtypes.promote([_checked_type(i, a) for i, a in enumerate(args)])
    return [_operand(a, dtype, weak) for a in args]


_ARG_NAMES = ("x", "y")


def _checked_type(position: int, x: Any) -> tuple[np.dtype, bool]:
    """type_of, raising JAX's message when a Python int operand overflows the default int."""
    if type(x) is int:
        bound = 2 ** 63 if dtypes.default_int_dtype() == dtypes.int64 else 2 ** 31
        if not -bound <= x < bound:
            path = _ARG_NAMES[position] if position < len(_ARG_NAMES) else f"args[{position}]"
            raise OverflowError(
                "An overflow was encountered while parsing an argument to a jitted "
                f"computation, whose argument path is {path}. Got {type(x)} with value {x}")
    return type_of(x)


def promote_dtypes_inexact(*args: Any) -> list[Any]:
    """Like promote_dtypes, then integers and bools go to the default float type."""
    dtype, weak = dtypes.promote([type_of(a) for a in args])
    dtype = dtypes.to_inexact_dtype(dtype)
    return [convert(a, dtype, weak) for a in args]


def promote_dtypes_complex(*args: Any) -> list[Any]:
    """Like promote_dtypes, then to the complex dtype of that precision (weakness kept)."""
    dtype, weak = dtypes.promote([type_of(a) for a in args])
    return [convert(a, dtypes.to_complex_dtype(dtype), weak) for a in args]


def promote_dtypes_numeric(*args: Any) -> list[Any]:
    """Like promote_dtypes, but bool becomes int32 (even under x64, as in JAX)."""
    dtype, weak = dtypes.promote([type_of(a) for a in args])
    if dtype == dtypes.bool_:
        dtype = dtypes.int32
    return [convert(a, dtype, weak) for a in args]


def promote_shapes(fun_name: str, *args: Any) -> list[Any]:
    """Give lower-rank operands leading size-1 axes, as NumPy broadcasting does; when every
    operand has one rank or is a scalar, lax's scalar promotion is left to do it (as JAX)."""
    if len(args) < 2:
        return list(args)
    shapes = [np.shape(a) for a in args]
    nd = max(len(s) for s in shapes)
    if all(len(s) in (0, nd) for s in shapes):
        return list(args)  # equal ranks: lax's own shape check words the error, as in JAX
    if config.numpy_rank_promotion != "allow":
        _rank_promotion_warning_or_error(fun_name, shapes)
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes="
                         f"{[tuple(s) for s in shapes]}") from None
    out = []
    for a, s in zip(args, shapes):  # scalars too, as JAX's broadcast_to_rank does
        if len(s) < nd:
            a = shp.broadcast_in_dim(a, (1,) * (nd - len(s)) + tuple(s),
                                     tuple(range(nd - len(s), nd)))
        out.append(a)
    return out


def _rank_promotion_warning_or_error(fun_name: str, shapes: list) -> None:
    """jax_numpy_rank_promotion='warn' or 'raise': implicit rank promotion is reported."""
    listed = " ".join(str(tuple(s)) for s in shapes)
    if config.numpy_rank_promotion == "warn":
        note_side_effect()
        warnings.warn(f"Following NumPy automatic rank promotion for {fun_name} on shapes "
                      f"{listed}. Set the jax_numpy_rank_promotion config option to 'allow' to "
                      "disable this warning; for more information, see "
                      "https://docs.jax.dev/en/latest/rank_promotion_warning.html.",
                      stacklevel=4)
    elif config.numpy_rank_promotion == "raise":
        raise ValueError(f"Operands could not be broadcast together for {fun_name} on shapes "
                         f"{listed} and with the config option jax_numpy_rank_promotion='raise'"
                         ". For more information, see "
                         "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


def promote_args(fun_name: str, *args: Any) -> list[Any]:
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes(*args))


def promote_args_inexact(fun_name: str, *args: Any) -> list[Any]:
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name: str, *args: Any) -> list[Any]:
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_numeric(*args))


def broadcast_to(x: Any, shape: Sequence[int]) -> Any:
    """x broadcast to `shape` by NumPy's rules (a broadcast_in_dim equation when needed)."""
    x = as_operand(x)
    shape = tuple(int(s) for s in shape)
    old = tuple(np.shape(x))
    if old == shape:
        return x
    nlead = len(shape) - len(old)
    if nlead < 0 or any(o not in (1, n) for o, n in zip(old, shape[nlead:])):
        raise ValueError(f"Incompatible shapes for broadcasting: {old} and requested shape "
                         f"{shape}")
    return shp.broadcast_in_dim(x, shape, tuple(range(nlead, len(shape))))


def canonicalize_axis(axis: int, ndim: int) -> int:
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else axis


def staged_as_jit(fun: Callable | None = None, *, static_argnames: Sequence[str] = (),
                  static_argnums: Sequence[int] = ()) -> Any:
    """Run `fun` directly when eager (through its eager plan); under a transformation call it
    through jit, so staged programs show `jit[name=...]` exactly where JAX's jnp functions are
    jitted."""
    if fun is None:
        return functools.partial(staged_as_jit, static_argnames=static_argnames,
                                 static_argnums=static_argnums)
    from pyjax._src.transforms.jit import jit
    jitted = jit(fun, static_argnames=tuple(static_argnames) or None,
                 static_argnums=tuple(static_argnums) or None)

    def traced(*args: Any, **kwargs: Any) -> Any:
        if trace_state.trace.eager_like:  # inside a planned call: record fun's steps
            return fun(*args, **kwargs)
        return jitted(*args, **kwargs)

    return eager_plans.planned(fun, traced)


_PY_SCALAR_OF_KIND = {"b": bool, "i": int, "u": int, "f": float, "V": float, "c": complex}


def lax_const(x: Any, value: Any) -> Any:
    """A constant of x's dtype, as lax._const makes it: a Python scalar (so weak) when x is a
    weak scalar and the scalar's default dtype is x's, else a strong constant."""
    dtype, weak = dtypes.dtype_and_weak(x)
    if weak and np.ndim(x) == 0:
        scalar = _PY_SCALAR_OF_KIND[dtype.kind](value)
        if dtypes.dtype_and_weak(scalar)[0] == dtype:
            return scalar
        return np.array(scalar, dtype)
    return ArrayImpl(np.array(value, dtype), False)
