"""Shared by the jaxpr recorders: run a case list under real JAX with x64 off, then on, and
write one JSON record per case (its jaxpr text, or the error JAX raised)."""
import json
import sys


def _record(cases_fn, x64):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    jax.config.update("jax_enable_x64", x64)
    records = []
    for name, fn, args in cases_fn(jax, jnp, lax, np):
        rec = {"name": name, "x64": x64}
        try:
            rec["jaxpr"] = str(jax.make_jaxpr(fn)(*args))
        except Exception as e:  # noqa: BLE001 - JAX's error is itself the record
            rec["error"] = {"type": type(e).__name__, "message": str(e)}
        records.append(rec)
    return records


def record_jaxprs(cases_fn, out_path):
    """Record `cases_fn(jax, jnp, lax, np)` -> [(name, fn, args)] into `out_path`."""
    import jax
    records = _record(cases_fn, False) + _record(cases_fn, True)
    lines = ",\n".join("    " + json.dumps(r, sort_keys=True) for r in records)
    with open(out_path, "w") as f:
        f.write('{"jax_version": %s, "records": [\n%s\n]}\n' % (json.dumps(jax.__version__),
                                                                 lines))
    print(f"wrote {len(records)} records to {out_path}", file=sys.stderr)
