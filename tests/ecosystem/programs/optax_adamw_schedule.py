"""optax.chain(clip_by_global_norm, adamw with a warmup-cosine schedule) trains a softmax
classifier under jax.jit; the learning rates the schedule gives are reported too."""
import jax
import jax.numpy as jnp
import optax

STEPS = 120
LOG_EVERY = 10
CLASSES = 4


def _data() -> tuple[jax.Array, jax.Array]:
    """Gaussian blobs around 4 random centres in 6-d, labels with jax.random."""
    kc, kl, kn = jax.random.split(jax.random.key(10), 3)
    centres = jax.random.normal(kc, (CLASSES, 6)) * 1.5
    labels = jax.random.randint(kl, (160,), 0, CLASSES)
    return centres[labels] + jax.random.normal(kn, (160, 6)), labels


def _init(key: jax.Array) -> dict:
    k1, k2 = jax.random.split(key)
    return {"w1": jax.nn.initializers.lecun_normal()(k1, (6, 24)), "b1": jnp.zeros(24),
            "w2": jax.nn.initializers.lecun_normal()(k2, (24, CLASSES)), "b2": jnp.zeros(CLASSES)}


def _loss(params: dict, x: jax.Array, labels: jax.Array) -> jax.Array:
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


def run() -> dict:
    x, labels = _data()
    schedule = optax.warmup_cosine_decay_schedule(
        init_value=0.0, peak_value=0.05, warmup_steps=20, decay_steps=STEPS, end_value=1e-3)
    opt = optax.chain(optax.clip_by_global_norm(0.5),
                      optax.adamw(learning_rate=schedule, weight_decay=1e-2))
    params = _init(jax.random.key(11))
    state = opt.init(params)

    @jax.jit
    def step(params, state):
        loss, grads = jax.value_and_grad(_loss)(params, x, labels)
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss, optax.global_norm(grads)

    losses, grad_norms = [], []
    for i in range(STEPS):
        params, state, loss, gnorm = step(params, state)
        if i % LOG_EVERY == 0:
            losses.append(float(loss))
            grad_norms.append(float(gnorm))
    return {"losses": losses, "grad_norms": grad_norms,
            "learning_rates": [float(schedule(i)) for i in (0, 10, 20, 60, 119)],
            "final_loss": float(_loss(params, x, labels)),
            "param_checksum": float(sum(jnp.sum(jnp.abs(p)) for p in jax.tree.leaves(params)))}
