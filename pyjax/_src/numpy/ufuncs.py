"""jnp elementwise functions: NumPy's names and semantics, composed of lax primitives.

Each function follows JAX 0.10's recipe (which promotion, which lax ops, in which order), so a
traced program prints the same jaxpr.  Functions JAX jits are wrapped in `staged_as_jit`; the
rest are inlined.  Simple one-op functions are generated from tables.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from pyjax._src.backend.eager_plans import planned
from pyjax._src.core import dtypes
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.trace import Tracer, trace_state
from pyjax._src.numpy import util
from pyjax._src.numpy.util import (
    check_arraylike, lax_const, promote_args, promote_args_inexact, promote_args_numeric,
    promote_dtypes, promote_dtypes_inexact, promote_dtypes_numeric, staged_as_jit)
from pyjax._src.primitives import elementwise as lax
from pyjax._src.primitives import extra as lax_extra
from pyjax._src.transforms import staging


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------

def _dtype(x: Any) -> np.dtype:
    return np.dtype(x.dtype)


def _constant_like(x: Any, value: Any) -> ArrayImpl:
    """A strong scalar constant of x's dtype (a literal in jaxprs)."""
    return ArrayImpl(np.array(value, _dtype(x)), False)


def _zero(x: Any) -> Any:
    """Scalar 0 of x's dtype and weak type."""
    return lax_extra.full_like(x, 0, shape=())


def _ones(x: Any) -> Any:
    """Ones shaped like x."""
    return lax_extra.full_like(x, 1)


def _to_bool(x: Any) -> Any:
    return x if _dtype(x) == dtypes.bool_ else lax.ne(x, lax_const(x, 0))


def _is_bool(x: Any) -> bool:
    return _dtype(x) == dtypes.bool_


def _is_int(x: Any) -> bool:
    return dtypes.is_integer(_dtype(x))


def _is_float(x: Any) -> bool:
    return dtypes.is_float(_dtype(x))


def _is_complex(x: Any) -> bool:
    return dtypes.is_complex(_dtype(x))


def iscomplexobj(x: Any) -> bool:
    """Whether x has a complex dtype (without converting it)."""
    if isinstance(x, (complex, np.complexfloating)):
        return True
    if x is None or isinstance(x, (bool, int, float, str, np.generic)):
        return False
    dtype = getattr(x, "dtype", None)
    return dtypes.is_complex(np.dtype(np.asarray(x).dtype if dtype is None else dtype))


def _ensure(name: str, x: Any) -> Any:
    check_arraylike(name, x)
    return util.as_operand(x)


def _broadcast_arrays(*args: Any) -> list[Any]:
    """Broadcast to the common shape (no equations when the shapes already agree)."""
    shapes = [tuple(np.shape(a)) for a in args]
    if all(s == shapes[0] for s in shapes):
        return [lax_extra.asarray(a) for a in args]
    full = {s for s in shapes if s}
    # scalars beside arrays of one shape: that shape, without NumPy's general rule
    result = full.pop() if len(full) == 1 else lax_extra.broadcast_shapes(*shapes)
    sharding = None
    if staging.sharding_typing is not None:  # (a mesh has an Explicit axis: types may split)
        from pyjax._src.parallel.explicit import broadcast_sharding
        sharding = broadcast_sharding(args, result)
    return [lax_extra.broadcast_to(a, result, sharding) for a in args]


_PY_NUMBERS = frozenset((int, float, complex))


def _array_and_scalar(x: Any, y: Any) -> list[Any] | None:
    """A concrete non-boolean array and a Python number promoted as the general path promotes
    them (the ranks differ only by the scalar's, so no broadcast equation); else None."""
    if type(x) is ArrayImpl:
        if type(y) not in _PY_NUMBERS:
            return None
        arr = x
    elif type(y) is ArrayImpl and type(x) in _PY_NUMBERS:
        arr = y
    else:
        return None
    if arr._buf.dtype == dtypes.bool_:
        return None
    return util._array_and_scalar(x, y)  # looked up per call: tests swap it for the lattice


