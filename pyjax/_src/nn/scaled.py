"""Block-scaled matrix products (JAX's jax/_src/cudnn/scaled_matmul_stablehlo.py and the
jax.nn wrappers): `scaled_matmul` multiplies low-precision (B, M, K) x (B, N, K) operands, each
block of K multiplied by its scale; `scaled_dot_general` quantizes high-precision operands to
MXFP8 or NVFP4 blocks first (JAX's quantizer, bit for bit) and has JAX's custom VJP.

The `scaled_matmul_wrapper` primitive computes what cuDNN's block-scaled dot computes: the
dequantized operands multiplied and summed in float32, rounded to the preferred type.  (JAX
itself lowers it only for CUDA and ROCm; this runs it everywhere.)"""
from __future__ import annotations

import dataclasses
import operator
import warnings
from functools import reduce
from typing import Any, Sequence

import ml_dtypes
import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core.trace_state import note_side_effect
from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.numpy.util import staged_as_jit
from pyjax._src.primitives._rules import make_primitive
from pyjax._src.transforms import ad
from pyjax._src.transforms.batching import bdim_at_front
from pyjax._src.transforms.custom_derivatives import custom_vjp

__all__ = ["BlockScaleConfig", "get_scaled_dot_general_config", "scaled_dot_general",
           "scaled_matmul"]


@dataclasses.dataclass(slots=True)
class BlockScaleConfig:
    """How one operand is quantized: format name, block length along the contracting axis,
    element and scale dtypes, and (NVFP4) a global float32 scale."""
    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any
    infer_only: bool


# ---------------------------------------------------------------------------------------------
# the scaled_matmul_wrapper primitive: (B, M, K) x (B, N, K) -> (B, M, N)
# ---------------------------------------------------------------------------------------------

def _scaled_matmul_abstract(a: ShapedArray, b: ShapedArray, a_scale: ShapedArray,
                            b_scale: ShapedArray, *, preferred_element_type: np.dtype
                            ) -> list[ShapedArray]:
    batch, m, _ = a.shape
    return [ShapedArray((batch, m, b.shape[1]), np.dtype(preferred_element_type), False)]


