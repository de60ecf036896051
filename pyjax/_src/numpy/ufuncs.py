"""jnp elementwise functions: NumPy's names and semantics, composed of lax primitives.

Most functions are generated from tables (which lax op, which promotion); the few with special
cases (bool arithmetic, integer powers, floor division) are written out.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.array import ArrayImpl
from pyjax._src.numpy import util
from pyjax._src.numpy.util import (
    promote_args, promote_args_inexact, promote_args_numeric, staged_as_jit)
from pyjax._src.primitives import elementwise as lax


def _is_bool(x: Any) -> bool:
    return np.dtype(x.dtype) == dtypes.bool_


def _is_int(x: Any) -> bool:
    return dtypes.is_integer(np.dtype(x.dtype))


def _fast_binary(lax_prim: Any, fallback: Callable) -> Callable:
    """Skip promotion when both operands are concrete arrays of one dtype and shape."""
    def fn(x: Any, y: Any, /) -> Any:
        if type(x) is ArrayImpl and type(y) is ArrayImpl:
            xb, yb = x._buf, y._buf
            if xb.dtype == yb.dtype and xb.shape == yb.shape and xb.dtype != dtypes.bool_:
                return lax_prim.bind(x, y)
        return fallback(x, y)
    fn.__name__ = fallback.__name__
    fn.__doc__ = fallback.__doc__
    return fn


# ---------------------------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------------------------

def _add(x: Any, y: Any, /) -> Any:
    """x + y elementwise (logical or for booleans)."""
    x, y = promote_args("add", x, y)
    return lax.bitwise_or(x, y) if _is_bool(x) else lax.add(x, y)


def _multiply(x: Any, y: Any, /) -> Any:
    """x * y elementwise (logical and for booleans)."""
    x, y = promote_args("multiply", x, y)
    return lax.bitwise_and(x, y) if _is_bool(x) else lax.mul(x, y)


def _subtract(x: Any, y: Any, /) -> Any:
    """x - y elementwise."""
    x, y = promote_args("subtract", x, y)
    if _is_bool(x):
        raise TypeError("jnp.subtract does not support boolean inputs; use logical_xor")
    return lax.sub(x, y)


def _true_divide(x: Any, y: Any, /) -> Any:
    """x / y in floating point."""
    x, y = promote_args_inexact("true_divide", x, y)
    return lax.div(x, y)


add = _fast_binary(lax.add_p, _add)
multiply = _fast_binary(lax.mul_p, _multiply)
subtract = _fast_binary(lax.sub_p, _subtract)
true_divide = divide = _true_divide


@staged_as_jit
def floor_divide(x: Any, y: Any, /) -> Any:
    """x // y, rounding toward negative infinity."""
    x, y = promote_args_numeric("floor_divide", x, y)
    if _is_int(x):
        if dtypes.is_unsigned(np.dtype(x.dtype)):
            return lax.div(x, y)
        quotient = lax.div(x, y)
        select = logical_and(not_equal(lax.sign(x), lax.sign(y)),
                             not_equal(lax.rem(x, y), 0))
        return where(select, lax.sub(quotient, _one_like(quotient)), quotient)
    return lax.floor(lax.div(x, y))


def _one_like(x: Any) -> Any:
    return ArrayImpl(np.ones((), np.dtype(x.dtype)), False) if not x.weak_type else 1


@staged_as_jit
def remainder(x: Any, y: Any, /) -> Any:
    """x % y with the sign of y (Python's convention)."""
    x, y = promote_args_numeric("remainder", x, y)
    if _is_int(x):
        zero = lax.eq(y, _zero(y))
        y = where(zero, _one(y), y)
    trunc_mod = lax.rem(x, y)
    trunc_mod_not_zero = lax.ne(trunc_mod, _zero(trunc_mod))
    do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, _zero(trunc_mod)),
                                     lax.lt(y, _zero(y))), trunc_mod_not_zero)
    return lax.select(do_plus, lax.add(trunc_mod, y), trunc_mod)


def _zero(x: Any) -> Any:
    return ArrayImpl(np.zeros((), np.dtype(x.dtype)), False)


def _one(x: Any) -> Any:
    return ArrayImpl(np.ones((), np.dtype(x.dtype)), False)


mod = remainder


def fmod(x: Any, y: Any, /) -> Any:
    """Remainder with the sign of x (C's convention)."""
    x, y = promote_args_numeric("fmod", x, y)
    return lax.rem(x, y)


def divmod(x: Any, y: Any, /) -> tuple[Any, Any]:  # noqa: A001
    return floor_divide(x, y), remainder(x, y)


