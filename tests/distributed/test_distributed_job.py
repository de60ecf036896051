"""Inside an MPI job (see conftest.py): the process layout, pmap collectives across processes
against JAX 0.10.2 on 4 devices (tests/data/distributed.json, each process checking its own
rows), arrays from process-local data, the cross-process sequence check, and a failing process
making the others fail instead of hang."""
import json
import os
import sys
import time

import numpy as np
import pytest

from mpi_job import GLOBAL_DEVICES, SIZE, needs_job

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "oracle"))
RECORDS = json.load(open(os.path.join(os.path.dirname(HERE), "data", "distributed.json")))

pytestmark = needs_job


def _rows():
    import pyjax
    local = pyjax.local_device_count()
    start = pyjax.process_index() * local
    return slice(start, start + local)


def test_layout():
    import pyjax
    assert pyjax.process_count() == SIZE
    local = GLOBAL_DEVICES // SIZE
    assert pyjax.device_count() == GLOBAL_DEVICES and pyjax.local_device_count() == local
    assert [d.id for d in pyjax.devices()] == list(range(GLOBAL_DEVICES))
    assert [d.process_index for d in pyjax.devices()] == [i // local
                                                          for i in range(GLOBAL_DEVICES)]
    assert [d.id for d in pyjax.local_devices()] == list(range(pyjax.process_index() * local,
                                                               (pyjax.process_index() + 1) * local))
    with pytest.raises(RuntimeError, match="only be called once"):
        pyjax.distributed.initialize()


def test_processes_share_the_cores_among_their_kernels(monkeypatch):
    """initialize gives each process's native kernels its share of this machine's cores (the
    processes of the job here split them), unless PYJAX_KERNEL_THREADS was set."""
    from pyjax._src.backend.tier1 import engine
    from pyjax._src.parallel import distributed
    assert os.environ.get("PYJAX_KERNEL_THREADS")  # (set by initialize when not given)
    kept = engine.threads()
    cores = len(os.sched_getaffinity(0))
    try:
        for processes in (1, 2, 2 * cores):
            monkeypatch.delenv("PYJAX_KERNEL_THREADS")
            distributed._share_cores(processes)
            share = max(1, cores // processes)
            assert engine.threads()[0] == share
            assert os.environ["PYJAX_KERNEL_THREADS"] == str(share)
        monkeypatch.setenv("PYJAX_KERNEL_THREADS", "3")  # the user's choice stands
        distributed._share_cores(2)
        assert engine.threads()[0] == max(1, cores // (2 * cores))
    finally:
        engine.set_threads(*kept)


@pytest.fixture(scope="module")
def results():
    import pyjax
    import pyjax.numpy as jnp
    from pyjax import lax
    from record_distributed import run_cases
    return run_cases(pyjax, jnp, lax, np, rows=_rows())


@pytest.mark.parametrize("name", sorted(RECORDS["records"]))
def test_collective_matches_jax(results, name):
    want, got = RECORDS["records"][name], results[name]
    full = np.array(want["values"]).reshape(want["shape"])[_rows()]
    assert got["dtype"] == want["dtype"]
    assert got["shape"] == list(full.shape)
    np.testing.assert_allclose(np.array(got["values"]).reshape(got["shape"]), full,
                               rtol=2e-6, atol=2e-6)


def test_make_array_from_process_local_data():
    import pyjax
    from pyjax.sharding import Mesh, NamedSharding, PartitionSpec as P
    mesh = Mesh(np.array(pyjax.devices()), ("i",))
    full = np.arange(GLOBAL_DEVICES * 3, dtype=np.float32).reshape(GLOBAL_DEVICES, 3)
    x = pyjax.make_array_from_process_local_data(NamedSharding(mesh, P("i")), full[_rows()],
                                                 full.shape)
    assert x.shape == full.shape
    np.testing.assert_array_equal(np.asarray(x), full)


@pytest.mark.skipif(SIZE < 2, reason="needs two processes or more")
def test_jit_keeps_every_collective_in_order():
    """Equal collectives are not merged, unused ones not dropped, under pmap's jit."""
    import pyjax
    from pyjax import lax
    from pyjax._src.parallel import distributed
    x = np.ones((pyjax.local_device_count(), 2), np.float32)
    f = pyjax.pmap(lambda v: (lax.psum(v, "i") + lax.psum(v, "i"), lax.pmax(v, "i"))[0], "i")
    transport = distributed.state.transport
    for _ in range(2):  # traced and compiled, then cached
        before = transport.issued
        np.testing.assert_array_equal(np.asarray(f(x)), 2 * GLOBAL_DEVICES * x)
        assert transport.issued - before == 3


def test_ppermute_of_one_value_per_device():
    """Members holding single values (0-d rows) are permuted across processes too, by a full
    and a partial permutation (members nobody sends to get zeros), call after call."""
    import pyjax
    from pyjax import lax
    local = pyjax.local_device_count()
    first = pyjax.process_index() * local
    x = np.arange(first + 1, first + local + 1, dtype=np.float32)
    ring = [(i, (i + 1) % GLOBAL_DEVICES) for i in range(GLOBAL_DEVICES)]
    partial = [(0, GLOBAL_DEVICES - 1), (GLOBAL_DEVICES - 1, 0)]
    for perm in (ring, partial):
        shift = pyjax.pmap(lambda v, perm=perm: lax.ppermute(v, "i", perm), "i")
        want = np.zeros(GLOBAL_DEVICES, np.float32)
        for src, dst in perm:
            want[dst] = src + 1
        for _ in range(3):
            np.testing.assert_array_equal(np.asarray(shift(x)), want[first:first + local])


@pytest.mark.skipif(SIZE < 2, reason="needs two processes or more")
def test_sequence_check_names_first_divergent_collective():
    import pyjax
    from pyjax import lax
    from pyjax._src.parallel import distributed
    from pyjax._src.parallel.mpi import CollectiveError
    x = np.ones((pyjax.local_device_count(), 2), np.float32)
    same = pyjax.pmap(lambda v: lax.psum(v, "i"), "i")
    other = pyjax.pmap(lambda v: lax.all_gather(v, "i")
                       if pyjax.process_index() == SIZE - 1 else lax.pmax(v, "i"), "i")
    distributed.set_check_collectives(True)
    try:
        np.testing.assert_array_equal(np.asarray(same(x)), GLOBAL_DEVICES * x)
        with pytest.raises(CollectiveError) as info:
            other(x)
    finally:
        distributed.set_check_collectives(False)
    message = str(info.value)
    assert "is the first that differs" in message
    assert "process 0: pmax[axis_name=i] float32[2]" in message
    assert f"process {SIZE - 1}: all_gather[axis_name=i] float32[" in message


@pytest.mark.skipif(SIZE < 2, reason="needs two processes or more")
def test_a_failing_process_makes_the_others_fail():
    """Last in this file: the job is unusable afterwards, as after any failure."""
    import pyjax
    from pyjax import lax
    from pyjax._src.parallel.mpi import CollectiveError

    def body(v):
        if pyjax.process_index() == SIZE - 1:
            raise ValueError("this process gives up")
        return lax.psum(v, "i")

    x = np.ones((pyjax.local_device_count(), 2), np.float32)
    start = time.monotonic()
    if pyjax.process_index() == SIZE - 1:
        with pytest.raises(ValueError, match="gives up"):
            pyjax.pmap(body, "i")(x)
    else:
        with pytest.raises(CollectiveError, match=f"process {SIZE - 1} failed: ValueError: this "
                                                  "process gives up"):
            pyjax.pmap(body, "i")(x)
    assert time.monotonic() - start < 15
