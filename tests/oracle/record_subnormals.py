"""Record JAX's results where subnormals meet arithmetic into tests/data/subnormals.json.

    /work/oracle/bin/python tests/oracle/record_subnormals.py

Needs jax==0.10.2.  XLA's CPU code flushes subnormal operands and results to zero (MXCSR's DAZ
and FTZ bits); copies, negation, abs, bit casts and conversions of NumPy constants keep them,
and jit's algebraic simplifier removes some operations (x * 1, max(x, x), a reduction over no
axes) before any arithmetic happens.  Each case is an expression over `jax`, `jnp`, `lax` and
`np`; its value is stored as dtype, shape and the hex bits of each element.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "subnormals.json")

TINY = "jnp.float32(1e-40)"
VEC = "jnp.full(3, 1e-40, jnp.float32)"
CASES = [
    # storing, copying and bitwise operations keep a subnormal
    TINY, VEC, f"-{TINY}", f"jnp.abs(-{VEC})", f"{VEC}[1:]", f"jnp.concatenate([{VEC}, {VEC}])",
    "jnp.nextafter(jnp.float32(0), jnp.float32(1))", f"lax.bitcast_convert_type({TINY}, jnp.int32)",
    "jnp.array([1e-6], jnp.float16) * 1",
    # arithmetic flushes operands (DAZ) and results (FTZ)
    f"{TINY} * 1e38", f"{TINY} * 1", f"{VEC} + 0.", f"{TINY} > 0", f"{VEC} == 0",
    f"jnp.maximum({VEC}, 0.)", f"jnp.minimum({VEC}, 1.)", f"jnp.sqrt({VEC})", f"jnp.sin({VEC})",
    f"jnp.sign({VEC})", f"jnp.floor({VEC})", f"jnp.where({VEC} > 0, 1, 2)",
    "jnp.exp(jnp.float32(-100.))", "jnp.float32(2.0 ** -126) / 2", "jnp.multiply(1e-40, 1.0)",
    f"jnp.sum({VEC})", f"jnp.cumsum({VEC})", f"jnp.mean({VEC})", f"jnp.prod({VEC} + 1)",
    f"jnp.sum({TINY})", "jnp.dot(jnp.full(4, 1e-20, jnp.float32), jnp.full(4, 1e-20, jnp.float32))",
    "jnp.array([1e-40], jnp.bfloat16) * 1", "jnp.complex64(1e-40 + 2e-40j) * 1",
    f"jax.nn.relu({VEC})", f"{VEC}.astype(jnp.int32)", f"{VEC}.astype(jnp.bfloat16)",
    "jnp.full(4, 4e-38, jnp.float32) * 0.25",
    # jit: the same arithmetic flushes; XLA's simplifier drops x * 1, x / 1, x + 0, max(x, x)
    f"jax.jit(lambda x: x * 1e38)({TINY})", f"jax.jit(lambda x: x * 2)({VEC})",
    f"jax.jit(lambda x: x * 1.)({VEC})", f"jax.jit(lambda x: 1. * x)({TINY})",
    f"jax.jit(lambda x: x * 3 / 3)({VEC})", f"jax.jit(lambda x: x / 1.)({VEC})",
    f"jax.jit(lambda x: x + 0.)({TINY})", f"jax.jit(lambda x: x - 0.)({VEC})",
    f"jax.jit(lambda x: x * 1. * 2.)({VEC})", f"jax.jit(lambda x: jnp.maximum(x, x))({VEC})",
    f"jax.jit(lambda x: x * jnp.ones_like(x))({VEC})", f"jax.jit(jnp.sum)({TINY})",
    f"jax.jit(jnp.sum)({VEC})", f"jax.jit(lambda x: jnp.sin(x) + x)({VEC})",
    f"jax.jit(lambda x: x > 0)({VEC})", "jax.jit(jnp.exp)(jnp.float32(-100.))",
    "jax.jit(lambda x: jnp.sum(x * 0.25))(jnp.full(10000, 4e-38, jnp.float32))",
    "jax.jit(lambda x: jnp.tanh(x) * 1e-38)(jnp.linspace(0., 1., 5000, dtype=jnp.float32))",
    "jax.jit(lambda: jnp.float32(1e-40) * 2)()", f"jax.grad(lambda x: x * x)({TINY})",
    f"jax.vmap(lambda x: x * 2)({VEC})", "jax.lax.fori_loop(0, 3, lambda i, x: x * 0.5, "
    "jnp.float32(4e-38))",
]
# unary functions at +-subnormal and +-0: XLA's sin, tan, tanh, atan and expm1 return a tiny x
# itself, the others flush it; cumulative reductions start from their identity (0 + -0. = 0.)
SIGNED = "jnp.array([1e-40, -1e-40, 0.0, -0.0], jnp.float32)"
UNARY = ("sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arctan", "arcsinh", "arctanh",
         "expm1", "log1p", "exp", "sqrt", "cbrt", "square", "reciprocal", "round", "trunc",
         "ceil", "rint", "sign", "log", "cumsum", "cumprod", "sort", "negative", "positive",
         "abs", "fabs")
CASES += [f"jnp.{name}({SIGNED})" for name in UNARY]
CASES += [f"jax.jit(jnp.{name})({SIGNED})" for name in ("sin", "sinh", "cumsum", "log1p")]
CASES += ["jnp.cumsum(jnp.array([-0.0, 1.0]))", "jnp.cumsum(jnp.full(40, -0.0))",
          f"lax.cummax({SIGNED})", f"lax.cummin({SIGNED}[::-1])",
          f"lax.cumsum({SIGNED}, reverse=True)", "jnp.cumprod(jnp.array([-1e-40, 2.0]))",
          "lax.cummax(jnp.array([0.0, -0.0]))", "lax.cummin(jnp.array([-0.0, 0.0, -0.0]))",
          "lax.cummax(jnp.array([-0.0, 0.0, -0.0]))"]
CASES_X64 = [
    "jnp.array(1e-310) * 1", "jnp.float64(2.0) ** -1070", "jax.jit(lambda a: a * 1)(1e-310)",
    "jax.jit(lambda a: a * 2)(1e-310)", "lax.convert_element_type(jnp.float32(1e-40), jnp.float64)",
    "lax.convert_element_type(np.float32(1e-40), np.float64)",
    "jnp.float32(1e-40).astype(jnp.float64)", "jnp.asarray(np.float32(1e-40), jnp.float64)",
    "jnp.array(np.float32([1e-40]), jnp.float64)", "jnp.sum(jnp.full(3, 1e-310))",
]


def encode(np, value):
    """{"dtype", "shape", "bits"}: each element's bits as hex (bool and ints as integers)."""
    value = np.asarray(value)
    flat = np.ascontiguousarray(value).reshape(-1)
    size = flat.dtype.itemsize
    bits = flat.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size]) \
        if value.dtype.kind not in "c" else flat.view(np.uint64 if size == 8 else np.uint32)
    return {"dtype": str(value.dtype), "shape": list(value.shape),
            "bits": [format(int(b), "x") for b in bits]}


def main():
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    env = {"jax": jax, "jnp": jnp, "np": np, "lax": lax}
    records = {"x64_off": {c: encode(np, eval(c, env)) for c in CASES}}
    jax.config.update("jax_enable_x64", True)
    records["x64_on"] = {c: encode(np, eval(c, env)) for c in CASES_X64}
    with open(OUT, "w") as f:
        json.dump(records, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
