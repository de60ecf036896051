"""Record the shardings JAX 0.10.2 gives jit results whose arguments are laid out over a
mesh (8 forced CPU devices, Auto and Explicit mesh axes): tests/data/propagation.json.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 /path/to/jax-venv/bin/python \\
        tests/oracle/record_propagation.py
"""
from __future__ import annotations

import json
import os
import sys

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                   "propagation.json")

#: (name, source of a function of the arguments, argument names): a (8, 8) P('x', 'y'),
#: b (8,) P('x'), c (8,) P()
CASES = [
    ("elementwise", "lambda a: 2 * jnp.sin(a) + 1", "a"),
    ("sum axis 0", "lambda a: a.sum(0)", "a"),
    ("sum axis 1", "lambda a: a.sum(1)", "a"),
    ("sum all", "lambda a: a.sum()", "a"),
    ("max axis 1", "lambda a: a.max(1)", "a"),
    ("transpose", "lambda a: a.T", "a"),
    ("vector", "lambda b: b * 2", "b"),
    ("replicated", "lambda c: c * 2", "c"),
    ("replicated + vector", "lambda b, c: b + c", "bc"),
    ("matvec", "lambda a, c: a @ c", "ac"),
    ("vecmat", "lambda c, a: c @ a", "ca"),
    ("matmul", "lambda a: a @ a.T", "a"),
    ("broadcast", "lambda b: b[None, :] * jnp.ones((3, 1))", "b"),
    ("reshape", "lambda a: a.reshape(4, 16)", "a"),
    ("slice", "lambda a: a[:4]", "a"),
    ("outer", "lambda b, c: b[:, None] * c[None, :]", "bc"),
    ("concatenate", "lambda a: jnp.concatenate([a, a], axis=1)", "a"),
    ("two outputs", "lambda a, b: (a + 1, b.sum())", "ab"),
    ("where", "lambda a: jnp.where(a > 3, a, 0.0)", "a"),
]


def main() -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    assert jax.__version__ == "0.10.2", jax.__version__
    records = []
    for kind in ("Auto", "Explicit"):
        mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(getattr(AxisType, kind),) * 2)
        args = {"a": jax.device_put(np.arange(64.0, dtype=np.float32).reshape(8, 8),
                                    NamedSharding(mesh, P("x", "y"))),
                "b": jax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(mesh, P("x"))),
                "c": jax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(mesh, P()))}
        for name, source, names in CASES:
            rec = {"axis_types": kind, "name": name, "source": source, "args": names}
            try:
                out = jax.jit(eval(source, {"jnp": jnp}))(*[args[n] for n in names])
                rec["shardings"] = [str(o.sharding) for o in jax.tree.leaves(out)]
            except Exception as e:  # noqa: BLE001 - JAX's refusal is the record
                rec["error"] = type(e).__name__
            records.append(rec)
    with open(OUT, "w") as f:
        json.dump({"jax_version": jax.__version__, "cases": records}, f, indent=1)
        f.write("\n")
    print(f"wrote {len(records)} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
