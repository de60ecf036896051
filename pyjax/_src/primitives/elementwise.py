"""Elementwise primitives: unary math, binary arithmetic and comparisons, select_n, clamp,
convert_element_type.  Operands of a binary primitive must agree in shape and dtype (jnp does the
broadcasting and promotion); outputs are weak only when every input is weak.
"""
from __future__ import annotations

import builtins
import functools
from typing import Any, Callable

import numpy as np

from pyjax._src.primitives._fp import ignore_fp_errors, quietly
from pyjax._src.backend.dispatch import apply_primitive, detach, to_buffer
from pyjax._src.backend.fp_mode import run_flushing
from pyjax._src.backend.eager_plans import plain_eager
from pyjax._src.backend.specialized import exact
from pyjax._src.core import dtypes, primitive
from pyjax._src.core.array import ArrayImpl, weak_constant
from pyjax._src.parallel import propagation
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.trace import Tracer, trace_state
from pyjax._src.primitives import xla_complex, xla_math
from pyjax._src.transforms import ad, batching
from pyjax._src.primitives._rules import (
    ANY, BOOL, COMPLEX, FLOAT, INT, INTEGRAL, NUMBER, UINT, check_kinds, dtype_kind, exact_ufunc,
    fast_eager, make_primitive)

_INEXACT = (FLOAT, COMPLEX)


def _dtype(x: Any) -> np.dtype:
    return dtypes.dtype_and_weak(x)[0]


def _one(x: Any) -> ArrayImpl:
    """1 in x's dtype (and weak type), as a rank-0 (literal) constant (JAX's `_one`)."""
    dtype, weak = dtypes.dtype_and_weak(x)
    return ArrayImpl(np.ones((), dtype), weak)


_PY_SCALAR_OF_KIND = {"b": bool, "i": int, "u": int, "f": float, "V": float, "c": complex}


def _const(x: Any, value: Any) -> ArrayImpl:
    """`value` in x's dtype as a rank-0 constant (JAX's `_const`): weak when x is a weak scalar
    (a Python scalar, or rank 0 and weakly typed) whose Python type defaults to x's dtype."""
    dtype, weak = dtypes.dtype_and_weak(x)
    if weak and np.ndim(x) == 0:
        scalar = _PY_SCALAR_OF_KIND[dtype.kind](value)
        if dtypes.dtype_and_weak(scalar)[0] == dtype:
            return weak_constant(scalar, np.array(scalar, dtype), True)
    return ArrayImpl(np.array(value).astype(dtype), False)


def _full_like(x: Any, value: Any, shape: Any = None) -> Any:
    from pyjax._src.primitives.extra import full_like
    return full_like(x, value, shape=shape)


def _zeros(x: Any) -> Any:
    return _full_like(x, 0)


def _ones(x: Any) -> Any:
    return _full_like(x, 1)


def _twos(x: Any) -> Any:
    return _full_like(x, 2)


def _zero(x: Any) -> Any:
    return _full_like(x, 0, shape=())


def _replace_zero(x: Any) -> Any:
    """x with its zeros replaced by ones (keeps divisions and logs finite)."""
    return select(eq(x, _const(x, 0)), _ones(x), x)


def _maybe_broadcast(shape: tuple, x: Any) -> Any:
    """x broadcast to `shape` (lax's implicit broadcasting made explicit)."""
    from pyjax._src.primitives.shape import broadcast_in_dim, reshape
    x_shape = tuple(np.shape(x))
    if x_shape == tuple(shape):
        return x
    if not x_shape:
        return broadcast_in_dim(x, shape, ())
    dims = [i for i, (a, b) in enumerate(zip(x_shape, shape)) if a == b]
    return broadcast_in_dim(reshape(x, [x_shape[i] for i in dims]), shape, dims)


def _out_shape(*xs: Any) -> tuple:
    """The shape lax's implicit broadcasting gives operands xs."""
    shapes = [tuple(np.shape(x)) for x in xs if np.shape(x)]
    if not shapes:
        return ()
    return tuple(builtins.max(sizes) if 0 not in sizes else 0 for sizes in zip(*shapes))


def _linear_transpose(rule: Callable) -> Callable:
    """A transpose rule for a linear primitive, made to pass symbolic zero cotangents on."""
    def transpose(ct: Any, *args: Any, **params: Any) -> list:
        if type(ct) is ad.Zero:
            return [ad.Zero(ad.tangent_aval(a.aval)) if ad.is_undefined(a) else None
                    for a in args]
        return rule(ct, *args, **params)
    return transpose


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
        with ignore_fp_errors():
            return fn(*args, **params)
    return impl


# ---------------------------------------------------------------------------------------------
# Batching of n-ary elementwise primitives (JAX's broadcast_batcher)
# ---------------------------------------------------------------------------------------------

# ---------------------------------------------------------------------------------------------
# Unary
# ---------------------------------------------------------------------------------------------

def _ufunc_of(impl: Callable) -> np.ufunc | None:
    """The ufunc an elementwise impl computes for NumPy's own dtypes: the impl itself, or the
    one a wrapper for ml_dtypes' sake names (`impl.ufunc`, as _quiet_bf16 sets it)."""
    return impl if isinstance(impl, np.ufunc) else getattr(impl, "ufunc", None)


def _ufunc_specialize(ufunc: np.ufunc, comparison: bool = False,
                      real: bool = False) -> Callable:
    """The specialize rule of an elementwise primitive computed by `ufunc` (for `real`
    operands only: complex ones have XLA's expansion): the ufunc itself (exact_ufunc) for
    operands of one dtype of NumPy's own, for eager plans and tier 0."""
    def specialize(*avals: ShapedArray) -> Any:
        dtype = avals[0].dtype
        if dtype.isbuiltin != 1 or any(a.dtype != dtype for a in avals) or (
                real and dtype.kind == "c"):
            return None
        return exact_ufunc(ufunc, dtypes.bool_ if comparison else dtype,
                           builtins.max(a.ndim for a in avals))
    return specialize


def unop(name: str, impl: Callable, kinds: tuple, out_dtype: Callable | None = None) -> Primitive:
    def abstract_eval(x: ShapedArray, **params: Any) -> ShapedArray:
        check_kinds(name, kinds, x)
        dtype = x.dtype if out_dtype is None else out_dtype(x.dtype)
        return ShapedArray(x.shape, dtype, x.weak_type)

    prim = make_primitive(name, impl, abstract_eval)
    ufunc = _ufunc_of(impl)
    if out_dtype is None:
        prim.eager = fast_eager(kinds, ufunc=ufunc)
        if ufunc is not None:
            prim.specialize = _ufunc_specialize(ufunc)
        elif getattr(impl, "real_ufunc", None) is not None:
            prim.specialize = _ufunc_specialize(impl.real_ufunc, real=True)
    prim.foldable = True
    batching.defvectorized(prim)
    prim.sharding_rule = propagation.elementwise
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
    """np.sign, except complex x/|x| as XLA computes it (xla_complex.sign)."""
    if not dtypes.is_complex(x.dtype):  # copysign keeps sign(-0.) == -0. as XLA does
        return np.copysign(np.sign(x), x) if x.dtype.kind == "f" or x.dtype == dtypes.bfloat16 \
            else np.sign(x)
    return xla_complex.sign(x)


def _or_complex(real_fn: Callable, complex_fn: Callable) -> Callable:
    """real_fn for real operands, XLA's complex expansion (xla_complex) for complex ones."""
    def impl(*args: np.ndarray) -> np.ndarray:
        if dtypes.is_complex(args[0].dtype):
            return complex_fn(*args)
        return real_fn(*args)
    impl.__name__ = getattr(real_fn, "__name__", complex_fn.__name__)
    if isinstance(real_fn, np.ufunc):  # (what unop/binop specialise real operands to)
        impl.real_ufunc = real_fn
    return impl


