"""jax.checkpoint (remat): in reverse mode, recompute intermediates instead of saving them.

`checkpoint` is a call primitive.  Its partial-evaluation rule splits the body by dependency:
the known part runs now and saves only the values the policy allows; the unknown part is staged
as another checkpoint whose transpose recomputes the rest of the body during the backward pass.
"""
from __future__ import annotations

import dataclasses
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
    body, consts = _lifted(trace_to_jaxpr(jvp_body, [abstractify(x) for x in (*primals, *nz)]))
    outs = checkpoint_p.bind(*consts, *primals, *nz, jaxpr=body, **params)
    k = len(jaxpr.out_avals)
    return outs[:k], outs[k:]


checkpoint_p.jvp = _jvp


def _lifted(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    """The body with its constants as leading inputs, and those constants: a checkpoint's
    body has none of its own (JAX's remat asserts so), they are its first operands."""
    j = closed.jaxpr
    if not j.constvars:
        return closed, []
    return ClosedJaxpr(Jaxpr([], [*j.constvars, *j.invars], j.outvars, j.eqns, j.debug_info),
                       []), list(closed.consts)


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
    """JAX's remat_partial_eval: the known part of the body runs now, inline (not as a
    checkpoint), its saved residuals rounded to their type (reduce_precision, as JAX guards
    them against excess precision); the unknown part is staged as a checkpoint of the
    residuals it reads, then the inputs it reads, which recomputes the rest of the body."""
    from pyjax._src.core.jaxpr import eval_jaxpr
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
    unknown_out = [v for v in jaxpr.outvars if type(v) is Var and v in unknown]
    staged = _restrict(jaxpr, list(jaxpr.invars) + saved, unknown_out, frozenset(effects_all))
    read = {a for e in staged.eqns for a in e.invars if type(a) is Var} | set(unknown_out)
    residuals = [v for v in saved if v in read]
    staged_in = [(v, a) for v, a in zip(jaxpr.invars, args) if v in read]
    known_in = [(v, a) for v, a in zip(jaxpr.invars, args) if not pe.is_unknown(a)]
    known_out = [v for v in jaxpr.outvars if not (type(v) is Var and v in unknown)]
    known = _round_residuals(_restrict(jaxpr, [v for v, _ in known_in], known_out + residuals,
                                       frozenset(effects_known)), len(residuals))
    with use_trace(pe.parent):
        known_vals = eval_jaxpr(known, closed.consts, *[a for _, a in known_in])
    values = dict(zip(known_out + residuals, known_vals))
    if unknown_out:
        body = ClosedJaxpr(Jaxpr(staged.constvars, residuals + [v for v, _ in staged_in],
                                 unknown_out, staged.eqns), closed.consts)
        outs = pe.staging.process_primitive(
            checkpoint_p, (*[values[v] for v in residuals], *[a for _, a in staged_in]),
            {**params, "jaxpr": body, "differentiated": True})
        values.update(zip(unknown_out, outs))
    return [values[v] if type(v) is Var else v.val for v in jaxpr.outvars]


def _round_residuals(jaxpr: Jaxpr, n: int) -> Jaxpr:
    """The known body with each of its last `n` outputs (residuals) that an equation of the
    body also reads rounded by reduce_precision to its float type where it is made (JAX's
    _insert_reduce_precision: the backward pass sees the bits the forward pass used)."""
    from pyjax._src.core import dtypes
    from pyjax._src.core.jaxpr import Eqn
    from pyjax._src.primitives.special import reduce_precision_p
    read = {a for e in jaxpr.eqns for a in e.invars if type(a) is Var}
    invars, eqns = list(jaxpr.invars), list(jaxpr.eqns)
    for v in jaxpr.outvars[len(jaxpr.outvars) - n:]:
        if type(v) is not Var or v not in read or not dtypes.is_inexact(v.aval.dtype):
            continue
        info = dtypes.finfo(v.aval.dtype)
        params = dict(exponent_bits=info.nexp, mantissa_bits=info.nmant)
        fresh = Var(v.aval)
        if v in invars:
            invars[invars.index(v)] = fresh
            eqns.insert(0, Eqn(reduce_precision_p, [fresh], [v], params))
            continue
        at = next(i for i, e in enumerate(eqns) if v in e.outvars)
        eqn = eqns[at]
        if eqn.primitive is reduce_precision_p and eqn.params == params:
            continue
        eqns[at] = Eqn(eqn.primitive, eqn.invars, [fresh if o is v else o for o in eqn.outvars],
                       eqn.params, eqn.source_info)
        eqns.insert(at + 1, Eqn(reduce_precision_p, [fresh], [v], params, eqn.source_info))
    return Jaxpr(jaxpr.constvars, invars, jaxpr.outvars, eqns, jaxpr.debug_info)


checkpoint_p.partial_eval = _partial_eval


def _transpose(cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr, **params: Any) -> list:
    """JAX's remat_transpose: a checkpoint of the transposed body (which recomputes what the
    backward pass needs), taking the known operands and the non-zero cotangents and giving
    the non-zero cotangents of the linear operands."""
    known = [a for a in args if not ad.is_undefined(a)]
    nonzero = [type(c) is not ad.Zero for c in cts]
    zeros_out: list = []

    def transposed(*flat: Any) -> list:
        given_known, given_cts = iter(flat[:len(known)]), iter(flat[len(known):])
        full_args = [a if ad.is_undefined(a) else next(given_known) for a in args]
        full_cts = [next(given_cts) if nz else c for nz, c in zip(nonzero, cts)]
        out = ad.transpose_jaxpr(jaxpr.jaxpr, jaxpr.consts, full_args, full_cts)
        zeros_out[:] = [type(c) is ad.Zero for c in out]
        return [c for c in out if type(c) is not ad.Zero]

    avals = [abstractify(x) for x in (*known, *[c for c, nz in zip(cts, nonzero) if nz])]
    body, consts = _lifted(trace_to_jaxpr(transposed, avals))
    cts_in = iter(checkpoint_p.bind(*consts, *known, *[c for c, nz in zip(cts, nonzero) if nz],
                                    jaxpr=body, **params))
    zeros = iter(zeros_out)
    return [None if not ad.is_undefined(a) else (ad.Zero(a.aval) if next(zeros)
                                                  else next(cts_in)) for a in args]


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

        body, closed_over = _lifted(trace_to_jaxpr(flat_fun, [abstractify(x) for x in flat]))
        outs = checkpoint_p.bind(*closed_over, *flat, jaxpr=body, prevent_cse=prevent_cse,
                                 differentiated=False, policy=policy)
        return tree_unflatten(out_trees[0], outs)

    return wrapped


remat = checkpoint


def everything_saveable(*_: Any, **__: Any) -> bool:
    """Save every value (as if there were no checkpoint)."""
    return True


def nothing_saveable(*_: Any, **__: Any) -> bool:
    """Save nothing: recompute everything (a checkpoint's default)."""
    return False


@dataclasses.dataclass(frozen=True)
class DotsSaveable:
    """Save the results of products (dot_general, conv_general_dilated), or with
    `only_if_no_batch_dims` only those of dot_generals without batch dimensions; printed as
    JAX prints its policy objects."""
    only_if_no_batch_dims: bool

    def __call__(self, prim: Any, *_: Any, **params: Any) -> bool:
        if self.only_if_no_batch_dims:
            if prim.name != "dot_general":
                return False
            (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
            return not lhs_batch and not rhs_batch
        return prim.name in ("dot_general", "conv_general_dilated")


class checkpoint_policies:  # noqa: N801 - JAX's name
    """Which intermediate values a checkpoint may keep for the backward pass."""

    everything_saveable = staticmethod(everything_saveable)
    nothing_saveable = staticmethod(nothing_saveable)
    dots_saveable = checkpoint_dots = DotsSaveable(False)
    dots_with_no_batch_dims_saveable = checkpoint_dots_with_no_batch_dims = DotsSaveable(True)
