"""The autodiff API over pytrees: grad/value_and_grad/vjp/jvp/linearize/jacobians/hessian,
argnums, has_aux, integer inputs, and JAX's errors."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax


def loss(params, x):
    return jnp.sum(jnp.tanh(x @ params["w"] + params["b"]) ** 2)


PARAMS = {"w": jnp.arange(6.0).reshape(3, 2) / 10, "b": jnp.ones(2)}
X = jnp.arange(12.0).reshape(4, 3) / 10


def numeric_grad(f, x, eps=1e-3):
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (float(f(jnp.asarray(x + d, jnp.float32))) -
                float(f(jnp.asarray(x - d, jnp.float32)))) / (2 * eps)
    return g


def test_grad_of_a_pytree_matches_numerical_differences():
    grads = jax.grad(loss)(PARAMS, X)
    assert set(grads) == {"w", "b"} and grads["w"].shape == (3, 2)
    for key in ("w", "b"):
        np.testing.assert_allclose(
            grads[key], numeric_grad(lambda v: loss({**PARAMS, key: v}, X), PARAMS[key]),
            rtol=2e-2, atol=2e-3)


def test_value_and_grad_argnums_and_has_aux():
    (value, aux), (gp, gx) = jax.value_and_grad(lambda p, x: (loss(p, x), x.shape),
                                                argnums=(0, 1), has_aux=True)(PARAMS, X)
    assert float(value) == pytest.approx(float(loss(PARAMS, X)))
    assert aux == (4, 3) and gx.shape == X.shape
    g, aux = jax.grad(lambda x: (jnp.sum(x ** 2), "aux"), has_aux=True)(jnp.ones(3))
    np.testing.assert_allclose(g, [2.0, 2.0, 2.0])
    assert aux == "aux"


def test_second_and_third_derivatives():
    f = lambda x: x ** 3  # noqa: E731
    assert float(jax.grad(jax.grad(f))(2.0)) == pytest.approx(12.0)
    assert float(jax.grad(jax.grad(jax.grad(f)))(2.0)) == pytest.approx(6.0)


def test_jit_of_grad_and_grad_of_jit_agree():
    g1 = jax.jit(jax.grad(loss))(PARAMS, X)
    g2 = jax.grad(jax.jit(loss))(PARAMS, X)
    np.testing.assert_allclose(g1["w"], g2["w"], rtol=1e-6)


def test_jacobians_and_hessian():
    f = lambda x: jnp.sin(x) * x[0]  # noqa: E731
    x = jnp.array([0.5, 1.0, 2.0])
    jf, jr = jax.jacfwd(f)(x), jax.jacrev(f)(x)
    expected = np.diag(np.cos(x) * 0.5)
    expected[:, 0] += np.sin(x)
    np.testing.assert_allclose(jf, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jr, expected, rtol=1e-5, atol=1e-6)
    h = jax.hessian(lambda v: jnp.sum(v ** 3))(x)
    np.testing.assert_allclose(h, np.diag(6 * np.asarray(x)), rtol=1e-5)


@pytest.mark.parametrize("jac,fn,arg,message", [
    (jax.jacfwd, lambda a: a * 2, np.arange(3),
     "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), but "
     "got int32."),
    (jax.jacfwd, jnp.real, np.ones(2, np.complex64),
     "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), but "
     "got complex64."),
    (jax.jacrev, lambda a: a * 1j, np.ones(2, np.float32),
     "jacrev requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
     "but got complex64."),
])
def test_jacobian_dtype_errors(jac, fn, arg, message):
    with pytest.raises(TypeError) as info:
        jac(fn)(arg)
    assert str(info.value).startswith(message)


def test_jacobians_holomorphic_pytrees_and_aux():
    z = np.full(2, 1 + 1j, np.complex64)
    for jac in (jax.jacfwd, jax.jacrev):
        j = jac(lambda a: a * a, holomorphic=True)(z)
        assert j.dtype == np.complex64
        np.testing.assert_allclose(j, np.diag(2 * z))
    x = np.array([1.0, 2.0], np.float32)
    out, aux = jax.jacfwd(lambda a: ({"v": a * 3, "s": a.sum()}, a[0]), has_aux=True)(x)
    np.testing.assert_allclose(out["v"], 3 * np.eye(2))
    np.testing.assert_allclose(out["s"], np.ones(2))
    assert float(aux) == 1.0
    (ja, jb), aux = jax.jacrev(lambda a, b: (a * b, b), (0, 1), has_aux=True)(x, np.float32(2))
    np.testing.assert_allclose(ja, 2 * np.eye(2))
    np.testing.assert_allclose(jb, x)


def test_jvp_vjp_linearize_linear_transpose():
    y, t = jax.jvp(jnp.sin, (1.0,), (2.0,))
    assert float(t) == pytest.approx(2 * np.cos(1.0), rel=1e-6)
    y, vjp_fn = jax.vjp(lambda a, b: a * b, 2.0, 3.0)
    assert tuple(float(v) for v in vjp_fn(1.0)) == (3.0, 2.0)
    y, f_jvp = jax.linearize(jnp.sin, 1.0)
    assert float(f_jvp(2.0)) == pytest.approx(2 * np.cos(1.0), rel=1e-6)
    transposed = jax.linear_transpose(lambda v: 3.0 * v, 1.0)
    assert float(transposed(2.0)[0]) == 6.0


def test_stop_gradient():
    g = jax.grad(lambda x: lax.stop_gradient(x) * x)(3.0)
    assert float(g) == 3.0


def test_unused_and_integer_inputs():
    g = jax.grad(lambda x, y: 2.0 * x, argnums=(0, 1))(1.0, 5.0)
    assert float(g[1]) == 0.0
    gi = jax.grad(lambda x, n: x * n, argnums=1, allow_int=True)(2.0, 3)
    assert gi.dtype == jax.dtypes.float0


def test_errors_like_jax():
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions. "
                                        r"Output had shape: \(3,\)"):
        jax.grad(lambda x: x * 2)(jnp.ones(3))
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        jax.grad(lambda x: x * 2.0)(3)
    with pytest.raises(TypeError, match="has_aux=True"):
        jax.grad(lambda x: x * 2.0, has_aux=True)(3.0)


def test_grad_through_nested_jit_and_checkpoint_closures():
    x = jnp.arange(3.0)
    inner = jax.jit(lambda y: 2 * y)
    g = jax.grad(jax.jit(lambda v: (inner(v) * v).sum()))(x)
    np.testing.assert_allclose(g, 4 * np.arange(3.0))
    g = jax.grad(lambda v: jax.checkpoint(lambda y: (y * v).sum())(v))(x)
    np.testing.assert_allclose(g, 2 * np.arange(3.0))
    g = jax.grad(jax.jit(lambda v: (jnp.cumsum(v) * v).sum()))(x)
    np.testing.assert_allclose(g, [3.0, 4.0, 5.0])


def test_logaddexp_derivative_is_finite_at_infinity():
    """jnp.logaddexp is a custom_jvp function, as in JAX: exp(x - out) with infinities replaced,
    so d/dx at (inf, inf) is 1 where differentiating the primal formula gives nan."""
    x = np.array([0.5, -np.inf, np.inf, 3.0, 100.0], np.float32)
    y = np.array([1.5, -np.inf, np.inf, np.nan, -100.0], np.float32)
    gx, gy = jax.vmap(jax.grad(jnp.logaddexp, (0, 1)))(x, y)
    np.testing.assert_allclose(gx, [0.2689414, np.nan, 1, np.nan, 1], rtol=1e-6)
    np.testing.assert_allclose(gy, [0.7310586, np.nan, 1, np.nan, 0], rtol=1e-6)
    gx2, _ = jax.vmap(jax.grad(jnp.logaddexp2, (0, 1)))(x, y)
    np.testing.assert_allclose(gx2, [1 / 3, np.nan, 1, np.nan, 1], rtol=1e-6)


def test_jacobians_with_integer_inputs_or_outputs_are_integer_zeros():
    """As JAX: the float0 derivative becomes zeros of the example's dtype."""
    j = jax.jacrev(lambda a: a * 2.0, allow_int=True)(jnp.arange(3))
    assert j.dtype == np.int32 and j.shape == (3, 3) and not np.asarray(j).any()
    j = jax.jacfwd(lambda a: (a * 2).astype(int))(jnp.arange(3.0))
    assert j.dtype == np.int32 and j.shape == (3, 3) and not np.asarray(j).any()
    ja, jb = jax.jacrev(lambda a, b: a * b, (0, 1), allow_int=True)(jnp.arange(2.0),
                                                                    jnp.arange(2))
    np.testing.assert_array_equal(ja, [[0, 0], [0, 1]])
    assert jb.dtype == np.int32 and not np.asarray(jb).any()


