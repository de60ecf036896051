"""Shared helpers to declare primitives of one family in a few lines each."""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from pyjax._src.backend.dispatch import apply_primitive, apply_primitive_cached
from pyjax._src.backend.eager_plans import plain_eager
from pyjax._src.backend.specialized import exact
from pyjax._src.core import dtypes
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.primitive import Primitive

# dtype kinds a primitive accepts
BOOL = "bool"
INT = "int"
UINT = "uint"
FLOAT = "float"
COMPLEX = "complex"
NUMBER = (INT, UINT, FLOAT, COMPLEX)
ANY = (BOOL, INT, UINT, FLOAT, COMPLEX)
INTEGRAL = (BOOL, INT, UINT)


def _kind_of(dtype: np.dtype) -> str:
    if dtype == dtypes.bool_:
        return BOOL
    if dtypes.is_unsigned(dtype):
        return UINT
    if dtypes.is_integer(dtype):
        return INT
    if dtypes.is_complex(dtype):
        return COMPLEX
    return FLOAT


#: dtype -> kind, filled on first use (impls ask on every call)
_KINDS: dict = {}


def dtype_kind(dtype: np.dtype) -> str:
    """BOOL, INT, UINT, FLOAT or COMPLEX."""
    try:
        return _KINDS[dtype]
    except KeyError:
        kind = _KINDS[dtype] = _kind_of(dtype)
        return kind
    except TypeError:  # an unhashable dtype-like
        return _kind_of(dtype)


def check_kinds(name: str, kinds: tuple, *avals: ShapedArray) -> None:
    for aval in avals:
        if dtype_kind(aval.dtype) not in kinds:
            raise TypeError(f"{name} does not accept dtype {dtypes.dtype_name(aval.dtype)}. "
                            f"Accepted dtypes are subtypes of {', '.join(_KIND_NAMES[k] for k in kinds)}.")


_KIND_NAMES = {BOOL: "bool", INT: "signedinteger", UINT: "unsignedinteger",
               FLOAT: "floating", COMPLEX: "complexfloating"}


def _takes_out_ellipsis() -> bool:
    """Whether NumPy's ufuncs take `out=...`: return an array where they would return a NumPy
    scalar (a 0-d result; NumPy 2.3)."""
    try:
        np.add(np.zeros(()), 1.0, out=...)
    except TypeError:
        return False
    return True


_OUT_ELLIPSIS = _takes_out_ellipsis()


def exact_ufunc(fn: Callable, result: np.dtype, rank: int, **kwargs: Any) -> Callable:
    """`fn` (a ufunc, or a method of one such as `np.add.reduce`) with `kwargs` bound, as an
    exact impl for eager plans (specialized.exact), for operands whose NumPy loop gives dtype
    `result` and a result of rank `rank`.  NumPy returns a NumPy scalar for rank 0, so then
    it is called with `out=...`, which returns a 0-d array; NumPy's own dtypes keep their type
    (an int4 max gives int8), so any other `result` is converted."""
    if result.isbuiltin != 1 or (rank == 0 and not _OUT_ELLIPSIS):
        call = functools.partial(fn, **kwargs)
        return exact(lambda *xs: np.asarray(call(*xs), result))
    if rank == 0:
        kwargs["out"] = ...
    return exact(functools.partial(fn, **kwargs))


def make_primitive(name: str, impl: Callable, abstract_eval: Callable, *,
                   multiple_results: bool = False) -> Primitive:
    prim = Primitive(name, multiple_results=multiple_results)
    prim.impl = impl
    prim.abstract_eval = abstract_eval
    prim.eager = apply_primitive_cached  # its params are small static values
    return prim


def fast_eager(kinds: tuple, weak_rule: Callable[[bool], bool] | None = None,
               ufunc: np.ufunc | None = None) -> Callable:
    """Eager rule for elementwise ops: when all operands are arrays of one accepted dtype and
    one shape (or rank 0, which broadcasts) the abstract rule cannot fail, so run the impl
    directly (NumPy speed).  `ufunc`: what the impl computes for NumPy's own dtypes (the
    impl itself, or wrapped for ml_dtypes' sake), called directly for them."""
    accepted = frozenset(d for d in dtypes.supported_dtypes if dtype_kind(d) in kinds)
    #: accepted dtype -> what computes on it (None: the primitive's impl)
    kernels = {d: ufunc if ufunc is not None and d.isbuiltin == 1 else None for d in accepted}

    def eager(prim: Primitive, args: tuple, params: dict) -> Any:
        if len(args) == 2:  # binary, the common case: spelt out
            x, y = args
            if type(x) is ArrayImpl and type(y) is ArrayImpl:
                xb, yb = x._buf, y._buf
                dtype = xb.dtype
                kernel = kernels.get(dtype, False)
                if kernel is False:
                    return apply_primitive(prim, args, params)
                if yb.dtype == dtype and (xb.shape == yb.shape or not yb.shape or not xb.shape):
                    kernel = kernel or prim.impl  # (no **{}: a ufunc's vectorcall)
                    out = kernel(xb, yb, **params) if params else kernel(xb, yb)
                    if type(out) is not np.ndarray:
                        out = np.asarray(out)
                    weak = x._weak and y._weak
                    return ArrayImpl(out, weak if weak_rule is None else weak_rule(weak))
            return apply_primitive_cached(prim, args, params)
        first = args[0]
        if type(first) is ArrayImpl:
            fb = first._buf
            shape, dtype = fb.shape, fb.dtype
            kernel = kernels.get(dtype, False)
            if kernel is False:
                return apply_primitive(prim, args, params)
            bufs = []
            weak = True
            for a in args:
                if type(a) is not ArrayImpl:
                    break
                b = a._buf
                if b.dtype != dtype:
                    break
                if b.shape != shape:
                    if not shape:
                        shape = b.shape
                    elif b.shape:
                        break
                bufs.append(b)
                weak = weak and a._weak
            else:
                out = (kernel or prim.impl)(*bufs, **params)
                if type(out) is not np.ndarray:
                    out = np.asarray(out)
                return ArrayImpl(out, weak if weak_rule is None else weak_rule(weak))
        return apply_primitive_cached(prim, args, params)

    return plain_eager(eager)
