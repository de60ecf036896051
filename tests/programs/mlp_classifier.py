"""A 2-layer MLP classifier on two interleaved spirals, trained with a hand-written Adam under
jit: jax.nn activations, initializers, one_hot and log_softmax together.

`train(jax)` takes the `jax` module (real JAX or pyjax) and returns the loss every 10 steps and
the final accuracy, so the oracle and the test run the very same program.
"""
import numpy as np

STEPS = 200
WIDTH = 64
LEARNING_RATE = 0.01


def spirals(n_per_class: int = 128) -> tuple[np.ndarray, np.ndarray]:
    """Two noisy spirals in the plane; float32 points and int32 labels (NumPy, deterministic)."""
    rng = np.random.default_rng(7)
    t = np.sqrt(rng.uniform(0.05, 1.0, n_per_class)) * 3.0 * np.pi
    arm = np.stack([t * np.cos(t), t * np.sin(t)], axis=1) / (3.0 * np.pi)
    x = np.concatenate([arm, -arm]) + rng.normal(0.0, 0.03, (2 * n_per_class, 2))
    y = np.concatenate([np.zeros(n_per_class), np.ones(n_per_class)])
    return x.astype(np.float32), y.astype(np.int32)


def train(jax):
    jnp, nn = jax.numpy, jax.nn
    init_w = nn.initializers.glorot_normal()
    init_b = nn.initializers.normal(stddev=0.01)
    k1, k2, k3, k4 = jax.random.split(jax.random.key(0), 4)
    params = {"w1": init_w(k1, (2, WIDTH)), "b1": init_b(k2, (WIDTH,)),
              "w2": nn.initializers.he_uniform()(k3, (WIDTH, 2)),
              "b2": nn.initializers.zeros(k4, (2,))}
    x, y = spirals()
    labels = nn.one_hot(y, 2)

    def loss_fn(p):
        h = nn.gelu(x @ p["w1"] + p["b1"])
        h = nn.silu(h) + 0.1 * nn.relu(h)
        logits = h @ p["w2"] + p["b2"]
        return -jnp.mean(jnp.sum(labels * nn.log_softmax(logits), axis=-1))

    def accuracy(p):
        h = nn.gelu(x @ p["w1"] + p["b1"])
        logits = (nn.silu(h) + 0.1 * nn.relu(h)) @ p["w2"] + p["b2"]
        return jnp.mean(jnp.argmax(nn.softmax(logits), axis=-1) == y)

    @jax.jit
    def step(p, m, v, t):
        loss, g = jax.value_and_grad(loss_fn)(p)
        m = jax.tree.map(lambda a, b: 0.9 * a + 0.1 * b, m, g)
        v = jax.tree.map(lambda a, b: 0.999 * a + 0.001 * b * b, v, g)
        mhat_scale, vhat_scale = 1 / (1 - 0.9 ** t), 1 / (1 - 0.999 ** t)
        p = jax.tree.map(lambda a, mm, vv: a - LEARNING_RATE * mm * mhat_scale
                         / (jnp.sqrt(vv * vhat_scale) + 1e-8), p, m, v)
        return p, m, v, loss

    m = jax.tree.map(jnp.zeros_like, params)
    v = jax.tree.map(jnp.zeros_like, params)
    losses = []
    for t in range(1, STEPS + 1):
        params, m, v, loss = step(params, m, v, jnp.float32(t))
        if t % 10 == 0 or t == 1:
            losses.append(float(loss))
    return {"losses": losses, "accuracy": float(accuracy(params))}