def _fast_binary(lax_prim: Any, fallback: Callable) -> Callable:
    """Skip promotion when both operands are concrete arrays of one dtype and shape, or one
    is a Python number the array absorbs."""
    def fn(x: Any, y: Any, /) -> Any:
        if type(x) is ArrayImpl and type(y) is ArrayImpl:
            xb, yb = x._buf, y._buf
            if xb.dtype == yb.dtype and xb.shape == yb.shape and xb.dtype != dtypes.bool_:
                return lax_prim.bind(x, y)
        elif (ops := _array_and_scalar(x, y)) is not None:
            return lax_prim.bind(*ops)
        return fallback(x, y)
    fn.__name__ = fn.__qualname__ = fallback.__name__.lstrip("_")
    fn.__doc__ = fallback.__doc__
    return fn


# ---------------------------------------------------------------------------------------------
# where (jitted as `_where` in JAX, so every call shows as a jit equation)
# ---------------------------------------------------------------------------------------------

@staged_as_jit
def _where(condition: Any, x: Any, y: Any) -> Any:
    if type(condition) is ArrayImpl and type(x) is ArrayImpl and type(y) is ArrayImpl:
        cb, xb, yb = condition._buf, x._buf, y._buf  # eager, all of one type and shape:
        if (cb.dtype == dtypes.bool_ and xb.dtype == yb.dtype and x._weak == y._weak  # select
                and cb.shape == xb.shape == yb.shape and xb.size):
            return lax.select(condition, x, y)
    condition, x, y = (util.as_operand(a) for a in (condition, x, y))
    if not _is_bool(condition):
        condition = lax.ne(condition, _zero(condition))
    x, y = promote_dtypes(x, y)
    if np.ndim(condition) == 0:
        x, y = _broadcast_arrays(x, y)
    else:
        condition, x, y = _broadcast_arrays(condition, x, y)
    if 0 in np.shape(x):
        return x
    return lax.select(condition, x, y)


@planned
def where(condition: Any, x: Any = None, y: Any = None, /, *, size: Any = None,
          fill_value: Any = None) -> Any:
    """x where condition holds, else y (the one-argument form is nonzero)."""
    if x is None and y is None:
        check_arraylike("where", condition)
        from pyjax._src.numpy.lax_numpy import nonzero
        return nonzero(condition, size=size, fill_value=fill_value)
    check_arraylike("where", condition, x, y)
    if size is not None or fill_value is not None:
        raise ValueError("size and fill_value arguments cannot be used in three-term where "
                         "function.")
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided "
                         f"to jax.numpy.where, got {x} and {y}.")
    return _where(condition, x, y)


# ---------------------------------------------------------------------------------------------
# Tables of one-op functions
# ---------------------------------------------------------------------------------------------

#: dtypes an inexact unary function takes as they are (promote_args_inexact keeps them)
_INEXACT = frozenset(d for d in dtypes.supported_dtypes if dtypes.is_inexact(d))


def _inexact_unary(name: str, lax_fn: Callable) -> Callable:
    def fn(x: Any, /) -> Any:
        if type(x) is ArrayImpl and x._buf.dtype in _INEXACT:  # nothing to promote
            return lax_fn(x)
        return lax_fn(*promote_args_inexact(name, x))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} (integers and bools are promoted to float)."
    return fn


def _binary(name: str, lax_fn: Callable, promote: Callable) -> Callable:
    inexact = promote is promote_args_inexact

    def fn(x: Any, y: Any, /) -> Any:
        if promote is promote_args or inexact:  # a Python number the array absorbs: promoted
            ops = _array_and_scalar(x, y)     # as the general path promotes it
            if ops is not None and (not inexact or dtypes.is_inexact(ops[0]._buf.dtype)):
                return lax_fn(*ops)
        return lax_fn(*promote(name, x, y))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} of two arrays."
    return fn


_INEXACT_UNARY = {
    "exp": lax.exp, "exp2": lax.exp2, "expm1": lax.expm1, "log": lax.log, "log1p": lax.log1p,
    "sqrt": lax.sqrt, "cbrt": lax.cbrt, "sin": lax.sin, "cos": lax.cos, "tan": lax.tan,
    "arcsin": lax.asin, "arccos": lax.acos, "arctan": lax.atan, "sinh": lax.sinh,
    "cosh": lax.cosh, "tanh": lax.tanh, "arcsinh": lax.asinh, "arctanh": lax.atanh,
}
(exp, exp2, expm1, log, log1p, sqrt, cbrt, sin, cos, tan, arcsin, arccos, arctan, sinh, cosh,
 tanh, arcsinh, arctanh) = (_inexact_unary(n, f) for n, f in _INEXACT_UNARY.items())

