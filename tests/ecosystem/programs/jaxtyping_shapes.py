"""jaxtyping annotations checked by beartype (@jaxtyped(typechecker=beartype)): consistent
shapes, dtypes and key types pass, eagerly and under jax.jit; wrong ones raise TypeCheckError."""
import jax
import jax.numpy as jnp
from beartype import beartype
from jaxtyping import Array, Float, Int, Key, PRNGKeyArray, UInt32, jaxtyped


@jaxtyped(typechecker=beartype)
def affine(x: Float[Array, "batch n"], w: Float[Array, "n m"],
           b: Float[Array, " m"]) -> Float[Array, "batch m"]:
    return x @ w + b


@jaxtyped(typechecker=beartype)
def noisy(key: Key[Array, ""], x: Float[Array, "*shape"]) -> Float[Array, "*shape"]:
    return x + jax.random.normal(key, x.shape)


@jaxtyped(typechecker=beartype)
def legacy_bits(key: PRNGKeyArray) -> UInt32[Array, "4"]:
    return jax.random.bits(key, (4,))


@jaxtyped(typechecker=beartype)
def count(x: Int[Array, "n"]) -> Int[Array, ""]:
    return jnp.sum(x)


def _outcome(call) -> dict:
    """A summary of the value returned, or the class of what was raised and the first three
    lines of its message (function, parameter, actual value; later lines name the array type)."""
    try:
        value = call()
    except Exception as e:  # noqa: BLE001 - the class is what is being recorded
        return {"raised": f"{type(e).__module__}.{type(e).__name__}",
                "message": str(e).splitlines()[:3]}
    return {"shape": list(value.shape), "dtype": str(value.dtype),
            "sum": float(jnp.sum(value.astype(jnp.float32)))}


def run() -> dict:
    x, w, b = jnp.ones((3, 4)), jnp.full((4, 2), 0.5), jnp.arange(2.0)
    key, old_key = jax.random.key(0), jax.random.PRNGKey(0)
    return {
        "affine_ok": _outcome(lambda: affine(x, w, b)),
        "affine_jit_ok": _outcome(lambda: jax.jit(affine)(x, w, b)),
        "affine_inner_mismatch": _outcome(lambda: affine(x, jnp.ones((5, 2)), b)),
        "affine_bias_mismatch": _outcome(lambda: affine(x, w, jnp.ones(3))),
        "affine_jit_mismatch": _outcome(lambda: jax.jit(affine)(x, jnp.ones((5, 2)), b)),
        "affine_int_dtype": _outcome(lambda: affine(jnp.ones((3, 4), jnp.int32), w, b)),
        "affine_rank": _outcome(lambda: affine(jnp.ones(4), w, b)),
        "noisy_typed_key": _outcome(lambda: noisy(key, jnp.zeros((2, 3)))),
        "noisy_jit_typed_key": _outcome(lambda: jax.jit(noisy)(key, jnp.zeros((2, 3)))),
        "noisy_raw_key": _outcome(lambda: noisy(old_key, jnp.zeros((2, 3)))),
        "noisy_key_batch": _outcome(lambda: noisy(jax.random.split(key), jnp.zeros(2))),
        "legacy_raw_key": _outcome(lambda: legacy_bits(old_key)),
        "legacy_typed_key": _outcome(lambda: legacy_bits(key)),
        "legacy_float": _outcome(lambda: legacy_bits(jnp.zeros(2))),
        "count_ok": _outcome(lambda: count(jnp.arange(5))),
        "count_float": _outcome(lambda: count(jnp.arange(5.0))),
        "count_not_array": _outcome(lambda: count([1, 2, 3])),
    }
