"""Collective latency: pyjax across 2 MPI processes, and pmap on 4 local devices.

    .venv/bin/python bench/distributed.py

Run plainly, it times pmap psum on 4 local devices, then starts itself under
`mpirun -n 2 python -m mpi4py` to time an allreduce of 1 KB and 1 MB between the two ranks:
mpi4py's own Allreduce (the floor), pyjax's transport, and pmap psum with one device per rank
(jit, local reduce, MPI).  Issue 15 measured on the dev machine: Open MPI + mpi4py 1 KB
2.3-3.5 us, 1 MB 240-280 us; JAX's gloo 3.9 ms (1 KB); JAX pmap psum on 4 CPU devices
479 us (1 KB).
"""
import os
import sys

# bench/random.py would shadow the standard library's random module: bench/ goes last
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE] + [HERE]
from mpi_launch import IN_JOB, best_of, run_under_mpirun  # noqa: E402

os.environ.setdefault("PYJAX_NUM_CPU_DEVICES", "1" if IN_JOB else "4")

import numpy as np  # noqa: E402

import pyjax  # noqa: E402
from pyjax import lax  # noqa: E402

SIZES = {"1 KB": 256, "1 MB": 262144}  # float32 elements


def local_pmap() -> None:
    psum = pyjax.pmap(lambda v: lax.psum(v, "i"), "i")
    for label, n in SIZES.items():
        x = np.ones((4, n // 4), np.float32)
        t = best_of(lambda: psum(x).block_until_ready(), 200 if n < 10000 else 20)
        print(f"pmap psum, 4 local devices, {label}: {t:9.1f} us   (JAX 0.10.2: 479 us for 1 KB)")


def in_job() -> None:
    pyjax.distributed.initialize()
    from mpi4py import MPI
    from pyjax._src.parallel import distributed
    comm = MPI.COMM_WORLD
    rank = pyjax.process_index()
    psum = pyjax.pmap(lambda v: lax.psum(v, "i"), "i")
    for label, n in SIZES.items():
        x = np.ones(n, np.float32)
        out = np.empty_like(x)
        reps = 2000 if n < 10000 else 50
        comm.Barrier()
        raw = best_of(lambda: comm.Allreduce(x, out), reps)
        comm.Barrier()
        transport = best_of(lambda: distributed.state.transport.allreduce(x, "sum", "bench"),
                            reps)
        xs = x[None]
        comm.Barrier()
        pm = best_of(lambda: psum(xs).block_until_ready(), reps // 4 or 10)
        if rank == 0:
            print(f"allreduce 2 ranks {label}: mpi4py {raw:8.1f} us | pyjax transport "
                  f"{transport:8.1f} us | pmap psum {pm:8.1f} us")
    if rank == 0:
        print("issue 15 (Open MPI, dev machine): 1 KB 2.3-3.5 us, 1 MB 240-280 us; "
              "JAX gloo 3900 us (1 KB)")


def main() -> None:
    if IN_JOB:
        in_job()
        return
    local_pmap()
    run_under_mpirun(__file__, 2)


if __name__ == "__main__":
    main()
