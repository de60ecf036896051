"""An nnx program on flax's default flags: nnx.Linear (+ nnx.Dropout when asked) trained with
nnx.Optimizer(optax.adam) under nnx.jit; prints its losses and eval predictions as JSON.

    /work/eco/bin/python tests/oracle/nnx_hijax_program.py jax|pyjax [dropout] > out.json
"""
import sys, json
DROPOUT = "dropout" in sys.argv[2:]
if sys.argv[1] == "pyjax":
    import pyjax; pyjax.alias_as_jax()
import jax, jax.numpy as jnp, optax
from flax import nnx

class MLP(nnx.Module):
    def __init__(self, rngs):
        self.l1 = nnx.Linear(4, 8, rngs=rngs)
        self.drop = nnx.Dropout(0.5, rngs=rngs)
        self.l2 = nnx.Linear(8, 1, rngs=rngs)
    def __call__(self, x):
        h = jax.nn.relu(self.l1(x))
        return self.l2(self.drop(h) if DROPOUT else h)

model = MLP(nnx.Rngs(0))
opt = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
x = jnp.linspace(-1, 1, 32, dtype=jnp.float32).reshape(8, 4)
y = jnp.sum(x, axis=1, keepdims=True)

@nnx.jit
def step(model, opt, x, y):
    def loss_fn(m):
        return jnp.mean((m(x) - y) ** 2)
    loss, grads = nnx.value_and_grad(loss_fn)(model)
    opt.update(model, grads)
    return loss

losses = [float(step(model, opt, x, y)) for _ in range(5)]
model.eval()
pred = model(x)
print(json.dumps({"losses": losses, "pred": [float(v) for v in pred.ravel()]}))
