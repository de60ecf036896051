"""chex.chexify turns chex.assert_tree_all_finite inside a jitted function into a runtime
check: finite inputs pass, a NaN raises (synchronously, and asynchronously at wait_checks)."""
import os

import chex
import jax
import jax.numpy as jnp


def _log1p_abs(x: jax.Array) -> jax.Array:
    chex.assert_tree_all_finite(x)
    return jnp.log(jnp.abs(x) + 1.0)


def _outcome(call) -> dict:
    """The value returned, or the class name and first message line of what was raised (this
    file's directory, which chex names in the message, left out)."""
    try:
        value = call()
    except Exception as e:  # noqa: BLE001 - the class is what is being recorded
        message = str(e).splitlines()[0].replace(os.path.dirname(__file__) + os.sep, "")
        return {"raised": type(e).__name__, "message": message}
    return {"value": [float(v) for v in jnp.ravel(value)]}


def run() -> dict:
    sync = chex.chexify(jax.jit(_log1p_abs), async_check=False)
    lazy = chex.chexify(jax.jit(_log1p_abs))
    good = jnp.array([1.0, -2.0, 3.0])
    bad = jnp.array([jnp.nan, 3.0])

    def lazy_bad():
        lazy(bad)
        lazy.wait_checks()

    def lazy_good():
        out = lazy(good)
        lazy.wait_checks()
        return out

    def unjitted_bad():
        return _log1p_abs(bad)

    return {"sync_good": _outcome(lambda: sync(good)), "sync_bad": _outcome(lambda: sync(bad)),
            "async_good": _outcome(lazy_good), "async_bad": _outcome(lazy_bad),
            "eager_bad": _outcome(unjitted_bad)}
