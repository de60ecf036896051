"""jnp reductions with NumPy's axis/keepdims/dtype/initial/where conventions, following JAX
0.10's recipes (accumulator dtypes, float16 upcasting, jitted var/std/cumsum) over lax
reduction primitives.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.numpy import util
from pyjax._src.backend.eager_plans import planned
from pyjax._src.numpy.util import lax_const
from pyjax._src.numpy.util import check_arraylike, promote_dtypes_numeric, staged_as_jit
from pyjax._src.primitives import elementwise as lax
from pyjax._src.primitives import extra as lax_extra
from pyjax._src.primitives import reductions as red
from pyjax._src.primitives import shape as shp

Axis = int | Sequence[int] | None


def _ensure(name: str, a: Any) -> Any:
    check_arraylike(name, a)
    return util.as_operand(a)


def _optional_axes(axis: Axis) -> Axis:
    """None, an int, or a tuple of ints (axes must be static)."""
    if axis is None:
        return None
    try:
        return operator.index(axis)
    except TypeError:
        return tuple(operator.index(i) for i in axis)


def _reduction_dims(a: Any, axis: Axis) -> tuple[int, ...]:
    ndim = np.ndim(a)
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list, np.ndarray)) else (axis,)
    dims = tuple(util.canonicalize_axis(x, ndim) for x in axes)
    if len(dims) != len(set(dims)):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return dims


def _upcast_f16(dtype: np.dtype) -> np.dtype:
    return dtypes.float32 if dtype in (dtypes.float16, dtypes.bfloat16) else dtype


def _promote_integer_dtype(dtype: np.dtype) -> np.dtype:
    """NumPy's accumulator rule, with JAX's default int/uint widths."""
    if dtype == dtypes.bool_:
        return dtypes.default_int_dtype()
    if dtypes.is_unsigned(dtype):
        default = dtypes.default_uint_dtype()
        return default if dtype.itemsize < default.itemsize else dtype
    if dtypes.is_integer(dtype):
        default = dtypes.default_int_dtype()
        return default if dtype.itemsize < default.itemsize else dtype
    return dtype


def _init_value(dtype: np.dtype, value: Any) -> np.ndarray:
    """The identity `value` as a scalar of `dtype` (infinities clip for integers)."""
    if dtype == dtypes.bool_:
        return np.array(value > 0, dtype)
    if dtypes.is_integer(dtype) and np.isinf(value):
        info = dtypes.iinfo(dtype)
        return np.array(info.min if value < 0 else info.max, dtype)
    return np.array(value, dtype)


def _check_where(name: str, where: Any) -> Any:
    if where is None:
        return None
    where = _ensure(name, where)
    if np.dtype(where.dtype) != dtypes.bool_:
        raise ValueError(f"jnp.{name}: where must be None or a boolean array; got "
                         f"where.dtype={np.dtype(where.dtype)}.")
    return where


def _cast_to_bool(a: Any) -> Any:
    if dtypes.is_complex(np.dtype(a.dtype)):
        a = lax.real(a)
    return util.convert(a, dtypes.bool_, False)


def _cast_to_numeric(a: Any) -> Any:
    """Booleans become int32; numbers pass through."""
    return promote_dtypes_numeric(a)[0] if np.dtype(a.dtype) == dtypes.bool_ else a


class _Monoid:
    """A reduction: its lax op (for `initial`), its primitive, and its identity."""

    def __init__(self, op: Callable, reduce: Callable, identity: Any):
        self.op, self.reduce, self.identity = op, reduce, identity


_MONOIDS = {
    "sum": _Monoid(lax.add, red.reduce_sum, 0), "prod": _Monoid(lax.mul, red.reduce_prod, 1),
    "max": _Monoid(lax.max, red.reduce_max, -np.inf),
    "min": _Monoid(lax.min, red.reduce_min, np.inf),
    "and": _Monoid(lax.bitwise_and, red.reduce_and, True),
    "or": _Monoid(lax.bitwise_or, red.reduce_or, False),
    "xor": _Monoid(lax.bitwise_xor, red.reduce_xor, False),
}
# on booleans sum and prod reduce with or / and
_BOOL_MONOID = {"sum": "or", "prod": "and"}


def _reduction(a: Any, name: str, monoid: str, *, has_identity: bool = True,
               preproc: Callable | None = None, upcast_f16_for_computation: bool = False,
               axis: Axis = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = None, promote_integers: bool = False,
               init_val: Any = None) -> Any:
    """The shared body of sum, prod, max, min, all and any (init_val: where's fill value when
    it is not the monoid's identity, as for bitwise_and.reduce's -1)."""
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    a = _ensure(name, a)
    where = _check_where(name, where)
    if initial is None and not has_identity and where is not None:
        raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                         f"where mask one has to specify 'initial'")
    a = preproc(a) if preproc else a
    dims = _reduction_dims(a, axis)
    if initial is None and not has_identity:
        shape = np.shape(a)
        if not builtins.all(shape[d] >= 1 for d in dims):
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             "identity")
    if dtype is None:
        result_dtype = np.dtype(a.dtype)
        if promote_integers:
            result_dtype = _promote_integer_dtype(result_dtype)
    else:
        result_dtype = dtypes.check_user_dtype(dtype)
    computation_dtype = result_dtype
    if upcast_f16_for_computation and dtypes.is_inexact(result_dtype):
        computation_dtype = _upcast_f16(result_dtype)
    a = util.convert(a, computation_dtype, False)
    if computation_dtype == dtypes.bool_:
        monoid = _BOOL_MONOID.get(monoid, monoid)
    rule = _MONOIDS[monoid]
    if where is not None:
        from pyjax._src.numpy.ufuncs import _where
        fill = rule.identity if init_val is None else init_val
        a = _where(where, a, _init_value(computation_dtype, fill))
    result = rule.reduce(a, dims)
    if initial is not None:
        initial_arr = util.convert(initial, computation_dtype, False)
        if np.shape(initial_arr) != ():
            raise ValueError(f"initial value must be a scalar. Got array of shape "
                             f"{np.shape(initial_arr)}")
        result = rule.op(initial_arr, result)
    if keepdims:
        result = shp.expand_dims(result, dims)
    return util.convert(result, result_dtype, False)


@planned
def sum(a: Any, axis: Axis = None, dtype: Any = None, out: Any = None,  # noqa: A001
        keepdims: bool = False, initial: Any = None, where: Any = None,
        promote_integers: bool = True) -> Any:
    """Sum over `axis` (all axes by default); small integers accumulate in the default int."""
    return _reduction(a, "sum", "sum", preproc=_cast_to_numeric,
                      upcast_f16_for_computation=dtype is None, axis=_optional_axes(axis),
                      dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where,
                      promote_integers=promote_integers)


@planned
def prod(a: Any, axis: Axis = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, initial: Any = None, where: Any = None,
         promote_integers: bool = True) -> Any:
    """Product over `axis` (all axes by default)."""
    return _reduction(a, "prod", "prod", preproc=_cast_to_numeric,
                      upcast_f16_for_computation=dtype is None, axis=_optional_axes(axis),
                      dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where,
                      promote_integers=promote_integers)


@planned
def max(a: Any, axis: Axis = None, out: Any = None, keepdims: bool = False,  # noqa: A001
        initial: Any = None, where: Any = None) -> Any:
    """Maximum over `axis` (all axes by default)."""
    return _reduction(a, "max", "max", has_identity=False, axis=_optional_axes(axis),
                      out=out, keepdims=keepdims, initial=initial, where=where)


@planned
def min(a: Any, axis: Axis = None, out: Any = None, keepdims: bool = False,  # noqa: A001
        initial: Any = None, where: Any = None) -> Any:
    """Minimum over `axis` (all axes by default)."""
    return _reduction(a, "min", "min", has_identity=False, axis=_optional_axes(axis),
                      out=out, keepdims=keepdims, initial=initial, where=where)


@planned
def all(a: Any, axis: Axis = None, out: Any = None, keepdims: bool = False, *,  # noqa: A001
        where: Any = None) -> Any:
    """Whether every element over `axis` is true."""
    return _reduction(a, "all", "and", preproc=_cast_to_bool, axis=_optional_axes(axis),
                      out=out, keepdims=keepdims, where=where)


@planned
def any(a: Any, axis: Axis = None, out: Any = None, keepdims: bool = False, *,  # noqa: A001
        where: Any = None) -> Any:
    """Whether some element over `axis` is true."""
    return _reduction(a, "any", "or", preproc=_cast_to_bool, axis=_optional_axes(axis),
                      out=out, keepdims=keepdims, where=where)


def amax(a: Any, axis: Axis = None, out: Any = None, keepdims: bool = False,
         initial: Any = None, where: Any = None) -> Any:
    """Alias of max."""
    return max(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


def amin(a: Any, axis: Axis = None, out: Any = None, keepdims: bool = False,
         initial: Any = None, where: Any = None) -> Any:
    """Alias of min."""
    return min(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


# ---------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------

def _count(a: Any, axis: Axis, keepdims: bool, where: Any, dtype: np.dtype) -> Any:
    """How many elements each reduction sees, as `dtype`."""
    if where is None:
        shape = np.shape(a)
        size = math.prod(shape[d] for d in _reduction_dims(a, axis))
        return util.convert(size, dtype, False)
    return sum(lax_extra.broadcast_to(where, np.shape(a)), axis, dtype=dtype, keepdims=keepdims)


@planned
def mean(a: Any, axis: Axis = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
         *, where: Any = None) -> Any:
    """Arithmetic mean; integers average in the default float type, float16 in float32."""
    a = _ensure("mean", a)
    where = _check_where("mean", where)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.mean is not supported.")
    axis = _optional_axes(axis)
    if dtype is None:
        result_dtype = dtypes.to_inexact_dtype(np.dtype(a.dtype))
        computation_dtype = _upcast_f16(result_dtype)
    else:
        result_dtype = computation_dtype = dtypes.check_user_dtype(dtype)
    normalizer = _count(a, axis, keepdims, where, computation_dtype)
    total = sum(a, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
    return util.convert(lax.div(total, normalizer), result_dtype, False)


def _var_promote_types(a_dtype: np.dtype, dtype: np.dtype | None) -> tuple[np.dtype, np.dtype]:
    """(computation dtype, result dtype) of var/std."""
    if dtype is not None:
        if not dtypes.is_complex(dtype) and dtypes.is_complex(a_dtype):
            raise ValueError(
                "jax.numpy.var does not yet support real dtype parameters when computing the "
                "variance of an array of complex values. The semantics of numpy.var seem "
                "unclear in this case. Please comment on https://github.com/jax-ml/jax/issues/"
                "2283 if this behavior is important to you.")
        computation = dtype
    elif not dtypes.is_inexact(a_dtype):
        dtype = computation = dtypes.to_inexact_dtype(a_dtype)
    else:
        dtype = np.array(0, a_dtype).real.dtype
        computation = a_dtype
    return _upcast_f16(np.dtype(computation)), np.dtype(dtype)


@staged_as_jit(static_argnames=("axis", "dtype", "keepdims"))
def _var(a: Any, *, axis: Axis = None, dtype: Any = None, out: Any = None,
         correction: Any = 0, keepdims: bool = False, where: Any = None,
         a_mean: Any = None) -> Any:
    from pyjax._src.numpy.ufuncs import _where
    where = _check_where("var", where)
    if dtype is not None:
        dtype = dtypes.check_user_dtype(dtype)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.var is not supported.")
    computation_dtype, dtype = _var_promote_types(np.dtype(a.dtype), dtype)
    a = util.convert(a, computation_dtype, False)
    if a_mean is None:
        a_mean = mean(a, axis, dtype=computation_dtype, keepdims=True, where=where)
    else:
        a_mean = util.convert(_ensure("var", a_mean), computation_dtype, False)
    centered = lax.sub(a, a_mean)
    if dtypes.is_complex(computation_dtype):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
        computation_dtype = np.dtype(centered.dtype)
    else:
        centered = lax.square(centered)
    normalizer = _count(a, axis, keepdims, where, computation_dtype)
    normalizer = lax.sub(normalizer, util.convert(correction, computation_dtype, False))
    result = sum(centered, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
    result = util.convert(lax.div(result, normalizer), dtype, False)
    return _where(normalizer > 0, result, np.nan)


def _correction(ddof: Any, correction: Any) -> Any:
    if correction is None:
        return ddof
    if not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def var(a: Any, axis: Axis = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, mean: Any = None,
        correction: Any = None) -> Any:
    """Variance: mean squared deviation, divided by N - correction (ddof)."""
    correction = _correction(ddof, correction)
    a = _ensure("var", a)
    return _var(a, axis=_optional_axes(axis), dtype=dtype, out=out, correction=correction,
                keepdims=keepdims, where=where, a_mean=mean)


@staged_as_jit(static_argnames=("axis", "dtype", "keepdims"))
def _std(a: Any, *, axis: Axis = None, dtype: Any = None, out: Any = None,
         correction: Any = 0, keepdims: bool = False, where: Any = None,
         mean: Any = None) -> Any:
    where = _check_where("std", where)
    if dtype is not None:
        dtype = dtypes.check_user_dtype(dtype)
        if not dtypes.is_inexact(dtype):
            raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.std is not supported.")
    return lax.sqrt(var(a, axis=axis, dtype=dtype, correction=correction, keepdims=keepdims,
                        where=where, mean=mean))


def std(a: Any, axis: Axis = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, mean: Any = None,
        correction: Any = None) -> Any:
    """Standard deviation: the square root of var."""
    correction = _correction(ddof, correction)
    a = _ensure("std", a)
    return _std(a, axis=_optional_axes(axis), dtype=dtype, out=out, correction=correction,
                keepdims=keepdims, where=where, mean=mean)


@staged_as_jit(static_argnames=("axis", "keepdims"))
def _ptp(a: Any, axis: Axis = None, out: Any = None, keepdims: bool = False) -> Any:
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.ptp is not supported.")
    return lax.sub(amax(a, axis=axis, keepdims=keepdims), amin(a, axis=axis, keepdims=keepdims))


def ptp(a: Any, axis: Axis = None, out: Any = None, keepdims: bool = False) -> Any:
    """Peak to peak: max - min over `axis`."""
    return _ptp(_ensure("ptp", a), _optional_axes(axis), out, keepdims)


@staged_as_jit(static_argnames=("axis", "keepdims"))
def count_nonzero(a: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """How many elements over `axis` are not zero."""
    a = _ensure("count_nonzero", a)
    return sum(lax.ne(a, lax_const(a, 0)), axis=axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


# ---------------------------------------------------------------------------------------------
# Index of the extreme value
# ---------------------------------------------------------------------------------------------

def _arg_reduction(name: str, prim: Any) -> Callable:
    def fn(a: Any, axis: int | None = None, out: Any = None,
           keepdims: bool | None = None) -> Any:
        a = _ensure(name, a)
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        if axis is None:
            dims = list(range(np.ndim(a)))
            a = shp.reshape(a, (np.size(a),))
            axis = 0
        else:
            axis = operator.index(axis)
            dims = [axis]
        if np.shape(a)[axis] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        result = prim.bind(a, axes=(util.canonicalize_axis(axis, np.ndim(a)),),
                           index_dtype=dtypes.check_user_dtype(dtypes.default_int_dtype()))
        if keepdims:
            ndim = np.ndim(result) + len(dims)
            result = shp.expand_dims(result, [util.canonicalize_axis(d, ndim) for d in dims])
        return result

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"jnp.{name}: index of the extreme value (the first one on ties)."
    return planned(fn)


argmax = _arg_reduction("argmax", red.argmax_p)
argmin = _arg_reduction("argmin", red.argmin_p)


# ---------------------------------------------------------------------------------------------
# Cumulative reductions (jitted in JAX)
# ---------------------------------------------------------------------------------------------

def _cumulative_reduction(name: str, reduction: Callable, a: Any, axis: int | None,
                          dtype: Any, out: Any, fill_nan: bool = False,
                          fill_value: Any = 0, promote_integers: bool = False) -> Any:
    a = _ensure(name, a)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported")
    if axis is None or np.ndim(a) == 0:
        a = shp.reshape(a, (np.size(a),))
    if axis is None:
        axis = 0
    axis = util.canonicalize_axis(axis, np.ndim(a))
    if fill_nan:
        from pyjax._src.numpy.ufuncs import _where
        a = _where(lax.ne(a, a), lax_const(a, fill_value), a)
    if dtype is None:
        result_type = computation_type = np.dtype(a.dtype)
        if promote_integers or result_type == dtypes.bool_:
            result_type = computation_type = _promote_integer_dtype(result_type)
    elif np.dtype(dtype) == dtypes.bool_:
        result_type = dtypes.bool_
        if np.dtype(a.dtype) != result_type:
            a = a != 0
        computation_type = _promote_integer_dtype(result_type)
    else:
        result_type = computation_type = dtypes.check_user_dtype(dtype)
    a = util.convert(a, computation_type, False)
    return util.convert(reduction(a, axis), result_type, False)


def _cumulative(name: str, reduction: Callable, fill_nan: bool, fill_value: Any) -> Callable:
    def fn(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
        return _cumulative_reduction(name, reduction, a, axis, dtype, out, fill_nan, fill_value)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"jnp.{name}: running reduction along `axis` (the flattened array if None)."
    return staged_as_jit(fn, static_argnames=("axis", "dtype"))


cumsum = _cumulative("cumsum", lax_extra.cumsum, False, 0)
cumprod = _cumulative("cumprod", lax_extra.cumprod, False, 1)
nancumsum = _cumulative("nancumsum", lax_extra.cumsum, True, 0)
nancumprod = _cumulative("nancumprod", lax_extra.cumprod, True, 1)


# ---------------------------------------------------------------------------------------------
# Closeness and equality of whole arrays
# ---------------------------------------------------------------------------------------------

@staged_as_jit(static_argnames=("equal_nan",))
def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False
            ) -> Any:
    """a == b, or b finite and |a - b| <= atol + rtol * |b| (NaNs equal when equal_nan)."""
    from pyjax._src.numpy import ufuncs as uf
    from pyjax._src.primitives import elementwise as lax
    a, b = util.promote_args_inexact("isclose", a, b)
    dtype = np.dtype(a.dtype)
    if dtypes.is_complex(dtype):
        dtype = np.finfo(dtype).dtype
    rtol = lax.convert_element_type(rtol, dtype)
    atol = lax.convert_element_type(atol, dtype)
    both_nan = uf.logical_and(lax.ne(a, a), lax.ne(b, b))
    finite_b = lax.is_finite(b) if not dtypes.is_complex(np.dtype(b.dtype)) else \
        uf.isfinite(b)
    within = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
    out = uf.logical_or(lax.eq(a, b), uf.logical_and(finite_b, within))
    return uf.logical_or(out, both_nan) if equal_nan else out


@staged_as_jit(static_argnames=("equal_nan",))
def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False
             ) -> Any:
    """Whether every element of a is close to b (see isclose)."""
    return all(isclose(a, b, rtol, atol, equal_nan))


def array_equiv(a1: Any, a2: Any) -> Any:
    """Equal after broadcasting.  (JAX returns False only for a ValueError from the
    comparison; shapes that do not broadcast raise its TypeError, and so they do here.)"""
    from pyjax._src.numpy import ufuncs as uf
    a1, a2 = util.as_operand(a1), util.as_operand(a2)
    try:
        equal = uf.equal(a1, a2)
    except ValueError:
        return util.as_operand(False)
    return all(equal)


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Same shape and same values (NaNs equal when equal_nan)."""
    from pyjax._src.numpy import ufuncs as uf
    a1, a2 = util.as_operand(a1), util.as_operand(a2)
    if np.shape(a1) != np.shape(a2):
        return util.as_operand(False)
    equal = uf.equal(a1, a2)
    if equal_nan:
        equal = uf.logical_or(equal, uf.logical_and(uf.isnan(a1), uf.isnan(a2)))
    return all(equal)
