"""Tier 1 kernels split over threads (libgomp inside the module): every way a kernel shares
its rows or columns gives the one-thread result, flush-to-zero holds on every thread, and a
forked child still runs kernels."""
from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.backend import tier0, tier1
from pyjax._src.backend.tier1 import engine

_REASON = tier1.reason() or engine.serial_reason
pytestmark = pytest.mark.skipif(_REASON is not None, reason=f"no parallel kernels: {_REASON}")
#: for the tests of what runs while a kernel compiles in the background
background = pytest.mark.skipif(tier1.FORCED, reason="PYJAX_TIER1=force compiles every "
                                "kernel before its first call: none compiles in the background")
RNG = np.random.default_rng(16)


def _native(f, args, threads: int, monkeypatch) -> list[np.ndarray]:
    """f's results from tier 1 kernels allowed `threads` threads of one element at least."""
    saved = engine.threads()
    pyjax.clear_caches()
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    monkeypatch.setattr(tier1, "ENABLED", True)
    try:
        pyjax.config.update("jax_compile_sync", True)
        engine.set_threads(threads, 1)
        compiled = pyjax.jit(f).lower(*args).compile()
        assert any(isinstance(k, tier1.Kernel) for k in compiled._run.kernels.values())
        out = compiled(*args)
    finally:
        engine.set_threads(*saved)
        pyjax.config.update("jax_compile_sync", False)
        pyjax.clear_caches()
    return [np.asarray(o) for o in pyjax.tree.leaves(out)]


_CASES = {
    # one row: its columns are cut (a multiple of the vector width each, the last short)
    "elementwise 1-d": (lambda x: jnp.tanh(x) * 2 + 1, [(1001,)]),
    # more rows than threads: rows are cut
    "elementwise rows": (lambda x: jnp.exp(x) - x, [(37, 29)]),
    "row broadcast": (lambda x, r: x * r[:, None] + 1.0, [(13, 50), (13,)]),
    # short rows are summed pairwise each on one thread; long rows accumulate in double
    "short row sums": (lambda x: jnp.sum(x * 3.0, axis=1), [(11, 300)]),
    "long row sums": (lambda x: jnp.sum(x * 3.0, axis=1), [(5, 20_000)]),
    "row max": (lambda x: jnp.max(jnp.sin(x), axis=1), [(9, 77)]),
    # over leading axes each thread totals its own columns, row after row
    "column sums": (lambda x: jnp.sum(jnp.exp(x) * 2, axis=0), [(40, 1003)]),
    "column min": (lambda x: jnp.min(x - 1.0, axis=0), [(6, 333)]),
    "full max": (lambda x: jnp.max(jnp.abs(x) * 2), [(5000,)]),
    # one long row: a partial total per chunk, added in chunk order whatever the threads
    "one long sum": (lambda x: jnp.sum(jnp.tanh(x) ** 2), [(70_001,)]),
}


@pytest.mark.parametrize("threads", [2, 3, 7])
@pytest.mark.parametrize("name", sorted(_CASES))
def test_shared_kernel_has_one_thread_bits(name, threads, monkeypatch):
    f, shapes = _CASES[name]
    args = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    one = _native(f, args, 1, monkeypatch)
    many = _native(f, args, threads, monkeypatch)
    for a, b in zip(one, many):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("threads", [2, 3])
def test_one_long_sum_combines_partial_totals(threads, monkeypatch):
    """A single row's long sum is cut into chunks whose double totals are added in order: the
    float32 result is the float64 sum rounded once (as tier 0 rounds it)."""
    x = RNG.standard_normal(100_003).astype(np.float32)
    f = lambda a: jnp.sum(jnp.tanh(a) ** 2)  # noqa: E731
    (out,) = _native(f, [x], threads, monkeypatch)
    ref = np.float32(np.sum(np.tanh(x.astype(np.float64)) ** 2))
    assert out.dtype == np.float32
    assert abs(float(out) - float(ref)) <= 2 * np.spacing(ref)


def test_every_thread_flushes_subnormals(monkeypatch):
    """MXCSR's flush-to-zero is per thread: each worker takes the caller's (JAX gives 0)."""
    x = np.full(4099, 1e-10, np.float32)
    (out,) = _native(lambda a: a * np.float32(1e-30), [x], 3, monkeypatch)
    assert not out.any()


def _child(queue) -> None:
    pyjax.config.update("jax_compile_sync", True)
    out = pyjax.jit(lambda a: jnp.exp(a) + 1)(np.zeros(1 << 18, np.float32))
    queue.put(float(np.asarray(out).sum()))


