"""BLAS calls and threads: how many threads the BLAS runs a call on, and who runs a product.

A multi-threaded BLAS hands a call to its worker threads and waits for them; on a busy
machine a descheduled worker stalls the call for a scheduler time slice (milliseconds, for a
(64,256)x(256,256) product that takes 0.2 ms on one thread), and after each call OpenBLAS's
workers spin for ~0.1 s, taking a core from the kernels that follow.  So:

- A product (dot.py) always runs on one BLAS thread.  One of at least 2 * PIECE_FLOPS is
  computed as `pieces(flops)` smaller products (blocks of the batch, rows or columns), taken
  one at a time by the caller and, while the CPUs have room (`_room`: Linux's CPU pressure),
  by helper threads (`shared`).  The caller never waits for a helper that has not started,
  and the pieces depend on the work alone: a product's bits depend on its shapes, never on
  the machine's cores, the load, or who computed which piece.
- Other BLAS/LAPACK calls (linalg.py) run on at most flops // FLOPS_PER_THREAD of the BLAS's
  threads (at least one; never more than its own setting), through `enter`/`leave`.

Counts are set through the libraries' own setters (OpenBLAS's C functions, ~0.3 us;
threadpoolctl's context manager costs 50-300 us per use).  A process-wide count (OpenBLAS on
pthreads, BLIS, MKL) is shared by count: callers wanting the same count overlap, others wait
(arrivals queue behind waiters, so none starves); a per-thread count (OpenMP) is set and
restored by each caller.

The first call also warms the BLAS (`_warm`): in a fresh process OpenBLAS 0.3.31 (NumPy's,
Zen/Haswell kernels) ran float32 products with long contractions 3-3.5x slower, as long as
no larger product had yet written its packing buffer (f32 (64,256)x(256,256) on one thread:
~10 GFLOP/s, ~35-40 after one (128,256)x(256,512) float64 product, for good; (256,64)x(64,256)
was fast all along).  Its kernels prefetch past the data they packed, and prefetches into
pages never written cost on every call.  The buffers are shared by the calling threads, so
once per process is enough.
"""
from __future__ import annotations

import os
import queue
import threading
import time
from typing import Any, Callable

import numpy as np

from pyjax._src.backend import fp_mode

#: the least work (flops) of a LAPACK call's step worth a BLAS thread: ~85 us on one core at
#: ~100 GFLOP/s.  (Measured on products before they ran in pieces: jit(grad) of a width-256
#: batch-64 tanh MLP (8.4e6-flop products) on 2 shared cores 0.8-1.7 ms vs 0.7-78 ms with the
#: BLAS's threads unlimited (by load); on 16 idle cores 0.9 vs 0.6.  OpenBLAS's bits depend on
#: its thread count: most products over ~1e6 flops differ by rounding between one thread and
#: several.)
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
    """`_warm_product` on one BLAS thread (see the module's docstring)."""
    counts = [get() for get, _ in shared]
    for (_, set_), n in zip(shared, counts):
        if n > 1:
            _set(set_, 1)
    try:
        _warm_product()
    finally:
        for (_, set_), n in zip(shared, counts):
            if n > 1:
                _set(set_, n)


def _warm_product() -> None:
    """One (128, 256) x (256, 512) float64 product (~2 ms on one thread), which writes the
    OpenBLAS packing buffer it runs in as far as products on one thread use it; its result is
    dropped."""
    _np_dot(np.ones((128, 256)), np.ones((256, 512)))


def _set(set_: Callable[[int], Any], n: int) -> None:
    """set_(n), a BLAS's thread count set with subnormals kept: OpenBLAS stops its threads at
    a fork and starts them again at the next change of its count, and a new thread copies the
    MXCSR of the one starting it, so threads started inside a flushing operation would flush
    in the user's own NumPy products for good."""
    fp_mode.run_unflushed(set_, n)


def _blocked(want: int) -> bool:
    """Whether a caller wanting `want` threads must wait: another count runs or waits."""
    return _active > 0 and (_count != want or bool(_waiting) and any(
        c != want for c in _waiting))


def _wait_for(want: int) -> None:
    """Wait (holding `_lock` in between) while `_blocked(want)`, queued among the waiters."""
    if not _blocked(want):
        return
    _waiting[want] = _waiting.get(want, 0) + 1
    while _blocked(want):
        _cond.wait()
    _waiting[want] -= 1
    if not _waiting[want]:
        del _waiting[want]


