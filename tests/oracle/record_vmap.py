"""Record JAX's jaxprs of vmapped functions, and values of vmapped random draws, into
tests/data/vmap_jaxprs.json.

    /work/oracle/bin/python tests/oracle/record_vmap.py

Needs jax==0.10.2.  Like record_ad.py, the parent starts one worker (x64 off, checked) and writes
``{"jax_version", "jaxlib_version", "records", "random"}``: one record ``{"name", "jaxpr"}`` (or
``"error"``) per jaxpr case, and one ``{"name", "value", "dtype"}`` per random-value case.

``vmap_cases(jax, jnp, lax, np)`` and ``random_cases(jax, np)`` are imported by
tests/test_batching_rules.py too, so this module never imports jax at top level: the cases
receive the modules as arguments.  Arguments are NumPy arrays with explicit dtypes.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "vmap_jaxprs.json")


def vmap_cases(jax, jnp, lax, np):
    """List of (name, fn, args); the record is str(jax.make_jaxpr(fn)(*args))."""
    f32, i32 = np.float32, np.int32
    vmap = jax.vmap
    v3 = np.array([0.3, 0.6, 0.2], f32)
    v4 = np.array([0.1, 0.5, 0.9, 1.3], f32)
    m43 = (np.arange(12, dtype=f32).reshape(4, 3) + 0.5) / 7
    m34 = m43.T.copy()
    t423 = np.arange(24, dtype=f32).reshape(4, 2, 3) / 5
    cases = []

    def add(name, fn, *args):
        assert name not in {c[0] for c in cases}, name
        cases.append((name, fn, args))

    # elementwise: unary (axis kept), binary (common axis kept, else moved to the front;
    # unbatched operands get a size-1 axis, batched per-example scalars trailing ones)
    add("sin_axis1", vmap(lax.sin, in_axes=1), m43)
    add("integer_pow_axis1", vmap(lambda a: lax.integer_pow(a, 3), in_axes=1), m43)
    add("convert_axis1", vmap(lambda a: lax.convert_element_type(a, np.int32), in_axes=1), m43)
    add("add_same_axis1", vmap(lax.add, in_axes=(1, 1)), m34, m34)
    add("add_axes_0_1", vmap(lax.add, in_axes=(0, 1)), m43, m34)
    add("add_unbatched_vector", vmap(lax.add, in_axes=(1, None)), m34, v3)
    add("add_unbatched_scalar", vmap(lax.add, in_axes=(0, None)), m43, f32(2))
    add("add_batched_scalar_unbatched_vector", vmap(lax.add, in_axes=(0, None)), v3, v3)
    add("mul_literal", vmap(lambda a: a * 2.0), m43)
    add("lt_axis1_unbatched", vmap(lax.lt, in_axes=(1, None)), m34, v3)
    add("nextafter_size1", vmap(lax.nextafter, in_axes=(0, 0)),
        np.ones((4, 1, 3), f32), np.ones((4, 2, 3), f32))
    add("select_n_scalar_which", vmap(lambda p, a, b: lax.select_n(p, a, b)),
        v4 > 0.5, m43, m43 * 2)
    add("select_n_unbatched_which", vmap(lambda a, b: lax.select_n(True, a, b), in_axes=(0, 1)),
        m43, m34)
    add("select_n_batched_which_only", vmap(lambda p, a, b: lax.select_n(p, a, b),
                                            in_axes=(0, None, None)), m43 > 0.5, v3, v3 * 2)
    add("select_n_int_which_axis1", vmap(lambda i, a, b, c: lax.select_n(i, a, b, c),
                                         in_axes=(1, 1, 0, None)),
        (np.arange(12).reshape(3, 4) % 3).astype(i32), m34, m43, v3)
    add("clamp_scalar_bounds", vmap(lambda a: lax.clamp(f32(0.2), a, f32(0.5)), in_axes=1), m43)
    add("clamp_batched_bounds", vmap(lax.clamp, in_axes=(0, 1, None)), v4, m34, f32(0.5))
    add("clamp_vector_bounds_same_axis", vmap(lax.clamp), m43 - 0.1, m43, m43 + 0.1)

    # reductions: axes shifted past the batch axis
    add("reduce_sum_axis1", vmap(lambda a: lax.reduce_sum(a, (1,))), t423)
    add("reduce_sum_in_axis1", vmap(lambda a: lax.reduce_sum(a, (0,)), in_axes=1), t423)
    add("reduce_max_all_in_axis2", vmap(lambda a: lax.reduce_max(a, (0, 1)), in_axes=2), t423)
    add("reduce_and", vmap(lambda a: lax.reduce_and(a, (0,))), m43 > 0.5)
    add("argmax_in_axis1", vmap(lambda a: lax.argmax(a, 0, np.int32), in_axes=1), t423)
    add("jnp_mean", vmap(lambda a: jnp.mean(a, axis=0)), t423)

    # dot_general: both operands batched (a new batch dimension), one batched (a free one)
    add("dot_vectors", vmap(jnp.dot), m43, m43)
    add("dot_vectors_axes_1_0", vmap(lax.dot, in_axes=(1, 0)), m34, m43)
    add("matvec_lhs_batched", vmap(lambda a, b: lax.dot(a, b), in_axes=(0, None)), t423, v3)
    add("matvec_rhs_batched_axis1", vmap(lambda a, b: lax.dot(a, b), in_axes=(None, 1)),
        m43[:2].copy(), m34)
    add("dot_general_batch_dims", vmap(
        lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), in_axes=(2, None)),
        np.ones((2, 3, 4, 5), f32), np.ones((2, 5, 6), f32))
    add("matmul_both_batched", vmap(jnp.matmul, in_axes=(0, 2)),
        t423, np.ones((3, 5, 4), f32))

    # composition: vmap of vmap, of grad (add_any), grad of vmap
    add("vmap_vmap_add", vmap(vmap(lax.add, in_axes=(0, None)), in_axes=(None, 0)), v3, v4)
    add("vmap_grad_square_mul", vmap(jax.grad(lambda a: a * a * lax.sin(a))), v4)
    add("vmap_grad_dot", vmap(jax.grad(lambda w, a: jnp.tanh(jnp.dot(a, w)).sum()),
                              in_axes=(None, 0)), m34, t423)
    add("grad_of_vmap", jax.grad(lambda a: vmap(lambda r: jnp.sum(r * r))(a).sum()), m43)

    # keys (random_bits, random_split vectorized; random_fold_in broadcast; random_gamma's
    # operands at the front; jit calls batched)
    keys = jax.random.split(jax.random.key(0), 3)
    add("vmap_random_bits", vmap(lambda k: jax.random.bits(k, (2,))), keys)
    add("vmap_random_normal", vmap(lambda k: jax.random.normal(k, (2,))), keys)
    add("vmap_random_gamma", vmap(lambda k, a: jax.random.gamma(k, a)), keys,
        np.ones(3, f32))
    add("vmap_fold_in_data", vmap(lambda d: jax.random.fold_in(jax.random.key(1), d)),
        np.arange(3, dtype=np.uint32))
    add("vmap_random_split", vmap(lambda k: jax.random.split(k)), keys)
    return cases


def random_cases(jax, np):
    """List of (name, thunk); the record is the thunk's value (a vmap over keys)."""
    key = jax.random.key(42)
    keys = jax.random.split(key, 4)
    vmap = jax.vmap
    return [
        ("normal", lambda: vmap(lambda k: jax.random.normal(k, (3,)))(keys)),
        ("uniform_out_axis1",
         lambda: vmap(lambda k: jax.random.uniform(k, (2, 3)), out_axes=1)(keys)),
        ("bits", lambda: vmap(lambda k: jax.random.bits(k, (5,)))(keys)),
        ("split_data", lambda: jax.random.key_data(vmap(lambda k: jax.random.split(k, 3))(keys))),
        ("fold_in_batched_data",
         lambda: jax.random.key_data(vmap(lambda d: jax.random.fold_in(key, d))(
             np.arange(3, dtype=np.uint32)))),
        ("fold_in_batched_both",
         lambda: jax.random.key_data(vmap(jax.random.fold_in)(keys,
                                                               np.arange(4, dtype=np.uint32)))),
        ("randint", lambda: vmap(lambda k: jax.random.randint(k, (4,), 0, 10))(keys)),
        ("gamma", lambda: vmap(lambda k, a: jax.random.gamma(k, a, (2,)))(
            keys, np.array([0.5, 1.0, 2.0, 5.0], np.float32))),
        ("poisson", lambda: vmap(lambda k: jax.random.poisson(k, 3.0, (3,)))(keys)),
        ("raw_keys_normal", lambda: vmap(lambda k: jax.random.normal(k, (2,)))(
            jax.random.split(jax.random.PRNGKey(1), 3))),
        ("seed", lambda: jax.random.key_data(vmap(jax.random.key)(np.arange(3, dtype=np.int32)))),
    ]


