"""examples/data_parallel.py trains to the same loss on 2 MPI processes x 2 devices as on one
process with 4 devices and on one device with the whole batch (float32 tolerance, 100 steps).
Started without mpirun; skipped, with the reason, when mpi4py or an mpirun is missing."""
import os
import re
import subprocess
import sys

import pytest

from test_distributed_launch import MPIRUN, ROOT, _clean_env, pytestmark  # noqa: F401

EXAMPLE = os.path.join(ROOT, "examples", "data_parallel.py")
FINAL = re.compile(r"final loss (\S+) after 100 steps on (\d+) process\(es\) x (\d+) device")


def _train(processes: int, local_devices: int) -> tuple[float, float]:
    """(first logged loss, final loss) of a 100-step run in this layout."""
    env = _clean_env()
    env["PYJAX_NUM_CPU_DEVICES"] = str(local_devices)
    mpi = [MPIRUN, "-n", str(processes)] if processes else []
    runner = ["-m", "mpi4py"] if processes else []
    proc = subprocess.run([*mpi, sys.executable, *runner, EXAMPLE], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    final = FINAL.findall(proc.stdout)
    assert len(final) == 1, proc.stdout  # printed by process 0 only
    assert final[0][1:] == (str(max(processes, 1)), str(local_devices))
    first = float(re.search(r"step +0 +loss (\S+)", proc.stdout).group(1))
    return first, float(final[0][0])


@pytest.fixture(scope="module")
def one_device() -> tuple[float, float]:
    return _train(0, 1)


def test_one_device_converges(one_device):
    first, final = one_device
    assert final < first / 5


@pytest.mark.parametrize("processes, local_devices", [(0, 4), (2, 2)],
                         ids=["1x4", "mpirun-2x2"])
def test_same_loss_as_one_device(one_device, processes, local_devices):
    _, final = _train(processes, local_devices)
    assert final == pytest.approx(one_device[1], rel=2e-6)
