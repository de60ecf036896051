"""Record JAX's complex elementwise results at special values into tests/data/complex_special.json.

    /work/oracle/bin/python tests/oracle/record_complex_special.py

Needs jax==0.10.2.  Inputs are the 64 values a + bj for a, b in SPECIALS (and, for the binary
functions, 1600 pairs of them), plus a random sample of ordinary values, in complex64 and
complex128 (x64 on for both).  Each unary function is recorded eagerly and under jit; binary
ones (one XLA op either way) under jit.  Values are stored as the hex bits of each part, so NaN,
infinities and signed zeros survive JSON.  The test imports the input builders from here.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "complex_special.json")

SPECIALS = (0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"), 1e30)
UNARY = ("exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan",
         "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
         "reciprocal", "square", "sign", "abs", "angle")
BINARY = ("multiply", "divide", "power")
DTYPES = ("complex64", "complex128")


def inputs(np):
    """{"grid": 64 values, "random": 64 ordinary values} as complex128 arrays (parts of
    magnitude 0.01 to 10: no result is subnormal, which XLA's CPU flushes to zero)."""
    grid = np.array([complex(a, b) for a in SPECIALS for b in SPECIALS])
    rng = np.random.default_rng(0)
    mag = 10.0 ** rng.uniform(-2, 1, (2, 64)) * rng.choice([-1.0, 1.0], (2, 64))
    return {"grid": grid, "random": mag[0] + 1j * mag[1]}


def pairs(np, x):
    """Pairs (x[i], y[j]) for every x[i] and the 25 y[j] with parts in 0, -0, 1, inf, nan."""
    parts = (0.0, -0.0, 1.0, float("inf"), float("nan"))
    y = np.array([complex(a, b) for a in parts for b in parts]).astype(x.dtype)
    return np.repeat(x, len(y)), np.tile(y, len(x))


def encode(np, values):
    """Hex bits of the real and imaginary parts (real outputs: imaginary part omitted)."""
    values = np.asarray(values)
    uint = {4: np.uint32, 8: np.uint64}
    parts = [values.real, values.imag] if np.iscomplexobj(values) else [values]
    return [[format(int(v), "x") for v in np.ascontiguousarray(p).view(uint[p.dtype.itemsize])]
            for p in parts]


def main():
    import jax
    import numpy as np
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    records = {}
    for dtype in DTYPES:
        for set_name, values in inputs(np).items():
            x = values.astype(dtype)
            for name in UNARY:
                fn = getattr(jnp, name)
                records[f"{dtype}/{set_name}/{name}/eager"] = encode(np, fn(x))
                records[f"{dtype}/{set_name}/{name}/jit"] = encode(np, jax.jit(fn)(x))
            a, b = pairs(np, x) if set_name == "grid" else (x, np.roll(x, 1))
            for name in BINARY:
                records[f"{dtype}/{set_name}/{name}/jit"] = encode(
                    np, jax.jit(getattr(jnp, name))(a, b))
    with open(OUT, "w") as f:
        json.dump({"jax_version": jax.__version__, "records": records}, f, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(records)} records to {OUT}")


if __name__ == "__main__":
    main()
