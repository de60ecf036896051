"""Record JAX 0.10.2's pmap collectives on 4 forced CPU devices into
tests/data/distributed.json: the global results that every process x device layout of
tests/distributed (1 x 4, 2 x 2, 4 x 1) must reproduce, each process its own rows.

    /work/oracle/bin/python tests/oracle/record_distributed.py

``run_cases(jax, jnp, lax, np)`` is shared with tests/distributed/cases.py, so this module
never imports jax at top level.  Each case maps over the global device axis 'i' (size 4);
a process runs it on its rows of the global input.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "distributed.json")
N = 4


def cases(jax, jnp, lax, np):
    """name -> (function of one member's value, global input of N rows)."""
    ring = [(j, (j + 1) % N) for j in range(N)]
    x = (np.arange(N * 6, dtype=np.float32).reshape(N, 6) - 7) / 4
    ints = np.arange(N * 3, dtype=np.int32).reshape(N, 3) * 3 - 11
    return {
        "psum": (lambda v: lax.psum(v, "i"), x),
        "psum_int": (lambda v: lax.psum(v, "i"), ints),
        "pmean": (lambda v: lax.pmean(v, "i"), x),
        "pmax": (lambda v: lax.pmax(v, "i"), x),
        "pmin": (lambda v: lax.pmin(v, "i"), ints),
        "psum_constant": (lambda v: v * 0 + lax.psum(1, "i"), x),
        "axis_index": (lambda v: v * 0 + lax.axis_index("i"), x),
        "all_gather": (lambda v: lax.all_gather(v, "i"), x),
        "all_gather_tiled_axis1": (lambda v: lax.all_gather(v[None], "i", axis=1, tiled=True),
                                   x),
        "ppermute_ring": (lambda v: lax.ppermute(v, "i", ring), x),
        "ppermute_partial": (lambda v: lax.ppermute(v, "i", [(0, 3), (3, 1), (2, 2)]), x),
        "psum_scatter": (lambda v: lax.psum_scatter(v[:4].reshape(N, 1) * (1 + lax.axis_index("i")),
                                                    "i"), x),
        "psum_scatter_tiled": (lambda v: lax.psum_scatter(v[:4] * v[2], "i", tiled=True), x),
        "all_to_all": (lambda v: lax.all_to_all(v[:4].reshape(N, 1) * 10 + lax.axis_index("i"),
                                                "i", 0, 0), x),
        "all_to_all_tiled": (lambda v: lax.all_to_all(jnp.tile(v[:2], N).reshape(2, -1), "i",
                                                      1, 0, tiled=True), x),
        "normalise": (lambda v: v / lax.psum(v.sum(), "i"), x),
        "grad_through_psum": (jax.grad(lambda v: lax.psum((v ** 2).sum() * v[0], "i")), x),
        "two_collectives_in_order": (
            lambda v: lax.psum(v, "i") * lax.pmax(v, "i") + lax.ppermute(v, "i", ring), x),
    }


def run_cases(jax, jnp, lax, np, rows=None):
    """Each case's result on this process's rows (all rows when `rows` is None)."""
    out = {}
    for name, (fn, x) in cases(jax, jnp, lax, np).items():
        local = x if rows is None else x[rows]
        y = np.asarray(jax.pmap(fn, axis_name="i")(local))
        out[name] = {"dtype": str(y.dtype), "shape": list(y.shape),
                     "values": y.astype(np.float64).ravel().tolist()}
    return out


WORKER = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np, jax, jax.numpy as jnp
from jax import lax
from record_distributed import run_cases
print(json.dumps(run_cases(jax, jnp, lax, np)))
"""


def main() -> None:
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={N}",
               JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", WORKER, HERE], env=env, check=True,
                         capture_output=True, text=True).stdout
    import jax
    data = {"jax_version": jax.__version__, "devices": N, "records": json.loads(out)}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1)
    print(f"wrote {len(data['records'])} records to {OUT}")


if __name__ == "__main__":
    main()