def test_forked_child_runs_kernels(monkeypatch):
    """libgomp's threads are not in a forked child: kernels there run on one thread."""
    _native(lambda a: jnp.exp(a) + 1, [np.zeros(1000, np.float32)], 2, monkeypatch)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    saved = engine.threads()
    engine.set_threads(2, 1)
    try:
        child = context.Process(target=_child, args=(queue,))
        child.start()
        child.join(timeout=120)
    finally:
        engine.set_threads(*saved)
    assert child.exitcode == 0
    assert queue.get(timeout=5) == 2.0 * (1 << 18)


def test_libgomp_spin_count_is_set_only_while_loading(monkeypatch):
    """libgomp reads GOMP_SPINCOUNT when it loads: pyjax's short spin is in the environment
    for that moment only, and a wait policy the user chose is left alone."""
    from pyjax._src.backend.tier1 import engine
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    with engine._spin_count(engine.GOMP_SPIN_COUNT):
        assert os.environ["GOMP_SPINCOUNT"] == str(engine.GOMP_SPIN_COUNT)
    assert "GOMP_SPINCOUNT" not in os.environ
    monkeypatch.setenv("OMP_WAIT_POLICY", "active")
    with engine._spin_count(engine.GOMP_SPIN_COUNT):
        assert "GOMP_SPINCOUNT" not in os.environ


@background
def test_a_caller_waits_for_a_compile_after_its_patience(monkeypatch):
    """A library kernel still compiling answers None engine.PATIENCE times (the impl computes
    with NumPy meanwhile); the next ask waits for the compile, so a loop of calls cannot
    starve the compile thread of the GIL for long."""
    import time
    from pyjax._src.backend.tier1.library import KernelLibrary
    build = engine._object_code

    def slow(*args):
        time.sleep(0.3)
        return build(*args)

    monkeypatch.setattr(engine, "_object_code", slow)
    token = np.random.default_rng().integers(1 << 30)  # IR no earlier test compiled
    library = KernelLibrary(lambda key: "define void @kernel(i64 %R, i64 %C, ptr %args) {\n"
                                        f"  %unused = add i64 %R, {token + key}\n"
                                        "  ret void\n}\n")
    answers = [library.get(1) for _ in range(engine.PATIENCE)]
    assert answers == [None] * engine.PATIENCE
    assert library.get(1) is not None


@background
def test_a_jitted_call_waits_for_its_kernel_after_its_patience(monkeypatch):
    """Calls of a jitted function run tier 0 while its kernel compiles in the background; past
    engine.PATIENCE of them, the next waits for the kernel and runs it."""
    import time
    build = engine._object_code

    def slow(*args):
        time.sleep(0.3)
        return build(*args)

    monkeypatch.setattr(engine, "_object_code", slow)
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    scale = np.float32(1.0 + np.random.default_rng().random())  # IR no earlier test compiled
    f = pyjax.jit(lambda x: jnp.tanh(x * scale) + 1.0)
    x = np.random.default_rng(3).standard_normal((64, 33)).astype(np.float32)
    want = np.asarray(f(x))
    program = f.lower(x).compile()._run
    fname, = program.kernels
    namespace = program.positional.__globals__
    assert not isinstance(namespace[fname], tier1.Kernel)  # compiling
    for _ in range(engine.PATIENCE):
        f(x)
    got = np.asarray(f(x))
    assert isinstance(namespace[fname], tier1.Kernel)
    np.testing.assert_allclose(got, want, rtol=2e-7)


