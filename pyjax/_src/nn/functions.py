"""jax.nn's activations and normalisations (JAX's jax/_src/nn/functions.py), on jnp and lax.

Functions JAX wraps in `jit` are `staged_as_jit` here, so staged programs show the same
`jit[name=...]` equations; relu, relu6 and log1mexp carry JAX's custom derivatives."""
from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.backend.eager_plans import planned
from pyjax._src.core.trace_state import note_side_effect
from pyjax._src.compat.core import concrete_or_error
from pyjax._src.config import config
from pyjax._src.core import dtypes
from pyjax._src.numpy.reductions import Axis, _count
from pyjax._src.parallel.collectives import _static_axis_size
from pyjax._src.numpy.util import (as_operand, check_arraylike, is_arraylike,
                                   promote_args_inexact, staged_as_jit)
from pyjax._src.ops.special import logsumexp
from pyjax._src.transforms.custom_derivatives import custom_jvp

__all__ = ["celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
           "identity", "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax", "logmeanexp",
           "logsumexp", "mish", "one_hot", "relu", "relu6", "selu", "sigmoid", "silu",
           "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus",
           "standardize", "swish"]


def ensure_arraylike(fun_name: str, *args: Any) -> Any:
    """Reject non-arrays (lists, ...) with JAX's message, and make the rest arrays."""
    check_arraylike(fun_name, *args)
    out = tuple(as_operand(a) for a in args)
    return out[0] if len(out) == 1 else out


def _check_arraylike_or_none(fun_name: str, *args: Any) -> None:
    for pos, arg in enumerate(args):
        if not (arg is None or is_arraylike(arg)):
            raise TypeError(f"{fun_name} requires ndarray, scalar, or None arguments, got "
                            f"{type(arg)} at position {pos}.")


# ---------------------------------------------------------------------------------------------
# activations
# ---------------------------------------------------------------------------------------------

@staged_as_jit
def identity(x: Any) -> Any:
    """The argument unchanged (as an array)."""
    return ensure_arraylike("identity", x)


@custom_jvp
@staged_as_jit
def relu(x: Any) -> Any:
    """max(x, 0); its derivative at 0 is taken to be 0."""
    return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


@staged_as_jit
def squareplus(x: Any, b: Any = 4) -> Any:
    """(x + sqrt(x^2 + b)) / 2, a smooth relu."""
    x, b = ensure_arraylike("squareplus", x, b)
    y = x + jnp.sqrt(jnp.square(x) + b)
    return y / 2


@staged_as_jit
def softplus(x: Any) -> Any:
    """log(1 + exp(x)), as logaddexp(x, 0)."""
    return jnp.logaddexp(x, 0)


