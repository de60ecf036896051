"""Collectives across 2 processes x 2 devices on large messages (256 KB per device): right
values, and results that stay right after later collectives (no result shares memory that
MPI writes again).  Started without mpirun; skipped when mpi4py or an mpirun is missing."""
import subprocess
import sys

from test_distributed_launch import MPIRUN, ROOT, _clean_env, pytestmark  # noqa: F401

SCRIPT = """
import numpy as np, pyjax
from pyjax import lax
pyjax.distributed.initialize()
G, L, n = 4, pyjax.local_device_count(), 1 << 16   # 256 KB of float32 per device
first = pyjax.process_index() * L
ring = [(i, (i + 1) % G) for i in range(G)]
every = np.random.RandomState(0).normal(size=(G, n)).astype(np.float32)

def data(scale):
    return every[first:first + L] * scale

cases = {
    "psum": (lambda v: lax.psum(v, "i"),
             lambda e: np.stack([e.sum(0)] * L)),
    "pmax": (lambda v: lax.pmax(v, "i"),
             lambda e: np.stack([e.max(0)] * L)),
    "all_gather": (lambda v: lax.all_gather(v, "i"),
                   lambda e: np.stack([e] * L)),
    "ppermute": (lambda v: lax.ppermute(v, "i", ring),
                 lambda e: np.stack([e[(g - 1) % G] for g in range(first, first + L)])),
    "psum_scatter": (lambda v: lax.psum_scatter(v, "i", tiled=True),
                     lambda e: e.sum(0).reshape(G, -1)[first:first + L]),
    "all_to_all": (lambda v: lax.all_to_all(v.reshape(G, -1), "i", 0, 0, tiled=True),
                   lambda e: np.stack([e.reshape(G, G, -1)[:, g].reshape(G, -1)
                                       for g in range(first, first + L)])),
}
for name, (body, want) in cases.items():
    f = pyjax.pmap(body, "i")
    kept = f(data(1.0))
    again = f(data(-2.0))  # (must leave `kept` as it was)
    np.testing.assert_allclose(np.asarray(kept), want(every), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(np.asarray(again), want(every * -2.0), rtol=1e-5, atol=1e-4)
    print(f"rank{pyjax.process_index()} ok {name}", flush=True)
"""


def test_large_collectives_across_processes():
    proc = subprocess.run([MPIRUN, "-n", "2", sys.executable, "-m", "mpi4py", "-c", SCRIPT],
                          env={**_clean_env(), "PYJAX_NUM_CPU_DEVICES": "2"}, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for rank in (0, 1):
        for name in ("psum", "pmax", "all_gather", "ppermute", "psum_scatter", "all_to_all"):
            assert f"rank{rank} ok {name}" in proc.stdout, proc.stdout
