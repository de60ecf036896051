"""tests/distributed: pyjax across processes on MPI.

Under `mpirun -n K python -m mpi4py -m pytest tests/distributed` each rank joins the job
(jax.distributed.initialize(), no arguments) with 4 // K local devices before any test, so the
global device axis always has 4 members.  Run without mpirun, the tests that need a job are
skipped and test_distributed_launch.py starts jobs itself (layouts 1 x 4, 2 x 2, 4 x 1).
"""
import mpi_job

mpi_job.join()
