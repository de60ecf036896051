"""Programs written against JAX's extension API (jax.extend, jax.interpreters, jax.api_util,
jax.custom_derivatives): each takes the `jax` module (real JAX when recording, pyjax under the
alias when testing) and returns a dict of printable results."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def _user_primitive(jax: Any) -> Any:
    """`scaled_sin(x, scale=s) = s * sin(x)`: a primitive defined only through the extension
    API, with impl, abstract eval, jvp, batching and a lower_fun lowering."""
    from jax.extend import core
    from jax.interpreters import ad, batching, mlir
    jnp = jax.numpy
    p = core.Primitive("scaled_sin")
    p.def_impl(lambda x, *, scale: scale * jnp.sin(x))
    p.def_abstract_eval(lambda x, *, scale: jax.core.ShapedArray(x.shape, x.dtype))

    def jvp(primals, tangents, *, scale):
        (x,), (t,) = primals, tangents
        out = p.bind(x, scale=scale)
        if type(t) is ad.Zero:
            return out, ad.Zero.from_primal_value(out)
        return out, scale * jnp.cos(x) * t
    ad.primitive_jvps[p] = jvp
    batching.primitive_batchers[p] = lambda args, dims, *, scale: (p.bind(*args, scale=scale),
                                                                   dims[0])
    mlir.register_lowering(p, mlir.lower_fun(lambda x, *, scale: scale * jnp.sin(x),
                                             multiple_results=False))
    return p


def user_primitive(jax: Any) -> dict:
    p = _user_primitive(jax)
    jnp = jax.numpy
    f = lambda x: p.bind(x, scale=2.0)  # noqa: E731
    x = jnp.arange(3.0, dtype=jnp.float32)
    return {
        "eager": f(x), "jit": jax.jit(f)(x),
        "grad": jax.grad(lambda x: f(x).sum())(x),
        "grad_jit": jax.jit(jax.grad(lambda x: f(x).sum()))(x),
        "vmap": jax.vmap(f)(jnp.ones((2, 3), jnp.float32)),
        "jaxpr": str(jax.make_jaxpr(f)(x)),
        "jvp_jaxpr": str(jax.make_jaxpr(lambda x, t: jax.jvp(f, (x,), (t,)))(x, x)),
        "multiple_results": _multiple_results(jax),
    }


def _multiple_results(jax: Any) -> Any:
    from jax.extend import core
    from jax.interpreters import mlir
    jnp = jax.numpy
    p = core.Primitive("split_sign")
    p.multiple_results = True
    impl = lambda x: [jnp.maximum(x, 0), jnp.minimum(x, 0)]  # noqa: E731
    p.def_impl(impl)
    p.def_abstract_eval(lambda x: [jax.core.ShapedArray(x.shape, x.dtype)] * 2)
    mlir.register_lowering(p, mlir.lower_fun(impl, multiple_results=True))
    x = jnp.array([-1.0, 2.0], jnp.float32)
    return [p.bind(x), jax.jit(lambda x: p.bind(x))(x), str(jax.make_jaxpr(p.bind)(x))]


def linear_primitive(jax: Any) -> dict:
    """A linear primitive registered with ad.deflinear2: reverse mode runs its transpose."""
    from jax.extend import core
    from jax.interpreters import ad, batching
    jnp = jax.numpy
    p = core.Primitive("triple")
    p.def_impl(lambda x: 3 * x)
    p.def_abstract_eval(lambda x: jax.core.ShapedArray(x.shape, x.dtype))
    ad.deflinear2(p, lambda ct, x: [p.bind(ct)])
    batching.defvectorized(p)
    x = jnp.array([1.0, 2.0], jnp.float32)
    return {"grad": jax.grad(lambda x: (p.bind(x) ** 2).sum())(x),
            "vjp": jax.vjp(p.bind, x)[1](jnp.ones(2, jnp.float32)),
            "vmap": jax.vmap(p.bind)(jnp.ones((2, 2), jnp.float32)),
            "grad_jaxpr": str(jax.make_jaxpr(jax.grad(lambda x: p.bind(x).sum()))(x))}


def axis_batcher(jax: Any) -> dict:
    """A rule registered in batching.axis_primitive_batchers sees the axis size and name."""
    from jax.extend import core
    from jax.interpreters import batching
    jnp = jax.numpy
    p = core.Primitive("batch_size_of")
    p.def_impl(lambda x: jnp.zeros((), jnp.int32))
    p.def_abstract_eval(lambda x: jax.core.ShapedArray((), np.dtype("int32")))
    seen = []

    def rule(size, name, trace_type, vals, dims):
        seen.append((size, name))
        return jnp.full((size,), size, jnp.int32), 0
    batching.axis_primitive_batchers[p] = rule
    out = jax.vmap(p.bind, axis_name="i")(jnp.ones((5, 2)))
    return {"out": out, "seen": seen, "eager": p.bind(jnp.ones(2))}


def partial_eval_by_shape(jax: Any) -> dict:
    """flax's use: known and unknown inputs through api_util.flatten_fun and
    pe.trace_to_jaxpr_nounits; only the output avals and known values are read."""
    from jax import api_util
    from jax.extend import linear_util as lu
    from jax.interpreters import partial_eval as pe
    jnp = jax.numpy

    def f(x, y, *, n):
        return {"sum": x + y, "const": jnp.arange(n), "known": x * 2}
    args, kwargs = (jnp.ones(3), jnp.zeros(3)), {"n": 4}
    in_leaves, in_tree = jax.tree_util.tree_flatten(((args[0], args[1]), {}))
    debug = api_util.debug_info("test", f, args, {})
    wrapped = lu.wrap_init(lambda x, y: f(x, y, **kwargs), debug_info=debug)
    flat_f, out_tree = api_util.flatten_fun(wrapped, in_tree)
    pvals = [pe.PartialVal.known(in_leaves[0]),
             pe.PartialVal.unknown(jax.core.ShapedArray((3,), np.dtype("float32")))]
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(flat_f, pvals)
    return {"out_tree": str(out_tree()),
            "known": [pv.is_known() for pv in out_pvals],
            "avals": [str(pv.get_aval()) for pv in out_pvals],
            "known_values": [pv.get_known() for pv in out_pvals if pv.is_known()],
            "num_invars": len(jaxpr.invars)}


def dynamic_trace(jax: Any) -> dict:
    from jax import api_util
    from jax.extend import linear_util as lu
    from jax.interpreters import partial_eval as pe
    jnp = jax.numpy

    def g(x):
        return jnp.sin(x) * 2, jnp.cos(x)
    in_tree = jax.tree_util.tree_structure((1.0,))
    flat, out_tree = api_util.flatten_fun_nokwargs(lu.wrap_init(g, debug_info=api_util.debug_info(
        "test", g, (1.0,), {})), in_tree)
    jaxpr, out_avals, consts = pe.trace_to_jaxpr_dynamic(
        flat, [jax.core.ShapedArray((2,), np.dtype("float32"))])
    pruned, used = pe.dce_jaxpr(jaxpr, [True, False])
    return {"jaxpr": str(jaxpr), "out_avals": [str(a) for a in out_avals],
            "out_tree": str(out_tree()), "dce": str(pruned), "used_inputs": used}


def custom_rules(jax: Any) -> dict:
    """custom_gradient, symbolic zeros of custom_jvp and custom_vjp."""
    from jax.custom_derivatives import SymbolicZero, custom_vjp_primal_tree_values
    jnp = jax.numpy

    @jax.custom_gradient
    def f(x, y):
        return x * y, lambda g: (g * y * 10, g * x)

    seen = []

    @jax.custom_jvp
    def h(x, y):
        return x * y

    def h_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        seen.append((type(tx) is SymbolicZero, type(ty) is SymbolicZero))
        tx = jnp.zeros_like(x) if type(tx) is SymbolicZero else tx
        ty = jnp.zeros_like(y) if type(ty) is SymbolicZero else ty
        return h(x, y), tx * y + x * ty
    h.defjvp(h_jvp, symbolic_zeros=True)

    perturbed = []

    @jax.custom_vjp
    def k(x, y):
        return x * y

    def k_fwd(x, y):
        perturbed.append((x.perturbed, y.perturbed))
        x, y = custom_vjp_primal_tree_values((x, y))
        return x * y, (x, y)
    k.defvjp(k_fwd, lambda res, g: (g * res[1], g * res[0]), symbolic_zeros=True)
    return {
        "custom_gradient": [f(3.0, 4.0), jax.grad(f, argnums=(0, 1))(3.0, 4.0)],
        "custom_gradient_jit": jax.jit(jax.grad(f))(3.0, 4.0),
        "symbolic_jvp": [jax.grad(h)(2.0, 5.0),
                         jax.jvp(h, (jnp.float32(2), jnp.float32(5)),
                                 (jnp.float32(1), jnp.float32(0)))[1]],
        "symbolic_seen": seen,
        "vjp_perturbed": [jax.grad(k)(2.0, 5.0), perturbed],
    }


def trace_queries(jax: Any) -> dict:
    from jax.extend import core
    jnp = jax.numpy
    states = {}

    def f(x):
        states["inner"] = core.get_opaque_trace_state()
        states["jit"] = core.unsafe_am_i_under_a_jit_DO_NOT_USE()
        states["vmap"] = core.unsafe_am_i_under_a_vmap_DO_NOT_USE()
        return x
    outer = core.get_opaque_trace_state()
    jax.jit(f)(1.0)
    under_jit = (states["jit"], states["vmap"], states["inner"] == outer)
    jax.vmap(f)(jnp.ones(2))
    under_vmap = (states["jit"], states["vmap"])
    return {"eager_equal": outer == core.get_opaque_trace_state(), "under_jit": under_jit,
            "under_vmap": under_vmap,
            "mapped": str(core.mapped_aval(4, 1, jax.core.ShapedArray((2, 4, 3), np.float32))),
            "unmapped": str(core.unmapped_aval(4, 0, jax.core.ShapedArray((3,), np.float32)))}


PROGRAMS: dict[str, Callable[[Any], dict]] = {
    "user_primitive": user_primitive, "linear_primitive": linear_primitive,
    "axis_batcher": axis_batcher, "partial_eval_by_shape": partial_eval_by_shape,
    "dynamic_trace": dynamic_trace, "custom_rules": custom_rules,
    "trace_queries": trace_queries,
}


def to_plain(x: Any) -> Any:
    """Results as JSON data: arrays become {dtype, shape, values}."""
    if hasattr(x, "dtype") and hasattr(x, "shape") and not isinstance(x, type):
        a = np.asarray(x)
        return {"dtype": str(a.dtype), "shape": list(a.shape), "values": a.tolist()}
    if isinstance(x, dict):
        return {k: to_plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_plain(v) for v in x]
    if isinstance(x, (np.bool_, np.integer, np.floating)):
        return x.item()
    return x
