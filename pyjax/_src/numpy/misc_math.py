"""jnp numeric odds and ends: angle, frexp/ldexp, gcd/lcm, nan_to_num, bit packing, shifts,
vecdot/matvec/vecmat, einsum_path, and dtype/object predicates (isdtype, isscalar, ...).

Each function follows JAX 0.10's recipe (which lax ops, in which order, which are jitted), so
traced programs print the same jaxprs as JAX's.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.array import Array
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import ufuncs
from pyjax._src.numpy import util
from pyjax._src.numpy.util import (
    check_arraylike, lax_const, promote_args_numeric, promote_dtypes, promote_dtypes_inexact,
    staged_as_jit)
from pyjax._src.numpy.vectorize import vectorize
from pyjax._src.primitives import elementwise as lax
from pyjax._src.primitives import extra as lax_extra
from pyjax._src.primitives import shape as shp
from pyjax._src.transforms.custom_derivatives import custom_jvp


def _ensure(name: str, *args: Any) -> Any:
    check_arraylike(name, *args)
    out = [util.as_operand(a) for a in args]
    return out[0] if len(out) == 1 else out


# ---------------------------------------------------------------------------------------------
# Complex-number predicates and angle
# ---------------------------------------------------------------------------------------------

@staged_as_jit
def iscomplex(x: Any) -> Any:
    """Elementwise: whether the imaginary part is non-zero."""
    i = ufuncs.imag(x)
    return lax.ne(i, lax_const(i, 0))


@staged_as_jit
def isreal(x: Any) -> Any:
    """Elementwise: whether the imaginary part is zero."""
    i = ufuncs.imag(x)
    return lax.eq(i, lax_const(i, 0))


def isrealobj(x: Any) -> bool:
    """Whether x does not have a complex dtype."""
    return not ufuncs.iscomplexobj(x)


@staged_as_jit(static_argnames=("deg",))
def angle(z: Any, deg: bool = False) -> Any:
    """The argument of complex z (in degrees when deg)."""
    z = _ensure("angle", z)
    re, im = ufuncs.real(z), ufuncs.imag(z)
    dtype = np.dtype(re.dtype)
    if not dtypes.issubdtype(dtype, np.inexact) or (
            dtypes.issubdtype(z.dtype, np.floating) and np.ndim(z) == 0):
        dtype = dtypes.default_float_dtype()
        re = lax.convert_element_type(re, dtype)
        im = lax.convert_element_type(im, dtype)
    result = lax.atan2(im, re)
    return ufuncs.degrees(result) if deg else result


# ---------------------------------------------------------------------------------------------
# frexp / ldexp
# ---------------------------------------------------------------------------------------------

_INT_OF_BITS = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def _normalize_float(x: Any) -> tuple[Any, Any]:
    """x's bits as an integer, subnormals scaled into the normal range (with their shift)."""
    info = dtypes.finfo(x.dtype)
    int_type = _INT_OF_BITS[info.bits]
    cond = lax.abs(x) < info.tiny
    x1 = ufuncs._where(cond, x * lax_const(x, 1 << info.nmant), x)
    x2 = ufuncs._where(cond, int_type(-info.nmant), int_type(0))
    return lax_extra.bitcast_convert_type(x1, int_type), x2


@custom_jvp
def _frexp(x: Any) -> tuple[Any, Any]:
    dtype = np.dtype(x.dtype)
    info = dtypes.finfo(dtype)
    mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    x1, x2 = _normalize_float(x)
    x2 += ((x1 >> info.nmant) & mask) - bias + 1
    x1 &= ~(mask << info.nmant)
    x1 |= (bias - 1) << info.nmant
    x1 = lax_extra.bitcast_convert_type(x1, dtype)
    cond = ufuncs.isinf(x) | ufuncs.isnan(x) | (x == 0)
    x2 = ufuncs._where(cond, lax_extra.full_like(x2, 0), x2)
    return ufuncs._where(cond, x, x1), lax.convert_element_type(x2, np.int32)


