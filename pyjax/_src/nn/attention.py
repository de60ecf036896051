"""jax.nn.dot_product_attention with JAX's XLA implementation: logits by einsum (float32 or
wider), scale, bias, boolean masks (explicit, causal, local window, sequence lengths) applied
as a large negative logit, softmax in float32, and grouped-query heads by a vmap over groups.
The cuDNN implementation is GPU-only: as JAX on a machine without cuDNN, it raises."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core import dtypes
from pyjax._src.nn.functions import softmax
from pyjax._src.ops.special import logsumexp
from pyjax._src.transforms.batching import vmap

__all__ = ["dot_product_attention"]


def _large_negative(dtype: np.dtype) -> Any:
    """-0.7 of the largest finite value, capped to float32's range (softmax runs in float32)."""
    dtype_max = min(jnp.finfo(dtype).max, jnp.finfo(np.float32).max)
    return jnp.asarray(-0.7 * dtype_max, dtype=dtype)


def _causal_mask(T: int, S: int) -> Any:
    return jnp.tril(jnp.ones((T, S), dtype=bool))[None, None, :, :]


def _window_mask(T: int, S: int, local_window_size: tuple[int, int]) -> Any:
    query_pos = jnp.array(range(T))
    key_pos = jnp.array(range(S))
    left_window, right_window = local_window_size
    left_mask = query_pos[..., None] <= key_pos[..., None, :] + left_window
    right_mask = query_pos[..., None] >= key_pos[..., None, :] - right_window
    return jnp.logical_and(right_mask, left_mask)[None, None, :, :]


def _padding_mask_logits(T: int, S: int, q_seqlen: Any, kv_seqlen: Any) -> Any:
    q_mask: Any = True
    kv_mask: Any = True
    if q_seqlen is not None:
        q_indices = jnp.arange(0, T)[None, :, None]
        q_mask = q_indices < q_seqlen[:, None, None]
    if kv_seqlen is not None:
        kv_indices = jnp.arange(0, S)[None, None, :]
        kv_mask = kv_indices < kv_seqlen[:, None, None]
    return jnp.logical_and(q_mask, kv_mask)[:, None, :, :]


def _padding_mask_encoded(T: int, q_seqlen: Any) -> Any:
    q_indices = jnp.arange(0, T)[None, :]
    return (q_indices < q_seqlen[:, None])[:, :, None, None]


def _apply_masks(logits: Any, mask: Any, is_causal: bool, q_seqlen: Any, kv_seqlen: Any,
                 local_window_size: tuple[int, int] | None) -> Any:
    if (mask is None and not is_causal and q_seqlen is None and kv_seqlen is None
            and local_window_size is None):
        return logits
    combined = jnp.ones_like(logits, dtype=bool)
    if mask is not None:
        assert mask.dtype == np.dtype(bool)
        combined = jnp.logical_and(combined, mask)
    T, S = logits.shape[2], logits.shape[3]
    if is_causal:
        combined = jnp.logical_and(combined, _causal_mask(T, S))
    if local_window_size is not None:
        combined = jnp.logical_and(combined, _window_mask(T, S, local_window_size))
    if q_seqlen is not None or kv_seqlen is not None:
        combined = jnp.logical_and(combined, _padding_mask_logits(T, S, q_seqlen, kv_seqlen))
    return jnp.where(combined, logits, _large_negative(logits.dtype))


def _attention_core(query: Any, key: Any, value: Any, bias: Any, mask: Any, is_causal: bool,
                    scale: float, q_seqlen: Any, kv_seqlen: Any,
                    local_window_size: tuple[int, int] | None, return_residual: bool) -> Any:
    """One query group: (B, T, N, H) queries against (B, S, N, H) keys and values."""
    logits_dtype = jnp.promote_types(query.dtype, np.float32)
    # bfloat16/float16 queries accumulate their logits in float32 (JAX's explicit algorithm)
    if query.dtype == dtypes.bfloat16:
        precision = lax.DotAlgorithmPreset.BF16_BF16_F32
    elif query.dtype == np.float16:
        precision = lax.DotAlgorithmPreset.F16_F16_F32
    else:
        precision = None
    try:
        logits = jnp.einsum("BTNH,BSNH->BNTS", query, key, precision=precision,
                            preferred_element_type=logits_dtype)
    except Exception:  # noqa: BLE001 - as JAX: fall back where the algorithm is unsupported
        logits = jnp.einsum("BTNH,BSNH->BNTS", query, key, precision=None,
                            preferred_element_type=logits_dtype)
    logits *= jnp.array(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + bias).astype(logits.dtype)
    padded_logits = _apply_masks(logits, mask, is_causal, q_seqlen, kv_seqlen,
                                 local_window_size)
    padded_logits = padded_logits.astype(np.float32)
    probs = softmax(padded_logits, axis=-1).astype(key.dtype)
    encoded = jnp.einsum("BNTS,BSNH->BTNH", probs, value)
    if q_seqlen is not None:
        encoded *= _padding_mask_encoded(encoded.shape[1], q_seqlen).astype(encoded.dtype)
    if return_residual:
        lse_residual = logsumexp(padded_logits, axis=-1).astype(key.dtype)
        lse_residual = jnp.transpose(lse_residual, (0, 2, 1))  # B N T -> B T N
        return encoded, lax.stop_gradient(lse_residual)
    return encoded


