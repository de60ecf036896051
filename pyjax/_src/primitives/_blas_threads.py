"""BLAS threads chosen per call by size: a product gets one thread per `FLOPS_PER_THREAD`.

A multi-threaded BLAS hands a product to its worker threads and waits for them; on a busy
machine a descheduled worker stalls the call for a scheduler time slice (milliseconds, for a
(64,256)x(256,256) product that takes 0.1-0.2 ms on one thread).  So a product runs on at most
flops // FLOPS_PER_THREAD threads (at least one; never more than the BLAS's own setting),
set through the libraries' own setters as threadpoolctl finds them (a ctypes call, ~2 us;
threadpoolctl's context manager costs 50-300 us per use).  A process-wide count (OpenBLAS on
pthreads, BLIS, MKL) is shared by count: callers wanting the same count overlap, others wait
(arrivals queue behind waiters, so none starves); a per-thread count (OpenMP) is set and
restored by each caller.  A product's bits so depend on its shape and the BLAS's setting,
never on what other threads are doing.

The first product also warms the BLAS (`_warm`): in a fresh process OpenBLAS 0.3.31 (NumPy's,
Zen/Haswell kernels) ran float32 products with long contractions 3-3.5x slower, as long as
no larger product had yet written its packing buffer (f32 (64,256)x(256,256) on one thread:
~10 GFLOP/s, ~35-40 after one (128,256)x(256,512) float64 product, for good; (256,64)x(64,256)
was fast all along).  Its kernels prefetch past the data they packed, and prefetches into
pages never written cost on every call.  The buffers are shared by the calling threads, so
once per process is enough.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Callable

import numpy as np

#: the least work (2*batch*m*n*k) worth a BLAS thread: ~85 us on one core at ~100 GFLOP/s.
#: Measured medians, jit(grad) of a width-256 batch-64 tanh MLP (8.4e6-flop products): on 2
#: shared cores 0.8-1.7 ms vs 0.7-78 ms unlimited (by load); on 16 idle cores 0.9 vs 0.6.
#: The 784-512-512-10 MLP step on 16 idle cores: 1.9 ms unlimited, 2.1 at 2^23, 2.4 at 2^24
#: 3.5 at 2^25.  (OpenBLAS's bits depend on its thread count: most products over ~1e6 flops
#: differ by rounding between one thread and several.)
FLOPS_PER_THREAD = 1 << 23
#: below this the BLAS runs single-threaded by itself (OpenBLAS: gemv under 9216 elements,
#: gemm under 262144 multiply-adds), so callers skip `enter`/`leave`
FLOOR_FLOPS = 2 * 9216

_lock = threading.Lock()  # (a plain lock: `with _lock` costs less than `with _cond`)
_cond = threading.Condition(_lock)
_found = threading.Lock()  # held while the libraries are looked up and warmed
#: np.dot's C function, without the __array_function__ dispatch
_np_dot = getattr(np.dot, "_implementation", np.dot)
_libs: tuple[list, list] | None = None  # (process-wide, per-thread) (get, set) pairs
_default: list[int] = []  # each process-wide library's own count, read while none is active
_active = 0  # calls running under the current count
_count = 0  # the thread count set for them
_waiting: dict[int, int] = {}  # callers waiting, per wanted count
_CORES = os.cpu_count() or 1  # counts above this all mean "the BLAS's own setting"


def _pair(lib: Any) -> tuple[Callable[[], int], Callable[[int], Any]]:
    """The library's (get, set) of its thread count: OpenBLAS's own C functions where
    threadpoolctl finds them (a ctypes call, ~0.3 us; its Python wrappers cost ~1.3 us each,
    and its `set_num_threads` ignores calls from any thread but the first that used it, which
    this module's lock makes unneeded), else threadpoolctl's."""
    symbol = getattr(lib, "_get_symbol", None)
    if lib.internal_api == "openblas" and lib.threading_layer != "openmp" and symbol:
        get, set_ = symbol("openblas_get_num_threads"), symbol("openblas_set_num_threads")
        if get is not None and set_ is not None:
            return get, set_
    return (lambda: lib.num_threads), getattr(lib, "_real_set_num_threads", lib.set_num_threads)


def _blas() -> tuple[list, list]:
    """The loaded BLAS libraries' (get, set) pairs, found (and the BLAS warmed) once, split
    into process-wide and per-thread (OpenMP) counts; none when threadpoolctl is missing or
    fails."""
    global _libs
    if _libs is None:
        with _found:
            if _libs is None:
                try:
                    from threadpoolctl import ThreadpoolController
                    found = ThreadpoolController().select(user_api="blas").lib_controllers
                except Exception:  # noqa: BLE001 - no control: the BLAS keeps its own threads
                    found = []
                pairs = [(lib, _pair(lib)) for lib in found]
                libs = ([p for lib, p in pairs if lib.threading_layer != "openmp"],
                        [p for lib, p in pairs if lib.threading_layer == "openmp"])
                if any(lib.internal_api == "openblas" for lib in found):
                    _warm(libs[0])
                _libs = libs
    return _libs


def _warm(shared: list) -> None:
    """One (128, 256) x (256, 512) float64 product (~2 ms) on one BLAS thread, which writes
    OpenBLAS's packing buffer as far as products on one thread use it (see the module's
    docstring); its result is dropped."""
    counts = [get() for get, _ in shared]
    for (_, set_), n in zip(shared, counts):
        if n > 1:
            set_(1)
    try:
        _np_dot(np.ones((128, 256)), np.ones((256, 512)))
    finally:
        for (_, set_), n in zip(shared, counts):
            if n > 1:
                set_(n)


def _blocked(want: int) -> bool:
    """Whether a caller wanting `want` threads must wait: another count runs or waits."""
    return _active > 0 and (_count != want or any(c != want for c in _waiting))


def enter(flops: int) -> list:
    """Start a BLAS product of `flops`: wait while other counts run or wait, then set each
    library to min(its own count, flops // FLOPS_PER_THREAD) threads, at least 1 (process-wide
    ones by the first caller in).  Returns what `leave` restores for this thread."""
    global _active, _count, _default
    want = max(1, min(flops // FLOPS_PER_THREAD, _CORES))
    shared, local = _libs or _blas()
    with _lock:
        if _active and _blocked(want):
            _waiting[want] = _waiting.get(want, 0) + 1
            while _blocked(want):
                _cond.wait()
            _waiting[want] -= 1
            if not _waiting[want]:
                del _waiting[want]
        if not _active:  # (a count of _CORES or more lowers nothing: no need to read them)
            _default = [get() for get, _ in shared] if want < _CORES else []
            for (_, set_), n in zip(shared, _default):
                if want < n:
                    set_(want)
            _count = want
        _active += 1
    if not local:
        return local
    restore = []
    for get, set_ in local:
        n = get()
        if want < n:
            set_(want)
            restore.append((set_, n))
    return restore


def leave(restore: list) -> None:
    """End a BLAS product: restore this thread's per-thread counts; the last caller out
    restores the process-wide ones."""
    global _active
    for set_, n in restore:
        set_(n)
    with _lock:
        _active -= 1
        if not _active:
            for (_, set_), n in zip(_blas()[0], _default):
                if _count < n:
                    set_(n)
            if _waiting:
                _cond.notify_all()
