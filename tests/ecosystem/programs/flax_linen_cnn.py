"""A small flax.linen CNN (Conv, LayerNorm, avg_pool, Dense) trained with
flax.training.train_state.TrainState and optax SGD with momentum, under jax.jit."""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state

STEPS = 60
LOG_EVERY = 5
CLASSES = 3


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        x = nn.Conv(features=6, kernel_size=(3, 3))(x)
        x = nn.LayerNorm()(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        return nn.Dense(CLASSES)(x)


def _data() -> tuple[jax.Array, jax.Array]:
    """32 8x8 single-channel images whose class sets a brightness pattern, plus noise."""
    kl, kn, kp = jax.random.split(jax.random.key(20), 3)
    labels = jax.random.randint(kl, (32,), 0, CLASSES)
    patterns = jax.random.normal(kp, (CLASSES, 8, 8, 1))
    return patterns[labels] + 0.5 * jax.random.normal(kn, (32, 8, 8, 1)), labels


def run() -> dict:
    x, labels = _data()
    model = CNN()
    variables = model.init(jax.random.key(21), x[:1])
    state = train_state.TrainState.create(apply_fn=model.apply, params=variables["params"],
                                          tx=optax.sgd(0.05, momentum=0.9))

    def loss_fn(params):
        logits = model.apply({"params": params}, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean(), logits

    @jax.jit
    def step(state):
        (loss, _), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
        return state.apply_gradients(grads=grads), loss

    losses = []
    for i in range(STEPS):
        state, loss = step(state)
        if i % LOG_EVERY == 0:
            losses.append(float(loss))
    final_loss, logits = loss_fn(state.params)
    return {"losses": losses, "final_loss": float(final_loss), "step": int(state.step),
            "accuracy": float(jnp.mean(jnp.argmax(logits, -1) == labels)),
            "param_checksum": float(sum(jnp.sum(jnp.abs(p))
                                        for p in jax.tree.leaves(state.params)))}
