"""An equinox eqx.nn.MLP trained with optax.adam through eqx.filter_jit and
eqx.filter_value_and_grad (the optimizer state holds only the model's arrays)."""
import equinox as eqx
import jax
import jax.numpy as jnp
import optax

STEPS = 120
LOG_EVERY = 10


def _data() -> tuple[jax.Array, jax.Array]:
    x = jax.random.uniform(jax.random.key(40), (100, 2), minval=-2.0, maxval=2.0)
    return x, jnp.sin(x[:, :1]) * jnp.cos(x[:, 1:])


@eqx.filter_value_and_grad
def _loss(model: eqx.nn.MLP, x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.mean((jax.vmap(model)(x) - y) ** 2)


def run() -> dict:
    x, y = _data()
    model = eqx.nn.MLP(in_size=2, out_size=1, width_size=24, depth=2,
                       activation=jax.nn.softplus, key=jax.random.key(41))
    opt = optax.adam(1e-2)
    opt_state = opt.init(eqx.filter(model, eqx.is_array))

    @eqx.filter_jit
    def step(model, opt_state, x, y):
        loss, grads = _loss(model, x, y)
        updates, opt_state = opt.update(grads, opt_state, eqx.filter(model, eqx.is_array))
        return eqx.apply_updates(model, updates), opt_state, loss

    losses = []
    for i in range(STEPS):
        model, opt_state, loss = step(model, opt_state, x, y)
        if i % LOG_EVERY == 0:
            losses.append(float(loss))
    final_loss, _ = _loss(model, x, y)
    leaves = jax.tree.leaves(eqx.filter(model, eqx.is_array))
    return {"losses": losses, "final_loss": float(final_loss),
            "param_checksum": float(sum(jnp.sum(jnp.abs(p)) for p in leaves))}
