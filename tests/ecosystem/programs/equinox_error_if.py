"""eqx.error_if raises only when its predicate holds, eagerly and under jax.jit / eqx.filter_jit,
and passes the guarded value through unchanged otherwise."""
import equinox as eqx
import jax
import jax.numpy as jnp


def _checked_sqrt(x: jax.Array) -> jax.Array:
    x = eqx.error_if(x, x < 0, "negative input to sqrt")
    return jnp.sqrt(x)


def _outcome(call) -> dict:
    """The value returned, or the class name of what was raised and whether its message gives
    error_if's text."""
    try:
        value = call()
    except Exception as e:  # noqa: BLE001 - the class is what is being recorded
        return {"raised": type(e).__name__, "names_error": "negative input to sqrt" in str(e)}
    return {"value": [float(v) for v in jnp.ravel(value)]}


def run() -> dict:
    good = jnp.array([4.0, 9.0])
    bad = jnp.array([4.0, -1.0])
    jitted = jax.jit(_checked_sqrt)
    filtered = eqx.filter_jit(_checked_sqrt)
    grad_good = jax.grad(lambda x: jnp.sum(_checked_sqrt(x)))
    return {"eager_good": _outcome(lambda: _checked_sqrt(good)),
            "eager_bad": _outcome(lambda: _checked_sqrt(bad)),
            "jit_good": _outcome(lambda: jitted(good)),
            "jit_bad": _outcome(lambda: jitted(bad)),
            "filter_jit_good": _outcome(lambda: filtered(good)),
            "filter_jit_bad": _outcome(lambda: filtered(bad)),
            "vmap_bad": _outcome(lambda: jax.vmap(jitted)(bad)),
            "grad_good": _outcome(lambda: grad_good(good))}
