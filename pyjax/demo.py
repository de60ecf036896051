"""A tour of the tutorials' first programs under pyjax: jaxprs, jit and its errors, jnp.

    python -m pyjax.demo
"""
from __future__ import annotations

import time
from functools import partial

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp


def _best_us(fn, number: int = 200) -> float:
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best * 1e6


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def main() -> None:
    section("make_jaxpr shows the traced program")
    print(jax.make_jaxpr(lambda x, y: x * y + 2)(3.0, 4.0))

    section("jit: trace once, run the compiled program")
    def selu(x, alpha=1.67, lmbda=1.05):
        return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

    x = jnp.arange(1_000_000, dtype=jnp.float32) / 1e6 - 0.5
    selu_jit = jax.jit(selu)
    t0 = time.perf_counter()
    selu_jit(x).block_until_ready()
    print(f"first jit call (trace + compile): {(time.perf_counter() - t0) * 1e3:.2f} ms")
    eager = _best_us(lambda: selu(x).block_until_ready(), 10)
    jitted = _best_us(lambda: selu_jit(x).block_until_ready(), 10)
    print(f"selu on 1e6 floats: eager {eager / 1e3:.2f} ms, jit {jitted / 1e3:.2f} ms")
    print(jax.make_jaxpr(selu)(jnp.ones(3)))

    section("static arguments")
    @partial(jax.jit, static_argnames=["n"])
    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i
    print("g(10, n=20) =", g(10, n=20))

    section("tracer errors point at your code")
    def f(x):
        if x > 0:
            return x
        return 2 * x
    try:
        jax.jit(f)(10)
    except jax.errors.TracerBoolConversionError as err:
        print(type(err).__name__ + ":", str(err).splitlines()[1])

    section("jax.numpy: float32 by default, immutable arrays")
    y = jnp.arange(4)
    print(repr(y), "->", repr(y.at[2].set(999)))
    print("dot of int32 wraps like XLA:", jnp.dot(jnp.arange(int(1e7)), jnp.arange(int(1e7))))
    print("np.asarray is zero-copy:", np.shares_memory(np.asarray(y), np.asarray(y)))

    section("dispatch cost")
    a, b = jnp.ones(10), jnp.ones(10)
    add_one = jax.jit(lambda v: v + 1)
    add_one(a)
    print(f"eager a + b: {_best_us(lambda: a + b, 20000):.2f} µs, "
          f"cached jit call: {_best_us(lambda: add_one(a), 20000):.2f} µs")


if __name__ == "__main__":
    main()
