"""Attach NumPy-style operators, methods and properties to `Array` (shared by concrete arrays
and tracers), each forwarding to the jnp function JAX's method forwards to.

Each binary operator defers (returns NotImplemented) to operands that are not array-like, so
Python can try the other operand's reflected method, as with JAX.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

import numpy as np

from pyjax._src import errors
from pyjax._src.backend.eager_plans import scalar_operator
from pyjax._src.core import dtypes
from pyjax._src.core.array import Array, ArrayImpl
from pyjax._src.core.trace import Tracer
from pyjax._src.numpy import array_api_metadata, indexing
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy import util


def _accepts(other: Any) -> bool:
    return type(other) in _OPERANDS or util.is_arraylike(other)


#: operand types accepted without a call (`x > 0`, `x + y`)
_OPERANDS = frozenset((ArrayImpl, int, float))


def _forward(fn: Callable) -> Callable:
    def op(self: Any, other: Any) -> Any:
        if not _accepts(other):
            return NotImplemented
        return fn(self, other)
    op.__name__ = op.__qualname__ = fn.__name__
    return op


def _equality(fn: Callable) -> Callable:
    """`==` / `!=`: containers are rejected (not compared by identity to False), as in JAX,
    whose message says `==` for both."""
    def op(self: Any, other: Any) -> Any:
        if not _accepts(other):
            if type(other) in (dict, list, set, tuple):
                raise TypeError(f"unsupported operand type(s) for ==: "
                                f"{type(self).__name__!r} and {type(other).__name__!r}")
            return NotImplemented
        return fn(self, other)
    op.__name__ = op.__qualname__ = fn.__name__
    return op


def _deepcopy(self: Any, memo: Any) -> Any:
    """A copy (a new tracer under a transformation, as in JAX)."""
    return self.copy()


def _tracer_reduce(self: Any) -> Any:
    raise errors.ConcretizationTypeError(
        self, "The error occurred in the __reduce__ method, which may indicate an attempt to "
        "serialize/pickle a traced value.\n")


def _reflected(fn: Callable) -> Callable:
    def op(self: Any, other: Any) -> Any:
        if not _accepts(other):
            return NotImplemented
        return fn(other, self)
    op.__name__ = op.__qualname__ = fn.__name__
    return op


_BINARY = {
    "add": uf.add, "sub": uf.subtract, "mul": uf.multiply, "truediv": uf.true_divide,
    "floordiv": uf.floor_divide, "mod": uf.remainder, "pow": uf.power, "matmul": lnp.matmul,
    "and": uf.bitwise_and, "or": uf.bitwise_or, "xor": uf.bitwise_xor,
    "lshift": uf.left_shift, "rshift": uf.right_shift, "divmod": uf.divmod,
}
_COMPARISONS = {"eq": uf.equal, "ne": uf.not_equal, "lt": uf.less, "le": uf.less_equal,
                "gt": uf.greater, "ge": uf.greater_equal}
_UNARY = {"neg": uf.negative, "pos": uf.positive, "abs": uf.absolute, "invert": uf.invert}


def _round(number: Any, ndigits: int | None = None) -> Any:
    """round(x): to an integer array; round(x, n): to n decimals."""
    out = uf.round(number, decimals=ndigits or 0)
    return lnp.astype(out, int) if ndigits is None else out


def _reshape(self: Any, *args: Any, order: str = "C") -> Any:
    return lnp.reshape_method(self, args[0] if len(args) == 1 else args, order)


def _transpose(self: Any, *args: Any) -> Any:
    if not args:
        axes = None
    elif len(args) == 1:
        axes = args[0] if args[0] is None else lnp._index_tuple(args[0])
    else:
        axes = lnp._index_tuple(args)
    return lnp.transpose(self, axes)


def _astype(self: Any, dtype: Any, copy: bool = False, device: Any = None) -> Any:
    return lnp.astype(self, dtype, copy=copy)


def _clip(self: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    return uf.clip(self, min=min, max=max)


def _to_device(self: Any, device: Any, *, stream: Any = None) -> Any:
    """The array placed on `device` (array API); streams are not supported, as in JAX."""
    if stream is not None:
        raise NotImplementedError("stream argument of array.to_device()")
    from pyjax._src.api import device_put
    return device_put(self, device)


def _compress(self: Any, condition: Any, axis: int | None = None, *, out: None = None,
              size: int | None = None, fill_value: Any = 0) -> Any:
    from pyjax._src.numpy import sorting
    return sorting.compress(condition, self, axis=axis, out=out, size=size,
                            fill_value=fill_value)


def _byteswap(self: Any) -> Any:
    """Each element with its bytes reversed (same dtype), through a uint8 bitcast."""
    from pyjax import lax
    if dtypes.is_complex(np.dtype(self.dtype)):
        return lax.complex(_byteswap(uf.real(self)), _byteswap(uf.imag(self)))
    if self.itemsize == 1:
        return self.copy()
    as_bytes = lax.bitcast_convert_type(self, np.uint8)
    return lax.bitcast_convert_type(lax.rev(as_bytes, [self.ndim]), self.dtype)


def _view(self: Any, dtype: Any = None, type: None = None) -> Any:  # noqa: A002
    """The array's bits read as `dtype`; the last axis shrinks or grows by the ratio of the
    bit widths (bool is read as uint8, complex as pairs of floats)."""
    from pyjax import lax
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return self
    dtype = dtypes.check_user_dtype(dtype, "view")
    bits_in, bits_out = dtypes.itemsize_bits(self.dtype), dtypes.itemsize_bits(dtype)
    if self.ndim == 0:
        if bits_in != bits_out:
            raise ValueError("view() of a 0d array is only supported if the itemsize is "
                             "unchanged.")
        return lnp.squeeze(_view(lnp.expand_dims(self, 0), dtype))
    if (self.shape[-1] * bits_in) % bits_out:
        raise ValueError("When changing to a larger dtype, its size must be a divisor of the "
                         "total size in bytes of the last axis of the array.")
    src = np.dtype(self.dtype)
    if src == dtype:
        return self
    if src == dtypes.bool_:
        return _view(lnp.astype(self, np.uint8), dtype)
    if dtypes.is_complex(src):
        parts = lnp.stack([uf.real(self), uf.imag(self)], axis=-1)
        return _view(lnp.reshape(parts, (*self.shape[:-1], 2 * self.shape[-1])), dtype)
    if dtype == dtypes.bool_:
        return lnp.astype(_view(self, np.uint8), bool)
    if dtypes.is_complex(dtype):
        pairs = _view(self, dtypes.finfo(dtype).dtype)
        return lax.complex(pairs[..., 0::2], pairs[..., 1::2])
    if bits_in < bits_out:
        factor = bits_out // bits_in
        grouped = lnp.reshape(self, (*self.shape[:-1], self.shape[-1] // factor, factor))
        return lax.bitcast_convert_type(grouped, dtype)
    out = lax.bitcast_convert_type(self, dtype)
    if bits_in > bits_out:
        return lnp.reshape(out, (*out.shape[:-2], out.shape[-2] * out.shape[-1]))
    return out


def _flat(self: Any) -> Any:
    raise NotImplementedError("JAX Arrays do not implement the arr.flat property: consider "
                              "arr.flatten() instead.")


class _Deferred:
    """A method whose module loads on first use (issue 16: a fast `import`): the first lookup
    puts the function itself on `Array`, so it then binds and reads as if installed eagerly."""

    def __init__(self, module: str, attr: str):
        self.module, self.attr = module, attr

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        setattr(Array, self.name, getattr(importlib.import_module(self.module), self.attr))
        return getattr(Array if obj is None else obj, self.name)


_METHODS: dict[str, Any] = {  # a function, or a _Deferred one
    "all": red.all, "any": red.any, "argmax": red.argmax, "argmin": red.argmin,
    "argsort": lnp.argsort, "astype": _astype, "clip": _clip, "conj": uf.conjugate,
    "conjugate": uf.conjugate, "copy": lnp.copy, "cumprod": red.cumprod, "cumsum": red.cumsum,
    "dot": lnp.dot, "flatten": lnp.ravel, "max": red.max, "mean": red.mean, "min": red.min,
    "nonzero": lnp.nonzero, "prod": red.prod, "ptp": red.ptp, "ravel": lnp.ravel,
    "repeat": lnp.repeat, "reshape": _reshape, "round": uf.round, "sort": lnp.sort,
    "squeeze": lnp.squeeze, "std": red.std, "sum": red.sum, "swapaxes": lnp.swapaxes,
    "transpose": _transpose, "var": red.var, "__getitem__": indexing.getitem,
    "__round__": _round,
    "__array_namespace__": array_api_metadata.__array_namespace__, "to_device": _to_device,
    "argpartition": _Deferred("pyjax._src.numpy.sorting", "argpartition"),
    "byteswap": _byteswap, "choose": _Deferred("pyjax._src.numpy.index_tricks", "choose"),
    "compress": _compress, "diagonal": lnp.diagonal,
    "searchsorted": _Deferred("pyjax._src.numpy.sorting", "searchsorted"), "take": indexing.take,
    "trace": _Deferred("pyjax._src.numpy.manipulation", "trace"), "view": _view,
}
_PROPERTIES: dict[str, Callable] = {
    "T": lnp.transpose, "mT": lnp.matrix_transpose, "real": uf.real, "imag": uf.imag,
    "at": indexing.AtIndexer, "flat": _flat,
}


def _tracer_iter(self: Tracer) -> Any:
    """Rows of a traced array as JAX takes them: a static slice and squeeze per row."""
    from pyjax._src.primitives.indexing import index_in_dim
    if not self.aval.shape:
        raise TypeError("iteration over a 0-d array")
    return (index_in_dim(self, i, keepdims=False) for i in range(self.aval.shape[0]))


def install() -> None:
    """Define the operators, methods and properties on the Array base class."""
    for name, fn in _BINARY.items():
        setattr(Array, f"__{name}__", scalar_operator(fn, False, _forward(fn)))
        setattr(Array, f"__r{name}__", scalar_operator(fn, True, _reflected(fn)))
    for name, fn in _COMPARISONS.items():
        setattr(Array, f"__{name}__", scalar_operator(
            fn, False, (_equality if name in ("eq", "ne") else _forward)(fn)))
    Array.__copy__ = lambda self: self.copy()
    Array.__deepcopy__ = _deepcopy
    Tracer.__reduce__ = _tracer_reduce
    Tracer.__iter__ = _tracer_iter
    for name, fn in _UNARY.items():
        setattr(Array, f"__{name}__", fn)
    for name, fn in _METHODS.items():
        setattr(Array, name, fn)
        if isinstance(fn, _Deferred):
            fn.__set_name__(Array, name)
    for name, fn in _PROPERTIES.items():
        setattr(Array, name, property(fn))
    Array.__hash__ = None  # comparisons return arrays, so arrays cannot be hashed
    ArrayImpl.__hash__ = None


install()
