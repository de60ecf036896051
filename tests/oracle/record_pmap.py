"""Record pmap + collective results from real JAX 0.10.2 with 4 forced CPU devices.

    XLA_FLAGS=--xla_force_host_platform_device_count=4 /path/to/venv-with-jax/bin/python \
        tests/oracle/record_pmap.py

Writes tests/data/pmap.json (one record per case: name, output values, dtype, shape, and the
jaxpr of the pmapped function: JAX stages pmap as jit[name=_fun] of a shard_map), and one
record per JAXPR_CASES entry (the jaxpr of a function of x calling a pmapped function) and
per ERROR_CASES entry (the error JAX raises).  CASES, JAXPR_CASES and ERROR_CASES are shared
with tests/test_pmap.py, which runs them under pyjax.
"""
import functools
import json
import os
import sys

CASES = {
    "pmap_square": "lambda x: x * x",
    "psum": "lambda x: lax.psum(x, 'i')",
    "pmean": "lambda x: lax.pmean(x, 'i')",
    "pmax": "lambda x: lax.pmax(x, 'i')",
    "all_gather": "lambda x: lax.all_gather(x, 'i')",
    "all_gather_tiled": "lambda x: lax.all_gather(x, 'i', tiled=True)",
    "ppermute_ring": "lambda x: lax.ppermute(x, 'i', [(0, 1), (1, 2), (2, 3), (3, 0)])",
    "ppermute_partial": "lambda x: lax.ppermute(x, 'i', [(0, 2), (1, 3)])",
    "axis_index": "lambda x: x * 0 + lax.axis_index('i')",
    "psum_scatter": "lambda x: lax.psum_scatter(jnp.tile(x, 4), 'i', tiled=True)",
    "normalise": "lambda x: x / lax.psum(x.sum(), 'i')",
}

#: name -> a function of x (f32[4, 3]) whose make_jaxpr is recorded
JAXPR_CASES = {
    "unnamed_axis": "lambda x: jax.pmap(jnp.sin)(x)",
    "in_axes_none": "lambda x: jax.pmap(lambda a, b: a * b, in_axes=(0, None))(x, 2.0)",
    "in_axes_1": "lambda x: jax.pmap(lambda a: a.sum(), in_axes=1)(x.T[:, :4])",
    "out_axes_none": "lambda x: jax.pmap(lambda a: (a, lax.psum(a, 'i')), axis_name='i', "
                     "out_axes=(0, None))(x)",
    "static_arg": "lambda x: jax.pmap(lambda a, n: a * n, static_broadcasted_argnums=1)(x, 3)",
    "pytree_args": "lambda x: jax.pmap(lambda d: d['a'] - d['b'])({'a': x, 'b': x * 2})",
    "keyword_arg": "lambda x: jax.pmap(lambda a, b: a * b)(x, b=x)",
    "two_devices": "lambda x: jax.pmap(lambda a: a * 2)(x[:2])",
    "jit_of_pmap": "jax.jit(jax.pmap(lambda a: jnp.cos(a) + 1))",
    # vmap of the jit of shard_map: JAX's shard_map batching rule (batch axes unsplit in specs)
    "vmap_of_pmap": "lambda x: jax.vmap(jax.pmap(jnp.sin))(x[None])",
    "vmap_of_pmap_in_axes_1": "lambda x: jax.vmap(jax.pmap(jnp.sin), in_axes=1)(x[..., None])",
    "vmap_of_pmap_psum": "lambda x: jax.vmap(jax.pmap(lambda a: lax.psum(a, 'i'), "
                         "axis_name='i'))(jnp.stack([x, x * 2]))",
    "vmap_of_pmap_unbatched_arg": "lambda x: jax.vmap(jax.pmap(lambda a, b: a * b), "
                                  "in_axes=(0, None))(jnp.stack([x, x]), x)",
    "vmap_of_pmap_out_axes": "lambda x: jax.vmap(jax.pmap(lambda a: (a, lax.pmax(a, 'i')), "
                             "axis_name='i', out_axes=(1, None)), out_axes=1)(x[None])",
}

#: name -> a thunk of x (f32[4, 3]) whose error (class and message) is recorded: static
#: arguments that do not hash or are missing
_SCALED = "jax.pmap(lambda a, n: a * n, static_broadcasted_argnums=(1,))"
ERROR_CASES = {
    "static_traced": f"lambda x: jax.make_jaxpr(lambda x, n: {_SCALED}(x, n))(x, 2)",
    "static_traced_jit": f"lambda x: jax.jit(lambda x, n: {_SCALED}(x, n))(x, 2)",
    "static_traced_vmap": f"lambda x: jax.vmap(lambda n: {_SCALED}(x, n))(jnp.arange(2))",
    "static_array": f"lambda x: {_SCALED}(x, jnp.array(2))",
    "static_list": f"lambda x: {_SCALED}(x, [2])",
    "static_partial_name": "lambda x: jax.pmap(functools.partial(lambda a, n: a * n), "
                           "static_broadcasted_argnums=1)(x, [2])",
    "static_missing": f"lambda x: {_SCALED}(x)",
    "static_keyword": f"lambda x: {_SCALED}(x, n=2)",
    "static_missing_two": "lambda x: jax.pmap(lambda a, b, n=1: a * n, "
                          "static_broadcasted_argnums=(2,))(x, x)",
}


def error_text(thunk) -> str:
    """'Class: message' of the error thunk() raises ('no error' if none)."""
    try:
        thunk()
    except Exception as e:  # noqa: BLE001 - the error is the record
        return f"{type(e).__name__}: {e}"
    return "no error"


def main() -> None:
    import jax
    import jax.numpy as jnp
    from jax import lax
    import numpy as np
    assert jax.local_device_count() == 4, "run with 4 forced CPU devices"
    x = jnp.arange(12.0).reshape(4, 3)
    records = []
    for name, src in CASES.items():
        fn = jax.pmap(eval(src, {"lax": lax, "jnp": jnp}), axis_name="i")
        out = np.asarray(fn(x))
        records.append({"name": name, "dtype": out.dtype.name, "shape": list(out.shape),
                        "data": out.ravel().tolist(), "jaxpr": str(jax.make_jaxpr(fn)(x))})
    for name, src in JAXPR_CASES.items():
        fn = eval(src, {"jax": jax, "lax": lax, "jnp": jnp})
        records.append({"name": name, "jaxpr": str(jax.make_jaxpr(fn)(x))})
    for name, src in ERROR_CASES.items():
        thunk = eval(src, {"jax": jax, "lax": lax, "jnp": jnp, "functools": functools})
        records.append({"name": name, "error": error_text(lambda: thunk(x))})
    path = os.path.join(os.path.dirname(__file__), "..", "data", "pmap.json")
    with open(path, "w") as f:
        f.write('{"jax_version": "%s", "records": [\n' % jax.__version__)
        f.write(",\n".join(json.dumps(r, sort_keys=True) for r in records))
        f.write("\n]}\n")
    print(len(records), "records", file=sys.stderr)


if __name__ == "__main__":
    main()
