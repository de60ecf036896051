"""The jit compiler's tiers against JAX, in one run.

    .venv/bin/python bench/compiler.py                       # pyjax tier 0 / tier 1
    PYTHONPATH=/work/main /work/oracle/bin/python bench/compiler.py   # ... and JAX

For each workload: first-call ms (trace + compile + run; tier 1 compiled synchronously) and
steady ms (median) for pyjax without fusion (one NumPy call per equation), tier 0 (fused,
blockwise NumPy), tier 1 (llvmlite kernels) and JAX when importable; ratios are tier 1 / JAX.
Also the peak-RSS growth of selu on 50M floats (resource.getrusage) per tier.
"""
from __future__ import annotations

import os
import platform
import resource
import subprocess
import sys
import time

# bench/ holds scripts named like standard modules (random.py): keep it off the import path
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(
    os.path.abspath(__file__))]

import numpy as np  # noqa: E402

N_STEADY = 15


def _workloads(jnp, nn):
    rng = np.random.default_rng(0)
    x1m = rng.standard_normal(1_000_000).astype(np.float32)
    x10m = rng.standard_normal(10_000_000).astype(np.float32)
    big = rng.standard_normal((4096, 1024)).astype(np.float32)
    w1 = (rng.standard_normal((784, 512)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((512, 512)) * 0.05).astype(np.float32)
    w3 = (rng.standard_normal((512, 10)) * 0.05).astype(np.float32)
    xb = rng.standard_normal((128, 784)).astype(np.float32)
    yb = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]

    def selu(x):
        return 1.0507 * jnp.where(x > 0, x, 1.67326 * jnp.exp(x) - 1.67326)

    def tanh_sum(x, w, b):
        return jnp.sum(jnp.tanh(x * w + b) ** 2)

    def softmax(x):
        m = jnp.max(x, axis=-1, keepdims=True)
        e = jnp.exp(x - m)
        return e / jnp.sum(e, -1, keepdims=True)

    def layernorm(x):
        mu = x.mean(-1, keepdims=True)
        v = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / jnp.sqrt(v + 1e-5)

    def loss(params, x, y):
        a, b, c = params
        h = nn.relu(x @ a)
        h = nn.relu(h @ b)
        return -jnp.mean(jnp.sum(nn.log_softmax(h @ c) * y, -1))

    return [("selu 1M", selu, (x1m,), False),
            ("sum tanh(xw+b)^2 10M", tanh_sum, (x10m, np.float32(0.5), np.float32(0.1)), False),
            ("softmax 4096x1024", softmax, (big,), False),
            ("layernorm 4096x1024", layernorm, (big,), False),
            ("MLP train step", loss, ((w1, w2, w3), xb, yb), True)]


def _time(fn, args, block):
    t = time.perf_counter()
    block(fn(*args))
    first = time.perf_counter() - t
    times = []
    for _ in range(N_STEADY):
        t = time.perf_counter()
        block(fn(*args))
        times.append(time.perf_counter() - t)
    return first * 1e3, float(np.median(times)) * 1e3


def run_pyjax(mode: str) -> dict:
    """Times per workload under `mode` (unfused, tier0, tier1), run in this process."""
    import pyjax
    import pyjax.nn as nn
    import pyjax.numpy as jnp
    from pyjax._src.backend import tier0, tier1
    tier0.BLOCKWISE_MIN = 1 << 62 if mode == "unfused" else 1 << 15
    tier1.ENABLED = mode == "tier1"
    pyjax.config.update("jax_compile_sync", True)
    out = {}
    for name, f, args, grad in _workloads(jnp, nn):
        pyjax.clear_caches()
        fn = pyjax.jit(pyjax.value_and_grad(f) if grad else f)
        out[name] = _time(fn, args, pyjax.block_until_ready)
    return out


def run_jax() -> dict | None:
    try:
        import jax
        import jax.nn as nn
        import jax.numpy as jnp
    except ImportError:
        return None
    if getattr(jax, "__name__", "") != "jax" or not hasattr(jax, "devices"):
        return None
    out = {}
    for name, f, args, grad in _workloads(jnp, nn):
        fn = jax.jit(jax.value_and_grad(f) if grad else f)
        out[name] = _time(fn, args, jax.block_until_ready)
    return out


def peak_selu_50m(mode: str) -> float:
    """MiB of peak RSS above the 200 MB input for jit(selu) on 50M floats (fresh process)."""
    code = f"""
import resource, numpy as np, sys
sys.argv = ['x', {mode!r}]
x = np.random.default_rng(0).standard_normal(50_000_000, dtype=np.float32)
if {mode!r} == 'jax':
    import jax, jax.numpy as jnp; block = jax.block_until_ready
else:
    import pyjax as jax, pyjax.numpy as jnp; block = jax.block_until_ready
    from pyjax._src.backend import tier0, tier1
    tier0.BLOCKWISE_MIN = 1 << 62 if {mode!r} == 'unfused' else 1 << 15
    tier1.ENABLED = {mode!r} == 'tier1'
    jax.config.update('jax_compile_sync', True)
f = jax.jit(lambda x: 1.0507 * jnp.where(x > 0, x, 1.67326 * jnp.exp(x) - 1.67326))
small = np.zeros(1 << 16, np.float32); block(f(small))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = block(f(x))
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
"""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    try:
        return float(res.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return float("nan")


def main() -> None:
    jax_times = run_jax()
    modes = ["unfused", "tier0", "tier1"]
    results = {m: run_pyjax(m) for m in modes}
    cpu = platform.processor() or platform.machine()
    print(f"host: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}")
    cols = modes + (["jax"] if jax_times else [])
    print(f"{'workload':24s}" + "".join(f"{c + ' first':>14s}{c + ' ms':>12s}" for c in cols)
          + ("   tier1/jax" if jax_times else ""))
    for name in results["tier0"]:
        row = [results[m][name] for m in modes] + ([jax_times[name]] if jax_times else [])
        line = f"{name:24s}" + "".join(f"{first:14.1f}{steady:12.2f}" for first, steady in row)
        if jax_times:
            line += f"{results['tier1'][name][1] / jax_times[name][1]:12.2f}"
        print(line)
    peaks = {m: peak_selu_50m(m) for m in cols}
    print("peak RSS above input, selu 50M float32 (MiB): "
          + ", ".join(f"{m} {v:.0f}" for m, v in peaks.items()))


if __name__ == "__main__":
    main()
