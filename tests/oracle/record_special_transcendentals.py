"""Record JAX's float32 (and float16/bfloat16) erf, erfc, rsqrt, atan, pow, lgamma, digamma,
asinh and acosh into tests/data/special_transcendentals.npz, for
tests/test_xla_transcendentals.py (record_transcendentals.py's sibling, same layout).

    /work/oracle/bin/python tests/oracle/record_special_transcendentals.py

Needs jax==0.10.2 on an x86-64 CPU with FMA.  Per function: ~3000 float32 inputs (specials,
the edges of each branch of XLA's code and their neighbours, random values over the whole
range and random bit patterns) in one array of a multiple of 8 elements and JAX's results;
float16 and bfloat16: 2000 random bit patterns each.  pow is x ** 1.7 and x ** y for random
pairs.  atan's code depends on the array's shape (glibc's atanf on vector lanes, XLA's own
function in scalar loops): "atan/shapes" holds arrays of several shapes.  rsqrt starts from
the processor's estimate (rsqrtss, which differs between processor makers): "rsqrt/estimate"
holds this processor's estimates of a few inputs, so the test knows whether it runs on a
processor that estimates as the recording one did.  "div_root": a / sqrt(b) and a / rsqrt(b)
under jit (XLA's simplifier swaps the root for the other one and multiplies); "div_const":
bfloat16 x / c under jit (a float32 product with the float32 reciprocal).
"""

import ctypes
import mmap
import os

import numpy as np

from record_transcendentals import half_inputs, record_each  # (the same directory)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "special_transcendentals.npz")

#: function -> (the branch edges of XLA's code for it)
FUNCTIONS = {
    "erf": (3.832, 3.8320334, 1e-7, 2.0 ** -126, 0.5, 1.0),
    "erfc": (1.0, 2.0, 9.419, 9.4192, 10.0, 1e-7, 2.0 ** -126, 0.5),
    "rsqrt": (2.0 ** -126, 1.0, 2.0, 4.0, 3.4e38, 1e-7),
    "atan": (1e-3, 1.0, 2.0, 1e-7, 2.0 ** -126, 3.4e38),
    "pow": (1.0, 2.0, 0.5, 1e-7, 2.0 ** -126, 3.4e38),
    "lgamma": (0.5, 1.0, 2.0, 3.0, -0.5, -1.0, -2.5, 1e-7, 2.0 ** -126, 1e30, 4e36),
    "digamma": (0.5, 1.0, 2.0, -0.5, -1.0, -2.5, 1e-7, 2.0 ** -126, 1e30),
    "asinh": (1.8446743e19, 1.0, 1e-7, 2.0 ** -126, 3.4e38, 0.41, 1e-3, 1e-4),
    "acosh": (1.0, 1.5, 1.70141173e38, 3.4e38, 1.0001, 1.2, 2.0),
}
SPECIALS = (0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, np.inf, -np.inf, np.nan, -np.nan, 1e-40,
            -1e-40, 2.0 ** -126, -(2.0 ** -126), 3.4028235e38, -3.4028235e38, np.pi, -np.pi)
#: shapes whose atan JAX computes on vector lanes, in scalar loops or both
ATAN_SHAPES = ((1,), (2,), (7,), (49,), (50,), (53,), (64,), (1001,), (65537,),
               (65538,), (1, 1), (2, 3), (7, 8), (8, 7), (13, 4), (4, 13), (5, 50),
               (3, 100), (2, 49), (9, 101), (3, 5, 7), (2, 3, 50), (50, 1))
#: the estimates recorded for rsqrt: a few mantissas at two exponents
ESTIMATE_INPUTS = np.concatenate([np.linspace(1, 4, 61, dtype=np.float32),
                                  np.float32([3e-5, 7e20, 1.2345])])
#: constants bfloat16 arrays are divided by under jit ("div_const")
DIVISORS = (3.0, 7.0, 0.1, 1e-3, 10.0, 0.7)
#: out[i] = rsqrtss(x[i]) (pyjax/_src/primitives/xla_math.py's _RSQRTSS_LOOP)
RSQRTSS_LOOP = bytes.fromhex("4885d27419f30f1007f30f52c0f30f11064883c7044883c60448ffca75e7c3")


def f32_inputs(name: str) -> np.ndarray:
    """~3000 float32 inputs for `name` (deterministic)."""
    rng = np.random.default_rng(1000 + sorted(FUNCTIONS).index(name))
    edges = np.array(FUNCTIONS[name], np.float32)
    edges = np.concatenate([edges, -edges])
    up, down = np.float32(np.inf), np.float32(-np.inf)
    near = np.concatenate([edges, np.nextafter(edges, up), np.nextafter(edges, down)])
    parts = [np.array(SPECIALS, np.float32), near,
             -np.arange(0, 40, 0.5), -np.arange(0, 40, 0.5) + np.float32(1e-3),
             rng.uniform(-1, 1, 400), rng.uniform(-10, 10, 400), rng.uniform(-100, 100, 300),
             rng.uniform(0, 5, 300),
             10.0 ** rng.uniform(-30, 38, 400) * rng.choice([-1.0, 1.0], 400),
             rng.integers(0, 2 ** 32, 400, dtype=np.uint64).astype(np.uint32).view(np.float32)]
    with np.errstate(over="ignore", invalid="ignore"):
        x = np.concatenate([np.asarray(p).astype(np.float32) for p in parts])
    return x[:x.size - x.size % 8]


