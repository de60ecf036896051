"""Record JAX's jaxprs, values and errors of `jax.custom_derivatives.linear_call` programs
(calls, transposes of transposes, grads, pytrees, closed-over constants) into
tests/data/linear_call.json, x64 off and on.

    /work/oracle/bin/python tests/oracle/record_linear_call.py

`cases(jax, jnp, lax, np)` is also imported by tests/test_linear_call.py.
"""
import functools
import os

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                   "linear_call.json")


def cases(jax, jnp, lax, np):
    linear_call = jax.custom_derivatives.linear_call
    out = []

    def add(name, fn, *args):
        out.append((name, fn, args))

    def transpose(f, example):
        return lambda y: jax.linear_transpose(f, example)(y)[0]

    def div_add(x, denom):
        return x + linear_call(lambda r, x: x / r, lambda r, t: t / r, denom, x)
    add("div_add", div_add, 9.0, 3.0)
    add("div_add_jit", jax.jit(div_add), 9.0, 3.0)
    add("div_add_transposed", transpose(functools.partial(div_add, denom=3.0), 1.0), 18.0)
    add("div_add_grad", jax.grad(div_add), 9.0, 3.0)
    add("div_add_jvp", lambda x, t: jax.jvp(lambda y: div_add(y, 3.0), (x,), (t,)), 9.0, 2.0)

    def custom_id(x):
        return linear_call(lambda _, x: x, lambda _, t: 7.0 * jnp.ones_like(t), (), x)
    one = jnp.float32(1.0)  # (JAX's eager call of a Python float returns its TypedFloat)
    once = transpose(custom_id, one)
    twice = transpose(once, one)
    add("custom_id", custom_id, one)
    add("custom_id_transposed", once, one)
    add("custom_id_transposed_twice", twice, one)
    add("custom_id_transposed_thrice", transpose(twice, one), one)

    scale = np.array([1.0, 2.0, 3.0], np.float32)

    def trees(x, y, w):
        """Residuals as a dict, linear arguments as a tuple, and a closed-over constant."""
        def fun(r, lin):
            a, b = lin
            return {"sum": a * r["w"] * scale + b, "b": b * r["k"]}

        def fun_t(r, ct):
            return ct["sum"] * r["w"] * scale, ct["sum"] + ct["b"] * r["k"]
        out = linear_call(fun, fun_t, {"w": w, "k": 2.0}, (x, y))
        return out["sum"].sum() + out["b"].sum()
    v = jnp.arange(3.0, dtype=jnp.float32)
    add("trees", trees, v, v + 1.0, 0.5)
    add("trees_grad", jax.grad(trees, argnums=(0, 1)), v, v + 1.0, 0.5)

    def bad_structure(x):
        return linear_call(lambda r, x: x * r, lambda r, t: (t * r, t), 2.0, x)
    add("bad_transpose_structure", jax.grad(bad_structure), 1.0)
    add("vmapped", jax.vmap(div_add), v, v + 1.0)
    return out


if __name__ == "__main__":
    from jaxpr_recording import record_jaxprs_and_values
    from record_numpy_manipulation import value_of
    record_jaxprs_and_values(cases, OUT, lambda out, np, jax: value_of(np, out))