@background
def test_a_large_clusters_first_call_waits_for_its_kernel(monkeypatch):
    """A cluster of tier1.WAIT_WORK element-operations or more would take tier 0 longer than
    its kernel takes to compile: its first call waits for the kernel and runs it; a smaller
    one is served by tier 0 meanwhile."""
    import time
    build = engine._object_code

    def slow(*args):
        time.sleep(0.3)
        return build(*args)

    monkeypatch.setattr(engine, "_object_code", slow)
    rows = -(-tier1.WAIT_WORK // (3 * 1024))  # (3 equations a cluster)
    for shape, waits in (((rows, 1024), True), ((rows // 4, 1024), False)):
        scale = np.float32(1.0 + np.random.default_rng().random())  # IR not compiled before
        f = pyjax.jit(lambda x: jnp.tanh(x * scale) + 1.0)
        x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
        program = f.lower(x).compile()._run  # (traced and built, not yet called)
        fname, = program.kernels
        namespace = program.positional.__globals__
        got = np.asarray(f(x))
        assert isinstance(namespace[fname], tier1.Kernel) is waits, shape
        np.testing.assert_allclose(got, np.tanh(x * scale) + 1.0, rtol=2e-6, atol=1e-6)
        tier1.wait()


def test_mid_size_kernels_are_gated_by_what_others_left(tmp_path, monkeypatch):
    """Kernels of more than one grain and at most MID_GRAINS are mid-size; before each call
    the gate lets them split only while other processes left this one 1.5 cores over the last
    window (the CPUs' idle time in /proc/stat plus this process's own CPU time, read at most
    once per window), else holds kernels of up to MID_GRAINS grains to one thread
    (`pyjax_kernel_alone`): this process's own threads busy on both cores keep it open."""
    from pyjax._src.primitives import _blas_threads
    saved = engine.threads()
    engine.set_threads(2, 1000)
    monkeypatch.setattr(engine, "gated", True)
    try:
        assert [engine.mid_size(n) for n in (1000, 1001, 4000, 4001)] == [
            False, True, True, False]
        stat, clock, own = tmp_path / "stat", [100.0], [0.0]
        monkeypatch.setattr(_blas_threads, "_STAT", str(stat))
        monkeypatch.setattr(_blas_threads, "_left_state", [-1.0, -1, True])
        monkeypatch.setattr(_blas_threads.time, "monotonic", lambda: clock[0])
        monkeypatch.setattr(_blas_threads, "_own_seconds", lambda: own[0])

        def report(idle_seconds):  # (user nice system idle iowait ...), in clock ticks
            stat.write_text(f"cpu  500 0 300 {round(idle_seconds / _blas_threads._TICK)} 0 0 "
                            "0 0 0 0\n")

        report(1000.0)
        engine.gate()
        assert engine._controls[2] == 0  # (no window yet)
        clock[0] += 1.0
        own[0] += 2.0  # this process's 2-thread kernels kept both cores busy: none idle
        engine.gate()
        assert engine._controls[2] == 0
        clock[0] += 1.0
        report(1000.05)
        own[0] += 1.0  # the caller, another process busy on the other core
        engine.gate()
        assert engine._controls[2] == 4000
        clock[0] += _blas_threads._LEFT_WINDOW / 2
        report(1010.0)
        engine.gate()  # within the window: the answer kept
        assert engine._controls[2] == 4000
        clock[0] += 1.0
        report(1010.6)
        own[0] += 1.0  # the caller and 0.6 of a core idle
        engine.gate()
        assert engine._controls[2] == 0
        monkeypatch.setattr(engine, "gated", False)  # (PYJAX_KERNEL_THREADS/GRAIN given)
        assert not engine.mid_size(2000)
    finally:
        engine.set_threads(*saved)
        engine._controls[2] = 0


_ALONE_SCRIPT = """
import json, os, sys
import numpy as np
import pyjax, pyjax.numpy as jnp
from pyjax._src.backend import tier0, tier1
from pyjax._src.backend.tier1 import engine
from pyjax._src.primitives import _blas_threads
tier1.reason()
engine.set_threads(2, 4096)
tier0.BLOCKWISE_MIN = 1  # (every cluster a function of its own, which the kernel replaces)
pyjax.config.update("jax_compile_sync", True)
threads = lambda: len(os.listdir("/proc/self/task"))
out = {}
for name, size, left in json.loads(sys.argv[1]):
    _blas_threads._left = lambda: left
    x = np.ones(size, np.float32)
    f = pyjax.jit(lambda a: jnp.exp(a) * 2.0 + 1.0).lower(x).compile()
    before = threads()
    f(x).block_until_ready()
    out[name] = threads() - before
print(json.dumps(out))
"""


def _threads_started(calls: list) -> dict:
    """Threads each call in a fresh process started: (name, elements, a core left to it?)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYJAX_KERNEL_THREADS", "PYJAX_KERNEL_GRAIN", "PYJAX_TIER1")}
    proc = subprocess.run([sys.executable, "-c", _ALONE_SCRIPT, json.dumps(calls)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_a_mid_size_kernel_runs_on_one_thread_while_others_left_no_core():
    """libgomp starts its worker at a kernel's first split: a mid-size kernel (4 grains) while
    other processes left this one no second core (`_blas_threads._left` says no) starts none,
    one while they left it one does, and a larger kernel (5 grains) splits regardless."""
    assert _threads_started([("mid busy", 4 * 4096, False), ("mid idle", 4 * 4096, True)]) \
        == {"mid busy": 0, "mid idle": 1}
    assert _threads_started([("large busy", 5 * 4096, False)]) == {"large busy": 1}
