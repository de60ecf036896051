"""Record JAX's float32 (and float16/bfloat16) transcendental functions into
tests/data/transcendentals.npz, for tests/test_xla_transcendentals.py.

    /work/oracle/bin/python tests/oracle/record_transcendentals.py
    PYTHONPATH=. /work/oracle/bin/python tests/oracle/record_transcendentals.py --survey

Needs jax==0.10.2 on an x86-64 CPU with FMA (XLA's code contracts multiply-adds; glibc picks
its FMA variants of sinf/cosf/expf/logf/atan2f).  Per function: ~3000 float32 inputs (specials,
the edges of each branch of XLA's code and their neighbours, random values over the whole range
and random bit patterns), and JAX's results as one array (a multiple of 8 elements, >= 16: XLA's
vector code throughout);
float16 and bfloat16: 2000 random bit patterns each.  exp and log also alone on rank-1 vectors
of 1..16 elements (XLA hands some lanes of short vectors to the C library).  Arrays hold the
bits (uint32/uint16), so NaN payloads and signed zeros survive.  `--survey` compares pyjax
with JAX on 300k inputs per function instead (eager, jit on tier 0, jit on tier 1).
"""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "transcendentals.npz")

#: function -> (jnp or jax.nn name, the branch edges of XLA's code for it)
FUNCTIONS = {
    "exp": ("exp", (-87.8, 88.8, 88.72, -87.33, -103.9, 1e-7, 0.5)),
    "exp2": ("exp2", (127.9, 128.0, -126.0, -149.0, -127.5, 1e-7, 0.5)),
    "expm1": ("expm1", (0.5, 0.0008, 1e-7, 88.72, -87.8, 88.8, 17.0)),
    "log": ("log", (2.0 ** -126, 0.70710677, 1.0, 2.0, 3.4e38)),
    "log1p": ("log1p", (0.41421357, -0.41421357, -1.0, 1e-7, 2.0 ** -126, 3.4e38)),
    "log2": ("log2", (2.0 ** -126, 0.70710677, 1.0, 2.0, 3.4e38)),
    "log10": ("log10", (2.0 ** -126, 0.70710677, 1.0, 10.0, 3.4e38)),
    "tanh": ("tanh", (0.0004, 7.998776, 9.0, 20.0, 1e-7)),
    "logistic": ("sigmoid", (87.8, -88.8, 88.72, -87.33, 16.6, 1e-7)),
    "sin": ("sin", (2.0 ** -12, 0.75, 0.7853982, 120.0, 1e30, 3.4e38)),
    "cos": ("cos", (2.0 ** -12, 0.75, 0.7853982, 120.0, 1e30, 3.4e38)),
    "sinh": ("sinh", (1.0, 0.5, 89.4, 88.0, 1e-7, 2.0 ** -126)),
    "cosh": ("cosh", (1.0, 89.4, 88.0, 1e-7, 2.0 ** -126)),
    "asin": ("arcsin", (1.0, 0.5, 1e-7, 2.0 ** -126)),
    "acos": ("arccos", (1.0, 0.5, 1e-7, 2.0 ** -126)),
    "asinh": ("arcsinh", (1.8446743e19, 1.0, 1e-7, 2.0 ** -126, 3.4e38)),
    "acosh": ("arccosh", (1.0, 1.5, 1.70141173e38, 3.4e38)),
    "atanh": ("arctanh", (1.0, 0.41421357, 0.5, 1e-7, 2.0 ** -126)),
}
SPECIALS = (0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, np.inf, -np.inf, np.nan, -np.nan, 1e-40,
            -1e-40, 2.0 ** -126, -(2.0 ** -126), 3.4028235e38, -3.4028235e38, np.pi, -np.pi)
LONE_SIZES = tuple(range(1, 17))


def f32_inputs(name: str) -> np.ndarray:
    """~3000 float32 inputs for `name` (deterministic)."""
    rng = np.random.default_rng(sorted(FUNCTIONS).index(name))  # (the seed: alphabetical)
    edges = np.array(FUNCTIONS[name][1], np.float32)
    edges = np.concatenate([edges, -edges])
    up, down = np.float32(np.inf), np.float32(-np.inf)
    near = np.concatenate([edges, np.nextafter(edges, up), np.nextafter(edges, down)])
    k = np.arange(1, 400)
    multiples = (k * np.pi / 2).astype(np.float32)  # where sin/cos cancel most
    parts = [np.array(SPECIALS, np.float32), near,
             np.concatenate([multiples, np.nextafter(multiples, up), -multiples]),
             rng.uniform(-1, 1, 400), rng.uniform(-10, 10, 400), rng.uniform(-100, 100, 300),
             10.0 ** rng.uniform(-30, 38, 400) * rng.choice([-1.0, 1.0], 400),
             rng.integers(0, 2 ** 32, 400, dtype=np.uint64).astype(np.uint32).view(np.float32)]
    with np.errstate(over="ignore", invalid="ignore"):
        x = np.concatenate([np.asarray(p).astype(np.float32) for p in parts])
    return x[:x.size - x.size % 8]


