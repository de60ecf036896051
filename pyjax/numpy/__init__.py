"""pyjax.numpy: NumPy's API on pyjax arrays (re-exports only)."""
import numpy as _np

from pyjax._src.core.array import Array as ndarray  # noqa: F401
from pyjax._src.core.dtypes import (  # noqa: F401
    finfo, float0, iinfo, issubdtype, promote_types, result_type)
from pyjax._src.numpy.lax_numpy import (  # noqa: F401
    arange, array, asarray, astype, atleast_1d, atleast_2d, atleast_3d, broadcast_arrays,
    broadcast_shapes, broadcast_to, column_stack, concatenate, dot, e, empty, empty_like,
    euler_gamma, expand_dims, eye, flatnonzero, full, full_like, hstack, identity, inf, inner,
    linspace, matmul, matrix_transpose, moveaxis, nan, ndim, newaxis, nonzero, ones, ones_like,
    outer, permute_dims, pi, ravel, reshape, shape, size, squeeze, stack, swapaxes, tensordot,
    transpose, vdot, vstack, zeros, zeros_like)
from pyjax._src.numpy.reductions import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, max, mean, min, prod, std, sum, var)
from pyjax._src.numpy.scalar_types import SCALAR_TYPES as _SCALAR_TYPES
from pyjax._src.numpy.ufuncs import (  # noqa: F401
    abs, absolute, acos, acosh, add, arccos, arccosh, arcsin, arcsinh, arctan, arctan2,
    arctanh, around, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_invert, bitwise_not,
    bitwise_or, bitwise_xor, cbrt, ceil, clip, cos, cosh, deg2rad, degrees, divide, divmod,
    equal, exp, exp2, expm1, fix, float_power, floor, floor_divide, fmax, fmin, fmod, greater,
    greater_equal, hypot, invert, isfinite, isinf, isnan, left_shift, less, less_equal, log,
    log1p, log2, log10, logaddexp, logical_and, logical_not, logical_or, logical_xor, maximum,
    minimum, mod, multiply, negative, not_equal, positive, power, rad2deg, radians,
    reciprocal, remainder, right_shift, rint, round, sign, sin, sinc, sinh, sqrt, square,
    subtract, tan, tanh, true_divide, trunc, where)

globals().update(_SCALAR_TYPES)
dtype = _np.dtype
generic, number, integer, signedinteger, unsignedinteger = (
    _np.generic, _np.number, _np.integer, _np.signedinteger, _np.unsignedinteger)
inexact, floating, complexfloating = _np.inexact, _np.floating, _np.complexfloating