_BINARY = {
    "bitwise_and": (lax.bitwise_and, promote_args),
    "bitwise_or": (lax.bitwise_or, promote_args),
    "bitwise_xor": (lax.bitwise_xor, promote_args),
    "left_shift": (lax.shift_left, promote_args_numeric),
    "maximum": (lax.max, promote_args),
    "minimum": (lax.min, promote_args),
    "arctan2": (lax.atan2, promote_args_inexact),
    "float_power": (lax.pow, promote_args_inexact),
    "nextafter": (lax.nextafter, promote_args_inexact),
    "true_divide": (lax.div, promote_args_inexact),
}
(bitwise_and, bitwise_or, bitwise_xor, left_shift, maximum, minimum, arctan2, float_power,
 nextafter, true_divide) = (_binary(n, f, p) for n, (f, p) in _BINARY.items())


@staged_as_jit
def arccosh(x: Any, /) -> Any:
    """Inverse hyperbolic cosine (principal branch for complex inputs)."""
    result = lax.acosh(*promote_args_inexact("arccosh", x))
    if _is_complex(result):
        result = _where(real(result) < 0, lax.neg(result), result)
    return result


def _alias(name: str, target: Callable) -> Callable:
    """The array-API spelling of `target`, with its positional-only signature."""
    if name == "atan2":
        def fn(x1: Any, x2: Any, /) -> Any:
            return target(*promote_args(name, x1, x2))
    else:
        def fn(x: Any, /) -> Any:  # type: ignore[misc]
            return target(*promote_args(name, x))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Alias of jnp.{target.__name__}."
    return fn


acos, acosh, asin, asinh, atan, atanh = (
    _alias(n, t) for n, t in (("acos", arccos), ("acosh", arccosh), ("asin", arcsin),
                              ("asinh", arcsinh), ("atan", arctan), ("atanh", arctanh)))
atan2 = _alias("atan2", arctan2)


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
    return lax.sub(*promote_args("subtract", x, y))


add = _fast_binary(lax.add_p, _add)
multiply = _fast_binary(lax.mul_p, _multiply)
subtract = _fast_binary(lax.sub_p, _subtract)


def divide(x1: Any, x2: Any, /) -> Any:
    """Alias of true_divide: x1 / x2 in floating point."""
    return true_divide(x1, x2)


def _float_divmod(x1: Any, x2: Any) -> tuple[Any, Any]:
    """Python's float divmod: quotient rounded toward -inf, remainder with the sign of x2."""
    mod = lax.rem(x1, x2)
    x1_corrected = _where(x2 == 0, x1, lax.sub(x1, mod))
    div = lax.div(x1_corrected, x2)
    ind = lax.bitwise_and(mod != 0, lax.sign(x2) != lax.sign(mod))
    mod = lax.select(ind, mod + x2, mod)
    div = lax.select(ind, div - 1.0, div)
    return lax.round(div), mod


@staged_as_jit
def floor_divide(x1: Any, x2: Any, /) -> Any:
    """x1 // x2, rounding toward negative infinity."""
    x1, x2 = promote_args_numeric("floor_divide", x1, x2)
    if dtypes.is_unsigned(_dtype(x1)):
        return lax.div(x1, x2)
    if _is_int(x1):
        quotient = lax.div(x1, x2)
        select = logical_and(lax.sign(x1) != lax.sign(x2), lax.rem(x1, x2) != 0)
        return _where(select, quotient - 1, quotient)
    if _is_complex(x1):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x1, x2)[0]


@staged_as_jit
def remainder(x1: Any, x2: Any, /) -> Any:
    """x1 % x2 with the sign of x2 (Python's convention)."""
    x1, x2 = promote_args_numeric("remainder", x1, x2)
    zero = _constant_like(x1, 0)
    if _is_int(x2):
        x2 = _where(x2 == 0, _ones(x2), x2)
    trunc_mod = lax.rem(x1, x2)
    trunc_mod_not_zero = lax.ne(trunc_mod, zero)
    do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, zero)),
                              trunc_mod_not_zero)
    return lax.select(do_plus, lax.add(trunc_mod, x2), trunc_mod)


