"""pyjax.core: the `jax.core` of JAX 0.10.2 mapped onto pyjax's core (pyjax/_src/compat/core.py):
its public names, its deprecated and removed names, and that every pyjax tracer is a
`jax.core.Tracer`."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import core
from pyjax._src.compat import core as compat
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.trace import Trace, Tracer

#: dir(jax.core) in JAX 0.10.2
JAX_CORE_PUBLIC = ["AbstractValue", "Atom", "ParamDict", "ShapedArray", "Trace", "Tracer", "Value",
                   "ensure_compile_time_eval", "eval_context", "eval_jaxpr", "max_dim", "min_dim"]


def test_public_names_are_jaxs():
    assert sorted(n for n in dir(core) if not n.startswith("_")) == JAX_CORE_PUBLIC
    assert core.Tracer is Tracer and core.Trace is Trace and core.ShapedArray is ShapedArray
    assert issubclass(core.ShapedArray, core.AbstractValue)
    assert core.ensure_compile_time_eval is jax.ensure_compile_time_eval


@pytest.mark.parametrize("name", ["Jaxpr", "ClosedJaxpr", "Primitive", "Var", "Literal",
                                  "JaxprEqn", "typeof"])
def test_names_jax_core_does_not_have(name):
    with pytest.raises(AttributeError, match=f"has no attribute '{name}'"):
        getattr(core, name)


def test_removed_names_say_where_they_went():
    with pytest.raises(AttributeError) as e:
        core.get_aval  # noqa: B018
    assert str(e.value) == ("jax.core.get_aval was deprecated in JAX v0.8.2 and removed in JAX "
                            "v0.10.0; use jax.typeof instead.")
    with pytest.raises(AttributeError) as e:
        core.mapped_aval  # noqa: B018
    assert str(e.value) == ("jax.core.mapped_aval was deprecated in JAX v0.8.2 and removed in "
                            "JAX v0.10.0. Use jax.extend.core.mapped_aval.")


@pytest.mark.parametrize("name, message", [
    ("concrete_or_error", "jax.core.concrete_or_error is deprecated. Use "
                          "jax.extend.core.concrete_or_error."),
    ("valid_jaxtype", "jax.core.valid_jaxtype is deprecated. Use jax.extend.core.valid_jaxtype."),
    ("is_concrete", "jax.core.is_concrete is deprecated."),
    ("find_top_trace", "jax.core.find_top_trace is deprecated. Use "
                       "jax.extend.core.find_top_trace."),
    ("JaxprTypeError", "jax.core.JaxprTypeError is deprecated. Use jax.errors.JaxprTypeError."),
    ("unsafe_am_i_under_a_jit_DO_NOT_USE",
     "jax.core.unsafe_am_i_under_a_jit_DO_NOT_USE is deprecated."),
])
def test_deprecated_names_warn_and_work(name, message):
    code = (f"import warnings, pyjax.core as c\nwarnings.simplefilter('always')\n"
            f"with warnings.catch_warnings(record=True) as w:\n"
            f"    warnings.simplefilter('always')\n    c.{name}; c.{name}\n"
            f"print(len(w), w[0].category.__name__, w[0].message)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == f"1 DeprecationWarning {message}"  # once per name, as JAX caches it


def test_alias_maps_jax_core():
    code = ("import pyjax; pyjax.alias_as_jax()\nimport jax\nimport jax.core\n"
            "from jax.core import Tracer\nimport pyjax.core\n"
            "print(jax.core is pyjax.core, Tracer is pyjax.core.Tracer)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "True"]


def _tracer_kinds() -> list:
    seen = []

    def probe(x):
        seen.append(type(x).__name__ if isinstance(x, core.Tracer) else None)
        return x
    jax.jit(probe)(1.0)
    jax.jvp(probe, (1.0,), (1.0,))
    jax.grad(probe)(1.0)
    jax.linearize(probe, 1.0)
    jax.vmap(probe)(jnp.ones(2))
    jax.pmap(probe)(jnp.ones((1, 2)))
    jax.make_jaxpr(probe)(1.0)
    jax.vmap(jax.grad(probe))(jnp.ones(2))
    return seen


def test_every_tracer_is_a_jax_core_tracer():
    kinds = _tracer_kinds()
    assert len(kinds) == 8 and None not in kinds
    assert {"DynamicJaxprTracer", "JVPTracer", "BatchTracer"} <= set(kinds)
    assert not isinstance(jnp.ones(2), core.Tracer)


def test_concrete_or_error():
    assert compat.concrete_or_error(None, 5) == 5
    assert compat.concrete_or_error(int, 5.5) == 5
    # a JVP primal is known: the concrete value is forced
    assert jax.jvp(lambda v: v * compat.concrete_or_error(float, v), (3.0,), (1.0,))[0] == 9.0
    with pytest.raises(jax.errors.ConcretizationTypeError) as e:
        jax.jit(lambda v: compat.concrete_or_error(float, v, "The problem arose in f."))(1.0)
    text = str(e.value)
    assert text.startswith("Abstract tracer value encountered where concrete value is expected: "
                           "traced array with shape float32[]\nThe problem arose in f.\n"
                           "The error occurred while tracing the function <lambda>")
    assert "depends on the value of the argument v." in text


def test_valid_jaxtype_and_is_concrete():
    assert compat.valid_jaxtype(1.0) and compat.valid_jaxtype(np.ones(2))
    assert not compat.valid_jaxtype("a") and not compat.valid_jaxtype(object())
    assert compat.is_concrete(1.0) and compat.is_concrete(jnp.ones(2))
    seen = []
    jax.jit(lambda v: seen.append(compat.is_concrete(v)) or v)(1.0)
    jax.jvp(lambda v: seen.append(compat.is_concrete(v)) or v, (1.0,), (1.0,))
    assert seen == [False, True]


def test_eval_jaxpr_and_eval_context():
    closed = jax.make_jaxpr(lambda v: jnp.sin(v) * 2)(1.0)
    out = core.eval_jaxpr(closed.jaxpr, closed.consts, np.float32(0.5),
                          propagate_source_info=False)
    np.testing.assert_allclose(out[0], 2 * np.sin(np.float32(0.5)), rtol=1e-6)
    kinds = []

    def f(v):
        with core.eval_context():
            kinds.append(isinstance(jnp.ones(2) + 1, core.Tracer))
        kinds.append(isinstance(jnp.ones(2) + v, core.Tracer))
        return v
    jax.jit(f)(1.0)
    assert kinds == [False, True]


def test_dims_and_typing_aliases():
    assert core.max_dim(3, 4) == 4 and core.min_dim(3, np.int64(4)) == 3
    assert isinstance(jax.typeof(jnp.ones(2)), core.ShapedArray)
    from pyjax._src.core.jaxpr import Literal, Var
    assert core.ParamDict.__origin__ is dict and set(core.Atom.__args__) == {Var, Literal}
