"""Eager speed of the jnp calls people make most, in one run: µs per call for pyjax, JAX (when
importable) and NumPy on f32[10] and f32[1000]; eager grad and vmap of a 3-layer MLP on one
example; `import` time in a fresh process; and, with --calls, Python function calls per pyjax op
(cProfile), the measure the eager path is tuned by.

    PYTHONPATH=/work/main /work/oracle/bin/python bench/eager.py [--calls]
    .venv/bin/python bench/eager.py [--calls]
"""
from __future__ import annotations

import os
import sys

# bench/random.py would shadow the standard library's `random` for scripts run from bench/.
_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, _ROOT)  # the repo's pyjax, also from a JAX venv

import cProfile  # noqa: E402
import importlib.util  # noqa: E402
import pstats  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

SIZES = (10, 1000)
TARGET_S = 0.02  # each timed repeat runs about this long


def per_call_us(fn: Callable[[], Any], repeat: int = 9) -> float:
    """Best of `repeat` runs of enough calls to last ~TARGET_S each, in µs per call of this
    process's CPU time (the dev machine's two cores are shared: wall time counts the other
    work's turns as well)."""
    fn()
    number, t0 = 1, time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    number = max(1, int(TARGET_S / max(one, 1e-7)))
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        for _ in range(number):
            fn()
        best = min(best, (time.process_time() - t0) / number)
    return best * 1e6


def python_calls(fn: Callable[[], Any], number: int = 50) -> float:
    """Python function calls (cProfile's count, C builtins included) per call of `fn`."""
    fn()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(number):
        fn()
    prof.disable()
    return pstats.Stats(prof).total_calls / number


def op_table(jnp: Any, lax: Any, random: Any, n: int, is_numpy: bool = False) -> dict:
    """name -> zero-argument callable, on operands of n float32 elements."""
    x = jnp.asarray(np.linspace(-1, 1, n, dtype=np.float32))
    y = jnp.asarray(np.linspace(1, -2, n, dtype=np.float32))
    a = x.reshape(-1, 10)                      # f32[n/10, 10]
    w = jnp.asarray(np.linspace(0, 1, 100, dtype=np.float32).reshape(10, 10))
    c = x > 0
    idx = jnp.asarray(np.array([0, 3, 5], dtype=np.int32))
    ops: dict[str, Callable[[], Any]] = {
        "x + y": lambda: x + y,
        "sin(x)": lambda: jnp.sin(x),
        "sum(x)": lambda: jnp.sum(x),
        "sum(a, axis=1, keepdims)": lambda: jnp.sum(a, axis=1, keepdims=True),
        "mean(x)": lambda: jnp.mean(x),
        "max(x)": lambda: jnp.max(x),
        "min(a, axis=0)": lambda: jnp.min(a, axis=0),
        "argmax(x)": lambda: jnp.argmax(x),
        "any(c)": lambda: jnp.any(c),
        "all(a > 0, axis=1)": lambda: jnp.all(a > 0, axis=1),
        "dot(x, x)": lambda: jnp.dot(x, x),
        "dot(w, w) 10x10": lambda: jnp.dot(w, w),
        "matmul(a, w)": lambda: jnp.matmul(a, w),
        "einsum('ij,jk->ik', a, w)": lambda: jnp.einsum("ij,jk->ik", a, w),
        "where(x > 0, x, y)": lambda: jnp.where(x > 0, x, y),
        "where(c, x, y)": lambda: jnp.where(c, x, y),
        "clip(x, -0.5, 0.5)": lambda: jnp.clip(x, -0.5, 0.5),
        "x > y": lambda: x > y,
        "x.astype(int32)": lambda: x.astype(jnp.int32),
        "reshape(x, (-1, 2))": lambda: jnp.reshape(x, (-1, 2)),
        "transpose(a)": lambda: jnp.transpose(a),
        "concatenate([x, y])": lambda: jnp.concatenate([x, y]),
        "stack([x, y])": lambda: jnp.stack([x, y]),
        "x[3]": lambda: x[3],
        "x[2:5]": lambda: x[2:5],
        "x[idx]": lambda: x[idx],
        "a[:, 1]": lambda: a[:, 1],
    }
    if not is_numpy:
        key = random.PRNGKey(0)
        ops.update({
            "lax.select(c, x, y)": lambda: lax.select(c, x, y),
            "x.at[3].set(1.)": lambda: x.at[3].set(1.0),
            "x.at[idx].add(1.)": lambda: x.at[idx].add(1.0),
            "random.split(key)": lambda: random.split(key),
            "random.fold_in(key, 1)": lambda: random.fold_in(key, 1),
            "random.normal(key, (n,))": lambda: random.normal(key, (n,)),
            "random.uniform(key, (n,))": lambda: random.uniform(key, (n,)),
        })
    return ops


