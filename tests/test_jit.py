"""jit semantics: what is traced when, what the cache key holds, static arguments, nesting."""
import functools

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp


def counting(fn):
    """Wrap fn so that tests can count how often it runs in Python (i.e. is traced)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        wrapper.calls += 1
        return fn(*args, **kwargs)
    wrapper.calls = 0
    return wrapper


def test_traces_once_per_signature_and_retraces_on_new_shape_dtype_or_weak_type():
    f = counting(lambda x: x * 2)
    g = jax.jit(f)
    g(jnp.ones(3)); g(jnp.zeros(3))
    assert f.calls == 1
    g(jnp.ones(4)); g(jnp.ones(3, jnp.int32)); g(3.0); g(jnp.float32(3.0))
    assert f.calls == 5  # new shape, dtype, weak scalar, strong scalar


def test_separate_jit_wrappers_share_the_cache_but_new_lambdas_and_partials_retrace():
    f = counting(lambda x: x + 1)
    jax.jit(f)(1.0); jax.jit(f)(2.0)
    assert f.calls == 1
    body = counting(lambda x: x + 1)
    for i in range(3):
        jax.jit(functools.partial(body))(i)
    assert body.calls == 3


def test_side_effects_run_only_while_tracing_and_closures_are_frozen():
    log, offset = [], [10]

    @jax.jit
    def f(x):
        log.append("traced")
        return x + offset[0]
    assert int(f(1)) == 11
    offset[0] = 20
    assert int(f(2)) == 12 and log == ["traced"]


def test_static_argnums_and_argnames_are_part_of_the_key():
    f = counting(lambda x, n: x * n)
    g = jax.jit(f, static_argnums=1)
    assert int(g(2, 3)) == 6 and int(g(2, 3)) == 6 and int(g(2, 4)) == 8
    assert f.calls == 2
    h = jax.jit(lambda x, n: x + n, static_argnames=["n"])
    assert int(h(1, n=5)) == 6 and int(h(1, 5)) == 6


def test_decorator_with_partial_and_kwargs():
    @functools.partial(jax.jit, static_argnames=["n"])
    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i
    assert int(g(10, n=20)) == 30 and int(g(10, 30)) == 40


def test_unhashable_static_argument_is_a_value_error():
    g = jax.jit(lambda x, n: x, static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        g(1, [1, 2])


def test_pytree_arguments_and_outputs():
    @jax.jit
    def f(params, x):
        return {"y": params["w"] * x + params["b"], "pair": (x, 2 * x)}
    out = f({"w": jnp.ones(2), "b": 1.0}, jnp.arange(2.0))
    np.testing.assert_allclose(out["y"], [1.0, 2.0])
    np.testing.assert_allclose(out["pair"][1], [0.0, 2.0])


def test_weak_types_survive_jit_like_jax():
    assert repr(jax.jit(lambda i: i + 1)(29)) == "Array(30, dtype=int32, weak_type=True)"
    assert repr(jax.jit(lambda i: i + 1)(jnp.int32(29))) == "Array(30, dtype=int32)"


def test_nested_jit_is_one_call_equation_and_shared_jaxprs_print_once():
    inner = jax.jit(lambda x: x * 2)
    text = str(jax.make_jaxpr(lambda x: inner(x) + inner(x + 1.0))(jnp.ones(3)))
    assert text.startswith("let <lambda> = ") is False
    assert text.count("mul a 2.0:f32[]") == 1 and text.count("jit[name=<lambda> jaxpr=lambda]") == 2


def test_nested_jit_closing_over_an_outer_tracer():
    def outer(x):
        return jax.jit(lambda y: x * y)(3.0)
    assert float(jax.jit(outer)(2.0)) == 6.0


def test_cache_is_bounded():
    from pyjax._src.transforms import jit as jit_module
    f = jax.jit(lambda x: x)
    for n in range(jit_module.CACHE_SIZE + 5):
        f(jnp.zeros(n))
    assert len(f._cache) == jit_module.CACHE_SIZE


def test_x64_flag_is_part_of_the_key():
    f = jax.jit(lambda x: x + 1)
    assert f(1.0).dtype == np.float32
    jax.config.update("jax_enable_x64", True)
    try:
        assert f(1.0).dtype == np.float64
    finally:
        jax.config.update("jax_enable_x64", False)


def test_disable_jit_runs_python():
    calls = counting(lambda x: x)
    jax.config.update("jax_disable_jit", True)
    try:
        jax.jit(calls)(1); jax.jit(calls)(1)
    finally:
        jax.config.update("jax_disable_jit", False)
    assert calls.calls == 2


def test_jit_rewrites_log_exp_like_xla():
    x = jnp.array([1.0, 100.0])
    assert np.isinf(np.asarray(jnp.log(jnp.exp(x)))[1])
    np.testing.assert_array_equal(jax.jit(lambda v: jnp.log(jnp.exp(v)))(x), [1.0, 100.0])


def test_jit_divides_by_constants_through_the_reciprocal_like_xla():
    x = jnp.float32(3.0)
    assert float(x / 29.0) == float(np.float32(3) / np.float32(29))
    assert float(jax.jit(lambda v: v / 29.0)(x)) == float(np.float32(3) * (np.float32(1) / np.float32(29)))
    assert float(jax.jit(lambda v, d: v / d)(x, 29.0)) == float(np.float32(3) / np.float32(29))


def test_eval_shape_and_make_jaxpr_return_shape():
    out = jax.eval_shape(lambda x, y: {"s": x @ y, "t": x.sum()}, jnp.ones((2, 3)), jnp.ones((3, 4)))
    assert out["s"] == jax.ShapeDtypeStruct((2, 4), np.float32)
    assert out["t"].shape == ()
    _, shape = jax.make_jaxpr(lambda x: x * 2, return_shape=True)(1.0)
    assert shape == jax.ShapeDtypeStruct((), np.float32, weak_type=True)


def test_tracers_arrays_and_scalars_of_one_aval_share_a_trace():
    f = counting(lambda x: x + 1)
    g = jax.jit(f)
    g(jnp.ones(3))
    jax.make_jaxpr(lambda x: g(x))(jnp.ones(3))
    g(2.0)
    jax.make_jaxpr(lambda x: g(x))(2.0)
    assert f.calls == 2


def test_python_scalar_arguments_print_their_python_value():
    inner = jax.jit(lambda x, s: x * s)
    text = str(jax.make_jaxpr(lambda x: inner(x, 0.017453292519943295))(jnp.ones(2)))
    assert "0.017453292519943295:f32[]" in text
    np.testing.assert_allclose(inner(jnp.ones(2), 0.5), [0.5, 0.5])


def test_var_method_works_on_tracers():
    np.testing.assert_allclose(jax.jit(lambda x: x.var())(jnp.arange(4.0)), 1.25)


def test_checker_rejects_an_ill_typed_equation():
    from pyjax._src.core.check import check_jaxpr
    from pyjax._src.core.avals import ShapedArray
    from pyjax._src.core.jaxpr import Var
    closed = jax.make_jaxpr(lambda x: jnp.sin(x))(jnp.ones(3))
    eqn = closed.jaxpr.eqns[0]
    eqn.outvars[0] = Var(ShapedArray((4,), np.dtype("float32")))
    closed.jaxpr.outvars[0] = eqn.outvars[0]
    with pytest.raises(jax.errors.JaxprTypeError, match="sin"):
        check_jaxpr(closed.jaxpr)


def test_compiled_code_computes_nan_and_inf_silently():
    """JAX warns about nothing when inf - inf or log(-1) runs under jit; neither does pyjax's
    generated code (checked in a fresh interpreter, where no warning has been shown yet)."""
    import subprocess
    import sys
    code = ("import numpy as np, pyjax as jax, pyjax.numpy as jnp\n"
            "x = jnp.array([np.inf, -1.0], jnp.float32)\n"
            "print(jax.jit(lambda a: (a - a, jnp.log(a), a / 0))(x))\n")
    run = subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True,
                         text=True, check=True)
    assert "Warning" not in run.stderr, run.stderr


def test_inline_jit_stages_its_body_in_place():
    """jit(inline=True) traced inside another trace leaves no jit equation, and converts of
    constant operands fold while inlining (JAX 0.10.2's inline_jaxpr_into_trace)."""
    f = jax.jit(lambda x, y: jnp.sin(x) * y + 2.0, inline=True)
    text = str(jax.make_jaxpr(jax.vmap(lambda x: f(x, 2)))(jnp.ones(3)))
    assert "jit" not in text and "convert_element_type" not in text
    assert "mul b 2.0:f32[]" in text
    np.testing.assert_allclose(f(1.0, 2.0), np.sin(1.0) * 2 + 2, rtol=1e-6)
    assert float(jax.grad(lambda x: f(x, x))(1.0)) == pytest.approx(np.cos(1) + np.sin(1))


def test_jit_contracts_single_use_products_into_fused_multiply_adds():
    """As XLA's CPU backend: under jit a*b + c (and a*b - c, c - a*b) rounds once, unless the
    product is used elsewhere (XLA merges identical products first); eagerly it rounds twice."""
    from fractions import Fraction
    rng = np.random.default_rng(3)
    a, b, c = (rng.normal(size=2000).astype(np.float32) for _ in range(3))
    exact = (a.astype(np.float64) * b + c).astype(np.float32)  # float32 product is exact in f64
    np.testing.assert_array_equal(jax.jit(lambda a, b, c: a * b + c)(a, b, c), exact)
    np.testing.assert_array_equal(jax.jit(lambda a, b, c: c - a * b)(a, b, c),
                                  (c.astype(np.float64) - a.astype(np.float64) * b)
                                  .astype(np.float32))
    twice = (a * b) + c
    assert not np.array_equal(twice, exact)  # the data does tell the two apart
    np.testing.assert_array_equal(jax.jit(lambda a, b, c: (a * b, a * b + c))(a, b, c)[1], twice)
    np.testing.assert_array_equal(jnp.add(jnp.multiply(a, b), c), twice)
    with jax.enable_x64(True):
        x, y, z = (rng.normal(size=200) for _ in range(3))
        got = jax.jit(lambda x, y, z: x * y + z)(x, y, z)
        want = [float(Fraction(p) * Fraction(q) + Fraction(r)) for p, q, r in zip(x, y, z)]
        np.testing.assert_array_equal(got, want)


def test_jitted_function_reports_its_functions_signature():
    # JAX: inspect.signature(jax.jit(f), follow_wrapped=False) is f's signature (chex's
    # fake_pmap reads it so); jax.jit(np.add)'s is np.add's
    import inspect

    def f(x, y=2, *, z):
        return x

    assert str(inspect.signature(jax.jit(f), follow_wrapped=False)) == "(x, y=2, *, z)"
    assert str(jax.jit(f, static_argnums=0).__signature__) == "(x, y=2, *, z)"
    assert str(inspect.signature(jax.jit(functools.partial(f, 1)))) == "(y=2, *, z)"
    assert inspect.signature(jax.jit(np.add)) == inspect.signature(np.add)


def test_jitted_function_type_is_named_pjit_function():
    # JAX: type(jax.jit(f)).__name__ == "PjitFunction"; chex's is_traceable looks for the name
    jitted = jax.jit(lambda x: x)
    assert type(jitted).__name__ == "PjitFunction"
    assert repr(jitted).startswith("<PjitFunction of <function ")


def test_cache_keeps_recently_used_traces():
    """The per-function trace cache drops the least recently used trace, not the oldest: a
    shape used all along survives many one-off shapes."""
    from pyjax._src.transforms import jit as jit_module
    traces = []

    @jax.jit
    def f(x):
        traces.append(x.shape)
        return x + 1
    f(jnp.ones(1))
    for n in range(2, jit_module.CACHE_SIZE + 100):
        f(jnp.ones(n))
        f(jnp.ones(1))
    assert traces.count((1,)) == 1


def test_jit_retraces_when_the_mesh_context_changes():
    """The mesh in context is part of jit's cache key, as in JAX: a function traced under
    one mesh is traced again without it (here: and then raises JAX's error)."""
    from pyjax.sharding import AxisType, PartitionSpec
    calls = []

    def constrain(x):
        calls.append(1)
        return jax.lax.with_sharding_constraint(x, PartitionSpec("x"))
    f = jax.jit(constrain)
    # (Auto axes: over Explicit ones the constraint only asserts x's type, as in JAX)
    auto = dict(axis_types=(AxisType.Auto,))
    with jax.set_mesh(jax.make_mesh((1,), ("x",), **auto)):
        f(jnp.ones(8))
        f(jnp.ones(8))
    assert len(calls) == 1
    with pytest.raises(RuntimeError, match="requires a non-empty mesh in context"):
        f(jnp.ones(8))
    with jax.set_mesh(jax.make_mesh((1,), ("x",), **auto)):
        f(jnp.ones(8))  # an equal mesh: the first trace again
    assert len(calls) == 2
