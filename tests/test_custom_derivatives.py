"""custom_jvp / custom_vjp: user rules are used by jvp/grad, under jit too, with JAX's errors."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp

X, Y = jnp.float32(1.0), jnp.float32(2.0)


def make_f():
    @jax.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (x_dot, y_dot) = primals, tangents
        # deliberately 3x the true x-derivative, so the test sees the rule was used
        return f(x, y), jnp.float32(3) * jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot
    return f


def test_custom_jvp_rule_is_used_by_jvp_grad_and_jit():
    f = make_f()
    assert float(f(X, Y)) == pytest.approx(np.sin(1.0) * 2, rel=1e-6)
    expected = 3 * np.cos(1.0) * 2
    assert float(jax.grad(f)(X, Y)) == pytest.approx(expected, rel=1e-6)
    assert float(jax.jit(jax.grad(f))(X, Y)) == pytest.approx(expected, rel=1e-6)
    assert float(jax.grad(jax.jit(f))(X, Y)) == pytest.approx(expected, rel=1e-6)
    _, t = jax.jvp(f, (X, Y), (jnp.float32(1), jnp.float32(0)))
    assert float(t) == pytest.approx(expected, rel=1e-6)


def test_custom_jvp_prints_as_a_custom_jvp_call():
    text = str(jax.make_jaxpr(make_f())(X, Y))
    assert "custom_jvp_call[\n      name=f\n      call_jaxpr={" in text
    assert "jvp=f_jvp\n      symbolic_zeros=False" in text


def test_defjvps_per_argument_rules():
    @jax.custom_jvp
    def f(x, y):
        return x * y
    f.defjvps(lambda g, ans, x, y: g * y * jnp.float32(2), lambda g, ans, x, y: g * x)
    gx, gy = jax.grad(f, argnums=(0, 1))(X, Y)
    assert (float(gx), float(gy)) == (4.0, 1.0)


def make_g():
    @jax.custom_vjp
    def g(x):
        return jnp.sin(x)

    def g_fwd(x):
        return jnp.sin(x), jnp.cos(x)

    def g_bwd(res, ct):
        return (res * ct * jnp.float32(10),)
    g.defvjp(g_fwd, g_bwd)
    return g


def test_custom_vjp_bwd_is_used_by_grad_and_jit():
    g = make_g()
    assert float(jax.grad(g)(X)) == pytest.approx(10 * np.cos(1.0), rel=1e-6)
    assert float(jax.jit(jax.grad(g))(X)) == pytest.approx(10 * np.cos(1.0), rel=1e-6)
    assert float(g(X)) == pytest.approx(np.sin(1.0), rel=1e-6)


def test_custom_vjp_rejects_forward_mode_and_bad_bwd_output():
    with pytest.raises(TypeError, match="forward-mode"):
        jax.jvp(make_g(), (X,), (X,))

    @jax.custom_vjp
    def h(x):
        return x
    h.defvjp(lambda x: (x, None), lambda res, ct: ct)
    with pytest.raises(TypeError, match=r"same container \(pytree\) structure"):
        jax.grad(h)(X)


def test_custom_vjp_nondiff_argnums():
    def scale_fn(k, x):
        return x * k
    scale = jax.custom_vjp(scale_fn, nondiff_argnums=(0,))
    scale.defvjp(lambda k, x: (x * k, None), lambda k, res, ct: (ct * k * jnp.float32(2),))
    g = jax.grad(lambda x: scale(jnp.float32(3), x))(X)
    assert float(g) == 6.0


def test_custom_rules_see_defaults_and_keywords_as_positions():
    """As JAX's resolve_kwargs: defaults are filled in before the rules run, keywords bound to
    positions, keyword-only arguments refused (texts and values from JAX 0.10.2)."""
    @jax.custom_vjp
    def g(x, y=3.):
        return x * y
    g.defvjp(lambda x, y: (g(x, y), (x, y)), lambda r, c: (c * r[1], c * r[0]))
    assert float(jax.grad(g)(2.)) == 3.0
    assert float(g(2., y=4.)) == 8.0
    assert float(jax.grad(g, argnums=1)(2., 5.)) == 2.0

    @jax.custom_jvp
    def f(x, *, k=2.):
        return x * k
    f.defjvp(lambda p, t: (f(*p), t[0]))
    with pytest.raises(TypeError, match="The input arguments to the custom_jvp-decorated "
                       "function f could not be resolved to positional-only arguments. Binding "
                       "failed with the error:\nThe following keyword arguments could not be "
                       "resolved to positions: k"):
        f(1., k=3.)


def test_custom_vjp_grad_with_integer_argument():
    """An integer input's tangent is float0; it is not an operand of the linearised call."""
    @jax.custom_vjp
    def f(x, i):
        return x * i
    f.defvjp(lambda x, i: (x * i, (i,)), lambda r, g: (g * r[0], None))
    assert float(jax.grad(f)(2.0, 3)) == 3.0
    assert float(jax.jit(jax.grad(f))(2.0, 3)) == 3.0
    np.testing.assert_array_equal(jax.vmap(jax.grad(f), (0, None))(jnp.ones(2), 3), [3.0, 3.0])