def mod(x1: Any, x2: Any, /) -> Any:
    """Alias of remainder."""
    return remainder(x1, x2)


@staged_as_jit
def divmod(x1: Any, x2: Any, /) -> tuple[Any, Any]:  # noqa: A001
    """(x1 // x2, x1 % x2)."""
    x1, x2 = promote_args_numeric("divmod", x1, x2)
    if _is_int(x1):
        return floor_divide(x1, x2), remainder(x1, x2)
    return _float_divmod(x1, x2)


@staged_as_jit
def fmod(x1: Any, x2: Any, /) -> Any:
    """Remainder with the sign of x1 (C's convention)."""
    check_arraylike("fmod", x1, x2)
    x1, x2 = util.as_operand(x1), util.as_operand(x2)
    if dtypes.is_integer(dtypes.result_type(x1, x2)):
        x2 = _where(x2 == 0, _ones(x2), x2)
    return lax.rem(*promote_args_numeric("fmod", x1, x2))


def _pow_int_int(x1: Any, x2: Any) -> Any:
    """Integer power by binary exponentiation over the low 6 bits of the exponent."""
    zero, one = _constant_like(x2, 0), _constant_like(x2, 1)
    acc = _where(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero)), zero, one)
    for _ in range(6):
        acc = _where(lax.bitwise_and(x2, one), lax.mul(acc, x1), acc)
        x1 = lax.mul(x1, x1)
        x2 = lax.shift_right_logical(x2, one)
    return acc


def power(x1: Any, x2: Any, /) -> Any:
    """x1 ** x2; a concrete integer exponent becomes integer_pow, as in JAX."""
    check_arraylike("power", x1, x2)
    if not isinstance(x2, Tracer):
        try:
            exponent = operator.index(x2)
        except TypeError:
            pass
        else:
            (x1,) = promote_dtypes_numeric(x1)
            return lax.integer_pow(x1, exponent)
    x1, x2 = util.promote_shapes("power", util.as_operand(x1), util.as_operand(x2))
    x1_, x2_ = promote_args_numeric("power", x1, x2)
    if _is_int(x1_) or _is_bool(x1_):
        return _pow_int_int(x1_, x2_)
    if dtypes.is_inexact(_dtype(x1)) and _is_int(x2):
        return lax.pow(x1, x2)
    return lax.pow(x1_, x2_)


pow = power  # noqa: A001


def logaddexp(x1: Any, x2: Any, /) -> Any:
    """log(exp(x1) + exp(x2)) without overflow."""
    from pyjax._src.numpy import lax_other
    return lax_other.logaddexp(*promote_args_inexact("logaddexp", x1, x2))


def logaddexp2(x1: Any, x2: Any, /) -> Any:
    """log2(exp2(x1) + exp2(x2)) without overflow."""
    from pyjax._src.numpy import lax_other
    return lax_other.logaddexp2(*promote_args_inexact("logaddexp2", x1, x2))


def negative(x: Any, /) -> Any:
    """-x."""
    return lax.neg(*promote_args("negative", x))


def positive(x: Any, /) -> Any:
    """+x (a copy of x, promoted)."""
    return lax_extra.asarray(*promote_args("positive", x))


def sign(x: Any, /) -> Any:
    """-1, 0 or 1 by the sign of x."""
    return lax.sign(*promote_args("sign", x))


def absolute(x: Any, /) -> Any:
    """|x| (unsigned and bool inputs are returned unchanged)."""
    x = _ensure("absolute", x)
    if _is_bool(x) or dtypes.is_unsigned(_dtype(x)):
        return lax_extra.asarray(x)
    return lax.abs(x)


abs = absolute  # noqa: A001


def fabs(x: Any, /) -> Any:
    """|x| as a float."""
    x = _ensure("fabs", x)
    if _is_complex(x):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return lax.abs(*promote_args_inexact("fabs", x))


