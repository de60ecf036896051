"""jax.checkpoint (remat): in reverse mode, recompute intermediates instead of saving them.

`checkpoint` is a call primitive.  Its partial-evaluation rule splits the body by dependency:
the known part runs now and saves only the values the policy allows; the unknown part is staged
as another checkpoint whose transpose recomputes the rest of the body during the backward pass.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Var, has_effects
from pyjax._src.core.primitive import Primitive
from pyjax._src.parallel import propagation
from pyjax._src.core.trace import use_trace
from pyjax._src.transforms import ad
from pyjax._src.transforms.staging import abstractify, trace_to_jaxpr
from pyjax._src.tree_util import tree_flatten, tree_unflatten

checkpoint_p = Primitive("remat2", multiple_results=True)  # JAX 0.10.2 names it so


def _impl(*args: Any, jaxpr: ClosedJaxpr, **_: Any) -> list:
    from pyjax._src.backend.executor import compile_jaxpr
    return compile_jaxpr(jaxpr)(args)


checkpoint_p.impl = _impl
checkpoint_p.abstract_eval = lambda *avals, jaxpr, **_: jaxpr.out_avals
checkpoint_p.sharding_rule = propagation.nested_call


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: ClosedJaxpr,
         **params: Any) -> tuple[list, list]:
    from pyjax._src.core.jaxpr import eval_jaxpr
    nonzero = [type(t) is not ad.Zero for t in tangents]
    n = len(primals)

    def jvp_body(*args: Any) -> list:
        given = iter(args[n:])
        tangents_in = [next(given) if nz else t for nz, t in zip(nonzero, tangents)]
        outs, outs_dot = ad.jvp_flat(lambda *a: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *a),
                                     args[:n], tangents_in)
        return outs + [ad.instantiate(t) for t in outs_dot]

    nz = [t for t, keep in zip(tangents, nonzero) if keep]
    body = trace_to_jaxpr(jvp_body, [abstractify(x) for x in (*primals, *nz)])
    outs = checkpoint_p.bind(*primals, *nz, jaxpr=body, **{**params, "differentiated": True})
    k = len(jaxpr.out_avals)
    return outs[:k], outs[k:]


checkpoint_p.jvp = _jvp


def _restrict(jaxpr: Jaxpr, invars: list, outvars: list, effects: frozenset = frozenset()
              ) -> Jaxpr:
    """The equations of `jaxpr` needed for `outvars`, given `invars` as inputs, and those
    with effects whose ids are in `effects` (with what they need)."""
    provided = set(invars)
    live = {v for v in outvars if type(v) is Var}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live and v not in provided for v in eqn.outvars) or id(eqn) in effects:
            kept.append(eqn)
            live.update(a for a in eqn.invars if type(a) is Var)
    return Jaxpr(jaxpr.constvars, invars, outvars, kept[::-1])


def _partial_eval(pe: Any, args: tuple, params: dict) -> list:
    closed: ClosedJaxpr = params["jaxpr"]
    jaxpr, policy = closed.jaxpr, params["policy"]
    unknown = {v for v, a in zip(jaxpr.invars, args) if pe.is_unknown(a)}
    saved: list = []
    # equations with effects (debug prints) run where their inputs are known and again when
    # the body is recomputed, as JAX stages them (its _debug_partial_eval_custom)
    effects_known, effects_all = set(), set()
    for eqn in jaxpr.eqns:
        effectful = has_effects(eqn)
        if effectful:
            effects_all.add(id(eqn))
        if any(type(a) is Var and a in unknown for a in eqn.invars):
            unknown.update(eqn.outvars)
            continue
        if effectful:
            effects_known.add(id(eqn))
        if policy is not None and policy(eqn.primitive, *[a.aval for a in eqn.invars],
                                         **eqn.params):
            saved.extend(eqn.outvars)
    known_in = [(v, a) for v, a in zip(jaxpr.invars, args) if not pe.is_unknown(a)]
    known_out = [v for v in jaxpr.outvars if v not in unknown]
    known_body = ClosedJaxpr(_restrict(jaxpr, [v for v, _ in known_in], known_out + saved,
                                       frozenset(effects_known)), closed.consts)
    with use_trace(pe.parent):
        known_vals = checkpoint_p.bind(*[a for _, a in known_in], **{**params,
                                                                     "jaxpr": known_body})
    values = dict(zip(known_out + saved, known_vals))
    unknown_out = [v for v in jaxpr.outvars if v in unknown]
    unknown_body = ClosedJaxpr(_restrict(jaxpr, list(jaxpr.invars) + saved, unknown_out,
                                         frozenset(effects_all)), closed.consts)
    staged = pe.staging.process_primitive(
        checkpoint_p, (*args, *[values[v] for v in saved]),
        {**params, "jaxpr": unknown_body, "differentiated": True}) if unknown_out else []
    values.update(zip(unknown_out, staged))
    return [values[v] if type(v) is Var else v.val for v in jaxpr.outvars]


checkpoint_p.partial_eval = _partial_eval


def _transpose(cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr, **_: Any) -> list:
    cts_in = iter(ad.transpose_jaxpr(jaxpr.jaxpr, jaxpr.consts, args, cts))
    return [next(cts_in) if ad.is_undefined(a) else None for a in args]


checkpoint_p.transpose = _transpose


def _batch(axis: Any, vals: Sequence[Any], dims: Sequence[Any], *, jaxpr: ClosedJaxpr,
           **params: Any) -> tuple[list, list]:
    """A checkpoint of the batched body, whose batched outputs have their axis first (JAX's
    rule); constants that are tracers of the batch trace become leading inputs."""
    from pyjax._src.transforms import batching
    jaxpr, const_vals, const_dims = batching.lift_own_consts(axis, jaxpr)
    dims = [*const_dims, *dims]
    body, out_dims = batching.batch_jaxpr(jaxpr, dims, axis, front=True)
    return checkpoint_p.bind(*const_vals, *vals, jaxpr=body, **params), out_dims


def _register_batching() -> None:
    from pyjax._src.transforms import batching
    batching.defcall(checkpoint_p, _batch, "jaxpr")


_register_batching()


# ---------------------------------------------------------------------------------------------
# API
# ---------------------------------------------------------------------------------------------

def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy: Callable | None = None,
               static_argnums: int | tuple[int, ...] = ()) -> Callable:
    """`fun`, but reverse mode recomputes its intermediates (keeping only what `policy`
    allows) instead of storing them."""
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        # eagerly too the body is traced and bound (results are arrays, as JAX's are)
        dyn = [a for i, a in enumerate(args) if i not in static]
        flat, in_tree = tree_flatten((dyn, kwargs))
        out_trees: list = []

        def flat_fun(*leaves: Any) -> list:
            d, kw = tree_unflatten(in_tree, leaves)
            it = iter(d)
            full = [a if i in static else next(it) for i, a in enumerate(args)]
            out, out_tree = tree_flatten(fun(*full, **kw))
            out_trees.append(out_tree)
            return out

        from pyjax._src.transforms.jit import _lift_tracer_consts
        body, closed_over = _lift_tracer_consts(
            trace_to_jaxpr(flat_fun, [abstractify(x) for x in flat]))
        outs = checkpoint_p.bind(*closed_over, *flat, jaxpr=body, prevent_cse=prevent_cse,
                                 differentiated=False, policy=policy)
        return tree_unflatten(out_trees[0], outs)

    return wrapped


remat = checkpoint


def _everything_saveable(*_: Any, **__: Any) -> bool:
    return True


def _nothing_saveable(*_: Any, **__: Any) -> bool:
    return False


def _dots_saveable(prim: Any, *_: Any, **__: Any) -> bool:
    return prim.name == "dot_general"


def _dots_with_no_batch_dims_saveable(prim: Any, *_: Any, **params: Any) -> bool:
    if prim.name != "dot_general":
        return False
    (_, _), (lhs_batch, _) = params["dimension_numbers"]
    return not lhs_batch


class checkpoint_policies:  # noqa: N801 - JAX's name
    """Which intermediate values a checkpoint may keep for the backward pass."""

    everything_saveable = staticmethod(_everything_saveable)
    nothing_saveable = staticmethod(_nothing_saveable)
    dots_saveable = staticmethod(_dots_saveable)
    checkpoint_dots = staticmethod(_dots_saveable)
    dots_with_no_batch_dims_saveable = staticmethod(_dots_with_no_batch_dims_saveable)
    checkpoint_dots_with_no_batch_dims = staticmethod(_dots_with_no_batch_dims_saveable)
