"""Eager dispatch: a primitive bound outside any transformation runs its NumPy impl at once.

This module also owns the boundary conversion of user values (Python scalars, NumPy arrays) to
canonical buffers: it is the one place where dtypes are canonicalised for concrete inputs.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from pyjax._src import caches, errors
from pyjax._src.config import config
from pyjax._src.core import dtypes
from pyjax._src.core.array import Array, ArrayImpl, weak_constant
from pyjax._src.core.avals import ShapedArray

_INT_BOUNDS = {dtypes.int32: (-2**31, 2**31 - 1), dtypes.int64: (-2**63, 2**63 - 1)}


def python_int_buffer(value: int, dtype: np.dtype) -> np.ndarray:
    """A Python int as a 0-d array of `dtype`, raising OverflowError like JAX when it won't fit."""
    lo, hi = _INT_BOUNDS.get(dtype, (-2**63, 2**64 - 1))
    if not lo <= value <= hi:
        raise OverflowError(f"Python int {value} too large to convert to {dtype.name}")
    return np.asarray(value, dtype)


def scalar_buffer(x: Any) -> tuple[np.ndarray, bool]:
    """Buffer and weak flag for a Python scalar (bool is strong; int/float/complex are weak)."""
    t = type(x)
    if t is float:
        if config.x64:
            return np.asarray(x, dtypes.float64), True
        if -3.4e38 < x < 3.4e38 or x != x:
            return np.asarray(x, dtypes.float32), True
        with np.errstate(over="ignore"):  # beyond float32's range: inf, silently, as in JAX
            return np.asarray(x, dtypes.float32), True
    if t is int:
        return python_int_buffer(x, dtypes.int64 if config.x64 else dtypes.int32), True
    if t is bool:
        return np.asarray(x), False
    return np.asarray(x, dtypes.complex128 if config.x64 else dtypes.complex64), True


def to_buffer(x: Any) -> tuple[np.ndarray, bool]:
    """(buffer, weak_type) of any concrete array-like value accepted as a primitive operand."""
    if type(x) is ArrayImpl:
        return x._buf, x._weak
    if type(x) in dtypes.python_scalar_dtypes:
        return scalar_buffer(x)
    if isinstance(x, (np.ndarray, np.generic)):
        dtype = dtypes.canonicalize_dtype(x.dtype)
        if dtype not in dtypes.supported_dtypes:
            raise TypeError(f"JAX only supports number and bool dtypes, got dtype {x.dtype}")
        return np.asarray(x, dtype), False
    from pyjax._src.core.trace import Tracer, check_alive
    if isinstance(x, Tracer):
        check_alive(x)
        raise errors.UnexpectedTracerError(x, lambda: x._trace.describe_leak(x))
    if isinstance(x, ArrayImpl):  # one still being computed (async_dispatch.PendingArray)
        return x._buf, x._weak
    if isinstance(x, Array):  # an array of an extended dtype (PRNG keys): its physical buffer
        return x._buf, False
    if hasattr(x, "__jax_array__"):
        return to_buffer(x.__jax_array__())
    raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")  # (JAX's)


def private_buffer(x: Any) -> tuple[np.ndarray, bool]:
    """`to_buffer`, copying a caller's NumPy array rather than aliasing it: what an Array keeps
    must not change when the caller writes to their array later."""
    buf, weak = to_buffer(x)
    if isinstance(x, np.ndarray) and np.may_share_memory(buf, x):
        buf = buf.copy()
    return buf, weak


def detach(out: Any, args: Sequence[Any], multiple_results: bool) -> Any:
    """Impl output(s), each copied if it may share memory with a NumPy array among `args`
    (a view such as a reshape or slice of the caller's array, or that array itself)."""
    user = [a for a in args if isinstance(a, np.ndarray)]
    if not user:
        return out
    if not multiple_results:
        return out.copy() if _aliases(out, user) else out
    return [b.copy() if _aliases(b, user) else b for b in out]


def _aliases(b: Any, user: list) -> bool:
    if not isinstance(b, np.ndarray):
        return False
    owns = b.base is None  # owning its memory, it shares only by being the argument itself
    for u in user:
        if b is u or (not owns and np.may_share_memory(b, u)):
            return True
    return False


def as_operand(x: Any) -> Any:
    """Arrays and tracers pass through; scalars and NumPy values become (weak) Arrays."""
    if isinstance(x, Array):
        return x
    if hasattr(x, "__jax_array__"):
        return as_operand(x.__jax_array__())
    if type(x) is np.ndarray and x.ndim:
        from pyjax._src.core.trace import trace_state
        if trace_state.trace is not None:  # one Array per NumPy array for a traced function
            from pyjax._src.transforms.staging import numpy_constant
            return numpy_constant(x)
    return weak_constant(x, *private_buffer(x))  # (a Python float kept, as JAX keeps it)


