"""jax.checkpoint: same values and gradients, but the backward pass recomputes intermediates."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp

X = jnp.float32(0.7)


def f(x):
    return jnp.sin(jnp.sin(x)) * x


@pytest.mark.parametrize("policy", [None, jax.checkpoint_policies.everything_saveable,
                                    jax.checkpoint_policies.nothing_saveable])
def test_gradients_match_the_plain_function(policy):
    g = jax.checkpoint(f, policy=policy)
    assert float(g(X)) == pytest.approx(float(f(X)), rel=1e-6)
    assert float(jax.grad(g)(X)) == pytest.approx(float(jax.grad(f)(X)), rel=1e-6)
    assert float(jax.jit(jax.grad(g))(X)) == pytest.approx(float(jax.grad(f)(X)), rel=1e-6)
    assert float(jax.grad(jax.grad(g))(X)) == pytest.approx(float(jax.grad(jax.grad(f))(X)),
                                                            rel=1e-5)


def test_backward_pass_recomputes_instead_of_saving():
    text = str(jax.make_jaxpr(jax.grad(jax.checkpoint(f)))(X))
    forward, backward = text.split("prevent_cse=True\n    ] a\n")
    assert "remat2[" in forward and "sin" in backward  # sin is recomputed after it


def test_dots_saveable_keeps_the_dot_and_recomputes_the_rest():
    w = jnp.ones((3, 3))

    def layer(x):
        return jnp.tanh(jnp.dot(w, x)).sum()
    g = jax.checkpoint(layer, policy=jax.checkpoint_policies.dots_saveable)
    x = jnp.arange(3.0)
    np.testing.assert_allclose(jax.grad(g)(x), jax.grad(layer)(x), rtol=1e-6)
    text = str(jax.make_jaxpr(jax.grad(g))(x))
    backward = text.split("prevent_cse=True\n    ] ")[-1]
    assert "tanh" in backward and "dot_general" not in backward.split("tanh")[0]


def test_remat_is_checkpoint_and_static_argnums():
    assert jax.remat is jax.checkpoint
    g = jax.checkpoint(lambda x, n: x ** n, static_argnums=(1,))
    assert float(jax.grad(g)(X, 3)) == pytest.approx(3 * 0.7 ** 2, rel=1e-5)
