"""Whether this test process runs inside an MPI job, and joining it (used by conftest.py)."""
import os

import pytest

GLOBAL_DEVICES = 4
_LAUNCHERS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE")


def launched_size() -> int:
    """The process count of the MPI job this process belongs to (0 when none)."""
    for size in _LAUNCHERS:
        if os.environ.get(size):
            return int(os.environ[size])
    return 0


SIZE = launched_size()

needs_job = pytest.mark.skipif(SIZE == 0, reason="needs an MPI job: run as `mpirun -n 2 python "
                               "-m mpi4py -m pytest tests/distributed`")


def join() -> None:
    """Join the job with 4 // size local devices, before anything counts the devices."""
    if SIZE == 0:
        return
    os.environ["PYJAX_NUM_CPU_DEVICES"] = str(max(1, GLOBAL_DEVICES // SIZE))
    os.environ.setdefault("PYJAX_COLLECTIVE_TIMEOUT", "20")
    import pyjax
    pyjax.distributed.initialize()
