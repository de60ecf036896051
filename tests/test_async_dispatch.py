"""Async dispatch (backend/async_dispatch.py): large jitted calls return pending Arrays while a
worker thread computes them, in call order; reading one waits; results equal the synchronous
run's bits; errors surface where results are read."""
import gc
import os
import pickle
import sys
import threading
import time
import traceback
import weakref

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.backend import async_dispatch
from pyjax._src.backend.async_dispatch import PendingArray
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray


@pytest.fixture
def every_call_async(monkeypatch):
    """Every eligible program runs on the worker, whatever its size."""
    monkeypatch.setattr(async_dispatch, "_MODE", "force")
    pyjax.clear_caches()
    yield
    async_dispatch.wait_all()
    pyjax.clear_caches()


@pytest.fixture
def by_size(monkeypatch):
    """The default rule: programs of MIN_WORK and more run on the worker (a lower bound
    here, so the test's arrays stay small)."""
    monkeypatch.setattr(async_dispatch, "_MODE", "")
    monkeypatch.setattr(async_dispatch, "MIN_WORK", 2 ** 22)
    pyjax.clear_caches()
    yield
    async_dispatch.wait_all()
    pyjax.clear_caches()


def _gated(value: np.ndarray) -> tuple[PendingArray, threading.Event]:
    """A pending Array whose job returns `value` only once the event is set."""
    gate = threading.Event()

    def run():
        assert gate.wait(30)
        return [value]
    (out,) = async_dispatch.submit(run, [], [ShapedArray(value.shape, value.dtype, False)])
    return out, gate


class _disabled:
    """jax_cpu_enable_async_dispatch off inside the block."""

    def __enter__(self):
        pyjax.config.update("jax_cpu_enable_async_dispatch", False)

    def __exit__(self, *exc):
        pyjax.config.update("jax_cpu_enable_async_dispatch", True)


def _bits(x):
    return np.asarray(x).reshape(-1).view(np.uint8)


def test_large_call_is_pending_and_equals_the_synchronous_bits(by_size):
    f = pyjax.jit(lambda x: jnp.tanh(x) * 2.0 + jnp.sin(x))
    x = jnp.linspace(-3, 3, 1 << 21, dtype=jnp.float32)
    f(x)  # (the first call compiles and decides)
    y = f(x)
    assert type(y) is PendingArray and y.shape == x.shape and y.dtype == jnp.float32
    with _disabled():
        expected = f(x)
    assert type(expected) is ArrayImpl
    np.testing.assert_array_equal(_bits(y), _bits(expected))
    assert type(y) is ArrayImpl and y.is_ready()  # (read once: a plain Array from then on)


def test_small_call_stays_synchronous(by_size):
    f = pyjax.jit(lambda x: x * 2 + 1)
    x = jnp.ones((8,))
    f(x)
    assert type(f(x)) is ArrayImpl


def test_pending_metadata_does_not_wait(every_call_async):
    p, gate = _gated(np.arange(6, dtype=np.float32).reshape(2, 3))
    t = time.perf_counter()
    assert (p.shape, p.dtype, p.ndim, p.size, p.nbytes) == ((2, 3), np.float32, 2, 6, 24)
    assert p.aval == ShapedArray((2, 3), np.dtype(np.float32), False)
    assert not p.is_ready() and not p.weak_type
    assert time.perf_counter() - t < 5
    gate.set()
    np.testing.assert_array_equal(p.block_until_ready(), np.arange(6).reshape(2, 3))
    assert p.is_ready()


def test_calls_queue_behind_pending_arguments_without_waiting(every_call_async):
    f = pyjax.jit(lambda x: x * 3.0 + 1.0)
    g = pyjax.jit(lambda d: {"s": d["a"] + d["b"], "n": -d["a"]})
    f(jnp.ones((2, 3)))  # compiled (its first call runs where it is called)
    g({"a": jnp.ones((2, 3)), "b": jnp.ones((2, 3))})
    p, gate = _gated(np.arange(6, dtype=np.float32).reshape(2, 3))
    done = []

    def chain():  # if a call waited for p this thread would block until the gate opens
        q = f(p)
        done.append((q, g({"a": q, "b": p}), f(q)))
    worker = threading.Thread(target=chain)
    worker.start()
    worker.join(10)
    assert done, "a call on a pending argument waited for it"
    q, d, r = done[0]
    assert all(type(v) is PendingArray for v in (q, d["s"], d["n"], r))
    gate.set()
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(q, base * 3 + 1)
    np.testing.assert_array_equal(d["s"], base * 3 + 1 + base)
    np.testing.assert_array_equal(d["n"], -(base * 3 + 1))
    np.testing.assert_array_equal(r, (base * 3 + 1) * 3 + 1)


