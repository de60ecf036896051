"""Data-parallel training of a small MLP with pmap, on one process or several under MPI.

    python examples/data_parallel.py                                   # 1 process, 1 device
    PYJAX_NUM_CPU_DEVICES=4 python examples/data_parallel.py           # 1 process x 4 devices
    PYJAX_NUM_CPU_DEVICES=2 mpirun -n 2 python -m mpi4py examples/data_parallel.py   # 2 x 2

Every step takes one fixed global batch; device g of the job (global index, process by process)
trains on rows [g * B/D, (g + 1) * B/D) of it, and the gradients are averaged over the global
device axis with `lax.pmean`.  Each layout therefore computes the full-batch gradient, and all of
them reach the same loss up to float32 rounding.  Written as for JAX: only the import differs.
"""
import argparse
import functools
import os

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax

GLOBAL_BATCH = 128
FEATURES, HIDDEN = 16, 64
LAUNCHED_BY_MPI = any(v in os.environ for v in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"))


def make_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A fixed global batch: inputs and the outputs of a random 'teacher' network."""
    rng = np.random.RandomState(seed)
    x = rng.normal(size=(GLOBAL_BATCH, FEATURES)).astype(np.float32)
    teacher = rng.normal(size=(FEATURES, 1)).astype(np.float32) / np.sqrt(FEATURES)
    y = np.sin(3 * x @ teacher) + 0.1 * x[:, :1] ** 2
    return x, y.astype(np.float32)


def init_params(key: jax.Array) -> dict:
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (FEATURES, HIDDEN)) / np.sqrt(FEATURES),
            "b1": jnp.zeros(HIDDEN),
            "w2": jax.random.normal(k2, (HIDDEN, 1)) / np.sqrt(HIDDEN),
            "b2": jnp.zeros(1)}


def loss_fn(params: dict, x: jax.Array, y: jax.Array) -> jax.Array:
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((hidden @ params["w2"] + params["b2"] - y) ** 2)


def train_step(params: dict, x: jax.Array, y: jax.Array, lr: float) -> tuple[dict, jax.Array]:
    """One SGD step on this device's shard; the mean over devices makes it a full-batch step."""
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    grads = lax.pmean(grads, axis_name="devices")
    loss = lax.pmean(loss, axis_name="devices")
    params = jax.tree.map(lambda p, g: p - lr * g, params, grads)
    return params, loss


def local_shards(x: np.ndarray) -> np.ndarray:
    """This process's rows of the global batch: (local devices, B / global devices, ...)."""
    per_device = GLOBAL_BATCH // jax.device_count()
    first = jax.process_index() * jax.local_device_count()
    rows = x[first * per_device:(first + jax.local_device_count()) * per_device]
    return rows.reshape((jax.local_device_count(), per_device) + x.shape[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--log-every", type=int, default=10)
    args = parser.parse_args()

    if LAUNCHED_BY_MPI:
        jax.distributed.initialize()
    if GLOBAL_BATCH % jax.device_count():
        raise SystemExit(f"{jax.device_count()} devices do not divide the batch {GLOBAL_BATCH}")
    leader = jax.process_index() == 0

    x, y = make_data()
    x, y = local_shards(x), local_shards(y)
    params = init_params(jax.random.key(0))
    # params are replicated: broadcast in (in_axes None) and identical out (out_axes None)
    step = jax.pmap(functools.partial(train_step, lr=args.lr), axis_name="devices",
                    in_axes=(None, 0, 0), out_axes=(None, None))

    for i in range(args.steps):
        params, loss = step(params, x, y)
        if leader and (i % args.log_every == 0 or i == args.steps - 1):
            print(f"step {i:4d}  loss {float(loss):.6f}", flush=True)
    if leader:
        print(f"final loss {float(loss):.9g} after {args.steps} steps on "
              f"{jax.process_count()} process(es) x {jax.local_device_count()} device(s)",
              flush=True)


if __name__ == "__main__":
    main()