def _same_dtype(name: str) -> Callable:
    """scipy.special's `name` keeping its input's dtype (SciPy computes half-precision inputs
    in float32 or float64 and returns that).  SciPy loads on first use (import time)."""
    def impl(x: np.ndarray) -> np.ndarray:
        import scipy.special  # noqa: PLC0415
        fn = getattr(scipy.special, name)
        with ignore_fp_errors():
            if x.dtype.itemsize < 4:
                return np.asarray(fn(x.astype(np.float32))).astype(x.dtype)
            return np.asarray(fn(x)).astype(x.dtype, copy=False)
    return impl


def _is_finite(x: np.ndarray) -> np.ndarray:
    return np.isfinite(x)


neg_p = unop("neg", np.negative, NUMBER)
ad.deflinear(neg_p, _linear_transpose(lambda ct, x: [neg(ct)]))
sign_p = unop("sign", _sign, NUMBER)
ad.defjvp_zero(sign_p)
floor_p = unop("floor", np.floor, (FLOAT,))
ad.defjvp_zero(floor_p)
ceil_p = unop("ceil", np.ceil, (FLOAT,))
ad.defjvp_zero(ceil_p)
round_p = unop("round", _round_impl, (FLOAT,))
ad.defjvp_zero(round_p)
is_finite_p = unop("is_finite", _is_finite, (FLOAT,), out_dtype=lambda d: dtypes.bool_)
ad.defjvp_zero(is_finite_p)
def _exp_other(x: np.ndarray) -> np.ndarray:
    return xla_complex.exp(x) if dtypes.is_complex(x.dtype) else np.exp(x)


def _complex_exp(x: np.ndarray) -> np.ndarray:
    """exp as XLA computes it (xla_math.exp_f32 for float32 and 16-bit floats, xla_complex.exp
    for complex x)."""
    return _exp_impl(x)


try:  # what np.count_nonzero calls without an axis, minus its Python layers (a fifth of
    # its cost on small arrays, itself a quarter of ndarray.all()'s)
    from numpy._core.multiarray import count_nonzero as _count_nonzero
except ImportError:  # pragma: no cover - NumPy 1.x
    _count_nonzero = np.count_nonzero


def _keeps_tiny(fn: Callable) -> Callable:
    """fn returning a subnormal x itself, as XLA's sin, tanh and expm1 do (they select x for
    small |x|, and a select flushes nothing), where NumPy's loops flush it (fp_mode)."""
    def impl(x: np.ndarray) -> np.ndarray:
        out = fn(x)
        return out if _count_nonzero(out) == out.size else np.where(out == 0, x, out)
    impl.__name__ = fn.__name__
    return impl


def _flushes_tiny(fn: Callable) -> Callable:
    """fn with a subnormal result flushed to a zero of its sign, as XLA's sinh, asin, asinh,
    atanh and log1p give it, where glibc returns a tiny x itself (untouched by fp_mode)."""
    def impl(x: np.ndarray) -> np.ndarray:
        return np.multiply(fn(x), np.ones((), x.dtype))
    impl.__name__ = fn.__name__
    return impl


_F32 = dtypes.float32
_HALF_FLOATS = (dtypes.float16, dtypes.bfloat16)


def _xla_float(f32_fn: Callable, other: Callable, half: Callable | None = None) -> Callable:
    """XLA's float32 algorithm `f32_fn` (primitives/xla_math.py, bit for bit) for float32, and
    for float16/bfloat16, which XLA computes in float32 and rounds (or `half(x)`, where it
    expands the operation in the narrow type); `other(x)` for float64 and complex x."""
    def impl(x: np.ndarray) -> np.ndarray:
        dtype = x.dtype
        if dtype is _F32:
            return f32_fn(x)
        if dtype in _HALF_FLOATS:
            with ignore_fp_errors():  # (the rounding back may overflow)
                return half(x) if half is not None else f32_fn(x.astype(_F32)).astype(dtype)
        return f32_fn(x) if dtype == _F32 else other(x)
    impl.__name__ = getattr(other, "__name__", f32_fn.__name__)
    return impl


def _exp_halves(x: np.ndarray, sign: int) -> np.ndarray:
    """cosh (sign 1) / sinh (sign -1): NumPy's for real x (a subnormal sinh flushed, as
    XLA's is), XLA's complex expansions (xla_complex) for complex x."""
    if not dtypes.is_complex(x.dtype):
        return np.cosh(x) if sign == 1 else _sinh_real(x)
    return xla_complex.cosh(x) if sign == 1 else xla_complex.sinh(x)


def _cosh(x: np.ndarray) -> np.ndarray:
    return _exp_halves(x, 1)


def _sinh(x: np.ndarray) -> np.ndarray:
    return _exp_halves(x, -1)


_exp_impl = _xla_float(xla_math.exp_f32, _errstate(_exp_other))
exp_p = unop("exp", _exp_impl, _INEXACT)
ad.defjvp2(exp_p, lambda g, ans, x: mul(g, ans))
def _exp2(x: np.ndarray) -> np.ndarray:
    """XLA's exp2: exp(x * ln 2), with ln 2 rounded to x's dtype (so bfloat16 is coarse); a
    complex product with ln 2 + 0j."""
    if dtypes.is_complex(x.dtype):
        return xla_complex.exp(xla_complex.mul(np.full(x.shape, np.log(2), x.dtype), x))
    return _complex_exp(np.multiply(np.asarray(np.log(2), x.dtype), x))


