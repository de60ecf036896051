"""glibc's allocator asked to keep freed buffers of up to 32 MiB for reuse.

By default glibc hands an allocation of more than 128 KiB (growing its threshold up to 32 MiB
as such blocks are freed) to mmap and returns it on free, and trims free memory off the top of
its heap past twice that: a jitted program that makes two 16 MB results per call gets fresh
pages every call, and touching them (the kernel zeroing each 4 KiB page) cost ~5 ms of
softmax's ~12 over (4096, 1024) float32 here.  So from the first jit compile on, blocks up to
32 MiB (glibc's largest mmap threshold) come from the heap and up to 128 MiB of free heap is
kept, as XLA's own allocator keeps its buffers.  Users who set MALLOC_MMAP_THRESHOLD_,
MALLOC_TRIM_THRESHOLD_ or MALLOC_TOP_PAD_ keep their choice; other C libraries are untouched.
"""
from __future__ import annotations

import ctypes
import os

MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 128 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")

_done = False


def keep_freed_buffers() -> None:
    """Set the thresholds once per process (a no-op off glibc or when the user set them)."""
    global _done
    if _done:
        return
    _done = True
    if any(name in os.environ for name in _USER_SETTINGS):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
