"""jax.checkpoint: same values and gradients, but the backward pass recomputes intermediates;
and JAX 0.10.2's jaxprs and values of checkpoints under differentiation (tests/data/
checkpoint.json, recorded by tests/oracle/record_checkpoint.py)."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax

from op_table import x64_mode
from recorded import check_jaxpr, check_value, load, record_id

import record_checkpoint as recorder

DATA = load("checkpoint.json")
#: name -> why pyjax's jaxpr differs from JAX's (strict: a case that starts matching must go)
JAXPR_DIFFERENCES = {
    "grad_nested_jit": "an equation of the checkpoint body with known and unknown inputs (a "
                       "jit call) is not split into its known and unknown parts (JAX's "
                       "partial_eval_jaxpr_custom), so the transpose of the recomputing "
                       "checkpoint meets the call's primal results as linear and fails",
}
CASES = {x64: {name: (fn, args) for name, fn, args in recorder.cases(jax, jnp, lax, np)}
         for x64 in (False, True)}

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
    """As JAX stages it: the forward pass runs outside any checkpoint, and the backward pass is
    a checkpoint that runs the forward computation again."""
    text = str(jax.make_jaxpr(jax.grad(jax.checkpoint(f)))(X))
    forward, backward = text.split("remat2[")
    assert "sin" in forward and "sin" in backward and "cos" in backward


def test_dots_saveable_keeps_the_dot_and_recomputes_the_rest():
    w = jnp.ones((3, 3))

    def layer(x):
        return jnp.tanh(jnp.dot(w, x)).sum()
    g = jax.checkpoint(layer, policy=jax.checkpoint_policies.dots_saveable)
    x = jnp.arange(3.0)
    np.testing.assert_allclose(jax.grad(g)(x), jax.grad(layer)(x), rtol=1e-6)
    forward, backward = str(jax.make_jaxpr(jax.grad(g))(x)).split("remat2[")
    # the saved product is rounded to float32 (as JAX does), the tanh recomputed from it
    assert "reduce_precision" in forward and "tanh" in backward.split("policy=")[0]


def test_remat_is_checkpoint_and_static_argnums():
    assert jax.remat is jax.checkpoint
    g = jax.checkpoint(lambda x, n: x ** n, static_argnums=(1,))
    assert float(jax.grad(g)(X, 3)) == pytest.approx(3 * 0.7 ** 2, rel=1e-5)


def _param(rec: dict) -> object:
    reason = JAXPR_DIFFERENCES.get(rec["name"])
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(rec, id=record_id(rec), marks=marks)


@pytest.mark.parametrize("rec", [_param(r) for r in DATA["records"]])
def test_jaxpr_matches_jax(rec: dict) -> None:
    fn, args = CASES[rec["x64"]][rec["name"]]
    with x64_mode(rec["x64"]):
        check_jaxpr(fn, args, rec)


@pytest.mark.parametrize("rec", [_param(r) for r in DATA["records"]])
def test_value_matches_jax(rec: dict) -> None:
    fn, args = CASES[rec["x64"]][rec["name"]]
    with x64_mode(rec["x64"]):
        check_value(jax.tree_util.tree_leaves(fn(*args)), rec["value"])
