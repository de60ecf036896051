"""Elementwise primitives: unary math, binary arithmetic and comparisons, select_n, clamp,
convert_element_type.  Operands of a binary primitive must agree in shape and dtype (jnp does the
broadcasting and promotion); outputs are weak only when every input is weak.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy.special as sps

from pyjax._src.backend.dispatch import apply_primitive, to_buffer
from pyjax._src.core import dtypes
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.trace import Tracer
from pyjax._src.primitives import xla_math
from pyjax._src.transforms import ad
from pyjax._src.primitives._rules import (
    ANY, BOOL, COMPLEX, FLOAT, INT, INTEGRAL, NUMBER, UINT, check_kinds, dtype_kind, fast_eager,
    make_primitive)

_INEXACT = (FLOAT, COMPLEX)


def _one(x: Any) -> ArrayImpl:
    """1 in x's dtype, as a (literal) constant."""
    return ArrayImpl(np.ones((), x.dtype), False)


def _neg_ct(ct: Any) -> Any:
    return ct if type(ct) is ad.Zero else neg(ct)


def _unbroadcast(x: Any, ct: Any) -> Any:
    """Cotangent for operand x of an elementwise op (None when x is not linear); sums over the
    axes lax broadcast implicitly (rank-0 operands and size-1 axes)."""
    if not ad.is_undefined(x) or type(ct) is ad.Zero:
        return None if not ad.is_undefined(x) else ct
    shape = x.aval.shape
    ct_shape = np.shape(ct)
    if tuple(ct_shape) == tuple(shape):
        return ct
    from pyjax._src.primitives.reductions import reduce_sum
    from pyjax._src.primitives.shape import reshape
    axes = tuple(range(len(ct_shape))) if not shape else tuple(
        i for i, (a, b) in enumerate(zip(shape, ct_shape)) if a == 1 and b != 1)
    summed = reduce_sum(ct, axes)
    return reshape(summed, shape) if shape else summed
_SIGNED_NUMBER = (INT, FLOAT, COMPLEX)


def _errstate(fn: Callable) -> Callable:
    """Silence NumPy's floating-point warnings: XLA returns inf/nan quietly, and so do we."""
    def impl(*args: Any, **params: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args, **params)
    return impl


# ---------------------------------------------------------------------------------------------
# Unary
# ---------------------------------------------------------------------------------------------

def unop(name: str, impl: Callable, kinds: tuple, out_dtype: Callable | None = None) -> Primitive:
    def abstract_eval(x: ShapedArray, **params: Any) -> ShapedArray:
        check_kinds(name, kinds, x)
        dtype = x.dtype if out_dtype is None else out_dtype(x.dtype)
        return ShapedArray(x.shape, dtype, x.weak_type)

    prim = make_primitive(name, impl, abstract_eval)
    if out_dtype is None:
        prim.eager = fast_eager(kinds)
    return prim


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.finfo(dtype).dtype if dtypes.is_complex(dtype) else dtype


def _round_impl(x: np.ndarray, rounding_method: int = 0) -> np.ndarray:
    if rounding_method == 0:  # away from zero
        return np.copysign(np.floor(np.abs(x) + np.asarray(0.5, x.dtype)), x).astype(x.dtype)
    return np.round(x)


def _logistic(x: np.ndarray) -> np.ndarray:
    return (1 / (1 + np.exp(-x))).astype(x.dtype)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return (1 / np.sqrt(x)).astype(x.dtype)


def _unsigned_bits(x: np.ndarray) -> np.ndarray:
    """The bits of an integer array as uint64 (two's complement of the original width)."""
    return np.asarray(x).view(f"u{x.dtype.itemsize}").astype(np.uint64)


def _population_count(x: np.ndarray) -> np.ndarray:
    u = _unsigned_bits(x)
    count = np.zeros(u.shape, np.uint64)
    for bit in range(x.dtype.itemsize * 8):
        count += (u >> np.uint64(bit)) & np.uint64(1)
    return count.astype(x.dtype)


def _clz(x: np.ndarray) -> np.ndarray:
    """Leading zeros by binary search on the bit length (exact for every width)."""
    u = _unsigned_bits(x)
    length = np.zeros(u.shape, np.int64)
    for shift in (32, 16, 8, 4, 2, 1):
        big = u >= (np.uint64(1) << np.uint64(shift))
        u = np.where(big, u >> np.uint64(shift), u)
        length += big * shift
    length += u > 0
    return (x.dtype.itemsize * 8 - length).astype(x.dtype)