def reciprocal(x: Any, /) -> Any:
    """1 / x in floating point."""
    (x,) = promote_dtypes_inexact(_ensure("reciprocal", x))
    return lax.integer_pow(x, -1)


def square(x: Any, /) -> Any:
    """x * x."""
    (x,) = promote_dtypes_numeric(_ensure("square", x))
    return lax.square(x)


def floor(x: Any, /) -> Any:
    """Round down (integers and bools are returned unchanged)."""
    x = _ensure("floor", x)
    if _is_int(x) or _is_bool(x):
        return x
    return lax.floor(*promote_args_inexact("floor", x))


def ceil(x: Any, /) -> Any:
    """Round up (integers and bools are returned unchanged)."""
    x = _ensure("ceil", x)
    if _is_int(x) or _is_bool(x):
        return lax_extra.asarray(x)
    return lax.ceil(*promote_args_inexact("ceil", x))


@staged_as_jit
def trunc(x: Any) -> Any:
    """Round toward zero."""
    x = _ensure("trunc", x)
    if _is_int(x) or _is_bool(x):
        return x
    return where(lax.lt(x, lax_const(x, 0)), ceil(x), floor(x))


@staged_as_jit
def rint(x: Any, /) -> Any:
    """Round half to even (integers become floats)."""
    x = _ensure("rint", x)
    if _is_bool(x) or _is_int(x):
        return lax.convert_element_type(x, dtypes.default_float_dtype())
    if _is_complex(x):
        return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
    return lax.round(x, 1)


def _round_float(x: Any, decimals: int) -> Any:
    dtype = _dtype(x)
    if decimals == 0:
        return lax.round(x, 1)
    if dtype == dtypes.float16:
        x = lax.convert_element_type(x, dtypes.float32)
    factor = lax_const(x, 10 ** decimals)
    out = lax.div(lax.round(lax.mul(x, factor), 1), factor)
    return lax.convert_element_type(out, dtype) if dtype == dtypes.float16 else out


@staged_as_jit(static_argnames=("decimals",))
def round(a: Any, decimals: int = 0, out: Any = None) -> Any:  # noqa: A001
    """Round half to even to `decimals` digits (integers are returned unchanged)."""
    a = _ensure("round", a)
    decimals = operator.index(decimals)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    if _is_int(a):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a
    if decimals > np.log10(float(dtypes.finfo(_dtype(a)).max)):
        return lax_extra.asarray(a)
    if _is_complex(a):
        return lax.complex(_round_float(lax.real(a), decimals),
                           _round_float(lax.imag(a), decimals))
    return _round_float(a, decimals)


@staged_as_jit(static_argnames=("decimals",))
def around(a: Any, decimals: int = 0, out: Any = None) -> Any:
    """Alias of round."""
    return round(a, decimals, out)



# ---------------------------------------------------------------------------------------------
# Logarithms, exponentials and trigonometry beyond one op
# ---------------------------------------------------------------------------------------------

def log2(x: Any, /) -> Any:
    """Base-2 logarithm."""
    (x,) = promote_args_inexact("log2", x)
    if _is_complex(x):
        r = lax.log(x)
        re, im = lax.real(r), lax.imag(r)
        ln2 = lax.log(_constant_like(re, 2))
        return lax.complex(lax.div(re, ln2), lax.div(im, ln2))
    trace = trace_state.trace
    if trace is not None and not trace.eager_like:  # staged: JAX's equations (jit simplifies)
        return lax.div(lax.log(x), lax.log(_constant_like(x, 2)))
    # JAX divides by log(2), which XLA makes a product with its reciprocal (rounded to x's
    # type; bfloat16 arithmetic is float32's, the reciprocal too): eagerly, that product
    if _dtype(x) == dtypes.bfloat16:
        wide = lax.convert_element_type(lax.log(x), dtypes.float32)
        ln2 = lax.convert_element_type(lax.log(_constant_like(x, 2)), dtypes.float32)
        product = lax.mul(wide, lax.div(_constant_like(wide, 1), ln2))
        return lax.convert_element_type(product, dtypes.bfloat16)
    ln2 = lax.log(_constant_like(x, 2))
    return lax.mul(lax.log(x), lax.div(_constant_like(x, 1), ln2))


