"""The tutorial's batched apply_matrix (150x100 matrix, batch 10 and 1000): naive Python loop,
manual batching, vmap and jit(vmap), in µs per call, in one run (JAX alongside when importable).

    .venv/bin/python bench/vmap.py
"""
from __future__ import annotations

import os
import sys

# bench/random.py would shadow the standard library's `random` for scripts run from bench/.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

import importlib.util  # noqa: E402
import timeit  # noqa: E402

import numpy as np  # noqa: E402


def us_per_call(fn, number: int) -> float:
    fn()
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def measure(jax, jnp, batch: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    mat = jnp.asarray(rng.standard_normal((150, 100)).astype(np.float32))
    xs = jnp.asarray(rng.standard_normal((batch, 100)).astype(np.float32))

    def apply_matrix(v):
        return jnp.dot(mat, v)

    def naive(v_batched):
        return jnp.stack([apply_matrix(v) for v in v_batched])

    def manual(v_batched):
        return jnp.dot(v_batched, mat.T)

    vmapped = jax.vmap(apply_matrix)
    jit_vmapped = jax.jit(jax.vmap(apply_matrix))
    block = jax.block_until_ready
    n = 20 if batch >= 1000 else 200
    return {
        "naive loop": us_per_call(lambda: block(naive(xs)), max(2, n // 20)),
        "manual batching": us_per_call(lambda: block(manual(xs)), n),
        "vmap": us_per_call(lambda: block(vmapped(xs)), n),
        "jit(vmap)": us_per_call(lambda: block(jit_vmapped(xs)), n),
    }


def main() -> None:
    import pyjax
    import pyjax.numpy as pjnp
    impls = [("pyjax", pyjax, pjnp)]
    if importlib.util.find_spec("jax") is not None:
        import jax
        import jax.numpy as jjnp
        impls.append(("jax", jax, jjnp))
    for batch in (10, 1000):
        results = {name: measure(mod, np_mod, batch) for name, mod, np_mod in impls}
        print(f"batch {batch:5d}, µs per call" + "".join(f"{n:>14s}" for n, _, _ in impls))
        for row in results["pyjax"]:
            print(f"  {row:24s}" + "".join(f"{results[n][row]:14.1f}" for n, _, _ in impls))
        ratio = results["pyjax"]["vmap"] / results["pyjax"]["manual batching"]
        print(f"  pyjax vmap / manual = {ratio:.2f}")


if __name__ == "__main__":
    main()