def _int_power(x: Any, y: Any) -> Any:
    """Integer x ** y for an integer array y, by repeated squaring over y's bits."""
    acc = util.broadcast_to(_one(x), np.broadcast_shapes(np.shape(x), np.shape(y)))
    acc = lax.mul(acc, util.broadcast_to(_one(x), np.shape(acc)))
    base = x
    for _ in range(np.dtype(y.dtype).itemsize * 8):
        bit = lax.ne(lax.bitwise_and(y, _one(y)), _zero(y))
        acc = lax.select(bit, lax.mul(acc, base), acc)
        base = lax.mul(base, base)
        y = lax.shift_right_logical(y, _one(y))
    return acc


def power(x: Any, y: Any, /) -> Any:
    """x ** y; a static integer exponent becomes integer_pow, as in JAX."""
    if type(y) is int or (isinstance(y, (np.integer,)) and np.ndim(y) == 0):
        util.check_arraylike("power", x)
        x = util.as_operand(x)
        if _is_bool(x):
            x = util.convert(x, dtypes.default_int_dtype(), x.weak_type)
        return lax.integer_pow(x, int(y))
    x, y = promote_args_numeric("power", x, y)
    if _is_int(x):
        return _int_power(*util.promote_shapes("power", *util.promote_dtypes(
            util.broadcast_to(x, np.broadcast_shapes(np.shape(x), np.shape(y))), y)))
    return lax.pow(x, y)


def float_power(x: Any, y: Any, /) -> Any:
    x, y = promote_args_inexact("float_power", x, y)
    return lax.pow(x, y)


def negative(x: Any, /) -> Any:
    """-x."""
    (x,) = promote_args("negative", x)
    if _is_bool(x):
        raise TypeError("The numpy boolean negative, the `-` operator, is not supported, use "
                        "the `~` operator or the logical_not function instead.")
    return lax.neg(x)


def positive(x: Any, /) -> Any:
    (x,) = promote_args("positive", x)
    return x


def absolute(x: Any, /) -> Any:
    """|x| (unsigned and bool inputs are returned unchanged)."""
    (x,) = promote_args("absolute", x)
    if _is_bool(x) or dtypes.is_unsigned(np.dtype(x.dtype)):
        return x
    return lax.abs(x)


abs = absolute  # noqa: A001


def sign(x: Any, /) -> Any:
    (x,) = promote_args("sign", x)
    return lax.sign(x)


def reciprocal(x: Any, /) -> Any:
    """1 / x."""
    (x,) = promote_args_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


def square(x: Any, /) -> Any:
    """x * x."""
    (x,) = promote_args_numeric("square", x)
    return lax.integer_pow(x, 2)


def _rounding(name: str, lax_fn: Callable) -> Callable:
    def fn(x: Any, /) -> Any:
        (x,) = promote_args_numeric(name, x)
        if _is_int(x):
            return x
        return lax_fn(x)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name}; integers are returned unchanged."
    return fn


floor = _rounding("floor", lax.floor)
ceil = _rounding("ceil", lax.ceil)


@staged_as_jit
def trunc(x: Any) -> Any:
    """Round toward zero."""
    (x,) = promote_args_numeric("trunc", x)
    if _is_int(x):
        return x
    return where(lax.lt(x, _zero(x)), lax.ceil(x), lax.floor(x))


fix = trunc


@staged_as_jit(static_argnames=("decimals",))
def round(a: Any, decimals: int = 0, out: Any = None) -> Any:  # noqa: A001
    """Round half to even, optionally to `decimals` digits."""
    (a,) = promote_args_numeric("round", a)
    if _is_int(a):
        if decimals >= 0:
            return a
        factor = ArrayImpl(np.asarray(10 ** -decimals, np.dtype(a.dtype)), False)
        return lax.mul(floor_divide(lax.add(a, lax.div(factor, _two(a))), factor), factor)
    if decimals == 0:
        return lax.round(a, 1)
    factor = ArrayImpl(np.asarray(10.0 ** decimals, np.dtype(a.dtype)), False)
    return lax.div(lax.round(lax.mul(a, factor), 1), factor)


def _two(x: Any) -> Any:
    return ArrayImpl(np.asarray(2, np.dtype(x.dtype)), False)


around = round_ = round


def rint(x: Any, /) -> Any:
    (x,) = promote_args_inexact("rint", x)
    return lax.round(x, 1)


# ---------------------------------------------------------------------------------------------
# Transcendental functions: promote to inexact, apply one lax op
# ---------------------------------------------------------------------------------------------

def _inexact_unary(name: str, lax_fn: Callable) -> Callable:
    def fn(x: Any, /) -> Any:
        (x,) = promote_args_inexact(name, x)
        return lax_fn(x)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} (integers are promoted to float)."
    return fn


