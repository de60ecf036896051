"""Record jnp.einsum with a substituted `_dot_general` and with `precision=` /
`preferred_element_type=` under JAX 0.10.2 into tests/data/einsum_dot_general.json: the
calls einsum makes to `_dot_general` (dimension numbers, precision, preferred type), the
result (dtype, shape, values) and the jaxpr text, with x64 off and on.

    /work/oracle/bin/python tests/oracle/record_einsum_dot_general.py

`cases(jax, jnp, lax, np)` is shared with tests/test_einsum_dot_general.py.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "einsum_dot_general.json")


def cases(jax, jnp, lax, np):
    """[(name, fn(log) -> callable, args)]: fn builds the function to run given a list that a
    substituted dot_general appends its calls to."""
    rng = np.random.RandomState(0)
    a = rng.randn(2, 3, 4).astype(np.float32)
    b = rng.randn(2, 4, 5).astype(np.float32)
    m = rng.randn(3, 4).astype(np.float32)
    v = rng.randn(4).astype(np.float32)
    i8 = rng.randint(-5, 5, (3, 4)).astype(np.int8)
    bf = rng.randn(3, 4).astype(jnp.bfloat16)

    def logging(log, scale=None):
        def dot_general(lhs, rhs, dimension_numbers, precision=None,
                        preferred_element_type=None, **kw):
            log.append([repr(dimension_numbers), str(precision), str(preferred_element_type),
                        sorted(kw)])
            out = lax.dot_general(lhs, rhs, dimension_numbers, precision,
                                  preferred_element_type=preferred_element_type)
            return out if scale is None else out * scale
        return dot_general

    out = []

    def add(name, make, *args):
        out.append((name, make, args))

    add("batched_matmul", lambda log: lambda x, y: jnp.einsum(
        "bij,bjk->bik", x, y, _dot_general=logging(log)), a, b)
    add("scaled_dot_general", lambda log: lambda x, y: jnp.einsum(
        "bij,bjk->bki", x, y, _dot_general=logging(log, 2.0)), a, b)
    add("three_operands", lambda log: lambda x, y, z: jnp.einsum(
        "ij,j,bjk->bik", x, z, y, _dot_general=logging(log)), m, b, v)
    add("matvec_precision", lambda log: lambda x, y: jnp.einsum(
        "ij,j->i", x, y, precision=lax.Precision.HIGHEST, _dot_general=logging(log)), m, v)
    add("precision_pair", lambda log: lambda x, y: jnp.einsum(
        "ij,kj->ik", x, y, precision=(lax.Precision.HIGH, lax.Precision.DEFAULT),
        _dot_general=logging(log)), m, m)
    add("preferred_int8", lambda log: lambda x, y: jnp.einsum(
        "ij,kj->ik", x, y, preferred_element_type=jnp.int32, _dot_general=logging(log)),
        i8, i8)
    add("preferred_bf16_to_f32", lambda log: lambda x, y: jnp.einsum(
        "ij,kj->ik", x, y, preferred_element_type=jnp.float32, _dot_general=logging(log)),
        bf, bf)
    add("preferred_none_bf16", lambda log: lambda x, y: jnp.einsum(
        "ij,kj->ik", x, y, _dot_general=logging(log)), bf, bf)
    add("no_contraction_outer", lambda log: lambda x, y: jnp.einsum(
        "i,j->ij", x, y, _dot_general=logging(log)), v, v)
    add("unary_trace_no_dot", lambda log: lambda x: jnp.einsum(
        "ii->", x, _dot_general=logging(log)), m[:, :3])
    add("default_precision_highest", lambda log: lambda x, y: jnp.einsum(
        "bij,bjk->bik", x, y, precision="highest"), a, b)
    add("preferred_f32_int_inputs", lambda log: lambda x, y: jnp.einsum(
        "ij,kj->ik", x, y, preferred_element_type=jnp.float32), i8, i8)
    return out


def encode(np, v):
    arr = np.asarray(v)
    return {"dtype": str(arr.dtype), "shape": list(arr.shape),
            "values": arr.astype(np.float64).tolist()}


def run(jax, jnp, lax, np, x64):
    jax.config.update("jax_enable_x64", x64)
    records = {}
    try:
        for name, make, args in cases(jax, jnp, lax, np):
            rec = {}
            log = []
            try:
                rec["value"] = encode(np, make(log)(*args))
                rec["calls"] = log
            except Exception as e:  # noqa: BLE001 - the error is the record
                rec["error"] = {"type": type(e).__name__, "message": str(e)}
            try:
                rec["jaxpr"] = str(jax.make_jaxpr(make([]))(*args))
            except Exception as e:  # noqa: BLE001
                rec["jaxpr_error"] = {"type": type(e).__name__, "message": str(e)}
            records[name] = rec
    finally:
        jax.config.update("jax_enable_x64", False)
    return records


def main():
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    data = {"jax_version": jax.__version__, "x64_off": run(jax, jnp, lax, np, False),
            "x64_on": run(jax, jnp, lax, np, True)}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
