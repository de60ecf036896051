"""A flax.nnx MLP with nnx.Dropout (driven by nnx.Rngs) trained with nnx.Optimizer(adam) under
nnx.jit; the final loss is measured in eval mode (dropout off)."""
import jax
import jax.numpy as jnp
import optax
from flax import nnx

STEPS = 80
LOG_EVERY = 5


class MLP(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(5, 32, rngs=rngs)
        self.dropout = nnx.Dropout(0.2, rngs=rngs)
        self.linear2 = nnx.Linear(32, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.linear2(self.dropout(nnx.gelu(self.linear1(x))))


def _data() -> tuple[jax.Array, jax.Array]:
    kx, kw = jax.random.split(jax.random.key(30))
    x = jax.random.uniform(kx, (96, 5), minval=-1.0, maxval=1.0)
    w = jax.random.normal(kw, (5, 1))
    return x, jnp.cos(x @ w) + 0.1 * x[:, :1]


def _loss(model: MLP, x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.mean((model(x) - y) ** 2)


def run() -> dict:
    x, y = _data()
    model = MLP(nnx.Rngs(params=31, dropout=32))
    optimizer = nnx.Optimizer(model, optax.adam(5e-3), wrt=nnx.Param)

    @nnx.jit
    def step(model, optimizer, x, y):
        loss, grads = nnx.value_and_grad(_loss)(model, x, y)
        optimizer.update(model, grads)
        return loss

    model.train()
    losses = []
    for i in range(STEPS):
        loss = step(model, optimizer, x, y)
        if i % LOG_EVERY == 0:
            losses.append(float(loss))
    model.eval()
    params = nnx.state(model, nnx.Param)
    return {"losses": losses, "final_loss": float(_loss(model, x, y)),
            "optimizer_step": int(optimizer.step.value),
            "param_checksum": float(sum(jnp.sum(jnp.abs(p)) for p in jax.tree.leaves(params)))}
