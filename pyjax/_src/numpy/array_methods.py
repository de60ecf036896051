"""Attach NumPy-style operators and methods to `Array` (shared by concrete arrays and tracers).

Each operator defers (returns NotImplemented) to operands that are not array-like, so Python can
try the other operand's reflected method, as with JAX.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.array import Array, ArrayImpl
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy import util


def _accepts(other: Any) -> bool:
    return type(other) is ArrayImpl or util.is_arraylike(other)


def _forward(fn: Callable) -> Callable:
    def op(self: Any, other: Any) -> Any:
        if type(other) is not ArrayImpl and not _accepts(other):
            return NotImplemented
        return fn(self, other)
    op.__name__ = fn.__name__
    return op


def _reflected(fn: Callable) -> Callable:
    def op(self: Any, other: Any) -> Any:
        if not _accepts(other):
            return NotImplemented
        return fn(other, self)
    op.__name__ = fn.__name__
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


def _reshape(self: Any, *args: Any, order: str = "C", **kwargs: Any) -> Any:
    shape = args[0] if len(args) == 1 else args
    if "shape" in kwargs:
        shape = kwargs["shape"]
    return lnp.reshape(self, shape, order)


def _transpose(self: Any, *axes: Any) -> Any:
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return lnp.transpose(self, axes or None)


def _astype(self: Any, dtype: Any, copy: bool = False, device: Any = None) -> Any:
    return lnp.astype(self, dtype)


def _getitem(self: Any, index: Any) -> Any:
    from pyjax._src.numpy.indexing import getitem
    return getitem(self, index)


def _at(self: Any) -> Any:
    from pyjax._src.numpy.indexing import AtIndexer
    return AtIndexer(self)


_METHODS: dict[str, Callable] = {
    "sum": red.sum, "prod": red.prod, "max": red.max, "min": red.min, "mean": red.mean,
    "var": red.var, "std": red.std, "all": red.all, "any": red.any, "argmax": red.argmax,
    "argmin": red.argmin, "reshape": _reshape, "transpose": _transpose, "astype": _astype,
    "ravel": lnp.ravel, "flatten": lnp.ravel, "squeeze": lnp.squeeze,
    "swapaxes": lnp.swapaxes, "dot": lnp.dot, "clip": uf.clip, "round": uf.round,
    "conj": lambda self: self if not dtypes.is_complex(np.dtype(self.dtype)) else
    uf.lax.conj(self), "conjugate": lambda self: _METHODS["conj"](self),
    "__getitem__": _getitem,
}
_PROPERTIES: dict[str, Callable] = {
    "T": lambda self: lnp.transpose(self),
    "mT": lnp.matrix_transpose,
    "at": _at,
    "real": lambda self: uf.lax.real(self) if dtypes.is_complex(np.dtype(self.dtype)) else self,
    "imag": lambda self: uf.lax.imag(self) if dtypes.is_complex(np.dtype(self.dtype)) else
    lnp.zeros_like(self),
}


def install() -> None:
    """Define the operators, methods and properties on the Array base class."""
    for name, fn in _BINARY.items():
        setattr(Array, f"__{name}__", _forward(fn))
        setattr(Array, f"__r{name}__", _reflected(fn))
    for name, fn in _COMPARISONS.items():
        setattr(Array, f"__{name}__", _forward(fn))
    for name, fn in _UNARY.items():
        setattr(Array, f"__{name}__", fn)
    for name, fn in _METHODS.items():
        setattr(Array, name, fn)
    for name, fn in _PROPERTIES.items():
        setattr(Array, name, property(fn))
    Array.__hash__ = None  # comparisons return arrays, so arrays cannot be hashed
    ArrayImpl.__hash__ = None


install()
