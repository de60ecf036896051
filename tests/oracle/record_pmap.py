"""Record pmap + collective results from real JAX 0.10.2 with 4 forced CPU devices.

    XLA_FLAGS=--xla_force_host_platform_device_count=4 /path/to/venv-with-jax/bin/python \
        tests/oracle/record_pmap.py

Writes tests/data/pmap.json (one record per case: name, output values, dtype, shape).
CASES is shared with tests/test_pmap.py, which runs the same functions under pyjax.
"""
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


def main() -> None:
    import jax
    import jax.numpy as jnp
    from jax import lax
    import numpy as np
    assert jax.local_device_count() == 4, "run with 4 forced CPU devices"
    x = jnp.arange(12.0).reshape(4, 3)
    records = []
    for name, src in CASES.items():
        out = np.asarray(jax.pmap(eval(src, {"lax": lax, "jnp": jnp}), axis_name="i")(x))
        records.append({"name": name, "dtype": out.dtype.name, "shape": list(out.shape),
                        "data": out.ravel().tolist()})
    path = os.path.join(os.path.dirname(__file__), "..", "data", "pmap.json")
    with open(path, "w") as f:
        f.write('{"jax_version": "%s", "records": [\n' % jax.__version__)
        f.write(",\n".join(json.dumps(r, sort_keys=True) for r in records))
        f.write("\n]}\n")
    print(len(records), "records", file=sys.stderr)


if __name__ == "__main__":
    main()
