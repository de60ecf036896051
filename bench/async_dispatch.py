"""Async dispatch, in one run: ms per loop iteration of a jitted step beside host work, with
pyjax's `jax_cpu_enable_async_dispatch` off and on, and JAX (when importable) as it runs.

    PYTHONPATH=. /path/to/python-with-jax bench/async_dispatch.py [--steps N]

Loops (x: 4M float32, the step a fused tanh/exp chain with a reduction, ~3-10 ms here):
  blocked        y = step(x); y.block_until_ready()       (the hand-off's cost, nothing to win)
  numpy host     y = step(x); host = NumPy work on a 4M array (releases the GIL); y ready
  python host    y = step(x); host = a pure-Python loop (holds the GIL); y ready
  chained        x = step(x) for all steps, then block once (calls queued behind each other)
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))  # the repo's pyjax, also from a JAX venv

import numpy as np  # noqa: E402

N = 1 << 22
HOST = np.random.default_rng(0).random(N // 4).astype(np.float32)


def numpy_host() -> float:
    return float(np.sqrt(HOST * HOST + 1.0).sum())


def python_host() -> int:
    return sum(i * i for i in range(20_000))


def loops(jax, jnp, steps: int) -> dict[str, float]:
    """ms per iteration of each loop."""
    @jax.jit
    def step(x):
        y = jnp.tanh(x * 0.5) + jnp.exp(-x * x)
        return y - jnp.mean(y) * 0.001

    x0 = jnp.asarray(np.linspace(-2, 2, N, dtype=np.float32))
    step(x0).block_until_ready()
    step(x0).block_until_ready()

    def blocked():
        step(x0).block_until_ready()

    def with_host(host):
        def run():
            y = step(x0)
            host()
            y.block_until_ready()
        return run

    def chained():
        x = x0
        for _ in range(steps):
            x = step(x)
        x.block_until_ready()

    out = {}
    for name, fn, per in (("blocked", blocked, 1), ("numpy host", with_host(numpy_host), 1),
                          ("python host", with_host(python_host), 1),
                          ("chained", chained, steps)):
        fn()
        times = []
        for _ in range(5 if per > 1 else steps):
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) / per)
        out[name] = float(np.median(times)) * 1e3
    return out


def host_alone(steps: int) -> dict[str, float]:
    out = {}
    for name, host in (("numpy host", numpy_host), ("python host", python_host)):
        times = []
        for _ in range(steps):
            t = time.perf_counter()
            host()
            times.append(time.perf_counter() - t)
        out[name] = float(np.median(times)) * 1e3
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    steps = parser.parse_args().steps
    import pyjax
    import pyjax.numpy as pjnp
    pyjax.config.update("jax_compile_sync", True)  # (native kernels before the first call)
    pyjax.config.update("jax_cpu_enable_async_dispatch", False)
    sync = loops(pyjax, pjnp, steps)
    pyjax.config.update("jax_cpu_enable_async_dispatch", True)
    asynchronous = loops(pyjax, pjnp, steps)
    jax_times = None
    if importlib.util.find_spec("jax") is not None:
        import jax
        import jax.numpy as jjnp
        jax_times = loops(jax, jjnp, steps)
    host = host_alone(steps)
    print(f"ms per iteration, median of {steps} (load {os.getloadavg()[0]:.2f}); "
          "host work alone: " + ", ".join(f"{k} {v:.2f}" for k, v in host.items()))
    head = f"{'loop':14s}{'sync':>9s}{'async':>9s}{'async/sync':>12s}"
    if jax_times:
        head += f"{'jax':>9s}{'async/jax':>11s}"
    print(head)
    for name in sync:
        line = (f"{name:14s}{sync[name]:9.2f}{asynchronous[name]:9.2f}"
                f"{asynchronous[name] / sync[name]:12.2f}")
        if jax_times:
            line += f"{jax_times[name]:9.2f}{asynchronous[name] / jax_times[name]:11.2f}"
        print(line)


if __name__ == "__main__":
    main()
