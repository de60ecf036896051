"""The threefry2x32 PRNG on key data: seeding, splitting, folding in and drawing bits.

With `jax_threefry_partitionable` (on by default since JAX 0.5) the counter of each output
element is its flat index as a 64-bit number, hashed as (high word, low word), and a split key is
the hash pair itself.  With it off, JAX's original scheme: the counters 0..n-1 are hashed as
pairs (first half, second half) and the outputs concatenated.  All functions work on uint32 key
data with leading key axes.
"""
from __future__ import annotations

import math

import numpy as np

from pyjax._src.backend.tier1 import threefry as native
from pyjax._src.config import config
from pyjax._src.primitives.prng import threefry2x32_impl
from pyjax._src.random.keys import PRNGImpl, register_prng

_U32 = np.uint32
_BITS_DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def iota_2x32(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The flat index of each position of `shape` as (high, low) uint32 words."""
    size = math.prod(shape)
    if size <= 2 ** 32:
        return np.zeros((), _U32), np.arange(size, dtype=_U32).reshape(shape)
    index = np.arange(size, dtype=np.uint64).reshape(shape)
    return (index >> np.uint64(32)).astype(_U32), index.astype(_U32)


def _hash_counters(keys: np.ndarray, shape: tuple[int, ...]) -> list[np.ndarray]:
    """The hash pair of every counter of `shape` under every key (batch + shape each)."""
    batch = keys.shape[:-1]
    lead = (1,) * len(shape)
    k1 = keys[..., 0].reshape(batch + lead)
    k2 = keys[..., 1].reshape(batch + lead)
    hi, lo = iota_2x32(shape)
    return threefry2x32_impl(k1, k2, hi, lo)


def _hash_halves(keys: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """JAX's threefry_2x32 of a flat counter array: its two halves (zero-padded to even length)
    hashed as pairs, the two outputs concatenated; one row per key."""
    n = counts.size
    padded = np.concatenate([counts, np.zeros(n % 2, _U32)])
    first, second = np.split(padded, 2)
    batch = keys.shape[:-1]
    k1, k2 = (keys[..., i].reshape(batch + (1,)) for i in range(2))
    out = np.concatenate(threefry2x32_impl(k1, k2, first, second), axis=-1)
    return out[..., :n]


def _split_original(keys: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    count = math.prod(shape)
    out = _hash_halves(keys, np.arange(2 * count, dtype=_U32))
    return out.reshape(keys.shape[:-1] + tuple(shape) + (2,))


def _random_bits_original(keys: np.ndarray, bit_width: int, shape: tuple[int, ...]
                          ) -> np.ndarray:
    size = math.prod(shape)
    words = -(-bit_width * size // 32)
    blocks, rem = divmod(words, 0xFFFFFFFF)  # counters are uint32: new keys every 2**32 - 1
    if blocks:
        block_keys = _split_original(keys, (blocks + 1,))
        parts = [_hash_halves(block_keys[..., i, :], np.arange(0xFFFFFFFF, dtype=_U32))
                 for i in range(blocks)]
        bits = np.concatenate(parts + [_hash_halves(block_keys[..., blocks, :],
                                                    np.arange(rem, dtype=_U32))], axis=-1)
    else:
        bits = _hash_halves(keys, np.arange(rem, dtype=_U32))
    if bit_width == 64:
        high, low = np.split(bits.astype(np.uint64), 2, axis=-1)
        bits = (high << np.uint64(32)) | low
    elif bit_width < 32:  # the bytes of the words, low bytes first
        bits = np.ascontiguousarray(bits).astype("<u4").view(_BITS_DTYPES[bit_width])
        bits = bits[..., :size]
    return bits.reshape(keys.shape[:-1] + tuple(shape))


def _pairs(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """np.stack([first, second], axis=-1), at a third of its cost on a few keys."""
    out = np.empty(first.shape + (2,), _U32)
    out[..., 0] = first
    out[..., 1] = second
    return out


def threefry_seed(seeds: np.ndarray) -> np.ndarray:
    """Key data [high 32 bits, low 32 bits] of each integer seed (its two's complement bits)."""
    seeds = np.asarray(seeds)
    if seeds.dtype.itemsize == 8:
        bits = seeds.view(np.uint64) if seeds.dtype.kind == "i" else seeds
        high = (bits >> np.uint64(32)).astype(_U32)
    else:
        bits, high = seeds, np.zeros(seeds.shape, _U32)
    return np.stack([high, bits.astype(_U32)], axis=-1)


def threefry_split(keys: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Each key split into `shape` keys: the hash pairs of the counters 0, 1, ..."""
    if not config.threefry_partitionable:
        return _split_original(keys, tuple(shape))
    return _pairs(*_hash_counters(keys, tuple(shape)))


def threefry_fold_in(keys: np.ndarray, msgs: np.ndarray) -> np.ndarray:
    """Keys hashed with the counter pair (0, msg), broadcast over keys and messages."""
    msgs = np.asarray(msgs, _U32)
    return _pairs(*threefry2x32_impl(keys[..., 0], keys[..., 1], np.zeros((), _U32), msgs))


def threefry_random_bits(keys: np.ndarray, bit_width: int, shape: tuple[int, ...]) -> np.ndarray:
    """Random bits of `shape` per key: the xor of the hash pair, or the pair as one 64-bit word;
    8- and 16-bit draws keep the low bits of the 32-bit draw."""
    if bit_width not in _BITS_DTYPES:
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
    if not config.threefry_partitionable:
        return _random_bits_original(keys, bit_width, tuple(shape))
    size = math.prod(shape)
    if size > 2 ** 64:
        raise NotImplementedError("random bits array of size exceeding 2 ** 64")
    if keys.shape == (2,) and size <= 2 ** 32:  # one key: the native kernel, once compiled
        bits = single_key_bits(keys, bit_width, size)
        if bits is not None:
            return bits.reshape(shape)
    high, low = _hash_counters(keys, tuple(shape))
    if bit_width == 64:
        return (high.astype(np.uint64) << np.uint64(32)) | low
    high ^= low
    return high if bit_width == 32 else high.astype(_BITS_DTYPES[bit_width])


def single_key_bits(key: np.ndarray, bit_width: int, size: int) -> np.ndarray | None:
    """`threefry_random_bits` of one key (uint32[2]) as a flat array of `size` <= 2**32 words,
    by the native random-bits kernel; None while it is not compiled (or tier 1 is off)."""
    if key.dtype != _U32 or not key.flags.c_contiguous:
        key = np.ascontiguousarray(key, _U32)
    return native.random_bits(key, bit_width, size)


threefry_prng_impl = PRNGImpl(key_shape=(2,), seed=threefry_seed, split=threefry_split,
                              random_bits=threefry_random_bits, fold_in=threefry_fold_in,
                              name="threefry2x32", tag="fry")
register_prng(threefry_prng_impl)