def aval_of(x: Any) -> ShapedArray:
    """Abstract value of a concrete value or tracer."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    buf, weak = to_buffer(x)
    return ShapedArray(buf.shape, buf.dtype, weak)


#: the machine's memory: an array result larger than this cannot be materialised
_MEMORY_BYTES = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def wrap(buf: Any, aval: ShapedArray) -> ArrayImpl:
    """Wrap an impl's result as an Array of exactly the abstract value's dtype.  A result
    bigger than memory (a broadcast, such as zeros((10**12,)), costs nothing here but could
    never be materialised) fails at once with XLA's error, as in JAX.  A token stays itself."""
    if type(buf) is not np.ndarray or buf.dtype != aval.dtype:
        if not hasattr(aval, "dtype"):  # a token is its own value
            return buf
        if not isinstance(aval.dtype, np.dtype):  # extended dtype (PRNG keys) over its buffer
            return aval.dtype.wrap_physical(buf)
        buf = np.asarray(buf, aval.dtype)
    if buf.nbytes > _MEMORY_BYTES:
        raise errors.JaxRuntimeError(
            f"RESOURCE_EXHAUSTED: Out of memory allocating {buf.nbytes} bytes.")
    return ArrayImpl(buf, aval.weak_type)


def _is_extended(x: Any) -> bool:
    return type(x) is not ArrayImpl and isinstance(x, Array) and not isinstance(x.dtype, np.dtype)


def apply_primitive(prim: Any, args: tuple, params: dict) -> Any:
    """Eager evaluation: validate with the abstract rule, compute with the NumPy impl."""
    bufs, avals = [], []
    foreign = False  # any operand not an Array (a NumPy array may be aliased by the impl)
    keys = False
    for x in args:
        buf, weak = to_buffer(x)
        foreign = foreign or type(x) is not ArrayImpl
        bufs.append(buf)
        # an array of an extended dtype (PRNG keys) is typed by its logical shape and dtype;
        # the impls work on its buffer, whose trailing axes are the key data
        if _is_extended(x):
            keys = True
            avals.append(x.aval)
        else:
            avals.append(ShapedArray(buf.shape, buf.dtype, weak))
    if keys:
        from pyjax._src.random import physical
        if prim.name in physical.RULES:  # a shape operation: on the key data, compiled
            return physical.apply(prim, args, params, avals)
    return _run_impl(prim, bufs, params, prim.abstract_eval(*avals, **params),
                     args if foreign else ())


def _run_impl(prim: Any, bufs: list, params: dict, out_aval: Any, args: Any = ()) -> Any:
    """The NumPy impl on `bufs`, its result(s) wrapped as Arrays of the checked aval(s).
    `args` holds the operands when some are NumPy arrays: outputs never alias those."""
    out = prim.impl(*bufs, **params)
    if args:
        out = detach(out, args, prim.multiple_results)
    if prim.multiple_results:
        return [wrap(b, a) for b, a in zip(out, out_aval)]
    return wrap(out, out_aval)


#: Output avals of successful abstract evaluations, keyed by primitive, operand types and
#: params.  Eager code calls the same op on the same shapes over and over; this skips the
#: validation after its first success (about half of an eager shape or dot op's cost).
_abstract_cache: dict = {}
_ABSTRACT_CACHE_SIZE = 4096

caches.register(_abstract_cache.clear)


def apply_primitive_cached(prim: Any, args: tuple, params: dict) -> Any:
    """`apply_primitive` for primitives whose params are small static values: the abstract
    rule runs once per (operand shapes, dtypes, weak flags, params)."""
    bufs, weaks = [], []
    key: list = [prim, config.x64]
    foreign = False  # any operand not an Array (a NumPy array may be aliased by the impl)
    for x in args:
        if type(x) is ArrayImpl:
            buf, weak = x._buf, x._weak
        elif _is_extended(x):  # its physical buffer alone would make a wrong cache key
            return apply_primitive(prim, args, params)
        else:
            buf, weak = to_buffer(x)
            foreign = True
        bufs.append(buf)
        weaks.append(weak)
        key += (buf.shape, buf.dtype, weak)
    key.extend(params.items())
    try:
        key_t = tuple(key)
        out_aval = _abstract_cache.get(key_t)
    except TypeError:  # an unhashable param (a list): validate every time
        return apply_primitive(prim, args, params)
    if out_aval is None:
        out_aval = prim.abstract_eval(*[ShapedArray(b.shape, b.dtype, w)
                                        for b, w in zip(bufs, weaks)], **params)
        _remember(key_t, out_aval)
    return _run_impl(prim, bufs, params, out_aval, args if foreign else ())


def _remember(key: tuple, out_aval: Any) -> None:
    if len(_abstract_cache) >= _ABSTRACT_CACHE_SIZE:
        _abstract_cache.clear()
    _abstract_cache[key] = out_aval


def abstract_eval_cached(prim: Any, avals: list, params: dict) -> Any:
    """prim.abstract_eval(*avals, **params), from the same cache (for eager rules that have
    their avals, such as those of PRNG key arrays, whose buffers alone would not say)."""
    key = (prim, config.x64, *avals, *params.items())
    try:
        out_aval = _abstract_cache.get(key)
    except TypeError:  # an unhashable param: validate every time
        return prim.abstract_eval(*avals, **params)
    if out_aval is None:
        out_aval = prim.abstract_eval(*avals, **params)
        _remember(key, out_aval)
    return out_aval
