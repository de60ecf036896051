"""The eager fast path of `split` and `fold_in`: one concrete threefry key, outside any trace.

Called eagerly, both wrap a raw key (`random_wrap`), bind `random_split` / `random_fold_in`
(abstract evaluation, operand buffers, the impl, the result wrapped as keys) and unwrap again:
~250 Python calls and 60-80 µs for a hash or two.  Here the key data goes straight to the
native `PAIRS` kernel (backend/tier1/threefry.py), which writes the hash pair of counter
(0, start + i) as new key i.  With start 0 and n = prod(shape) keys that is `threefry_split`
under `jax_threefry_partitionable` (its counters are the keys' flat indices, whose high word is
0 below 2**32); with start = data and one key it is `threefry_fold_in`, which hashes the
counter (0, data) under either setting.  Until that kernel has compiled, with tier 1 off, and
for split with `jax_threefry_partitionable` off, the primitives' own impls (`threefry_split`,
`threefry_fold_in`) make the keys from the same data: bit for bit the ordinary path's keys.
The result is what the primitives' eager rule gives: for a raw key a uint32 array (not weak),
for a typed key a `key<fry>` key array.

Anything else answers None and the caller takes the ordinary path, which also raises every
error: keys other than one threefry key (batched keys, other PRNGs, raw keys when the default
PRNG is not threefry, NumPy arrays, lists), `num` other than a non-negative int or a tuple of
them, data other than a Python int in [0, 2**32) (bools, arrays, and the ints that overflow
uint32), `disable_jit`, `no_execution` and a mesh in context.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from pyjax._src.backend.dispatch import _MEMORY_BYTES
from pyjax._src.backend.machine_code import data_pointer
from pyjax._src.backend.tier1 import threefry as native
from pyjax._src.config import config
from pyjax._src.core.array import ArrayImpl
from pyjax._src.parallel.mesh import context_key as mesh_context_key
from pyjax._src.random.keys import PRNGKeyArray
from pyjax._src.random.threefry import threefry_fold_in, threefry_prng_impl, threefry_split

_U32 = np.dtype(np.uint32)
_THREEFRY = threefry_prng_impl.name
_TWO_POINTERS = native.TWO_POINTERS
#: the most keys one split makes here: the kernel's counters are 32 bits, and the result must
#: fit in memory (the ordinary path raises XLA's error beyond that)
_MAX_KEYS = min(2 ** 32, _MEMORY_BYTES // 8)


def _key_data(key: Any) -> np.ndarray | None:
    """The uint32[2] data (C-contiguous) of `key` when it is one threefry key, raw or typed,
    and jitted code would run; else None."""
    t = type(key)
    if t is ArrayImpl:
        if config.default_prng_impl != _THREEFRY:
            return None
    elif t is not PRNGKeyArray or key._impl is not threefry_prng_impl:
        return None
    data = key._buf
    if data.dtype != _U32 or data.shape != (2,):
        return None
    if config.disable_jit or config.no_execution or mesh_context_key():
        return None
    return data if data.flags.c_contiguous else np.ascontiguousarray(data)


def _as_keys(out: np.ndarray, like: Any) -> Any:
    """`out` (key data) as the eager rule returns keys of `like`'s kind: a uint32 array, or a
    key array (built directly: `out` is known to be good key data)."""
    if type(like) is ArrayImpl:
        return ArrayImpl(out, False)
    keys = PRNGKeyArray.__new__(PRNGKeyArray)
    keys._impl, keys._buf = threefry_prng_impl, out
    return keys


def split(key: Any, num: Any) -> Any:
    """`split(key, num)` computed here; None: take the ordinary path."""
    if type(num) is int:
        shape, size = (num,), num
    elif type(num) is tuple and all(type(d) is int and d >= 0 for d in num):
        shape, size = num, math.prod(num)
    else:
        return None
    if not 0 <= size <= _MAX_KEYS:
        return None
    data = _key_data(key)
    if data is None:
        return None
    fn = native.sample_kernel(native.PAIRS) if config.threefry_partitionable else None
    if fn is None:
        out = threefry_split(data, shape)
    else:
        out = np.empty(shape + (2,), _U32)
        fn(0, size, _TWO_POINTERS(data_pointer(data), data_pointer(out)))
    return _as_keys(out, key)


def fold_in(key: Any, data: Any) -> Any:
    """`fold_in(key, data)` computed here; None: take the ordinary path."""
    if type(data) is not int or not 0 <= data < 2 ** 32:
        return None
    key_data = _key_data(key)
    if key_data is None:
        return None
    fn = native.sample_kernel(native.PAIRS)
    if fn is None:
        out = threefry_fold_in(key_data, np.uint32(data))
    else:
        out = np.empty(2, _U32)
        fn(data, 1, _TWO_POINTERS(data_pointer(key_data), data_pointer(out)))
    return _as_keys(out, key)
