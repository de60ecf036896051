"""optax.adam trains a 2-layer tanh MLP on a synthetic regression task under jax.jit."""
import jax
import jax.numpy as jnp
import optax

STEPS = 150
LOG_EVERY = 10


def _data() -> tuple[jax.Array, jax.Array]:
    """128 points in 8-d and a smooth nonlinear target, drawn with jax.random."""
    kx, kw = jax.random.split(jax.random.key(0))
    x = jax.random.normal(kx, (128, 8))
    w_true = jax.random.normal(kw, (8, 1)) / jnp.sqrt(8.0)
    return x, jnp.sin(2.0 * x @ w_true)


def _init(key: jax.Array) -> dict:
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (8, 32)) * 0.3, "b1": jnp.zeros(32),
            "w2": jax.random.normal(k2, (32, 1)) * 0.3, "b2": jnp.zeros(1)}


def _loss(params: dict, x: jax.Array, y: jax.Array) -> jax.Array:
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def run() -> dict:
    x, y = _data()
    params = _init(jax.random.key(1))
    opt = optax.adam(1e-2)
    state = opt.init(params)

    @jax.jit
    def step(params, state):
        loss, grads = jax.value_and_grad(_loss)(params, x, y)
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    losses = []
    for i in range(STEPS):
        params, state, loss = step(params, state)
        if i % LOG_EVERY == 0:
            losses.append(float(loss))
    return {"losses": losses, "final_loss": float(_loss(params, x, y)),
            "param_checksum": float(sum(jnp.sum(jnp.abs(p)) for p in jax.tree.leaves(params)))}