exp2_p = unop("exp2", _errstate(_exp2), _INEXACT)
ad.defjvp2(exp2_p, lambda g, ans, x: mul(log(_const(x, 2)), mul(g, ans)))
def _log_f16_alone(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """float16 log computed alone is the C library's logf in XLA: the same values once rounded,
    but its NaNs are x's (quieted) or, below 0, the default -NaN (not XLA's own all-ones)."""
    nan = np.isnan(out)
    if nan.any():
        out = out.copy()
        out.view(np.uint16)[nan] = np.where(
            np.isnan(x[nan]), x[nan].view(np.uint16) | np.uint16(0x200), np.uint16(0xFE00))
    return out


log_p = unop("log", _xla_float(xla_math.log_f32, _errstate(_or_complex(np.log, xla_complex.log))),
             _INEXACT)
ad.defjvp(log_p, lambda g, x: div(g, x))


def _lone_exp_or_log(prim: Primitive, name: str) -> None:
    """prim's eager rule, for one float32 vector of a few elements: XLA's computation of
    exp/log alone hands some of them to the C library (xla_math.lone_exp_or_log).  Replayed
    plans call the impl, as XLA fuses the op with its neighbours there."""
    rule = prim.eager

    def eager(prim: Primitive, args: tuple, params: dict) -> Any:
        x = args[0]
        if type(x) is ArrayImpl:
            b = x._buf
            if b.ndim == 1 and b.size in _LIBM_SIZES and b.dtype == _F32:
                out = xla_math.lone_exp_or_log(name, b)
                if out is not None:
                    return ArrayImpl(out, x._weak)
            elif name == "log" and b.dtype == dtypes.float16:
                out = rule(prim, args, params)
                return ArrayImpl(_log_f16_alone(b, out._buf), out._weak)
        return rule(prim, args, params)
    prim.eager = plain_eager(eager)


_LIBM_SIZES = xla_math.LIBM_SIZES
_lone_exp_or_log(exp_p, "exp")
_lone_exp_or_log(log_p, "log")
log1p_p = unop("log1p", _xla_float(
    xla_math.log1p_f32, _errstate(_or_complex(_flushes_tiny(np.log1p), xla_complex.log1p))),
    _INEXACT)
ad.defjvp(log1p_p, lambda g, x: div(g, add(x, _one(x))))
def _expm1_other(x: np.ndarray) -> np.ndarray:
    """np.expm1 (float64); XLA's expansion (xla_complex.expm1) for complex x."""
    if dtypes.is_complex(x.dtype):
        return xla_complex.expm1(x)
    with ignore_fp_errors():
        return _expm1_real(x)


def _expm1_f16(x: np.ndarray) -> np.ndarray:
    """XLA's expm1 of float16, expanded in float16 (each step rounded to it), exp and tanh
    computed in float32: exp(x) - 1 beyond 1/2, else tanh(x/2) (exp(x) + 1); x where x/2 is 0.
    (bfloat16's is computed in float32 throughout.)"""
    with ignore_fp_errors():
        e = xla_math.exp_f32(x.astype(_F32)).astype(x.dtype)
        half = x * np.asarray(0.5, x.dtype)
        small = xla_math.tanh_f32(half.astype(_F32)).astype(x.dtype) * (e + np.ones((), x.dtype))
        out = np.where(np.abs(x) > np.asarray(0.5, x.dtype), e - np.ones((), x.dtype), small)
        return np.where(half == 0, x, out)


def _expm1_half(x: np.ndarray) -> np.ndarray:
    if x.dtype == dtypes.float16:
        return _expm1_f16(x)
    return xla_math.expm1_f32(x.astype(_F32)).astype(x.dtype)


_expm1_real = _keeps_tiny(np.expm1)
_sinh_real = _flushes_tiny(np.sinh)
_expm1 = _xla_float(xla_math.expm1_f32, _expm1_other, _expm1_half)
expm1_p = unop("expm1", _expm1, _INEXACT)
ad.defjvp2(expm1_p, lambda g, ans, x: mul(g, add(ans, _one(ans))))
tanh_p = unop("tanh", _xla_float(xla_math.tanh_f32,
                                  _or_complex(_keeps_tiny(np.tanh), xla_complex.tanh)), _INEXACT)
ad.defjvp2(tanh_p, lambda g, ans, x: mul(add(g, mul(g, ans)), sub(_one(x), ans)))
def _logistic_half(x: np.ndarray) -> np.ndarray:
    """XLA's logistic of a 16-bit float: 1 / (1 + exp(-x)) in its type (exp in float32)."""
    e = xla_math.exp_f32(np.negative(x).astype(_F32)).astype(x.dtype)
    one = np.ones((), x.dtype)
    return one / (one + e)


logistic_p = unop("logistic", _xla_float(xla_math.logistic_f32, _errstate(_logistic),
                                         _logistic_half), _INEXACT)
ad.defjvp2(logistic_p, lambda g, ans, x: mul(g, mul(ans, sub(_one(ans), ans))))
sin_p = unop("sin", _xla_float(xla_math.sin_f32,
                                _or_complex(_keeps_tiny(np.sin), xla_complex.sin)), _INEXACT)
ad.defjvp(sin_p, lambda g, x: mul(g, cos(x)))
cos_p = unop("cos", _xla_float(xla_math.cos_f32, _or_complex(np.cos, xla_complex.cos)),
             _INEXACT)
ad.defjvp(cos_p, lambda g, x: neg(mul(g, sin(x))))
tan_p = unop("tan", _or_complex(np.tan, xla_complex.tan), _INEXACT)
ad.defjvp2(tan_p, lambda g, ans, x: mul(g, add(_const(x, 1), square(ans))))
asin_p = unop("asin", _xla_float(xla_math.asin_f32, _errstate(
    _or_complex(_flushes_tiny(np.arcsin), xla_complex.asin)), xla_math.half_precision("asin")),
    _INEXACT)
ad.defjvp(asin_p, lambda g, x: mul(g, rsqrt(sub(_const(x, 1), square(x)))))
acos_p = unop("acos", _xla_float(xla_math.acos_f32, _errstate(
    _or_complex(np.arccos, xla_complex.acos)), xla_math.half_precision("acos")), _INEXACT)
ad.defjvp(acos_p, lambda g, x: mul(g, neg(rsqrt(sub(_const(x, 1), square(x))))))
atan_p = unop("atan", _xla_float(xla_math.atan_f32, _or_complex(np.arctan, xla_complex.atan)),
              _INEXACT)
ad.defjvp(atan_p, lambda g, x: div(g, add(_const(x, 1), square(x))))
sinh_p = unop("sinh", _xla_float(xla_math.sinh_f32, _errstate(_sinh)), _INEXACT)
ad.defjvp(sinh_p, lambda g, x: mul(g, cosh(x)))
cosh_p = unop("cosh", _xla_float(xla_math.cosh_f32, _errstate(_cosh)), _INEXACT)
ad.defjvp(cosh_p, lambda g, x: mul(g, sinh(x)))
asinh_p = unop("asinh", _xla_float(xla_math.asinh_f32, _or_complex(
    _flushes_tiny(np.arcsinh), xla_complex.asinh), xla_math.half_precision("asinh")), _INEXACT)
ad.defjvp(asinh_p, lambda g, x: mul(g, rsqrt(add(square(x), _one(x)))))
acosh_p = unop("acosh", _xla_float(xla_math.acosh_f32, _errstate(
    _or_complex(np.arccosh, xla_complex.acosh)), xla_math.half_precision("acosh")), _INEXACT)
# x^2 - 1 rather than (x + 1)(x - 1), as JAX writes it (the domain is x >= 1)
ad.defjvp(acosh_p, lambda g, x: mul(g, rsqrt(sub(square(x), _one(x)))))
atanh_p = unop("atanh", _xla_float(xla_math.atanh_f32, _errstate(
    _or_complex(_flushes_tiny(np.arctanh), xla_complex.atanh)), xla_math.half_precision("atanh")),
    _INEXACT)
ad.defjvp(atanh_p, lambda g, x: mul(integer_pow(add(_one(x), x), -1),
                                    div(g, sub(_one(x), x))))
sqrt_p = unop("sqrt", _errstate(_or_complex(np.sqrt, xla_complex.sqrt)), _INEXACT)
ad.defjvp2(sqrt_p, lambda g, ans, x: mul(g, div(_const(x, 0.5), ans)))  # sqrt'(0) = inf
rsqrt_p = unop("rsqrt", _xla_float(xla_math.rsqrt_f32, _errstate(_rsqrt)), _INEXACT)
ad.defjvp2(rsqrt_p, lambda g, ans, x: mul(g, mul(_const(x, -0.5), div(ans, x))))
cbrt_p = unop("cbrt", np.cbrt, (FLOAT,))
ad.defjvp2(cbrt_p, lambda g, ans, x: mul(g, mul(_const(x, 1 / 3), integer_pow(ans, -2))))
abs_p = unop("abs", _or_complex(np.abs, xla_complex.abs), _SIGNED_NUMBER, out_dtype=_real_dtype)
abs_p.eager = fast_eager((INT, FLOAT))


def _abs_jvp(g: Any, ans: Any, x: Any) -> Any:
    """sign(x) * g for reals, with abs'(0) = 1 as in JAX; Re(conj(x) g / |x|) for complex."""
    if dtypes.is_complex(_dtype(x)):
        return real(mul(g, div(conj(x), _replace_zero(convert_element_type(ans, _dtype(x))))))
    return select(ge(x, _zero(x)), g, neg(g))


ad.defjvp2(abs_p, _abs_jvp)
not_p = unop("not", np.invert, INTEGRAL)
ad.defjvp_zero(not_p)
square_p = unop("square", _or_complex(np.square, xla_complex.square), NUMBER)
ad.defjvp2(square_p, lambda g, ans, x: mul(g, mul(_const(x, 2), x)))
erf_p = unop("erf", _xla_float(xla_math.erf_f32, _same_dtype("erf")), (FLOAT,))  # XLA's
ad.defjvp(erf_p, lambda g, x: mul(_const(x, 2 / np.sqrt(np.pi)), mul(g, exp(neg(square(x))))))
erfc_p = unop("erfc", _xla_float(xla_math.erfc_f32, _same_dtype("erfc")), (FLOAT,))  # JAX's
ad.defjvp(erfc_p, lambda g, x: mul(_const(x, -2 / np.sqrt(np.pi)),
                                   mul(g, exp(neg(square(x))))))
erf_inv_p = unop("erf_inv", xla_math.erf_inv, (FLOAT,))  # XLA's polynomial, bit for bit
ad.defjvp2(erf_inv_p, lambda g, ans, x: mul(_const(x, np.sqrt(np.pi) / 2),
                                            mul(g, exp(square(ans)))))
def _lgamma_impl(x: np.ndarray) -> np.ndarray:
    from pyjax._src.primitives.special import lgamma_impl  # XLA's Lanczos sum
    return lgamma_impl(x)


def _digamma_impl(x: np.ndarray) -> np.ndarray:
    from pyjax._src.primitives.special import digamma_impl  # XLA's Lanczos sum
    return digamma_impl(x)


lgamma_p = unop("lgamma", _lgamma_impl, (FLOAT,))
ad.defjvp(lgamma_p, lambda g, x: mul(g, digamma(x)))
digamma_p = unop("digamma", _digamma_impl, (FLOAT,))
ad.defjvp(digamma_p, lambda g, x: mul(g, polygamma(_const(x, 1), x)))
real_p = unop("real", np.real, (COMPLEX,), out_dtype=_real_dtype)
ad.deflinear(real_p, _linear_transpose(
    lambda ct, x: [complex(ct, ArrayImpl(np.zeros((), _dtype(ct)), False))]))
imag_p = unop("imag", np.imag, (COMPLEX,), out_dtype=_real_dtype)
ad.deflinear(imag_p, _linear_transpose(
    lambda ct, x: [complex(ArrayImpl(np.zeros((), _dtype(ct)), False), neg(ct))]))


def _conj_abstract(x: ShapedArray, *, input_dtype: np.dtype) -> ShapedArray:
    check_kinds("conj", (COMPLEX, FLOAT), x)
    if x.dtype in (dtypes.float16, dtypes.bfloat16):
        raise TypeError(f"conj does not accept dtype {dtypes.dtype_name(x.dtype)}. Accepted "
                        "dtypes are subtypes of float32, complexfloating, float64.")
    dtype = x.dtype if dtypes.is_complex(x.dtype) else (
        dtypes.complex128 if x.dtype == dtypes.float64 else dtypes.complex64)
    return ShapedArray(x.shape, dtype, x.weak_type)


conj_p = make_primitive("conj", lambda x, *, input_dtype: np.conj(x), _conj_abstract)
conj_p.sharding_rule = propagation.elementwise


def _conj_transpose(ct: Any, x: Any, *, input_dtype: np.dtype) -> list:
    """conj of a complex input; the real part, for a real input made complex."""
    return [conj(ct) if dtypes.is_complex(input_dtype) else real(ct)]


ad.deflinear(conj_p, _linear_transpose(_conj_transpose))
batching.defvectorized(conj_p)
population_count_p = unop("population_count", _population_count, (INT, UINT))
ad.defjvp_zero(population_count_p)
clz_p = unop("clz", _clz, (INT, UINT))
ad.defjvp_zero(clz_p)


def _integer_pow_impl(x: np.ndarray, *, y: int) -> np.ndarray:
    """XLA's integer_pow: binary exponentiation in x's dtype (each product rounded, so
    inexact results match XLA's), then a reciprocal for negative y."""
    with ignore_fp_errors():
        if x.dtype.kind in "iub":
            if y < 0:
                return (1 / np.power(x, -y)).astype(x.dtype)
            return np.power(x, y, dtype=x.dtype)
        if y == 0:
            return np.ones_like(x)
        times = xla_complex.mul if dtypes.is_complex(x.dtype) else np.multiply
        n, base, acc = -y if y < 0 else y, x, None  # (`abs` here is lax.abs)
        while n:
            if n & 1:
                acc = base if acc is None else times(acc, base)
            n >>= 1
            if n:
                base = times(base, base)
        if y < 0 and dtypes.is_complex(x.dtype):
            return xla_complex.div(np.ones_like(acc), acc)
        return (np.ones((), x.dtype) / acc).astype(x.dtype) if y < 0 else acc.astype(x.dtype)


def _integer_pow_abstract(x: ShapedArray, *, y: int) -> ShapedArray:
    check_kinds("integer_pow", NUMBER, x)
    if y < 0 and dtype_kind(x.dtype) in (INT, UINT):
        raise TypeError("Integers cannot be raised to negative powers, got "
                        f"integer_pow({x.str_short()}, {y})")
    return x


integer_pow_p = make_primitive("integer_pow", _integer_pow_impl, _integer_pow_abstract)
_integer_pow_fast = fast_eager(NUMBER)


def _integer_pow_eager(prim: Primitive, args: tuple, params: dict) -> Any:
    # the fast path skips abstract_eval, which must reject integers to negative powers
    if params["y"] < 0:
        return apply_primitive(prim, args, params)
    return _integer_pow_fast(prim, args, params)


integer_pow_p.eager = plain_eager(_integer_pow_eager)
integer_pow_p.sharding_rule = propagation.elementwise


def _integer_pow_jvp(g: Any, x: Any, *, y: int) -> Any:
    if y == 0:
        return _zeros(g)
    if y == 1:
        return g
    if y == 2:
        return mul(g, mul(_const(x, y), x))
    return mul(g, mul(_const(x, y), integer_pow(x, y - 1)))


ad.defjvp(integer_pow_p, _integer_pow_jvp)
batching.defvectorized(integer_pow_p)

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


#: the jnp function that promotes where a lax op does not, named in dtype errors (JAX's table)
_JNP_EQUIVALENT = {
    **{name: name for name in (
        'add', 'bitwise_and', 'bitwise_not', 'bitwise_or', 'bitwise_xor', 'cbrt', 'ceil',
        'concatenate', 'cos', 'cosh', 'exp', 'expm1', 'floor', 'greater', 'greater_equal', 'less',
        'less_equal', 'log', 'log1p', 'logical_and', 'logical_not', 'logical_or', 'logical_xor',
        'nextafter', 'round', 'sign', 'sin', 'sinh', 'sqrt', 'tan', 'tanh',
    )},
    'abs': 'fabs', 'acos': 'arccos', 'acosh': 'arccosh', 'asin': 'arcsin', 'asinh': 'arcsinh',
    'atan': 'arctan', 'atan2': 'arctan2', 'atanh': 'arctanh', 'div': 'divide', 'eq': 'equal',
    'max': 'maximum', 'min': 'minimum', 'mul': 'multiply', 'ne': 'not_equal', 'neg': 'negative',
    'pow': 'float_power', 'select': 'where', 'shift_left': 'left_shift',
    'shift_right_arithmetic': 'right_shift', 'shift_right_logical': 'right_shift',
    'sub': 'subtract',
}


def _check_same(name: str, avals: tuple[ShapedArray, ...]) -> tuple[int, ...]:
    """Broadcast shape of the operands; their dtypes must be equal."""
    shape = _broadcast_shapes(name, avals)
    if len({a.dtype for a in avals}) > 1:
        tip = _JNP_EQUIVALENT.get(name)
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got "
            f"{', '.join(dtypes.dtype_name(a.dtype) for a in avals)}." + (
                f" (Tip: jnp.{tip} is a similar function that does automatic type promotion "
                "on inputs)." if tip else ""))
    return shape


