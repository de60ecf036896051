"""Record JAX 0.10.2's shard_map results on 8 forced CPU devices (a 4 x 2 mesh) into
tests/data/shard_map.json.

    /work/oracle/bin/python tests/oracle/record_shard_map.py

The parent starts one worker with XLA_FLAGS=--xla_force_host_platform_device_count=8; each case
records its value (or JAX's error) and, for some, the text of make_jaxpr (with check_vma, the
body's types name the manual axes each value varies over, `f32[4]{V:x}`, and pvary casts).
``run_all(jax, jnp, lax, np)`` is imported by tests/test_shard_map.py, which runs the same cases
under pyjax, so this module never imports jax at top level.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "shard_map.json")


def shard_map_cases(jax, jnp, lax, np):
    """List of (name, fn, args, with_jaxpr)."""
    P = jax.sharding.PartitionSpec
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("x", "y"))
    mesh1 = jax.sharding.Mesh(np.array(jax.devices()[:4]), ("i",))
    f32 = np.float32
    a = np.arange(32, dtype=f32).reshape(8, 4) / 8
    b = (np.arange(12, dtype=f32).reshape(4, 3) - 5) / 4
    v = np.arange(16, dtype=f32) - 3
    cases = []

    def add(name, fn, *args, jaxpr=False):
        assert name not in {c[0] for c in cases}, name
        cases.append((name, fn, args, jaxpr))

    def sm(f, in_specs, out_specs, check_vma=False, m=mesh):
        return jax.shard_map(f, mesh=m, in_specs=in_specs, out_specs=out_specs,
                             check_vma=check_vma)

    # docs/notebooks/shard_map.md: blocked matmul, reduce over the contracting axis
    def matmul_psum(x, y):
        return lax.psum(x @ y, "y")
    add("matmul_psum", sm(matmul_psum, (P("x", "y"), P("y", None)), P("x", None)), a, b,
        jaxpr=True)
    add("matmul_psum_checked", sm(matmul_psum, (P("x", "y"), P("y", None)), P("x", None), True),
        a, b)
    add("matmul_psum_scatter", sm(lambda x, y: lax.psum_scatter(x @ y, "y", tiled=True),
                                  (P("x", "y"), P("y", None)), P("x", "y")),
        a, np.arange(16, dtype=f32).reshape(4, 4), jaxpr=True)
    add("all_gather_matmul", sm(lambda x, y: lax.all_gather(x, "y", axis=1, tiled=True) @ y,
                                (P("x", "y"), P()), P("x")), a, b, jaxpr=True)
    add("all_gather_untiled", sm(lambda x: lax.all_gather(x, "x"), P("x"), P(None, "x")),
        v, jaxpr=True)
    add("all_gather_outer_axis", sm(lambda x: lax.all_gather(x, "x"), P("x", "y"),
                                    P(None, None, "y")), a)
    add("all_gather_two_axes", sm(lambda x: lax.all_gather(x, ("x", "y"), tiled=True),
                                  P(("x", "y")), P()), v, jaxpr=True)
    add("ppermute_ring", sm(lambda x: lax.ppermute(x, "x", [(i, (i + 1) % 4) for i in range(4)]),
                            P("x"), P("x")), v, jaxpr=True)
    add("ppermute_partial", sm(lambda x: lax.ppermute(x, "x", [(0, 2), (1, 3)]), P("x"),
                               P("x")), v)
    add("all_to_all", sm(lambda x: lax.all_to_all(x, "x", 1, 0, tiled=True), P("x"), P("x")),
        a, jaxpr=True)
    add("axis_index", sm(lambda x: x + lax.axis_index("x"), P("x"), P("x")), v, jaxpr=True)
    add("axis_index_two_axes", sm(lambda x: x * 0 + lax.axis_index(("x", "y")), P(("x", "y")),
                                  P(("x", "y"))), v)
    add("pmean_pmax_pmin", sm(lambda x: (lax.pmean(x, ("x", "y")), lax.pmax(x, "x"),
                                         lax.pmin(x, "y")), P("x", "y"),
                              (P("x", "y"), P(None, "y"), P("x"))), a, jaxpr=True)
    add("psum_invariant_axis", sm(lambda x: lax.psum(x, "y"), P("x"), P("x"), True), v)
    add("replicated_input", sm(lambda x, y: x * y.sum(), (P("x"), P()), P("x")), v, b)
    add("spec_prefix_pytree", sm(lambda d: {"s": d["p"] + d["q"], "t": d["p"] * 2},
                                 ({"p": P("x"), "q": P("x")},), {"s": P("x"), "t": P("x")}),
        {"p": v, "q": v * 3})
    add("one_axis_mesh", sm(lambda x: lax.psum(x, "i") / 4, P("i"), P("i"), m=mesh1), v,
        jaxpr=True)
    add("out_unnamed_axis_takes_first",
        sm(lambda x: x * (1 + lax.axis_index("y")), P("x"), P("x")), v)
    add("jit_of_shard_map", jax.jit(sm(matmul_psum, (P("x", "y"), P("y", None)),
                                       P("x", None))), a, b, jaxpr=True)
    add("grad_of_shard_map", jax.grad(lambda x, y: sm(matmul_psum, (P("x", "y"), P("y", None)),
                                                      P("x", None), True)(x, y).sum() ** 2),
        a, b)
    add("vmap_of_shard_map", jax.vmap(sm(lambda x: lax.psum(x, "x") * x, P("x"), P("x"))),
        np.stack([v, v * 2]))
    # check_vma: values typed by the axes they vary over; pvary where operands differ
    add("vma_mul_pvary", sm(lambda x, y: x * y + 1.0, (P("x"), P()), P("x"), True), v, v[:4],
        jaxpr=True)
    add("vma_psum_one_axis", sm(lambda x: lax.psum(x, "y") * 2, P("x", "y"), P("x"), True), a,
        jaxpr=True)
    add("vma_pcast", sm(lambda x: lax.pcast(x, "x", to="varying") * x, P(), P("x"), True),
        v[:4], jaxpr=True)
    add("vma_cond", sm(lambda x, y: lax.cond(x.sum() > 3, lambda t: t * y, lambda t: t + 1, x),
                       (P("x"), P()), P("x"), True), v, v[:4], jaxpr=True)
    add("vma_scan", sm(lambda x, y: lax.scan(lambda c, _: (c * y, None), x, None, length=2)[0],
                       (P("x"), P()), P("x"), True), v, v[:4], jaxpr=True)
    add("vma_dot_concat_slice", sm(
        lambda x, y: (jnp.dot(x, y) + jnp.concatenate([x, y]).sum()
                      + lax.dynamic_slice(y, (x.astype(np.int32)[0] % 3,), (1,))),
        (P("x"), P()), P("x"), True), v, v[:4], jaxpr=True)
    add("vma_axis_index_jit", sm(jax.jit(lambda x: x * lax.axis_index("y")), P("x"),
                                 P(("x", "y")), True), v, jaxpr=True)
    # errors
    add("error_indivisible", sm(lambda x: x, P("x"), P("x"), True), np.arange(6, dtype=f32))
    add("error_spec_too_long", sm(lambda x: x, P(None, None, "x"), P("x"), True), a)
    add("error_unknown_axis", sm(lambda x: x, P("z"), P("x"), True), a)
    add("error_out_not_replicated", sm(lambda x: x, P("x"), P(), True), v)
    mesh_x = jax.sharding.Mesh(np.array(jax.devices()[:4]), ("x",))
    add("error_out_not_replicated_one_axis", sm(lambda x: (x, x), P("x"), (P("x"), P()), True,
                                                m=mesh_x), v)
    add("error_out_spec_too_long", sm(lambda x: x.sum(), P("x"), P("x"), True), v)
    add("error_no_mesh", jax.shard_map(lambda x: x, in_specs=P("x"), out_specs=P("x")), v)
    add("error_psum_mixed_axes", sm(lambda x: lax.psum(x, ("x", "y")), P("x"), P(), True), a)
    return cases


def value_of(x, np):
    if isinstance(x, (list, tuple)):
        return [value_of(e, np) for e in x]
    if isinstance(x, dict):
        return [value_of(x[k], np) for k in sorted(x)]
    x = np.asarray(x)
    return {"dtype": str(x.dtype), "shape": list(x.shape),
            "values": x.astype(np.float64).ravel().tolist()}


def run_all(jax, jnp, lax, np):
    records = []
    for name, fn, args, with_jaxpr in shard_map_cases(jax, jnp, lax, np):
        rec = {"name": name}
        try:
            rec["value"] = value_of(fn(*args), np)
            if with_jaxpr:
                rec["jaxpr"] = str(jax.make_jaxpr(fn)(*args))
        except Exception as e:  # noqa: BLE001 - JAX's error is the record
            rec["error"] = {"type": type(e).__name__, "message": str(e)}
        records.append(rec)
    return records


WORKER = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np, jax, jax.numpy as jnp
from jax import lax
from record_shard_map import run_all
print(json.dumps(run_all(jax, jnp, lax, np)))
"""


def main() -> None:
    # JAX's messages print sets (axis names, input states) in hash order: one fixed seed
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               JAX_PLATFORMS="cpu", PYTHONHASHSEED="1")
    out = subprocess.run([sys.executable, "-c", WORKER, HERE], env=env, check=True,
                         capture_output=True, text=True).stdout
    import jax
    import jaxlib
    data = {"jax_version": jax.__version__, "jaxlib_version": jaxlib.__version__,
            "records": json.loads(out)}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1)
    print(f"wrote {len(data['records'])} records to {OUT}")


if __name__ == "__main__":
    main()
