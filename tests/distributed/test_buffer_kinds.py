"""Inside an MPI job (this file runs before test_distributed_job.py, whose last test leaves the
job failed): the transport's allreduce, allgather and alltoall give the same values for every
kind of operand, whether it goes to MPI as it is (a small C-contiguous array of a builtin
dtype) or through a copy or a view (strided, 0-d, bfloat16 as bytes), small or 1 MB; by MPI's
collectives and, in a job of two processes, by the swap of operands that replaces them."""
import ml_dtypes
import numpy as np
import pytest

from mpi_job import SIZE, needs_job

pytestmark = needs_job


def _transport():
    from pyjax._src.parallel import distributed
    return distributed.state.transport


@pytest.fixture(autouse=True, params=["collectives", "pairwise"])
def path(request):
    """Each test by MPI's collectives (the general path), then, with two processes, by the
    pairwise swap the transport takes for them (for blocks of every size here)."""
    if request.param == "pairwise" and SIZE != 2:
        pytest.skip("the pairwise swap is for jobs of two processes")
    transport = _transport()
    kept = transport.swap_bytes
    transport.swap_bytes = 0 if request.param == "pairwise" else None
    yield
    transport.swap_bytes = kept


def _operands(rank):
    """(name, this process's operand): each process's values differ by its rank."""
    base = np.arange(24, dtype=np.float32) + 100 * rank
    yield "contiguous", base.reshape(4, 6)
    yield "strided", base.reshape(4, 6)[:, ::2]
    yield "scalar", np.float32(rank + 1.5) * np.ones((), np.float32)
    yield "int8", (base % 5).astype(np.int8)
    yield "bool", (base % 3 == rank)
    yield "large", np.full(1 << 18, rank + 1, np.float32)


@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_allreduce_of_every_operand_kind(op):
    transport, rank = _transport(), _transport().rank
    reduce = {"sum": np.add, "max": np.maximum, "min": np.minimum}[op]
    for (name, mine), *others in zip(_operands(rank), *(_operands(r) for r in range(SIZE))):
        every = [x for _, x in others]
        want = every[0]
        for x in every[1:]:
            if want.dtype == bool:  # (MPI's logical or / and)
                want = want | x if op != "min" else want & x
            else:
                want = reduce(want, x)
        got = transport.allreduce(mine, op, name)
        np.testing.assert_array_equal(got, want, err_msg=name)
        assert got.dtype == mine.dtype and got.shape == mine.shape, name


def test_allgather_of_every_operand_kind():
    transport = _transport()
    gathered = [list(_operands(r)) + [("bfloat16", np.arange(6, dtype=ml_dtypes.bfloat16) + r)]
                for r in range(SIZE)]
    for i, (name, mine) in enumerate(gathered[transport.rank]):
        got = transport.allgather(mine, name)
        np.testing.assert_array_equal(got, np.stack([g[i][1] for g in gathered]), err_msg=name)
        assert got.dtype == mine.dtype, name


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_alltoall_sends_each_process_its_block(dtype):
    """Block p of this process's operand reaches process p (extended dtypes as bytes)."""
    transport, rank = _transport(), _transport().rank
    mine = np.stack([np.arange(3) + 10 * rank + p for p in range(SIZE)]).astype(dtype)
    got = transport.alltoall(mine, "alltoall")
    want = np.stack([np.arange(3) + 10 * q + rank for q in range(SIZE)]).astype(dtype)
    np.testing.assert_array_equal(got, want)
