"""device_memory_profile: the live arrays as a pprof profile (gzipped protocol buffer, the
format `pprof` reads), with JAX's two sample types: allocations/count and space/bytes.

JAX attributes each buffer to the Python stack that allocated it; pyjax does not record
allocation stacks, so each sample's one frame names the array's type (`float32[3,4]`), and its
labels give the kind (`buffer`), dtype and shape: `pprof -top` lists memory by array type.
"""
from __future__ import annotations

import gzip
import time
from collections import Counter
from typing import Any


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _int(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _packed(number: int, values: list[int]) -> bytes:
    return _field(number, b"".join(_varint(v) for v in values))


class _Strings:
    def __init__(self) -> None:
        self.table: dict[str, int] = {"": 0}

    def __call__(self, s: str) -> int:
        return self.table.setdefault(s, len(self.table))


def profile_bytes(arrays: list[Any]) -> bytes:
    """The serialized (uncompressed) pprof Profile of `arrays`."""
    strings = _Strings()
    kinds = Counter()
    for a in arrays:
        buf = a._buf
        kinds[(str(buf.dtype), tuple(buf.shape))] += 1
    out = bytearray()
    for kind, unit in (("allocations", "count"), ("space", "bytes")):
        out += _field(1, _int(1, strings(kind)) + _int(2, strings(unit)))
    functions, locations = bytearray(), bytearray()
    for n, ((dtype, shape), count) in enumerate(sorted(kinds.items()), 1):
        name = f"{dtype}[{','.join(map(str, shape))}]"
        functions += _field(5, _int(1, n) + _int(2, strings(name)) + _int(3, strings(name)))
        locations += _field(4, _int(1, n) + _field(4, _int(1, n)))
        size = count * int(_itemsize(dtype) * _prod(shape))
        labels = b"".join(_field(3, _int(1, strings(k)) + _int(2, strings(v)))
                          for k, v in (("kind", "buffer"), ("dtype", dtype),
                                       ("shape", str(list(shape)))))
        out += _field(2, _packed(1, [n]) + _packed(2, [count, size]) + labels)
    out += locations + functions
    period_type = _int(1, strings("space")) + _int(2, strings("bytes"))
    for s in strings.table:  # (insertion order is index order)
        out += _field(6, s.encode())
    out += _int(9, time.time_ns()) + _field(11, period_type) + _int(12, 1)
    return bytes(out)


def _itemsize(dtype: str) -> int:
    import numpy as np
    return np.dtype(dtype).itemsize


def _prod(shape: tuple) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def device_memory_profile(backend: str | None = None) -> bytes:
    """A snapshot of the arrays alive in memory as a gzipped pprof protocol buffer (read it
    with `pprof`); `backend` as in JAX (pyjax has one, the host: another gives an empty
    profile)."""
    from pyjax._src.api_extras import live_arrays
    return gzip.compress(profile_bytes(live_arrays(backend)))


def save_device_memory_profile(filename: Any, backend: str | None = None) -> None:
    """Write `device_memory_profile(backend)` to `filename`."""
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)
