"""random.normal(key, (10_000_000,)) against NumPy's default_rng().normal, in one run; JAX
alongside when it is installed.  Also the raw bits (the Threefry hash alone).

    .venv/bin/python bench/random.py
"""
from __future__ import annotations

import os
import sys

# This file shares its name with the standard library's `random` (which opt_einsum imports):
# keep its own folder off the import path, and import pyjax from the repository root.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

import importlib.util  # noqa: E402
import time  # noqa: E402
from typing import Callable  # noqa: E402

import numpy as np  # noqa: E402

SIZE = 10_000_000


def best_seconds(fn: Callable[[], object], repeat: int = 5) -> float:
    """Best of `repeat` timed calls (after one warm-up call)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def measure(random) -> dict[str, float]:
    key = random.key(0)
    return {
        "normal f32": best_seconds(lambda: random.normal(key, (SIZE,)).block_until_ready()),
        "bits u32": best_seconds(lambda: random.bits(key, (SIZE,)).block_until_ready()),
    }


def main() -> None:
    from pyjax import random as prandom
    results = {"pyjax": measure(prandom)}
    rng = np.random.default_rng()
    results["numpy"] = {
        "normal f32": best_seconds(lambda: rng.standard_normal(SIZE, dtype=np.float32)),
        "bits u32": best_seconds(lambda: rng.integers(0, 2 ** 32, SIZE, dtype=np.uint32)),
    }
    results["numpy f64"] = {"normal f32": best_seconds(lambda: rng.normal(size=SIZE))}
    if importlib.util.find_spec("jax") is not None:
        from jax import random as jrandom
        results["jax"] = measure(jrandom)
    names = list(results)
    print(f"{'seconds, 10M values':24s}" + "".join(f"{n:>12s}" for n in names))
    for row in results["pyjax"]:
        cells = "".join(f"{results[n][row]:12.3f}" if row in results[n] else f"{'-':>12s}"
                        for n in names)
        print(f"{row:24s}{cells}")


if __name__ == "__main__":
    main()
