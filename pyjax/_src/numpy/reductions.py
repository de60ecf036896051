"""jnp reductions with NumPy's axis/keepdims/dtype conventions, over lax reduction primitives."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.numpy import util
from pyjax._src.numpy.util import staged_as_jit
from pyjax._src.primitives import elementwise as lax
from pyjax._src.primitives import reductions as red
from pyjax._src.primitives import shape as shp

Axis = int | Sequence[int] | None


def _axes(axis: Axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(util.canonicalize_axis(a, ndim) for a in axis)
    else:
        axes = (util.canonicalize_axis(axis, ndim),)
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return axes


def _keep(result: Any, axes: tuple[int, ...], shape: tuple[int, ...]) -> Any:
    """Reinsert reduced axes as size 1 (keepdims=True)."""
    kept = tuple(1 if i in axes else s for i, s in enumerate(shape))
    return shp.reshape(result, kept)


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    """NumPy's accumulator rule: small ints and bool widen to the default int (uint to uint)."""
    if dtype == dtypes.bool_:
        return dtypes.default_int_dtype()
    if dtypes.is_unsigned(dtype) and dtype.itemsize < np.dtype(dtypes.default_uint_dtype()).itemsize:
        return dtypes.default_uint_dtype()
    if dtypes.is_integer(dtype) and dtype.itemsize < np.dtype(dtypes.default_int_dtype()).itemsize:
        return dtypes.default_int_dtype()
    return dtype


def _reduction(name: str, prim_fn: Callable, *, widen: bool = False, to_bool: bool = False,
               initial_op: Callable | None = None) -> Callable:
    def fn(a: Any, axis: Axis = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, initial: Any = None, where: Any = None,
           promote_integers: bool = True) -> Any:
        util.check_arraylike(name, a)
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        a = util.as_operand(a)
        shape = tuple(np.shape(a))
        axes = _axes(axis, len(shape))
        if to_bool:
            a = util.convert(a, dtypes.bool_, False)
        elif dtype is not None:
            a = util.convert(a, dtypes.check_user_dtype(dtype), False)
        elif widen and promote_integers:
            a = util.convert(a, _sum_dtype(np.dtype(a.dtype)), a.weak_type)
        if where is not None:
            a = _apply_where(name, a, where)
        result = prim_fn(a, axes)
        if initial is not None:
            result = initial_op(result, initial)
        return _keep(result, axes, shape) if keepdims else result

    fn.__name__ = name
    fn.__doc__ = f"jnp.{name}: reduce over `axis` (all axes by default)."
    return fn


def _apply_where(name: str, a: Any, where: Any) -> Any:
    from pyjax._src.numpy.ufuncs import where as select
    identity = {"sum": 0, "prod": 1, "any": False, "all": True}.get(name)
    if identity is None:
        raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                         "where mask one has to specify 'initial'")
    return select(where, a, np.asarray(identity, np.dtype(a.dtype)))


sum = _reduction("sum", red.reduce_sum, widen=True,  # noqa: A001
                 initial_op=lambda r, i: lax.add(r, util.convert(util.as_operand(i), r.dtype,
                                                                 False)))
prod = _reduction("prod", red.reduce_prod, widen=True,
                  initial_op=lambda r, i: lax.mul(r, util.convert(util.as_operand(i), r.dtype,
                                                                  False)))
max = _reduction("max", red.reduce_max,  # noqa: A001
                 initial_op=lambda r, i: lax.max(r, util.convert(util.as_operand(i), r.dtype,
                                                                 False)))
min = _reduction("min", red.reduce_min,  # noqa: A001
                 initial_op=lambda r, i: lax.min(r, util.convert(util.as_operand(i), r.dtype,
                                                                 False)))
all = _reduction("all", red.reduce_and, to_bool=True)  # noqa: A001
any = _reduction("any", red.reduce_or, to_bool=True)  # noqa: A001
amax, amin = max, min


def mean(a: Any, axis: Axis = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
         *, where: Any = None) -> Any:
    """Arithmetic mean; integers average in the default float type."""
    util.check_arraylike("mean", a)
    a = util.as_operand(a)
    shape = tuple(np.shape(a))
    axes = _axes(axis, len(shape))
    count = int(np.prod([shape[i] for i in axes], dtype=np.int64))
    if dtype is None:
        result_dtype = dtypes.to_inexact_dtype(np.dtype(a.dtype))
    else:
        result_dtype = dtypes.check_user_dtype(dtype)
    total = sum(util.convert(a, result_dtype, a.weak_type), axis, keepdims=keepdims, where=where)
    if where is not None:
        count = sum(util.broadcast_to(where, shape), axis, dtype=result_dtype, keepdims=keepdims)
        return lax.div(total, count)
    return lax.div(total, _const(count, np.dtype(total.dtype)))


def _const(value: Any, dtype: np.dtype) -> Any:
    from pyjax._src.core.array import ArrayImpl
    return ArrayImpl(np.asarray(value, dtype), False)


@staged_as_jit(static_argnames=("axis", "dtype", "ddof", "keepdims"))
def var(a: Any, axis: Axis = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Any:
    """Variance: mean of squared deviations, divided by N - ddof."""
    if correction is not None:
        ddof = correction
    util.check_arraylike("var", a)
    a = util.as_operand(a)
    shape = tuple(np.shape(a))
    axes = _axes(axis, len(shape))
    computation_dtype = dtypes.to_inexact_dtype(np.dtype(a.dtype))
    a = util.convert(a, computation_dtype, a.weak_type)
    centered = lax.sub(*util.promote_shapes("var", a, mean(a, axis, keepdims=True)))
    squared = lax.mul(centered, centered) if not dtypes.is_complex(computation_dtype) else \
        lax.real(lax.mul(centered, lax.conj(centered)))
    count = int(np.prod([shape[i] for i in axes], dtype=np.int64)) - ddof
    total = sum(squared, axis, keepdims=keepdims)
    out_dtype = np.dtype(total.dtype) if dtype is None else dtypes.check_user_dtype(dtype)
    return util.convert(lax.div(total, _const(count, np.dtype(total.dtype))), out_dtype, False)


def std(a: Any, axis: Axis = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Any:
    """Standard deviation: sqrt of var."""
    return lax.sqrt(var(a, axis, dtype, ddof=ddof, keepdims=keepdims, correction=correction))


def _arg_reduction(name: str, prim_fn: Callable) -> Callable:
    def fn(a: Any, axis: int | None = None, out: Any = None, keepdims: bool | None = None) -> Any:
        util.check_arraylike(name, a)
        a = util.as_operand(a)
        shape = tuple(np.shape(a))
        if axis is None:
            flat = shp.reshape(a, (int(np.prod(shape, dtype=np.int64)),))
            result = prim_fn(flat, 0, dtypes.default_int_dtype())
            return shp.reshape(result, (1,) * len(shape)) if keepdims else result
        ax = util.canonicalize_axis(axis, len(shape))
        if shape[ax] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        result = prim_fn(a, ax, dtypes.default_int_dtype())
        return _keep(result, (ax,), shape) if keepdims else result

    fn.__name__ = name
    fn.__doc__ = f"jnp.{name}: index of the extreme value (first one on ties)."
    return fn


argmax = _arg_reduction("argmax", red.argmax)
argmin = _arg_reduction("argmin", red.argmin)