def half_inputs(dtype, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2 ** 16, 2000, dtype=np.uint64).astype(np.uint16).view(dtype)


def lone_inputs(name: str) -> list:
    """For exp and log alone: 20 vectors of each size in LONE_SIZES."""
    rng = np.random.default_rng(100 + len(name))
    low = 0.01 if name == "log" else -20.0
    return [rng.uniform(low, 20.0, n).astype(np.float32) for n in LONE_SIZES for _ in range(20)]


def function(jax, name: str):
    import jax.numpy as jnp
    attr = FUNCTIONS[name][0]
    return getattr(jax.nn, attr) if attr == "sigmoid" else getattr(jnp, attr)


def record_each(names, fn_of, f32_inputs_of, record: dict) -> None:
    """Into `record`: each named function's float32 inputs and JAX's results (eager, checked
    equal to jit's), and its results on float16/bfloat16 bit patterns, all as raw bits."""
    import jax
    import ml_dtypes
    for name in names:
        fn = fn_of(name)
        x = f32_inputs_of(name)
        y = np.asarray(fn(x))
        assert (np.asarray(jax.jit(fn)(x)).view(np.uint32) == y.view(np.uint32)).all()
        record[f"{name}/x"] = x.view(np.uint32)
        record[f"{name}/y"] = y.view(np.uint32)
        for seed, dtype in enumerate((np.float16, ml_dtypes.bfloat16)):
            h = half_inputs(dtype, seed)
            label = np.dtype(dtype).name
            record[f"{name}/{label}/x"] = h.view(np.uint16)
            record[f"{name}/{label}/y"] = np.asarray(fn(h)).view(np.uint16)


def main():
    import jax
    record = {}
    with np.errstate(all="ignore"):
        record_each(FUNCTIONS, lambda name: function(jax, name), f32_inputs, record)
        for name in ("exp", "log"):
            vectors = lone_inputs(name)
            fn = function(jax, name)
            record[f"lone_{name}/x"] = np.concatenate(vectors).view(np.uint32)
            record[f"lone_{name}/y"] = np.concatenate(
                [np.asarray(fn(v)) for v in vectors]).view(np.uint32)
    np.savez_compressed(OUT, **record)
    print(f"wrote {OUT}: {len(record)} arrays")


def survey():
    """Print, per function, the fraction of 300k float32 inputs where pyjax gives JAX's bits:
    eager, and under jit with tier 1 off and forced on (NaNs count as equal).
    PYTHONPATH=. /work/oracle/bin/python tests/oracle/record_transcendentals.py --survey"""
    import jax
    import pyjax
    from pyjax._src.backend import tier0, tier1
    rng = np.random.default_rng(0)
    n = 100_000
    spread = 10.0 ** rng.uniform(-20, 20, n) * rng.choice([-1, 1], n)
    x = np.concatenate([rng.uniform(-10, 10, n), rng.uniform(-1, 1, n), spread]).astype(np.float32)
    for name in FUNCTIONS:
        attr = FUNCTIONS[name][0]
        mine = pyjax.nn.sigmoid if attr == "sigmoid" else getattr(pyjax.numpy, attr)
        a = np.abs(x) if name.startswith("log") else x
        a = np.clip(a, -1, 1) if name in ("asin", "acos", "atanh") else a
        a = np.abs(x) + 1 if name == "acosh" else a
        with np.errstate(all="ignore"):
            want = np.asarray(function(jax, name)(a))
        row = []
        for mode, native in (("eager", None), ("jit tier 0", False), ("jit tier 1", True)):
            pyjax.clear_caches()
            if native is None:
                got = np.asarray(mine(a))
            else:
                tier0.BLOCKWISE_MIN, tier1.ENABLED = 1, native
                pyjax.config.update("jax_compile_sync", True)
                got = np.asarray(pyjax.jit(mine)(a))
            same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
            row.append(f"{mode} {same.mean():.6f}")
        print(f"{name:9s} " + "   ".join(row))


if __name__ == "__main__":
    import sys
    survey() if "--survey" in sys.argv else main()