def test_a_synchronous_program_waits_for_its_pending_argument(every_call_async, monkeypatch):
    p, gate = _gated(np.full((4,), 2.0, np.float32))
    threading.Timer(0.2, gate.set).start()
    monkeypatch.setattr(async_dispatch, "_MODE", "off")
    f = pyjax.jit(lambda x: x + 1.0)
    out = f(p)
    assert type(out) is ArrayImpl
    np.testing.assert_array_equal(out, [3.0] * 4)


def test_errors_are_raised_where_the_result_is_read(every_call_async):
    def run():
        raise FloatingPointError("in the computation")
    (p,) = async_dispatch.submit(run, [], [ShapedArray((3,), np.dtype(np.float32), False)])
    f = pyjax.jit(lambda x: x * 2.0)
    f(jnp.ones(3))
    q = f(p)  # (queued behind the failing job: fails the same way)
    for x in (p, q):
        with pytest.raises(FloatingPointError, match="in the computation"):
            x.block_until_ready()
        with pytest.raises(FloatingPointError):
            np.asarray(x)
        assert x.is_ready()


def test_pending_arrays_work_everywhere_an_array_does(every_call_async):
    f = pyjax.jit(lambda x: jnp.exp(x) - 1.0)
    x = jnp.arange(12.0).reshape(3, 4) / 12
    expected = np.expm1(np.arange(12.0, dtype=np.float32).reshape(3, 4) / 12)
    for read in (np.asarray, lambda y: y[1:], lambda y: jnp.add(y, 0.0), lambda y: y + 0.0,
                 lambda y: y.sum(0), lambda y: pickle.loads(pickle.dumps(y)),
                 lambda y: pyjax.device_get(y), lambda y: pyjax.vmap(jnp.sin)(y),
                 lambda y: pyjax.grad(lambda v: jnp.sum(f(v)))(y),
                 lambda y: pyjax.tree.map(lambda v: v * 1.0, [y])[0]):
        ref = read(jnp.asarray(expected))
        got = read(f(x))
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=2e-6)
    y = f(x)
    assert repr(y).startswith("Array(") and y.tolist()[0][0] == 0.0
    assert f(x).weak_type is False


def test_weak_types_and_scalars(every_call_async):
    f = pyjax.jit(lambda a, b: a * b + 1.0)
    f(2.0, 3.0)
    y = f(2.0, 3.0)
    assert y.weak_type and y.dtype == jnp.float32 and float(y) == 7.0


def _in_threads(work, timeout: float, n: int = 8) -> list:
    """Run work(0) ... work(n - 1) on n threads at once; the exceptions they raised."""
    errors = []

    def guarded(i):
        try:
            work(i)
        except Exception as e:  # noqa: BLE001 - reported to the test
            errors.append(e)
    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    return errors


def test_concurrent_calls_from_eight_threads(every_call_async):
    f = pyjax.jit(lambda x, k: jnp.cumsum(x * k) + k)
    xs = [jnp.arange(1000.0) + i for i in range(8)]
    f(xs[0], 1.0)
    results = {}

    def work(i):
        results[i] = [np.asarray(f(xs[i], float(k))) for k in range(20)]
    assert not _in_threads(work, 60) and len(results) == 8
    for i in range(8):
        for k in range(20):
            ref = np.cumsum((np.arange(1000.0, dtype=np.float32) + i) * k) + k
            np.testing.assert_allclose(results[i][k], ref, rtol=1e-6)


def test_disabled_by_config(every_call_async):
    f = pyjax.jit(lambda x: x + 1.0)
    f(jnp.ones(4))
    with _disabled():
        assert type(f(jnp.ones(4))) is ArrayImpl
    assert type(f(jnp.ones(4))) is PendingArray


