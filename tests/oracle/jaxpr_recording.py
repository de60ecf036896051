"""Shared by the recorders: run a case list under real JAX with x64 off, then on, and write one
JSON record per case (its jaxpr text or the error JAX raised, and optionally its eager value);
and the pieces of the recorders whose cases are (name, thunk) pairs run in a child process with
a forced device count (memory spaces, sharding, size-one mesh axes), each recorded as repr()
of its result or its error."""
import json
import sys


def error_record(e: BaseException) -> dict:
    """JAX's error as a record: its class name and text."""
    return {"type": type(e).__name__, "message": str(e)}


def _record(cases_fn, x64, encode=None, jaxpr_error="error", value_error="value_error"):
    """Records of `cases_fn(jax, jnp, lax, np)` -> [(name, fn, args[, traced])] with x64 set:
    make_jaxpr's text (unless traced is False) and, given `encode(out, np, jax)`, the eager
    result of fn(*args); a failure is recorded under `jaxpr_error` / `value_error`."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    jax.config.update("jax_enable_x64", x64)
    records = []
    for name, fn, args, *traced in cases_fn(jax, jnp, lax, np):
        rec = {"name": name, "x64": x64}
        if not traced or traced[0]:
            try:
                rec["jaxpr"] = str(jax.make_jaxpr(fn)(*args))
            except Exception as e:  # noqa: BLE001 - JAX's error is itself the record
                rec[jaxpr_error] = error_record(e)
        if encode is not None:
            try:
                rec["value"] = encode(fn(*args), np, jax)
            except Exception as e:  # noqa: BLE001
                rec[value_error] = error_record(e)
        records.append(rec)
    return records


def record_lines(records) -> str:
    """The records as JSON, one a line (sorted keys), comma-separated."""
    return ",\n".join("    " + json.dumps(r, sort_keys=True) for r in records)


def write_records(records, out_path):
    """Write `records` into `out_path` under the recording JAX's version."""
    import jax
    with open(out_path, "w") as f:
        f.write('{"jax_version": %s, "records": [\n%s\n]}\n' % (json.dumps(jax.__version__),
                                                                 record_lines(records)))
    print(f"wrote {len(records)} records to {out_path}", file=sys.stderr)


def record_jaxprs(cases_fn, out_path):
    """Record `cases_fn(jax, jnp, lax, np)` -> [(name, fn, args)] into `out_path`."""
    write_records(_record(cases_fn, False) + _record(cases_fn, True), out_path)


def record_jaxprs_and_values(cases_fn, out_path, encode, **error_keys):
    """As record_jaxprs, with each case's eager value `encode(out, np, jax)` too (and a case may
    carry a fourth item, traced=False, to record its value only); `error_keys` renames the
    failure fields (jaxpr_error=, value_error=)."""
    write_records(_record(cases_fn, False, encode, **error_keys)
                  + _record(cases_fn, True, encode, **error_keys), out_path)


def record_thunk_values(values_fn, encode):
    """Records {name, x64, outputs: encode(thunk(), np)} of `values_fn(jax, jnp, lax, np)` ->
    [(name, thunk)], x64 off then on."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    values = []
    for x64 in (False, True):
        jax.config.update("jax_enable_x64", x64)
        for name, thunk in values_fn(jax, jnp, lax, np):
            values.append({"name": name, "x64": x64, "outputs": encode(thunk(), np)})
    return values


# -- thunk recorders: cases as (name, thunk), each recorded as repr() of its result or its error

def thunk_case_list():
    """An empty list of (name, thunk) cases and the `add(name, thunk)` that appends to it."""
    cases = []

    def add(name, thunk):
        cases.append((name, thunk))
    return cases, add


def jaxpr_thunk(jax, fn, *args):
    """A thunk giving make_jaxpr(fn)(*args)'s text."""
    return lambda: str(jax.make_jaxpr(fn)(*args))


def in_mesh(jax, mesh, thunk):
    """`thunk` run with `mesh` set (jax.set_mesh)."""
    def run():
        with jax.set_mesh(mesh):
            return thunk()
    return run


def repr_or_error(thunk, show=repr) -> str:
    """show(thunk()), or the error's class name and message (source locations cut off)."""
    try:
        value = thunk()
    except Exception as e:  # noqa: BLE001 - the error is the record
        text = str(e).split(" This error occurs at source:")[0]
        return f"{type(e).__name__}: {text}"
    return show(value)


def run_child(script, device_count):
    """The JSON that `script child` prints when run with `device_count` forced CPU devices."""
    import os
    import subprocess
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={device_count}")
    proc = subprocess.run([sys.executable, script, "child"], env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(proc.stdout)


def print_run_all(run_all):
    """The child's part: run_all(jax, jnp, lax, np) under JAX 0.10.2, printed as JSON."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    assert jax.__version__ == "0.10.2"
    print(json.dumps(run_all(jax, jnp, lax, np)))


def write_json(out, out_path):
    """`out` as indented JSON with sorted keys."""
    with open(out_path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


def record_in_children(script, run_all, out_path, layouts):
    """A recorder's main: as `script child`, print run_all's records (print_run_all); else
    run such a child per (key, forced device count) in `layouts` and write their records
    under those keys, with the JAX version, to `out_path`."""
    if len(sys.argv) > 1:
        print_run_all(run_all)
        return
    out = {"jax_version": "0.10.2"}
    for key, count in layouts:
        out[key] = run_child(script, count)
    write_json(out, out_path)
    print(sum(len(out[key]) for key, _ in layouts), "records", file=sys.stderr)
