"""host_memory's pool of large buffers: a block is handed out again only once nothing refers
to memory in it (arrays, their views, memoryviews, pyjax Arrays), under threads and in a
forked child; the pool stays within its bounds; jitted results and scatters come from it."""
from __future__ import annotations

import gc
import os
import threading

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.backend import host_memory

F32 = np.dtype(np.float32)
N = 1 << 18  # float32 elements of a test buffer: 1 MiB, pooled once POOL_MIN is 1 MiB


@pytest.fixture
def pool(monkeypatch):
    """A fresh pool taking buffers of 1 MiB and more, in blocks of 64 KiB multiples."""
    fresh = host_memory._Pool()
    monkeypatch.setattr(host_memory, "_pool", fresh)
    monkeypatch.setattr(host_memory, "POOL_MIN", 1 << 20)
    monkeypatch.setattr(host_memory, "GRAIN", 1 << 16)
    return fresh


def _address(x) -> int:
    return np.asarray(x).__array_interface__["data"][0]


def test_a_dead_buffer_is_reused(pool):
    a = host_memory.empty((N,), F32)
    first = _address(a)
    assert len(pool.blocks) == 1
    del a
    b = host_memory.empty((N // 2, 2), F32)  # another shape, of a size the block fits
    assert _address(b) == first and b.shape == (N // 2, 2) and b.dtype == F32
    assert len(pool.blocks) == 1


def test_a_live_buffer_is_never_handed_out(pool):
    a = host_memory.empty((N,), F32)
    a[:] = 1.0
    b = host_memory.empty((N,), F32)
    b[:] = 2.0
    assert _address(a) != _address(b)
    assert (a == 1.0).all() and len(pool.blocks) == 2


@pytest.mark.parametrize("hold", [
    lambda a: a[3:],
    lambda a: a.reshape(2, -1).T,
    lambda a: a.view(np.uint8)[::2],
    memoryview,
    lambda a: np.frombuffer(memoryview(a), np.float32),
], ids=["slice", "transpose", "view", "memoryview", "frombuffer"])
def test_views_keep_their_block(pool, hold):
    a = host_memory.empty((N,), F32)
    first = _address(a)
    kept = hold(a)
    del a
    gc.collect()
    b = host_memory.empty((N,), F32)
    second = _address(b)
    assert second != first
    del b, kept
    c = host_memory.empty((N,), F32)
    assert _address(c) in (first, second) and len(pool.blocks) == 2


def test_memory_under_a_pyjax_array_stays_its_own(pool):
    """A jitted result held by the user keeps its block; once dropped, the next call reuses it."""
    x = np.linspace(-1, 1, N, dtype=np.float32)
    f = pyjax.jit(lambda x: x * 2.0 + 1.0)
    first = f(x)
    second = f(x)
    assert _address(first) != _address(second)
    np.testing.assert_array_equal(np.asarray(first), x * 2 + 1)
    np.testing.assert_array_equal(np.asarray(second), x * 2 + 1)
    addresses = {_address(first), _address(second)}
    del first
    third = f(x)
    assert _address(third) in addresses
    np.testing.assert_array_equal(np.asarray(second), x * 2 + 1)
    np.testing.assert_array_equal(np.asarray(third), x * 2 + 1)


def test_scatter_add_results_come_from_the_pool(pool):
    x, i = np.zeros(N, np.float32), np.arange(0, N, 7, dtype=np.int32)
    f = pyjax.jit(lambda x, i: x.at[i].add(1.0))
    a = f(x, i)
    address = _address(a)
    assert any(np.shares_memory(np.asarray(a), b) for b in pool.blocks)
    del a
    b = f(x, i)
    assert _address(b) == address
    want = np.zeros(N, np.float32)
    want[::7] = 1.0
    np.testing.assert_array_equal(np.asarray(b), want)


def test_alignment(pool):
    for n in (N, N + 3, 1000):  # pooled and plain
        a = host_memory.empty((n,), F32, 64)
        assert _address(a) % 64 == 0 and a.shape == (n,)


def test_threads_never_share_a_live_buffer(pool):
    errors = []

    def work(k: int) -> None:
        kept = []
        for step in range(60):
            a = host_memory.empty((N,), F32)
            a[:] = k
            kept.append(a)
            if step % 3 == 0:
                kept.pop(0)
            for b in kept:
                if not (b == k).all():
                    errors.append((k, step))
                    return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sum(b.nbytes for b in pool.blocks) <= host_memory.POOL_BYTES


def test_forked_child(pool):
    """A child keeps the parent's live buffers out of its takes, reuses free ones, and can take
    even when the parent forked while holding the pool's lock."""
    live = host_memory.empty((N,), F32)
    live[:] = 7.0
    dead = host_memory.empty((N,), F32)
    free_address = _address(dead)
    del dead
    pool.lock.acquire()
    try:
        pid = os.fork()
        if pid == 0:  # the child
            ok = False
            try:
                a = host_memory.empty((N,), F32)
                a[:] = 1.0
                ok = _address(a) == free_address and (live == 7.0).all()
            finally:
                os._exit(0 if ok else 1)
    finally:
        pool.lock.release()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert (live == 7.0).all()


def test_bounds(pool, monkeypatch):
    """Past POOL_BYTES buffers are plain arrays; free blocks make room, and a free block that
    IDLE_TAKES takes in a row pass over is given back."""
    monkeypatch.setattr(host_memory, "POOL_BYTES", 3 << 20)
    kept = [host_memory.empty((N,), F32) for _ in range(5)]  # 1 MiB each
    assert len(pool.blocks) == 3
    assert sum(b.nbytes for b in pool.blocks) <= host_memory.POOL_BYTES
    del kept[:2]  # two pooled blocks free
    big = host_memory.empty((N, 2), F32)  # 2 MiB: made room for by both
    assert len(pool.blocks) == 2 and any(b.nbytes >= 2 << 20 for b in pool.blocks)
    del big, kept
    small = host_memory.empty((N // 2 + N // 4,), F32)  # 768 KiB: under POOL_MIN, plain
    assert small.base is None
    monkeypatch.setattr(host_memory, "IDLE_TAKES", 2)
    for _ in range(3):  # 1 MiB takes: the 2 MiB block is too big for them
        host_memory.empty((N,), F32)
    assert all(b.nbytes < 2 << 20 for b in pool.blocks)


def test_clear_caches_frees_free_blocks(pool):
    live = host_memory.empty((N,), F32)
    host_memory.empty((N,), F32)  # dead at once
    assert len(pool.blocks) == 2
    pyjax.clear_caches()
    assert len(pool.blocks) == 1 and pool.blocks[0] is live.base