def _sign(x: np.ndarray) -> np.ndarray:
    """np.sign, except complex x/|x| as XLA computes it (nan where |x| is inf or nan)."""
    if not dtypes.is_complex(x.dtype):
        return np.sign(x)
    with np.errstate(all="ignore"):
        mag = np.abs(x)
        return np.where(mag == 0, np.zeros((), x.dtype), x / np.where(mag == 0, 1, mag)
                        ).astype(x.dtype)


def _same_dtype(fn: Callable) -> Callable:
    """A SciPy special function that keeps its input's dtype (SciPy computes half-precision
    inputs in float32 or float64 and returns that)."""
    def impl(x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            if x.dtype.itemsize < 4:
                return np.asarray(fn(x.astype(np.float32))).astype(x.dtype)
            return np.asarray(fn(x)).astype(x.dtype, copy=False)
    return impl


def _is_finite(x: np.ndarray) -> np.ndarray:
    return np.isfinite(x)


neg_p = unop("neg", np.negative, NUMBER)
ad.deflinear(neg_p, lambda ct, x: [_neg_ct(ct)])
sign_p = unop("sign", _sign, NUMBER)
floor_p = unop("floor", np.floor, (FLOAT,))
ceil_p = unop("ceil", np.ceil, (FLOAT,))
round_p = unop("round", _round_impl, (FLOAT,))
is_finite_p = unop("is_finite", _is_finite, (FLOAT,), out_dtype=lambda d: dtypes.bool_)
exp_p = unop("exp", _errstate(np.exp), _INEXACT)
ad.defjvp2(exp_p, lambda g, ans, x: mul(g, ans))
exp2_p = unop("exp2", _errstate(np.exp2), _INEXACT)
log_p = unop("log", _errstate(np.log), _INEXACT)
ad.defjvp(log_p, lambda g, x: div(g, x))
log1p_p = unop("log1p", _errstate(np.log1p), _INEXACT)
expm1_p = unop("expm1", _errstate(np.expm1), _INEXACT)
tanh_p = unop("tanh", np.tanh, _INEXACT)
ad.defjvp2(tanh_p, lambda g, ans, x: mul(add(g, mul(g, ans)), sub(_one(x), ans)))
logistic_p = unop("logistic", _errstate(_logistic), _INEXACT)
sin_p = unop("sin", np.sin, _INEXACT)
ad.defjvp(sin_p, lambda g, x: mul(g, cos(x)))
cos_p = unop("cos", np.cos, _INEXACT)
ad.defjvp(cos_p, lambda g, x: neg(mul(g, sin(x))))
tan_p = unop("tan", np.tan, _INEXACT)
asin_p = unop("asin", _errstate(np.arcsin), _INEXACT)
acos_p = unop("acos", _errstate(np.arccos), _INEXACT)
atan_p = unop("atan", np.arctan, _INEXACT)
sinh_p = unop("sinh", _errstate(np.sinh), _INEXACT)
cosh_p = unop("cosh", _errstate(np.cosh), _INEXACT)
asinh_p = unop("asinh", np.arcsinh, _INEXACT)
acosh_p = unop("acosh", _errstate(np.arccosh), _INEXACT)
atanh_p = unop("atanh", _errstate(np.arctanh), _INEXACT)
sqrt_p = unop("sqrt", _errstate(np.sqrt), _INEXACT)
rsqrt_p = unop("rsqrt", _errstate(_rsqrt), _INEXACT)
cbrt_p = unop("cbrt", np.cbrt, (FLOAT,))
abs_p = unop("abs", np.abs, _SIGNED_NUMBER, out_dtype=_real_dtype)
abs_p.eager = fast_eager((INT, FLOAT))
not_p = unop("not", np.invert, INTEGRAL)
square_p = unop("square", np.square, NUMBER)
erf_p = unop("erf", _same_dtype(sps.erf), (FLOAT,))
erfc_p = unop("erfc", _same_dtype(sps.erfc), (FLOAT,))
erf_inv_p = unop("erf_inv", xla_math.erf_inv, (FLOAT,))  # XLA's polynomial, bit for bit
lgamma_p = unop("lgamma", _same_dtype(sps.gammaln), (FLOAT,))
digamma_p = unop("digamma", _same_dtype(sps.digamma), (FLOAT,))
real_p = unop("real", np.real, (COMPLEX,), out_dtype=_real_dtype)
imag_p = unop("imag", np.imag, (COMPLEX,), out_dtype=_real_dtype)


def _conj_abstract(x: ShapedArray, *, input_dtype: np.dtype) -> ShapedArray:
    check_kinds("conj", (COMPLEX, FLOAT), x)
    if x.dtype in (dtypes.float16, dtypes.bfloat16):
        raise TypeError(f"conj does not accept dtype {dtypes.dtype_name(x.dtype)}. Accepted "
                        "dtypes are subtypes of float32, complexfloating, float64.")
    dtype = x.dtype if dtypes.is_complex(x.dtype) else (
        dtypes.complex128 if x.dtype == dtypes.float64 else dtypes.complex64)
    return ShapedArray(x.shape, dtype, x.weak_type)


conj_p = make_primitive("conj", lambda x, *, input_dtype: np.conj(x), _conj_abstract)
population_count_p = unop("population_count", _population_count, (INT, UINT))
clz_p = unop("clz", _clz, (INT, UINT))


def _integer_pow_impl(x: np.ndarray, *, y: int) -> np.ndarray:
    with np.errstate(all="ignore"):
        if y < 0:
            return (1 / np.power(x, -y)).astype(x.dtype)
        return np.power(x, y, dtype=x.dtype)


def _integer_pow_abstract(x: ShapedArray, *, y: int) -> ShapedArray:
    check_kinds("integer_pow", NUMBER, x)
    if y < 0 and dtype_kind(x.dtype) in (INT, UINT):
        raise TypeError("Integers cannot be raised to negative powers, got integer_pow(x, "
                        f"{y})")
    return x


integer_pow_p = make_primitive("integer_pow", _integer_pow_impl, _integer_pow_abstract)
_integer_pow_fast = fast_eager(NUMBER)


def _integer_pow_eager(prim: Primitive, args: tuple, params: dict) -> Any:
    # the fast path skips abstract_eval, which must reject integers to negative powers
    if params["y"] < 0:
        return apply_primitive(prim, args, params)
    return _integer_pow_fast(prim, args, params)


integer_pow_p.eager = _integer_pow_eager

round_p.abstract_eval = lambda x, rounding_method=0: (check_kinds("round", (FLOAT,), x), x)[1]


# ---------------------------------------------------------------------------------------------
# Binary
# ---------------------------------------------------------------------------------------------

def _broadcast_shapes(name: str, avals: tuple[ShapedArray, ...]) -> tuple[int, ...]:
    """lax's implicit broadcasting: rank-0 operands, and size-1 axes between equal ranks."""
    shapes = [a.shape for a in avals if a.shape]
    if not shapes:
        return ()
    if len({len(s) for s in shapes}) > 1:
        ranks = "{" + ", ".join(str(r) for r in sorted({len(s) for s in shapes})) + "}"
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got {ranks}")
    out = []
    for sizes in zip(*shapes):
        big = {s for s in sizes if s != 1}
        if len(big) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(str(a.shape) for a in avals)}.")
        out.append(big.pop() if big else 1)
    return tuple(out)


