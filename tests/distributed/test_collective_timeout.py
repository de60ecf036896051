"""A collective whose partner never comes fails after PYJAX_COLLECTIVE_TIMEOUT seconds (the
wait blocks in MPI; a watchdog thread ends it), and waits that end in time leave no stale
timeout behind.  Started without mpirun; skipped when mpi4py or an mpirun is missing."""
import subprocess
import sys

from test_distributed_launch import MPIRUN, ROOT, _clean_env, pytestmark  # noqa: F401

SCRIPT = """
import time, numpy as np, pyjax
from pyjax import lax
pyjax.distributed.initialize()
psum = pyjax.pmap(lambda v: lax.psum(v, "i"), "i")
x = np.ones((pyjax.local_device_count(), 2), np.float32)
for i in range(3):  # each wait shorter than the timeout, together longer
    if pyjax.process_index() == 1:
        time.sleep(0.8)
    assert float(np.asarray(psum(x))[0, 0]) == 2.0
if pyjax.process_index() == 1:
    time.sleep(6)  # never joins the next psum
    print("rank1: done", flush=True)
else:
    start = time.monotonic()
    try:
        psum(x)
    except Exception as e:
        print(f"rank0: {type(e).__name__}: {e} after {time.monotonic() - start:.1f} s",
              flush=True)
"""


def test_a_collective_nobody_joins_times_out():
    env = {**_clean_env(), "PYJAX_COLLECTIVE_TIMEOUT": "2"}
    proc = subprocess.run([MPIRUN, "-n", "2", sys.executable, "-c", SCRIPT], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(li for li in proc.stdout.splitlines() if li.startswith("rank0:"))
    assert "CollectiveError: collective #4 (psum[axis_name=i] float32[2] op=sum) timed out " \
           "after 2 s waiting for the other processes" in line, line
    seconds = float(line.rsplit(" after ", 1)[1].split()[0])
    assert 2 <= seconds < 5, line
    assert "rank1: done" in proc.stdout