@_frexp.defjvp
def _frexp_jvp(primals: Any, tangents: Any) -> tuple:
    (x,), (t,) = primals, tangents
    m, e = frexp(x)
    mdot = t * ufuncs.exp2(-e.astype(t.dtype))
    edot = np.zeros(np.shape(e), dtypes.float0)  # integer outputs' tangents are float0 zeros
    return (m, e), (mdot, edot)


@staged_as_jit
def frexp(x: Any, /) -> tuple[Any, Any]:
    """Mantissa in [0.5, 1) and integer exponent with x = m * 2**e."""
    x = _ensure("frexp", x)
    x, = promote_dtypes_inexact(x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise TypeError("frexp does not support complex-valued inputs")
    return _frexp(x)


@staged_as_jit
def ldexp(x1: Any, x2: Any, /) -> Any:
    """x1 * 2**x2, without overflow in the intermediate power."""
    x1, x2 = _ensure("ldexp", x1, x2)
    d1, d2 = np.dtype(x1.dtype), np.dtype(x2.dtype)
    if dtypes.issubdtype(d1, np.complexfloating) or dtypes.issubdtype(d2, np.inexact):
        raise ValueError(f"ldexp not supported for input types {(d1, d2)}")
    x1, = util.promote_args_inexact("ldexp", x1)
    x2 = lax.convert_element_type(x2, x1.dtype)
    m, e = frexp(x1)
    e = (e.astype(x2.dtype) + x2).astype(x1.dtype)
    m = ufuncs._where(e > 0, m * 2, m)
    e = ufuncs._where(e > 0, e - 1, e)
    x = m * (2 ** e.astype(m.dtype))
    return ufuncs._where(ufuncs.isinf(x1) | (x1 == 0), x1, x)


# ---------------------------------------------------------------------------------------------
# gcd / lcm
# ---------------------------------------------------------------------------------------------

def _gcd_cond_fn(xs: tuple[Any, Any]) -> Any:
    from pyjax._src.numpy import reductions
    return reductions.any(xs[1] != 0)


def _gcd_body_fn(xs: tuple[Any, Any]) -> tuple[Any, Any]:
    x1, x2 = xs
    x1, x2 = (ufuncs._where(x2 != 0, x2, x1),
              ufuncs._where(x2 != 0, lax.rem(x1, x2), lax_const(x2, 0)))
    return ufuncs._where(x1 < x2, x2, x1), ufuncs._where(x1 < x2, x1, x2)


@staged_as_jit
def gcd(x1: Any, x2: Any) -> Any:
    """Elementwise greatest common divisor (Euclid's algorithm in a while_loop)."""
    from pyjax._src.primitives.control_flow import while_loop
    x1, x2 = _ensure("gcd", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    if not dtypes.issubdtype(x1.dtype, np.integer):
        raise ValueError("Arguments to jax.numpy.gcd must be integers.")
    x1, x2 = lnp.broadcast_arrays(x1, x2)
    out, _ = while_loop(_gcd_cond_fn, _gcd_body_fn, (ufuncs.abs(x1), ufuncs.abs(x2)))
    return out


@staged_as_jit
def lcm(x1: Any, x2: Any) -> Any:
    """Elementwise least common multiple."""
    x1, x2 = _ensure("lcm", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    x1, x2 = ufuncs.abs(x1), ufuncs.abs(x2)
    if not dtypes.issubdtype(x1.dtype, np.integer):
        raise ValueError("Arguments to jax.numpy.lcm must be integers.")
    d = gcd(x1, x2)
    return ufuncs._where(d == 0, lax_const(d, 0),
                         ufuncs.multiply(x1, ufuncs.floor_divide(x2, d)))


# ---------------------------------------------------------------------------------------------
# nan_to_num
# ---------------------------------------------------------------------------------------------

@staged_as_jit
def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """x with NaN, +inf and -inf replaced by finite numbers."""
    del copy
    x = _ensure("nan_to_num", x)
    dtype = np.dtype(x.dtype)
    if not dtypes.issubdtype(dtype, np.inexact):
        return x
    if dtypes.issubdtype(dtype, np.complexfloating):
        return lax.complex(
            nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
            nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = dtypes.finfo(dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = ufuncs.where(ufuncs.isnan(x), lnp.asarray(nan, dtype=dtype), x)
    out = ufuncs.where(ufuncs.isposinf(out), lnp.asarray(posinf, dtype=dtype), out)
    return ufuncs.where(ufuncs.isneginf(out), lnp.asarray(neginf, dtype=dtype), out)


# ---------------------------------------------------------------------------------------------
# Shifts and bit packing
# ---------------------------------------------------------------------------------------------

def bitwise_left_shift(x: Any, y: Any, /) -> Any:
    """x << y (the array-API name of left_shift)."""
    return lax.shift_left(*promote_args_numeric("bitwise_left_shift", x, y))


def bitwise_right_shift(x1: Any, x2: Any, /) -> Any:
    """x1 >> x2 (the array-API name of right_shift)."""
    return ufuncs.right_shift(x1, x2)


@staged_as_jit(static_argnames=("axis", "bitorder"))
def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    """Pack the truthiness of elements into the bits of uint8 values."""
    arr = _ensure("packbits", a)
    if not (dtypes.issubdtype(arr.dtype, np.integer) or
            dtypes.issubdtype(arr.dtype, np.bool_)):
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    arr = lax.ne(arr, lax_const(arr, 0)).astype("uint8")
    bits = lnp.arange(8, dtype="uint8")
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr = lnp.ravel(arr)
        axis = 0
    arr = lnp.swapaxes(arr, axis, -1)
    remainder = np.shape(arr)[-1] % 8
    if remainder:
        arr = shp.pad(arr, np.uint8(0), (np.ndim(arr) - 1) * [(0, 0, 0)]
                      + [(0, 8 - remainder, 0)])
    arr = arr.reshape(np.shape(arr)[:-1] + (np.shape(arr)[-1] // 8, 8))
    bits = lnp.expand_dims(bits, tuple(range(np.ndim(arr) - 1)))
    packed = (arr << bits).sum(-1).astype("uint8")
    return lnp.swapaxes(packed, axis, -1)


@staged_as_jit(static_argnames=("axis", "count", "bitorder"))
def unpackbits(a: Any, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Any:
    """The bits of uint8 values as an array of 0/1 uint8 values."""
    from pyjax._src.numpy.manipulation import pad
    arr = _ensure("unpackbits", a)
    if np.dtype(arr.dtype) != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = lnp.asarray(1) << lnp.arange(8, dtype="uint8")
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr = lnp.ravel(arr)
        axis = 0
    arr = lnp.swapaxes(arr, axis, -1)
    unpacked = ((arr[..., None] & lnp.expand_dims(bits, tuple(range(np.ndim(arr))))) > 0
                ).astype("uint8")
    unpacked = unpacked.reshape(np.shape(unpacked)[:-2] + (-1,))
    if count is not None:
        n = np.shape(unpacked)[-1]
        if count > n:
            unpacked = pad(unpacked, [(0, 0)] * (np.ndim(unpacked) - 1) + [(0, count - n)])
        else:
            unpacked = unpacked[..., :count]
    return lnp.swapaxes(unpacked, axis, -1)


# ---------------------------------------------------------------------------------------------
# vecdot / matvec / vecmat / einsum_path
# ---------------------------------------------------------------------------------------------

def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Conjugated dot products of vectors along axis, broadcast over the other axes."""
    x1, x2 = _ensure("jnp.vecdot", x1, x2)
    if np.shape(x1)[axis] != np.shape(x2)[axis]:
        raise ValueError(f"axes must match; got shapes {tuple(np.shape(x1))} and "
                         f"{tuple(np.shape(x2))} with axis={axis}")
    x1, x2 = lnp.moveaxis(x1, axis, -1), lnp.moveaxis(x2, axis, -1)
    fn = functools.partial(lnp.vdot, precision=precision,
                           preferred_element_type=preferred_element_type)
    return vectorize(fn, signature="(n),(n)->()")(x1, x2)


@staged_as_jit
def matvec(x1: Any, x2: Any, /) -> Any:
    """Batched matrix-vector products."""
    x1, x2 = _ensure("matvec", x1, x2)
    return vectorize(lnp.matmul, signature="(n,m),(m)->(n)")(x1, x2)


@staged_as_jit
def vecmat(x1: Any, x2: Any, /) -> Any:
    """Batched (conjugated) vector-matrix products."""
    x1, x2 = _ensure("matvec", x1, x2)
    return vectorize(lnp.matmul, signature="(n),(n,m)->(m)")(ufuncs.conj(x1), x2)


def einsum_path(subscripts: Any, /, *operands: Any,
                optimize: bool | str | list = "auto") -> tuple[list, Any]:
    """opt_einsum's contraction order (and its report) for an einsum."""
    if isinstance(optimize, bool):
        optimize = "optimal" if optimize else lnp.unoptimized_path()
    import opt_einsum  # noqa: PLC0415 - loads on first use (import time)
    return opt_einsum.contract_path(subscripts, *operands, optimize=optimize)


# ---------------------------------------------------------------------------------------------
# dtype and object predicates
# ---------------------------------------------------------------------------------------------

can_cast = np.can_cast


def isscalar(element: Any) -> bool:
    """Whether element is a scalar: a NumPy/Python scalar or any 0-d array."""
    if np.isscalar(element):
        return True
    if isinstance(element, (np.ndarray, Array)):
        return element.ndim == 0
    if getattr(element, "__jax_array__", None) is not None:
        return lnp.asarray(element).ndim == 0
    return False


def _dtype_kinds() -> dict[str, set]:
    signed = {d for d in dtypes.supported_dtypes if dtypes.issubdtype(d, np.signedinteger)}
    unsigned = {d for d in dtypes.supported_dtypes
                if dtypes.issubdtype(d, np.unsignedinteger)}
    floating = {d for d in dtypes.supported_dtypes if dtypes.is_float(d)}
    complexes = {d for d in dtypes.supported_dtypes if dtypes.is_complex(d)}
    return {
        "bool": {dtypes.bool_}, "signed integer": signed, "unsigned integer": unsigned,
        "integral": signed | unsigned, "real floating": floating,
        "complex floating": complexes, "numeric": signed | unsigned | floating | complexes,
    }


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether dtype is of the array-API kind(s) given (names like 'integral', or dtypes)."""
    the_dtype = np.dtype(dtype)
    kinds = _dtype_kinds()
    options: set = set()
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str) and k in kinds:
            options.update(kinds[k])
            continue
        try:
            options.add(np.dtype(k))
        except TypeError as e:
            if isinstance(k, str):
                raise ValueError(f"Unrecognized kind={k!r} expected one of {list(kinds)}, or a "
                                 "compatible input for jnp.dtype()") from None
            raise TypeError(f"Expected kind to be a dtype, string, or tuple; got kind={k!r}"
                            ) from e
    return the_dtype in options


# ---------------------------------------------------------------------------------------------
# Print options (NumPy's, which Array printing uses)
# ---------------------------------------------------------------------------------------------

def get_printoptions() -> dict[str, Any]:
    """NumPy's current print options (used when Arrays are printed)."""
    return np.get_printoptions()


def printoptions(*args: Any, **kwargs: Any) -> Any:
    """Context manager setting NumPy's print options."""
    return np.printoptions(*args, **kwargs)


def set_printoptions(*args: Any, **kwargs: Any) -> None:
    """Set NumPy's print options."""
    return np.set_printoptions(*args, **kwargs)