def mlp_table(jax: Any, jnp: Any) -> dict[str, Callable[[], Any]]:
    """Eager grad and vmap of a 3-layer tanh MLP (10 -> 32 -> 32 -> 1) on one example."""
    rng = np.random.default_rng(0)
    sizes = [(10, 32), (32, 32), (32, 1)]
    params = [(jnp.asarray(rng.normal(size=s).astype(np.float32)),
               jnp.asarray(np.zeros(s[1], np.float32))) for s in sizes]
    ex = jnp.asarray(rng.normal(size=10).astype(np.float32))
    batch = ex[None]

    def mlp(p, v):
        for w, b in p[:-1]:
            v = jnp.tanh(v @ w + b)
        w, b = p[-1]
        return (v @ w + b)[0]

    loss_grad = jax.grad(lambda p, v: mlp(p, v) ** 2)
    batched = jax.vmap(mlp, in_axes=(None, 0))
    return {"grad(mlp) one example": lambda: loss_grad(params, ex),
            "vmap(mlp) one example": lambda: batched(params, batch)}


def import_seconds(module: str, python: str = sys.executable, runs: int = 5) -> float:
    """Best wall time of `import module` in a fresh interpreter (interpreter start excluded),
    with compiled bytecode cached as an installed package has it (a warm-up run writes it to
    a private cache, even where PYTHONDONTWRITEBYTECODE is set)."""
    import tempfile
    code = (f"import time; t = time.perf_counter(); import {module}; "
            "print(time.perf_counter() - t)")
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPATH=_ROOT, PYTHONPYCACHEPREFIX=cache)
        subprocess.run([python, "-c", code], capture_output=True, env=env, check=True)
        return min(float(subprocess.run([python, "-c", code], capture_output=True, text=True,
                                        env=env, check=True).stdout) for _ in range(runs))


def _settle(ops: dict[str, Callable[[], Any]]) -> None:
    """Call each op once and wait for the native kernels pyjax compiles in the background
    (threefry, erf_inv): the steady state, as JAX's is after its first, compiling call."""
    from pyjax._src.backend import tier1
    for f in ops.values():
        f()
    tier1.wait()


def measure(libs: dict[str, Any], want_calls: bool) -> dict[str, dict[str, float]]:
    """column name -> row name -> µs (or calls)."""
    cols: dict[str, dict[str, float]] = {}
    for n in SIZES:
        for name, mods in libs.items():
            ops = op_table(*mods[1:], n, is_numpy=name == "numpy")
            if name == "pyjax":
                _settle(ops)
            cols[f"{name} [{n}]"] = {k: per_call_us(f) for k, f in ops.items()}
            if want_calls and name == "pyjax" and n == SIZES[0]:
                cols["pyjax calls"] = {k: python_calls(f) for k, f in ops.items()}
    for name, mods in libs.items():
        if name != "numpy":
            for k, f in mlp_table(mods[0], mods[1]).items():
                cols[f"{name} [{SIZES[0]}]"][k] = per_call_us(f)
                if want_calls and name == "pyjax":
                    cols["pyjax calls"][k] = python_calls(f, number=5)
    return cols


def main() -> None:
    want_calls = "--calls" in sys.argv
    import pyjax
    import pyjax.numpy as pjnp
    libs: dict[str, Any] = {"pyjax": (pyjax, pjnp, pyjax.lax, pyjax.random)}
    has_jax = importlib.util.find_spec("jax") is not None
    if has_jax:
        import jax
        import jax.numpy as jjnp
        libs["jax"] = (jax, jjnp, jax.lax, jax.random)
    libs["numpy"] = (None, np, None, None)
    cols = measure(libs, want_calls)
    rows = list(cols[f"pyjax [{SIZES[0]}]"])
    names = list(cols)
    print(f"{'µs per call (calls: Python calls)':34s}" + "".join(f"{n:>13s}" for n in names))
    for row in rows:
        cells = "".join(f"{cols[n][row]:13.1f}" if row in cols[n] else f"{'-':>13s}"
                        for n in names)
        print(f"{row:34s}{cells}")
    base = import_seconds("numpy")
    line = f"import (s, fresh process): numpy {base:.3f}, pyjax {import_seconds('pyjax'):.3f}"
    if has_jax:
        line += f", jax {import_seconds('jax'):.3f}"
    print(line)


if __name__ == "__main__":
    main()
