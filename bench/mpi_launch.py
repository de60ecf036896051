"""Shared by the benchmarks that time pyjax across MPI processes (distributed.py,
collectives.py): whether this process is a rank of an MPI job, best-of timing, and starting a
script under `mpirun -n K python -m mpi4py`."""
import os
import shutil
import subprocess
import sys
import time
from typing import Callable, Sequence

#: set by the launchers: Open MPI, MPICH (Hydra), PMIx
IN_JOB = any(os.environ.get(v) for v in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"))


def best_of(fn: Callable[[], object], repeats: int, rounds: int = 5) -> float:
    """Best mean time per call (microseconds) over `rounds` rounds of `repeats` calls."""
    fn()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(repeats):
            fn()
        best = min(best, (time.perf_counter() - start) / repeats)
    return best * 1e6


def find_mpirun() -> str | None:
    """$PYJAX_MPIRUN when set (another MPI for the benchmarks, e.g. Open MPI's
    /usr/bin/mpirun), else mpirun beside this Python (a venv with `pip install mpich`), else
    on PATH."""
    if os.environ.get("PYJAX_MPIRUN"):
        return os.environ["PYJAX_MPIRUN"]
    return shutil.which("mpirun", path=os.path.dirname(sys.executable) + os.pathsep
                        + os.environ.get("PATH", ""))


def _abi_env(mpirun: str) -> dict:
    """What mpi4py needs to load the MPI that `mpirun` launches: its pip wheels hold one
    extension per MPI ABI and default to MPICH's, so under Open MPI it is told so."""
    if "MPI4PY_MPIABI" in os.environ or "MPI4PY_LIBMPI" in os.environ:
        return {}
    version = subprocess.run([mpirun, "--version"], capture_output=True, text=True).stdout
    return {"MPI4PY_MPIABI": "openmpi"} if "Open MPI" in version else {}


def run_under_mpirun(script: str, processes: int, args: Sequence[str] = (),
                     env: dict | None = None, timeout: float = 600) -> bool:
    """Run `script args` on `processes` MPI ranks (this Python, through mpi4py's runner, which
    aborts the job when a rank raises); `env` is added to this environment, less
    PYJAX_NUM_CPU_DEVICES.  False, after saying so, when no mpirun is installed."""
    mpirun = find_mpirun()
    if mpirun is None:
        print("no mpirun: skipping the runs across MPI processes (pip install mpich mpi4py)")
        return False
    full = {k: v for k, v in os.environ.items() if k != "PYJAX_NUM_CPU_DEVICES"}
    full.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                OMPI_MCA_rmaps_base_oversubscribe="1", **_abi_env(mpirun), **(env or {}))
    subprocess.run([mpirun, "-n", str(processes), sys.executable, "-m", "mpi4py",
                    os.path.abspath(script), *args], env=full, check=True, timeout=timeout)
    return True
