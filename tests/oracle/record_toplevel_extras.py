"""Record JAX 0.10.2's jaxprs, values and errors for top-level names JAX added late
(`jax.empty_ref`/`jax.free_ref`, `jax.fwd_and_bwd`, `jax.smap`) into
tests/data/toplevel_extras.json.

    /work/oracle/bin/python tests/oracle/record_toplevel_extras.py

The smap cases need 4 devices: they run in a worker started with
XLA_FLAGS=--xla_force_host_platform_device_count=4 (`smap_cases` is imported by
tests/test_toplevel_extras.py, which runs them under pyjax the same way).
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "toplevel_extras.json")


def cases(jax, jnp, lax, np):
    out = []

    def add(name, fn, *args):
        out.append((name, fn, args))

    f32 = jax.ShapeDtypeStruct((3,), jnp.float32)
    add("empty_ref_eager", lambda: jax.empty_ref(f32))

    def staged(x):
        r = jax.empty_ref(jax.ShapeDtypeStruct((3,), jnp.float32))
        r[...] = x
        y = r[1:] * 2.0
        jax.free_ref(r)
        return y
    add("empty_ref_staged", jax.jit(staged), jnp.arange(3.0, dtype=jnp.float32))
    add("empty_ref_like_array", jax.jit(lambda x: jax.freeze(_filled(jax, x))),
        jnp.arange(4, dtype=jnp.int32))

    def free_eager(x):
        r = jax.new_ref(x)
        res = jax.free_ref(r)
        return len(res), r[...]
    add("free_ref_eager", free_eager, jnp.ones(2, jnp.float32))
    add("free_ref_not_a_ref", lambda x: jax.free_ref(x), jnp.ones(2))

    x = (jnp.arange(12.0, dtype=jnp.float32).reshape(3, 4) - 5) / 7
    w = jnp.linspace(-1, 1, 8, dtype=jnp.float32).reshape(4, 2)
    ct = jnp.ones((3, 2), jnp.float32)

    def f(x, w):
        return jnp.tanh(x @ w)

    def fwd_bwd(argnums, jitted):
        fwd, bwd = jax.fwd_and_bwd(f, argnums=argnums, jitted=jitted)

        def run(x, w, ct):
            y, res = fwd(x, w)
            return y, bwd(res, ct)
        return run
    add("fwd_and_bwd_both", fwd_bwd((0, 1), True), x, w, ct)
    add("fwd_and_bwd_one", fwd_bwd(1, True), x, w, ct)
    add("fwd_and_bwd_unjitted", fwd_bwd(0, False), x, w, ct)

    def with_aux(x, w):
        fwd, bwd = jax.fwd_and_bwd(lambda x, w: (jnp.sum(f(x, w) ** 2), x.max()), argnums=0,
                                   has_aux=True)
        y, res, aux = fwd(x, w)
        return y, aux, bwd(res, jnp.float32(1.0)), res(jnp.float32(2.0))
    add("fwd_and_bwd_aux", with_aux, x, w)
    add("fwd_and_bwd_bad_argnums", lambda x, w: jax.fwd_and_bwd(f, argnums=2)[0](x, w), x, w)
    return out


def _filled(jax, x):
    r = jax.empty_ref(x)
    r[...] = x + 1
    return r


def smap_cases(jax, jnp, lax, np):
    """(name, thunk): run inside a 4-device `jax.set_mesh` context set up by run_smap."""
    x = jnp.arange(8.0, dtype=jnp.float32).reshape(4, 2)

    def body(a):
        return a * 2 + lax.axis_index("i").astype(a.dtype)
    sm = lambda f, **kw: jax.smap(f, axis_name="i", **kw)
    return [
        ("smap_in0_out0", lambda: sm(body, in_axes=0, out_axes=0)(x)),
        ("smap_in1_out1", lambda: sm(body, in_axes=1, out_axes=1)(x.T)),
        ("smap_jit", lambda: jax.jit(sm(body, in_axes=0, out_axes=0))(x)),
        ("smap_jaxpr", lambda: str(jax.make_jaxpr(sm(body, in_axes=0, out_axes=0))(x))),
        ("smap_decorator", lambda: sm(None, in_axes=0, out_axes=0)(body)(x)),
        ("smap_const_out", lambda: sm(lambda a: jnp.ones(2), in_axes=0, out_axes=0)(x)),
        ("smap_unmapped_arg", lambda: sm(lambda a, b: a + b, in_axes=(0, None),
                                         out_axes=0)(x, jnp.ones(2))),
        ("smap_psum", lambda: sm(lambda a: lax.psum(a, "i"), in_axes=0, out_axes=None)(x)),
        ("smap_grad", lambda: jax.grad(lambda v: sm(body, in_axes=0, out_axes=0)(v).sum()
                                       ** 2)(x)),
        ("smap_infer_auto", lambda: sm(body, out_axes=0)(x)),
        ("smap_bad_axis_name", lambda: jax.smap(body, in_axes=0, out_axes=0, axis_name=("i",))),
        ("smap_bad_in_axes", lambda: sm(body, in_axes=[0], out_axes=0)),
        ("smap_bad_in_axes_leaf", lambda: sm(body, in_axes=(0.5,), out_axes=0)),
        ("smap_bad_out_axes", lambda: sm(body, in_axes=0, out_axes="a")),
    ]


def run_smap(jax, jnp, lax, np):
    """Records of smap_cases under a 4-device Auto mesh, one with no mesh, one Explicit."""
    def record(name, thunk):
        try:
            out = thunk()
            if isinstance(out, str):
                return {"name": name, "jaxpr": out}
            return {"name": name, "value": np.asarray(out).tolist(), "shape": list(out.shape)}
        except Exception as e:  # noqa: BLE001 - JAX's error is itself the record
            return {"name": name, "error": {"type": type(e).__name__, "message": str(e)}}
    auto = jax.make_mesh((4,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
    explicit = jax.make_mesh((4,), ("i",), axis_types=(jax.sharding.AxisType.Explicit,))
    with jax.set_mesh(auto):
        records = [record(n, t) for n, t in smap_cases(jax, jnp, lax, np)]
    x = jnp.arange(8.0, dtype=jnp.float32).reshape(4, 2)
    body = lambda a: a * 2
    records.append(record("smap_no_mesh", lambda: jax.smap(body, in_axes=0, out_axes=0,
                                                           axis_name="i")(x)))
    with jax.set_mesh(explicit):
        xs = jax.device_put(x, jax.sharding.NamedSharding(explicit, jax.P("i")))
        records.append(record("smap_infer_explicit",
                              lambda: jax.smap(body, out_axes=0, axis_name="i")(xs)))
    return records


WORKER = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import jax, jax.numpy as jnp
from jax import lax
from record_toplevel_extras import run_smap
print(json.dumps(run_smap(jax, jnp, lax, np)))
"""


if __name__ == "__main__":
    from jaxpr_recording import _record, record_lines
    from record_numpy_manipulation import value_of
    encode = lambda out, np, jax: value_of(np, out)
    records = _record(cases, False, encode) + _record(cases, True, encode)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4")
    proc = subprocess.run([sys.executable, "-c", WORKER, HERE], env=env, capture_output=True,
                          text=True, check=True)
    import jax
    with open(OUT, "w") as f:
        f.write('{"jax_version": %s, "records": [\n%s\n], "smap": [\n%s\n]}\n' % (
            json.dumps(jax.__version__), record_lines(records),
            record_lines(json.loads(proc.stdout))))
    print(f"wrote {len(records)} + smap records to {OUT}", file=sys.stderr)