@staged_as_jit
def sparse_plus(x: Any) -> Any:
    """0 below -1, x above 1, (x + 1)^2 / 4 between."""
    x = ensure_arraylike("sparse_plus", x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@staged_as_jit
def soft_sign(x: Any) -> Any:
    """x / (|x| + 1)."""
    x_arr = ensure_arraylike("soft_sign", x)
    return x_arr / (jnp.abs(x_arr) + 1)


def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)) (lax.logistic; JAX's jit here is inlined)."""
    return lax.logistic(x)


@staged_as_jit
def sparse_sigmoid(x: Any) -> Any:
    """0 below -1, 1 above 1, (x + 1) / 2 between: the derivative of sparse_plus."""
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@staged_as_jit
def silu(x: Any) -> Any:
    """x * sigmoid(x) (also called swish)."""
    x_arr = ensure_arraylike("silu", x)
    return x_arr * sigmoid(x_arr)


swish = silu


@staged_as_jit
def mish(x: Any) -> Any:
    """x * tanh(softplus(x))."""
    x_arr = ensure_arraylike("mish", x)
    return x_arr * jnp.tanh(softplus(x_arr))


@staged_as_jit
def log_sigmoid(x: Any) -> Any:
    """log(sigmoid(x)) = -softplus(-x)."""
    x_arr = ensure_arraylike("log_sigmoid", x)
    return -softplus(-x_arr)


@staged_as_jit
def elu(x: Any, alpha: Any = 1.0) -> Any:
    """x for x > 0, alpha * (exp(x) - 1) otherwise (expm1 of a clamped x, so no overflow)."""
    x_arr = ensure_arraylike("elu", x)
    return jnp.where(x_arr > 0, x_arr, alpha * jnp.expm1(jnp.where(x_arr > 0, 0., x_arr)))


@staged_as_jit
def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Any:
    """x for x >= 0, negative_slope * x otherwise."""
    x_arr = ensure_arraylike("leaky_relu", x)
    return jnp.where(x_arr >= 0, x_arr, negative_slope * x_arr)


@staged_as_jit
def hard_tanh(x: Any) -> Any:
    """x clipped to [-1, 1]."""
    x_arr = ensure_arraylike("hard_tanh", x)
    return jnp.where(x_arr > 1, 1, jnp.where(x_arr < -1, -1, x_arr))


@staged_as_jit
def celu(x: Any, alpha: Any = 1.0) -> Any:
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


#: SELU's constants (Klambauer et al., 2017)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@staged_as_jit
def selu(x: Any) -> Any:
    """scale * elu(x, alpha) with the self-normalising constants."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def gelu(x: Any, approximate: bool = True) -> Any:
    """x * Phi(x); approximate=True uses the tanh formula, False the exact erfc form.
    (JAX does not jit it.)"""
    [x_arr] = promote_args_inexact("gelu", x)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x_arr.dtype)
        cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x_arr + 0.044715 * (x_arr ** 3))))
        return x_arr * cdf
    sqrt_half = np.sqrt(0.5).astype(x_arr.dtype)
    return jnp.array(0.5 * x_arr * (lax.erfc(-x_arr * sqrt_half)), dtype=x_arr.dtype)


@staged_as_jit(static_argnames=("axis",))
def glu(x: Any, axis: int = -1) -> Any:
    """First half of x along `axis` times sigmoid of the second half."""
    x_arr = ensure_arraylike("glu", x)
    size = x_arr.shape[axis]
    assert size % 2 == 0, "axis size must be divisible by 2"
    x1, x2 = jnp.split(x_arr, 2, axis)
    return x1 * sigmoid(x2)


@custom_jvp
@staged_as_jit
def relu6(x: Any) -> Any:
    """min(max(x, 0), 6); its derivative at 0 and at 6 is taken to be 0."""
    return jnp.minimum(jnp.maximum(x, 0), 6.)


relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)))


@staged_as_jit
def hard_sigmoid(x: Any) -> Any:
    """relu6(x + 3) / 6."""
    return relu6(x + 3.) / 6.


@staged_as_jit
def hard_silu(x: Any) -> Any:
    """x * hard_sigmoid(x) (also called hard_swish)."""
    x_arr = ensure_arraylike("hard_silu", x)
    return x_arr * hard_sigmoid(x_arr)


hard_swish = hard_silu


@custom_jvp
@staged_as_jit
def log1mexp(x: Any) -> Any:
    """log(1 - exp(-x)) for x >= 0, by Maechler's switch at log 2 between log(-expm1(-x))
    and log1p(-exp(-x))."""
    x = ensure_arraylike("log1mexp", x)
    c = jnp.log(2.0)
    return jnp.where(x < c, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


# ---------------------------------------------------------------------------------------------
# reductions and normalisations
# ---------------------------------------------------------------------------------------------

@staged_as_jit(static_argnames=("axis", "keepdims"))
def logmeanexp(x: Any, axis: Axis = None, where: Any = None, keepdims: bool = False) -> Any:
    """logsumexp(x) - log(n), n the number of elements reduced (those `where` selects)."""
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    count = _count(x, axis, keepdims, where, lse.dtype)
    return lse - jnp.log(count)


@staged_as_jit(static_argnames=("axis",))
def log_softmax(x: Any, axis: Axis = -1, where: Any = None) -> Any:
    """x - logsumexp(x) along `axis` (masked-out entries are -inf)."""
    x_arr = ensure_arraylike("log_softmax", x)
    x_max = jnp.max(x_arr, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x_arr if where is None else jnp.where(where, x_arr, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_logsumexp = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    result = shifted - shifted_logsumexp
    if where is not None:
        return jnp.where(where, result, -np.inf)
    return result


@planned
def softmax(x: Any, axis: Axis = -1, where: Any = None) -> Any:
    """exp(x) / sum(exp(x)) along `axis` (masked-out entries are 0).  As in JAX, the maximum
    subtracted first is a stop_gradient unless `jax_softmax_custom_jvp` is set, which selects
    the custom-JVP form."""
    if config.softmax_custom_jvp:
        return _softmax(x, axis, where)
    return _softmax_stop_gradient(x, axis, where)


def _softmax_body(x: Any, axis: Axis, where: Any, initial: Any, shift: Any) -> Any:
    x_max = jnp.max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, initial)
    unnormalized = jnp.exp(x_safe - shift(x_max))
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


def _softmax_stop_gradient(x: Any, axis: Axis = -1, where: Any = None,
                           initial: Any = -np.inf) -> Any:
    return _softmax_body(x, axis, where, initial, lax.stop_gradient)


def _softmax_impl(x: Any, axis: Axis = -1, where: Any = None, initial: Any = -np.inf) -> Any:
    return _softmax_body(x, axis, where, initial, lambda m: m)


_softmax_impl.__name__ = "_softmax"
_softmax = custom_jvp(_softmax_impl, nondiff_argnums=(1,))


@_softmax.defjvp
def _softmax_jvp(axis: Axis, primals: Any, tangents: Any) -> Any:
    (x, where, initial), (x_dot, _, _) = primals, tangents
    y = _softmax(x, axis, where, initial)
    return y, y * (x_dot - jnp.sum(y * x_dot, axis, where=where, keepdims=True))


@staged_as_jit(static_argnames=("axis", "algorithm"))
def standardize(x: Any, axis: Axis = -1, mean: Any = None, variance: Any = None,
                epsilon: Any = 1e-5, where: Any = None, *, algorithm: str = "fast") -> Any:
    """(x - mean) / sqrt(variance + epsilon); the variance is mean(x^2) - mean^2 clipped at 0
    ("fast") or the two-pass mean((x - mean)^2) ("stable")."""
    check_arraylike("standardize", x)
    _check_arraylike_or_none("standardize", mean, variance, where)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True,
                                where=where)
        elif algorithm == "fast":
            variance = jnp.mean(jnp.square(x), axis, keepdims=True,
                                where=where) - jnp.square(mean)
            variance = jnp.clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


# ---------------------------------------------------------------------------------------------
# one_hot
# ---------------------------------------------------------------------------------------------

_NUM_CLASSES_CONTEXT = "The error arose in jax.nn.one_hot argument `num_classes`."


@staged_as_jit(static_argnames=("num_classes", "dtype", "axis"))
def _one_hot(x: Any, num_classes: int, *, dtype: Any, axis: Any) -> Any:
    num_classes = concrete_or_error(operator.index, num_classes, _NUM_CLASSES_CONTEXT)
    if not isinstance(axis, (int, np.integer)):  # a mapped axis name (checked by one_hot)
        return jnp.asarray(x == lax.axis_index(axis), dtype=dtype)
    ndim = np.ndim(x)
    axis = operator.index(axis)
    if not -(ndim + 1) <= axis < ndim + 1:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim + 1}")
    output_pos_axis = axis % (ndim + 1)
    lhs = lax.expand_dims(x, (axis,))
    rhs_shape = [1] * ndim
    rhs_shape.insert(output_pos_axis, num_classes)
    rhs = lax.broadcasted_iota(x.dtype, rhs_shape, output_pos_axis)
    return (lhs == rhs).astype(dtype)


@planned
def one_hot(x: Any, num_classes: int, *, dtype: Any | None = None, axis: Any = -1) -> Any:
    """Indices to one-hot vectors of length `num_classes` along `axis` (indices outside
    [0, num_classes) give all zeros); float indices are deprecated, as in JAX."""
    num_classes = concrete_or_error(operator.index, num_classes, _NUM_CLASSES_CONTEXT)
    x_arr = jnp.asarray(x)
    if not jnp.isdtype(x_arr.dtype, "integral"):
        note_side_effect()
        warnings.warn(f"jax.nn.one_hot input should be integer-typed; got dtype={x_arr.dtype}",
                      DeprecationWarning, stacklevel=2)
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    if not isinstance(axis, (int, np.integer)):
        # a mapped axis name: its size is known here, where the mapping trace is visible
        axis_size = _static_axis_size(axis)
        if num_classes != axis_size:
            raise ValueError(f"Expected num_classes to match the size of axis {axis}, "
                             f"but {num_classes} != {axis_size}")
    return _one_hot(x_arr, num_classes, dtype=dtype, axis=axis)