def shape_input(shape: tuple) -> np.ndarray:
    """Values in [-3, 3) for an array of `shape`, from integer arithmetic alone (the test
    makes the same ones; only JAX's results are stored)."""
    i = np.arange(int(np.prod(shape)), dtype=np.uint64)
    bits = (i * np.uint64(2654435761) + np.uint64(12345)) % np.uint64(1 << 32)
    return (bits.astype(np.float64) / 2.0 ** 32 * 6 - 3).astype(np.float32).reshape(shape)


def _shared_root(a, b):
    """a / sqrt(b) where the root is read again (XLA keeps that division)."""
    import jax.numpy as jnp
    root = jnp.sqrt(b)
    return a / root + root


def function(jax, name: str):
    import jax.numpy as jnp
    from jax import lax
    return {"erf": lax.erf, "erfc": lax.erfc, "rsqrt": lax.rsqrt, "atan": jnp.arctan,
            "pow": lambda x: jnp.power(x, x.dtype.type(1.7)), "lgamma": lax.lgamma,
            "digamma": lax.digamma, "asinh": jnp.arcsinh, "acosh": jnp.arccosh}[name]


def rsqrt_estimates(x: np.ndarray) -> np.ndarray:
    """This processor's rsqrtss of each x."""
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page[:len(RSQRTSS_LOOP)] = RSQRTSS_LOOP
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(address)
    x = np.ascontiguousarray(x, np.float32)
    out = np.empty_like(x)
    fn(x.ctypes.data, out.ctypes.data, x.size)
    return out


def main():
    import jax
    import jax.numpy as jnp
    import ml_dtypes
    record = {}
    with np.errstate(all="ignore"):
        record_each(FUNCTIONS, lambda name: function(jax, name), f32_inputs, record)
        rng = np.random.default_rng(7)
        base = rng.uniform(0, 10, 4000).astype(np.float32)
        exponent = rng.uniform(-8, 8, 4000).astype(np.float32)
        record["pow2/x"] = base.view(np.uint32)
        record["pow2/y"] = exponent.view(np.uint32)
        record["pow2/z"] = np.asarray(jax.jit(jnp.power)(base, exponent)).view(np.uint32)
        for i, shape in enumerate(ATAN_SHAPES):
            x = shape_input(shape)
            record[f"atan/shapes/{i}/shape"] = np.array(shape, np.int64)
            record[f"atan/shapes/{i}/y"] = np.asarray(jnp.arctan(x)).view(np.uint32)
        record["atan/threads"] = np.array(len(os.sched_getaffinity(0)))  # XLA splits by them
        # under jit XLA computes a / sqrt(b) as a * rsqrt(b), a / rsqrt(b) as a * sqrt(b)
        numerator = rng.uniform(-3, 3, 4000)
        radicand = np.concatenate([rng.uniform(0, 9, 3992), [0, -1, np.inf, np.nan, 1e-40,
                                                             2.0 ** -126, 1e30, 3e38]])
        for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
            label = np.dtype(dtype).name
            a, b = numerator.astype(dtype), radicand.astype(dtype)
            bits = f"u{np.dtype(dtype).itemsize}"
            record[f"div_root/{label}/a"] = a.view(bits)
            record[f"div_root/{label}/b"] = b.view(bits)
            for kind, fn in (("sqrt", lambda a, b: a / jnp.sqrt(b)),
                             ("rsqrt", lambda a, b: a / jax.lax.rsqrt(b)),
                             ("both", lambda a, b: a / jnp.sqrt(b) + jnp.sqrt(b)),
                             ("shared", _shared_root)):
                record[f"div_root/{label}/{kind}"] = np.asarray(jax.jit(fn)(a, b)).view(bits)
        # bfloat16 x / c under jit: x * (1/c) in float32, rounded once (XLA widens first)
        x = rng.uniform(-100, 100, 4000).astype(ml_dtypes.bfloat16)
        record["div_const/x"] = x.view(np.uint16)
        for c in DIVISORS:
            record[f"div_const/{c!r}"] = np.asarray(jax.jit(lambda a, c=c: a / c)(x)).view(
                np.uint16)
        record["rsqrt/estimate/x"] = ESTIMATE_INPUTS.view(np.uint32)
        record["rsqrt/estimate/y"] = rsqrt_estimates(ESTIMATE_INPUTS).view(np.uint32)
    np.savez_compressed(OUT, **record)
    print(f"wrote {OUT}: {len(record)} arrays")


if __name__ == "__main__":
    main()
