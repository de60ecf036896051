"""Record JAX 0.10.2's jaxprs and values of jax.checkpoint under differentiation (grad, jvp,
linearize, vjp, policies, closed-over constants) into tests/data/checkpoint.json.

    /work/oracle/bin/python tests/oracle/record_checkpoint.py

`cases(jax, jnp, lax, np)` is imported by tests/test_checkpoint.py, so this module never
imports jax at top level.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "checkpoint.json")


def cases(jax, jnp, lax, np):
    """(name, fn, args)."""
    m = np.linspace(-1, 1, 6).astype(np.float32).reshape(2, 3)
    w = np.linspace(0, 1, 9).astype(np.float32).reshape(3, 3)
    cp, policies = jax.checkpoint, jax.checkpoint_policies
    out = []

    def add(name, fn, *args):
        out.append((name, fn, args))

    add("closed_over", cp(lambda u: jnp.tanh(u @ w)), m)
    add("grad_sin_sin", jax.grad(lambda v: cp(lambda u: jnp.sin(jnp.sin(u)))(v).sum()), m)
    add("grad_closed_over", jax.grad(lambda v: cp(lambda u: jnp.tanh(u @ w))(v).sum()), m)
    add("grad_two_args", jax.grad(lambda v, z: cp(lambda a, b: jnp.sin(a) * b)(v, z).sum(),
                                  (0, 1)), m, m)
    add("grad_one_of_two_args", jax.grad(lambda v, z: cp(lambda a, b: jnp.sin(a) * b)(v, z)
                                         .sum()), m, m)
    add("grad_dots_saveable", jax.grad(lambda v: cp(
        lambda u: jnp.tanh(jnp.tanh(u @ w) @ w), policy=policies.dots_saveable)(v).sum()), m)
    add("grad_everything_saveable", jax.grad(lambda v: cp(
        lambda u: jnp.sin(jnp.sin(u)), policy=policies.everything_saveable)(v).sum()), m)
    add("jvp", lambda v: jax.jvp(cp(lambda u: jnp.sin(u) * u), (v,), (v,)), m)
    add("linearize", lambda v: jax.linearize(cp(lambda u: jnp.sin(u) * u), v)[1](v), m)
    add("vjp", lambda v: jax.vjp(cp(lambda u: jnp.sin(u) * u), v)[1](v), m)
    add("grad_grad", jax.grad(jax.grad(lambda v: cp(lambda u: jnp.sin(u) * u)(v))),
        np.float32(0.5))
    add("grad_nested_jit", jax.grad(lambda v: cp(lambda u: jax.jit(jnp.sin)(u) * u)(v).sum()),
        m)
    add("grad_prevent_cse_false", jax.grad(lambda v: cp(
        lambda u: jnp.sin(jnp.sin(u)), prevent_cse=False)(v).sum()), m)
    add("grad_two_outputs", jax.grad(lambda v: sum(
        x.sum() for x in cp(lambda u: (jnp.sin(u), jnp.cos(u) * u))(v))), m)
    return out


def value_of(out, np, jax):
    """A result as JSON: its leaves' dtypes, shapes and values."""
    return [{"dtype": str(np.asarray(x).dtype), "shape": list(np.shape(x)),
             "values": np.asarray(x, np.float64).ravel().tolist()}
            for x in jax.tree_util.tree_leaves(out)]


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    from jaxpr_recording import record_jaxprs_and_values
    record_jaxprs_and_values(cases, OUT, lambda out, np, jax: value_of(out, np, jax))