def enter(flops: int) -> list:
    """Start a BLAS product of `flops`: wait while other counts run or wait, then set each
    library to min(its own count, flops // FLOPS_PER_THREAD) threads, at least 1 (process-wide
    ones by the first caller in).  Returns what `leave` restores for this thread."""
    global _active, _count, _default
    want = flops // FLOPS_PER_THREAD
    want = 1 if want < 1 else want if want < _CORES else _CORES
    shared, local = _libs or _blas()
    with _lock:
        if _active:  # (the common case of products on one thread each: the same count)
            if _count != want or _waiting:
                _wait_for(want)
        if not _active:  # (a count of _CORES or more lowers nothing: no need to read them)
            _default = defaults = []
            if want < _CORES:
                for get, set_ in shared:
                    n = get()
                    defaults.append(n)
                    if want < n:
                        _set(set_, want)
            _count = want
        _active += 1
    if not local:
        return local
    restore = []
    for get, set_ in local:
        n = get()
        if want < n:
            _set(set_, want)
            restore.append((set_, n))
    return restore


def leave(restore: list) -> None:
    """End a BLAS product: restore this thread's per-thread counts; the last caller out
    restores the process-wide ones."""
    global _active
    for set_, n in restore:
        _set(set_, n)
    with _lock:
        _active -= 1
        if not _active:
            for (_, set_), n in zip(_libs[0], _default):  # (enter found the libraries)
                if _count < n:
                    _set(set_, n)
            if _waiting:
                _cond.notify_all()


#: a product of at least twice this much work is split into pieces of at least this much
#: (~0.2 ms on one core at ~40 GFLOP/s, f32), at most MAX_PIECES of them (`pieces`).  Cutting
#: costs: a (64,256)x(256,256) f32 product on one thread took 215-223 us of CPU whole, 240-246
#: in 2 column blocks, 254-258 in 4; a (2048,256)x(256,256) one 6.35 ms whole, 6.49 in 8 row
#: blocks, 6.67 in 16.  At 1 << 22 the width-256 MLP's (64,256)x(256,256) products would run
#: in 2 pieces, for nothing: jit(grad) at depth 8 with the CPUs crowded (no helper) took 7.0 ms
#: per step instead of 6.7 (~6.5 runnable tasks on 2 cores), and on the 2 idle cores, with a
#: helper taking a piece of each, depth 32 took 26.4-26.7 ms instead of 25.8-26.2 (process CPU
#: 46-47 ms instead of 26: pieces of ~0.1 ms cost more to hand over than they save); while the
#: attention block's ~0.8 ms pieces ran on both (8 heads of 256, d 256: 21.2-21.9 ms, CPU 41;
#: with OpenBLAS's own 2 threads 23.1; JAX 22.3-25.1 in the same quiet minutes).
PIECE_FLOPS = 1 << 23
MAX_PIECES = 8