def test_numpy_arguments_run_synchronously(every_call_async):
    f = pyjax.jit(lambda x: x * 2.0)
    buf = np.ones(4, np.float32)
    f(buf)
    y = f(buf)
    buf[:] = 5  # (the caller may change their array once the call returned)
    np.testing.assert_array_equal(y, [2.0] * 4)


def test_switch_interval_restored_when_idle(every_call_async):
    before = sys.getswitchinterval()
    p, gate = _gated(np.zeros(2, np.float32))
    assert sys.getswitchinterval() <= async_dispatch._BUSY_SWITCH_INTERVAL
    gate.set()
    p.block_until_ready()
    async_dispatch.wait_all()
    assert sys.getswitchinterval() == before


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_waits_for_queued_work_and_the_child_computes(every_call_async):
    f = pyjax.jit(lambda x: x * 2.0)
    f(jnp.ones(3))
    p, gate = _gated(np.full((3,), 4.0, np.float32))
    threading.Timer(0.2, gate.set).start()
    q = f(p)
    pid = os.fork()
    if pid == 0:  # the child: the parent's work finished before the fork; its own runs
        ok = np.array_equal(np.asarray(q), [8.0] * 3) and np.array_equal(
            np.asarray(f(q)), [16.0] * 3)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    np.testing.assert_array_equal(q, [8.0] * 3)


def test_programs_calling_python_run_where_they_are_called(every_call_async):
    seen = []

    def host(v):
        seen.append(threading.current_thread())
        return np.asarray(v) * 2

    f = pyjax.jit(lambda x: pyjax.lax.cond(
        x[0] > 0, lambda v: pyjax.pure_callback(host, pyjax.ShapeDtypeStruct((3,), jnp.float32), v),
        lambda v: v, x))
    f(jnp.ones(3))
    y = f(jnp.ones(3))
    assert type(y) is ArrayImpl and seen[-1] is threading.current_thread()


def test_a_reader_runs_a_job_the_worker_has_not_started(every_call_async):
    busy, gate = _gated(np.zeros(2, np.float32))  # (the worker waits in this job)
    f = pyjax.jit(lambda x: x + 1.0)
    f(jnp.ones(2))
    y = f(jnp.ones(2))  # queued behind `busy`, independent of it
    t = time.perf_counter()
    np.testing.assert_array_equal(y, [2.0, 2.0])  # (computed here: the gate is still shut)
    assert time.perf_counter() - t < 10 and not busy.is_ready()
    gate.set()
    busy.block_until_ready()


def test_pmap_and_shard_map_results_are_placed_when_computed_async():
    """pmap and shard_map lay their (possibly pending) results out over the devices."""
    import subprocess
    script = """
import numpy as np, pyjax as jax, pyjax.numpy as jnp
from pyjax.sharding import Mesh, PartitionSpec as P
x = jnp.arange(16.0).reshape(4, 4)
y = jax.pmap(lambda v: v * 2.0)(x)
mesh = Mesh(np.array(jax.devices()), ("i",))
z = jax.shard_map(lambda v: v + 1.0, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(x)
print(len(y.devices()), len(z.devices()), float(y.sum()), float(z.sum()))
"""
    env = dict(os.environ, PYJAX_NUM_CPU_DEVICES="4", PYJAX_ASYNC="force")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True, timeout=120).stdout.split()
    assert out == ["4", "4", "240.0", "136.0"]


def test_a_reader_waits_for_a_long_chain_rather_than_running_it(every_call_async):
    """A chain of thousands of queued calls read at its end: the reader waits for the worker
    (running the chain itself, newest first, would recurse once per call)."""
    f = pyjax.jit(lambda x: x + 1.0)
    f(jnp.zeros(2))
    busy, gate = _gated(np.zeros(2, np.float32))
    x = busy
    for _ in range(3000):
        x = f(x)
    threading.Timer(0.1, gate.set).start()
    np.testing.assert_array_equal(x, [3000.0, 3000.0])


# ---------------------------------------------------------------------------------------------
# A second reading: races, failures, memory and the places a pending Array travels to
# ---------------------------------------------------------------------------------------------

def _aval(value: np.ndarray) -> ShapedArray:
    return ShapedArray(value.shape, value.dtype, False)


def _job(x: PendingArray) -> async_dispatch.Job:
    return async_dispatch._SLOT.__get__(x).job


