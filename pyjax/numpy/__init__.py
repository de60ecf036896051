"""pyjax.numpy: NumPy's API on pyjax arrays (re-exports only; the less common parts load on
first use)."""
import numpy as _np

from pyjax._src import lazy_loader as _lazy

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
    abs, absolute, acos, acosh, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh,
    around, asin, asinh, atan, atan2, atanh, bitwise_count, bitwise_invert, bitwise_not, cbrt,
    ceil, clip, conj, conjugate, copysign, cos, cosh, deg2rad, degrees, divide, divmod, equal,
    exp, exp2, expm1, fabs, float_power, floor, floor_divide, fmax, fmin, fmod, greater,
    greater_equal, heaviside, hypot, imag, invert, isfinite, isinf, isnan, isneginf, isposinf,
    left_shift, less, less_equal, log, log1p, log2, log10, logical_not, mod, modf, nextafter,
    not_equal, positive, pow, power, rad2deg, radians, real, reciprocal, remainder, right_shift,
    rint, round, sign, signbit, sin, sinc, sinh, spacing, sqrt, square, tan, tanh, true_divide,
    trunc, where)

globals().update(_SCALAR_TYPES)
dtype = _np.dtype
generic, number, integer, signedinteger, unsignedinteger = (
    _np.generic, _np.number, _np.integer, _np.signedinteger, _np.unsignedinteger)
inexact, floating, complexfloating = _np.inexact, _np.floating, _np.complexfloating
from pyjax._src.numpy.indexing import take, take_along_axis  # noqa: F401,E402
from pyjax._src.numpy.reductions import (  # noqa: F401,E402
    allclose, array_equal, array_equiv, isclose)
from pyjax._src.numpy.lax_numpy import diag, diagonal  # noqa: F401,E402
from numpy import (  # noqa: F401,E402
    array_repr, array_str, character, flexible, iterable, object_)
from numpy.exceptions import ComplexWarning  # noqa: F401,E402
from pyjax._src.numpy.array_api_metadata import (  # noqa: F401,E402
    __array_api_version__, __array_namespace_info__)

# -- the rest loads on first use (issue 16: a fast `import`): defining module (under
# pyjax/_src/numpy/) -> the names it gives `jnp`; `jnp.fft` and `jnp.linalg` are lazy submodules
_LAZY_MODULES = {
    # sorting/searching, index tricks, manipulation, vectorize
    "sorting": "argpartition argwhere compress extract lexsort partition searchsorted sort_complex",
    "index_tricks": (
        "c_ choose diag_indices diag_indices_from fill_diagonal index_exp indices ix_ "
        "mask_indices mgrid ogrid piecewise place put put_along_axis r_ ravel_multi_index s_ "
        "select tril_indices tril_indices_from triu_indices triu_indices_from unravel_index"),
    "manipulation": (
        "append apply_along_axis apply_over_axes block concat cross delete diagflat dsplit hsplit "
        "insert kron meshgrid pad resize rollaxis rot90 trace unstack vsplit"),
    "vectorize": "vectorize",
    # polynomials and signal processing
    "polynomial": (
        "poly polyadd polyder polydiv polyfit polyint polymul polysub polyval roots trim_zeros "
        "vander"),
    "signal": (
        "bartlett blackman convolve correlate diff ediff1d gradient hamming hanning i0 interp "
        "kaiser trapezoid unwrap"),
    # statistics and NaN-ignoring reductions
    "nan_reductions": "nanargmax nanargmin nanmax nanmean nanmin nanprod nanstd nansum nanvar",
    "statistics": (
        "average bincount corrcoef cov cumulative_prod cumulative_sum median nanmedian "
        "nanpercentile nanquantile percentile quantile digitize histogram histogram2d "
        "histogram_bin_edges histogramdd"),
    # set operations
    "setops": (
        "intersect1d isin setdiff1d setxor1d union1d unique unique_all unique_counts "
        "unique_inverse unique_values"),
    # creation from files, buffers and functions
    "creation": (
        "from_dlpack frombuffer fromfile fromfunction fromiter fromstring geomspace load logspace "
        "save savez"),
    # ufunc objects (they stand for the plain functions of ufuncs.py: jnp.add is a ufunc)
    "ufunc_api": (
        "add bitwise_and bitwise_or bitwise_xor frompyfunc logaddexp logaddexp2 logical_and "
        "logical_or logical_xor maximum minimum multiply negative subtract ufunc"),
    # miscellaneous math
    "misc_math": (
        "angle bitwise_left_shift bitwise_right_shift can_cast einsum_path frexp gcd "
        "get_printoptions iscomplex isdtype isreal isrealobj isscalar lcm ldexp matvec nan_to_num "
        "packbits printoptions set_printoptions unpackbits vecdot vecmat"),
}
__getattr__, __dir__, _lazy_names = _lazy.attach(
    __name__, ["fft", "linalg"],
    {name: f"pyjax._src.numpy.{module}:{name}" for module, names in _LAZY_MODULES.items()
     for name in names.split()})
__all__ = _lazy.public_names(globals(), _lazy_names)
_DEFERRED = _lazy_names  # what lazy_loader.load_deferred loads
del _lazy_names