def _check_same(name: str, avals: tuple[ShapedArray, ...]) -> tuple[int, ...]:
    """Broadcast shape of the operands; their dtypes must be equal."""
    shape = _broadcast_shapes(name, avals)
    if len({a.dtype for a in avals}) > 1:
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got "
            f"{', '.join(dtypes.dtype_name(a.dtype) for a in avals)}. (Tip: jnp.{name} is a "
            f"similar function that does automatic type promotion on inputs).")
    return shape


def binop(name: str, impl: Callable, kinds: tuple, *, comparison: bool = False) -> Primitive:
    def abstract_eval(*avals: ShapedArray) -> ShapedArray:
        shape = _check_same(name, avals)
        check_kinds(name, kinds, *avals)
        weak = all(a.weak_type for a in avals)
        return ShapedArray(shape, dtypes.bool_ if comparison else avals[0].dtype, weak)

    prim = make_primitive(name, impl, abstract_eval)
    prim.eager = fast_eager(kinds)
    return prim


def _div_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if dtype_kind(x.dtype) in (INT, UINT):
            safe = np.where(y == 0, 1, y)
            q = np.floor_divide(x, safe)
            if dtype_kind(x.dtype) == INT:  # round toward zero, as C and XLA do
                q = q + ((np.remainder(x, safe) != 0) & ((x < 0) != (safe < 0)))
            return np.where(y == 0, -1, q).astype(x.dtype)
        return np.true_divide(x, y)