def binop(name: str, impl: Callable, kinds: tuple, *, comparison: bool = False) -> Primitive:
    def abstract_eval(*avals: ShapedArray) -> ShapedArray:
        shape = _check_same(name, avals)
        for i, aval in enumerate(avals):  # JAX's naryop names the operand's position
            try:
                check_kinds(name, kinds, aval)
            except TypeError as e:
                raise TypeError(str(e).replace(". Accepted dtypes are", f" at position {i}. "
                                               f"Accepted dtypes at position {i} are")) from None
        weak = all(a.weak_type for a in avals)
        return ShapedArray(shape, dtypes.bool_ if comparison else avals[0].dtype, weak)

    prim = make_primitive(name, impl, abstract_eval)
    ufunc = _ufunc_of(impl)
    prim.eager = fast_eager(kinds, ufunc=ufunc)
    if ufunc is not None:
        prim.specialize = _ufunc_specialize(ufunc, comparison)
    elif getattr(impl, "real_ufunc", None) is not None:
        prim.specialize = _ufunc_specialize(impl.real_ufunc, comparison, real=True)
    prim.foldable = True
    batching.defbroadcasting(prim)
    prim.sharding_rule = propagation.elementwise
    return prim


def _div_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with ignore_fp_errors():
        if dtype_kind(x.dtype) in (INT, UINT):
            safe = np.where(y == 0, 1, y)
            q = np.floor_divide(x, safe)
            if dtype_kind(x.dtype) == INT:  # round toward zero, as C and XLA do
                q = q + ((np.remainder(x, safe) != 0) & ((x < 0) != (safe < 0)))
            return np.where(y == 0, -1, q).astype(x.dtype)
        if dtypes.is_complex(x.dtype):
            return xla_complex.div(x, y)
        return np.true_divide(x, y)


