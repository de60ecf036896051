"""pyjax.numpy: NumPy's API on pyjax arrays (re-exports only)."""
import numpy as _np

from pyjax._src.core.array import Array as ndarray  # noqa: F401
from pyjax._src.core.dtypes import (  # noqa: F401
    finfo, float0, iinfo, issubdtype, promote_types, result_type)
from pyjax._src.numpy.lax_numpy import (  # noqa: F401
    arange, argsort, array, array_split, asarray, astype, atleast_1d, atleast_2d, atleast_3d,
    broadcast_arrays, broadcast_shapes, broadcast_to, column_stack, concatenate, copy, dot,
    dstack, e, einsum, empty, empty_like, euler_gamma, expand_dims, eye, flatnonzero, flip,
    fliplr, flipud, full, full_like, hstack, identity, inf, inner, iscomplexobj, linspace,
    matmul, matrix_transpose, moveaxis, nan, ndim, newaxis, nonzero, ones, ones_like, outer,
    permute_dims, pi, ravel, repeat, reshape, roll, shape, size, sort, split, squeeze, stack,
    swapaxes, tensordot, tile, transpose, tri, tril, triu, vdot, vstack, zeros, zeros_like)
from pyjax._src.numpy.reductions import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, count_nonzero, cumprod, cumsum, max, mean, min,
    nancumprod, nancumsum, prod, ptp, std, sum, var)
from pyjax._src.numpy.scalar_types import SCALAR_TYPES as _SCALAR_TYPES
from pyjax._src.numpy.ufuncs import (  # noqa: F401
    abs, absolute, acos, acosh, add, arccos, arccosh, arcsin, arcsinh, arctan, arctan2,
    arctanh, around, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_count,
    bitwise_invert, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clip, conj, conjugate,
    copysign, cos, cosh, deg2rad, degrees, divide, divmod, equal, exp, exp2, expm1, fabs,
    float_power, floor, floor_divide, fmax, fmin, fmod, greater, greater_equal, heaviside,
    hypot, imag, invert, isfinite, isinf, isnan, isneginf, isposinf, left_shift, less,
    less_equal, log, log1p, log2, log10, logaddexp, logaddexp2, logical_and, logical_not,
    logical_or, logical_xor, maximum, minimum, mod, modf, multiply, negative, nextafter,
    not_equal, positive, pow, power, rad2deg, radians, real, reciprocal, remainder, right_shift,
    rint, round, sign, signbit, sin, sinc, sinh, spacing, sqrt, square, subtract, tan,
    tanh, true_divide, trunc, where)

globals().update(_SCALAR_TYPES)
dtype = _np.dtype
generic, number, integer, signedinteger, unsignedinteger = (
    _np.generic, _np.number, _np.integer, _np.signedinteger, _np.unsignedinteger)
inexact, floating, complexfloating = _np.inexact, _np.floating, _np.complexfloating
from pyjax._src.numpy.indexing import take, take_along_axis  # noqa: F401,E402
from pyjax._src.numpy.reductions import allclose, array_equal, isclose  # noqa: F401,E402
from pyjax._src.numpy.lax_numpy import diag, diagonal  # noqa: F401,E402
