"""vmap's API: in_axes/out_axes as pytree prefixes, axis_size, nesting, composition with jit
and grad, and JAX's error texts (recorded from JAX 0.10.2 with the same calls)."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp

X = jnp.arange(6.0).reshape(2, 3)

JAX_ERRORS = [
    (lambda: jax.vmap(lambda x, y: x + y)(jnp.ones((2, 3)), jnp.ones((3,))),
     "vmap got inconsistent sizes for array axes to be mapped:\n  * one axis had size 2: axis 0 "
     "of argument x of type float32[2,3];\n  * one axis had size 3: axis 0 of argument y of "
     "type float32[3]"),
    (lambda: jax.vmap(lambda x: x, in_axes=2)(jnp.ones((2, 3))),
     "vmap was requested to map its argument along axis 2, which implies that its rank should be "
     "at least 3, but is only 2 (its shape is (2, 3))"),
    (lambda: jax.vmap(lambda x: x, in_axes=(0, 1))(jnp.ones((2, 3))),
     "vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
     "arguments passed to the function, but got len(in_axes)=2, len(args)=1"),
    (lambda: jax.vmap(lambda x: x, in_axes=None)(jnp.ones((2, 3))),
     "vmap must have at least one non-None value in in_axes or axis_size must be specified"),
    (lambda: jax.vmap(lambda x: x, out_axes=None)(jnp.ones((2, 3))),
     "at vmap out_axes, got axis spec None but output was batched on axis 0"),
    (lambda: jax.vmap(lambda x: x, out_axes=3)(jnp.ones((2, 3))),
     "axis 3 is out of bounds for array of dimension 2"),
]


@pytest.mark.parametrize("thunk,message", JAX_ERRORS)
def test_errors_match_jax(thunk, message):
    with pytest.raises(ValueError) as info:
        thunk()
    assert str(info.value) == message


def test_in_axes_pytree_prefix_and_out_axes():
    f = jax.vmap(lambda d, s: d["a"] * s + d["b"], in_axes=({"a": 0, "b": None}, 1), out_axes=1)
    out = f({"a": X, "b": jnp.ones(3)}, X.T)
    expected = np.stack([np.asarray(X)[i] * np.asarray(X)[i] + 1 for i in range(2)], axis=1)
    np.testing.assert_allclose(out, expected)


def test_unbatched_output_is_broadcast_and_axis_size():
    out = jax.vmap(lambda x: 1.0, axis_size=3, in_axes=None)(0.0)
    np.testing.assert_allclose(out, np.ones(3))


def test_nested_vmap_and_composition_with_jit_and_grad():
    outer = jax.vmap(jax.vmap(lambda a, b: a * b, in_axes=(0, None)), in_axes=(None, 0))
    out = outer(jnp.arange(3.0), jnp.arange(2.0))
    np.testing.assert_allclose(out, np.outer(np.arange(2.0), np.arange(3.0)))
    np.testing.assert_allclose(jax.jit(jax.vmap(jnp.sin))(X), np.sin(np.asarray(X)), rtol=1e-6)
    grads = jax.vmap(jax.grad(lambda x: jnp.sum(x ** 2)))(X)
    np.testing.assert_allclose(grads, 2 * np.asarray(X))
    g = jax.grad(lambda x: jnp.sum(jax.vmap(jnp.sin)(x)))(X)
    np.testing.assert_allclose(g, np.cos(np.asarray(X)), rtol=1e-6)


def test_unmapped_arguments_reach_the_function_unconverted():
    """in_axes=None leaves are passed through as they are (JAX 0.10.2): a Python bool stays
    usable in Python control flow, a list stays a list."""
    seen = []

    def f(x, flag, items):
        seen.append((type(flag), type(items)))
        return x * (2 if flag else 3) + len(items)

    out = jax.vmap(f, in_axes=(0, None, None))(jnp.arange(3.), True, [1, 2])
    assert seen == [(bool, list)]
    np.testing.assert_array_equal(out, [2., 4., 6.])