def pieces(flops: int) -> int:
    """How many pieces a product of `flops` is computed in (0: whole, on one BLAS thread).
    The count depends on the work alone, so a product's bits do not depend on the machine's
    cores or on what else runs."""
    count = min(MAX_PIECES, flops // PIECE_FLOPS)
    return count if count >= 2 else 0


def shared(count: int, run: Callable[[int], Any]) -> None:
    """run(i) for every i in range(count), each on one BLAS thread, taken one at a time by
    the caller and, while the CPUs have room (`_room`: no task waited long for a CPU; or
    `_left`: other processes left this one a core for a helper), by up to (cores - 1) helper
    threads beside it.  The caller waits only for pieces a helper has taken, never for a helper that a
    busy core has not run yet (where the BLAS's own threads made a 0.2 ms product take a
    scheduler slice on a loaded machine); and since the BLAS never runs threads of its own,
    none is left spinning after a product to take a core from the next step's kernels.  A
    piece that raised is raised here after the others, which are skipped."""
    helpers = min(_CORES - 1, count - 1) if _room() or _left() else 0
    if not helpers:
        restore = enter(0)
        try:
            for i in range(count):
                run(i)
        finally:
            leave(restore)
        return
    job = _Job(count, run)
    _start_helpers(helpers)
    flushing = fp_mode.flush_on(fp_mode.KEPT) is fp_mode.KEPT
    if not flushing:
        fp_mode.flush_off()
    for _ in range(helpers):
        _jobs.put((job, flushing))
    job.take()
    job.finished.acquire()  # every piece finished, by whichever thread took it
    if job.errors:
        raise job.errors[0]


#: the least work (flops) of a whole product that `defer` starts on a helper thread: the
#: hand-off costs ~10-20 us, a 2^21-flop product takes ~60 us on one core
DEFER_FLOPS = 1 << 21


class Pending:
    """A product `defer` started: `result()` is its value, computed by the caller itself when
    no helper has taken it yet, else waited for."""

    __slots__ = ("job", "value")

    def result(self) -> Any:
        job = self.job
        if job is not None:
            self.job = None  # (and the cycle through the job's closure is gone)
            job.take()
            job.finished.acquire()
            if job.errors:
                raise job.errors[0]
        return self.value


def defer(fn: Callable[..., Any], *args: Any) -> Pending:
    """fn(*args), a product on one BLAS thread, handed to a helper thread while other
    processes leave this one a core for it (`_left`), so that the caller goes on with work
    that does not need it (XLA runs independent products at once too: a grad step's weight
    gradients beside the gradient it sends down); else computed here and now.  Where it runs
    never changes its bits."""
    pending = Pending()
    if _CORES < 2 or not _left():
        pending.job, pending.value = None, fn(*args)
        return pending

    def run(_: int) -> None:
        pending.value = fn(*args)
    pending.job = job = _Job(1, run)
    _start_helpers(1)
    flushing = fp_mode.flush_on(fp_mode.KEPT) is fp_mode.KEPT
    if not flushing:
        fp_mode.flush_off()
    _jobs.put((job, flushing))
    return pending


class _Job:
    """The pieces of one product: handed out one at a time; `finished` (held until then) is
    released by whichever thread finishes the last."""

    __slots__ = ("run", "items", "left", "lock", "finished", "errors")

    def __init__(self, count: int, run: Callable[[int], Any]) -> None:
        self.run = run
        self.items = iter(range(count))
        self.left = count
        self.lock = threading.Lock()
        self.finished = threading.Lock()
        self.finished.acquire()
        self.errors: list[BaseException] = []

    def take(self) -> None:
        """Pieces until none is left, on one BLAS thread (one that failed leaves its exception
        in `errors`; the rest are skipped)."""
        restore = enter(0)
        try:
            for i in self.items:
                try:
                    if not self.errors:
                        self.run(i)
                except BaseException as e:  # noqa: BLE001 - the caller raises it
                    self.errors.append(e)
                with self.lock:
                    self.left -= 1
                    last = not self.left
                if last:
                    self.finished.release()
        finally:
            leave(restore)


#: where Linux reports CPU pressure: the time (us) some runnable task waited for a CPU
_PRESSURE = "/proc/pressure/cpu"
#: the pressure is read at most once per this many seconds, the answer kept in between
_WINDOW = 0.05
#: the share of the time some task waited, over the last window, above which helpers are not
#: asked: the CPUs are taken by others, and a helper only adds its hand-off
_CROWDED = 0.25
_pressure: list = [-_WINDOW, -1, True]  # when last read, the total then, the answer


def _room() -> bool:
    """Whether the CPUs had room over the last window: some task waited for a CPU less than
    _CROWDED of the time (answered yes where Linux does not report pressure).  Which thread
    computes a piece never changes its bits: this decides speed only.  jit(grad) of the
    width-256 batch-64 tanh MLP cut into 2 pieces per product (PIECE_FLOPS = 1 << 22), 8
    layers, on the 2 shared cores with ~6.5 runnable tasks: 7.0 ms per step with the caller
    taking every piece, 8.3 with a helper asked (process CPU 6.8 -> 7.9 ms): a helper is only
    worth its hand-off on a core of its own."""
    answer = _windowed(_pressure, _WINDOW, _waited_us,
                       lambda waited, seconds: waited < _CROWDED * seconds * 1e6)
    if answer is None:  # no pressure reported: never ask again
        _pressure[:] = [float("inf"), -1, True]
        return True
    return answer


def _waited_us() -> int:
    """The time (us) some runnable task has waited for a CPU since boot."""
    with open(_PRESSURE, "rb") as f:
        return int(f.readline().rsplit(b"total=", 1)[1])


def _windowed(state: list, window: float, read: Callable[[], float],
              judge: Callable[[float, float], bool]) -> bool | None:
    """`judge(growth of read(), seconds)` over the last window, `state` holding [when last
    read, the value then, the answer], read at most once per `window` seconds (the answer
    kept in between; yes before a first window); None where read() fails."""
    now = time.monotonic()
    last, before, answer = state
    if now - last < window:
        return answer
    try:
        value = read()
    except (OSError, ValueError, IndexError):
        return None
    answer = before < 0 or judge(value - before, now - last)
    state[:] = [now, value, answer]
    return answer


#: where Linux counts the CPUs' idle time (its first line: all CPUs, in clock ticks)
_STAT = "/proc/stat"
_TICK = 1 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)
#: the window (s; clock ticks are 10 ms) over which `_left` judges what was left
_LEFT_WINDOW = 0.1


