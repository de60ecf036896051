"""Record JAX 0.10.2's jax.ops segment reductions (jaxprs, eager values, errors) into
tests/data/ops_segment.json (read by tests/test_ops_segment.py).

    /work/oracle/bin/python tests/oracle/record_ops_segment.py

`cases(jax, jnp, lax, np)` builds (name, fn, args, traced); the pyjax test imports it, so both
sides run the same functions.  Each case is recorded with x64 off and on: the jaxpr text (or
JAX's error; not for traced=False) and the eager value (or error).
"""
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "ops_segment.json")
OPS = ("sum", "prod", "max", "min")


def cases(jax, jnp, lax, np):
    """List of (name, fn, args, traced)."""
    ops = jax.ops
    C = []

    def add(name, fn, *args, traced=True):
        C.append((name, fn, args, traced))

    rng = np.random.default_rng(7)
    data = rng.normal(size=(7, 3)).astype(np.float32)
    ids = np.array([0, 2, 2, 1, 0, 4, 2], np.int32)
    sorted_ids = np.sort(ids)
    bad_ids = np.array([0, -1, 3, 5, 1, 9, 2], np.int32)
    ints = rng.integers(-5, 6, size=(7,)).astype(np.int32)
    for op in OPS:
        f = getattr(ops, f"segment_{op}")
        add(f"{op}", lambda d, s, f=f: f(d, s, 5), data, ids)
        add(f"{op}_default_num", lambda d, s, f=f: f(d, s), data, ids, traced=False)
        add(f"{op}_sorted_unique", lambda d, s, f=f: f(d, s, 6, indices_are_sorted=True,
                                                       unique_indices=True),
            data[:5], np.array([0, 1, 3, 4, 5], np.int32))
        add(f"{op}_bucket", lambda d, s, f=f: f(d, s, 5, bucket_size=3), data, ids)
        add(f"{op}_bucket_sorted", lambda d, s, f=f: f(d, s, 5, bucket_size=2,
                                                       indices_are_sorted=True),
            data, sorted_ids)
        add(f"{op}_out_of_range", lambda d, s, f=f: f(d, s, 6), data, bad_ids)
        add(f"{op}_clip", lambda d, s, f=f: f(d, s, 6, mode="clip"), data, bad_ids)
        add(f"{op}_promise_in_bounds", lambda d, s, f=f: f(
            d, s, 5, mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS), data, ids)
        add(f"{op}_int", lambda d, s, f=f: f(d, s, 5), ints, ids)
        add(f"{op}_bool", lambda d, s, f=f: f(d, s, 5), ints > 0, ids)
        add(f"{op}_weak_scalar_data", lambda s, f=f: f(2.0, s, 3), np.array(1, np.int32))
        add(f"{op}_zero_segments", lambda d, s, f=f: f(d, s, 0), data, ids)
        add(f"{op}_empty_data", lambda d, s, f=f: f(d, s, 3), data[:0], ids[:0])
        add(f"{op}_grad", jax.grad(lambda d, s, f=f: (f(d, s, 5) ** 2).sum()),
            data + np.float32(1.5), ids)
        add(f"{op}_vmap", jax.vmap(lambda d, s, f=f: f(d, s, 5)),
            np.stack([data, data * 2]), np.stack([ids, sorted_ids]))
        add(f"{op}_vmap_data", jax.vmap(lambda d, f=f: f(d, ids, 5), in_axes=1), data)
        add(f"{op}_jit", jax.jit(lambda d, s, f=f: f(d, s, num_segments=5)), data, ids)
        add(f"{op}_jvp", lambda d, t, f=f: jax.jvp(lambda x: f(x, ids, 5), (d,), (t,)),
            data, np.ones_like(data))
    add("sum_f16", lambda d, s: ops.segment_sum(d, s, 5), data.astype(np.float16), ids)
    add("sum_complex", lambda d, s: ops.segment_sum(d, s, 5),
        (data + 1j * data[::-1]).astype(np.complex64), ids)
    add("max_uint8", lambda d, s: ops.segment_max(d, s, 5), np.arange(7, dtype=np.uint8), ids)
    add("min_int8", lambda d, s: ops.segment_min(d, s, 5), np.arange(7, dtype=np.int8), ids)
    add("sum_int64_ids", lambda d, s: ops.segment_sum(d, s, 5), data, ids.astype(np.int64))
    add("sum_uint8_ids", lambda d, s: ops.segment_sum(d, s, 5), data, ids.astype(np.uint8))
    add("sum_2d_ids", lambda d, s: ops.segment_sum(d, s, 5), data, ids[:6].reshape(2, 3))
    add("sum_np_num_segments", lambda d, s: ops.segment_sum(d, s, np.int32(5)), data, ids)
    add("sum_traced_ids_error", jax.jit(ops.segment_sum), data, ids)
    add("sum_negative_error", lambda d, s: ops.segment_sum(d, s, -1), data, ids)
    add("sum_float_num_error", lambda d, s: ops.segment_sum(d, s, 3.0), data, ids)
    add("sum_list_error", lambda s: ops.segment_sum([1.0, 2.0], s, 3), ids[:2])
    add("sum_float_ids_error", lambda d, s: ops.segment_sum(d, s, 3), data, ids.astype(
        np.float32))
    add("prod_grad_zero", jax.grad(lambda d: ops.segment_prod(d, ids, 5).sum()),
        np.array([0.0, 2.0, 3.0, 4.0, 0.0, 5.0, 6.0], np.float32))
    add("prod_grad_unique", jax.grad(lambda d: ops.segment_prod(
        d, np.arange(7), 8, unique_indices=True).sum()), data[:, 0])
    add("max_grad_ties", jax.grad(lambda d: ops.segment_max(d, ids, 5).sum()),
        np.array([1.0, 2.0, 2.0, 4.0, 1.0, 5.0, 1.0], np.float32))
    add("sum_hessian", jax.hessian(lambda d: (ops.segment_sum(d, ids, 5) ** 3).sum()),
        np.linspace(0.1, 0.7, 7).astype(np.float32))
    return C


def value_of(out, np, jax=None):
    """An eager result as JSON: nested (dtype, shape, weak type, values) records."""
    if isinstance(out, (tuple, list)):
        return [value_of(o, np) for o in out]
    arr = np.asarray(out)
    if arr.dtype.kind == "c":
        values = np.stack([arr.real, arr.imag], -1).astype(np.float64).tolist()
    elif arr.dtype.kind == "f" or arr.dtype.name == "bfloat16":
        values = arr.astype(np.float64).tolist()
    else:
        values = arr.tolist()
    return {"dtype": str(arr.dtype), "shape": list(arr.shape), "values": values,
            "weak_type": bool(getattr(out, "weak_type", False))}


def main():
    sys.path.insert(0, HERE)
    from jaxpr_recording import record_jaxprs_and_values
    warnings.simplefilter("ignore")
    record_jaxprs_and_values(cases, OUT, value_of, value_error="eager_error")


if __name__ == "__main__":
    main()
