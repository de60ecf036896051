"""Tier 1's quick code: a jit cluster's kernel is first compiled with LLVM's fast code
generation (engine.QUICK_OPT), then recompiled optimised on the compile thread once its first
call has run, and swapped in.  Both come from the same IR, so both give the same bits."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.backend import tier0, tier1
from pyjax._src.backend.tier1 import engine

_REASON = tier1.reason()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=f"tier 1 unavailable: {_REASON}")
RNG = np.random.default_rng(1414)


def _softmax(x):
    e = jnp.exp(x - jnp.max(x, -1, keepdims=True))
    return e / jnp.sum(e, -1, keepdims=True)


def _layernorm(x):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / jnp.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5)


def _mixed(x, y):
    z = jnp.where(x > y, jnp.sin(x) * 3 + y, jnp.cos(y) / (x * x + 1))
    return (jnp.maximum(z, -0.5) + jnp.log1p(jnp.abs(x)), jnp.sum(z, axis=1),
            jnp.max(jnp.tanh(z)), (z > 0).astype(jnp.float32) * x)


def _integers(x, y):
    i, j = (x * 1000).astype(jnp.int32), (y * 1000).astype(jnp.int32)
    return (i >> 3) ^ (j * 7) + jnp.where(i > j, i & 13, -j), jnp.max(i | 255, axis=0)


_MAT = RNG.standard_normal((517, 1031))
_MAT2 = RNG.standard_normal((517, 1031))
#: name -> (function, arguments): elementwise chains, row groups, long and short sums, sums
#: over leading axes, XLA's float32 transcendentals and libmvec's float64 ones, integers,
#: erf_inv; several large enough to split over threads
CASES = {
    "selu": (lambda x: 1.0507 * jnp.where(x > 0, x, 1.67326 * jnp.exp(x) - 1.67326),
             (RNG.standard_normal(300_007),)),
    "tanh_sum": (lambda x: jnp.sum(jnp.tanh(x * 0.5 + 0.1) ** 2), (RNG.standard_normal(300_007),)),
    "softmax": (_softmax, (_MAT,)),
    "layernorm": (_layernorm, (_MAT,)),
    "mixed": (_mixed, (_MAT, _MAT2)),
    "column_sum": (lambda x: jnp.sum(jnp.exp(x) * 2, axis=0), (_MAT,)),
    "row_broadcast": (lambda x, r: jnp.tanh(x * r[:, None] + 1.0) - x, (_MAT, _MAT[:, 0].copy())),
    "erf_inv": (lambda x: pyjax.lax.erf_inv(jnp.tanh(x).astype(jnp.float32)) * 2.0, (_MAT,)),
    "integers": (_integers, (_MAT, _MAT2)),
}


def _fresh(f):
    """f with its arguments scaled by a constant no earlier kernel holds: new IR, so each
    kernel is compiled here (engine keeps each IR's kernel for the process)."""
    c = 1.0 + float(RNG.integers(1, 1 << 20)) * 2.0 ** -30
    return lambda *args: f(*(a * c for a in args))


def _kernels(jitted, args) -> list[tier1.Kernel]:
    program = jitted.lower(*args).compile()._run
    kernels = [k for k in program.kernels.values() if isinstance(k, tier1.Kernel)]
    assert kernels, program.kernels
    return kernels


@pytest.fixture
def sync(monkeypatch):
    """Every cluster a tier 1 kernel, compiled before the first call."""
    pyjax.clear_caches()
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    monkeypatch.setattr(tier1, "ENABLED", True)
    pyjax.config.update("jax_compile_sync", True)
    try:
        yield
    finally:
        pyjax.config.update("jax_compile_sync", False)
        tier1.wait()
        pyjax.clear_caches()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_quick_code_has_the_optimised_bits(name, dtype, sync):
    """The first call runs quick code, the calls after the swap the optimised code: the same
    bits (only code generation differs, not the IR)."""
    f, args = CASES[name]
    with pyjax.enable_x64(dtype == np.float64):
        args = tuple(np.asarray(a, dtype) for a in args)
        jitted = pyjax.jit(_fresh(f))
        kernels = _kernels(jitted, args)
        assert any(k.ir in engine._quick for k in kernels)  # (constants' kernels: not new)
        first = [np.asarray(o) for o in pyjax.tree.leaves(jitted(*args))]
        tier1.wait()
        assert not any(k.ir in engine._quick for k in kernels)
        optimised = [np.asarray(o) for o in pyjax.tree.leaves(jitted(*args))]
    for a, b in zip(first, optimised):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


def test_optimised_code_replaces_the_quick_code(sync):
    """A kernel keeps its quick code through its first call; its second call has the
    optimised code compiled on the compile thread, which then becomes the kernel's function,
    while the generated module keeps calling the same Kernel."""
    f = _fresh(lambda x: jnp.tanh(x) * 3.0 - x)
    x = RNG.standard_normal((64, 1000)).astype(np.float32)
    jitted = pyjax.jit(f)
    program = jitted.lower(x).compile()._run
    (fname, kernel), = program.kernels.items()
    before = engine.counts()
    quick = kernel.fn
    want = np.asarray(jitted(x))
    engine.wait()
    assert kernel.ir in engine._quick and engine.counts() == before  # none after one call
    np.testing.assert_array_equal(np.asarray(jitted(x)), want)
    engine.wait()
    assert engine.counts()["compiled"] == before["compiled"] + 1
    assert kernel.ir not in engine._quick and kernel.fn is not quick
    assert kernel.fn is engine.compile_ir(kernel.ir, short=True)
    assert program.positional.__globals__[fname] is kernel
    np.testing.assert_array_equal(np.asarray(jitted(x)), want)
    # a new function over the same cluster gets the optimised code at once
    program = pyjax.jit(f).lower(x).compile()._run
    (kernel,) = program.kernels.values()
    assert kernel.fn is engine.compile_ir(kernel.ir, short=True)


def test_wait_optimises_what_ran_once(sync):
    """tier1.wait() (benchmarks, tests: the steady state) also compiles the optimised code of
    the kernels whose quick code has run once."""
    x = RNG.standard_normal((64, 1000)).astype(np.float32)
    jitted = pyjax.jit(_fresh(lambda x: jnp.exp(-x) * x))
    (kernel,) = _kernels(jitted, (x,))
    jitted(x)
    assert kernel.ir in engine._quick
    tier1.wait()
    assert kernel.ir not in engine._quick
    assert kernel.fn is engine.compile_ir(kernel.ir, short=True)


def test_large_clusters_compile_optimised_at_once(sync, monkeypatch):
    """A cluster of tier1.QUICK_WORK element-operations or more would lose more time on the
    quick code's first call than its compile saves: it is compiled optimised directly."""
    f = _fresh(lambda x: jnp.tanh(x) * 3.0 - x)  # (3 equations)
    x = RNG.standard_normal((64, 1000)).astype(np.float32)
    monkeypatch.setattr(tier1, "QUICK_WORK", 3 * x.size)
    before = engine.counts()
    (kernel,) = _kernels(pyjax.jit(f), (x,))
    assert kernel.ir not in engine._quick
    assert engine.counts()["quick"] == before["quick"]
    assert engine.counts()["compiled"] == before["compiled"] + 1


def _child(queue) -> None:
    pyjax.config.update("jax_compile_sync", True)
    f = _fresh(lambda a: jnp.exp(a) + 1)
    queue.put(float(np.asarray(pyjax.jit(f)(np.zeros(1 << 16, np.float32))).sum()))


def test_a_fork_waits_for_the_compile_threads_job():
    """A fork made while the compile thread is inside an LLVM call (here: holding llvmlite's
    lock, as every LLVM call does; after a kernel's first call that thread compiles its
    optimised code) waits for the job: the child would inherit the lock held and hang in its
    first compile."""
    import multiprocessing
    import threading
    import time

    from llvmlite.binding import ffi
    started = threading.Event()

    def llvm_call() -> None:
        with ffi.lib._lock:
            started.set()
            time.sleep(0.3)

    engine.submit(llvm_call)
    started.wait()
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child, args=(queue,))
    child.start()
    child.join(timeout=30)
    if child.exitcode is None:
        child.kill()
    assert child.exitcode == 0
    assert queue.get(timeout=5) == 2.0 * (1 << 16)


def test_a_compile_thread_marks_its_jobs_done_on_their_own_queue(monkeypatch):
    """A new queue and compile thread put in place while the compile thread is inside a job
    (as tests do): each thread marks its jobs done on the queue it took them from, so neither
    queue's count goes wrong (no "task_done() called too many times", no wait() hung)."""
    import queue
    import threading
    import time

    errors: list = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    inside, leave, ran = threading.Event(), threading.Event(), threading.Event()
    old = engine._jobs
    engine.submit(lambda: (inside.set(), leave.wait(10)))
    assert inside.wait(10)
    monkeypatch.setattr(engine, "_worker", None)
    monkeypatch.setattr(engine, "_jobs", queue.Queue())
    engine.submit(ran.set)  # (a second compile thread, for the new queue)
    leave.set()  # the first thread's job ends while the new queue is in place
    assert ran.wait(10)
    deadline = time.monotonic() + 10
    while (old.unfinished_tasks or engine._jobs.unfinished_tasks) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert (old.unfinished_tasks, engine._jobs.unfinished_tasks, errors) == (0, 0, [])