def log10(x: Any, /) -> Any:
    """Base-10 logarithm (log(x) times 1/log(10))."""
    (x,) = promote_args_inexact("log10", x)
    one_over_log10 = np.array(0.4342944819032518, dtype=dtypes.finfo(_dtype(x)).dtype)
    if _is_complex(x):
        r = lax.log(x)
        re, im = lax.real(r), lax.imag(r)
        return lax.complex(lax.mul(re, one_over_log10), lax.mul(im, one_over_log10))
    return lax.mul(lax.log(x), one_over_log10)


def deg2rad(x: Any, /) -> Any:
    """Degrees to radians."""
    (x,) = promote_args_inexact("deg2rad", x)
    return lax.mul(x, lax_const(x, np.pi / 180))


def rad2deg(x: Any, /) -> Any:
    """Radians to degrees."""
    (x,) = promote_args_inexact("rad2deg", x)
    return lax.mul(x, lax_const(x, 180 / np.pi))


def radians(x: Any, /) -> Any:
    """Alias of deg2rad."""
    return deg2rad(x)


def degrees(x: Any, /) -> Any:
    """Alias of rad2deg."""
    return rad2deg(x)


@staged_as_jit
def hypot(x1: Any, x2: Any, /) -> Any:
    """sqrt(x1**2 + x2**2) without overflow."""
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    if _is_complex(x1):
        raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please "
                         "convert to real values first, such as by using abs(x)")
    x1, x2 = lax.abs(x1), lax.abs(x2)
    idx_inf = lax.bitwise_or(isposinf(x1), isposinf(x2))
    x1, x2 = maximum(x1, x2), minimum(x1, x2)
    x = _where(x1 == 0, x1, x1 * lax.sqrt(1 + lax.square(
        lax.div(x2, _where(x1 == 0, _ones(x1), x1)))))
    return _where(idx_inf, lax_const(x, np.inf), x)


@staged_as_jit
def sinc(x: Any, /) -> Any:
    """sin(pi x) / (pi x), with sinc(0) = 1."""
    (x,) = promote_dtypes_inexact(_ensure("sinc", x))
    eq_zero = lax.eq(x, lax_const(x, 0))
    pi_x = lax.mul(lax_const(x, np.pi), x)
    safe_pi_x = _where(eq_zero, lax_const(x, 1), pi_x)
    return _where(eq_zero, _ones(pi_x), lax.div(lax.sin(safe_pi_x), safe_pi_x))


# ---------------------------------------------------------------------------------------------
# Comparisons and logic
# ---------------------------------------------------------------------------------------------

def _complex_comparison(lax_fn: Callable, x: Any, y: Any) -> Any:
    """Order complex numbers by real part, then imaginary part."""
    if _is_complex(x):
        return lax.select(lax.eq(lax.real(x), lax.real(y)), lax_fn(lax.imag(x), lax.imag(y)),
                          lax_fn(lax.real(x), lax.real(y)))
    return lax_fn(x, y)


def _comparison(name: str, lax_prim: Any, ordered: bool) -> Callable:
    def slow(x: Any, y: Any) -> Any:
        x, y = promote_args(name, x, y)
        return _complex_comparison(lax_prim.bind, x, y) if ordered else lax_prim.bind(x, y)

    def fn(x: Any, y: Any, /) -> Any:
        if type(x) is ArrayImpl and type(y) is ArrayImpl:
            xb, yb = x._buf, y._buf
            if xb.dtype == yb.dtype and xb.shape == yb.shape and not (
                    ordered and dtypes.is_complex(xb.dtype)):
                return lax_prim.bind(x, y)
        elif (ops := _array_and_scalar(x, y)) is not None and not (
                ordered and dtypes.is_complex(ops[0]._buf.dtype)):
            return lax_prim.bind(*ops)
        return slow(x, y)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name}, as a boolean array."
    return fn


equal = _comparison("equal", lax.eq_p, False)
not_equal = _comparison("not_equal", lax.ne_p, False)
less = _comparison("less", lax.lt_p, True)
less_equal = _comparison("less_equal", lax.le_p, True)
greater = _comparison("greater", lax.gt_p, True)
greater_equal = _comparison("greater_equal", lax.ge_p, True)