def test_jvp_constants_of_weak_scalars_stay_weak():
    """JAX's `_const` is weak for any weak scalar (not only Python scalars): the derivative of
    lax.square at a weak 0.7 is weak, at a float32 array it is not (JAX 0.10.2)."""
    from pyjax import lax
    assert jax.grad(lax.square)(0.7).weak_type
    assert jax.jvp(lambda x: 2. * lax.square(x), (0.7,), (1.0,))[1].weak_type
    assert not jax.grad(lax.square)(jnp.float32(0.7)).weak_type


def test_vjp_pullback_is_a_pytree_of_its_residuals():
    # as JAX's VJP: its leaves are the residuals, so it can leave and enter jit and tree_map
    out, f_vjp = jax.vjp(jnp.sin, 1.0)
    leaves = jax.tree_util.tree_leaves(f_vjp)
    np.testing.assert_allclose(leaves, [np.cos(np.float32(1.0))], rtol=1e-7)
    out, f_vjp = jax.jit(lambda x: jax.vjp(lambda y: jnp.sin(y) * y, x))(2.0)
    expected = np.cos(2.0) * 2.0 + np.sin(2.0)
    np.testing.assert_allclose(f_vjp(1.0)[0], expected, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(lambda f, c: f(c))(f_vjp, 3.0)[0], 3 * expected,
                               rtol=1e-6)
    doubled = jax.tree_util.tree_map(lambda r: 2 * r, f_vjp)
    assert type(doubled) is type(f_vjp)
    assert jax.tree_util.tree_structure(doubled) == jax.tree_util.tree_structure(f_vjp)