_INEXACT_UNARY = {
    "exp": lax.exp, "exp2": lax.exp2, "expm1": lax.expm1, "log": lax.log, "log1p": lax.log1p,
    "sqrt": lax.sqrt, "cbrt": lax.cbrt, "sin": lax.sin, "cos": lax.cos, "tan": lax.tan,
    "arcsin": lax.asin, "arccos": lax.acos, "arctan": lax.atan, "sinh": lax.sinh,
    "cosh": lax.cosh, "tanh": lax.tanh, "arcsinh": lax.asinh, "arccosh": lax.acosh,
    "arctanh": lax.atanh,
}
globals().update({name: _inexact_unary(name, fn) for name, fn in _INEXACT_UNARY.items()})
exp, exp2, expm1, log, log1p, sqrt, cbrt = (  # for readers and linters
    globals()[n] for n in ("exp", "exp2", "expm1", "log", "log1p", "sqrt", "cbrt"))
sin, cos, tan, tanh = (globals()[n] for n in ("sin", "cos", "tan", "tanh"))
asin, acos, atan = globals()["arcsin"], globals()["arccos"], globals()["arctan"]
asinh, acosh, atanh = globals()["arcsinh"], globals()["arccosh"], globals()["arctanh"]


def log2(x: Any, /) -> Any:
    (x,) = promote_args_inexact("log2", x)
    return lax.div(lax.log(x), lax.log(_scalar_like(x, 2)))


def log10(x: Any, /) -> Any:
    (x,) = promote_args_inexact("log10", x)
    return lax.div(lax.log(x), lax.log(_scalar_like(x, 10)))


def _scalar_like(x: Any, value: Any) -> Any:
    return ArrayImpl(np.asarray(value, np.dtype(x.dtype)), False)


def arctan2(x1: Any, x2: Any, /) -> Any:
    x1, x2 = promote_args_inexact("arctan2", x1, x2)
    return lax.atan2(x1, x2)


atan2 = arctan2


def hypot(x1: Any, x2: Any, /) -> Any:
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    return lax.sqrt(lax.add(lax.mul(x1, x1), lax.mul(x2, x2)))


def deg2rad(x: Any, /) -> Any:
    (x,) = promote_args_inexact("deg2rad", x)
    return lax.mul(x, _scalar_like(x, np.pi / 180))


def rad2deg(x: Any, /) -> Any:
    (x,) = promote_args_inexact("rad2deg", x)
    return lax.mul(x, _scalar_like(x, 180 / np.pi))


radians, degrees = deg2rad, rad2deg


def logaddexp(x1: Any, x2: Any, /) -> Any:
    x1, x2 = promote_args_inexact("logaddexp", x1, x2)
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2),
                      lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta))))))


def sinc(x: Any, /) -> Any:
    (x,) = promote_args_inexact("sinc", x)
    pi_x = lax.mul(_scalar_like(x, np.pi), x)
    safe = where(lax.eq(x, _zero(x)), _one(x), pi_x)
    return where(lax.eq(x, _zero(x)), _one(x), lax.div(lax.sin(safe), safe))


# ---------------------------------------------------------------------------------------------
# Comparisons, logic, bits
# ---------------------------------------------------------------------------------------------

def _comparison(name: str, lax_prim: Any) -> Callable:
    def slow(x: Any, y: Any, /) -> Any:
        x, y = promote_args(name, x, y)
        return lax_prim.bind(x, y)
    slow.__name__ = name
    slow.__doc__ = f"Elementwise {name}, as a boolean array."

    def fn(x: Any, y: Any, /) -> Any:
        if type(x) is ArrayImpl and type(y) is ArrayImpl:
            xb, yb = x._buf, y._buf
            if xb.dtype == yb.dtype and xb.shape == yb.shape:
                return lax_prim.bind(x, y)
        return slow(x, y)
    fn.__name__, fn.__doc__ = name, slow.__doc__
    return fn


equal = _comparison("equal", lax.eq_p)
not_equal = _comparison("not_equal", lax.ne_p)
less = _comparison("less", lax.lt_p)
less_equal = _comparison("less_equal", lax.le_p)
greater = _comparison("greater", lax.gt_p)
greater_equal = _comparison("greater_equal", lax.ge_p)


def _logical(name: str, lax_fn: Callable) -> Callable:
    def fn(x: Any, y: Any, /) -> Any:
        util.check_arraylike(name, x, y)
        x, y = (util.convert(util.as_operand(a), dtypes.bool_, False) for a in (x, y))
        x, y = util.promote_shapes(name, x, y)
        return lax_fn(x, y)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} of the truth values."
    return fn