def _logical(name: str, lax_fn: Callable) -> Callable:
    def fn(x: Any, y: Any, /) -> Any:
        return lax_fn(*map(_to_bool, promote_args(name, x, y)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} of the truth values."
    return fn


logical_and = _logical("logical_and", lax.bitwise_and)
logical_or = _logical("logical_or", lax.bitwise_or)
logical_xor = _logical("logical_xor", lax.bitwise_xor)


def logical_not(x: Any, /) -> Any:
    """Elementwise not of the truth values."""
    return lax.bitwise_not(*map(_to_bool, promote_args("logical_not", x)))


def invert(x: Any, /) -> Any:
    """~x: bitwise not (logical not for booleans)."""
    return lax.bitwise_not(*promote_args("invert", x))


bitwise_not = bitwise_invert = invert


def right_shift(x1: Any, x2: Any, /) -> Any:
    """x1 >> x2 (arithmetic for signed, logical for unsigned integers)."""
    x1, x2 = promote_args_numeric("right_shift", x1, x2)
    if dtypes.is_unsigned(_dtype(x1)):
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


@staged_as_jit
def bitwise_count(x: Any, /) -> Any:
    """Number of set bits in |x|, as uint8."""
    (x,) = promote_args_numeric("bitwise_count", x)
    return lax.convert_element_type(lax.population_count(absolute(x)), dtypes.uint8)


@staged_as_jit
def fmax(x1: Any, x2: Any) -> Any:
    """Elementwise maximum ignoring NaNs."""
    return where(greater(x1, x2) | isnan(x2), x1, x2)


@staged_as_jit
def fmin(x1: Any, x2: Any) -> Any:
    """Elementwise minimum ignoring NaNs."""
    return where(less(x1, x2) | isnan(x2), x1, x2)


# ---------------------------------------------------------------------------------------------
# Floating-point classification and bits
# ---------------------------------------------------------------------------------------------

def isnan(x: Any, /) -> Any:
    """x != x."""
    x = _ensure("isnan", x)
    return lax.ne(x, x)


def isfinite(x: Any, /) -> Any:
    """Neither infinite nor NaN."""
    x = _ensure("isfinite", x)
    if _is_float(x):
        return lax.is_finite(x)
    if _is_complex(x):
        return lax.bitwise_and(lax.is_finite(real(x)), lax.is_finite(imag(x)))
    return lax_extra.full_like(x, True, dtype=dtypes.bool_)


@staged_as_jit
def isinf(x: Any, /) -> Any:
    """|x| == inf."""
    x = _ensure("isinf", x)
    if _is_float(x):
        return lax.eq(lax.abs(x), _constant_like(x, np.inf))
    if _is_complex(x):
        re, im = lax.real(x), lax.imag(x)
        return lax.bitwise_or(lax.eq(lax.abs(re), _constant_like(re, np.inf)),
                              lax.eq(lax.abs(im), _constant_like(im, np.inf)))
    return lax_extra.full_like(x, False, dtype=dtypes.bool_)


def _isposneginf(infinity: float, x: Any, out: Any) -> Any:
    if out is not None:
        raise NotImplementedError("The 'out' argument to isneginf/isposinf is not supported.")
    if _is_float(x):
        return lax.eq(x, _constant_like(x, infinity))
    if _is_complex(x):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    return lax_extra.full_like(x, False, dtype=dtypes.bool_)


def isposinf(x: Any, /, out: Any = None) -> Any:
    """x == +inf."""
    return _isposneginf(np.inf, _ensure("isposinf", x), out)


def isneginf(x: Any, /, out: Any = None) -> Any:
    """x == -inf."""
    return _isposneginf(-np.inf, _ensure("isneginf", x), out)


_INT_FOR_BITS = {16: dtypes.int16, 32: dtypes.int32, 64: dtypes.int64}


@staged_as_jit
def signbit(x: Any, /) -> Any:
    """Whether the sign bit is set (true for -0.0)."""
    (x,) = promote_args("signbit", x)
    if _is_int(x):
        return lax.lt(x, _constant_like(x, 0))
    if _is_bool(x):
        return lax_extra.full_like(x, False, dtype=dtypes.bool_)
    if not _is_float(x):
        raise ValueError(f"jax.numpy.signbit is not well defined for {x.dtype}")
    info = dtypes.finfo(_dtype(x))
    if info.bits not in _INT_FOR_BITS:
        raise NotImplementedError("jax.numpy.signbit only supports 16, 32, and 64-bit types.")
    bits = lax_extra.bitcast_convert_type(x, _INT_FOR_BITS[info.bits])
    return lax.convert_element_type(bits >> (info.nexp + info.nmant), dtypes.bool_)


@staged_as_jit
def copysign(x1: Any, x2: Any, /) -> Any:
    """|x1| with the sign of x2."""
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    if _is_complex(x1):
        raise TypeError("copysign does not support complex-valued inputs")
    return _where(signbit(x2).astype(bool), -lax.abs(x1), lax.abs(x1))


def spacing(x: Any, /) -> Any:
    """Distance from x to the next representable number away from zero."""
    (arr,) = promote_args_inexact("spacing", x)
    if _is_complex(arr):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = lax_const(arr, np.inf)
    if _dtype(arr) == dtypes.float16:
        return lax.nextafter(arr, inf) - arr
    result = lax.nextafter(arr, copysign(inf, arr)) - arr
    return _where(result == 0, copysign(dtypes.finfo(_dtype(arr)).smallest_subnormal, arr),
                  result)


@staged_as_jit
def heaviside(x1: Any, x2: Any, /) -> Any:
    """0 where x1 < 0, 1 where x1 > 0, x2 where x1 == 0."""
    check_arraylike("heaviside", x1, x2)
    x1, x2 = promote_dtypes_inexact(x1, x2)
    zero = lax_const(x1, 0)
    return _where(lax.lt(x1, zero), zero,
                  _where(lax.gt(x1, zero), lax_const(x1, 1), _where(lax.ne(x1, x1), x1, x2)))


@staged_as_jit
def modf(x: Any, /, out: Any = None) -> tuple[Any, Any]:
    """(fractional part, integral part), both with the sign of x."""
    (x,) = promote_dtypes_inexact(_ensure("modf", x))
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    whole = _where(lax.ge(x, _zero(x)), floor(x), ceil(x))
    return x - whole, whole


# ---------------------------------------------------------------------------------------------
# Complex parts
# ---------------------------------------------------------------------------------------------

def conjugate(x: Any, /) -> Any:
    """Complex conjugate (real inputs are returned unchanged)."""
    x = _ensure("conjugate", x)
    return lax.conj(x) if _is_complex(x) else lax_extra.asarray(x)


def conj(x: Any, /) -> Any:
    """Alias of conjugate."""
    return conjugate(x)


def real(val: Any, /) -> Any:
    """Real part."""
    val = _ensure("real", val)
    return lax.real(val) if _is_complex(val) else lax_extra.asarray(val)


def imag(val: Any, /) -> Any:
    """Imaginary part (zeros for real inputs)."""
    val = _ensure("imag", val)
    return lax.imag(val) if _is_complex(val) else lax_extra.full_like(val, 0)


# ---------------------------------------------------------------------------------------------
# clip (jitted in JAX)
# ---------------------------------------------------------------------------------------------

#: bound types clip's eager fast path takes (none of them complex)
_CLIP_BOUNDS = frozenset((int, float, type(None)))


@staged_as_jit
def clip(arr: Any = None, /, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """Limit values to [min, max] (either bound may be None)."""
    if (type(arr) is ArrayImpl and type(min) in _CLIP_BOUNDS and type(max) in _CLIP_BOUNDS
            and arr._buf.dtype.kind != "c" and trace_state.trace is None):
        # eager, a real array and Python bounds: nothing for the checks below to reject
        if min is not None:
            arr = maximum(min, arr)
        return arr if max is None else minimum(max, arr)
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    check_arraylike("clip", arr)
    if any(iscomplexobj(t) for t in (arr, min, max)):
        raise ValueError(
            "Clip received a complex value either through the input or the min/max keywords. "
            "Complex values have no ordering and cannot be clipped. Please convert to a real "
            "value or array by taking the real or imaginary components via "
            "jax.numpy.real/imag respectively.")
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return lax_extra.asarray(arr)
