"""pyjax.lax: the primitive operations (re-exports only; the less common families load on
first use)."""
from typing import Any as _Any

from pyjax._src import lazy_loader as _lazy
from pyjax._src.primitives.dot import (  # noqa: F401
    batch_matmul, dot, dot_general, dot_general_p)
from pyjax._src.primitives.elementwise import (  # noqa: F401
    abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_not,
    bitwise_or, bitwise_xor, cbrt, ceil, clamp, clz, complex, conj, convert_element_type, cos,
    cosh, digamma, div, eq, erf, erf_inv, erfc, exp, exp2, expm1, floor, ge, gt, imag,
    integer_pow, is_finite, le, lgamma, log, log1p, logistic, lt, max, min, mul, ne, neg,
    nextafter, polygamma, population_count, pow, real, rem, round, rsqrt, select, select_n,
    shift_left, shift_right_arithmetic, shift_right_logical, sign, sin, sinh, sqrt, square,
    sub, tan, tanh)
from pyjax._src.primitives.reductions import (  # noqa: F401
    argmax, argmin, reduce_and, reduce_max, reduce_min, reduce_or, reduce_prod, reduce_sum,
    reduce_xor)
from pyjax._src.primitives.shape import (  # noqa: F401
    broadcast, broadcast_in_dim, broadcasted_iota, concatenate, expand_dims, iota, pad, reshape,
    rev, slice, squeeze, transpose, unstack)
from pyjax._src.primitives.extra import (  # noqa: F401
    bitcast_convert_type, broadcast_shapes, cumlogsumexp, cummax, cummin, cumprod, cumsum, full,
    full_like, sort, sort_key_val, split, stop_gradient, tile)
from pyjax._src.primitives.indexing import (  # noqa: F401,E402
    GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, dynamic_index_in_dim,
    dynamic_slice, dynamic_slice_in_dim, dynamic_update_index_in_dim, dynamic_update_slice,
    dynamic_update_slice_in_dim, gather, index_in_dim, scatter, scatter_add, scatter_apply,
    scatter_max, scatter_min, scatter_mul, scatter_sub, slice_in_dim)
from pyjax._src.primitives.enums import (  # noqa: F401,E402
    AccuracyMode, DotAlgorithm, DotAlgorithmPreset, DotDimensionNumbers, FftType, Precision,
    PrecisionLike, RaggedDotDimensionNumbers, RandomAlgorithm, RoundingMethod, Tolerance)

# -- the families most programs never touch load on first use (issue 16: a fast `import`):
# defining module -> the names it gives `lax` (`lax.linalg` is a submodule, also lazy) -------
_LAZY_FAMILIES = {
    # special functions and small elementwise ops
    "pyjax._src.primitives.special": (
        "bessel_i0e bessel_i1e betainc igamma igamma_grad_a igammac mulhi reciprocal "
        "reduce_precision zeta"),
    "pyjax._src.random.gamma_grad": "random_gamma_grad",
    "pyjax._src.primitives.control_flow": (
        "associative_scan cond cond_p fori_loop map platform_dependent scan scan_p switch "
        "while_loop while_p"),
    # collectives and sharding constraints
    "pyjax._src.parallel.collectives": (
        "all_gather all_to_all axis_index pmax pmean pmin ppermute psum psum_scatter "
        "axis_size pbroadcast pcast precv psend pshuffle pswapaxes ragged_all_to_all "
        "ragged_all_to_all_p sharding_constraint_p with_sharding_constraint"),
    "pyjax._src.primitives.reduce": "reduce reduce_p",
    "pyjax._src.primitives.topk": "approx_max_k approx_min_k approx_top_k_p top_k top_k_p",
    "pyjax._src.primitives.fft": "fft fft_p",
    "pyjax._src.primitives.rng": (
        "rng_bit_generator rng_bit_generator_p rng_uniform rng_uniform_p"),
    # convolutions and windowed reductions
    "pyjax._src.primitives.conv": (
        "ConvDimensionNumbers ConvGeneralDilatedDimensionNumbers conv conv_dimension_numbers "
        "conv_general_dilated conv_general_dilated_local conv_general_dilated_p "
        "conv_general_dilated_patches conv_general_permutations conv_general_shape_tuple "
        "conv_shape_tuple conv_transpose conv_transpose_shape_tuple conv_with_general_padding "
        "padtype_to_pads"),
    "pyjax._src.primitives.windows": (
        "reduce_window reduce_window_max_p reduce_window_min_p reduce_window_p "
        "reduce_window_shape_tuple reduce_window_sum_p select_and_gather_add_p "
        "select_and_scatter_add_p"),
    "pyjax._src.primitives.misc": (
        "broadcast_like broadcast_to_rank collapse dtype empty index_take shape_as_value stack "
        "stage"),
    "pyjax._src.primitives.effects": (
        "after_all after_all_p create_token create_token_p dce_sink dce_sink_p "
        "optimization_barrier optimization_barrier_p"),
    "pyjax._src.primitives.composite": "composite",
    # ragged and scaled dots
    "pyjax._src.primitives.ragged_dot": "ragged_dot ragged_dot_general scaled_dot",
    # implicitly differentiated solves
    "pyjax._src.primitives.control_flow.solves": "custom_linear_solve custom_root",
}
from pyjax._src.core.primitive import registry as _registry  # noqa: E402