logical_and = _logical("logical_and", lax.bitwise_and)
logical_or = _logical("logical_or", lax.bitwise_or)
logical_xor = _logical("logical_xor", lax.bitwise_xor)


def logical_not(x: Any, /) -> Any:
    util.check_arraylike("logical_not", x)
    return lax.bitwise_not(util.convert(util.as_operand(x), dtypes.bool_, False))


def _bitwise(name: str, lax_fn: Callable) -> Callable:
    def fn(x: Any, y: Any, /) -> Any:
        x, y = promote_args(name, x, y)
        if dtypes.is_inexact(np.dtype(x.dtype)):
            raise TypeError(f"{name} is only defined for integer and boolean types, got "
                            f"{x.dtype}")
        return lax_fn(x, y)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} of integers or booleans."
    return fn


bitwise_and = _bitwise("bitwise_and", lax.bitwise_and)
bitwise_or = _bitwise("bitwise_or", lax.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", lax.bitwise_xor)
left_shift = _bitwise("left_shift", lax.shift_left)


def right_shift(x: Any, y: Any, /) -> Any:
    x, y = promote_args("right_shift", x, y)
    if dtypes.is_unsigned(np.dtype(x.dtype)):
        return lax.shift_right_logical(x, y)
    return lax.shift_right_arithmetic(x, y)


def invert(x: Any, /) -> Any:
    """~x: bitwise not (logical not for booleans)."""
    (x,) = promote_args("invert", x)
    if dtypes.is_inexact(np.dtype(x.dtype)):
        raise TypeError(f"invert is only defined for integer and boolean types, got {x.dtype}")
    return lax.bitwise_not(x)


bitwise_not = bitwise_invert = invert


def maximum(x: Any, y: Any, /) -> Any:
    """Elementwise maximum (NaN wins)."""
    x, y = promote_args("maximum", x, y)
    return lax.max(x, y)


def minimum(x: Any, y: Any, /) -> Any:
    """Elementwise minimum (NaN wins)."""
    x, y = promote_args("minimum", x, y)
    return lax.min(x, y)


def fmax(x: Any, y: Any, /) -> Any:
    x, y = promote_args("fmax", x, y)
    return where(lax.ne(x, x), y, where(lax.ne(y, y), x, lax.max(x, y)))


def fmin(x: Any, y: Any, /) -> Any:
    x, y = promote_args("fmin", x, y)
    return where(lax.ne(x, x), y, where(lax.ne(y, y), x, lax.min(x, y)))


def isnan(x: Any, /) -> Any:
    (x,) = promote_args("isnan", x)
    if not dtypes.is_inexact(np.dtype(x.dtype)):
        return util.broadcast_to(ArrayImpl(np.asarray(False)), np.shape(x))
    return lax.ne(x, x)


def isfinite(x: Any, /) -> Any:
    (x,) = promote_args("isfinite", x)
    if not dtypes.is_inexact(np.dtype(x.dtype)):
        return util.broadcast_to(ArrayImpl(np.asarray(True)), np.shape(x))
    return lax.is_finite(x)


@staged_as_jit
def isinf(x: Any, /) -> Any:
    (x,) = promote_args("isinf", x)
    if not dtypes.is_inexact(np.dtype(x.dtype)):
        return util.broadcast_to(ArrayImpl(np.asarray(False)), np.shape(x))
    return lax.eq(lax.abs(x), _scalar_like(x, np.inf))


# ---------------------------------------------------------------------------------------------
# where and clip (jitted in JAX, so they appear as jit equations when traced)
# ---------------------------------------------------------------------------------------------

@staged_as_jit
def _where(condition: Any, x: Any, y: Any) -> Any:
    condition = util.convert(util.as_operand(condition), dtypes.bool_, False)
    x, y = util.promote_dtypes(x, y)
    shape = np.broadcast_shapes(np.shape(condition), np.shape(x), np.shape(y))
    condition, x, y = (util.broadcast_to(a, shape) for a in (condition, x, y))
    return lax.select_n(condition, y, x)


def where(condition: Any, x: Any = None, y: Any = None, /, *, size: Any = None,
          fill_value: Any = None) -> Any:
    """x where condition holds, else y (the one-argument form is nonzero)."""
    if x is None and y is None:
        from pyjax._src.numpy.lax_numpy import nonzero
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided "
                         "to jax.numpy.where, got x and y.")
    util.check_arraylike("where", condition, x, y)
    return _where(condition, x, y)


@staged_as_jit
def clip(arr: Any = None, /, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """Limit values to [min, max] (either bound may be None)."""
    util.check_arraylike("clip", arr)
    arr = util.as_operand(arr)
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return arr
