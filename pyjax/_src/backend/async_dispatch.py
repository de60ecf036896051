"""Async dispatch: a large jitted call runs on a worker thread while Python goes on.

JAX returns from a jitted call before the computation ends; its arrays are futures that
`block_until_ready`, printing or `np.asarray` wait for.  pyjax does the same for programs
whose work pays for the hand-off (`worth_async`: no effects, plain array results, enough
estimated work): the call returns `PendingArray`s at once and the computation joins one FIFO
worker thread, so calls run in the order they were made and a call reading another's pending
result finds it done.  Chained calls (a training loop's steps) are queued without waiting.

A `PendingArray` is an `ArrayImpl` whose `_buf` slot holds a `Result` (the job and output
index, with the shape and dtype) instead of the buffer.  Its shape, dtype and type are known
at once; reading `_buf` waits for the job, stores the buffer in the slot and turns the object
into a plain `ArrayImpl` (`__class__` assignment: the subclass adds no slots), so code that
reads `x._buf` needs no change and a finished array costs nothing more than any other.  An
error raised by the computation is raised wherever the result is read.  A finished job hands
each Result its own buffer and is let go, so an output left unread keeps only itself alive.

The worker computes with subnormals flushed (fp_mode), as every pyjax computation does.
While jobs are queued Python's thread switch interval is shortened: the worker needs the GIL
between native calls, and the default 5 ms wait for it would stall the computation behind a
busy caller.  A fork waits for every job to be done, whichever thread runs it, holding new
ones back meanwhile (the child starts its own worker); the interpreter's exit waits too.
"""
from __future__ import annotations

import atexit
import os
import queue
import sys
import threading
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.backend import cost, dispatch
from pyjax._src.backend.fp_mode import KEPT, SWITCHED, flush_off, flush_on
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, jaxpr_has_effects, jaxprs_in_params

#: estimated work (flops, transcendentals and bytes: backend/cost.py's compiled estimate) from
#: which a call runs on the worker: ~10 ms and more here.  A call read at once costs 50-300 us
#: more async on the loaded 2-core box (the reader usually runs the job itself, but the
#: worker's wake-up takes a core from the kernel's threads): 1-3% of such a call, 5-10% of a
#: 1-3 ms one.
#: PYJAX_ASYNC=force makes every eligible program async (tests), =off none.
MIN_WORK = 2 ** 26
#: a transcendental's weight in that estimate (a float32 exp or tanh is ~10 vector operations)
TRANSCENDENTAL_FLOPS = 8
_MODE = os.environ.get("PYJAX_ASYNC", "").lower()

#: Python's thread switch interval while jobs are queued (seconds)
_BUSY_SWITCH_INTERVAL = 2e-4

_SLOT = ArrayImpl.__dict__["_buf"]  # the member descriptor of ArrayImpl's `_buf` slot


class Job:
    """One queued call: the run function, its inputs (buffers or `Result`s of earlier jobs)
    and its outputs' `Result`s, which receive the buffers (or the error raised) when it is
    done.  Whichever thread claims it first runs it: the worker, or a thread that needs its
    results before the worker got to it and whose inputs are computed (no hand-off to wait
    for).  Such a reader interrupted while running it (Ctrl-C) leaves it to a new thread."""

    __slots__ = ("run", "inputs", "out_avals", "results", "claim", "done")

    def __init__(self, run: Callable, inputs: Sequence[Any], out_avals: Sequence[Any]):
        self.run, self.inputs, self.out_avals = run, inputs, out_avals
        self.results: list | None = [Result(self, i, a) for i, a in enumerate(out_avals)]
        self.claim = threading.Lock()
        self.done = threading.Event()

    def run_unless_claimed(self) -> None:
        if self.claim.acquire(False):
            self.execute(reader=False)

    def execute(self, reader: bool) -> None:
        try:
            buffers = [b if b.__class__ is np.ndarray else _input_buffer(b) for b in self.inputs]
            outs = self.run(*buffers)
            values, error = [o if o.__class__ is np.ndarray and o.dtype == a.dtype
                             else dispatch.wrap(o, a)._buf
                             for o, a in zip(outs, self.out_avals)], None
        except Exception as e:  # noqa: BLE001 - raised again where a result is read
            values, error = None, e
        except BaseException as e:
            if reader:  # (KeyboardInterrupt: the reader's, not the job's result)
                threading.Thread(target=self._run_again, name="pyjax-async-resumed",
                                 daemon=True).start()
                raise
            values, error = None, e  # (the worker's own: it goes on)
        self._finish(values, error)

    def _run_again(self) -> None:
        """Run the job a reader was interrupted in, on a thread of its own: the worker may
        be waiting for it inside a later job, so it cannot be queued behind that one."""
        flush_on(KEPT)
        self.execute(reader=False)

    def _finish(self, values: list | None, error: BaseException | None) -> None:
        """Hand each Result its buffer (or the error) and let go of the job: a result left
        unread keeps its own buffer alive, not its call's other outputs or inputs."""
        for r in self.results:
            if error is None:
                r.value = values[r.index]
            else:
                r.error, r.traceback = error, error.__traceback__
            r.job = None
        self.inputs = self.run = self.results = None
        self.done.set()
        _worker.finished()

    def ready_to_run(self) -> bool:
        """Not started, and every input computed (a reader never runs a chain of jobs)."""
        inputs = self.inputs
        return inputs is not None and all(b.__class__ is not Result or b.ready() for b in inputs)

    def wait(self) -> None:
        if not self.done.is_set():
            if self.ready_to_run() and self.claim.acquire(False):
                reader = threading.get_ident() != _worker.ident
                if flush_on(KEPT) is SWITCHED:  # (flushing as the worker)
                    try:
                        self.execute(reader)
                    finally:
                        flush_off()
                else:
                    self.execute(reader)
            self.done.wait()


