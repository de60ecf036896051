"""An eqx.nn.LSTMCell unrolled over time with lax.scan (vmapped over the batch) plus an
eqx.nn.Linear head, trained with optax.adam under eqx.filter_jit to predict a running sum."""
import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from jax import lax

STEPS = 60
LOG_EVERY = 5
HIDDEN = 12
LENGTH = 10


class Model(eqx.Module):
    cell: eqx.nn.LSTMCell
    head: eqx.nn.Linear

    def __init__(self, key: jax.Array):
        k1, k2 = jax.random.split(key)
        self.cell = eqx.nn.LSTMCell(2, HIDDEN, key=k1)
        self.head = eqx.nn.Linear(HIDDEN, 1, key=k2)

    def __call__(self, xs: jax.Array) -> jax.Array:
        def f(carry, x):
            carry = self.cell(x, carry)
            return carry, carry[0]
        init = (jnp.zeros(HIDDEN), jnp.zeros(HIDDEN))
        _, hs = lax.scan(f, init, xs)
        return self.head(hs[-1])


def _data() -> tuple[jax.Array, jax.Array]:
    """Sequences of 2 features; the target is a weighted sum over time of feature 0 times 1."""
    xs = jax.random.normal(jax.random.key(50), (48, LENGTH, 2))
    weights = jnp.linspace(0.2, 1.0, LENGTH)
    return xs, jnp.sum(weights * xs[..., 0] * jnp.tanh(xs[..., 1]), axis=1, keepdims=True) / 3.0


def run() -> dict:
    xs, y = _data()
    model = Model(jax.random.key(51))
    opt = optax.adam(2e-2)
    opt_state = opt.init(eqx.filter(model, eqx.is_inexact_array))

    def loss_fn(model, xs, y):
        return jnp.mean((jax.vmap(model)(xs) - y) ** 2)

    @eqx.filter_jit
    def step(model, opt_state, xs, y):
        loss, grads = eqx.filter_value_and_grad(loss_fn)(model, xs, y)
        updates, opt_state = opt.update(grads, opt_state)
        return eqx.apply_updates(model, updates), opt_state, loss

    losses = []
    for i in range(STEPS):
        model, opt_state, loss = step(model, opt_state, xs, y)
        if i % LOG_EVERY == 0:
            losses.append(float(loss))
    leaves = jax.tree.leaves(eqx.filter(model, eqx.is_array))
    return {"losses": losses, "final_loss": float(loss_fn(model, xs, y)),
            "param_checksum": float(sum(jnp.sum(jnp.abs(p)) for p in leaves))}
