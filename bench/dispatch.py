"""Dispatch overhead, in one run: µs per call of eager `x + y`, a cached jit call of `x + 1`,
and the first-call trace+compile time of selu.  NumPy alongside, JAX when it is installed.

    .venv/bin/python bench/dispatch.py
"""
from __future__ import annotations

import os
import sys

# bench/random.py would shadow the standard library's `random` for scripts run from bench/.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))  # the repo's pyjax, also from a JAX venv

import importlib.util  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402

import numpy as np  # noqa: E402


def per_call_us(fn, number: int = 20000, repeat: int = 7) -> float:
    """Best of `repeat` runs of `number` calls, in µs per call (best = least disturbed)."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def selu(jnp):
    def f(x, alpha=1.67, lmbda=1.05):
        return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)
    return f


def measure(jax, jnp) -> dict[str, float]:
    x = jnp.arange(10, dtype=jnp.float32)
    y = jnp.ones(10, dtype=jnp.float32)
    add_one = jax.jit(lambda v: v + 1)
    add_one(x).block_until_ready()
    out = {
        "eager x + y (10 x f32)": per_call_us(lambda: x + y),
        "cached jit(x + 1) call": per_call_us(lambda: add_one(x)),
    }
    data = jnp.arange(1000, dtype=jnp.float32)
    t0 = time.perf_counter()
    jax.jit(selu(jnp))(data).block_until_ready()
    out["selu first call (trace+compile)"] = (time.perf_counter() - t0) * 1e6
    return out


def main() -> None:
    import pyjax
    import pyjax.numpy as pjnp
    results = {"pyjax": measure(pyjax, pjnp)}
    xn, yn = np.arange(10, dtype=np.float32), np.ones(10, dtype=np.float32)
    results["numpy"] = {"eager x + y (10 x f32)": per_call_us(lambda: xn + yn),
                        "cached jit(x + 1) call": per_call_us(lambda: xn + 1)}
    if importlib.util.find_spec("jax") is not None:
        import jax
        import jax.numpy as jjnp
        results["jax"] = measure(jax, jjnp)
    rows = list(results["pyjax"])
    names = list(results)
    print(f"{'µs per call':34s}" + "".join(f"{n:>12s}" for n in names))
    for row in rows:
        cells = "".join(f"{results[n][row]:12.2f}" if row in results[n] else f"{'-':>12s}"
                        for n in names)
        print(f"{row:34s}{cells}")


if __name__ == "__main__":
    main()