_JAX_PRIMITIVE_NAMES = {  # JAX's attribute -> pyjax's primitive name where they differ
    "scatter_add_p": "scatter-add", "scatter_sub_p": "scatter-sub", "scatter_mul_p": "scatter-mul",
    "scatter_min_p": "scatter-min", "scatter_max_p": "scatter-max",
    "linear_solve_p": "custom_linear_solve"}
for _name in (
        "abs acos acosh add all_gather all_to_all and argmax argmin asin asinh atan2 atan atanh "
        "axis_index bessel_i0e bessel_i1e bitcast_convert_type broadcast_in_dim cbrt ceil clamp "
        "clz complex concatenate conj convert_element_type copy cos cosh cumlogsumexp cummax "
        "cummin cumprod cumsum digamma div dynamic_slice dynamic_update_slice eq eq_to erf_inv "
        "erf erfc exp2 exp expm1 floor gather ge gt igamma_grad_a igamma igammac imag "
        "integer_pow iota is_finite le le_to lgamma log1p log logistic lt lt_to max min mul "
        "mulhi ne neg nextafter not or pad pmax pmin polygamma population_count pow ppermute "
        "psum real reduce_and reduce_max reduce_min reduce_or reduce_precision reduce_prod "
        "reduce_sum reduce_xor regularized_incomplete_beta rem reshape rev round rsqrt scatter "
        "select_n shift_left shift_right_arithmetic shift_right_logical sign sin sinh slice sort "
        "split sqrt square squeeze stack stage stop_gradient sub tan tanh tile transpose unstack "
        "xor zeta").split():
    _JAX_PRIMITIVE_NAMES[f"{_name}_p"] = _name
# the primitives already registered are bound now; the others once their family has loaded
globals().update({attr: _registry[name] for attr, name in _JAX_PRIMITIVE_NAMES.items()
                  if name in _registry})
del _name


def _primitive_attribute(attr: str) -> _Any:
    """`lax.<name>_p` for a primitive whose family is not loaded yet: load them all, bind it."""
    if attr not in _JAX_PRIMITIVE_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
    if _JAX_PRIMITIVE_NAMES[attr] not in _registry:
        _lazy.load_deferred()
    prim = globals()[attr] = _registry[_JAX_PRIMITIVE_NAMES[attr]]
    return prim


__getattr__, __dir__, _lazy_names = _lazy.attach(
    __name__, ["linalg"],
    {name: f"{family}:{name}" for family, names in _LAZY_FAMILIES.items()
     for name in names.split()},
    fallback=_primitive_attribute, fallback_names=_JAX_PRIMITIVE_NAMES)
__all__ = _lazy.public_names(globals(), _lazy_names)
_DEFERRED = ["linalg", *_LAZY_FAMILIES]  # what lazy_loader.load_deferred loads
del _lazy_names
