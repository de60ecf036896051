"""Started without mpirun: launch MPI jobs of 1, 2 and 4 processes (4, 2 and 1 local devices)
that run test_distributed_job.py, and check jax.distributed.initialize's errors.  Skipped, with
the reason, when mpi4py or an mpirun is not installed."""
import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

from mpi_job import SIZE

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MPIRUN = shutil.which("mpirun", path=os.path.dirname(sys.executable) + os.pathsep
                      + os.environ.get("PATH", ""))

pytestmark = [
    pytest.mark.skipif(SIZE != 0, reason="starts MPI jobs itself: run without mpirun"),
    pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None,
                       reason="mpi4py is not installed (pip install 'pyjax[mpi]')"),
    pytest.mark.skipif(MPIRUN is None, reason="no mpirun on PATH (pip install mpich)"),
]


def _clean_env() -> dict:
    """This environment less any MPI launcher's variables, as root allows Open MPI to run."""
    prefixes = ("PMI_", "PMIX_", "OMPI_", "HYDRA_", "MPI_", "I_MPI_", "SLURM_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", PYJAX_COLLECTIVE_TIMEOUT="20")
    return env


def _mpirun(n: int, *args: str, timeout: int = 240, runner: bool = True
            ) -> subprocess.CompletedProcess:
    """`mpirun -n n python -m mpi4py args` (without `-m mpi4py` unless `runner`)."""
    launcher = ["-m", "mpi4py"] if runner else []
    return subprocess.run([MPIRUN, "-n", str(n), sys.executable, *launcher, *args],
                          env=_clean_env(), cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("processes", [1, 2, 4], ids=["1x4", "2x2", "4x1"])
def test_job_layout(processes):
    proc = _mpirun(processes, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   os.path.join(HERE, "test_distributed_job.py"))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.stdout.count(" passed") == processes


INIT_ERRORS = """
import sys, pyjax
case = sys.argv[1]
try:
    if case == "twice_after_devices":
        pyjax.devices()
    if case == "no_mpi":
        sys.modules["mpi4py"] = None
        pyjax.distributed.initialize(num_processes=1, process_id=0)
    elif case == "mismatch":
        pyjax.distributed.initialize(num_processes=3)
    else:
        pyjax.distributed.initialize()
except Exception as e:
    print(type(e).__name__ + ": " + str(e))
"""


@pytest.mark.parametrize("case, processes, expected", [
    ("outside_a_job", 0, "ValueError: coordinator_address should be defined."),
    ("twice_after_devices", 1, "RuntimeError: jax.distributed.initialize() must be called "
     "before any JAX calls that might initialise the XLA backend."),
    ("mismatch", 2, "ValueError: jax.distributed.initialize was given num_processes=3 and "
     "process_id="),
    ("no_mpi", 0, "ModuleNotFoundError: jax.distributed.initialize() runs processes over MPI, "
     "which needs mpi4py"),
])
def test_initialize_errors(case, processes, expected):
    if processes:
        proc = _mpirun(processes, "-c", INIT_ERRORS, case, timeout=120)
    else:
        proc = subprocess.run([sys.executable, "-c", INIT_ERRORS, case], env=_clean_env(),
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
    # every process reports the error once (the ranks' lines may interleave in mpirun's output)
    assert proc.stdout.count(expected) == max(processes, 1), proc.stdout + proc.stderr


@pytest.mark.parametrize("runner", [False, True], ids=["python", "python-m-mpi4py"])
def test_a_process_that_dies_fails_the_job_quickly(runner):
    """One process raises outside any collective: under plain python it tells the others,
    and the one waiting in psum fails with its error instead of hanging; under
    `python -m mpi4py` the runner aborts the whole job at once."""
    script = """
import numpy as np, pyjax
from pyjax import lax
pyjax.distributed.initialize()
x = np.ones((pyjax.local_device_count(), 2), np.float32)
if pyjax.process_index() == 1:
    raise SystemError("process 1 crashed")
try:
    pyjax.pmap(lambda v: lax.psum(v, "i"), "i")(x)
except Exception as e:
    print("rank0:", type(e).__name__, e, flush=True)
"""
    proc = _mpirun(2, "-c", script, timeout=60, runner=runner)
    if runner:
        assert proc.returncode != 0 and "process 1 crashed" in proc.stderr
        return
    assert "rank0: CollectiveError A collective across processes cannot complete: process 1 " \
           "failed: SystemError: process 1 crashed" in proc.stdout, proc.stdout + proc.stderr
