"""Record what JAX 0.10.2 does with the small float dtypes (float8_*, float6_*, float4_e2m1fn)
into tests/data/float8.json: jnp.finfo, jnp.promote_types over all pairs of jnp's dtypes and
the weak Python types (x64 off and on), and results of arithmetic and conversions as bit
patterns (eager and under jit).

    /work/oracle/bin/python tests/oracle/record_float8.py

`arith_cases(jax, jnp, np)` is shared with tests/test_float8.py, which runs it under pyjax.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "float8.json")

#: jnp's small float dtypes (float6 arithmetic fails in XLA: only finfo and promotion)
SMALL_FLOATS = ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4",
                "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
                "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"]
COMPUTABLE = [t for t in SMALL_FLOATS if not t.startswith("float6")]
#: every dtype jnp exports, and the weak Python scalar types
DTYPES = ["bool", "int1", "int2", "int4", "int8", "int16", "int32", "int64", "uint1", "uint2",
          "uint4", "uint8", "uint16", "uint32", "uint64", "bfloat16", "float16", "float32",
          "float64", "complex64", "complex128", *SMALL_FLOATS]
WEAK = ["int", "float", "complex"]
FINFO_FIELDS = ["bits", "eps", "epsneg", "max", "min", "tiny", "smallest_normal",
                "smallest_subnormal", "resolution", "nexp", "nmant", "machep", "negep",
                "minexp", "maxexp", "precision", "dtype"]


def dtype_arg(jnp, name):
    return {"int": int, "float": float, "complex": complex}.get(name) or getattr(
        jnp, "bool_" if name == "bool" else name)


def finfo_records(jnp):
    out = {}
    for t in SMALL_FLOATS:
        fi = jnp.finfo(getattr(jnp, t))
        out[t] = {k: str(getattr(fi, k)) for k in FINFO_FIELDS}
    return out


def promotion_records(jnp):
    out = {}
    for a in DTYPES + WEAK:
        for b in DTYPES + WEAK:
            try:
                out[f"{a},{b}"] = {"dtype": str(jnp.promote_types(dtype_arg(jnp, a),
                                                                 dtype_arg(jnp, b)))}
            except Exception as e:  # noqa: BLE001 - the error is the record
                out[f"{a},{b}"] = {"error": type(e).__name__, "message": str(e)}
    return out


def arith_cases(jax, jnp, np):
    """[(name, thunk)] returning arrays of small float types (recorded as bit patterns)."""
    import ml_dtypes
    out = []
    f32 = np.array([0.0, -0.0, 0.1, -0.3, 0.5, 1.0, 1.7, -2.25, 3.3, 7.9, 15.0, 40.0, 250.0,
                    300.0, 460.0, 1e4, 6e4, 1e6, -1e6, 1e-3, 2e-5, 3e-8, np.inf, -np.inf,
                    np.nan, 1.0625, 1.1875, 0.0078125], np.float32)
    for t in COMPUTABLE:
        dt = getattr(jnp, t)
        info = ml_dtypes.finfo(dt)
        # representable, finite operands spread over the type's range
        grid = np.linspace(-float(info.max), float(info.max), 24).astype(np.float32)
        if float(info.min) >= 0:  # e8m0fnu has no sign or zero
            grid = np.geomspace(float(info.tiny), float(info.max) / 4, 24).astype(np.float32)
        x = grid.astype(dt)
        y = np.roll(grid, 5).astype(dt)
        small = (np.linspace(0.25, 2.0, 8).astype(np.float32)).astype(dt)
        add = lambda name, fn, *args: out.append((f"{t}:{name}", fn, args))  # noqa: E731
        add("from_f32", lambda a: jnp.asarray(a).astype(dt), f32)
        add("to_f32", lambda a: a.astype(jnp.float32), x)
        add("to_bf16", lambda a: a.astype(jnp.bfloat16), x)
        add("to_f16", lambda a: a.astype(jnp.float16), x)
        add("lax_convert", lambda a: jax.lax.convert_element_type(a, dt), f32)
        add("add", lambda a, b: a + b, x, y)
        add("sub", lambda a, b: a - b, x, y)
        add("mul", lambda a, b: a * b, x, y)
        add("div", lambda a, b: a / b, x, y)
        add("neg", lambda a: -a, x)
        add("abs", lambda a: jnp.abs(a), x)
        add("maximum", lambda a, b: jnp.maximum(a, b), x, y)
        add("weak_mul", lambda a: a * 1.5, x)
        add("exp", lambda a: jnp.exp(a), small)
        add("log", lambda a: jnp.log(a), small)
        add("sqrt", lambda a: jnp.sqrt(a), small)
        add("sin", lambda a: jnp.sin(a), small)
        add("tanh", lambda a: jnp.tanh(a), small)
        add("sum", lambda a: jnp.sum(a), small)
        add("dot", lambda a, b: jnp.dot(a, b), small, small[::-1])
    return out


def bits(np, a):
    a = np.asarray(a)
    return {"dtype": str(a.dtype), "shape": list(a.shape),
            "bits": a.reshape(-1).view(np.uint8).tolist()}


def arith_records(jax, jnp, np):
    out = {}
    for name, fn, args in arith_cases(jax, jnp, np):
        args = [jnp.asarray(a) for a in args]
        for how, f in (("eager", fn), ("jit", jax.jit(fn))):
            try:
                out[f"{name}:{how}"] = bits(np, f(*args))
            except Exception as e:  # noqa: BLE001 - the error is the record
                out[f"{name}:{how}"] = {"error": type(e).__name__, "message": str(e)}
    return out


def main():
    import jax
    import jax.numpy as jnp
    import numpy as np
    data = {"jax_version": jax.__version__, "finfo": finfo_records(jnp)}
    for flag in (False, True):
        jax.config.update("jax_enable_x64", flag)
        data[f"promote_types_x64_{'on' if flag else 'off'}"] = promotion_records(jnp)
    jax.config.update("jax_enable_x64", False)
    data["arith"] = arith_records(jax, jnp, np)
    with open(OUT, "w") as f:
        json.dump(data, f, indent=0, sort_keys=True)
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