def test_an_aot_compiled_call_takes_a_pending_argument(every_call_async):
    """jit(f).lower(x).compile()(y) with y still computing: the compiled call waits for y
    and computes before it returns (AOT calls stay synchronous)."""
    f = pyjax.jit(lambda x: x * 2.0)
    compiled = f.lower(jnp.ones(4)).compile()
    p, gate = _gated(np.full(4, 3.0, np.float32))
    threading.Timer(0.1, gate.set).start()
    out = compiled(p)
    assert type(out) is ArrayImpl
    np.testing.assert_array_equal(out, [6.0] * 4)


def test_an_error_read_again_keeps_its_traceback(every_call_async):
    """Each read raises the computation's error with the computation's frames and the
    reader's, not with every earlier read's frames piled up."""
    def computation():
        raise FloatingPointError("in the computation")
    (p,) = async_dispatch.submit(computation, [], [_aval(np.zeros(3, np.float32))])
    depths = []
    for _ in range(4):
        with pytest.raises(FloatingPointError) as info:
            np.asarray(p)
        frames = traceback.extract_tb(info.value.__traceback__)
        assert frames[-1].name == "computation"
        depths.append(len(frames))
    assert len(set(depths)) == 1, depths


def test_a_result_too_large_for_memory_fails_at_the_call(every_call_async):
    """XLA's out-of-memory error is raised by the call, as a synchronous call raises it (the
    worker would have handed out a broadcast view as the buffer)."""
    f = pyjax.jit(lambda: jnp.zeros((10 ** 13,), jnp.float32))
    for _ in range(2):
        with pytest.raises(pyjax.errors.JaxRuntimeError, match="RESOURCE_EXHAUSTED"):
            f()


def test_a_result_left_unread_keeps_only_its_own_buffer(every_call_async):
    """A training loop that keeps its unread losses must not keep every step's parameters
    alive: a pending result holds its own output, not its call's other outputs."""
    step = pyjax.jit(lambda p: (p * 0.5, jnp.sum(p)))
    params = jnp.ones(1000)
    step(params)
    new_params, loss = step(params)
    buffer = weakref.ref(new_params._buf)  # (computed: the loss is too, but stays unread)
    del new_params
    gc.collect()
    assert type(loss) is PendingArray and buffer() is None
    assert float(loss) == 1000.0


def test_an_interrupted_reader_leaves_the_job_to_be_run_again(every_call_async):
    """Ctrl-C (KeyboardInterrupt) while a reader runs a job it took from the busy worker
    reaches that reader, but does not become the job's result: the job runs again, and the
    worker, waiting for it inside a later job that reads it, goes on; nothing stays counted
    as queued."""
    busy, gate = _gated(np.zeros(2, np.float32))  # (the worker waits in this job)
    runs, resume = [], threading.Event()

    def computation():
        runs.append(threading.current_thread())
        if len(runs) == 1:
            gate.set()  # (the worker moves on to `later` and waits there for this job)
            time.sleep(0.3)
            raise KeyboardInterrupt
        assert resume.wait(30)
        return [np.full(2, 7.0, np.float32)]
    (p,) = async_dispatch.submit(computation, [], [_aval(np.zeros(2, np.float32))])
    (later,) = async_dispatch.submit(lambda b: [b + 1], [async_dispatch.pending_input(p)],
                                     [_aval(np.zeros(2, np.float32))])
    with pytest.raises(KeyboardInterrupt):
        p.block_until_ready()
    assert runs[0] is threading.current_thread()
    assert not p.is_ready() and not later.is_ready()
    resume.set()
    reader = threading.Thread(target=later.block_until_ready)
    reader.start()
    reader.join(20)
    assert not reader.is_alive(), "the worker waits for a job nobody runs"
    assert len(runs) == 2 and p.is_ready()
    np.testing.assert_array_equal(p, [7.0, 7.0])
    np.testing.assert_array_equal(later, [8.0, 8.0])
    async_dispatch.wait_all()
    assert async_dispatch._worker.queued == 0