def _rem_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if dtype_kind(x.dtype) in (INT, UINT):
            safe = np.where(y == 0, 1, y)
            return np.where(y == 0, x, np.fmod(x, safe)).astype(x.dtype)
        return np.fmod(x, y)


def _pow_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.power(x, y.astype(x.dtype, copy=False))


def _shift_amount_ok(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return (y >= 0) & (y < x.dtype.itemsize * 8)


def _shift_left(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    ok = _shift_amount_ok(x, y)
    return np.where(ok, np.left_shift(x, np.where(ok, y, 0)), 0).astype(x.dtype)


def _shift_right_arithmetic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    ok = _shift_amount_ok(x, y)
    signed = x.astype(x.dtype.str.replace("u", "i"))
    full = np.where(signed < 0, -1, 0)
    amount = np.where(ok, y, 0).astype(signed.dtype)
    return np.where(ok, np.right_shift(signed, amount), full).astype(x.dtype)


def _shift_right_logical(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    ok = _shift_amount_ok(x, y)
    unsigned = x.view(x.dtype.str.replace("i", "u"))
    return np.where(ok, np.right_shift(unsigned, np.where(ok, y, 0).astype(unsigned.dtype)),
                    0).astype(unsigned.dtype).view(x.dtype)


add_p = binop("add", np.add, NUMBER)
ad.deflinear(add_p, lambda ct, x, y: [_unbroadcast(x, ct), _unbroadcast(y, ct)])
sub_p = binop("sub", np.subtract, NUMBER)
ad.deflinear(sub_p, lambda ct, x, y: [_unbroadcast(x, ct), _unbroadcast(y, _neg_ct(ct))])
mul_p = binop("mul", np.multiply, NUMBER)
ad.defjvp(mul_p, lambda g, x, y: mul(g, y), lambda g, x, y: mul(x, g))
mul_p.transpose = lambda ct, x, y: [
    _unbroadcast(x, mul(ct, y)) if ad.is_undefined(x) else None,
    _unbroadcast(y, mul(x, ct)) if ad.is_undefined(y) else None]
div_p = binop("div", _div_impl, NUMBER)
rem_p = binop("rem", _rem_impl, (INT, UINT, FLOAT))
pow_p = binop("pow", _pow_impl, _INEXACT)


def _pow_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    """An inexact base, and an exponent of the base's dtype or of an integer dtype."""
    shape = _broadcast_shapes("pow", (x, y))
    check_kinds("pow", _INEXACT, x)
    check_kinds("pow", (INT, UINT) + _INEXACT, y)
    if x.dtype != y.dtype and dtype_kind(y.dtype) not in (INT, UINT):
        raise TypeError("the first argument to pow must have an inexact dtype (float or "
                        "complex), and the second argument must have an inexact or integer "
                        "dtype, and two inexact dtypes must match, but got "
                        f"{x.dtype} and {y.dtype} respectively.")
    return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)


pow_p.abstract_eval = _pow_abstract
def _quiet_bf16(ufunc: Callable) -> Callable:
    """ml_dtypes' bfloat16 comparisons warn on NaN ("invalid value"); XLA is silent."""
    def impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if x.dtype == dtypes.bfloat16:
            with np.errstate(invalid="ignore"):
                return ufunc(x, y)
        return ufunc(x, y)
    impl.__name__ = ufunc.__name__
    return impl


max_p = binop("max", _quiet_bf16(np.maximum), ANY)
min_p = binop("min", _quiet_bf16(np.minimum), ANY)
def _atan2_impl(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    if not dtypes.is_complex(y.dtype):
        return np.arctan2(y, x)
    with np.errstate(all="ignore"):  # XLA's complex atan2: -i log((x + iy) / sqrt(x^2 + y^2))
        return (-1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y))).astype(y.dtype)


atan2_p = binop("atan2", _atan2_impl, _INEXACT)
nextafter_p = binop("nextafter", np.nextafter, (FLOAT,))
and_p = binop("and", np.bitwise_and, INTEGRAL)
or_p = binop("or", np.bitwise_or, INTEGRAL)
xor_p = binop("xor", np.bitwise_xor, INTEGRAL)
shift_left_p = binop("shift_left", _shift_left, (INT, UINT))
shift_right_arithmetic_p = binop("shift_right_arithmetic", _shift_right_arithmetic, (INT, UINT))
shift_right_logical_p = binop("shift_right_logical", _shift_right_logical, (INT, UINT))
eq_p = binop("eq", np.equal, ANY, comparison=True)
ne_p = binop("ne", np.not_equal, ANY, comparison=True)
lt_p = binop("lt", _quiet_bf16(np.less), (BOOL, INT, UINT, FLOAT), comparison=True)
le_p = binop("le", _quiet_bf16(np.less_equal), (BOOL, INT, UINT, FLOAT), comparison=True)
gt_p = binop("gt", _quiet_bf16(np.greater), (BOOL, INT, UINT, FLOAT), comparison=True)
ge_p = binop("ge", _quiet_bf16(np.greater_equal), (BOOL, INT, UINT, FLOAT),
             comparison=True)


def _complex_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    shape = _check_same("complex", (x, y))
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"complex does not accept dtype {dtypes.dtype_name(x.dtype)} at "
                        "position 0. Accepted dtypes at position 0 are subtypes of float32, "
                        "float64.")
    out = dtypes.complex128 if x.dtype == dtypes.float64 else dtypes.complex64
    return ShapedArray(shape, out, x.weak_type and y.weak_type)


