"""Host memory that is not fresh pages every call: glibc keeps freed buffers of up to 32 MiB
for reuse, and a pool here keeps larger ones.

By default glibc hands an allocation of more than 128 KiB (growing its threshold up to 32 MiB
as such blocks are freed) to mmap and returns it on free, and trims free memory off the top of
its heap past twice that: a jitted program that makes two 16 MB results per call gets fresh
pages every call, and touching them (the kernel zeroing each 4 KiB page) cost ~5 ms of
softmax's ~12 over (4096, 1024) float32 here.  So from the first jit compile on, blocks up to
32 MiB (glibc's largest mmap threshold) come from the heap and up to 128 MiB of free heap is
kept, as XLA's own allocator keeps its buffers.  Users who set MALLOC_MMAP_THRESHOLD_,
MALLOC_TRIM_THRESHOLD_ or MALLOC_TOP_PAD_ keep their choice; other C libraries are untouched.

Larger buffers stay mmaps, unmapped when freed: a 200 MB result of a 50M-element kernel paid
~15% of its call in page faults.  `empty` serves the outputs of native kernels and of the
impls that write large results (random bits, scatters) from `_Pool`, blocks of at least
`POOL_MIN` bytes kept after their arrays die and handed to the next output they fit.  A block
is free when nothing but the pool refers to it: every array made from it is a view whose
`base` is the block (NumPy collapses a view's base to the array owning the memory) and every
other holder of its memory (a memoryview, a DLPack capsule, ctypes' `as_ctypes`) holds such an
array, so the block's reference count says whether any user of it is alive, with no finalizer
to run.  The pool holds at most `POOL_BYTES` (handed out or free; past that, buffers are plain
NumPy ones), drops a free block that `IDLE_TAKES` large allocations in a row did not take, and
empties on `jax.clear_caches()`.
"""
from __future__ import annotations

import ctypes
import math
import os
import sys
import threading

import numpy as np

from pyjax._src import caches
from pyjax._src.backend.machine_code import data_pointer

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


#: buffers of this many bytes and more come from the pool (smaller ones are glibc's heap's)
POOL_MIN = MMAP_THRESHOLD
#: blocks are made in multiples of this (a huge page), so sizes that differ a little share them
GRAIN = 2 << 20


def _physical_memory() -> int:
    """The machine's RAM in bytes (1 GiB where the OS does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 30


#: the most bytes the pool holds, its blocks handed out or free: an eighth of RAM, at most 1 GiB
POOL_BYTES = min(_physical_memory() // 8, 1 << 30)
#: a free block not taken by this many large allocations in a row is given back to the system
IDLE_TAKES = 16


def empty(shape: tuple, dtype: np.dtype, align: int = 0) -> np.ndarray:
    """np.empty(shape, dtype), its data starting at a multiple of `align` (a power of two) when
    given; buffers of POOL_MIN bytes and more are views of a block of the pool."""
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < POOL_MIN:
        if not align:
            return np.empty(shape, dtype)
        raw = np.empty(nbytes + align, np.uint8)
    else:
        raw = _pool.take(nbytes + align)
    start = -data_pointer(raw) % align if align else 0
    return raw[start:start + nbytes].view(dtype).reshape(shape)


#: sys.getrefcount of a block that only the pool's list refers to (the list, the argument)
_UNUSED = 2


class _Pool:
    """Blocks (uint8 arrays owning their memory) for buffers of POOL_MIN bytes and more."""

    def __init__(self) -> None:
        self.blocks: list[np.ndarray] = []
        self.taken: list[int] = []  # per block: the count of takes when it was last handed out
        self.takes = 0
        self.lock = threading.Lock()

    def take(self, nbytes: int) -> np.ndarray:
        """A block of at least `nbytes` that nothing else refers to (the smallest free one of
        at most twice that, else a new one), or a plain array once the pool is full; a call
        that finds the pool busy (another thread's take, or a collector's callback inside this
        thread's) gets a plain array rather than wait."""
        if not self.lock.acquire(blocking=False):
            return np.empty(nbytes, np.uint8)
        try:
            self.takes += 1
            blocks, taken = self.blocks, self.taken
            free = [i for i in range(len(blocks)) if sys.getrefcount(blocks[i]) == _UNUSED]
            best = min((i for i in free if nbytes <= blocks[i].nbytes <= 2 * nbytes),
                       key=lambda i: blocks[i].nbytes, default=-1)
            for i in reversed(free):  # the others left idle too long go back to the system
                if i != best and self.takes - taken[i] > IDLE_TAKES:
                    self._drop(i)
                    best -= best > i
            if best >= 0:
                taken[best] = self.takes
                return blocks[best]
            size = -(-nbytes // GRAIN) * GRAIN
            held = sum(b.nbytes for b in blocks)
            if held + size > POOL_BYTES:  # free blocks make room, the longest unused first
                free = sorted((self.taken[i], i) for i in range(len(blocks))
                              if sys.getrefcount(blocks[i]) == _UNUSED)
                gone = []
                for _, i in free:
                    if held + size <= POOL_BYTES:
                        break
                    held -= blocks[i].nbytes
                    gone.append(i)
                for i in sorted(gone, reverse=True):
                    self._drop(i)
            if held + size > POOL_BYTES:
                return np.empty(nbytes, np.uint8)
            block = np.empty(size, np.uint8)
            blocks.append(block)
            self.taken.append(self.takes)
            return block
        finally:
            self.lock.release()

    def _drop(self, i: int) -> None:
        del self.blocks[i], self.taken[i]

    def clear(self) -> None:
        """Give every free block back to the system (blocks in use stay until the next take
        finds them free)."""
        with self.lock:
            for i in range(len(self.blocks) - 1, -1, -1):
                if sys.getrefcount(self.blocks[i]) == _UNUSED:
                    self._drop(i)

    def reset_after_fork(self) -> None:
        """A forked child's lock is free, whatever thread held the parent's."""
        self.lock = threading.Lock()


_pool = _Pool()
caches.register(lambda: _pool.clear())
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _pool.reset_after_fork())