def _dequantized(x: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """x * scale in float32, each scale repeated over its block of the last axis."""
    block = x.shape[-1] // scale.shape[-1]
    return x.astype(np.float32) * np.repeat(scale.astype(np.float32), block, axis=-1)


def _scaled_matmul_impl(a: np.ndarray, b: np.ndarray, a_scale: np.ndarray,
                        b_scale: np.ndarray, *, preferred_element_type: np.dtype
                        ) -> list[np.ndarray]:
    out = np.matmul(_dequantized(a, a_scale), np.swapaxes(_dequantized(b, b_scale), 1, 2))
    return [out.astype(preferred_element_type)]


scaled_matmul_wrapper_p = make_primitive("scaled_matmul_wrapper", _scaled_matmul_impl,
                                         _scaled_matmul_abstract, multiple_results=True)
scaled_matmul_wrapper_p.jvp = ad.unimplemented_rule(scaled_matmul_wrapper_p)


def _scaled_matmul_batch(vals: Sequence[Any], dims: Sequence[Any], *,
                         preferred_element_type: np.dtype) -> tuple:
    """The mapped axis joins the batch axis (JAX's rule, after moving every mapped axis to
    the front)."""
    size = next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not None)
    lhs, rhs, lhs_scales, rhs_scales = [bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    *batch, m, k = lhs.shape
    n = rhs.shape[-2]
    k_scales = lhs_scales.shape[-1]
    new_batch = reduce(operator.mul, batch)
    lhs = jnp.reshape(lhs, (new_batch, m, k))
    lhs_scales = jnp.reshape(lhs_scales, (new_batch, m, k_scales))
    rhs = jnp.reshape(rhs, (new_batch, n, k))
    rhs_scales = jnp.reshape(rhs_scales, (new_batch, n, k_scales))
    out = scaled_matmul_wrapper_p.bind(lhs, rhs, lhs_scales, rhs_scales,
                                       preferred_element_type=preferred_element_type)[0]
    return [jnp.reshape(out, (*batch, m, n))], [0]


scaled_matmul_wrapper_p.batch = _scaled_matmul_batch


@staged_as_jit(static_argnames=("preferred_element_type",))
def _scaled_matmul(lhs: Any, rhs: Any, lhs_scales: Any, rhs_scales: Any,
                   preferred_element_type: Any = np.dtype("float32")) -> Any:
    return scaled_matmul_wrapper_p.bind(lhs, rhs, lhs_scales, rhs_scales,
                                        preferred_element_type=preferred_element_type)[0]


def _scaled_matmul_wrapper(lhs: Any, rhs: Any, lhs_scales: Any, rhs_scales: Any,
                           preferred_element_type: Any = np.dtype("float32")) -> Any:
    assert lhs.shape[2] == rhs.shape[2]
    preferred_element_type = dtypes.check_user_dtype(preferred_element_type,
                                                     "scaled_matmul_wrapper")
    return _scaled_matmul(lhs, rhs, lhs_scales, rhs_scales,
                          preferred_element_type=preferred_element_type)


def scaled_matmul(lhs: Any, rhs: Any, lhs_scales: Any, rhs_scales: Any,
                  preferred_element_type: Any = np.float32) -> Any:
    """Block-scaled (B, M, K) x (B, N, K) -> (B, M, N): each operand times its scales repeated
    over blocks of K (block size K // scales.shape[-1]), contracted over K in float32."""
    a, b, a_scales, b_scales = lhs, rhs, lhs_scales, rhs_scales
    if not all(x.ndim == 3 for x in (a, b, a_scales, b_scales)):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    B_a, _, K_a = a.shape
    B_b, _, K_b = b.shape
    if K_a != K_b or B_a != B_b:
        raise ValueError("scaled_matmul requires inputs a and b to have matching batch (B) "
                         f"and contract (K) dimensions, but got shapes {a.shape} and "
                         f"{b.shape}")
    B_as, M_as, K_as = a_scales.shape
    B_bs, N_bs, K_bs = b_scales.shape
    if K_as != K_bs or B_as != B_bs:
        raise ValueError("scaled_matmul requires scales to have matching batch (B) and "
                         f"contract (K) dimensions, but got shapes {a_scales.shape} and "
                         f"{b_scales.shape}")
    if M_as != a.shape[1] or N_bs != b.shape[1]:
        raise ValueError("scaled_matmul requires scales to match non-contract dimensions of "
                         f"inputs, but got shapes a: {a.shape}, b: {b.shape}, a_scales: "
                         f"{a_scales.shape}, b_scales: {b_scales.shape}")
    preferred_element_type = dtypes.check_user_dtype(preferred_element_type, "scaled_matmul")
    return _scaled_matmul_wrapper(a, b, a_scales, b_scales,
                                  preferred_element_type=preferred_element_type)


# ---------------------------------------------------------------------------------------------
# quantization (JAX's MXFP8 / NVFP4 recipes)
# ---------------------------------------------------------------------------------------------

def get_scaled_dot_general_config(mode: str, global_scale: Any = None) -> BlockScaleConfig:
    """The quantization config of `mode`: 'mxfp8' (float8_e4m3fn blocks of 32 with
    float8_e8m0fnu scales) or 'nvfp4' (float4_e2m1fn blocks of 16 with float8_e4m3fn scales
    and a global scale, default 1)."""
    if mode == "nvfp4":
        one = jnp.ones((1,), dtype=np.float32)
        return BlockScaleConfig(mode="nvfp4", block_size=16, data_type=ml_dtypes.float4_e2m1fn,
                                scale_type=ml_dtypes.float8_e4m3fn,
                                global_scale=one if global_scale is None else global_scale,
                                infer_only=False)
    if mode == "mxfp8":
        return BlockScaleConfig(mode="mxfp8", block_size=32, data_type=ml_dtypes.float8_e4m3fn,
                                scale_type=ml_dtypes.float8_e8m0fnu, global_scale=None,
                                infer_only=False)
    raise ValueError(f"Unsupported mode: {mode}")


def _shape_normalization(x: Any, dimension_numbers: Any) -> Any:
    """x transposed and reshaped to (batch, kept, contracting) sizes (B, M, K)."""
    contracting_dims, batch_dims = dimension_numbers
    order = list(range(x.ndim))
    contracting = [d for d in order if d in contracting_dims]
    batch = [d for d in order if d in batch_dims]
    kept = [d for d in order if d not in contracting_dims and d not in batch_dims]
    rows = np.prod([x.shape[d] for d in kept])
    cols = np.prod([x.shape[d] for d in contracting])
    batches = np.prod([x.shape[d] for d in batch], dtype=int)
    return jnp.reshape(jnp.transpose(x, batch + kept + contracting), (batches, rows, cols))


def _dot_output_shape(lhs_shape: Sequence[int], rhs_shape: Sequence[int], lhs_dn: Any,
                      rhs_dn: Any) -> tuple[int, ...]:
    """dot_general's result shape: batch, lhs kept, rhs kept."""
    (lhs_contract, lhs_batch), (rhs_contract, rhs_batch) = lhs_dn, rhs_dn
    return (*(d for i, d in enumerate(lhs_shape) if i in lhs_batch),
            *(d for i, d in enumerate(lhs_shape) if i not in lhs_contract and i not in lhs_batch),
            *(d for i, d in enumerate(rhs_shape) if i not in rhs_contract and i not in rhs_batch))


def _cast_to_e8m0_rounding_up(x: Any) -> Any:
    """The float32 value's exponent byte, rounded up unless x is a power of two."""
    bits = lax.bitcast_convert_type(x.astype(np.float32), np.uint32)
    exp = bits >> 23
    mant = bits & 0x7FFFFF
    round_up = jnp.logical_and(jnp.logical_and(mant > 0, exp != 0xFE),
                               ~jnp.logical_and(exp == 0, mant <= 0x400000))
    exp = jnp.where(round_up, exp + 1, exp)
    return exp.astype(np.uint8)


def _e8m0_to_dtype(x: Any, dtype: Any) -> Any:
    """An e8m0 exponent byte as the power of two it encodes (0 becomes a tiny power)."""
    exp = x.astype(np.uint32) << 23
    value = lax.bitcast_convert_type(exp, np.float32)
    near_zero = 2 ** -15 if dtype == np.float16 else 2 ** -127
    value = jnp.where(value == 0, jnp.array(near_zero, np.float32), value)
    return value.astype(dtype)


def _quantize(x: Any, config: BlockScaleConfig) -> tuple[Any, Any]:
    """(B, M, K) -> its elements in config.data_type and one scale per block of K."""
    x_shape = x.shape
    block_size = config.block_size
    assert x_shape[-1] >= block_size and x_shape[-1] % block_size == 0
    x = x.reshape(x_shape[:-1] + (x_shape[-1] // block_size, block_size))
    data_max = jnp.finfo(config.data_type).max.astype(x.dtype)

    def block_scales(values: Any) -> Any:
        return jnp.max(jnp.abs(values), axis=-1, keepdims=True) / data_max

    if config.mode == "mxfp8":
        assert config.global_scale is None
        assert config.scale_type == ml_dtypes.float8_e8m0fnu
        scales_q = _cast_to_e8m0_rounding_up(block_scales(x))
        scaled_x = x / _e8m0_to_dtype(scales_q, x.dtype)
    elif config.mode == "nvfp4":
        assert config.scale_type == ml_dtypes.float8_e4m3fn
        assert config.global_scale.dtype == np.float32
        scale_max = jnp.finfo(config.scale_type).max.astype(x.dtype)
        x /= config.global_scale
        scales_q = jnp.clip(block_scales(x), 0, scale_max)
        scales_q = lax.optimization_barrier(scales_q.astype(config.scale_type))
        scaled_x = x / scales_q.astype(np.float32)
    else:
        raise ValueError(f"Unrecognized mode: {config.mode}.")
    x_q = jnp.clip(scaled_x, -data_max, data_max).astype(config.data_type).reshape(x_shape)
    scales_q = jnp.reshape(scales_q, scales_q.shape[:-1])
    if np.dtype(scales_q.dtype) != np.dtype(config.scale_type):
        scales_q = lax.bitcast_convert_type(scales_q, config.scale_type)
    return x_q, scales_q


def _scaled_dot_impl(lhs: Any, rhs: Any, dimension_numbers: Any, preferred_element_type: Any,
                     configs: Sequence[BlockScaleConfig]) -> Any:
    if preferred_element_type is None:
        preferred_element_type = jnp.result_type(lhs, rhs)
    else:
        preferred_element_type = dtypes.check_user_dtype(preferred_element_type,
                                                         "scaled_dot_impl")
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    lhs_dn, rhs_dn = (lhs_contract, lhs_batch), (rhs_contract, rhs_batch)
    lhs_q, lhs_scales = _quantize(_shape_normalization(lhs, lhs_dn), configs[0])
    rhs_q, rhs_scales = _quantize(_shape_normalization(rhs, rhs_dn), configs[1])
    nvfp4 = configs[0].mode == "nvfp4"
    out = _scaled_matmul_wrapper(lhs_q, rhs_q, lhs_scales, rhs_scales,
                                 preferred_element_type=np.float32 if nvfp4
                                 else preferred_element_type)
    if nvfp4:
        out *= configs[0].global_scale * configs[1].global_scale
        out = out.astype(preferred_element_type)
    return jnp.reshape(out, _dot_output_shape(lhs.shape, rhs.shape, lhs_dn, rhs_dn))


def _remaining(n: int, *taken: Sequence[int]) -> list[int]:
    return [i for i in range(n) if not any(i in t for t in taken)]


def _transpose_lhs(g: Any, x: Any, y: Any, *, dimension_numbers: Any,
                   preferred_element_type: Any, configs: Sequence[BlockScaleConfig],
                   swap_ans: bool = False) -> Any:
    """The cotangent of dot_general's lhs, itself as a (quantized) scaled product g . y."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_kept = _remaining(x.ndim, x_contract, x_batch)
    y_kept = _remaining(np.ndim(y), y_contract, y_batch)
    nb = len(x_batch)
    ans_batch = list(range(nb))
    if swap_ans:
        ans_y = list(range(nb, nb + len(y_kept)))
    else:
        ans_y = list(range(nb + len(x_kept), nb + len(x_kept) + len(y_kept)))
    x_contract_sorted_by_y = list(np.take(x_contract, np.argsort(y_contract)))
    out_axes = np.argsort(list(x_batch) + x_kept + x_contract_sorted_by_y)
    y_dn, g_dn = (y_kept, y_batch), (ans_y, ans_batch)
    y_3d = _shape_normalization(y, y_dn)
    g_3d = _shape_normalization(g, g_dn)
    if configs[0].mode != "nvfp4":
        g_q, g_scales = _quantize(g_3d, configs[0])
        y_q, y_scales = _quantize(y_3d, configs[1])
        out = _scaled_matmul_wrapper(g_q, y_q, g_scales, y_scales, preferred_element_type)
    else:
        out = jnp.matmul(g_3d, jnp.permute_dims(y_3d, (0, 2, 1)),
                         preferred_element_type=preferred_element_type)
    out = jnp.reshape(out, _dot_output_shape(g.shape, y.shape, g_dn, y_dn))
    return lax.transpose(out, tuple(out_axes))


def _scaled_dot_general_fn(lhs: Any, rhs: Any, dimension_numbers: Any,
                           preferred_element_type: Any, configs: Any) -> Any:
    return _scaled_dot_impl(lhs, rhs, dimension_numbers, preferred_element_type, configs)


_scaled_dot_general_fn.__name__ = "scaled_dot_general_fn"
scaled_dot_general_fn = custom_vjp(_scaled_dot_general_fn, nondiff_argnums=(2, 3, 4))


def scaled_dot_fwd(lhs: Any, rhs: Any, dimension_numbers: Any, preferred_element_type: Any,
                   configs: Any) -> tuple[Any, tuple]:
    out = _scaled_dot_impl(lhs, rhs, dimension_numbers, preferred_element_type, configs)
    return out, (lhs, rhs)


def scaled_dot_bwd(dimension_numbers: Any, preferred_element_type: Any, configs: Any,
                   res: tuple, g: Any) -> tuple[Any, Any]:
    """Both cotangents as scaled products quantized with configs[2] for g; under NVFP4 the
    gradient of an element clipped in the forward quantization is zero (straight-through)."""
    lhs, rhs = res
    grad_lhs = _transpose_lhs(g, lhs, rhs, dimension_numbers=dimension_numbers,
                              preferred_element_type=preferred_element_type,
                              configs=[configs[2], configs[1]])
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    grad_rhs = _transpose_lhs(g, rhs, lhs,
                              dimension_numbers=((y_contract, x_contract), (y_batch, x_batch)),
                              preferred_element_type=preferred_element_type,
                              configs=[configs[2], configs[0]], swap_ans=True)
    if configs[2].mode == "nvfp4":
        assert rhs.dtype == lhs.dtype
        data_max = jnp.finfo(configs[0].data_type).max.astype(lhs.dtype)
        scale_max = jnp.finfo(configs[0].scale_type).max.astype(lhs.dtype)
        grad_lhs = jnp.where(jnp.abs(lhs) <= configs[0].global_scale * data_max * scale_max,
                             grad_lhs, 0)
        grad_rhs = jnp.where(jnp.abs(rhs) <= configs[1].global_scale * data_max * scale_max,
                             grad_rhs, 0)
    return grad_lhs, grad_rhs


scaled_dot_general_fn.defvjp(scaled_dot_fwd, scaled_dot_bwd)


def _ensure_tuple(dimension_numbers: Any) -> Any:
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    return ((tuple(lhs_contract), tuple(rhs_contract)), (tuple(lhs_batch), tuple(rhs_batch)))


def _ensure_batch_dim(lhs: Any, rhs: Any, dimension_numbers: Any) -> tuple[Any, Any, Any]:
    """A trailing batch axis of size 1 for an operand without batch dimensions."""
    contracting, (lhs_batch, rhs_batch) = dimension_numbers
    if lhs_batch == ():
        lhs, lhs_batch = jnp.expand_dims(lhs, axis=lhs.aval.ndim), (lhs.aval.ndim,)
    if rhs_batch == ():
        rhs, rhs_batch = jnp.expand_dims(rhs, axis=rhs.aval.ndim), (rhs.aval.ndim,)
    return lhs, rhs, (contracting, (lhs_batch, rhs_batch))


_FLOAT_OUTPUTS = (np.dtype("float32"), np.dtype(dtypes.bfloat16), np.dtype("float16"))


def scaled_dot_general(lhs: Any, rhs: Any, dimension_numbers: Any,
                       preferred_element_type: Any = np.float32,
                       configs: list[BlockScaleConfig] | None = None,
                       implementation: str | None = None) -> Any:
    """dot_general of block-quantized operands (configs for lhs, rhs and the cotangent, from
    get_scaled_dot_general_config); without configs, a plain lax.dot_general."""
    if implementation is not None:
        note_side_effect()
        warnings.warn("Backend selector, now ignored. The system chooses the backend "
                      "automatically.", DeprecationWarning, stacklevel=2)
    if configs is None:
        return lax.dot_general(lhs, rhs, dimension_numbers,
                               preferred_element_type=preferred_element_type)
    if preferred_element_type not in _FLOAT_OUTPUTS:
        raise TypeError("Only support preferred_element_type in (f32, bf16, f16), but got "
                        "{preferred_element_type}")  # (sic: JAX leaves it unformatted)
    dimension_numbers = _ensure_tuple(dimension_numbers)
    lhs_b, rhs_b, dn_batched = _ensure_batch_dim(lhs, rhs, dimension_numbers)
    out = scaled_dot_general_fn(lhs_b, rhs_b, dn_batched, preferred_element_type, configs)
    if dn_batched != dimension_numbers:
        return jnp.squeeze(out, axis=0)
    return out