def _rem_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with ignore_fp_errors():
        if dtype_kind(x.dtype) in (INT, UINT):
            safe = np.where(y == 0, 1, y)
            return np.where(y == 0, x, np.fmod(x, safe)).astype(x.dtype)
        return np.fmod(x, y)


def _pow_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with ignore_fp_errors():
        if dtypes.is_complex(x.dtype):
            return xla_complex.power(x, y.astype(x.dtype, copy=False))
        return np.power(x, y.astype(x.dtype, copy=False))


def _shift_amount_ok(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return (y >= 0) & (y < x.dtype.itemsize * 8)


def _in_range_scalar(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether y is one shift amount within x's width (the common case: a literal)."""
    return y.ndim == 0 and 0 <= y < x.dtype.itemsize * 8


def _shift_left(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if _in_range_scalar(x, y):
        return np.left_shift(x, y.astype(x.dtype))
    ok = _shift_amount_ok(x, y)
    return np.where(ok, np.left_shift(x, np.where(ok, y, 0)), 0).astype(x.dtype)


def _shift_right_arithmetic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    ok = _shift_amount_ok(x, y)
    signed = x.astype(x.dtype.str.replace("u", "i"))
    full = np.where(signed < 0, -1, 0)
    amount = np.where(ok, y, 0).astype(signed.dtype)
    return np.where(ok, np.right_shift(signed, amount), full).astype(x.dtype)


def _shift_right_logical(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    unsigned = x.view(x.dtype.str.replace("i", "u"))
    if _in_range_scalar(x, y):
        return np.right_shift(unsigned, y.astype(unsigned.dtype)).view(x.dtype)
    ok = _shift_amount_ok(x, y)
    return np.where(ok, np.right_shift(unsigned, np.where(ok, y, 0).astype(unsigned.dtype)),
                    0).astype(unsigned.dtype).view(x.dtype)


def _add_jvp(primals: Any, tangents: Any) -> tuple:
    x, y = primals
    xdot, ydot = tangents
    out = add(x, y)
    if type(xdot) is ad.Zero and type(ydot) is ad.Zero:
        return out, ad.Zero.like(out)
    if type(xdot) is ad.Zero:
        return out, _maybe_broadcast(np.shape(out), ydot)
    if type(ydot) is ad.Zero:
        return out, _maybe_broadcast(np.shape(out), xdot)
    return out, add(xdot, ydot)


add_p = binop("add", np.add, NUMBER)
add_p.jvp = _add_jvp
add_p.transpose = _linear_transpose(
    lambda ct, x, y: [_unbroadcast(x, ct), _unbroadcast(y, ct)])


def _sub_jvp(primals: Any, tangents: Any) -> tuple:
    x, y = primals
    xdot, ydot = tangents
    out = sub(x, y)
    if type(xdot) is ad.Zero and type(ydot) is ad.Zero:
        return out, ad.Zero.like(out)
    if type(xdot) is ad.Zero:
        return out, _maybe_broadcast(np.shape(out), neg(ydot))
    if type(ydot) is ad.Zero:
        return out, _maybe_broadcast(np.shape(out), xdot)
    return out, sub(xdot, ydot)


sub_p = binop("sub", np.subtract, NUMBER)
sub_p.jvp = _sub_jvp
sub_p.transpose = _linear_transpose(
    lambda ct, x, y: [_unbroadcast(x, ct), _unbroadcast(y, neg(ct))])


def _bilinear_transpose(lhs_rule: Callable, rhs_rule: Callable) -> Callable:
    """Transpose of a primitive linear in each operand separately (exactly one is linear)."""
    def transpose(ct: Any, x: Any, y: Any, **params: Any) -> list:
        if ad.is_undefined(x):
            if type(ct) is ad.Zero:
                return [ad.Zero(ad.tangent_aval(x.aval)), None]
            return [lhs_rule(ct, x, y, **params), None]
        if type(ct) is ad.Zero:
            return [None, ad.Zero(ad.tangent_aval(y.aval))]
        return [None, rhs_rule(ct, x, y, **params)]
    return transpose


mul_p = binop("mul", _or_complex(np.multiply, xla_complex.mul), NUMBER)
ad.defjvp(mul_p, lambda g, x, y: mul(g, y), lambda g, x, y: mul(x, g))
mul_p.transpose = _bilinear_transpose(lambda ct, x, y: _unbroadcast(x, mul(ct, y)),
                                      lambda ct, x, y: _unbroadcast(y, mul(x, ct)))


def _div_specialize(x: ShapedArray, y: ShapedArray) -> Any:
    """_div_impl of floats of NumPy's own (float16/32/64), for eager plans: the ufunc."""
    if x.dtype.kind != "f" or y.dtype != x.dtype:
        return None
    return exact(quietly(exact_ufunc(np.true_divide, x.dtype, builtins.max(x.ndim, y.ndim))))


div_p = binop("div", _div_impl, NUMBER)
div_p.specialize = _div_specialize
ad.defjvp(div_p, lambda g, x, y: div(g, y),
          lambda g, x, y: mul(mul(neg(g), x), integer_pow(y, -2)))


def _div_transpose(ct: Any, x: Any, y: Any) -> list:
    """div is linear in the numerator only."""
    if ad.is_undefined(y):
        raise RuntimeError("nonlinear div can't be transposed")
    if type(ct) is ad.Zero:
        return [ad.Zero(ad.tangent_aval(x.aval)), None]
    return [_unbroadcast(x, div(ct, y)), None]


div_p.transpose = _div_transpose
rem_p = binop("rem", _rem_impl, (INT, UINT, FLOAT))
ad.defjvp(rem_p, lambda g, x, y: _maybe_broadcast(_out_shape(x, y), g),
          lambda g, x, y: mul(neg(g), mul(sign(div(x, y)), floor(abs(div(x, y))))))
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


def _pow_jvp_base(g: Any, ans: Any, x: Any, y: Any) -> Any:
    """y x^(y-1) g; an integer exponent 0 contributes 0 even where x is 0."""
    y_dtype = _dtype(y)
    result_dtype = dtypes.result_type(x, y)
    x = convert_element_type(x, result_dtype)
    y = convert_element_type(y, result_dtype)
    if dtypes.is_integer(y_dtype):
        shape = _out_shape(x, y)
        x, y = _maybe_broadcast(shape, x), _maybe_broadcast(shape, y)
        jac = select(eq(y, _const(y, 0)), _zeros(y),
                     mul(_replace_zero(y), pow(x, sub(y, _ones(y)))))
    else:
        jac = mul(y, pow(x, sub(y, _ones(y))))
    return mul(g, jac)


def _pow_jvp_exponent(g: Any, ans: Any, x: Any, y: Any) -> Any:
    """log(x) x^y g, with log(1) in place of log(0)."""
    return convert_element_type(mul(g, mul(log(_replace_zero(x)), ans)), _dtype(y))


ad.defjvp2(pow_p, _pow_jvp_base, _pow_jvp_exponent)
def _quiet_bf16(ufunc: np.ufunc) -> Callable:
    """ml_dtypes' bfloat16 comparisons warn on NaN ("invalid value"); XLA is silent."""
    def impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if x.dtype == dtypes.bfloat16:
            with np.errstate(invalid="ignore"):
                return ufunc(x, y)
        return ufunc(x, y)
    impl.__name__ = ufunc.__name__
    impl.ufunc = ufunc  # (what it computes for NumPy's own dtypes: _ufunc_of)
    return impl


def _balanced_eq(x: Any, z: Any, y: Any) -> Any:
    """1 where x == z, halved where y == z too: max and min split the derivative evenly
    between tied operands (JAX's convention)."""
    return div(select(eq(x, z), _ones(z), _zeros(z)), select(eq(y, z), _twos(z), _ones(z)))


def _zero_signed(name: str, ufunc: np.ufunc, sign: int) -> Primitive:
    """max/min with XLA's signed zeros: max(0., -0.) is 0., min(0., -0.) is -0. (NumPy returns
    the first operand); x + y of two zeros is +0 unless both are -0, which gives max."""
    quiet = _quiet_bf16(ufunc)

    def signed(out: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """out, with XLA's zero where some zero result has two zero operands."""
        zero = (out == 0) & (x == y)
        if zero.any():
            out = np.where(zero, sign * (sign * x + sign * y), out).astype(out.dtype)
        return out

    def impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        out = quiet(x, y)
        if (out.dtype.kind == "f" or out.dtype == dtypes.bfloat16) and \
                _count_nonzero(out) != out.size:  # some result is zero (NaN counts as true)
            out = signed(out, x, y)
        return out
    impl.__name__ = ufunc.__name__

    def specialize(x: ShapedArray, y: ShapedArray) -> Any:
        """impl for operands of one dtype of NumPy's own: floats check for zeros."""
        if x.dtype != y.dtype or x.dtype.isbuiltin != 1:
            return None
        kernel = exact_ufunc(ufunc, x.dtype, builtins.max(x.ndim, y.ndim))
        if x.dtype.kind != "f":
            return kernel
        size = (x if x.ndim else y).size  # the result's (a 0-d operand broadcasts)

        def special(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            out = kernel(a, b)
            return out if _count_nonzero(out) == size else signed(out, a, b)
        return exact(special)

    prim = binop(name, impl, ANY)
    prim.specialize = specialize
    return prim


max_p = _zero_signed("max", np.maximum, 1)
ad.defjvp2(max_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
           lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
min_p = _zero_signed("min", np.minimum, -1)
ad.defjvp2(min_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
           lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))


def _atan2_impl(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    if not dtypes.is_complex(y.dtype):
        return np.arctan2(y, x)
    with ignore_fp_errors():  # XLA's complex atan2: -i log((x + iy) / sqrt(x^2 + y^2))
        return (-1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y))).astype(y.dtype)


atan2_p = binop("atan2", _atan2_impl, _INEXACT)
ad.defjvp(atan2_p, lambda g, x, y: mul(g, div(y, add(square(x), square(y)))),
          lambda g, x, y: mul(g, div(neg(x), add(square(x), square(y)))))
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
# Piecewise-constant outputs (integers, booleans): symbolic zero tangents
for _prim in (and_p, or_p, xor_p, shift_left_p, shift_right_arithmetic_p,
              shift_right_logical_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    ad.defjvp_zero(_prim)


nextafter_p.jvp = ad.unimplemented_rule(nextafter_p)  # JAX defines no derivative


def _complex_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    shape = _check_same("complex", (x, y))
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"complex does not accept dtype {dtypes.dtype_name(x.dtype)} at "
                        "position 0. Accepted dtypes at position 0 are subtypes of float32, "
                        "float64.")
    out = dtypes.complex128 if x.dtype == dtypes.float64 else dtypes.complex64
    return ShapedArray(shape, out, x.weak_type and y.weak_type)


def _complex_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x + iy by parts (x + 1j * y would lose signed zeros and turn inf into nan)."""
    x, y = np.broadcast_arrays(x, y)
    out = np.empty(x.shape, np.result_type(x.dtype, np.complex64))
    out.real, out.imag = x, y
    return out


complex_p = make_primitive("complex", _complex_impl, _complex_abstract)
complex_p.sharding_rule = propagation.elementwise
ad.deflinear(complex_p, _linear_transpose(
    lambda ct, x, y: [_unbroadcast(x, real(ct)), _unbroadcast(y, imag(neg(ct)))]))
batching.defbroadcasting(complex_p)


def _polygamma_impl(m: np.ndarray, x: np.ndarray) -> np.ndarray:
    """psi^(m)(x); NaN where m is not a non-negative integer (XLA's algorithm)."""
    from pyjax._src.primitives.special import polygamma_impl
    return polygamma_impl(m, x)


#: the derivatives of digamma (m = 1, 2, ...); JAX's lax.polygamma
polygamma_p = binop("polygamma", _polygamma_impl, (FLOAT,))


def _polygamma_jvp_order(g: Any, m: Any, x: Any) -> Any:
    raise ValueError("polygamma gradient with respect to m is not supported")


ad.defjvp(polygamma_p, _polygamma_jvp_order,
          lambda g, m, x: mul(g, polygamma(add(m, _const(m, 1)), x)))


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
        raise TypeError("select must have at least one case")
    if any(c.shape != cases[0].shape for c in cases[1:]):
        raise TypeError("select cases must have the same shapes, got "
                        f"[{', '.join(str(c.shape) for c in cases)}].")
    _check_same("select_n", cases)
    if which.shape and which.shape != cases[0].shape:
        raise TypeError("select_n `which` must be scalar or have the same shape as cases, got "
                        f"`which` shape {which.shape} but case shape {cases[0].shape}.")
    if which.dtype != dtypes.bool_ and not dtypes.is_integer(which.dtype):
        raise TypeError(f"select `which` must be boolean or integer type, got {which.dtype}.")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise TypeError("select_n with boolean which cannot have more than two cases")
    return ShapedArray(cases[0].shape, cases[0].dtype, all(c.weak_type for c in cases))


def _select_n_specialize(which: ShapedArray, *cases: ShapedArray) -> Any:
    """_select_n_impl by a boolean of two cases of one dtype of NumPy's own, for eager plans:
    a copy of the false case with the true one copied in where `which` holds (the same bits
    as np.where, in two thirds of its time on small arrays)."""
    if (len(cases) != 2 or which.dtype != dtypes.bool_ or cases[1].dtype != cases[0].dtype
            or cases[0].dtype.isbuiltin != 1):
        return None
    return exact(_select_by_copy)


def _select_by_copy(which: np.ndarray, false: np.ndarray, true: np.ndarray) -> np.ndarray:
    out = false.copy()
    _copyto(out, true, where=which)
    return out


#: np.copyto's C function, without its array-function dispatch (a third of a small select)
_copyto = getattr(np.copyto, "_implementation", np.copyto)


select_n_p = make_primitive("select_n", _select_n_impl, _select_n_abstract)
select_n_p.specialize = _select_n_specialize


def _select_n_jvp(primals: Any, tangents: Any) -> tuple:
    """Linear in the cases; `which` (boolean or integer) has no tangent."""
    which, *cases = primals
    case_tangents = tangents[1:]
    out = select_n(which, *cases)
    if all(type(t) is ad.Zero for t in case_tangents):
        return out, ad.Zero(case_tangents[0].aval)
    zeros = _zeros(next(t for t in case_tangents if type(t) is not ad.Zero))
    return out, select_n(which, *[zeros if type(t) is ad.Zero else t for t in case_tangents])


def _select_n_transpose(ct: Any, which: Any, *cases: Any) -> list:
    if ad.is_undefined(which):
        raise ValueError("select_n is not linear in its predicate")
    if type(ct) is ad.Zero:
        return [None] + [ad.Zero(ad.tangent_aval(c.aval)) if ad.is_undefined(c) else None
                         for c in cases]
    zeros = _full_like(ct, 0)
    if _dtype(which) == dtypes.bool_:
        return [None] + [_unbroadcast(c, select_n(which, *((zeros, ct) if i else (ct, zeros))))
                         if ad.is_undefined(c) else None for i, c in enumerate(cases)]
    return [None] + [_unbroadcast(c, select_n(eq(which, _const(which, i)), zeros, ct))
                     if ad.is_undefined(c) else None for i, c in enumerate(cases)]


def _select_n_batch(vals: Any, dims: Any) -> tuple:
    """JAX's rule: no moves when `which` and the cases share a batch axis (a per-example
    scalar `which` is broadcast along it), or when an unbatched scalar `which` selects among
    batched cases; otherwise batch axes go to the front."""
    from pyjax._src.primitives.shape import broadcast_in_dim
    which, *cases = vals
    which_dim, *case_dims = dims
    size = next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not None)
    case_shape = np.shape(cases[0])
    if all(d == which_dim for d in case_dims):
        if np.shape(which) != case_shape:  # a per-example scalar `which`
            which = broadcast_in_dim(which, case_shape, [which_dim])
        return select_n(which, *cases), which_dim
    if np.ndim(which) == 0 and all(d is not None for d in case_dims):
        if all(d == case_dims[0] for d in case_dims[1:]):
            return select_n(which, *cases), case_dims[0]
        if all(np.shape(c) == case_shape for c in cases):
            dim = case_dims[0]
            return select_n(which, cases[0], *[batching.move_axis(c, d, dim) for c, d in
                                               zip(cases[1:], case_dims[1:])]), dim
    if np.shape(which):
        which = batching.bdim_at_front(which, which_dim, size)
    if not all(np.shape(c) == () for c in cases):
        cases = [batching.bdim_at_front(c, d, size) for c, d in zip(cases, case_dims)]
    case_shape = np.shape(cases[0])
    if 0 < np.ndim(which) < len(case_shape):
        which = broadcast_in_dim(which, case_shape, [0])
    if np.ndim(which) > len(case_shape):
        cases = [broadcast_in_dim(c, np.shape(which), ()) for c in cases]
    return select_n(which, *cases), 0


select_n_p.jvp = _select_n_jvp
select_n_p.transpose = _select_n_transpose
select_n_p.batch = _select_n_batch
select_n_p.sharding_rule = propagation.elementwise


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
# The derivative goes to whichever of min, x, max is the result (to x at neither bound; a
# bound's rank-0 tangent is broadcast, where JAX's select_n would reject it).
ad.defjvp(clamp_p,
          lambda g, lo, x, hi: select(bitwise_and(gt(lo, x), lt(lo, hi)),
                                      _maybe_broadcast(np.shape(x), g), _zeros(x)),
          lambda g, lo, x, hi: select(bitwise_and(gt(x, lo), lt(x, hi)), g, _zeros(x)),
          lambda g, lo, x, hi: select(lt(hi, x), _maybe_broadcast(np.shape(x), g), _zeros(x)))


def _clamp_batch(vals: Any, dims: Any) -> tuple:
    """JAX's rule: no moves when all three share a batch axis or the bounds are unbatched
    scalars; otherwise batch axes go to the front and bounds are broadcast to x's shape."""
    from pyjax._src.primitives.shape import broadcast, broadcast_in_dim
    lo, x, hi = vals
    lo_dim, x_dim, hi_dim = dims
    size = next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not None)
    if lo_dim == x_dim == hi_dim:
        if np.shape(lo) == np.shape(x) == np.shape(hi) or np.ndim(lo) == np.ndim(hi) == 0:
            return clamp(lo, x, hi), x_dim
        if np.ndim(lo) == np.ndim(hi) == 1:  # per-example scalar bounds
            lo = broadcast_in_dim(lo, np.shape(x), [lo_dim])
            hi = broadcast_in_dim(hi, np.shape(x), [hi_dim])
            return clamp(lo, x, hi), x_dim
    elif np.ndim(lo) == 0 and np.ndim(hi) == 0 and x_dim is not None:
        return clamp(lo, x, hi), x_dim
    lo = batching.bdim_at_front(lo, lo_dim, size) if np.shape(lo) else lo
    hi = batching.bdim_at_front(hi, hi_dim, size) if np.shape(hi) else hi
    x = batching.bdim_at_front(x, x_dim, size) if np.shape(x) else x
    if np.ndim(lo) == 0 and np.ndim(x) > 0:
        lo = broadcast(lo, np.shape(x))
    if np.ndim(hi) == 0 and np.ndim(x) > 0:
        hi = broadcast(hi, np.shape(x))
    if 0 < np.ndim(lo) < np.ndim(x):
        lo = broadcast_in_dim(lo, np.shape(x), [0])
    if 0 < np.ndim(hi) < np.ndim(x):
        hi = broadcast_in_dim(hi, np.shape(x), [0])
    if np.ndim(lo) > np.ndim(x):  # a per-example scalar x between batched bounds
        x = broadcast(x, np.shape(lo))
    if np.ndim(hi) > np.ndim(x):  # ... or under a batched upper bound only (JAX raises here)
        x = broadcast(x, np.shape(hi))
    return clamp(lo, x, hi), 0


clamp_p.batch = _clamp_batch
clamp_p.sharding_rule = propagation.elementwise


def _casts_exactly(x: np.ndarray, new_dtype: np.dtype) -> bool:
    """Whether every value of the float array x is finite and truncates into new_dtype's range
    (then a plain cast is exact; NaN fails both comparisons)."""
    bounds = _INT_BOUNDS.get(new_dtype)
    if bounds is None:
        if new_dtype.kind not in "iu":  # int4 and friends: the general path
            return False
        info = np.iinfo(new_dtype)
        bounds = _INT_BOUNDS[new_dtype] = (float(info.min), float(info.max))
    return bounds[0] <= float(x.min()) and float(x.max()) < bounds[1]


#: (min, max) as floats of the NumPy integer dtypes, filled on first use
_INT_BOUNDS: dict = {}


#: integer targets whose float casts NumPy does in one instruction (cvttss2si and kin), which
#: answers the type's minimum for NaN and out-of-range values
_SENTINEL_CASTS = {np.dtype(np.int32): np.iinfo(np.int32).min,
                   np.dtype(np.int64): np.iinfo(np.int64).min}


def _convert_impl(x: np.ndarray, *, new_dtype: np.dtype, weak_type: bool = False,
                  sharding: Any = None) -> np.ndarray:
    if x.dtype == new_dtype:
        return x
    if dtypes.is_integer(new_dtype) and dtypes.is_inexact(x.dtype):
        # XLA saturates out-of-range floats and sends NaN to 0
        if x.dtype.kind == "f" and new_dtype in _SENTINEL_CASTS:
            # the CPU's truncating cast gives the type's minimum for NaN and out-of-range
            # values (a saturating CPU gives XLA's answer outright): a cast without that
            # value is exact, as NumPy's cast truncates toward zero as trunc does
            with ignore_fp_errors():
                out = x.astype(new_dtype)
            if out.size == 0 or out.min() != _SENTINEL_CASTS[new_dtype]:
                return out
        elif x.dtype.kind == "f" and x.size and _casts_exactly(x, new_dtype):
            return x.astype(new_dtype)  # NumPy's cast truncates toward zero, as trunc does
        info = np.iinfo(new_dtype) if new_dtype in (np.int8, np.int16, np.int32, np.int64,
                                                    np.uint8, np.uint16, np.uint32,
                                                    np.uint64) else dtypes.iinfo(new_dtype)
        real = np.real(x) if dtypes.is_complex(x.dtype) else x
        top = float(info.max)
        with ignore_fp_errors():
            real = np.nan_to_num(real.astype(np.float64), nan=0.0)
            real = np.clip(np.trunc(real), float(info.min), top)
            out = real.astype(new_dtype)
        if top > info.max:  # 64-bit targets: float(max) rounds up to 2**63 / 2**64
            out = np.where(real >= top, np.asarray(info.max, new_dtype), out)
        return out
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
        x = np.real(x)
    with ignore_fp_errors():
        return x.astype(new_dtype)


def _convert_abstract(x: ShapedArray, *, new_dtype: np.dtype, weak_type: bool = False,
                      sharding: Any = None) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_specialize(x: ShapedArray, *, new_dtype: np.dtype, weak_type: bool = False,
                        sharding: Any = None) -> Any:
    """_convert_impl between dtypes of NumPy's own, for eager plans: between bools and
    integers, the plain cast; from them, or a float, to a float or complex, the cast with
    NumPy's warnings off (an int64 overflows float16); a float to int32/int64 checked for the
    CPU's sentinel as _convert_impl checks it."""
    source, new_dtype = x.dtype, np.dtype(new_dtype)
    if source == new_dtype or source.isbuiltin != 1 or new_dtype.isbuiltin != 1:
        return None
    cast = functools.partial(np.ndarray.astype, dtype=new_dtype)
    if source.kind in "biu" and new_dtype.kind in "biu":
        return exact(cast)
    if source.kind in "biuf" and new_dtype.kind in "fc":
        return exact(quietly(cast))
    if source.kind != "f" or new_dtype not in _SENTINEL_CASTS or not x.size:
        return None
    sentinel, quiet = _SENTINEL_CASTS[new_dtype], quietly(cast)

    def special(b: np.ndarray) -> np.ndarray:
        out = quiet(b)  # (argmin and item: the minimum without ndarray.min's Python layers)
        if out.item(out.argmin()) != sentinel:
            return out
        return _convert_impl(b, new_dtype=new_dtype)
    return exact(special)


convert_element_type_p = make_primitive("convert_element_type", _convert_impl, _convert_abstract)
convert_element_type_p.specialize = _convert_specialize


def _convert(x: Any, new_dtype: np.dtype, weak_type: bool, **params: Any) -> Any:
    """convert_element_type_p as JAX stages it: nothing when x already has the type (JAX
    forwards such converts), rank-0 constants folded at once (JAX's folding rule)."""
    dtype, weak = dtypes.dtype_and_weak(x)
    if dtype == new_dtype and weak == weak_type:
        return x
    if not isinstance(x, Tracer) and not np.shape(x):
        return convert_element_type(x, new_dtype, weak_type)
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type, **params)


def _convert_jvp(g: Any, ans: Any, x: Any, *, new_dtype: np.dtype, weak_type: bool = False,
                 **params: Any) -> Any:
    """Linear for inexact targets; integer and boolean results have float0 (zero) tangents."""
    tangent_dtype = ad.tangent_aval(ShapedArray((), new_dtype)).dtype
    if tangent_dtype == dtypes.float0:
        return ad.Zero.like(ans)
    return _convert(g, tangent_dtype, weak_type, **params)


def _convert_transpose(ct: Any, x: Any, *, new_dtype: np.dtype, weak_type: bool = False,
                       **params: Any) -> list:
    """Convert the cotangent back to the operand's dtype (and weak type)."""
    aval = x.aval
    if type(ct) is ad.Zero or not dtypes.is_inexact(aval.dtype):
        return [ad.Zero(ad.tangent_aval(aval))]
    return [_convert(ct, aval.dtype, aval.weak_type, **params)]


def _convert_fold(x: Any, *, new_dtype: np.dtype, weak_type: bool = False, **params: Any
                  ) -> list | None:
    """A rank-0 constant converts at once when a jaxpr is inlined (JAX's folding rule)."""
    if isinstance(x, Tracer) or np.shape(x):
        return None
    return convert_element_type(x, new_dtype, weak_type)


ad.defjvp2(convert_element_type_p, _convert_jvp)
convert_element_type_p.transpose = _convert_transpose
convert_element_type_p.const_fold = _convert_fold
convert_element_type_p.foldable = True
convert_element_type_p.sharding_rule = propagation.elementwise
# the batch axis passes through (JAX binds the primitive as it is, even for no-op converts)
convert_element_type_p.batch = lambda vals, dims, **params: (
    convert_element_type_p.bind(*vals, **params), dims[0])


# ---------------------------------------------------------------------------------------------
# lax-level functions
# ---------------------------------------------------------------------------------------------

def _binary(prim: Primitive) -> Callable[[Any, Any], Any]:
    def fn(x: Any, y: Any) -> Any:
        return prim.bind(x, y)
    fn.__name__ = fn.__qualname__ = prim.name  # printed in params (lax.reduce's computation)
    fn.__doc__ = f"Elementwise `{prim.name}` of two arrays of one shape and dtype."
    return fn


def _unary(prim: Primitive) -> Callable[[Any], Any]:
    def fn(x: Any) -> Any:
        return prim.bind(x)
    fn.__name__ = fn.__qualname__ = prim.name
    fn.__doc__ = f"Elementwise `{prim.name}`."
    return fn


add, sub, mul, div, rem, pow, max, min = map(  # noqa: A001 - lax's names
    _binary, (add_p, sub_p, mul_p, div_p, rem_p, pow_p, max_p, min_p))
atan2, nextafter = _binary(atan2_p), _binary(nextafter_p)
polygamma = _binary(polygamma_p)
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
    if not cases:
        raise ValueError("select_n() must have at least one case")
    return select_n_p.bind(which, *cases)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    return select_n_p.bind(pred, on_false, on_true)


def clamp(min: Any, x: Any, max: Any) -> Any:  # noqa: A002
    """min <= x <= max elementwise."""
    return clamp_p.bind(min, x, max)


def convert_element_type(operand: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    """Cast to `new_dtype`.  Constants are converted at once (JAX folds them while tracing)."""
    if isinstance(new_dtype, dtypes.ExtendedDType) or isinstance(
            getattr(operand, "dtype", None), dtypes.ExtendedDType):
        return _convert_extended(operand, new_dtype)
    new_dtype = dtypes.check_user_dtype(new_dtype, "convert_element_type")
    if isinstance(operand, Tracer) or (isinstance(operand, ArrayImpl) and (  # (or pending)
            trace_state.trace is not None and not operand.made_in_trace()
            or primitive.eager_layout is not None and primitive.lays_out(operand))):
        # a tracer, or an Array closed over by a traced function (a constvar: JAX stages
        # its conversion); Python and NumPy constants are converted at once
        if operand.aval.dtype == new_dtype and operand.aval.weak_type == weak_type:
            return operand
        return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=bool(weak_type))
    buf, weak = to_buffer(operand)
    if buf.dtype == new_dtype and weak == weak_type and type(operand) is ArrayImpl:
        return operand
    if type(operand) is ArrayImpl:  # an XLA computation in JAX: subnormals flushed
        out = run_flushing(_convert_impl_to, buf, new_dtype)
    else:  # a Python or NumPy constant, which JAX converts in NumPy
        out = detach(np.asarray(_convert_impl(buf, new_dtype=new_dtype)), (operand,), False)
    return weak_constant(operand, out, bool(weak_type))  # never a view of a caller's array


def _convert_extended(operand: Any, new_dtype: Any) -> Any:
    """A conversion to or from a key dtype: none but to its own dtype (JAX's KeyTyRules allow
    no conversion; key data comes and goes through random.key_data / wrap_key_data)."""
    old_dtype = dtypes.dtype_and_weak(operand)[0]
    if not isinstance(new_dtype, dtypes.ExtendedDType):
        new_dtype = dtypes.check_user_dtype(new_dtype, "convert_element_type")
    if new_dtype == old_dtype:
        return operand
    raise ValueError(f"Cannot convert_element_type from {old_dtype.name} to {new_dtype.name}")


def _convert_impl_to(buf: np.ndarray, new_dtype: np.dtype) -> np.ndarray:
    return np.asarray(_convert_impl(buf, new_dtype=new_dtype))