# --------------------------------------------------------------------------------------------
# recording
# --------------------------------------------------------------------------------------------

def _worker(path):
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax import lax
    if jax.config.jax_enable_x64:
        raise SystemExit("JAX_ENABLE_X64 must be off")
    records, values = [], []
    for name, fn, args in vmap_cases(jax, jnp, lax, np):
        record = {"name": name}
        try:
            record["jaxpr"] = str(jax.make_jaxpr(fn)(*args))
        except Exception as e:  # noqa: BLE001 - recorded
            record["error"] = {"type": type(e).__name__, "message": str(e)}
        records.append(record)
    for name, thunk in random_cases(jax, np):
        out = np.asarray(thunk())
        values.append({"name": name, "dtype": out.dtype.name, "shape": list(out.shape),
                       "value": out.ravel().tolist()})
    with open(path, "w") as f:
        json.dump({"jax_version": jax.__version__,
                   "jaxlib_version": __import__("jaxlib").__version__,
                   "records": records, "random": values}, f)


def main():
    if len(sys.argv) == 2:
        _worker(sys.argv[1])
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "vmap.json")
        env = dict(os.environ, JAX_ENABLE_X64="0", JAX_PLATFORMS="cpu")
        subprocess.run([sys.executable, os.path.abspath(__file__), path], env=env, check=True,
                       cwd=tmp)
        with open(path) as f:
            data = json.load(f)
    records = ",\n".join(json.dumps(r, sort_keys=True) for r in data["records"])
    values = ",\n".join(json.dumps(r, sort_keys=True) for r in data["random"])
    with open(OUT, "w") as f:
        f.write(f'{{"jax_version": "{data["jax_version"]}", '
                f'"jaxlib_version": "{data["jaxlib_version"]}", '
                f'"records": [\n{records}\n], "random": [\n{values}\n]}}\n')
    print(f"wrote {len(data['records'])} jaxprs and {len(data['random'])} values to {OUT}")


if __name__ == "__main__":
    main()