def _attention_xla(query: Any, key: Any, value: Any, bias: Any, mask: Any, is_causal: bool,
                   scale: float, q_seqlen: Any, kv_seqlen: Any,
                   local_window_size: tuple[int, int] | None, return_residual: bool) -> Any:
    """Grouped-query attention: the N query heads form K groups of G, mapped over G."""
    B, T, N, H = query.shape
    _, S, K, _ = key.shape
    G = N // K
    query = jnp.reshape(query, (B, T, K, G, H))

    def grouped(t: Any) -> Any:
        if t is not None:
            tB, tN, tT, tS = t.shape
            if tN == 1:
                t = jnp.broadcast_to(t[:, :, None, :, :], (tB, tN, G, tT, tS))
            else:
                assert tN == N
                t = jnp.reshape(t, (tB, K, G, tT, tS))
        return t

    def core(query: Any, key: Any, value: Any, bias: Any, mask: Any, q_seqlen: Any,
             kv_seqlen: Any) -> Any:
        # the static options are closed over (JAX passes them through its vmap unconverted)
        return _attention_core(query, key, value, bias, mask, is_causal, scale, q_seqlen,
                               kv_seqlen, local_window_size, return_residual)

    mapped = vmap(core, in_axes=(3, None, None, 2, 2, None, None), out_axes=3)
    output = mapped(query, key, value, grouped(bias), grouped(mask), q_seqlen, kv_seqlen)
    if return_residual:
        encoded, lse_residual = output
        return jnp.reshape(encoded, (B, T, N, H)), jnp.reshape(lse_residual, (B, T, N))
    return jnp.reshape(output, (B, T, N, H))


def _check_shape_and_dtype(t: Any, shape: Sequence[int], dtype: np.dtype | None,
                           name: str) -> None:
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    for i in range(t.ndim):
        if shape[i] != -1 and t.shape[i] != shape[i]:
            raise ValueError(f"{name} shape should be {shape}: but got {t.shape}")


def _ensure_4d(t: Any) -> Any:
    t = jnp.asarray(t)
    dims_to_add = 4 - t.ndim
    if dims_to_add > 0:
        return jnp.expand_dims(t, axis=tuple(range(dims_to_add)))
    return t


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None,
                          *, scale: float | None = None, is_causal: bool = False,
                          query_seq_lengths: Any = None, key_value_seq_lengths: Any = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None,
                          return_residual: bool = False) -> Any:
    """softmax(Q K^T * scale + bias, masked) V per head, for (B)TNH queries and (B)SKH keys and
    values (K dividing N: grouped-query attention); scale defaults to 1/sqrt(H).  With
    return_residual, also the logsumexp of each row of logits, shaped (B)TN."""
    output_shape = jnp.asarray(query).shape
    residual_shape = output_shape[:-1]
    query_arr, key_arr, value_arr = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = _ensure_4d(bias) if bias is not None else None
    mask = _ensure_4d(mask) if mask is not None else None
    if query_seq_lengths is not None:
        query_seq_lengths = jnp.asarray(query_seq_lengths)
    if key_value_seq_lengths is not None:
        key_value_seq_lengths = jnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)

    B, S, K, H = key_arr.shape
    _check_shape_and_dtype(value_arr, [B, S, K, H], key_arr.dtype, "value")
    _check_shape_and_dtype(query_arr, [B, -1, -1, H], key_arr.dtype, "query")
    _check_shape_and_dtype(mask, [-1] * 4, np.dtype(bool), "mask")
    _check_shape_and_dtype(bias, [-1] * 4, None, "bias")
    _check_shape_and_dtype(query_seq_lengths, [B], np.dtype("int32"), "query_seq_lengths")
    _check_shape_and_dtype(key_value_seq_lengths, [B], np.dtype("int32"),
                           "key_value_seq_lengths")
    if query_arr.shape[-2] % K != 0:
        raise ValueError(f"The number of query heads must be a multiple of "
                         f"key/value heads, but got {query_arr.shape[-2]} vs {K}")
    scale_val = (1.0 / np.sqrt(H)) if scale is None else scale
    if implementation == "cudnn":
        _cudnn_unavailable(is_causal, local_window_size, query_seq_lengths is not None
                           or key_value_seq_lengths is not None)
    elif implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out = _attention_xla(query_arr, key_arr, value_arr, bias, mask, is_causal=is_causal,
                         scale=scale_val, q_seqlen=query_seq_lengths,
                         kv_seqlen=key_value_seq_lengths, local_window_size=local_window_size,
                         return_residual=return_residual)
    if return_residual:
        out, residual = out
        return jnp.reshape(out, output_shape), jnp.reshape(residual, residual_shape)
    return jnp.reshape(out, output_shape)


def _cudnn_unavailable(is_causal: bool, local_window_size: tuple[int, int] | None,
                       use_padding: bool) -> None:
    """JAX's cuDNN path: its argument check, then the missing-library error (no GPU here)."""
    if local_window_size is not None:
        _, r_window = local_window_size
        if not (r_window == 0 or (is_causal and not use_padding)):
            raise ValueError(f"cuDNN doesn't support right window: {r_window} "
                             "when causal mask is not used.")
    raise RuntimeError("cuDNN is not detected.")
