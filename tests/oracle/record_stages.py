"""Record what JAX 0.10.2 gives for the ahead-of-time stages (`jit(f).trace/.lower/.compile`,
jax.stages) into tests/data/stages.json.

    /work/oracle/bin/python tests/oracle/record_stages.py

`cases(jax, jnp, lax, np)` is shared with tests/test_stages.py, which runs the same cases under
pyjax.  Each case is (name, thunk); the record is `encode(thunk())` (reprs and texts as
strings, arrays as dtype/shape/values, cost numbers as floats) or the error's class and
message.  Cases run with x64 off and on.
"""
import functools
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "stages.json")

#: the keys of cost_analysis() that pyjax estimates
COST_KEYS = ("flops", "transcendentals", "bytes accessed")


def cases(jax, jnp, lax, np):
    """[(name, thunk)] exercising the stages API."""
    out = []

    def add(name, thunk):
        out.append((name, thunk))

    x = np.ones((3,), np.float32)
    y = np.arange(3.0, dtype=np.float32)

    def f(x, y, *, scale=2.0):
        return {"a": jnp.sin(x) * scale + y, "b": (x.sum(), y)}

    jf = jax.jit(f, static_argnames=("scale",))

    def g(x, n, y):
        return x * n + y

    jg = jax.jit(g, static_argnums=1, donate_argnums=2)

    def h(a, b, *, c, d):
        return a

    pytree_arg = {"p": x, "q": (y, 2.0)}

    # Traced
    add("traced_jaxpr", lambda: str(jf.trace(x, y, scale=3.0).jaxpr))
    add("traced_args_info", lambda: repr(jf.trace(x, y, scale=3.0).args_info))
    add("traced_in_tree", lambda: repr(jf.trace(x, y, scale=3.0).in_tree))
    add("traced_out_tree", lambda: repr(jf.trace(x, y, scale=3.0).out_tree))
    add("traced_out_info", lambda: repr(jf.trace(x, y, scale=3.0).out_info))
    add("traced_out_info_weak", lambda: repr(jax.jit(lambda a: a * 2).trace(1.0).out_info))
    add("traced_out_avals", lambda: repr(jf.trace(x, y).out_avals))
    add("traced_in_avals", lambda: repr(jf.trace(x, y).in_avals))
    add("traced_fun_name", lambda: jf.trace(x, y).fun_name)
    add("traced_fun_name_lambda", lambda: jax.jit(lambda q: q).trace(1.0).fun_name)
    add("traced_fun_name_partial",
        lambda: jax.jit(functools.partial(g, n=2)).trace(x, y=y).fun_name)
    add("traced_static_donated", lambda: repr(jg.trace(x, 4, y).args_info))
    add("traced_static_donated_argnums", lambda: repr(jg.trace(x, 4, y).donate_argnums))
    add("traced_static_jaxpr", lambda: str(jg.trace(x, 4, y).jaxpr))
    add("traced_call", lambda: jax.jit(g, static_argnums=1).trace(x, 4, y)(x, y))
    add("traced_scalar_args", lambda: repr(jf.trace(np.ones(3), 2.0).args_info))
    add("traced_pytree_args", lambda: repr(jax.jit(lambda t: t["q"][0] + t["p"]).trace(
        pytree_arg).args_info))
    for i, kw in enumerate([dict(donate_argnums=(0,)), dict(donate_argnames=("b",)),
                            dict(donate_argnames=("c",)),
                            dict(donate_argnums=1, static_argnums=0)]):
        static = "static_argnums" in kw
        add(f"donated_{i}", lambda kw=kw, static=static: [
            a.donated for a in jax.tree.leaves(jax.jit(h, **kw).trace(
                1 if static else x, {"p": x, "q": x}, c=x, d=(x,)).args_info)])
    add("arg_info_fields", lambda: [jf.trace(x, y).args_info[0][1].shape,
                                    str(jf.trace(x, y).args_info[0][1].dtype)])
    add("wrapped_protocol", lambda: isinstance(jf, jax.stages.Wrapped))

    # Lowered
    add("lowered_in_tree", lambda: repr(jf.lower(x, y, scale=3.0).in_tree))
    add("lowered_out_tree", lambda: repr(jf.lower(x, y, scale=3.0).out_tree))
    add("lowered_args_info", lambda: repr(jf.lower(x, y, scale=3.0).args_info))
    add("lowered_out_info", lambda: repr(jf.lower(x, y, scale=3.0).out_info))
    add("lowered_out_info_weak", lambda: repr(jax.jit(lambda a: a * 2).lower(1.0).out_info))
    add("lowered_default_kwarg_in_tree", lambda: repr(jax.jit(lambda a, b=2.0: a * b).lower(
        x).in_tree))
    add("lowered_as_text_unknown_dialect", lambda: jf.lower(x, y).as_text("foo"))
    add("lowered_compiler_ir_unknown_dialect", lambda: jf.lower(x, y).compiler_ir("foo"))

    # Compiled: calls and their checks
    cf = jf.lower(x, y, scale=3.0).compile()
    add("compiled_call", lambda: cf(x, y))
    add("compiled_in_tree", lambda: repr(cf.in_tree))
    add("compiled_out_tree", lambda: repr(cf.out_tree))
    add("compiled_args_info", lambda: repr(cf.args_info))
    add("compiled_input_shardings", lambda: repr(cf.input_shardings))
    add("compiled_output_shardings", lambda: repr(cf.output_shardings))
    add("compiled_out_info_shapes", lambda: [
        [list(s.shape), str(s.dtype)] for s in jax.tree.leaves(cf.out_info)])
    add("compiled_static_kwarg", lambda: cf(x, y, scale=3.0))
    add("compiled_wrong_shape", lambda: cf(np.ones((4,), np.float32), y))
    add("compiled_wrong_dtype", lambda: cf(x.astype(np.int32), y))
    add("compiled_too_few", lambda: cf(x))
    add("compiled_too_many", lambda: cf(x, y, 3))
    add("compiled_weak_scalar_ok", lambda: jax.jit(lambda a, b: a * b).lower(x, 2.0).compile()(
        x, np.float32(3.0)))
    add("compiled_numpy_f64_arg", lambda: cf(np.ones(3), y))
    add("compiled_static_positional", lambda: jg.lower(x, 4, y).compile()(x, np.ones(3,
                                                                            np.float32)))
    add("compiled_static_positional_passed", lambda: jg.lower(x, 4, y).compile()(x, 4, y))
    cd = jax.jit(lambda d: d["a"] + d["b"]).lower({"a": x, "b": 1.0}).compile()
    add("compiled_dict", lambda: cd({"a": x, "b": 2.0}))
    add("compiled_dict_int_leaf", lambda: cd({"a": x, "b": 2}))
    add("compiled_dict_keys", lambda: cd({"a": x, "c": 2.0}))
    add("compiled_dict_vs_list", lambda: cd([x, 2.0]))
    add("compiled_kwarg_default", lambda: jax.jit(lambda a, b=2.0: a * b).lower(x).compile()(
        x, b=2.0))
    cv = jax.jit(lambda *a: sum(a)).lower(*[np.ones(2, np.float32)] * 7).compile()
    add("compiled_varargs_many_mismatches", lambda: cv(*[np.ones(3, np.float32)] * 7))
    add("compiled_under_vmap", lambda: jax.vmap(cd)({"a": np.ones((2, 3), np.float32),
                                                      "b": np.ones(2, np.float32)}))
    add("compiled_under_jit", lambda: jax.jit(cd)({"a": x, "b": 2.0}))
    add("compiled_compiler_options", lambda: jax.jit(lambda a: a + 1).lower(x).compile(
        compiler_options={})(x))

    # cost and memory analyses
    A = np.ones((4, 5), np.float32)
    B = np.ones((5, 6), np.float32)
    programs = {
        "matmul": (lambda a, b: a @ b, (A, B)),
        "add": (lambda a, b: a + b, (A, A)),
        "sin": (lambda a: jnp.sin(a), (A,)),
        "exp": (lambda a: jnp.exp(a), (A,)),
        "sum": (lambda a: a.sum(), (A,)),
        "sum0": (lambda a: a.sum(0), (A,)),
        "max": (lambda a: a.max(), (A,)),
        "reshape": (lambda a: a.reshape(20), (A,)),
        "mulconst": (lambda a: a * 2, (A,)),
        "div": (lambda a, b: a / b, (A, A)),
        "tanh": (lambda a: jnp.tanh(a), (A,)),
        "maximum": (lambda a, b: jnp.maximum(a, b), (A, A)),
        "int8_add": (lambda a, b: a + b, (np.ones(3, np.int8), np.ones(3, np.int8))),
        "batch_matmul": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
                         (np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32))),
        "convert": (lambda a: a.astype(jnp.int32), (A,)),
        "select": (lambda a: jnp.where(a > 0, a, 1.0), (A,)),
        "compare": (lambda a, b: a < b, (A, A)),
        "ipow3": (lambda a: a ** 3, (A,)),
        "square": (lambda a: lax.square(a), (A,)),
        "exp2": (lambda a: jnp.exp2(a), (A,)),
        "sqrt": (lambda a: jnp.sqrt(a), (A,)),
        "rsqrt": (lambda a: lax.rsqrt(a), (A,)),
        "logistic": (lambda a: jax.nn.sigmoid(a), (A,)),
        "log1p": (lambda a: jnp.log1p(a), (A,)),
        "pow": (lambda a, b: a ** b, (A, A)),
        "neg": (lambda a: -a, (A,)),
        "abs": (lambda a: jnp.abs(a), (A,)),
        "mlp": (lambda w, a: jnp.tanh(a @ w).sum(), (B, A)),
        "erf": (lambda a: lax.erf(a), (A,)),
        "atan2": (lambda a, b: jnp.arctan2(a, b), (A, A)),
        "cos": (lambda a: jnp.cos(a), (A,)),
        "broadcast": (lambda a: jnp.broadcast_to(a, (3, 4, 5)), (A,)),
        "concat": (lambda a: jnp.concatenate([a, a]), (A,)),
        "fma": (lambda a, b: jnp.sin(a) * 3.0 + b, (A, A)),
        "two_outputs": (lambda a: (a, a.sum()), (A,)),
        "matmul_sin_matmul": (lambda a, b: jnp.sin(a @ b) @ b.T, (A, B)),
    }
    for name, (fn, args) in programs.items():
        def costs(fn=fn, args=args):
            lowered = jax.jit(fn).lower(*args)
            compiled = lowered.compile()
            pick = lambda d: {k: float(v) for k, v in d.items() if k in COST_KEYS}  # noqa
            m = compiled.memory_analysis()
            return {"lowered": pick(lowered.cost_analysis()),
                    "compiled": pick(compiled.cost_analysis()),
                    "memory": [m.argument_size_in_bytes, m.output_size_in_bytes,
                               m.temp_size_in_bytes, m.alias_size_in_bytes]}
        add(f"cost_{name}", costs)
    return out


def encode(v, np, jax):
    if isinstance(v, (str, bool, int, float)) or v is None:
        return v
    if isinstance(v, dict):
        return {str(k): encode(u, np, jax) for k, u in v.items()}
    if isinstance(v, (list, tuple)):
        return [encode(u, np, jax) for u in v]
    if isinstance(v, jax.Array):
        a = np.asarray(v)
        return {"dtype": str(a.dtype), "shape": list(a.shape), "values": a.tolist()}
    raise TypeError(f"cannot encode {type(v)}")


def run(jax, jnp, lax, np, x64):
    jax.config.update("jax_enable_x64", x64)
    try:
        records = {}
        for name, thunk in cases(jax, jnp, lax, np):
            try:
                records[name] = {"value": encode(thunk(), np, jax)}
            except Exception as e:  # noqa: BLE001 - JAX's error is itself the record
                records[name] = {"error": {"type": type(e).__name__, "message": str(e)}}
        return records
    finally:
        jax.config.update("jax_enable_x64", False)


def main():
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    data = {"jax_version": jax.__version__,
            "x64_off": run(jax, jnp, lax, np, False), "x64_on": run(jax, jnp, lax, np, True)}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    print(f"wrote {len(data['x64_off'])} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