def _idle_seconds() -> float:
    """The CPUs' idle (and iowait) time since boot, in seconds of one CPU."""
    with open(_STAT, "rb") as f:
        fields = f.readline().split()
    return (int(fields[4]) + int(fields[5])) * _TICK


#: cores other processes must have left this one (idle, or running it) over the last window
#: for `_left` to answer yes: the caller's and most of a helper's
_LEFT = 1.5
_left_state: list = [-_LEFT_WINDOW, -1.0, True]  # when last read, free seconds then, answer


def _left() -> bool:
    """Whether other processes left this one at least _LEFT cores over the last window (the
    CPUs' idle time plus this process's own CPU time; `_room` where Linux does not say): it
    decides deferred products, helpers under CPU pressure, and tier 1's gate of mid-size
    kernels (engine.gate), whose second thread likewise needs a core of its own.  A
    deferred product is worth its hand-off only on a core of its own: with one other busy
    process on the 2 cores the helper's products only took turns with the caller's, and cost
    ~10% more (cross-core caches): jit(grad) of the width-256 MLP at depth 8 6.0 -> 6.6 ms;
    the CPUs then leave this process 1-1.33 cores, however many threads it runs.  Its own
    time counts as left to it, so that its own threads do not close the gate: measured as
    idle time alone, a window in which the caller and a helper (or a 2-thread kernel) kept
    both cores busy left none idle, and the next window ran on one thread.  Pieces of products ask
    helpers when either this or `_room` says so: CPU pressure counts this process's own
    helper waiting behind others' passing load, and closed while the CPUs were mostly free
    (attention block forward on one thread, 41-51 ms, while JAX ran it on both cores in
    23.8 in the same minute)."""
    answer = _windowed(_left_state, _LEFT_WINDOW, _free_seconds,
                       lambda free, seconds: free >= _LEFT * seconds)
    return _room() if answer is None else answer  # (not reported: CPU pressure decides)


def _free_seconds() -> float:
    """The CPUs' idle (and iowait) time since boot plus this process's CPU time, in seconds
    of one CPU: what other processes have left it."""
    return _idle_seconds() + _own_seconds()


#: this process's CPU time (s), all its threads
_own_seconds = time.process_time


_jobs: "queue.SimpleQueue" = queue.SimpleQueue()
_helpers: list[threading.Thread] = []
_helpers_lock = threading.Lock()


def _help(warmed: threading.Event) -> None:
    """A helper thread: warms the BLAS buffer it will use, then takes pieces of products
    beside their callers, flushing subnormals as the caller does (MXCSR is per thread)."""
    restore = enter(0)
    try:
        _warm_product()
    finally:
        leave(restore)
    warmed.set()
    while True:
        job, flushing = _jobs.get()
        if flushing:
            fp_mode.flush_on(fp_mode.KEPT)
        else:
            fp_mode.flush_off()
        job.take()


def _start_helpers(n: int) -> None:
    """At least n helper threads running.  OpenBLAS gives calls running at the same time
    buffers of their own, each as cold as the first was (two threads' concurrent (256,256)^2
    products on one BLAS thread each: ~42 and ~11 GFLOP/s of CPU time): so while new helpers
    warm theirs, the caller keeps warming products running, and each lands in a buffer of its
    own."""
    if len(_helpers) >= n:
        return
    with _helpers_lock:
        events = []
        while len(_helpers) < n:
            events.append(threading.Event())
            _helpers.append(threading.Thread(target=_help, args=(events[-1],),
                                             name="pyjax-blas", daemon=True))
            _helpers[-1].start()
        restore = enter(0)
        try:
            while not all(e.is_set() for e in events):
                _warm_product()
        finally:
            leave(restore)


def _after_fork_in_child() -> None:
    """A forked child has only the thread that forked, which held `_lock` across the fork
    (so no other thread was inside enter/leave): it starts with no products running, the
    BLAS's counts as they were before any that ran in the parent, and helper threads of its
    own, with no jobs."""
    global _lock, _cond, _active, _waiting, _jobs
    if _active and _libs is not None:
        for (_, set_), n in zip(_libs[0], _default):
            if _count < n:
                _set(set_, n)
    _active, _waiting = 0, {}
    _lock = threading.Lock()
    _cond = threading.Condition(_lock)
    _helpers.clear()
    _jobs = queue.SimpleQueue()


os.register_at_fork(before=lambda: _lock.acquire(), after_in_parent=lambda: _lock.release(),
                    after_in_child=_after_fork_in_child)