def test_the_worker_survives_every_exception_and_its_count_returns_to_zero(every_call_async):
    """Errors of any kind (BaseExceptions included) raised in the worker become the result's
    error; the worker goes on, and the queue's count and switch interval come back."""
    before = sys.getswitchinterval()
    failures = [SystemExit(3), KeyboardInterrupt(), GeneratorExit(), MemoryError(),
                ValueError("v")]
    busy, gate = _gated(np.zeros(1, np.float32))  # (none of them is run by a reader)

    def raising(exc):
        def computation():
            raise exc
        return computation
    outs = [async_dispatch.submit(raising(e), [], [_aval(np.zeros(1, np.float32))])[0]
            for e in failures]
    gate.set()
    async_dispatch.wait_all()
    for out, exc in zip(outs, failures):
        with pytest.raises(type(exc)):
            out.block_until_ready()
    (ok,) = async_dispatch.submit(lambda: [np.ones(1, np.float32)], [],
                                  [_aval(np.zeros(1, np.float32))])
    async_dispatch.wait_all()
    assert ok.is_ready() and float(ok[0]) == 1.0
    assert async_dispatch._worker.queued == 0 and sys.getswitchinterval() == before


def test_many_threads_read_one_pending_array_at_once(every_call_async):
    f = pyjax.jit(lambda x: x * 2.0)
    f(jnp.ones(1000))
    p, gate = _gated(np.arange(1000, dtype=np.float32))
    start = threading.Barrier(17)
    seen, errors = [], []

    def read(i):
        try:
            start.wait(10)
            how = i % 4
            got = (np.asarray(p) if how == 0 else f(p) / 2.0 if how == 1
                   else p + 0.0 if how == 2 else p.block_until_ready())
            seen.append(np.asarray(got).copy())
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    threads = [threading.Thread(target=read, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    start.wait(10)
    gate.set()
    for t in threads:
        t.join(30)
    assert not errors and len(seen) == 16
    for s in seen:
        np.testing.assert_array_equal(s, np.arange(1000, dtype=np.float32))
    assert type(p) is ArrayImpl


def test_threads_racing_the_worker_for_jobs_count_every_job_once(every_call_async):
    """Eight threads submit chains, read each other's results (taking jobs the worker has not
    started) and hit failing jobs: values right, and once idle the count is zero and the
    switch interval is back."""
    before = sys.getswitchinterval()
    f = pyjax.jit(lambda x, k: x * 0.5 + k)
    f(jnp.ones(64), 1.0)
    shared = {}

    def fail():
        raise ArithmeticError("job failed")

    def work(i):
        x = jnp.full(64, float(i))
        for k in range(40):
            x = f(x, float(k))
            shared[(i, k)] = x
            if k % 7 == 3:
                (bad,) = async_dispatch.submit(fail, [], [_aval(np.zeros(1, np.float32))])
                with pytest.raises(ArithmeticError):
                    bad.block_until_ready()
            other = shared.get(((i + 1) % 8, k))
            if other is not None:
                np.asarray(other)
    assert not _in_threads(work, 120)
    for i in range(8):
        expected = np.full(64, float(i), np.float32)
        for k in range(40):
            expected = expected * np.float32(0.5) + np.float32(k)
            np.testing.assert_array_equal(shared[(i, k)], expected)
    async_dispatch.wait_all()
    assert async_dispatch._worker.queued == 0 and sys.getswitchinterval() == before


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_waits_for_a_job_another_thread_is_running(every_call_async):
    """A fork while a reader thread runs a job it took from the worker: the child finds that
    job done (its thread does not exist in the child: a job still running there would never
    finish)."""
    busy, gate = _gated(np.zeros(1, np.float32))  # (the worker waits in this job)
    p, slow = _gated(np.full(3, 5.0, np.float32))
    reader = threading.Thread(target=p.block_until_ready)
    reader.start()
    deadline = time.monotonic() + 10
    while not _job(p).claim.locked() and time.monotonic() < deadline:
        time.sleep(0.001)
    assert _job(p).claim.locked()  # (the reader runs it: the worker is busy)
    gate.set()
    threading.Timer(0.5, slow.set).start()
    pid = os.fork()
    if pid == 0:
        threading.Timer(10, os._exit, (3,)).start()  # (a hung read fails, not hangs, the test)
        os._exit(0 if np.array_equal(np.asarray(p), [5.0] * 3) else 1)
    _, status = os.waitpid(pid, 0)
    reader.join(10)
    assert os.WEXITSTATUS(status) == 0


def test_live_arrays_include_pending_ones(every_call_async):
    p, gate = _gated(np.zeros(7, np.float32))
    assert any(a is p for a in pyjax.live_arrays())
    gate.set()


def test_a_pending_array_is_traced_and_computed_on_as_the_computed_one(every_call_async):
    """jnp on a pending Array answers as on the computed Array: eagerly the same values, dtype
    and weak type; a traced function closing over it gets the same jaxpr (conversions of the
    constant staged, not folded into it; a weak one made strong first)."""
    f = pyjax.jit(lambda x: x * 2)
    weak = jnp.asarray(2.5)
    bases = [jnp.arange(6.0).reshape(2, 3), weak, jnp.broadcast_to(weak, (3,)), jnp.arange(3),
             jnp.asarray([True, False])]
    bodies = [lambda c: c.astype(jnp.float16), lambda c: c.astype(bool), lambda c: c + 1,
              lambda c: jnp.exp(c), lambda c: jnp.mean(c), lambda c: jnp.sum(c),
              lambda c: jnp.atleast_1d(c)[:1], lambda c: jnp.where(c > 0, c, 1),
              lambda c: jnp.arange(4)[c.astype(int)], lambda c: jnp.asarray(c, c.dtype)]
    for base in bases:
        f(base)
        for body in bodies:
            pending, computed = f(base), f(base).block_until_ready()
            texts = [str(pyjax.make_jaxpr(lambda y: (body(c), y))(1.0))
                     for c in (computed, pending)]
            assert texts[0] == texts[1]
            assert type(pending) is PendingArray
            got, want = body(pending), body(computed)
            assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type)
            np.testing.assert_array_equal(got, want)
    assert not jnp.asarray(weak, jnp.float32).weak_type  # (as in JAX)


def test_loops_and_transforms_over_pending_constants(every_call_async):
    """Bodies of scan, while_loop, vmap and grad, jitted or not, closing over Arrays still
    computing."""
    base = np.arange(4, dtype=np.float32)
    p, gate = _gated(base)
    threading.Timer(0.2, gate.set).start()
    lax = pyjax.lax
    scan = pyjax.jit(lambda y: lax.scan(lambda c, x: (c + x * p, c), y, jnp.ones((3, 4)))[0])
    loop = pyjax.jit(lambda y: lax.while_loop(lambda c: c[1] < 3,
                                              lambda c: (c[0] + p, c[1] + 1), (y, 0))[0])
    results = [scan(jnp.zeros(4)), loop(jnp.zeros(4)),
               pyjax.vmap(lambda y: y * p)(jnp.ones((2, 4))),
               pyjax.grad(lambda y: jnp.sum(y * p))(jnp.ones(4)),
               lax.fori_loop(0, 3, lambda i, c: c + p, p)]
    expected = [3 * base, 3 * base, np.stack([base, base]), base, 4 * base]
    for got, want in zip(results, expected):
        np.testing.assert_array_equal(got, want)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_while_another_thread_keeps_submitting():
    """A fork waits for the queue to empty while another thread submits faster than the worker
    computes: new jobs wait for the fork (else the queue never empties and the fork never
    comes), and every job the child can see is done there."""
    import subprocess
    script = """
import os, threading, time, numpy as np
from pyjax._src.backend import async_dispatch
from pyjax._src.core.avals import ShapedArray
aval = ShapedArray((4,), np.dtype(np.float32), False)
made, stop = [], threading.Event()
def run():
    x = np.ones(4, np.float32)
    for _ in range(200):
        x = x + 0
    return [x]
def submitter():
    while not stop.is_set():
        made.append(async_dispatch.submit(run, [], [aval])[0])
        del made[:-20]
thread = threading.Thread(target=submitter)
thread.start()
bad = 0
for _ in range(5):
    time.sleep(0.02)
    pid = os.fork()
    if pid == 0:
        threading.Timer(10, os._exit, (3,)).start()
        for p in list(made):
            np.asarray(p)
        os._exit(0)
    bad += os.WEXITSTATUS(os.waitpid(pid, 0)[1]) != 0
stop.set()
thread.join()
print(bad)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, PYJAX_ASYNC="force"))
    assert out.returncode == 0 and out.stdout.split() == ["0"], out.stderr[-2000:]