def test_vjp_pullback_called_with_splatted_cotangents():
    _, f_vjp = jax.vjp(lambda x: (x, x), 1.0)
    with pytest.raises(TypeError, match="applied to <lambda> was called with 2 arguments"):
        f_vjp(2.0, 2.0)
    assert f_vjp((2.0, 3.0))[0] == 5.0


def test_vjp_with_refs_values_refs_and_unwanted_cotangents():
    # recorded from JAX 0.10.2: (1.0806046, DidntWant()); the Ref 10 -> 11.080605 -> 12.161209
    f = lambda x, y: jnp.sin(x) * y  # noqa: E731
    _, f_vjp = jax.vjp(f, 1.0, 2.0)
    x_ct, y_ct = f_vjp.with_refs(jax.ad.GradValue(), jax.ad.DontWant())(1.0)
    assert y_ct == jax.ad.DidntWant() and jax.tree_util.tree_leaves(y_ct) == []
    np.testing.assert_allclose(x_ct, np.float32(1.0806046), rtol=1e-7)
    ref = jax.new_ref(jnp.float32(10.0))
    for want in (11.080605, 12.161209):
        x_ct, y_ct = f_vjp.with_refs(ref, jax.ad.GradValue())(1.0)
        assert x_ct == jax.ad.GradRef()
        np.testing.assert_allclose(ref[...], np.float32(want), rtol=1e-7)
        np.testing.assert_allclose(y_ct, np.sin(np.float32(1.0)), rtol=1e-7)
    with pytest.raises(ValueError, match="Invalid shape for `addupdate`"):
        f_vjp.with_refs(jax.new_ref(jnp.zeros(3)), jax.ad.GradValue())(1.0)
    with pytest.raises(Exception):  # noqa: B017 - JAX raises a bare Exception
        f_vjp.with_refs(jax.ad.GradValue())


def test_vjp_dont_want_leaves_out_its_cotangents_equations():
    _, f_vjp = jax.vjp(lambda x, y: jnp.sin(x) * y, 1.0, 2.0)
    both = jax.make_jaxpr(lambda c: f_vjp(c))(1.0)
    one = jax.make_jaxpr(lambda c: f_vjp.with_refs(jax.ad.GradValue(), jax.ad.DontWant())(c))(1.0)
    assert len(one.jaxpr.eqns) == len(both.jaxpr.eqns) - 1