class Result:
    """What a PendingArray's `_buf` slot holds until it is read: the job (until done), which
    of its outputs, the output's shape and dtype (known without waiting), and once the job
    is done the output's buffer or the error it raised (and where: each read raises it with
    that traceback, not with every earlier read's frames piled on)."""

    __slots__ = ("job", "index", "shape", "dtype", "value", "error", "traceback")

    def __init__(self, job: Job, index: int, aval: ShapedArray):
        self.job, self.index, self.shape, self.dtype = job, index, aval.shape, aval.dtype
        self.value = self.error = self.traceback = None

    def ready(self) -> bool:
        job = self.job
        return job is None or job.done.is_set()

    def buffer(self) -> np.ndarray:
        job = self.job
        if job is not None:
            job.wait()
        if self.error is not None:
            raise self.error.with_traceback(self.traceback)
        return self.value


def _input_buffer(value: Any) -> Any:
    """An input of a queued job as its run function takes it: a Result's buffer (its job ran
    earlier on this worker, or on another thread's call), anything else as it is."""
    return value.buffer() if value.__class__ is Result else value


class PendingArray(ArrayImpl):
    """An Array whose computation may still be running (see the module docstring)."""

    __slots__ = ()

    @property
    def _buf(self) -> np.ndarray:
        held = _SLOT.__get__(self)
        if held.__class__ is Result:
            held = held.buffer()
            _SLOT.__set__(self, held)
            self.__class__ = ArrayImpl
        return held

    @property
    def shape(self) -> tuple[int, ...]:
        return _SLOT.__get__(self).shape

    @property
    def dtype(self) -> np.dtype:
        return _SLOT.__get__(self).dtype

    @property
    def ndim(self) -> int:
        return len(_SLOT.__get__(self).shape)

    @property
    def size(self) -> int:
        return int(np.prod(_SLOT.__get__(self).shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return _SLOT.__get__(self).dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def aval(self) -> ShapedArray:
        held = _SLOT.__get__(self)
        return ShapedArray(held.shape, held.dtype, self._weak)

    def is_ready(self) -> bool:
        held = _SLOT.__get__(self)
        return held.__class__ is not Result or held.ready()

    def block_until_ready(self) -> ArrayImpl:
        self._buf  # noqa: B018 - waits, and raises the computation's error
        return self


def pending_input(x: PendingArray) -> Any:
    """What a queued job takes for `x`: its Result while pending, else its buffer."""
    return _SLOT.__get__(x)


def resolved(inputs: Sequence[Any]) -> Sequence[Any]:
    """`inputs` with every Result replaced by its buffer (waiting): a synchronous run's.
    Without a Result among them (nearly always), `inputs` itself: no list built."""
    if Result not in map(type, inputs):
        return inputs
    return [_input_buffer(b) for b in inputs]


def worth_async(closed: ClosedJaxpr, out_avals: Sequence[Any]) -> bool:
    """Whether calls of `closed` go to the worker: a program without effects whose results
    are plain arrays, in one process, with enough work (MIN_WORK)."""
    if _MODE == "off":
        return False
    if jaxpr_has_effects(closed.jaxpr) or _calls_python(closed.jaxpr) or not out_avals:
        return False
    if any(type(a) is not ShapedArray or not isinstance(a.dtype, np.dtype) for a in out_avals):
        return False  # (tokens, key arrays: made by their own wrappers)
    if any(a.size * a.dtype.itemsize > dispatch._MEMORY_BYTES for a in out_avals):
        return False  # (XLA's out-of-memory error, raised by the call as caller.py raises it)
    from pyjax._src.parallel import distributed
    if distributed.is_initialized():  # (collectives across processes stay in call order)
        return False
    if _MODE == "force":
        return True
    estimate = cost.compiled_cost(closed)
    work = (estimate.get("flops", 0) + TRANSCENDENTAL_FLOPS * estimate.get("transcendentals", 0)
            + estimate.get("bytes accessed", 0))
    return work >= MIN_WORK


def _calls_python(jaxpr: Jaxpr) -> bool:
    """Whether `jaxpr` (or a body it holds) calls the user's Python (`Primitive.calls_python`):
    such a program runs where it is called (the callback on the caller's thread, its errors
    at the call, as the user reads them)."""
    return any(e.primitive.calls_python or any(map(_calls_python, jaxprs_in_params(e.params)))
               for e in jaxpr.eqns)


class _Worker:
    """The FIFO worker thread (started on first use; a forked child starts its own)."""

    def __init__(self) -> None:
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.ident: int | None = None  # (the thread's)
        self.queued = 0  # jobs submitted and not done, whichever thread runs them
        self.idle = threading.Condition(self.lock)  # (notified when none is left)
        self.forks = 0  # forks under way in other threads: submissions wait for them
        self.forked = threading.Condition(self.lock)
        self.saved_interval: float | None = None

    def submit(self, job: Job) -> None:
        with self.lock:
            while self.forks:  # (else a fork waiting for the queue to empty may never fork)
                self.forked.wait()
            if self.queued == 0:
                self.saved_interval = sys.getswitchinterval()
                sys.setswitchinterval(min(self.saved_interval, _BUSY_SWITCH_INTERVAL))
            self.queued += 1
            if self.thread is None:
                self.thread = threading.Thread(target=self._loop, name="pyjax-async",
                                               daemon=True)
                self.thread.start()
                self.ident = self.thread.ident
        self.queue.put(job)

    def finished(self) -> None:
        """A job is done (run by the worker or by a reader)."""
        with self.lock:
            self.queued -= 1
            if self.queued == 0:
                sys.setswitchinterval(self.saved_interval)
                self.idle.notify_all()

    def _loop(self) -> None:
        flush_on(KEPT)  # (this thread only ever computes: subnormals stay flushed)
        while True:
            job = self.queue.get()
            job.run_unless_claimed()  # (a job a reader took, or already done: nothing)
            del job

    def drain(self) -> None:
        """Wait until every queued job has finished."""
        with self.lock:
            while self.queued:
                self.idle.wait()

    def before_fork(self) -> None:
        """Wait until every job is done, and hold new ones back until the fork is made: a job
        running at the fork (on the worker or a reader thread, which the child does not
        have) would never finish in the child."""
        with self.lock:
            self.forks += 1
            while self.queued:
                self.idle.wait()

    def after_fork_in_parent(self) -> None:
        with self.lock:
            self.forks -= 1
            if not self.forks:
                self.forked.notify_all()

    def after_fork_in_child(self) -> None:
        self.__init__()


_worker = _Worker()
os.register_at_fork(before=_worker.before_fork, after_in_parent=_worker.after_fork_in_parent,
                    after_in_child=_worker.after_fork_in_child)
atexit.register(_worker.drain)  # (no job left running in native code while Python finalizes)


def submit(run: Callable, inputs: Sequence[Any], out_avals: Sequence[Any]) -> list:
    """Queue `run(*inputs)` on the worker; its outputs as PendingArrays of `out_avals`."""
    job = Job(run, inputs, out_avals)
    results = job.results  # (the job lets go of them once done, maybe before this returns)
    _worker.submit(job)
    arrays = []
    new = object.__new__
    for result, aval in zip(results, out_avals):
        r = new(PendingArray)
        _SLOT.__set__(r, result)
        r._weak = bool(aval.weak_type)
        r._sharding = None
        arrays.append(r)
    return arrays


def wait_all() -> None:
    """Wait for every queued computation (tests; effects never run on the worker)."""
    _worker.drain()