complex_p = make_primitive("complex", lambda x, y: x + 1j * y, _complex_abstract)


# ---------------------------------------------------------------------------------------------
# select_n, clamp, convert_element_type
# ---------------------------------------------------------------------------------------------

def _select_n_impl(which: np.ndarray, *cases: np.ndarray) -> np.ndarray:
    if len(cases) == 1:
        return cases[0]
    if len(cases) == 2:
        return np.where(which, cases[1], cases[0])
    return np.choose(which.astype(np.int64), cases)


def _select_n_abstract(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if not cases:
        raise TypeError("select_n must have at least one case")
    _check_same("select_n", cases)
    if which.shape and which.shape != cases[0].shape:
        raise TypeError("select_n `which` must be scalar or have the same shape as cases, got "
                        f"`which` shape {which.shape} but case shape {cases[0].shape}.")
    if which.dtype != dtypes.bool_ and not dtypes.is_integer(which.dtype):
        raise TypeError(f"select `which` must be boolean or integer type, got {which.dtype}.")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise TypeError("select_n with boolean which cannot have more than two cases")
    return ShapedArray(cases[0].shape, cases[0].dtype, all(c.weak_type for c in cases))


select_n_p = make_primitive("select_n", _select_n_impl, _select_n_abstract)


def _clamp_abstract(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    for bound in (lo, hi):
        if bound.shape and bound.shape != x.shape:
            raise TypeError(f"clamp requires min.shape == operand.shape or min.shape == (), got "
                            f"{bound.shape}.")
        if bound.dtype != x.dtype:
            raise TypeError(f"lax.clamp requires arguments to have the same dtypes, got "
                            f"{bound.dtype}, {x.dtype}.")
    return x.update(weak_type=lo.weak_type and x.weak_type and hi.weak_type)


clamp_p = make_primitive("clamp", lambda lo, x, hi: np.clip(x, lo, hi), _clamp_abstract)


def _convert_impl(x: np.ndarray, *, new_dtype: np.dtype, weak_type: bool = False,
                  sharding: Any = None) -> np.ndarray:
    if x.dtype == new_dtype:
        return x
    if dtypes.is_integer(new_dtype) and dtypes.is_inexact(x.dtype):
        # XLA saturates out-of-range floats and sends NaN to 0
        info = np.iinfo(new_dtype) if new_dtype in (np.int8, np.int16, np.int32, np.int64,
                                                    np.uint8, np.uint16, np.uint32,
                                                    np.uint64) else dtypes.iinfo(new_dtype)
        real = np.real(x) if dtypes.is_complex(x.dtype) else x
        top = float(info.max)
        with np.errstate(all="ignore"):
            real = np.nan_to_num(real.astype(np.float64), nan=0.0)
            real = np.clip(np.trunc(real), float(info.min), top)
            out = real.astype(new_dtype)
        if top > info.max:  # 64-bit targets: float(max) rounds up to 2**63 / 2**64
            out = np.where(real >= top, np.asarray(info.max, new_dtype), out)
        return out
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
        x = np.real(x)
    with np.errstate(all="ignore"):
        return x.astype(new_dtype)


def _convert_abstract(x: ShapedArray, *, new_dtype: np.dtype, weak_type: bool = False,
                      sharding: Any = None) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type)


convert_element_type_p = make_primitive("convert_element_type", _convert_impl, _convert_abstract)


# ---------------------------------------------------------------------------------------------
# lax-level functions
# ---------------------------------------------------------------------------------------------

def _binary(prim: Primitive) -> Callable[[Any, Any], Any]:
    def fn(x: Any, y: Any) -> Any:
        return prim.bind(x, y)
    fn.__name__ = prim.name
    fn.__doc__ = f"Elementwise `{prim.name}` of two arrays of one shape and dtype."
    return fn


def _unary(prim: Primitive) -> Callable[[Any], Any]:
    def fn(x: Any) -> Any:
        return prim.bind(x)
    fn.__name__ = prim.name
    fn.__doc__ = f"Elementwise `{prim.name}`."
    return fn


add, sub, mul, div, rem, pow, max, min = map(  # noqa: A001 - lax's names
    _binary, (add_p, sub_p, mul_p, div_p, rem_p, pow_p, max_p, min_p))
atan2, nextafter = _binary(atan2_p), _binary(nextafter_p)
bitwise_and, bitwise_or, bitwise_xor = _binary(and_p), _binary(or_p), _binary(xor_p)
shift_left = _binary(shift_left_p)
shift_right_arithmetic = _binary(shift_right_arithmetic_p)
shift_right_logical = _binary(shift_right_logical_p)
eq, ne, lt, le, gt, ge = map(_binary, (eq_p, ne_p, lt_p, le_p, gt_p, ge_p))
complex = _binary(complex_p)  # noqa: A001
(neg, sign, floor, ceil, is_finite, exp, exp2, log, log1p, expm1, tanh, logistic, sin, cos, tan,
 asin, acos, atan, sinh, cosh, asinh, acosh, atanh, sqrt, rsqrt, cbrt, abs, bitwise_not, square,
 erf, erfc, erf_inv, lgamma, digamma, real, imag, population_count, clz) = map(  # noqa: A001
    _unary, (neg_p, sign_p, floor_p, ceil_p, is_finite_p, exp_p, exp2_p, log_p, log1p_p,
             expm1_p, tanh_p, logistic_p, sin_p, cos_p, tan_p, asin_p, acos_p, atan_p, sinh_p,
             cosh_p, asinh_p, acosh_p, atanh_p, sqrt_p, rsqrt_p, cbrt_p, abs_p, not_p, square_p,
             erf_p, erfc_p, erf_inv_p, lgamma_p, digamma_p, real_p, imag_p,
             population_count_p, clz_p))


def conj(x: Any) -> Any:
    """Elementwise complex conjugate (real inputs become complex)."""
    return conj_p.bind(x, input_dtype=dtypes.dtype_and_weak(x)[0])


def round(x: Any, rounding_method: int = 0) -> Any:  # noqa: A001
    """Round to integral values; 0 = away from zero (lax default), 1 = to nearest even."""
    return round_p.bind(x, rounding_method=int(rounding_method))


def integer_pow(x: Any, y: int) -> Any:
    """x ** y for a static Python int y."""
    return integer_pow_p.bind(x, y=int(y))


def select_n(which: Any, *cases: Any) -> Any:
    """cases[which] elementwise; a boolean `which` picks cases[1] where True."""
    return select_n_p.bind(which, *cases)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    return select_n_p.bind(pred, on_false, on_true)


def clamp(min: Any, x: Any, max: Any) -> Any:  # noqa: A002
    """min <= x <= max elementwise."""
    return clamp_p.bind(min, x, max)


def convert_element_type(operand: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    """Cast to `new_dtype`.  Constants are converted at once (JAX folds them while tracing)."""
    new_dtype = dtypes.check_user_dtype(new_dtype)
    if isinstance(operand, Tracer):
        if operand.aval.dtype == new_dtype and operand.aval.weak_type == weak_type:
            return operand
        return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=bool(weak_type))
    buf, weak = to_buffer(operand)
    if buf.dtype == new_dtype and weak == weak_type and type(operand) is ArrayImpl:
        return operand
    return ArrayImpl(np.asarray(_convert_impl(buf, new_dtype=new_dtype)), bool(weak_type))


